// Session 11, probe 11: what cudaMemcpy into pageable host memory returns when the destination overlaps a range
// registered with cudaHostRegister (whole, partly, not at all), and when the registered memory was freed without
// being unregistered and the heap hands it out again. The mechanism behind a read-back that returned
// cudaErrorInvalidValue in a worker after a case registered a pageable buffer and left it registered
// (results/2026-11-28_node-time-3). Build: nvcc -o probe11 probe11.cu
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda_runtime.h>

static void copy(const char *what, void *dst, const void *src, size_t n) {
    cudaError_t e = cudaMemcpy(dst, src, n, cudaMemcpyDeviceToHost);
    cudaGetLastError();
    printf("%-62s D2H %5zu bytes -> %s\n", what, n, cudaGetErrorName(e));
}

static void copy_h2d(const char *what, void *dst, const void *src, size_t n) {
    cudaError_t e = cudaMemcpy(dst, src, n, cudaMemcpyHostToDevice);
    cudaGetLastError();
    printf("%-62s H2D %5zu bytes -> %s\n", what, n, cudaGetErrorName(e));
}

int main() {
    void *d = nullptr;
    cudaMalloc(&d, 1 << 20);
    cudaMemset(d, 7, 1 << 20);
    // One heap block; a 4 KiB range registered inside it, at an offset that is not page-aligned.
    char *block = (char *)malloc(1 << 16);
    char *reg = block + 1000;
    printf("register %p +4096: %s\n", (void *)reg, cudaGetErrorName(cudaHostRegister(reg, 4096, 0)));
    copy("exactly the registered range", reg, d, 4096);
    copy("inside it (offset 1000, 2048 bytes)", reg + 1000, d, 2048);
    copy("starts inside, ends 1000 bytes past its end", reg + 1000, d, 4096);
    copy("starts 1000 bytes before it, ends inside", reg - 1000, d, 4096);
    copy("covers it and more on both sides", reg - 500, d, 5096);
    copy("same pinned page, past the range's end", reg + 4096, d, 100);
    copy("a page away from it", reg + 12288, d, 4096);
    copy_h2d("(H2D) starts inside, ends past its end", d, reg + 1000, 4096);
    printf("unregister: %s\n", cudaGetErrorName(cudaHostUnregister(reg)));
    copy("the same straddling copy after cudaHostUnregister", reg + 1000, d, 4096);
    // Registered, freed without cudaHostUnregister, and the heap's next blocks.
    char *p = (char *)malloc(4096);
    printf("register a malloc(4096) block %p: %s\n", (void *)p, cudaGetErrorName(cudaHostRegister(p, 4096, 0)));
    free(p);
    int bad = 0, tried = 0;
    for (int i = 0; i < 64; i++) {
        size_t n = 512 * (1 + i % 16);
        char *q = (char *)malloc(n);
        cudaError_t e = cudaMemcpy(q, d, n, cudaMemcpyDeviceToHost);
        cudaGetLastError();
        tried++;
        if (e != cudaSuccess) {
            bad++;
            if (bad <= 4) printf("  after the free: malloc(%zu) = %p (registered block at offset %td): %s\n", n, (void *)q, q - p, cudaGetErrorName(e));
        }
        // Kept, so the next malloc is another block.
    }
    printf("after the free: %d of %d copies into fresh malloc blocks failed\n", bad, tried);
    return 0;
}
