// Where a performance case's host time goes: the pieces of declaring, filling, scanning and freeing 256 MiB.
#include <cuda_runtime.h>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <cstdint>
static double now() { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count(); }
__global__ void mismatches(const uint32_t* p, size_t n, unsigned long long* out) {
  uint32_t v = p[0]; unsigned long long c = 0;
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) c += p[i] != v;
  if (c) atomicAdd(out, c);
}
int main() {
  const size_t B = 256u << 20, W = B / 4;
  cudaFree(0);
  unsigned long long* cnt; cudaMallocHost(&cnt, 8);
  for (int rep = 0; rep < 3; rep++) {
    double t0 = now(); void* h; cudaHostAlloc(&h, B, 0); double t1 = now();
    memset(h, 0x5a, B); double t2 = now();
    cudaMemset(h, 0x5b, B); cudaDeviceSynchronize(); double t3 = now();
    const uint32_t* w = (const uint32_t*)h; uint32_t v = w[0]; size_t m = 0; for (size_t i = 0; i < W; i++) m += w[i] != v; double t4 = now();
    *cnt = 0; mismatches<<<264, 1024>>>((const uint32_t*)h, W, cnt); cudaDeviceSynchronize(); double t5 = now();
    void* d; cudaMalloc(&d, B); cudaMemset(d, 7, B); cudaDeviceSynchronize(); double t6 = now();
    void* chunk; cudaMallocHost(&chunk, 4 << 20); size_t mm = 0;
    for (size_t off = 0; off < B; off += 4 << 20) { cudaMemcpy(chunk, (char*)d + off, 4 << 20, cudaMemcpyDeviceToHost); const uint32_t* c = (const uint32_t*)chunk; for (size_t i = 0; i < (1u << 20); i++) mm += c[i] != 0x07070707u; }
    double t7 = now();
    *cnt = 0; mismatches<<<264, 1024>>>((const uint32_t*)d, W, cnt); cudaDeviceSynchronize(); double t8 = now();
    cudaFreeHost(chunk); cudaFree(d); double t9 = now();
    cudaFreeHost(h); double t10 = now();
    printf("hostalloc %.1f host-memset %.1f gpu-memset-pinned %.1f cpu-scan %.1f(m=%zu) gpu-scan-pinned %.1f(m=%llu) malloc+memset-dev %.1f readback+scan %.1f(m=%zu) gpu-scan-dev %.1f(m=%llu) free-dev %.1f freehost %.1f ms\n",
           t1 - t0, t2 - t1, t3 - t2, t4 - t3, m, t5 - t4, *cnt, t6 - t5, t7 - t6, mm, t8 - t7, *cnt, t9 - t8, t10 - t9);
  }
  printf("%s\n", cudaGetErrorString(cudaGetLastError()));
}
