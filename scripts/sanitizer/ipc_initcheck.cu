// Case ipc/peer-opens-memory-and-writes-exporter-allocation as a plain CUDA program, to tell whether initcheck's
// reports in the importing process are the tool's or the suite's (issue 34). The exporter allocates 64 KiB, fills
// every word with a kernel, synchronises and exports the allocation (cudaIpcGetMemHandle); a second process (this
// program again, started with the handle) opens it (cudaIpcOpenMemHandle) and runs a kernel that reads and rewrites
// every word (x * 2 + 1), then the exporter checks for 11 everywhere. Every word is written before it is read, by
// the exporting process. Run it as
//   compute-sanitizer --tool initcheck --target-processes all ./ipc_initcheck
// and each read of the importer's kernel is reported as uninitialised (16384 reports, one per word) though the
// values it reads are the exporter's 5s: initcheck knows only the writes of the process it watches.
// Build: nvcc -arch=sm_90 -o ipc_initcheck ipc_initcheck.cu
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <cuda_runtime.h>

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        cudaError_t e = (x);                                                                       \
        if (e != cudaSuccess) {                                                                    \
            printf("%s:%d %s -> %s\n", __FILE__, __LINE__, #x, cudaGetErrorName(e));                \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

constexpr unsigned WORDS = 16384;

__global__ void fill(unsigned* buf, unsigned n, unsigned value) {
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) buf[i] = value;
}

__global__ void transform(unsigned* buf, unsigned n) {
    for (unsigned i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) buf[i] = buf[i] * 2 + 1;
}

static int importer(const char* hex) {
    cudaIpcMemHandle_t handle;
    for (size_t i = 0; i < sizeof handle; i++) sscanf(hex + 2 * i, "%2hhx", &handle.reserved[i]);
    unsigned* m;
    CHECK(cudaIpcOpenMemHandle((void**)&m, handle, cudaIpcMemLazyEnablePeerAccess));
    transform<<<64, 256>>>(m, WORDS);
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaIpcCloseMemHandle(m));
    return 0;
}

int main(int argc, char** argv) {
    if (argc == 3 && strcmp(argv[1], "import") == 0) return importer(argv[2]);
    unsigned* d;
    CHECK(cudaMalloc(&d, WORDS * 4));
    fill<<<64, 256>>>(d, WORDS, 5);
    CHECK(cudaDeviceSynchronize());
    cudaIpcMemHandle_t handle;
    CHECK(cudaIpcGetMemHandle(&handle, d));
    std::string cmd = std::string(argv[0]) + " import ";
    char byte[3];
    for (size_t i = 0; i < sizeof handle; i++) {
        snprintf(byte, sizeof byte, "%02x", (unsigned char)handle.reserved[i]);
        cmd += byte;
    }
    int rc = system(cmd.c_str());
    static unsigned host[WORDS];
    CHECK(cudaMemcpy(host, d, sizeof host, cudaMemcpyDeviceToHost));
    unsigned wrong = 0;
    for (unsigned i = 0; i < WORDS; i++) wrong += host[i] != 11;
    printf("importer exit %d; %u of %u words are not 11\n", rc, wrong, WORDS);
    return rc != 0 || wrong != 0;
}
