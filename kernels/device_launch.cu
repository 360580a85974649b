// Kernels that launch graphs from the device (Programming Guide §4.2.6, "Device Graph Launch"), in a module of
// their own. The device-side cudaGraphLaunch and cudaGetCurrentGraphExec are builtins: NVRTC 12.0 declares them,
// its ptxas leaves cudaGraphLaunch an undefined symbol that the driver resolves when it loads the module, and no
// relocatable device code or libcudadevrt is needed (measured: nvcc 13.0 leaves the same undefined symbol with and
// without -rdc and -lcudadevrt). A separate module, so that a driver that could not resolve it fails only the cases
// that launch these kernels (lazy loading loads a module at its first launch), never the probes.
//
// Each kernel runs as one thread and stamps its entry and exit like the probes (kernels/probes.cu); the helpers
// here have names of their own because the reproducers' header puts every kernel file in one translation unit.
// Codes are written as the cudaError_t number the call returned.

#ifdef __CUDACC_RTC__
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
#else
#include <cstdint>
#endif

__device__ __forceinline__ void cc_dl_stamp(uint64_t* stamp, int at) {
    if (stamp != nullptr) {
        uint64_t t;
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
        stamp[at] = t;
        __threadfence_system();
    }
}

// cc_device_launch: cudaGraphLaunch(exec, mode) `times` times in a row; codes[i] is the i-th call's code. `mode`
// is one of the device-only launch streams (cudaStreamGraphTailLaunch, cudaStreamGraphFireAndForget,
// cudaStreamGraphFireAndForgetAsSibling), passed as its handle value.
extern "C" __global__ void cc_device_launch(cudaGraphExec_t exec, uint64_t mode, uint32_t times, uint32_t* codes,
                                            uint64_t* stamp) {
    cc_dl_stamp(stamp, 0);
    for (uint32_t i = 0; i < times; i++) {
        codes[i] = (uint32_t)cudaGraphLaunch(exec, (cudaStream_t)mode);
    }
    cc_dl_stamp(stamp, 1);
}

// cc_relaunch_self: counter[0] counts the runs of this kernel. While it is below `runs`, the kernel enqueues the
// graph it runs in (cudaGetCurrentGraphExec) for tail launch `times` times, writing each code to
// codes[(run - 1) * times + i]; the run that reaches `runs` launches nothing.
extern "C" __global__ void cc_relaunch_self(uint32_t* counter, uint32_t runs, uint32_t times, uint32_t* codes,
                                            uint64_t* stamp) {
    cc_dl_stamp(stamp, 0);
    uint32_t run = counter[0] + 1;
    counter[0] = run;
    if (run < runs) {
        for (uint32_t i = 0; i < times; i++) {
            codes[(run - 1) * times + i] = (uint32_t)cudaGraphLaunch(cudaGetCurrentGraphExec(), cudaStreamGraphTailLaunch);
        }
    }
    cc_dl_stamp(stamp, 1);
}

// cc_current_graph: out[0] = 1 when cudaGetCurrentGraphExec() names a graph (the kernel is a node of a device
// graph), 0 when it returns NULL.
extern "C" __global__ void cc_current_graph(uint32_t* out, uint64_t* stamp) {
    cc_dl_stamp(stamp, 0);
    out[0] = cudaGetCurrentGraphExec() != nullptr ? 1u : 0u;
    cc_dl_stamp(stamp, 1);
}
