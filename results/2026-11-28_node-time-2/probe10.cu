// probe10: may a case that faults its context run beside batch work on the same GPU, and may one process serve
// several such cases (cudaDeviceReset between them)? Each mode prints what the driver returned and how long it took.
//   probe10 busy MS           for MS ms: a small kernel, a 4-byte D2H copy, a stream sync, again; latency stats
//   probe10 trap              one trap in a fresh context: the synchronize's time and code
//   probe10 reuse N           N times in one process: a trap, cudaDeviceReset, then a kernel and a copy that must work
//   probe10 start T0_NS       a process start's stretches from T0 (CLOCK_MONOTONIC ns before exec)
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>
#include <string_view>

static long long now_ns() { timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000LL + t.tv_nsec; }
static double ms(long long a, long long b) { return (b - a) / 1e6; }
__global__ void trap_kernel() { __trap(); }
__global__ void bump(int *p) { *p += 1; }
#define N(e) cudaGetErrorName(e)

static int busy(int dur_ms) {
  long long t0 = now_ns();
  int *d, *h; cudaMalloc(&d, 4); cudaMallocHost(&h, 4); cudaMemset(d, 0, 4);
  cudaStream_t s; cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
  cudaDeviceSynchronize();
  long long start = now_ns();
  printf("busy: ready after %.1f ms\n", ms(t0, start));
  std::vector<double> lat; int bad = 0, wrong = 0, n = 0; cudaError_t first = cudaSuccess;
  while (now_ns() - start < (long long)dur_ms * 1000000) {
    long long a = now_ns();
    bump<<<1, 1, 0, s>>>(d);
    cudaMemcpyAsync(h, d, 4, cudaMemcpyDeviceToHost, s);
    cudaError_t e = cudaStreamSynchronize(s);
    long long b = now_ns();
    ++n;
    if (e != cudaSuccess) { if (!bad++) first = e; }
    else if (*h != n) ++wrong;
    lat.push_back(ms(a, b));
    if (ms(a, b) > 5) printf("busy: slow iteration at +%.1f ms: %.2f ms\n", ms(start, a), ms(a, b));
  }
  std::vector<double> sorted = lat; std::sort(sorted.begin(), sorted.end());
  auto q = [&](double f) { return sorted[(size_t)(f * (sorted.size() - 1))]; };
  printf("busy: %d iterations in %d ms, p50 %.3f ms, p99 %.3f ms, max %.2f ms, errors %d (first %s), wrong values %d\n",
         n, dur_ms, q(0.5), q(0.99), sorted.back(), bad, N(first), wrong);
  return bad || wrong;
}

static double trap_once(cudaError_t *sync_code) {
  long long a = now_ns();
  trap_kernel<<<1, 1>>>();
  *sync_code = cudaDeviceSynchronize();
  return ms(a, now_ns());
}

static int trap() {
  long long t0 = now_ns();
  cudaFree(0);
  long long t1 = now_ns();
  cudaError_t e; double t = trap_once(&e);
  printf("trap: context %.1f ms; trap+sync %.1f ms -> %s\n", ms(t0, t1), t, N(e));
  return 0;
}

static int reuse(int times) {
  cudaFree(0);
  for (int i = 0; i < times; ++i) {
    cudaError_t e; double t = trap_once(&e);
    long long a = now_ns();
    cudaError_t r = cudaDeviceReset();
    long long b = now_ns();
    int *d = nullptr; int h = 0;
    cudaError_t m = cudaMalloc(&d, 4);
    cudaError_t z = cudaMemset(d, 0, 4);
    bump<<<1, 1>>>(d);
    cudaError_t l = cudaGetLastError();
    cudaError_t c = cudaMemcpy(&h, d, 4, cudaMemcpyDeviceToHost);
    cudaError_t g = cudaGetLastError();
    long long c1 = now_ns();
    cudaFree(d);
    printf("reuse %d: trap+sync %.1f ms -> %s; reset %.1f ms -> %s; then malloc %s memset %s launch %s copy %s value %d "
           "last error %s, %.1f ms after the reset\n",
           i, t, N(e), ms(a, b), N(r), N(m), N(z), N(l), N(c), h, N(g), ms(b, c1));
  }
  return 0;
}

static int start(long long t0) {
  long long a = now_ns();
  int n = 0; cudaError_t e1 = cudaGetDeviceCount(&n);
  long long b = now_ns();
  cudaError_t e2 = cudaFree(0);
  long long c = now_ns();
  int *d; cudaError_t e3 = cudaMalloc(&d, 4); bump<<<1, 1>>>(d); cudaError_t e4 = cudaDeviceSynchronize();
  long long f = now_ns();
  printf("start: exec->main %.1f ms, driver init (cudaGetDeviceCount %s) %.1f ms, context (cudaFree(0) %s) %.1f ms, "
         "first malloc+kernel+sync (%s %s) %.1f ms\n", ms(t0, a), N(e1), ms(a, b), N(e2), ms(b, c), N(e3), N(e4), ms(c, f));
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 2) return 2;
  std::string_view m = argv[1];
  if (m == "busy") return busy(atoi(argv[2]));
  if (m == "trap") return trap();
  if (m == "reuse") return reuse(atoi(argv[2]));
  if (m == "start") return start(atoll(argv[2]));
  return 2;
}
