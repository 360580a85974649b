// The graph of case graph/memnode/freed-outside-then-relaunch as a plain CUDA program, to tell whether initcheck's
// reports on its second launch are the tool's or the suite's (issue 23). The graph: a 4 KiB allocation node, a
// kernel node writing all 1024 words of it (one block looping, as the suite's cc_fill), a memcpy node copying it
// to `out`. Launch, free the allocation outside the graph, launch again. Under `compute-sanitizer --tool initcheck`
// neither launch reads memory the graph did not write first.
// Build: nvcc -arch=sm_90 -o graph_memnode_relaunch graph_memnode_relaunch.cu
#include <cstdio>
#include <cuda_runtime.h>

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        cudaError_t e = (x);                                                                       \
        if (e != cudaSuccess) {                                                                    \
            printf("%s:%d %s -> %s\n", __FILE__, __LINE__, #x, cudaGetErrorName(e));                \
            return 1;                                                                              \
        }                                                                                          \
    } while (0)

__global__ void fill(unsigned* buf, unsigned n, unsigned value) {
    for (unsigned i = threadIdx.x; i < n; i += blockDim.x) buf[i] = value;
}

int main() {
    unsigned* out;
    CHECK(cudaMalloc(&out, 4096));
    CHECK(cudaMemset(out, 0, 4096));
    cudaGraph_t g;
    CHECK(cudaGraphCreate(&g, 0));
    cudaMemAllocNodeParams ap = {};
    ap.poolProps.allocType = cudaMemAllocationTypePinned;
    ap.poolProps.location.type = cudaMemLocationTypeDevice;
    ap.poolProps.location.id = 0;
    ap.bytesize = 4096;
    cudaGraphNode_t al, f, c;
    CHECK(cudaGraphAddMemAllocNode(&al, g, nullptr, 0, &ap));
    unsigned* m = (unsigned*)ap.dptr;
    unsigned n = 1024, value = 6;
    void* args[] = {&m, &n, &value};
    cudaKernelNodeParams kp = {};
    kp.func = (void*)fill;
    kp.gridDim = dim3(1);
    kp.blockDim = dim3(256);
    kp.kernelParams = args;
    CHECK(cudaGraphAddKernelNode(&f, g, &al, 1, &kp));
    CHECK(cudaGraphAddMemcpyNode1D(&c, g, &f, 1, out, m, 4096, cudaMemcpyDeviceToDevice));
    cudaGraphExec_t ex;
    CHECK(cudaGraphInstantiate(&ex, g, 0));
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaGraphLaunch(ex, s));
    CHECK(cudaFreeAsync(m, s));
    CHECK(cudaStreamSynchronize(s));
    printf("launch 1 done\n");
    fflush(stdout);
    CHECK(cudaGraphLaunch(ex, s));
    CHECK(cudaStreamSynchronize(s));
    printf("launch 2 done\n");
    unsigned host[1024];
    CHECK(cudaMemcpy(host, out, 4096, cudaMemcpyDeviceToHost));
    bool ok = true;
    for (unsigned i = 0; i < 1024; i++) ok = ok && host[i] == 6;
    printf("out %s\n", ok ? "== 6 everywhere" : "WRONG");
    return ok ? 0 : 2;
}
