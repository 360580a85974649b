// The graph of case graph/conditional/while-countdown-runs-n-times as a plain CUDA program, to tell whether the
// crash under `compute-sanitizer --tool racecheck` is the tool's or the suite's (issue 23). A WHILE conditional node
// whose handle defaults to 1; its body: a countdown kernel (counter[0] -= 1 unless 0, counter[1] += 1, condition =
// counter[0] != 0) then x = 2x. Expected: counter = [0, 3], x = 8 (the suite's case checks the same).
// Build: nvcc -arch=sm_90 -rdc=false -o while_countdown while_countdown.cu
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

__global__ void countdown(cudaGraphConditionalHandle h, unsigned* counter) {
    unsigned left = counter[0];
    if (left > 0) {
        left -= 1;
        counter[0] = left;
    }
    counter[1] += 1;
    cudaGraphSetConditional(h, left != 0 ? 1u : 0u);
}

__global__ void twice(unsigned* x) { x[threadIdx.x] *= 2; }

int main() {
    unsigned *counter, *x;
    CHECK(cudaMalloc(&counter, 8));
    CHECK(cudaMalloc(&x, 4));
    unsigned init_c[2] = {3, 0}, init_x = 1;
    CHECK(cudaMemcpy(counter, init_c, 8, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(x, &init_x, 4, cudaMemcpyHostToDevice));
    cudaGraph_t g;
    CHECK(cudaGraphCreate(&g, 0));
    cudaGraphConditionalHandle h;
    CHECK(cudaGraphConditionalHandleCreate(&h, g, 1, cudaGraphCondAssignDefault));
    cudaGraphNodeParams p = {};
    p.type = cudaGraphNodeTypeConditional;
    p.conditional.handle = h;
    p.conditional.type = cudaGraphCondTypeWhile;
    p.conditional.size = 1;
    cudaGraphNode_t w;
    CHECK(cudaGraphAddNode(&w, g, nullptr, nullptr, 0, &p));
    cudaGraph_t body = p.conditional.phGraph_out[0];
    cudaKernelNodeParams k1 = {};
    void* a1[] = {&h, &counter};
    k1.func = (void*)countdown;
    k1.gridDim = dim3(1);
    k1.blockDim = dim3(1);
    k1.kernelParams = a1;
    cudaGraphNode_t n1, n2;
    CHECK(cudaGraphAddKernelNode(&n1, body, nullptr, 0, &k1));
    cudaKernelNodeParams k2 = k1;
    void* a2[] = {&x};
    k2.func = (void*)twice;
    k2.kernelParams = a2;
    CHECK(cudaGraphAddKernelNode(&n2, body, &n1, 1, &k2));
    cudaGraphExec_t ex;
    CHECK(cudaGraphInstantiate(&ex, g, 0));
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));
    CHECK(cudaGraphLaunch(ex, s));
    CHECK(cudaStreamSynchronize(s));
    unsigned c[2], xv;
    CHECK(cudaMemcpy(c, counter, 8, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&xv, x, 4, cudaMemcpyDeviceToHost));
    printf("counter = [%u, %u], x = %u: %s\n", c[0], c[1], xv, (c[0] == 0 && c[1] == 3 && xv == 8) ? "as expected" : "WRONG");
    return (c[0] == 0 && c[1] == 3 && xv == 8) ? 0 : 2;
}
