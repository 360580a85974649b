// Probe 12 (issue 32): what a CUDA process's start costs on a host of several GPUs, alone and beside other starts,
// and whether a start on one GPU slows allocations and frees in a process on another GPU.
//
//   probe12 init                 cuInit only
//   probe12 driver               cuInit, the primary context made current, one 1 MiB cuMemAlloc/cuMemFree, release
//   probe12 runtime              cudaFree(0), one 1 MiB cudaMalloc/cudaFree (cudart linked statically)
//   probe12 freeloop N BYTES     cudaFree(0), then N pairs of cudaMalloc(BYTES)/cudaFree: their latencies' p50/p90/p99/max
//   probe12 trap                 cudaFree(0), then a kernel that traps: how long the synchronize that reports it takes
//                                (the driver's recovery from the fault)
//
// Each prints one line of milliseconds; the calling script times the whole process (exec to exit).
// Build: nvcc -O2 -o probe12 probe12.cu -lcuda
#include <cuda.h>
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <vector>
#include <algorithm>

static double now_ms() {
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

__global__ void trap_kernel() { asm volatile("trap;"); }

static double pct(std::vector<double> v, double p) {
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, (size_t)(p * v.size()))];
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "driver";
    double t0 = now_ms();
    if (!strcmp(mode, "init")) {
        CUresult r = cuInit(0);
        printf("init rc=%d init_ms=%.1f\n", (int)r, now_ms() - t0);
    } else if (!strcmp(mode, "driver")) {
        CUresult r = cuInit(0);
        double t1 = now_ms();
        CUdevice d;
        CUcontext c;
        cuDeviceGet(&d, 0);
        CUresult rc = cuDevicePrimaryCtxRetain(&c, d);
        cuCtxSetCurrent(c);
        double t2 = now_ms();
        CUdeviceptr p;
        CUresult ra = cuMemAlloc(&p, 1 << 20);
        CUresult rf = cuMemFree(p);
        double t3 = now_ms();
        cuDevicePrimaryCtxRelease(d);
        double t4 = now_ms();
        printf("driver rc=%d/%d/%d/%d init_ms=%.1f ctx_ms=%.1f allocfree_ms=%.1f release_ms=%.1f\n", (int)r, (int)rc,
               (int)ra, (int)rf, t1 - t0, t2 - t1, t3 - t2, t4 - t3);
    } else if (!strcmp(mode, "runtime")) {
        cudaError_t e = cudaFree(0);
        double t1 = now_ms();
        void *p;
        cudaMalloc(&p, 1 << 20);
        cudaFree(p);
        double t2 = now_ms();
        printf("runtime rc=%d start_ms=%.1f allocfree_ms=%.1f\n", (int)e, t1 - t0, t2 - t1);
    } else if (!strcmp(mode, "trap")) {
        cudaError_t e = cudaFree(0);
        double t1 = now_ms();
        trap_kernel<<<1, 1>>>();
        cudaError_t s = cudaDeviceSynchronize();
        double t2 = now_ms();
        printf("trap rc=%d start_ms=%.1f sync=%d sync_ms=%.1f\n", (int)e, t1 - t0, (int)s, t2 - t1);
    } else if (!strcmp(mode, "freeloop")) {
        int n = argc > 2 ? atoi(argv[2]) : 1000;
        size_t bytes = argc > 3 ? strtoull(argv[3], 0, 0) : (4 << 20);
        cudaError_t e = cudaFree(0);
        std::vector<double> a, f;
        double s = now_ms();
        for (int i = 0; i < n; i++) {
            void *p;
            double t = now_ms();
            cudaError_t ea = cudaMalloc(&p, bytes);
            double u = now_ms();
            cudaError_t ef = cudaFree(p);
            double w = now_ms();
            if (ea || ef) {
                printf("freeloop error %d %d at %d\n", (int)ea, (int)ef, i);
                return 1;
            }
            a.push_back(u - t);
            f.push_back(w - u);
        }
        printf("freeloop rc=%d n=%d bytes=%zu total_ms=%.1f malloc p50=%.3f p90=%.3f p99=%.3f max=%.3f free p50=%.3f "
               "p90=%.3f p99=%.3f max=%.3f\n",
               (int)e, n, bytes, now_ms() - s, pct(a, .5), pct(a, .9), pct(a, .99), pct(a, 1), pct(f, .5),
               pct(f, .9), pct(f, .99), pct(f, 1));
    }
    return 0;
}
