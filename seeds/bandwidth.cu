// The copy bandwidths the seeds' claims are judged against, measured the way nvbandwidth measures them (its
// *_memcpy_ce tests): the copies are queued behind a kernel that spins on a flag in mapped host memory, timed by
// events recorded on the same stream around them, and released together when the host sets the flag, so the time
// is the copies' alone, not their submission. These are the copies `cases/performance.case` makes (bound-*
// cases), so the suite's figures can be checked against a plain C++ program in the same run:
//   pinned h2d / d2h: 4 x 256 MiB on one non-blocking stream, gated;
//   bidirectional:    both at once on two streams behind the same flag;
//   pageable:         4 x 256 MiB cudaMemcpy each way, events on the default stream around them.
// Each is preceded by one warm-up copy. Prints one line per figure, in GB/s (10^9 bytes per second).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <cuda_runtime.h>

#define CHECK(call) do { \
    cudaError_t err_ = (call); \
    if (err_ != cudaSuccess) { \
        printf("CUDA error %s at %s:%d: %s\n", cudaGetErrorName(err_), __FILE__, __LINE__, #call); \
        exit(1); \
    } \
} while (0)

static const size_t BYTES = 256u << 20;
static const int COPIES = 4;

// Spins until *flag != 0, or gives up after 10 s of %globaltimer so a lost flag cannot hang the GPU.
__global__ void wait_for_flag(volatile int* flag) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (*flag == 0 && now - start < 10000000000ull);
}

struct Gate {
    int* host;
    int* device;
    Gate() {
        CHECK(cudaHostAlloc((void**)&host, sizeof(int), cudaHostAllocMapped));
        CHECK(cudaHostGetDevicePointer((void**)&device, host, 0));
        *host = 0;
    }
    void hold(cudaStream_t s) { wait_for_flag<<<1, 1, 0, s>>>(device); }
    void open() { *(volatile int*)host = 1; }
    void close() { *(volatile int*)host = 0; }
};

static double gbps(float ms) { return double(BYTES) * COPIES / (ms / 1e3) / 1e9; }

// COPIES gated copies dst <- src on s, timed by events on s.
static void queue(void* dst, const void* src, cudaMemcpyKind kind, cudaStream_t s, cudaEvent_t a, cudaEvent_t b) {
    CHECK(cudaEventRecord(a, s));
    for (int i = 0; i < COPIES; i++) CHECK(cudaMemcpyAsync(dst, src, BYTES, kind, s));
    CHECK(cudaEventRecord(b, s));
}

static float elapsed(cudaEvent_t a, cudaEvent_t b) {
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    return ms;
}

int main() {
    void *h1, *h2, *d1, *d2;
    CHECK(cudaMallocHost(&h1, BYTES));
    CHECK(cudaMallocHost(&h2, BYTES));
    CHECK(cudaMalloc(&d1, BYTES));
    CHECK(cudaMalloc(&d2, BYTES));
    memset(h1, 7, BYTES);
    memset(h2, 9, BYTES);
    cudaStream_t up, down;
    CHECK(cudaStreamCreateWithFlags(&up, cudaStreamNonBlocking));
    CHECK(cudaStreamCreateWithFlags(&down, cudaStreamNonBlocking));
    cudaEvent_t a, b, c, d;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    CHECK(cudaEventCreate(&c));
    CHECK(cudaEventCreate(&d));
    Gate gate;
    // Warm-up: one copy each way.
    CHECK(cudaMemcpyAsync(d1, h1, BYTES, cudaMemcpyHostToDevice, up));
    CHECK(cudaMemcpyAsync(h2, d2, BYTES, cudaMemcpyDeviceToHost, down));
    CHECK(cudaDeviceSynchronize());

    gate.close();
    gate.hold(up);
    queue(d1, h1, cudaMemcpyHostToDevice, up, a, b);
    gate.open();
    CHECK(cudaStreamSynchronize(up));
    printf("pinned h2d: %.3f GB/s (4 x 256 MiB, gated)\n", gbps(elapsed(a, b)));

    gate.close();
    gate.hold(down);
    queue(h2, d2, cudaMemcpyDeviceToHost, down, a, b);
    gate.open();
    CHECK(cudaStreamSynchronize(down));
    printf("pinned d2h: %.3f GB/s (4 x 256 MiB, gated)\n", gbps(elapsed(a, b)));

    gate.close();
    gate.hold(up);
    gate.hold(down);
    queue(d1, h1, cudaMemcpyHostToDevice, up, a, b);
    queue(h2, d2, cudaMemcpyDeviceToHost, down, c, d);
    gate.open();
    CHECK(cudaDeviceSynchronize());
    float ab = elapsed(a, b), cd = elapsed(c, d);
    // Both directions over the span from the earlier start to the later end.
    float first = elapsed(a, c) > 0 ? 0 : elapsed(a, c);
    float span = std::max(elapsed(a, b), elapsed(a, d)) - first;
    printf("bidirectional h2d: %.3f GB/s, d2h: %.3f GB/s, both: %.3f GB/s (4 x 256 MiB each way, gated)\n",
           gbps(ab), gbps(cd), 2 * gbps(span));

    void* pageable = malloc(BYTES);
    memset(pageable, 5, BYTES);
    CHECK(cudaMemcpy(d1, pageable, BYTES, cudaMemcpyHostToDevice));
    CHECK(cudaEventRecord(a, 0));
    for (int i = 0; i < COPIES; i++) CHECK(cudaMemcpy(pageable, d1, BYTES, cudaMemcpyDeviceToHost));
    CHECK(cudaEventRecord(b, 0));
    CHECK(cudaEventRecord(c, 0));
    for (int i = 0; i < COPIES; i++) CHECK(cudaMemcpy(d1, pageable, BYTES, cudaMemcpyHostToDevice));
    CHECK(cudaEventRecord(d, 0));
    CHECK(cudaDeviceSynchronize());
    printf("pageable d2h: %.3f GB/s, h2d: %.3f GB/s (4 x 256 MiB cudaMemcpy)\n", gbps(elapsed(a, b)),
           gbps(elapsed(c, d)));

    free(pageable);
    CHECK(cudaFreeHost(gate.host));
    CHECK(cudaFreeHost(h1));
    CHECK(cudaFreeHost(h2));
    CHECK(cudaFree(d1));
    CHECK(cudaFree(d2));
    return 0;
}
