// Seed 004 (shared/seeds/004_00d9cd926925b10e.txt): the stream/event DAG "传统方式 (在循环中重复执行)" and its
// graph version "使用CUDA Graph的方式", as printed, then the measurement the seed's claims call for.
//
// Filled in where the seed elides code (each marked "filled in" below):
// - kernelA, kernelB, kernelC, the buffers and their sizes ("假设这些streams和events已创建"): 64 Ki floats, small
//   kernels of 256 threads per block; kernelA = 2x + 1, kernelB = 3x + 2, kernelC = a + b.
// - N_ITERATIONS = 100, and host timing (std::chrono) of every iteration: the submission (first call to last call,
//   before the synchronize) and the whole iteration.
// - The graph version as printed captures on streamC without forking streamA and streamB into the capture: their
//   work runs eagerly and the first cudaStreamWaitEvent on an uncaptured event fails. The program reports that,
//   then runs the graph with the fork the seed leaves out (record an event on the capturing stream, make streamA
//   and streamB wait for it), which captures the DAG as the seed intends.
// - "100 small kernels": 100 launches of an empty kernel on one stream against one launch of a graph of them, the
//   host time of the submission (per kernel), median of 5: the seed's "从N次API调用降低到1次".
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cuda_runtime.h>

#define CHECK(call) do { \
    cudaError_t err_ = (call); \
    if (err_ != cudaSuccess) { \
        printf("CUDA error %s at %s:%d: %s\n", cudaGetErrorName(err_), __FILE__, __LINE__, #call); \
        exit(1); \
    } \
} while (0)

using Clock = std::chrono::steady_clock;
static double us_since(Clock::time_point t) {
    return std::chrono::duration<double, std::micro>(Clock::now() - t).count();
}

// filled in
__global__ void kernelA(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 2.0f * in[i] + 1.0f;
}
__global__ void kernelB(float* out, const float* in, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = 3.0f * in[i] + 2.0f;
}
__global__ void kernelC(float* final_, const float* a, const float* b, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) final_[i] = a[i] + b[i];
}
__global__ void tiny() {}

static double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

// (max - min) / median, in percent.
static double spread(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return (v.back() - v.front()) / v[v.size() / 2] * 100.0;
}

int main() {
    const int N_ITERATIONS = 100;   // filled in
    const int n = 64 * 1024;        // filled in
    const size_t size_A = n * sizeof(float), size_B = size_A, size_final = size_A;
    const int threads = 256, blocks = (n + threads - 1) / threads;

    float *h_in_A, *h_in_B, *h_result;
    CHECK(cudaMallocHost((void**)&h_in_A, size_A));
    CHECK(cudaMallocHost((void**)&h_in_B, size_B));
    CHECK(cudaMallocHost((void**)&h_result, size_final));
    for (int i = 0; i < n; i++) { h_in_A[i] = 1.0f; h_in_B[i] = 1.0f; }
    float *d_in_A, *d_in_B, *d_out_A, *d_out_B, *d_final;
    CHECK(cudaMalloc((void**)&d_in_A, size_A));
    CHECK(cudaMalloc((void**)&d_in_B, size_B));
    CHECK(cudaMalloc((void**)&d_out_A, size_A));
    CHECK(cudaMalloc((void**)&d_out_B, size_B));
    CHECK(cudaMalloc((void**)&d_final, size_final));
    cudaStream_t streamA, streamB, streamC;
    CHECK(cudaStreamCreate(&streamA));
    CHECK(cudaStreamCreate(&streamB));
    CHECK(cudaStreamCreate(&streamC));
    cudaEvent_t eventA_done, eventB_done;
    CHECK(cudaEventCreate(&eventA_done));
    CHECK(cudaEventCreate(&eventB_done));

    // 传统方式 (在循环中重复执行)
    std::vector<double> eager_submit, eager_wall;
    for (int i = 0; i < N_ITERATIONS; ++i) {
        auto t0 = Clock::now();
        cudaMemcpyAsync(d_in_A, h_in_A, size_A, cudaMemcpyHostToDevice, streamA);
        kernelA<<<blocks, threads, 0, streamA>>>(d_out_A, d_in_A, n);
        cudaEventRecord(eventA_done, streamA);

        cudaMemcpyAsync(d_in_B, h_in_B, size_B, cudaMemcpyHostToDevice, streamB);
        kernelB<<<blocks, threads, 0, streamB>>>(d_out_B, d_in_B, n);
        cudaEventRecord(eventB_done, streamB);

        // kernelC 依赖于 kernelA 和 kernelB 的结果
        cudaStreamWaitEvent(streamC, eventA_done, 0);
        cudaStreamWaitEvent(streamC, eventB_done, 0);
        kernelC<<<blocks, threads, 0, streamC>>>(d_final, d_out_A, d_out_B, n);
        cudaMemcpyAsync(h_result, d_final, size_final, cudaMemcpyDeviceToHost, streamC);
        eager_submit.push_back(us_since(t0));
        cudaStreamSynchronize(streamC);
        eager_wall.push_back(us_since(t0));
    }
    CHECK(cudaGetLastError());
    printf("eager DAG: %.3f us submission per iteration, %.3f us per iteration, spread %.1f%% (median of %d)\n",
           median(eager_submit), median(eager_wall), spread(eager_wall), N_ITERATIONS);
    printf("eager DAG result: %s\n", h_result[0] == 8.0f && h_result[n - 1] == 8.0f ? "correct (8.0)" : "WRONG");

    // 使用CUDA Graph的方式, as printed.
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t instance = nullptr;
    cudaStream_t captureStream = streamC; // 可以在任意一个stream上捕获
    CHECK(cudaStreamBeginCapture(captureStream, cudaStreamCaptureModeGlobal));
    cudaMemcpyAsync(d_in_A, h_in_A, size_A, cudaMemcpyHostToDevice, streamA);
    kernelA<<<blocks, threads, 0, streamA>>>(d_out_A, d_in_A, n);
    cudaEventRecord(eventA_done, streamA);
    cudaMemcpyAsync(d_in_B, h_in_B, size_B, cudaMemcpyHostToDevice, streamB);
    kernelB<<<blocks, threads, 0, streamB>>>(d_out_B, d_in_B, n);
    cudaEventRecord(eventB_done, streamB);
    cudaError_t waitA = cudaStreamWaitEvent(captureStream, eventA_done, 0);
    cudaStreamWaitEvent(captureStream, eventB_done, 0);
    kernelC<<<blocks, threads, 0, captureStream>>>(d_final, d_out_A, d_out_B, n);
    cudaMemcpyAsync(h_result, d_final, size_final, cudaMemcpyDeviceToHost, captureStream);
    cudaError_t ended = cudaStreamEndCapture(captureStream, &graph);
    printf("graph DAG as printed: the first cudaStreamWaitEvent returned %s, cudaStreamEndCapture %s\n",
           cudaGetErrorName(waitA), cudaGetErrorName(ended));
    if (graph != nullptr) {
        cudaGraphDestroy(graph);
        graph = nullptr;
    }
    cudaGetLastError();
    CHECK(cudaDeviceSynchronize());

    // The same capture with streamA and streamB forked from the capturing stream (filled in).
    cudaEvent_t fork;
    CHECK(cudaEventCreate(&fork));
    CHECK(cudaStreamBeginCapture(captureStream, cudaStreamCaptureModeGlobal));
    CHECK(cudaEventRecord(fork, captureStream));
    CHECK(cudaStreamWaitEvent(streamA, fork, 0));
    CHECK(cudaStreamWaitEvent(streamB, fork, 0));
    CHECK(cudaMemcpyAsync(d_in_A, h_in_A, size_A, cudaMemcpyHostToDevice, streamA));
    kernelA<<<blocks, threads, 0, streamA>>>(d_out_A, d_in_A, n);
    CHECK(cudaEventRecord(eventA_done, streamA));
    CHECK(cudaMemcpyAsync(d_in_B, h_in_B, size_B, cudaMemcpyHostToDevice, streamB));
    kernelB<<<blocks, threads, 0, streamB>>>(d_out_B, d_in_B, n);
    CHECK(cudaEventRecord(eventB_done, streamB));
    CHECK(cudaStreamWaitEvent(captureStream, eventA_done, 0));
    CHECK(cudaStreamWaitEvent(captureStream, eventB_done, 0));
    kernelC<<<blocks, threads, 0, captureStream>>>(d_final, d_out_A, d_out_B, n);
    CHECK(cudaMemcpyAsync(h_result, d_final, size_final, cudaMemcpyDeviceToHost, captureStream));
    CHECK(cudaStreamEndCapture(captureStream, &graph));
    CHECK(cudaGraphInstantiate(&instance, graph, NULL, NULL, 0));
    for (int i = 0; i < n; i++) h_result[i] = 0.0f;

    std::vector<double> graph_submit, graph_wall;
    for (int i = 0; i < N_ITERATIONS; ++i) {
        auto t0 = Clock::now();
        cudaGraphLaunch(instance, captureStream);
        graph_submit.push_back(us_since(t0));
        cudaStreamSynchronize(captureStream);
        graph_wall.push_back(us_since(t0));
    }
    CHECK(cudaGetLastError());
    printf("graph DAG (forked): %.3f us submission per iteration, %.3f us per iteration, spread %.1f%% (median of %d)\n",
           median(graph_submit), median(graph_wall), spread(graph_wall), N_ITERATIONS);
    printf("graph DAG result: %s\n", h_result[0] == 8.0f && h_result[n - 1] == 8.0f ? "correct (8.0)" : "WRONG");

    // 100 small kernels: one by one against one graph launch (filled in).
    const int KERNELS = 100;
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    tiny<<<1, 1, 0, s>>>();
    CHECK(cudaStreamSynchronize(s));
    cudaGraph_t small;
    cudaGraphExec_t small_exec;
    CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    for (int k = 0; k < KERNELS; ++k) tiny<<<1, 1, 0, s>>>();
    CHECK(cudaStreamEndCapture(s, &small));
    CHECK(cudaGraphInstantiate(&small_exec, small, NULL, NULL, 0));
    CHECK(cudaGraphUpload(small_exec, s));
    CHECK(cudaStreamSynchronize(s));
    std::vector<double> eager_us, graph_us;
    for (int trial = 0; trial < 5; ++trial) {
        auto t0 = Clock::now();
        for (int k = 0; k < KERNELS; ++k) tiny<<<1, 1, 0, s>>>();
        eager_us.push_back(us_since(t0));
        CHECK(cudaStreamSynchronize(s));
        auto t1 = Clock::now();
        CHECK(cudaGraphLaunch(small_exec, s));
        graph_us.push_back(us_since(t1));
        CHECK(cudaStreamSynchronize(s));
    }
    printf("100 small kernels: eager %.3f us per kernel, one graph launch %.3f us (%.3f us per kernel), median of 5\n",
           median(eager_us) / KERNELS, median(graph_us), median(graph_us) / KERNELS);

    CHECK(cudaGraphExecDestroy(small_exec));
    CHECK(cudaGraphDestroy(small));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaGraphExecDestroy(instance));
    CHECK(cudaGraphDestroy(graph));
    CHECK(cudaEventDestroy(fork));
    CHECK(cudaEventDestroy(eventA_done));
    CHECK(cudaEventDestroy(eventB_done));
    CHECK(cudaStreamDestroy(streamA));
    CHECK(cudaStreamDestroy(streamB));
    CHECK(cudaStreamDestroy(streamC));
    CHECK(cudaFree(d_in_A));
    CHECK(cudaFree(d_in_B));
    CHECK(cudaFree(d_out_A));
    CHECK(cudaFree(d_out_B));
    CHECK(cudaFree(d_final));
    CHECK(cudaFreeHost(h_in_A));
    CHECK(cudaFreeHost(h_in_B));
    CHECK(cudaFreeHost(h_result));
    return 0;
}
