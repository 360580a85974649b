// Kernels in images the device has no SASS for, for the codes a launch or a symbol call returns when a module
// cannot be used as it is (issue 30). build.rs compiles this file twice, each a module of its own registered by
// kernels/register.c beside the probes:
// - as an sm_80 cubin only (no PTX): `cc_sm80_only` and `cc_sm80_symbol`. A GPU of another architecture has no
//   image of them (cudaErrorNoKernelImageForDevice where a sentence names it), whereas an sm_80 GPU runs them.
// - as compute_80 PTX only (no cubin): `cc_ptx_only` and `cc_ptx_symbol`. Any GPU at or above sm_80 runs it after
//   the driver JIT-compiles the PTX; with CUDA_DISABLE_PTX_JIT=1 it has no image the driver may use.
// Both kernels take no parameters (a `call cudaLaunchKernel ... args=null` launches them) and store 7 into their
// module's variable, which a symbol copy reads back. The harness never preloads them (exec/mod.rs): the first
// call that needs the module in a case is the one that loads it.

#ifdef __CUDACC_RTC__
typedef unsigned int uint32_t;
#else
#include <cstdint>
#endif

#ifdef CC_SM80_ONLY
__device__ uint32_t cc_sm80_symbol[1024];
extern "C" __global__ void cc_sm80_only() {
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        cc_sm80_symbol[0] = 7;
    }
}
#endif

#ifdef CC_PTX_ONLY
__device__ uint32_t cc_ptx_symbol[1024];
extern "C" __global__ void cc_ptx_only() {
    if (threadIdx.x == 0 && blockIdx.x == 0) {
        cc_ptx_symbol[0] = 7;
    }
}
#endif
