// Kernels for conditional graph nodes (IF 12.3, WHILE 12.4, SWITCH 12.8), in a module of their own: they call
// cudaGraphSetConditional, a device-runtime builtin that the driver resolves when it JIT-compiles this PTX (no
// relocatable device code or cudadevrt). NVRTC 12.0's ptxas predates the builtin and refuses to link it into a
// cubin, so build.rs packs this file as PTX only (ISA 8.0, like the probes), registered beside the probes by
// kernels/register.c. A driver too old for conditional nodes fails only when this module is loaded, which lazy
// loading does at the first launch of one of these kernels: in a case that requires conditional nodes anyway.

#ifdef __CUDACC_RTC__
typedef unsigned int uint32_t;
#else
#include <cstdint>
#endif
// Declared with the signature of cuda_device_runtime_api.h (the handle is an unsigned long long), which NVRTC 12.0
// lacks. Both kernels run as one thread, only as graph kernel nodes.
typedef unsigned long long cc_condition_handle;
extern "C" __device__ void cudaGraphSetConditional(cc_condition_handle handle, unsigned int value);

// cc_set_condition: the condition becomes src[0].
extern "C" __global__ void cc_set_condition(cc_condition_handle handle, const uint32_t* src) {
    cudaGraphSetConditional(handle, src[0]);
}

// cc_countdown: counter[0] decreases by one unless it is zero, counter[1] counts the runs, and the condition becomes
// counter[0] != 0. In a WHILE body whose condition starts at 1 (a default) and counter[0] = N >= 1, the body runs
// N times; counter[1] ends at N.
extern "C" __global__ void cc_countdown(cc_condition_handle handle, uint32_t* counter) {
    uint32_t left = counter[0];
    if (left > 0) {
        left -= 1;
        counter[0] = left;
    }
    counter[1] += 1;
    cudaGraphSetConditional(handle, left != 0 ? 1u : 0u);
}
