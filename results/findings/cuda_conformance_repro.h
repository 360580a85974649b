// cuda_conformance_repro.h: the one header every reproducer written by `cuda-conformance repro` includes.
//
// What is here: the probe kernels (kernels/probes.cu, conditional.cu and device_launch.cu, verbatim), and the
// bookkeeping of a run that is no part of the rule under test: the host clock, the gates' open/watchdog thread,
// the host-function log, the case's host threads, the objects' states (so that an operation whose object does not
// exist is recorded as not run, as the Rust executor does), the graph-node bookkeeping, and the JSON the program
// prints (the report's observation schema, harness::record::Observations). The CUDA runtime calls a case makes
// are in the .cu file, one block per case line; the calls here only observe (cudaStreamGetCaptureInfo to learn
// which operation made which node, the topology reads of a graph, cudaGetErrorName), and each runs "quietly": it
// never changes the thread's last error.
//
// Plain C++17 and the CUDA runtime API: no other library. hipify-perl turns it into HIP like the .cu files.

#pragma once

#include <cuda_runtime.h>
// The profiler's two functions (cuda_profiler_api.h, which the pinned toolkit subset lacks), as that header
// declares them; libcudart exports both.
extern "C" cudaError_t CUDARTAPI cudaProfilerStart(void);
extern "C" cudaError_t CUDARTAPI cudaProfilerStop(void);

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <filesystem>
#include <functional>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

// ---------------------------------------------------------------------------------------------------------------
// kernels/probes.cu, verbatim

// The probe kernels of the conformance suite. Their ABI (names, parameters, launch shapes) is specified in
// harness/src/kernels.rs; Rust launches them through cudaLaunchKernel with the handles exported at the bottom.
//
// Time is always %globaltimer (nanoseconds, one clock for the whole GPU): SM clocks (clock64) change with load
// and boost, so they cannot measure durations or order kernels on different SMs. __nanosleep is used only as a
// polling back-off; it promises no minimum delay.
//
// Stamp buffers may be device memory or mapped host memory. __threadfence_system() after a stamp or flag write
// orders it before later writes for every observer, the host included.
//
// Compiled by NVRTC 12.0 (see the root build.rs), which cannot open <cstdint>: the fixed-width types are declared
// here for it (LP64, as on every host this suite builds for). The kernels' host handles are in kernels/register.c.

#ifdef __CUDACC_RTC__
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
typedef unsigned long uintptr_t;
#else
#include <cstdint>
#endif

// A `__device__` variable for the symbol calls (cudaMemcpyToSymbol, cudaGetSymbolAddress, memcpy nodes to and from
// a symbol): 4 KiB, registered with cudart under this name by kernels/register.c (`symbol=cc_symbol` in a case).
// External linkage and outside the anonymous namespace, so the compiler keeps it although no kernel touches it.
__device__ uint32_t cc_symbol[1024];

namespace {

__device__ __forceinline__ uint64_t globaltimer() {
    uint64_t t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Thread 0 records the kernel's entry; the fence publishes it early, so the host can see that a gate has
// started while it is still held.
__device__ __forceinline__ void stamp_entry(uint64_t* stamp) {
    if (stamp != nullptr && threadIdx.x == 0) {
        stamp[0] = globaltimer();
        __threadfence_system();
    }
}

// Called by every thread of the block: the barrier makes thread 0's exit stamp later than every thread's work.
__device__ __forceinline__ void stamp_exit(uint64_t* stamp) {
    __syncthreads();
    if (stamp != nullptr && threadIdx.x == 0) {
        stamp[1] = globaltimer();
    }
    __threadfence_system();
}

}  // namespace

// 1 thread. Holds its stream until the host writes a non-zero *flag (mapped pinned host memory), or until
// timeout_ns passes, so that a lost open cannot hang the GPU. A volatile load is a relaxed system-scope load in
// the PTX memory model: every poll reads the host's memory, never a cached copy.
extern "C" __global__ void cc_gate(const volatile uint32_t* flag, uint64_t timeout_ns, uint32_t* timed_out,
                                   uint64_t* stamp) {
    const uint64_t start = globaltimer();
    if (stamp != nullptr) {
        stamp[0] = start;
        __threadfence_system();
    }
    unsigned backoff_ns = 32;
    while (*flag == 0) {
        if (globaltimer() - start >= timeout_ns) {
            if (timed_out != nullptr) {
                *(volatile uint32_t*)timed_out = 1;
            }
            break;
        }
        __nanosleep(backoff_ns);
        if (backoff_ns < 1024) {
            backoff_ns *= 2;
        }
    }
    if (stamp != nullptr) {
        stamp[1] = globaltimer();
    }
    __threadfence_system();
}

// Busy-waits on %globaltimer: the duration is wall time on the GPU, whatever the SM clock does. Any grid and
// block: every thread spins; the stamps are the first entry and the last exit of any block (the slot starts
// zeroed, so the first entry claims it with a compare-and-swap and later ones can only lower it).
__device__ __forceinline__ void spin_body(uint64_t ns, uint64_t* stamp) {
    const uint64_t start = globaltimer();
    if (stamp != nullptr && threadIdx.x == 0) {
        unsigned long long* entry = reinterpret_cast<unsigned long long*>(&stamp[0]);
        const unsigned long long prior = atomicCAS(entry, 0ull, (unsigned long long)start);
        if (prior != 0ull && prior > start) {
            atomicMin(entry, (unsigned long long)start);
        }
        __threadfence_system();
    }
    uint64_t now = start;
    while (now - start < ns) {
        now = globaltimer();
    }
    __syncthreads();
    if (stamp != nullptr && threadIdx.x == 0) {
        atomicMax(reinterpret_cast<unsigned long long*>(&stamp[1]), (unsigned long long)globaltimer());
    }
    __threadfence_system();
}

extern "C" __global__ void cc_spin(uint64_t ns, uint64_t* stamp) { spin_body(ns, stamp); }

// The same kernel under another name, which the harness never loads before a case's script: its first launch is
// the one that loads it when module loading is lazy (CUDA_MODULE_LOADING=LAZY, the default since CUDA 12.2).
extern "C" __global__ void cc_lazy_spin(uint64_t ns, uint64_t* stamp) { spin_body(ns, stamp); }

// cc_spin_trigger: as cc_spin, but every block first allows the next kernel in the stream to launch
// (cudaTriggerProgrammaticLaunchCompletion, PTX griddepcontrol.launch_dependents, compute capability 9.0+; a no-op
// below). Only a dependent launched with programmatic stream serialization may then overlap it.
extern "C" __global__ void cc_spin_trigger(uint64_t ns, uint64_t* stamp) {
#if __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
    spin_body(ns, stamp);
}

// 1 thread. Faults on purpose: mode 0 stores to an address no allocation covers (an illegal address), mode 1
// executes a trap. The entry stamp is written first, so a case can see that the kernel started.
extern "C" __global__ void cc_fault(uint32_t mode, uint64_t* stamp) {
    if (stamp != nullptr) {
        stamp[0] = globaltimer();
        __threadfence_system();
    }
    if (mode == 0) {
        // The first page is never mapped in a CUDA context: the store raises cudaErrorIllegalAddress.
        volatile uint32_t* invalid = reinterpret_cast<volatile uint32_t*>(static_cast<uintptr_t>(16));
        *invalid = 1;
    } else {
        __trap();
    }
    if (stamp != nullptr) {
        stamp[1] = globaltimer();
    }
}

// Data kernels: one block, block-stride loop (blockDim.x threads, DATA_BLOCK_THREADS on the Rust side).

extern "C" __global__ void cc_fill(uint32_t* buf, uint32_t n, uint32_t value, uint64_t* stamp) {
    stamp_entry(stamp);
    for (uint32_t i = threadIdx.x; i < n; i += blockDim.x) {
        buf[i] = value;
    }
    stamp_exit(stamp);
}

// x = x * mul + add, wrapping (unsigned arithmetic): not commutative with itself for most (mul, add), so the
// final values prove the order in which transforms ran.
extern "C" __global__ void cc_transform(uint32_t* buf, uint32_t n, uint32_t mul, uint32_t add, uint64_t* stamp) {
    stamp_entry(stamp);
    for (uint32_t i = threadIdx.x; i < n; i += blockDim.x) {
        buf[i] = buf[i] * mul + add;
    }
    stamp_exit(stamp);
}

// Sets (not adds to) *mismatches, so the caller need not clear it.
extern "C" __global__ void cc_compare(const uint32_t* a, const uint32_t* b, uint32_t n, uint32_t* mismatches,
                                      uint64_t* stamp) {
    __shared__ uint32_t total;
    stamp_entry(stamp);
    if (threadIdx.x == 0) {
        total = 0;
    }
    __syncthreads();
    uint32_t local = 0;
    for (uint32_t i = threadIdx.x; i < n; i += blockDim.x) {
        local += a[i] != b[i] ? 1u : 0u;
    }
    if (local != 0) {
        atomicAdd(&total, local);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        *mismatches = total;
    }
    stamp_exit(stamp);
}


// The seeds' compute kernels (seed 000's vecAdd, seed 002's sin/cos loop, seed 003's SleepKernel), launched with
// the grid and block a case gives, like the seeds' <<<grid, block>>>. A grid-stride loop makes any grid correct;
// with the seeds' grid (one thread per element) every thread makes exactly one pass, as in the seeds.
//
// Stamps of a kernel of tens of thousands of blocks: one atomic per block on one address would queue for longer
// than a small kernel runs, so only the first STAMP_FIRST_BLOCKS blocks record the entry (the earliest wins) and
// the last STAMP_LAST_BLOCKS the exit (the latest wins). Blocks are dispatched in index order, so this is the
// kernel's first entry and last exit to within the dispatch of a few blocks; exact for smaller grids. The slot may
// be shared by repeated launches (`repeat N`): it keeps the first entry and the last exit of all of them.

#define STAMP_FIRST_BLOCKS 64u
#define STAMP_LAST_BLOCKS 256u

namespace {

__device__ __forceinline__ void sampled_entry(uint64_t* stamp) {
    if (stamp != nullptr && threadIdx.x == 0 && blockIdx.x < STAMP_FIRST_BLOCKS) {
        const unsigned long long now = globaltimer();
        unsigned long long* entry = reinterpret_cast<unsigned long long*>(&stamp[0]);
        const unsigned long long prior = atomicCAS(entry, 0ull, now);
        if (prior != 0ull && prior > now) {
            atomicMin(entry, now);
        }
        __threadfence_system();
    }
}

__device__ __forceinline__ void sampled_exit(uint64_t* stamp) {
    __syncthreads();
    if (stamp != nullptr && threadIdx.x == 0 && blockIdx.x + STAMP_LAST_BLOCKS >= gridDim.x) {
        atomicMax(reinterpret_cast<unsigned long long*>(&stamp[1]), (unsigned long long)globaltimer());
    }
    __threadfence_system();
}

}  // namespace

// Seed 000's vecAdd (its body is elided there): c[i] = a[i] + b[i] for i < n.
extern "C" __global__ void cc_vecadd(const float* a, const float* b, float* c, uint32_t n, uint64_t* stamp) {
    sampled_entry(stamp);
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        c[i] = a[i] + b[i];
    }
    sampled_exit(stamp);
}

// Seed 002's simpleKernel / processChunk, written as the seed writes it: `iterations` times
// data[i] = sinf(data[i]) * cosf(data[i]).
extern "C" __global__ void cc_sincos(float* data, uint32_t n, uint32_t iterations, uint64_t* stamp) {
    sampled_entry(stamp);
    for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        for (uint32_t k = 0; k < iterations; k++) {
            data[i] = sinf(data[i]) * cosf(data[i]);
        }
    }
    sampled_exit(stamp);
}

// Seed 003's SleepKernel: every thread spins until clock64() has advanced `cycles` SM clock cycles. This is the
// seed's kernel, so it counts SM cycles (a duration that follows the SM clock); the %globaltimer stamps record how
// long it actually took.
extern "C" __global__ void cc_sleep(long long cycles, uint64_t* stamp) {
    sampled_entry(stamp);
    long long elapsed = 0;
    const long long start = clock64();
    while (elapsed < cycles) {
        elapsed = clock64() - start;
    }
    sampled_exit(stamp);
}

// cc_bounded32: compiled with __launch_bounds__(32), so its image allows at most 32 threads per block
// (cudaFuncGetAttributes reads maxThreadsPerBlock 32). It does nothing: a launch with more threads per block than
// that asks for what the kernel was not built for (issue 30's cudaErrorLaunchOutOfResources rows).
extern "C" __global__ void __launch_bounds__(32) cc_bounded32() {}

// cc_many_registers: no launch bounds, and 160 values live at once, so each thread needs more than 64 registers
// (ptxas of the build's NVRTC 12.0 and of nvcc 13.0, sm_90: 166, no spills): a block of 1024 threads needs more than the 65536 registers a
// block may have. It writes only its own variable, and only when the values happen to XOR to one constant. No
// parameters (`call` only: issue 30's cudaErrorLaunchOutOfResources, "too many threads for the kernel's register
// count").
__device__ unsigned int cc_many_registers_sink;
extern "C" __global__ void cc_many_registers() {
    unsigned int v[160];
#pragma unroll
    for (int i = 0; i < 160; ++i) v[i] = (threadIdx.x + i) * (unsigned int)clock();
#pragma unroll
    for (int round = 0; round < 3; ++round) {
#pragma unroll
        for (int i = 0; i < 160; ++i) v[i] = v[i] * v[(i + 7) % 160] + round;
    }
    unsigned int acc = 0;
#pragma unroll
    for (int i = 0; i < 160; ++i) acc ^= v[i];
    if (acc == 0x12345678u) cc_many_registers_sink = acc;
}

// ---------------------------------------------------------------------------------------------------------------
// kernels/conditional.cu, verbatim

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

// ---------------------------------------------------------------------------------------------------------------
// kernels/device_launch.cu, verbatim

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

// ---------------------------------------------------------------------------------------------------------------
// kernels/other_images.cu's two modules: an sm_80 cubin without PTX (cc_sm80_only, cc_sm80_symbol) and compute_80
// PTX without a cubin (cc_ptx_only, cc_ptx_symbol); and kernels/bad.ptx and future.ptx, PTX the driver refuses
// (cc_bad_ptx, cc_future_ptx), a module each. One nvcc command builds a program for one set of targets, so
// these images are the very bytes the suite's build compiled (NVRTC 12.0, nvFatbin), embedded here and registered
// with cudart as kernels/register.c registers them (and as nvcc's own stubs register the probes above). An image
// of 0 bytes (a header written without them) is not registered.

static const unsigned long long cc_sm80_only_image[] __attribute__((aligned(8))) = {
0x00100001ba55ed50ull, 0x0000000000001a90ull, 0x0000004801010002ull, 0x0000000000001a48ull, 0x0000000000000000ull, 0x0000005000010007ull,
0x0000000600000040ull, 0x0000000000000011ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x00007365626f7270ull, 0x33010102464c457full,
0x0000000000000007ull, 0x0000007800be0002ull, 0x0000000000000000ull, 0x0000000000001968ull, 0x0000000000001628ull, 0x0038004000500550ull,
0x0001000d00400004ull, 0x7472747368732e00ull, 0x747274732e006261ull, 0x746d79732e006261ull, 0x746d79732e006261ull, 0x78646e68735f6261ull,
0x7466752e766e2e00ull, 0x2e007972746e652eull, 0x006f666e692e766eull, 0x63632e747865742eull, 0x6e6f5f30386d735full, 0x692e766e2e00796cull,
0x735f63632e6f666eull, 0x796c6e6f5f30386dull, 0x6168732e766e2e00ull, 0x735f63632e646572ull, 0x796c6e6f5f30386dull, 0x6f6c672e766e2e00ull,
0x2e766e2e006c6162ull, 0x692e6c61626f6c67ull, 0x6c65722e0074696eull, 0x63632e747865742eull, 0x6e6f5f30386d735full, 0x632e766e2e00796cull,
0x30746e6174736e6full, 0x30386d735f63632eull, 0x642e00796c6e6f5full, 0x6172665f67756265ull, 0x2e6c65722e00656dull, 0x72665f6775626564ull,
0x6c65722e00656d61ull, 0x5f67756265642e61ull, 0x2e0000656d617266ull, 0x6261747274736873ull, 0x6261747274732e00ull, 0x6261746d79732e00ull,
0x6261746d79732e00ull, 0x2e0078646e68735full, 0x652e7466752e766eull, 0x766e2e007972746eull, 0x6363006f666e692eull, 0x6e6f5f30386d735full,
0x747865742e00796cull, 0x30386d735f63632eull, 0x6e2e00796c6e6f5full, 0x632e6f666e692e76ull, 0x6f5f30386d735f63ull, 0x2e766e2e00796c6eull,
0x632e646572616873ull, 0x6f5f30386d735f63ull, 0x2e766e2e00796c6eull, 0x63006c61626f6c67ull, 0x735f30386d735f63ull, 0x6e2e006c6f626d79ull,
0x6c61626f6c672e76ull, 0x5a5f0074696e692eull, 0x45544e495f39334eull, 0x3030305f4c414e52ull, 0x5f395f3030303030ull, 0x635f7365626f7270ull,
0x3734386433635f75ull, 0x617436766e326664ull, 0x7465643674656772ull, 0x5f6c6c61396c6961ull, 0x5f00457374736f68ull, 0x544e495f39334e5aull,
0x30305f4c414e5245ull, 0x395f303030303030ull, 0x5f7365626f72705full, 0x34386433635f7563ull, 0x7436766e32666437ull, 0x6564367465677261ull,
0x5f6d73396c696174ull, 0x00457469625f3533ull, 0x4e495f39334e5a5full, 0x305f4c414e524554ull, 0x5f30303030303030ull, 0x7365626f72705f39ull,
0x386433635f75635full, 0x36766e3266643734ull, 0x6436746567726174ull, 0x6d73396c69617465ull, 0x457469625f37335full, 0x495f39334e5a5f00ull,
0x5f4c414e5245544eull, 0x3030303030303030ull, 0x65626f72705f395full, 0x6433635f75635f73ull, 0x766e326664373438ull, 0x3674656772617436ull,
0x73396c6961746564ull, 0x7469625f30355f6dull, 0x5f39334e5a5f0045ull, 0x4c414e5245544e49ull, 0x303030303030305full, 0x626f72705f395f30ull,
0x33635f75635f7365ull, 0x6e32666437343864ull, 0x7465677261743676ull, 0x396c696174656436ull, 0x69625f32355f6d73ull, 0x39334e5a5f004574ull,
0x414e5245544e495full, 0x3030303030305f4cull, 0x6f72705f395f3030ull, 0x635f75635f736562ull, 0x3266643734386433ull, 0x656772617436766eull,
0x6c69617465643674ull, 0x625f33355f6d7339ull, 0x334e5a5f00457469ull, 0x4e5245544e495f39ull, 0x30303030305f4c41ull, 0x72705f395f303030ull,
0x5f75635f7365626full, 0x6664373438643363ull, 0x6772617436766e32ull, 0x6961746564367465ull, 0x5f30365f6d73396cull, 0x4e5a5f0045746962ull,
0x5245544e495f3933ull, 0x303030305f4c414eull, 0x705f395f30303030ull, 0x75635f7365626f72ull, 0x643734386433635full, 0x72617436766e3266ull,
0x6174656436746567ull, 0x31365f6d73396c69ull, 0x5a5f00457469625full, 0x45544e495f39334eull, 0x3030305f4c414e52ull, 0x5f395f3030303030ull,
0x635f7365626f7270ull, 0x3734386433635f75ull, 0x617436766e326664ull, 0x7465643674656772ull, 0x365f6d73396c6961ull, 0x5f00457469625f32ull,
0x544e495f39334e5aull, 0x30305f4c414e5245ull, 0x395f303030303030ull, 0x5f7365626f72705full, 0x34386433635f7563ull, 0x7436766e32666437ull,
0x6564367465677261ull, 0x5f6d73396c696174ull, 0x00457469625f3037ull, 0x4e495f39334e5a5full, 0x305f4c414e524554ull, 0x5f30303030303030ull,
0x7365626f72705f39ull, 0x386433635f75635full, 0x36766e3266643734ull, 0x6436746567726174ull, 0x6d73396c69617465ull, 0x457469625f32375full,
0x495f39334e5a5f00ull, 0x5f4c414e5245544eull, 0x3030303030303030ull, 0x65626f72705f395full, 0x6433635f75635f73ull, 0x766e326664373438ull,
0x3674656772617436ull, 0x73396c6961746564ull, 0x7469625f35375f6dull, 0x5f39334e5a5f0045ull, 0x4c414e5245544e49ull, 0x303030303030305full,
0x626f72705f395f30ull, 0x33635f75635f7365ull, 0x6e32666437343864ull, 0x7465677261743676ull, 0x396c696174656436ull, 0x69625f30385f6d73ull,
0x39334e5a5f004574ull, 0x414e5245544e495full, 0x3030303030305f4cull, 0x6f72705f395f3030ull, 0x635f75635f736562ull, 0x3266643734386433ull,
0x656772617436766eull, 0x6c69617465643674ull, 0x625f36385f6d7339ull, 0x334e5a5f00457469ull, 0x4e5245544e495f39ull, 0x30303030305f4c41ull,
0x72705f395f303030ull, 0x5f75635f7365626full, 0x6664373438643363ull, 0x6772617436766e32ull, 0x6961746564367465ull, 0x5f37385f6d73396cull,
0x4e5a5f0045746962ull, 0x5245544e495f3933ull, 0x303030305f4c414eull, 0x705f395f30303030ull, 0x75635f7365626f72ull, 0x643734386433635full,
0x72617436766e3266ull, 0x6174656436746567ull, 0x39385f6d73396c69ull, 0x5a5f00457469625full, 0x45544e495f39334eull, 0x3030305f4c414e52ull,
0x5f395f3030303030ull, 0x635f7365626f7270ull, 0x3734386433635f75ull, 0x617436766e326664ull, 0x7465643674656772ull, 0x395f6d73396c6961ull,
0x5f00457469625f30ull, 0x544e495f39334e5aull, 0x30305f4c414e5245ull, 0x395f303030303030ull, 0x5f7365626f72705full, 0x34386433635f7563ull,
0x7436766e32666437ull, 0x6564367465677261ull, 0x6c6131316c696174ull, 0x6563697665645f6cull, 0x39334e5a5f004573ull, 0x414e5245544e495full,
0x3030303030305f4cull, 0x6f72705f395f3030ull, 0x635f75635f736562ull, 0x3266643734386433ull, 0x656772617436766eull, 0x736f685f73693774ull,
0x39334e5a5f004574ull, 0x414e5245544e495full, 0x3030303030305f4cull, 0x6f72705f395f3030ull, 0x635f75635f736562ull, 0x3266643734386433ull,
0x656772617436766eull, 0x7665645f73693974ull, 0x4e5a5f0045656369ull, 0x5245544e495f3933ull, 0x303030305f4c414eull, 0x705f395f30303030ull,
0x75635f7365626f72ull, 0x643734386433635full, 0x72617436766e3266ull, 0x796e613031746567ull, 0x457465677261745full, 0x495f39334e5a5f00ull,
0x5f4c414e5245544eull, 0x3030303030303030ull, 0x65626f72705f395full, 0x6433635f75635f73ull, 0x766e326664373438ull, 0x3974656772617436ull,
0x65677261745f6f6eull, 0x39334e5a5f004574ull, 0x414e5245544e495full, 0x3030303030305f4cull, 0x6f72705f395f3030ull, 0x635f75635f736562ull,
0x3266643734386433ull, 0x656772617436766eull, 0x4535335f6d733574ull, 0x495f39334e5a5f00ull, 0x5f4c414e5245544eull, 0x3030303030303030ull,
0x65626f72705f395full, 0x6433635f75635f73ull, 0x766e326664373438ull, 0x3574656772617436ull, 0x5f004537335f6d73ull, 0x544e495f39334e5aull,
0x30305f4c414e5245ull, 0x395f303030303030ull, 0x5f7365626f72705full, 0x34386433635f7563ull, 0x7436766e32666437ull, 0x6d73357465677261ull,
0x4e5a5f004530355full, 0x5245544e495f3933ull, 0x303030305f4c414eull, 0x705f395f30303030ull, 0x75635f7365626f72ull, 0x643734386433635full,
0x72617436766e3266ull, 0x355f6d7335746567ull, 0x39334e5a5f004532ull, 0x414e5245544e495full, 0x3030303030305f4cull, 0x6f72705f395f3030ull,
0x635f75635f736562ull, 0x3266643734386433ull, 0x656772617436766eull, 0x4533355f6d733574ull, 0x495f39334e5a5f00ull, 0x5f4c414e5245544eull,
0x3030303030303030ull, 0x65626f72705f395full, 0x6433635f75635f73ull, 0x766e326664373438ull, 0x3574656772617436ull, 0x5f004530365f6d73ull,
0x544e495f39334e5aull, 0x30305f4c414e5245ull, 0x395f303030303030ull, 0x5f7365626f72705full, 0x34386433635f7563ull, 0x7436766e32666437ull,
0x6d73357465677261ull, 0x4e5a5f004531365full, 0x5245544e495f3933ull, 0x303030305f4c414eull, 0x705f395f30303030ull, 0x75635f7365626f72ull,
0x643734386433635full, 0x72617436766e3266ull, 0x365f6d7335746567ull, 0x39334e5a5f004532ull, 0x414e5245544e495full, 0x3030303030305f4cull,
0x6f72705f395f3030ull, 0x635f75635f736562ull, 0x3266643734386433ull, 0x656772617436766eull, 0x4530375f6d733574ull, 0x495f39334e5a5f00ull,
0x5f4c414e5245544eull, 0x3030303030303030ull, 0x65626f72705f395full, 0x6433635f75635f73ull, 0x766e326664373438ull, 0x3574656772617436ull,
0x5f004532375f6d73ull, 0x544e495f39334e5aull, 0x30305f4c414e5245ull, 0x395f303030303030ull, 0x5f7365626f72705full, 0x34386433635f7563ull,
0x7436766e32666437ull, 0x6d73357465677261ull, 0x4e5a5f004535375full, 0x5245544e495f3933ull, 0x303030305f4c414eull, 0x705f395f30303030ull,
0x75635f7365626f72ull, 0x643734386433635full, 0x72617436766e3266ull, 0x385f6d7335746567ull, 0x39334e5a5f004530ull, 0x414e5245544e495full,
0x3030303030305f4cull, 0x6f72705f395f3030ull, 0x635f75635f736562ull, 0x3266643734386433ull, 0x656772617436766eull, 0x4536385f6d733574ull,
0x495f39334e5a5f00ull, 0x5f4c414e5245544eull, 0x3030303030303030ull, 0x65626f72705f395full, 0x6433635f75635f73ull, 0x766e326664373438ull,
0x3574656772617436ull, 0x5f004537385f6d73ull, 0x544e495f39334e5aull, 0x30305f4c414e5245ull, 0x395f303030303030ull, 0x5f7365626f72705full,
0x34386433635f7563ull, 0x7436766e32666437ull, 0x6d73357465677261ull, 0x4e5a5f004539385full, 0x5245544e495f3933ull, 0x303030305f4c414eull,
0x705f395f30303030ull, 0x75635f7365626f72ull, 0x643734386433635full, 0x72617436766e3266ull, 0x395f6d7335746567ull, 0x2e6c65722e004530ull,
0x5f63632e74786574ull, 0x6c6e6f5f30386d73ull, 0x6f632e766e2e0079ull, 0x2e30746e6174736eull, 0x5f30386d735f6363ull, 0x52535f00796c6e6full,
0x756265642e004745ull, 0x00656d6172665f67ull, 0x6265642e6c65722eull, 0x656d6172665f6775ull, 0x642e616c65722e00ull, 0x6172665f67756265ull,
0x000000000000656dull, 0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x000a00030000004dull, 0x0000000000000000ull,
0x0000000000000000ull, 0x000c00030000008eull, 0x0000000000000000ull, 0x0000000000000000ull, 0x000c000100000099ull, 0x0000000000000008ull,
0x0000000000001000ull, 0x000b0003000000a8ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x000b0001000000b8ull, 0x0000000000000008ull,
0x0000000000000008ull, 0x000b000100000101ull, 0x00000000000000e8ull, 0x0000000000000008ull, 0x000b00010000014aull, 0x0000000000000058ull,
0x0000000000000008ull, 0x000b000100000193ull, 0x00000000000000a0ull, 0x0000000000000008ull, 0x000b0001000001dcull, 0x0000000000000030ull,
0x0000000000000008ull, 0x000b000100000225ull, 0x0000000000000118ull, 0x0000000000000008ull, 0x000b00010000026eull, 0x0000000000000088ull,
0x0000000000000008ull, 0x000b0001000002b7ull, 0x00000000000000d0ull, 0x0000000000000008ull, 0x000b000100000300ull, 0x0000000000000018ull,
0x0000000000000008ull, 0x000b000100000349ull, 0x00000000000000f8ull, 0x0000000000000008ull, 0x000b000100000392ull, 0x0000000000000068ull,
0x0000000000000008ull, 0x000b0001000003dbull, 0x00000000000000b0ull, 0x0000000000000008ull, 0x000b000100000424ull, 0x0000000000000040ull,
0x0000000000000008ull, 0x000b00010000046dull, 0x0000000000000108ull, 0x0000000000000008ull, 0x000b0001000004b6ull, 0x0000000000000078ull,
0x0000000000000008ull, 0x000b0001000004ffull, 0x00000000000000c0ull, 0x0000000000000008ull, 0x000b000100000548ull, 0x0000000000000010ull,
0x0000000000000008ull, 0x000b000100000591ull, 0x00000000000000f0ull, 0x0000000000000008ull, 0x000b0001000005ddull, 0x0000000000000060ull,
0x0000000000000008ull, 0x000b00010000061dull, 0x00000000000000a8ull, 0x0000000000000008ull, 0x000b00010000065full, 0x0000000000000038ull,
0x0000000000000008ull, 0x000c0001000006a3ull, 0x0000000000000000ull, 0x0000000000000008ull, 0x000b0001000006e5ull, 0x0000000000000120ull,
0x0000000000000008ull, 0x000b000100000723ull, 0x0000000000000090ull, 0x0000000000000008ull, 0x000b000100000761ull, 0x00000000000000d8ull,
0x0000000000000008ull, 0x000b00010000079full, 0x0000000000000020ull, 0x0000000000000008ull, 0x000b0001000007ddull, 0x0000000000000100ull,
0x0000000000000008ull, 0x000b00010000081bull, 0x0000000000000070ull, 0x0000000000000008ull, 0x000b000100000859ull, 0x00000000000000b8ull,
0x0000000000000008ull, 0x000b000100000897ull, 0x0000000000000048ull, 0x0000000000000008ull, 0x000b0001000008d5ull, 0x0000000000000110ull,
0x0000000000000008ull, 0x000b000100000913ull, 0x0000000000000080ull, 0x0000000000000008ull, 0x000b000100000951ull, 0x00000000000000c8ull,
0x0000000000000008ull, 0x000b00010000098full, 0x0000000000000000ull, 0x0000000000000008ull, 0x000b0001000009cdull, 0x00000000000000e0ull,
0x0000000000000008ull, 0x000b000100000a0bull, 0x0000000000000050ull, 0x0000000000000008ull, 0x000b000100000a49ull, 0x0000000000000098ull,
0x0000000000000008ull, 0x000b000100000a87ull, 0x0000000000000028ull, 0x0000000000000008ull, 0x0009000300000adcull, 0x0000000000000000ull,
0x0000000000000000ull, 0x0004000300000afdull, 0x0000000000000000ull, 0x0000000000000000ull, 0x000a101200000040ull, 0x0000000000000000ull,
0x0000000000000180ull, 0x00000024ffffffffull, 0xffffffff00000000ull, 0x7c040003ffffffffull, 0x80810c0fffffffffull, 0x288081ff08002880ull,
0x0000002880808108ull, 0x00000034ffffffffull, 0x0000000000000000ull, 0x0000000000000000ull, 0x0000018000000000ull, 0x0000040400000000ull,
0x810c000000100400ull, 0x00001c0400288080ull, 0x0000000000000000ull, 0x0000002d00082f04ull, 0x0008230400000008ull, 0x000000000000002dull,
0x0000002d00081204ull, 0x0008110400000000ull, 0x000000000000002dull, 0x0000007800043704ull, 0x00ff1b0300003501ull, 0x0000004000081c04ull,
0x00000000000000c0ull, 0x0000000000000070ull, 0x0000000300000039ull, 0x0000000000000050ull, 0x0000000300000038ull, 0x0000000000000044ull,
0x0000002d00000002ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x00000a00ff017624ull,
0x000fc400078e00ffull, 0x00000000000479c3ull, 0x000e220000002500ull, 0x0000000000007919ull, 0x000e240000002100ull, 0x0000000400ff7c12ull,
0x001fda000f80fcffull, 0x000000000000094dull, 0x000fea0003800000ull, 0x0000000000047882ull, 0x000fe20000000000ull, 0x00000007ff057435ull,
0x000fe200000001ffull, 0x0000000000057882ull, 0x000fe20000000000ull, 0x00000004ff027e24ull, 0x000fe2000f8e00ffull, 0x0000000500037c02ull,
0x000fe20008000f00ull, 0x0000460000047ab9ull, 0x000fc80000000a00ull, 0x0000000502007986ull, 0x000fe2000c101904ull, 0x000000000000794dull,
0x000fea0003800000ull, 0xfffffff000007947ull, 0x000fc0000383ffffull, 0x0000000000007918ull, 0x000fc00000000000ull, 0x0000000000007918ull,
0x000fc00000000000ull, 0x0000000000007918ull, 0x000fc00000000000ull, 0x0000000000007918ull, 0x000fc00000000000ull, 0x0000000000007918ull,
0x000fc00000000000ull, 0x0000000000007918ull, 0x000fc00000000000ull, 0x0000000000007918ull, 0x000fc00000000000ull, 0x0000000000007918ull,
0x000fc00000000000ull, 0x0000000000007918ull, 0x000fc00000000000ull, 0x0000000000007918ull, 0x000fc00000000000ull, 0x0000000000000050ull,
0x0000000000000001ull, 0x0000000000010000ull, 0x0000000000000100ull, 0x0000000000000034ull, 0x000000000000005aull, 0x0000000000000010ull,
0x000000000001ffffull, 0x0000000000001000ull, 0x000000000000003eull, 0x0000000000000057ull, 0x0000000000000004ull, 0x0000000000000001ull,
0x0000000000000400ull, 0x000000000000003cull, 0x0000000000004000ull, 0x0000000000000048ull, 0x0000000000000040ull, 0x0000000000000025ull,
0x0000000000000059ull, 0x0000000000000008ull, 0x000000000001fffeull, 0x0000000000000800ull, 0x000000000000003dull, 0x0000000000008000ull,
0x000000000000004bull, 0x0000000000000080ull, 0x0000000000000032ull, 0x0000000000000056ull, 0x0000000000000002ull, 0x000000000001fffeull,
0x0000000000000200ull, 0x0000000000000035ull, 0x0000000000002000ull, 0x0000000000000046ull, 0x0000000000000020ull, 0x0000000000000023ull,
0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000000ull,
0x0000000000000000ull, 0x0000000000000000ull, 0x0000000300000001ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000040ull,
0x00000000000000feull, 0x0000000000000000ull, 0x0000000000000001ull, 0x0000000000000000ull, 0x000000030000000bull, 0x0000000000000000ull,
0x0000000000000000ull, 0x000000000000013eull, 0x0000000000000b2dull, 0x0000000000000000ull, 0x0000000000000001ull, 0x0000000000000000ull,
0x0000000200000013ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000c70ull, 0x0000000000000450ull, 0x0000002d00000002ull,
0x0000000000000008ull, 0x0000000000000018ull, 0x00000001000000ceull, 0x0000000000000000ull, 0x0000000000000000ull, 0x00000000000010c0ull,
0x0000000000000070ull, 0x0000000000000000ull, 0x0000000000000001ull, 0x0000000000000000ull, 0x7000000000000037ull, 0x0000000000000000ull,
0x0000000000000000ull, 0x0000000000001130ull, 0x0000000000000030ull, 0x0000000000000005ull, 0x0000000000000004ull, 0x0000000000000000ull,
0x7000000000000053ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000001160ull, 0x000000000000001cull, 0x0000000a00000005ull,
0x0000000000000004ull, 0x0000000000000000ull, 0x000000090000009cull, 0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000001180ull,
0x0000000000000020ull, 0x0000000a00000005ull, 0x0000000000000008ull, 0x0000000000000010ull, 0x00000009000000dbull, 0x0000000000000000ull,
0x0000000000000000ull, 0x00000000000011a0ull, 0x0000000000000010ull, 0x0000000400000005ull, 0x0000000000000008ull, 0x0000000000000010ull,
0x00000001000000b3ull, 0x0000000000000002ull, 0x0000000000000000ull, 0x00000000000011b0ull, 0x0000000000000160ull, 0x0000000a00000000ull,
0x0000000000000004ull, 0x0000000000000000ull, 0x0000000100000040ull, 0x0000000000000006ull, 0x0000000000000000ull, 0x0000000000001380ull,
0x0000000000000180ull, 0x0800002d00000005ull, 0x0000000000000080ull, 0x0000000000000000ull, 0x000000010000008cull, 0x0000000000000003ull,
0x0000000000000000ull, 0x0000000000001500ull, 0x0000000000000128ull, 0x0000000000000000ull, 0x0000000000000008ull, 0x0000000000000000ull,
0x0000000800000081ull, 0x0000000000000003ull, 0x0000000000000000ull, 0x0000000000001628ull, 0x0000000000001008ull, 0x0000000000000000ull,
0x0000000000000008ull, 0x0000000000000000ull, 0x0000000500000006ull, 0x0000000000001968ull, 0x0000000000000000ull, 0x0000000000000000ull,
0x00000000000000e0ull, 0x00000000000000e0ull, 0x0000000000000008ull, 0x0000000500000001ull, 0x00000000000011b0ull, 0x0000000000000000ull,
0x0000000000000000ull, 0x0000000000000350ull, 0x0000000000000350ull, 0x0000000000000008ull, 0x0000000600000001ull, 0x0000000000001500ull,
0x0000000000000000ull, 0x0000000000000000ull, 0x0000000000000128ull, 0x0000000000001130ull, 0x0000000000000008ull, 0x0000000500000001ull,
0x0000000000001968ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x00000000000000e0ull, 0x00000000000000e0ull, 0x0000000000000008ull,
};
constexpr size_t CC_SM80_ONLY_IMAGE_BYTES = 6816;
static const unsigned long long cc_ptx_only_image[] __attribute__((aligned(8))) = {
0x00100001ba55ed50ull, 0x0000000000001060ull, 0x0000005801010001ull, 0x0000000000001008ull, 0x0000004800000000ull, 0x0000005000080000ull,
0x0000000600000040ull, 0x0000000000000011ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x00007365626f7270ull, 0x0000000000000050ull,
0x0000000000000000ull, 0x2f0a2f2f0a2f2f0aull, 0x0a2f2f0a2f2f0a2full, 0x7265762e0a0a2f2full, 0x302e38206e6f6973ull, 0x7465677261742e0aull,
0x2e0a30385f6d7320ull, 0x5f73736572646461ull, 0x0a343620657a6973ull, 0x6f6c672e0a2f2f0aull, 0x696c612e206c6162ull, 0x38622e2034206e67ull,
0x5f7874705f636320ull, 0x345b6c6f626d7973ull, 0x672e0a3b5d363930ull, 0x612e206c61626f6cull, 0x2e2038206e67696cull, 0x334e5a5f20343675ull,
0x4e5245544e495f39ull, 0x30303030305f4c41ull, 0x72705f395f303030ull, 0x5f75635f7365626full, 0x3335653232356431ull, 0x6772617436766e32ull,
0x6961746564367465ull, 0x6f685f6c6c61396cull, 0x31203d2045737473ull, 0x61626f6c672e0a3bull, 0x6e67696c612e206cull, 0x203436752e203820ull,
0x4e495f39334e5a5full, 0x305f4c414e524554ull, 0x5f30303030303030ull, 0x7365626f72705f39ull, 0x323564315f75635full, 0x36766e3233356532ull,
0x6436746567726174ull, 0x6d73396c69617465ull, 0x457469625f35335full, 0x672e0a3b32203d20ull, 0x612e206c61626f6cull, 0x2e2038206e67696cull,
0x334e5a5f20343675ull, 0x4e5245544e495f39ull, 0x30303030305f4c41ull, 0x72705f395f303030ull, 0x5f75635f7365626full, 0x3335653232356431ull,
0x6772617436766e32ull, 0x6961746564367465ull, 0x5f37335f6d73396cull, 0x34203d2045746962ull, 0x61626f6c672e0a3bull, 0x6e67696c612e206cull,
0x203436752e203820ull, 0x4e495f39334e5a5full, 0x305f4c414e524554ull, 0x5f30303030303030ull, 0x7365626f72705f39ull, 0x323564315f75635full,
0x36766e3233356532ull, 0x6436746567726174ull, 0x6d73396c69617465ull, 0x457469625f30355full, 0x672e0a3b38203d20ull, 0x612e206c61626f6cull,
0x2e2038206e67696cull, 0x334e5a5f20343675ull, 0x4e5245544e495f39ull, 0x30303030305f4c41ull, 0x72705f395f303030ull, 0x5f75635f7365626full,
0x3335653232356431ull, 0x6772617436766e32ull, 0x6961746564367465ull, 0x5f32355f6d73396cull, 0x31203d2045746962ull, 0x626f6c672e0a3b36ull,
0x67696c612e206c61ull, 0x3436752e2038206eull, 0x495f39334e5a5f20ull, 0x5f4c414e5245544eull, 0x3030303030303030ull, 0x65626f72705f395full,
0x3564315f75635f73ull, 0x766e323335653232ull, 0x3674656772617436ull, 0x73396c6961746564ull, 0x7469625f33355f6dull, 0x0a3b3233203d2045ull,
0x206c61626f6c672eull, 0x38206e67696c612eull, 0x5a5f203436752e20ull, 0x45544e495f39334eull, 0x3030305f4c414e52ull, 0x5f395f3030303030ull,
0x635f7365626f7270ull, 0x6532323564315f75ull, 0x617436766e323335ull, 0x7465643674656772ull, 0x365f6d73396c6961ull, 0x3d20457469625f30ull,
0x6c672e0a3b343620ull, 0x6c612e206c61626full, 0x752e2038206e6769ull, 0x39334e5a5f203436ull, 0x414e5245544e495full, 0x3030303030305f4cull,
0x6f72705f395f3030ull, 0x315f75635f736562ull, 0x3233356532323564ull, 0x656772617436766eull, 0x6c69617465643674ull, 0x625f31365f6d7339ull,
0x3231203d20457469ull, 0x626f6c672e0a3b38ull, 0x67696c612e206c61ull, 0x3436752e2038206eull, 0x495f39334e5a5f20ull, 0x5f4c414e5245544eull,
0x3030303030303030ull, 0x65626f72705f395full, 0x3564315f75635f73ull, 0x766e323335653232ull, 0x3674656772617436ull, 0x73396c6961746564ull,
0x7469625f32365f6dull, 0x3b363532203d2045ull, 0x6c61626f6c672e0aull, 0x206e67696c612e20ull, 0x5f203436752e2038ull, 0x544e495f39334e5aull,
0x30305f4c414e5245ull, 0x395f303030303030ull, 0x5f7365626f72705full, 0x32323564315f7563ull, 0x7436766e32333565ull, 0x6564367465677261ull,
0x5f6d73396c696174ull, 0x20457469625f3037ull, 0x2e0a3b323135203dull, 0x2e206c61626f6c67ull, 0x2038206e67696c61ull, 0x4e5a5f203436752eull,
0x5245544e495f3933ull, 0x303030305f4c414eull, 0x705f395f30303030ull, 0x75635f7365626f72ull, 0x356532323564315full, 0x72617436766e3233ull,
0x6174656436746567ull, 0x32375f6d73396c69ull, 0x203d20457469625full, 0x672e0a3b34323031ull, 0x612e206c61626f6cull, 0x2e2038206e67696cull,
0x334e5a5f20343675ull, 0x4e5245544e495f39ull, 0x30303030305f4c41ull, 0x72705f395f303030ull, 0x5f75635f7365626full, 0x3335653232356431ull,
0x6772617436766e32ull, 0x6961746564367465ull, 0x5f35375f6d73396cull, 0x32203d2045746962ull, 0x6c672e0a3b383430ull, 0x6c612e206c61626full,
0x752e2038206e6769ull, 0x39334e5a5f203436ull, 0x414e5245544e495full, 0x3030303030305f4cull, 0x6f72705f395f3030ull, 0x315f75635f736562ull,
0x3233356532323564ull, 0x656772617436766eull, 0x6c69617465643674ull, 0x625f30385f6d7339ull, 0x3034203d20457469ull, 0x6f6c672e0a3b3639ull,
0x696c612e206c6162ull, 0x36752e2038206e67ull, 0x5f39334e5a5f2034ull, 0x4c414e5245544e49ull, 0x303030303030305full, 0x626f72705f395f30ull,
0x64315f75635f7365ull, 0x6e32333565323235ull, 0x7465677261743676ull, 0x396c696174656436ull, 0x69625f36385f6d73ull, 0x393138203d204574ull,
0x626f6c672e0a3b32ull, 0x67696c612e206c61ull, 0x3436752e2038206eull, 0x495f39334e5a5f20ull, 0x5f4c414e5245544eull, 0x3030303030303030ull,
0x65626f72705f395full, 0x3564315f75635f73ull, 0x766e323335653232ull, 0x3674656772617436ull, 0x73396c6961746564ull, 0x7469625f37385f6dull,
0x38333631203d2045ull, 0x626f6c672e0a3b34ull, 0x67696c612e206c61ull, 0x3436752e2038206eull, 0x495f39334e5a5f20ull, 0x5f4c414e5245544eull,
0x3030303030303030ull, 0x65626f72705f395full, 0x3564315f75635f73ull, 0x766e323335653232ull, 0x3674656772617436ull, 0x73396c6961746564ull,
0x7469625f39385f6dull, 0x36373233203d2045ull, 0x626f6c672e0a3b38ull, 0x67696c612e206c61ull, 0x3436752e2038206eull, 0x495f39334e5a5f20ull,
0x5f4c414e5245544eull, 0x3030303030303030ull, 0x65626f72705f395full, 0x3564315f75635f73ull, 0x766e323335653232ull, 0x3674656772617436ull,
0x73396c6961746564ull, 0x7469625f30395f6dull, 0x33353536203d2045ull, 0x626f6c672e0a3b36ull, 0x67696c612e206c61ull, 0x3436752e2038206eull,
0x495f39334e5a5f20ull, 0x5f4c414e5245544eull, 0x3030303030303030ull, 0x65626f72705f395full, 0x3564315f75635f73ull, 0x766e323335653232ull,
0x3674656772617436ull, 0x31316c6961746564ull, 0x697665645f6c6c61ull, 0x31203d2045736563ull, 0x2e0a3b3037303133ull, 0x2e206c61626f6c67ull,
0x2038206e67696c61ull, 0x334e5a5f2038622eull, 0x4e5245544e495f39ull, 0x30303030305f4c41ull, 0x72705f395f303030ull, 0x5f75635f7365626full,
0x3335653232356431ull, 0x6772617436766e32ull, 0x6f685f7369377465ull, 0x3d205d385b457473ull, 0x202c30202c317b20ull, 0x2c30202c30202c30ull,
0x30202c30202c3020ull, 0x626f6c672e0a3b7dull, 0x67696c612e206c61ull, 0x2038622e2038206eull, 0x4e495f39334e5a5full, 0x305f4c414e524554ull,
0x5f30303030303030ull, 0x7365626f72705f39ull, 0x323564315f75635full, 0x36766e3233356532ull, 0x6939746567726174ull, 0x6563697665645f73ull,
0x7b203d205d385b45ull, 0x353532202c343532ull, 0x202c30202c31202cull, 0x2c30202c30202c30ull, 0x6c672e0a3b7d3020ull, 0x6c612e206c61626full,
0x622e2038206e6769ull, 0x5f39334e5a5f2038ull, 0x4c414e5245544e49ull, 0x303030303030305full, 0x626f72705f395f30ull, 0x64315f75635f7365ull,
0x6e32333565323235ull, 0x7465677261743676ull, 0x61745f796e613031ull, 0x5d385b4574656772ull, 0x2c3535327b203d20ull, 0x2c31202c35353220ull,
0x30202c30202c3020ull, 0x3b7d30202c30202cull, 0x6c61626f6c672e0aull, 0x206e67696c612e20ull, 0x5a5f2038622e2038ull, 0x45544e495f39334eull,
0x3030305f4c414e52ull, 0x5f395f3030303030ull, 0x635f7365626f7270ull, 0x6532323564315f75ull, 0x617436766e323335ull, 0x5f6f6e3974656772ull,
0x5b45746567726174ull, 0x6f6c672e0a3b5d38ull, 0x696c612e206c6162ull, 0x36752e2038206e67ull, 0x5f39334e5a5f2034ull, 0x4c414e5245544e49ull,
0x303030303030305full, 0x626f72705f395f30ull, 0x64315f75635f7365ull, 0x6e32333565323235ull, 0x7465677261743676ull, 0x204535335f6d7335ull,
0x672e0a3b3533203dull, 0x612e206c61626f6cull, 0x2e2038206e67696cull, 0x334e5a5f20343675ull, 0x4e5245544e495f39ull, 0x30303030305f4c41ull,
0x72705f395f303030ull, 0x5f75635f7365626full, 0x3335653232356431ull, 0x6772617436766e32ull, 0x37335f6d73357465ull, 0x0a3b3733203d2045ull,
0x206c61626f6c672eull, 0x38206e67696c612eull, 0x5a5f203436752e20ull, 0x45544e495f39334eull, 0x3030305f4c414e52ull, 0x5f395f3030303030ull,
0x635f7365626f7270ull, 0x6532323564315f75ull, 0x617436766e323335ull, 0x5f6d733574656772ull, 0x3035203d20453035ull, 0x61626f6c672e0a3bull,
0x6e67696c612e206cull, 0x203436752e203820ull, 0x4e495f39334e5a5full, 0x305f4c414e524554ull, 0x5f30303030303030ull, 0x7365626f72705f39ull,
0x323564315f75635full, 0x36766e3233356532ull, 0x7335746567726174ull, 0x203d204532355f6dull, 0x6f6c672e0a3b3235ull, 0x696c612e206c6162ull,
0x36752e2038206e67ull, 0x5f39334e5a5f2034ull, 0x4c414e5245544e49ull, 0x303030303030305full, 0x626f72705f395f30ull, 0x64315f75635f7365ull,
0x6e32333565323235ull, 0x7465677261743676ull, 0x204533355f6d7335ull, 0x672e0a3b3335203dull, 0x612e206c61626f6cull, 0x2e2038206e67696cull,
0x334e5a5f20343675ull, 0x4e5245544e495f39ull, 0x30303030305f4c41ull, 0x72705f395f303030ull, 0x5f75635f7365626full, 0x3335653232356431ull,
0x6772617436766e32ull, 0x30365f6d73357465ull, 0x0a3b3036203d2045ull, 0x206c61626f6c672eull, 0x38206e67696c612eull, 0x5a5f203436752e20ull,
0x45544e495f39334eull, 0x3030305f4c414e52ull, 0x5f395f3030303030ull, 0x635f7365626f7270ull, 0x6532323564315f75ull, 0x617436766e323335ull,
0x5f6d733574656772ull, 0x3136203d20453136ull, 0x61626f6c672e0a3bull, 0x6e67696c612e206cull, 0x203436752e203820ull, 0x4e495f39334e5a5full,
0x305f4c414e524554ull, 0x5f30303030303030ull, 0x7365626f72705f39ull, 0x323564315f75635full, 0x36766e3233356532ull, 0x7335746567726174ull,
0x203d204532365f6dull, 0x6f6c672e0a3b3236ull, 0x696c612e206c6162ull, 0x36752e2038206e67ull, 0x5f39334e5a5f2034ull, 0x4c414e5245544e49ull,
0x303030303030305full, 0x626f72705f395f30ull, 0x64315f75635f7365ull, 0x6e32333565323235ull, 0x7465677261743676ull, 0x204530375f6d7335ull,
0x672e0a3b3037203dull, 0x612e206c61626f6cull, 0x2e2038206e67696cull, 0x334e5a5f20343675ull, 0x4e5245544e495f39ull, 0x30303030305f4c41ull,
0x72705f395f303030ull, 0x5f75635f7365626full, 0x3335653232356431ull, 0x6772617436766e32ull, 0x32375f6d73357465ull, 0x0a3b3237203d2045ull,
0x206c61626f6c672eull, 0x38206e67696c612eull, 0x5a5f203436752e20ull, 0x45544e495f39334eull, 0x3030305f4c414e52ull, 0x5f395f3030303030ull,
0x635f7365626f7270ull, 0x6532323564315f75ull, 0x617436766e323335ull, 0x5f6d733574656772ull, 0x3537203d20453537ull, 0x61626f6c672e0a3bull,
0x6e67696c612e206cull, 0x203436752e203820ull, 0x4e495f39334e5a5full, 0x305f4c414e524554ull, 0x5f30303030303030ull, 0x7365626f72705f39ull,
0x323564315f75635full, 0x36766e3233356532ull, 0x7335746567726174ull, 0x203d204530385f6dull, 0x6f6c672e0a3b3038ull, 0x696c612e206c6162ull,
0x36752e2038206e67ull, 0x5f39334e5a5f2034ull, 0x4c414e5245544e49ull, 0x303030303030305full, 0x626f72705f395f30ull, 0x64315f75635f7365ull,
0x6e32333565323235ull, 0x7465677261743676ull, 0x204536385f6d7335ull, 0x672e0a3b3638203dull, 0x612e206c61626f6cull, 0x2e2038206e67696cull,
0x334e5a5f20343675ull, 0x4e5245544e495f39ull, 0x30303030305f4c41ull, 0x72705f395f303030ull, 0x5f75635f7365626full, 0x3335653232356431ull,
0x6772617436766e32ull, 0x37385f6d73357465ull, 0x0a3b3738203d2045ull, 0x206c61626f6c672eull, 0x38206e67696c612eull, 0x5a5f203436752e20ull,
0x45544e495f39334eull, 0x3030305f4c414e52ull, 0x5f395f3030303030ull, 0x635f7365626f7270ull, 0x6532323564315f75ull, 0x617436766e323335ull,
0x5f6d733574656772ull, 0x3938203d20453938ull, 0x61626f6c672e0a3bull, 0x6e67696c612e206cull, 0x203436752e203820ull, 0x4e495f39334e5a5full,
0x305f4c414e524554ull, 0x5f30303030303030ull, 0x7365626f72705f39ull, 0x323564315f75635full, 0x36766e3233356532ull, 0x7335746567726174ull,
0x203d204530395f6dull, 0x69762e0a0a3b3039ull, 0x652e20656c626973ull, 0x5f6363207972746eull, 0x796c6e6f5f787470ull, 0x65722e0a7b0a2928ull,
0x20646572702e2067ull, 0x2e0a3b3e323c7025ull, 0x3233622e20676572ull, 0x0a3b3e353c722520ull, 0x33752e766f6d0a0aull, 0x25202c3172252032ull,
0x6d0a3b782e646974ull, 0x25203233752e766full, 0x61746325202c3272ull, 0x726f0a3b782e6469ull, 0x337225203233622eull, 0x25202c317225202cull,
0x707465730a3b3272ull, 0x203233732e656e2eull, 0x337225202c317025ull, 0x7025400a3b30202cull, 0x4c24206172622031ull, 0x3b325f3042425f5full,
0x33752e766f6d0a0aull, 0x37202c3472252032ull, 0x6f6c672e74730a3bull, 0x203233752e6c6162ull, 0x5f7874705f63635bull, 0x2c5d6c6f626d7973ull,
0x240a0a3b34722520ull, 0x325f3042425f5f4cull, 0x0a0a3b7465720a3aull, 0x00000000000a0a7dull,
};
constexpr size_t CC_PTX_ONLY_IMAGE_BYTES = 4208;
static const unsigned long long cc_bad_ptx_image[] __attribute__((aligned(8))) = {
0x00100001ba55ed50ull, 0x00000000000000d0ull, 0x0000005801010001ull, 0x0000000000000078ull, 0x0000004800000000ull, 0x0000005000080000ull,
0x0000000600000040ull, 0x0000000000000011ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x00007365626f7270ull, 0x0000000000000050ull,
0x0000000000000000ull, 0x2f0a2f2f0a2f2f0aull, 0x65762e0a2f2f0a2full, 0x2e38206e6f697372ull, 0x65677261742e0a30ull, 0x0a30385f6d732074ull,
0x737365726464612eull, 0x343620657a69735full, 0x62697369762e0a0aull, 0x72746e652e20656cull, 0x6461625f63632079ull, 0x7b0a29287874705full,
0x686375732e6f6e0aull, 0x63757274736e692eull, 0x65720a3b6e6f6974ull, 0x0000000a7d0a3b74ull,
};
constexpr size_t CC_BAD_PTX_IMAGE_BYTES = 224;
static const unsigned long long cc_future_ptx_image[] __attribute__((aligned(8))) = {
0x00100001ba55ed50ull, 0x00000000000000c0ull, 0x0000005801010001ull, 0x0000000000000068ull, 0x0000004800000000ull, 0x0000005000630000ull,
0x0000000600000040ull, 0x0000000000000011ull, 0x0000000000000000ull, 0x0000000000000000ull, 0x00007365626f7270ull, 0x0000000000000050ull,
0x0000000000000000ull, 0x2f0a2f2f0a2f2f0aull, 0x69737265762e0a2full, 0x0a302e3939206e6full, 0x207465677261742eull, 0x612e0a30385f6d73ull,
0x735f737365726464ull, 0x0a0a343620657a69ull, 0x656c62697369762eull, 0x207972746e652e20ull, 0x72757475665f6363ull, 0x0a29287874705f65ull,
0x7d0a3b7465720a7bull, 0x000000000000000aull,
};
constexpr size_t CC_FUTURE_PTX_IMAGE_BYTES = 208;

extern "C" void** CUDARTAPI __cudaRegisterFatBinary(void* fatCubin);
extern "C" void CUDARTAPI __cudaRegisterFatBinaryEnd(void** fatCubinHandle);
extern "C" void CUDARTAPI __cudaUnregisterFatBinary(void** fatCubinHandle);
extern "C" void CUDARTAPI __cudaRegisterFunction(void** fatCubinHandle, const char* hostFun, char* deviceFun,
                                                 const char* deviceName, int thread_limit, uint3* tid, uint3* bid,
                                                 dim3* bDim, dim3* gDim, int* wSize);
extern "C" void CUDARTAPI __cudaRegisterVar(void** fatCubinHandle, char* hostVar, char* deviceAddress,
                                            const char* deviceName, int ext, size_t size, int constant, int global);

// The host handles: any distinct host addresses (what cudaLaunchKernel and the symbol calls take).
static char cc_sm80_only[1];
static char cc_ptx_only[1];
static char cc_bad_ptx[1];
static char cc_future_ptx[1];
static unsigned int cc_sm80_symbol[1024];
static unsigned int cc_ptx_symbol[1024];

namespace cc_other_images {
// The wrapper nvcc emits around a fat binary (__fatBinC_Wrapper_t): magic, version 1, the image, no file name.
struct Wrapper {
    int magic;
    int version;
    const unsigned long long* data;
    void* filename_or_fatbins;
};
alignas(8) static const Wrapper sm80_wrapper = {0x466243b1, 1, cc_sm80_only_image, nullptr};
alignas(8) static const Wrapper ptx_wrapper = {0x466243b1, 1, cc_ptx_only_image, nullptr};
alignas(8) static const Wrapper bad_ptx_wrapper = {0x466243b1, 1, cc_bad_ptx_image, nullptr};
alignas(8) static const Wrapper future_ptx_wrapper = {0x466243b1, 1, cc_future_ptx_image, nullptr};
static void** modules[4] = {nullptr, nullptr, nullptr, nullptr};

inline void** register_module(const Wrapper* wrapper, char* kernel, const char* name, unsigned int* shadow,
                              const char* symbol) {
    void** handle = __cudaRegisterFatBinary((void*)wrapper);
    __cudaRegisterFunction(handle, kernel, (char*)name, name, -1, nullptr, nullptr, nullptr, nullptr, nullptr);
    if (symbol != nullptr) {
        __cudaRegisterVar(handle, (char*)shadow, (char*)symbol, symbol, 0, 1024 * sizeof(unsigned int), 0, 0);
    }
    __cudaRegisterFatBinaryEnd(handle);
    return handle;
}

inline void unregister_modules() {
    for (int i = 3; i >= 0; i--) {
        if (modules[i] != nullptr) __cudaUnregisterFatBinary(modules[i]);
    }
}

// Before main, as nvcc's stubs register the probes.
__attribute__((constructor)) static void register_modules() {
    if (CC_SM80_ONLY_IMAGE_BYTES > 0) {
        modules[0] = register_module(&sm80_wrapper, cc_sm80_only, "cc_sm80_only", cc_sm80_symbol, "cc_sm80_symbol");
    }
    if (CC_PTX_ONLY_IMAGE_BYTES > 0) {
        modules[1] = register_module(&ptx_wrapper, cc_ptx_only, "cc_ptx_only", cc_ptx_symbol, "cc_ptx_symbol");
    }
    if (CC_BAD_PTX_IMAGE_BYTES > 0) {
        modules[2] = register_module(&bad_ptx_wrapper, cc_bad_ptx, "cc_bad_ptx", nullptr, nullptr);
    }
    if (CC_FUTURE_PTX_IMAGE_BYTES > 0) {
        modules[3] = register_module(&future_ptx_wrapper, cc_future_ptx, "cc_future_ptx", nullptr, nullptr);
    }
    atexit(unregister_modules);
}
}  // namespace cc_other_images

// ---------------------------------------------------------------------------------------------------------------

namespace cc {

// The watchdog deadline the Rust executor uses by default (ExecOptions::case_deadline).
constexpr uint64_t DEFAULT_DEADLINE_MS = 20000;
// How long a gate kernel spins before it gives up (ExecOptions::gate_timeout_ns).
constexpr uint64_t GATE_TIMEOUT_NS = 10000000000;
// Threads of the single block every data kernel runs (harness::device::kernels::DATA_BLOCK_THREADS).
constexpr unsigned DATA_BLOCK_THREADS = 256;
// Every byte of a declared buffer when the script starts (harness::case::ast::INITIAL_BYTE).
constexpr int INITIAL_BYTE = 0xCD;

// ---- Time: nanoseconds since the case started, one monotonic host clock.

inline std::chrono::steady_clock::time_point& case_start() {
    static std::chrono::steady_clock::time_point t = std::chrono::steady_clock::now();
    return t;
}
inline uint64_t now_ns() {
    return (uint64_t)std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() -
                                                                          case_start())
        .count();
}

// ---- JSON

inline std::string json(const std::string& s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\t': out += "\\t"; break;
            case '\r': out += "\\r"; break;
            default:
                if (c < 0x20) {
                    char buf[8];
                    snprintf(buf, sizeof buf, "\\u%04x", c);
                    out += buf;
                } else {
                    out += (char)c;
                }
        }
    }
    return out + "\"";
}
inline std::string json(const char* s) { return s == nullptr ? "null" : json(std::string(s)); }
inline std::string json(const std::optional<std::string>& s) { return s ? json(*s) : "null"; }
inline std::string json(uint64_t v) { return std::to_string(v); }
inline std::string json(const std::optional<uint64_t>& v) { return v ? std::to_string(*v) : "null"; }
inline std::string json_f64(double v) {
    char buf[40];
    snprintf(buf, sizeof buf, "%.17g", v);
    std::string s = buf;
    if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
    return s;
}
inline std::string json_list(const std::vector<std::string>& items) {
    std::string out = "[";
    for (size_t i = 0; i < items.size(); i++) out += (i ? "," : "") + items[i];
    return out + "]";
}
inline std::string json_strings(const std::vector<std::string>& items) {
    std::vector<std::string> quoted;
    for (auto& s : items) quoted.push_back(json(s));
    return json_list(quoted);
}

// ---- Names of what CUDA returns, in the report's words.

// "cudaErrorInvalidValue", as the Rust executor names a code.
inline std::string code_name(cudaError_t e) {
    const char* n = cudaGetErrorName(e);
    if (n != nullptr && strncmp(n, "cuda", 4) == 0) return n;
    return "cudaError(" + std::to_string((int)e) + ")";
}
inline std::string unknown(long long v) { return "unknown(" + std::to_string(v) + ")"; }
inline std::string capture_status_name(cudaStreamCaptureStatus s) {
    switch (s) {
        case cudaStreamCaptureStatusNone: return "none";
        case cudaStreamCaptureStatusActive: return "active";
        case cudaStreamCaptureStatusInvalidated: return "invalidated";
    }
    return unknown((long long)s);
}
inline std::string capture_mode_name(cudaStreamCaptureMode m) {
    switch (m) {
        case cudaStreamCaptureModeGlobal: return "global";
        case cudaStreamCaptureModeThreadLocal: return "thread-local";
        case cudaStreamCaptureModeRelaxed: return "relaxed";
    }
    return unknown((long long)m);
}
inline std::string memory_type_name(cudaMemoryType t) {
    switch (t) {
        case cudaMemoryTypeUnregistered: return "unregistered";
        case cudaMemoryTypeHost: return "host";
        case cudaMemoryTypeDevice: return "device";
        case cudaMemoryTypeManaged: return "managed";
    }
    return unknown((long long)t);
}
inline std::string node_type_name(cudaGraphNodeType t) {
    switch (t) {
        case cudaGraphNodeTypeKernel: return "kernel";
        case cudaGraphNodeTypeMemcpy: return "memcpy";
        case cudaGraphNodeTypeMemset: return "memset";
        case cudaGraphNodeTypeHost: return "host";
        case cudaGraphNodeTypeGraph: return "graph";
        case cudaGraphNodeTypeEmpty: return "empty";
        case cudaGraphNodeTypeWaitEvent: return "wait-event";
        case cudaGraphNodeTypeEventRecord: return "event-record";
        case cudaGraphNodeTypeExtSemaphoreSignal: return "ext-semaphore-signal";
        case cudaGraphNodeTypeExtSemaphoreWait: return "ext-semaphore-wait";
        case cudaGraphNodeTypeMemAlloc: return "mem-alloc";
        case cudaGraphNodeTypeMemFree: return "mem-free";
        case cudaGraphNodeTypeConditional: return "conditional";
        default: break;
    }
    return unknown((long long)t);
}
inline std::string instantiate_result_name(cudaGraphInstantiateResult r) {
    switch ((unsigned)r) {
        case cudaGraphInstantiateSuccess: return "success";
        case cudaGraphInstantiateError: return "error";
        case cudaGraphInstantiateInvalidStructure: return "invalid-structure";
        case cudaGraphInstantiateNodeOperationNotSupported: return "node-operation-not-supported";
        case cudaGraphInstantiateMultipleDevicesNotSupported: return "multiple-devices-not-supported";
        case cudaGraphInstantiateConditionalHandleUnused: return "conditional-handle-unused";
        default: break;
    }
    return unknown((long long)(unsigned)r);
}
inline std::string update_result_name(cudaGraphExecUpdateResult r) {
    switch ((unsigned)r) {
        case cudaGraphExecUpdateSuccess: return "success";
        case cudaGraphExecUpdateError: return "error";
        case cudaGraphExecUpdateErrorTopologyChanged: return "topology-changed";
        case cudaGraphExecUpdateErrorNodeTypeChanged: return "node-type-changed";
        case cudaGraphExecUpdateErrorFunctionChanged: return "function-changed";
        case cudaGraphExecUpdateErrorParametersChanged: return "parameters-changed";
        case cudaGraphExecUpdateErrorNotSupported: return "not-supported";
        case cudaGraphExecUpdateErrorUnsupportedFunctionChange: return "unsupported-function-change";
        case cudaGraphExecUpdateErrorAttributesChanged: return "attributes-changed";
        default: break;
    }
    return unknown((long long)(unsigned)r);
}

// ---- Buffer contents as the report summarises them (harness::record::observations::Contents::of).

inline std::string contents(const std::vector<uint32_t>& words, std::vector<uint64_t> probes = {}) {
    std::vector<std::string> runs;
    std::vector<uint64_t> starts, ends, values;
    for (size_t i = 0; i < words.size(); i++) {
        if (!values.empty() && values.back() == words[i]) {
            ends.back() = i + 1;
        } else {
            starts.push_back(i);
            ends.push_back(i + 1);
            values.push_back(words[i]);
        }
    }
    std::string out = "{\"words\":" + std::to_string(words.size());
    out += ",\"uniform\":" + (values.size() == 1 ? std::to_string(values[0]) : std::string("null"));
    std::vector<std::string> first;
    for (size_t i = 0; i < words.size() && i < 64; i++) first.push_back(std::to_string(words[i]));
    out += ",\"first_words\":" + json_list(first);
    std::sort(probes.begin(), probes.end());
    probes.erase(std::unique(probes.begin(), probes.end()), probes.end());
    std::vector<std::string> kept;
    for (uint64_t p : probes) {
        if (p < words.size()) {
            kept.push_back("{\"index\":" + std::to_string(p) + ",\"value\":" + std::to_string(words[p]) + "}");
        }
    }
    out += ",\"probes\":" + json_list(kept);
    std::string summary = std::to_string(words.size()) + " words";
    if (values.size() == 1) {
        char hex[32];
        snprintf(hex, sizeof hex, "%#llx", (unsigned long long)values[0]);
        if (values[0] == 0) snprintf(hex, sizeof hex, "0x0");
        summary += ", all " + std::to_string(values[0]) + " (" + hex + ")";
    } else if (values.size() > 1) {
        summary += " in " + std::to_string(values.size()) + " runs:";
        for (size_t r = 0; r < values.size() && r < 8; r++) {
            summary += " [" + std::to_string(starts[r]) + ".." + std::to_string(ends[r]) + ") = " +
                       std::to_string(values[r]) + ",";
        }
        summary.pop_back();
        if (values.size() > 8) summary += " (+" + std::to_string(values.size() - 8) + " more runs)";
    }
    out += ",\"summary\":" + json(summary);
    if (values.size() <= 64) {
        std::vector<std::string> rs;
        for (size_t r = 0; r < values.size(); r++) {
            rs.push_back("[" + std::to_string(starts[r]) + "," + std::to_string(ends[r]) + "," +
                         std::to_string(values[r]) + "]");
        }
        out += ",\"runs\":" + json_list(rs);
    } else {
        out += ",\"runs\":null";
    }
    return out + "}";
}

// Reads n words of host memory that the GPU may be writing (volatile: what the host sees at this moment).
inline std::vector<uint32_t> read_host(const void* p, size_t words) {
    std::vector<uint32_t> out(words);
    const volatile uint32_t* v = (const volatile uint32_t*)p;
    for (size_t i = 0; i < words; i++) out[i] = v[i];
    return out;
}

// ---- Runs a bookkeeping CUDA call without changing the thread's last error (see the Rust executor's `quietly`).

template <class F>
cudaError_t quietly(F call) {
    cudaError_t before = cudaPeekAtLastError();
    cudaError_t code = call();
    if (code != cudaSuccess && before == cudaSuccess) cudaGetLastError();
    return code;
}

// ---- Objects, by the state of their declared name.

enum State { READY, NOT_CREATED, DESTROYED, EMPTY, LATER };

struct Slot {
    const char* what;
    std::string name;
    State state = READY;
    std::string code;  // the failed creation's code
    cudaError_t error = cudaSuccess;  // the creation's code
    Slot(const char* w, const char* n, State s) : what(w), name(n), state(s) {}
    bool ready() const { return state == READY; }
    // Why the object cannot be used (the Rust executor's words).
    std::string why() const {
        switch (state) {
            case READY: return "";
            case NOT_CREATED: return std::string(what) + " " + name + " was not created (" + code + ")";
            case DESTROYED: return std::string(what) + " " + name + " was destroyed earlier in the script";
            case EMPTY: return std::string(what) + " " + name + " holds nothing";
            case LATER:
                return std::string(what) + " " + name + " is declared `later` and the script has not created it";
        }
        return "";
    }
    // A creation's code: READY on success, else NOT_CREATED with the code.
    cudaError_t created(cudaError_t e) {
        error = e;
        state = e == cudaSuccess ? READY : NOT_CREATED;
        code = code_name(e);
        return e;
    }
    // `create NAME` and `malloc-async` fill a slot declared `later` or destroyed.
    bool creatable() const { return state == LATER || state == DESTROYED; }
};

struct Stream : Slot {
    cudaStream_t h = nullptr;
    explicit Stream(const char* n, State s = READY) : Slot("stream", n, s) {}
};
struct Event : Slot {
    cudaEvent_t h = nullptr;
    explicit Event(const char* n, State s = READY) : Slot("event", n, s) {}
};
// A graph slot (or the body of a conditional node filled into it); an empty slot passes CUDA a null handle.
struct Graph : Slot {
    cudaGraph_t h = nullptr;
    cudaGraph_t body = nullptr;  // owned by its conditional node
    std::vector<cudaGraph_t> retired;
    explicit Graph(const char* n) : Slot("graph", n, EMPTY) {}
    bool usable() const { return body != nullptr || state == READY || state == EMPTY; }
    cudaGraph_t handle() const { return body != nullptr ? body : (state == READY ? h : nullptr); }
    // Puts `g` (or nothing) in the slot, keeping what it held until cleanup.
    void set(cudaGraph_t g) {
        if (state == READY && h != nullptr) retired.push_back(h);
        h = g;
        state = g != nullptr ? READY : EMPTY;
    }
};
struct Exec : Slot {
    cudaGraphExec_t h = nullptr;
    std::vector<cudaGraphExec_t> retired;
    explicit Exec(const char* n) : Slot("exec", n, EMPTY) {}
    bool usable() const { return state == READY || state == EMPTY; }
    cudaGraphExec_t handle() const { return state == READY ? h : nullptr; }
    void set(cudaGraphExec_t e) {
        if (state == READY && h != nullptr) retired.push_back(h);
        h = e;
        state = e != nullptr ? READY : EMPTY;
    }
};
struct Pool : Slot {
    cudaMemPool_t h = nullptr;
    bool is_default = false;
    explicit Pool(const char* n) : Slot("pool", n, READY) {}
};
struct Condition {
    std::string name;
    bool created = false;
    cudaGraphConditionalHandle h = 0;
    explicit Condition(const char* n) : name(n) {}
    std::string why() const { return "condition " + name + " was not created"; }
};

enum Storage { DEVICE, PINNED, MAPPED, PAGEABLE, VIEW, MANAGED };

struct Buffer : Slot {
    const char* kind;  // as declared: device, pinned, pageable, mapped
    uint64_t bytes;
    Storage storage;
    void* copy = nullptr;        // what cudaMemcpy gets (host memory by its host pointer)
    uint32_t* kernel = nullptr;  // what kernels get (a mapped buffer's device alias); null for pageable memory
    bool graph_memory = false;   // a graph's memory-allocation node owns the address
    bool graph_freed = false;    // a captured free-async freed it: usable by name, allocatable again
    bool registered = false;     // cudaHostRegister'ed by the script
    int device = -1;             // the ordinal it was made on (several-device cases)
    Buffer(const char* n, const char* k, uint64_t b, Storage s, State st = READY)
        : Slot("buffer", n, st), kind(k), bytes(b), storage(s) {}
    uint64_t words() const { return bytes / 4; }
    void* memset_ptr() const { return kernel != nullptr ? (void*)kernel : copy; }
    // Host-visible memory (a snapshot reads it on the host); null for device memory.
    const void* host() const {
        bool host_kind = strcmp(kind, "device") != 0;
        return host_kind ? copy : nullptr;
    }
    bool allocatable() const { return creatable() || graph_freed; }
    // Memory from cudaMallocAsync or a memory-allocation node.
    void set_async(void* p) {
        graph_freed = false;
        state = READY;
        storage = DEVICE;
        copy = p;
        kernel = (uint32_t*)p;
    }
};

// A view of bytes [offset, offset + size) of `parent`: no CUDA call.
inline void make_slice(Buffer& slice, const Buffer& parent, uint64_t offset) {
    if (!parent.ready()) {
        slice.state = NOT_CREATED;
        slice.code = parent.why();
        return;
    }
    slice.copy = (char*)parent.copy + offset;
    slice.kernel = parent.kernel != nullptr ? (uint32_t*)((char*)parent.kernel + offset) : nullptr;
    slice.device = parent.device;
}

// ---- Which script operation made which graph node (the Rust executor's NodeMap).

struct Nodes {
    std::map<std::pair<unsigned long long, cudaGraphNode_t>, int> origins;
    std::map<int, cudaGraphNode_t> by_op;
    std::map<cudaGraphNode_t, int> by_handle;

    // After operation `op` succeeded on a capturing stream: the one node the stream now depends on is the op's.
    void learn(cudaStream_t s, int op) {
        cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
        unsigned long long id = 0;
        const cudaGraphNode_t* deps = nullptr;
        const cudaGraphEdgeData* edges = nullptr;
        size_t count = 0;
        cudaError_t code =
            quietly([&] { return cudaStreamGetCaptureInfo(s, &status, &id, nullptr, &deps, &edges, &count); });
        if (code != cudaSuccess || status != cudaStreamCaptureStatusActive || deps == nullptr || count != 1) return;
        origins[{id, deps[0]}] = op;
        by_op[op] = deps[0];
        by_handle[deps[0]] = op;
    }
    void added(int op, cudaGraphNode_t n) {
        by_op[op] = n;
        by_handle[n] = op;
    }
    void forget(int op) {
        auto it = by_op.find(op);
        if (it == by_op.end()) return;
        by_handle.erase(it->second);
        by_op.erase(it);
    }
    std::optional<int> op_of(std::optional<unsigned long long> capture, cudaGraphNode_t n) const {
        if (capture) {
            auto it = origins.find({*capture, n});
            if (it != origins.end()) return it->second;
            return std::nullopt;
        }
        auto it = by_handle.find(n);
        if (it != by_handle.end()) return it->second;
        return std::nullopt;
    }
};

// The capture id of `s` if it is capturing now (asked quietly).
inline std::optional<unsigned long long> capture_id(cudaStream_t s) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    unsigned long long id = 0;
    const cudaGraphNode_t* deps = nullptr;
    const cudaGraphEdgeData* edges = nullptr;
    size_t count = 0;
    cudaError_t code =
        quietly([&] { return cudaStreamGetCaptureInfo(s, &status, &id, nullptr, &deps, &edges, &count); });
    if (code == cudaSuccess && status == cudaStreamCaptureStatusActive) return id;
    return std::nullopt;
}

// ---- Gates: a flag word and a timed-out word in mapped pinned host memory, opened by the host.

enum Opener { SCRIPT = 0, SCHEDULED = 1, WATCHDOG = 2, CLEANUP = 3 };
inline const char* opener_name(int by) {
    switch (by) {
        case SCRIPT: return "script";
        case SCHEDULED: return "scheduled";
        case WATCHDOG: return "watchdog";
        default: return "cleanup";
    }
}

struct Gate {
    std::string name;
    uint32_t* host = nullptr;    // [flag, timed_out]
    uint32_t* device = nullptr;  // the device alias kernels poll
    std::atomic<uint64_t> opened{UINT64_MAX};
    std::atomic<int> by{0};
    explicit Gate(const char* n) : name(n) {}
    bool created() const { return host != nullptr; }
    uint32_t* flag() const { return device; }
    uint32_t* timed_out() const { return device != nullptr ? device + 1 : nullptr; }
    // Only the first open is recorded; its time is taken before the store.
    void open(Opener who) {
        uint64_t t = now_ns();
        uint64_t never = UINT64_MAX;
        if (opened.compare_exchange_strong(never, t)) by.store(who);
        if (host != nullptr) __atomic_store_n(&host[0], 1u, __ATOMIC_SEQ_CST);
    }
};

// The gate keeper: performs `open G after D`, and at the case deadline opens every gate (the watchdog).
struct Keeper {
    std::vector<Gate*> gates;
    std::mutex m;
    std::condition_variable cv;
    std::vector<std::pair<std::chrono::steady_clock::time_point, Gate*>> due;
    bool finished = false;
    std::optional<uint64_t> fired;
    std::thread thread;

    void start(std::chrono::steady_clock::time_point deadline) {
        thread = std::thread([this, deadline] {
            std::unique_lock<std::mutex> lock(m);
            while (true) {
                auto now = std::chrono::steady_clock::now();
                for (auto it = due.begin(); it != due.end();) {
                    if (it->first <= now) {
                        it->second->open(SCHEDULED);
                        it = due.erase(it);
                    } else {
                        ++it;
                    }
                }
                if (!fired && now >= deadline) {
                    fired = now_ns();
                    for (Gate* g : gates) g->open(WATCHDOG);
                }
                if (finished) return;
                auto wake = fired ? std::chrono::steady_clock::time_point::max() : deadline;
                for (auto& d : due) wake = std::min(wake, d.first);
                if (wake == std::chrono::steady_clock::time_point::max()) {
                    cv.wait(lock);
                } else {
                    cv.wait_until(lock, wake);
                }
            }
        });
    }
    void open_at(Gate& g, std::chrono::steady_clock::time_point at) {
        std::lock_guard<std::mutex> lock(m);
        due.push_back({at, &g});
        cv.notify_all();
    }
    // Stops the keeper: scheduled opens not yet due are dropped (every gate is opened by the caller).
    void finish() {
        {
            std::lock_guard<std::mutex> lock(m);
            finished = true;
            cv.notify_all();
        }
        if (thread.joinable()) thread.join();
    }
};

// ---- Host functions and stream callbacks: they only read the clock, copy host memory and append to the log.

struct HostCall {
    int op_index;
    bool callback;
    const void* snapshot = nullptr;  // host-visible words to copy when it runs
    size_t snapshot_words = 0;
    const uint32_t* hold = nullptr;  // a gate's host flag: return only once it is non-zero
};
struct HostRecord {
    int op_index;
    bool callback;
    uint64_t at_ns;
    std::optional<cudaError_t> status;
    std::optional<std::vector<uint32_t>> snapshot;
};
inline std::mutex& host_log_mutex() {
    static std::mutex m;
    return m;
}
inline std::vector<HostRecord>& host_log() {
    static std::vector<HostRecord> log;
    return log;
}
inline void record_host_call(const HostCall* c, std::optional<cudaError_t> status) {
    HostRecord r{c->op_index, c->callback, now_ns(), status, std::nullopt};
    if (c->snapshot != nullptr) r.snapshot = read_host(c->snapshot, c->snapshot_words);
    std::lock_guard<std::mutex> lock(host_log_mutex());
    host_log().push_back(std::move(r));
}
// The cudaHostFn_t of every host-func operation and host node.
inline void CUDART_CB host_func(void* user_data) {
    const HostCall* c = (const HostCall*)user_data;
    record_host_call(c, std::nullopt);
    if (c->hold != nullptr) {
        while (__atomic_load_n(c->hold, __ATOMIC_SEQ_CST) == 0) {
            std::this_thread::sleep_for(std::chrono::microseconds(100));
        }
    }
}
// The cudaStreamCallback_t of every callback operation.
inline void CUDART_CB stream_callback(cudaStream_t, cudaError_t status, void* user_data) {
    record_host_call((const HostCall*)user_data, status);
}

// ---- Case threads: `thread T` runs the operations written `@T`, one at a time, while main waits for each.

struct CaseThread {
    std::string name;
    std::mutex m;
    std::condition_variable cv;
    std::deque<std::function<void()>> jobs;
    bool stopping = false;
    std::thread thread;
    explicit CaseThread(const char* n) : name(n) {
        thread = std::thread([this] {
            while (true) {
                std::function<void()> job;
                {
                    std::unique_lock<std::mutex> lock(m);
                    cv.wait(lock, [this] { return stopping || !jobs.empty(); });
                    if (jobs.empty()) return;
                    job = std::move(jobs.front());
                    jobs.pop_front();
                }
                job();
            }
        });
    }
    // Runs `job` on this thread and waits for it.
    void run(const std::function<void()>& job) {
        std::promise<void> done;
        auto finished = done.get_future();
        {
            std::lock_guard<std::mutex> lock(m);
            jobs.push_back([&] {
                job();
                done.set_value();
            });
        }
        cv.notify_all();
        finished.wait();
    }
    void stop() {
        {
            std::lock_guard<std::mutex> lock(m);
            stopping = true;
        }
        cv.notify_all();
        if (thread.joinable()) thread.join();
    }
};

// ---- What issue 20's operations hand to later ones: IPC handles and mappings by the label of the operation that
// got them (`#INDEX` for an unlabelled one), user objects, and `malloc-managed` memory (the executor's Handles).

// A 64-bit digest (FNV-1a) of a handle's bytes: what `same-address` and `other-address` compare for handles.
inline uint64_t digest(const void* p, size_t n) {
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) h = (h ^ ((const unsigned char*)p)[i]) * 0x100000001b3ull;
    return h;
}

// The destructor of every user object: sets the flag it was given (leaked on purpose: CUDA may call it after the
// case ends, from an internal thread).
inline void CUDART_CB set_destroyed(void* flag) { ((std::atomic<bool>*)flag)->store(true); }

// The probe callbacks a `callback` argument names (`callbackFunc=log-probe`), as the harness's
// `exec::probe_callbacks`: each adds 1 to the uint32_t its user data points to, when that is not NULL, and to a
// counter of its own. None makes a CUDA call or blocks.
inline std::atomic<unsigned> probe_runs[3];
inline void probe_count(int which, void* user) {
    probe_runs[which].fetch_add(1);
    if (user) __atomic_fetch_add((unsigned*)user, 1u, __ATOMIC_SEQ_CST);
}
inline void CUDART_CB log_probe(void* data, cudaLogLevel, char*, size_t) { probe_count(0, data); }
inline void CUDART_CB async_probe(cudaAsyncNotificationInfo_t*, void* user, cudaAsyncCallbackHandle_t) {
    probe_count(1, user);
}
inline void CUDART_CB host_probe(void* user) { probe_count(2, user); }

struct UserObject {
    cudaUserObject_t h = nullptr;
    unsigned owned = 0;  // the references the case still owns
    std::atomic<bool>* destroyed = nullptr;
};

inline std::string hex(const void* p, size_t n) {
    static const char digits[] = "0123456789abcdef";
    std::string out;
    for (size_t i = 0; i < n; i++) {
        unsigned char b = ((const unsigned char*)p)[i];
        out += digits[b >> 4];
        out += digits[b & 15];
    }
    return out;
}
inline void unhex(const std::string& s, void* p, size_t n) {
    auto v = [](char c) { return c <= '9' ? c - '0' : c - 'a' + 10; };
    memset(p, 0, n);
    for (size_t i = 0; i < n && 2 * i + 1 < s.size(); i++) ((unsigned char*)p)[i] = (unsigned char)(v(s[2 * i]) << 4 | v(s[2 * i + 1]));
}

// ---- The case's other processes (`process NAME`; `@NAME OP` runs OP there), as the executor's exec::peer: the
// program starts itself again (/proc/self/exe --peer NAME) after loading its kernels and before creating its
// objects; the peer creates every declared object of its own, says READY, and runs each of its operations when the
// main process sends it (with every IPC handle the main process holds, as 64 bytes in hex), answering the record
// and the handles it holds then. Both processes measure time from the same origin (steady_clock is the system's
// CLOCK_MONOTONIC; the peer is given the main process's start), so the peer's times need no shift.

// One line from `fd` (without its newline), waiting at most `ms`; false at a timeout or the end of the stream.
inline bool read_line(int fd, std::string& pending, std::string& line, uint64_t ms, std::string& why) {
    auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ms);
    for (;;) {
        size_t nl = pending.find('\n');
        if (nl != std::string::npos) {
            line = pending.substr(0, nl);
            pending.erase(0, nl + 1);
            return true;
        }
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            why = "no answer within " + std::to_string(ms) + " ms";
            return false;
        }
        pollfd p{fd, POLLIN, 0};
        int ready = poll(&p, 1, (int)std::min<long long>(left.count(), 1000));
        if (ready < 0 && errno != EINTR) {
            why = "the process ended";
            return false;
        }
        if (ready <= 0) continue;
        char buf[4096];
        ssize_t n = read(fd, buf, sizeof buf);
        if (n <= 0) {
            why = "the process ended";
            return false;
        }
        pending.append(buf, (size_t)n);
    }
}
inline bool write_all(int fd, const std::string& s) {
    size_t at = 0;
    while (at < s.size()) {
        ssize_t n = write(fd, s.data() + at, s.size() - at);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        at += (size_t)n;
    }
    return true;
}

struct PeerProcess {
    pid_t pid = -1;
    int to = -1, from = -1;  // requests to it, replies from it
    std::string pending;     // bytes read past the last line
    std::string broken;      // why it cannot be used any more
};

// ---- A case's `env:` values that name its device: `{uuid}` is the device's UUID (GPU-…, as nvidia-smi -L prints
// it) and `{uuid-prefix}` its first 12 characters (GPU- and 8 hex digits), as a worker fills them
// (runner::worker::with_uuid). The runner gives the UUID in CUDA_CONFORMANCE_UUID; run by hand, the program asks
// CUDA in a child process (this one must make no CUDA call before the case's CUDA_VISIBLE_DEVICES is set) for the
// UUID of the case's device 0 (the first of --devices, else ordinal 0) as the environment it was started with shows
// it, and passes it on in CUDA_CONFORMANCE_UUID to its own peers.

constexpr const char* UUID_ENV = "CUDA_CONFORMANCE_UUID";
// Set to 1 by the runner where the case's worker would make host waits block (see Run::block_host_waits).
constexpr const char* BLOCKING_WAITS_ENV = "CUDA_CONFORMANCE_BLOCKING_WAITS";

inline std::string uuid_text(const unsigned char* b) {
    char s[48];
    snprintf(s, sizeof s, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0], b[1], b[2],
             b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13], b[14], b[15]);
    return s;
}

// The UUID of `ordinal`, asked in a child process; empty when CUDA could not say.
inline std::string device_uuid_in_child(int ordinal) {
    int fds[2];
    if (pipe(fds) != 0) return "";
    fflush(nullptr);
    pid_t pid = fork();
    if (pid < 0) {
        close(fds[0]);
        close(fds[1]);
        return "";
    }
    if (pid == 0) {
        close(fds[0]);
        cudaDeviceProp prop;
        if (cudaGetDeviceProperties(&prop, ordinal) == cudaSuccess) {
            std::string uuid = uuid_text((const unsigned char*)prop.uuid.bytes);
            ssize_t written = write(fds[1], uuid.data(), uuid.size());
            (void)written;
        }
        _exit(0);
    }
    close(fds[1]);
    std::string uuid;
    char chunk[64];
    ssize_t n;
    while ((n = read(fds[0], chunk, sizeof chunk)) > 0 || (n < 0 && errno == EINTR)) {
        if (n > 0) uuid.append(chunk, (size_t)n);
    }
    close(fds[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return uuid;
}

// The case device's UUID: the runner's, or asked once (see above) and kept for this process and its peers.
inline std::string case_uuid(int argc, char** argv) {
    if (const char* given = getenv(UUID_ENV)) return given;
    int ordinal = 0;
    for (int i = 1; i + 1 < argc; i++) {
        if (strcmp(argv[i], "--devices") == 0) ordinal = atoi(argv[i + 1]);
    }
    std::string uuid = device_uuid_in_child(ordinal);
    if (uuid.empty()) fprintf(stderr, "%s: could not read the UUID of device %d for the case's env:\n", argv[0], ordinal);
    setenv(UUID_ENV, uuid.c_str(), 1);
    return uuid;
}

// Sets `name` to `value` with its `{uuid}` and `{uuid-prefix}` filled.
inline void setenv_with_uuid(int argc, char** argv, const char* name, const char* value) {
    std::string uuid = case_uuid(argc, argv);
    std::string filled = value;
    auto fill = [&](const std::string& word, const std::string& by) {
        for (size_t at = filled.find(word); at != std::string::npos; at = filled.find(word, at + by.size())) {
            filled.replace(at, word.size(), by);
        }
    };
    fill("{uuid-prefix}", uuid.substr(0, 12));
    fill("{uuid}", uuid);
    setenv(name, filled.c_str(), 1);
}

// ---- `{tmp}` in a text argument: a directory of this program's own (mkdtemp, mode 0700), removed at exit.

inline const std::string& private_dir() {
    static std::string dir = [] {
        const char* base = getenv("TMPDIR");
        std::string templ = std::string(base != nullptr && *base != 0 ? base : "/tmp") + "/cuda-conformance-XXXXXX";
        std::vector<char> buf(templ.begin(), templ.end());
        buf.push_back(0);
        if (mkdtemp(buf.data()) == nullptr) {
            fprintf(stderr, "mkdtemp %s: %s\n", templ.c_str(), strerror(errno));
            return std::string("/nonexistent-cuda-conformance-private-dir");
        }
        std::string made(buf.data());
        static std::string removed = made;
        atexit([] {
            std::error_code ignored;
            std::filesystem::remove_all(removed, ignored);
        });
        return made;
    }();
    return dir;
}

// `text` with every `{tmp}` replaced by private_dir(); the string lives as long as the program.
inline const char* tmp_path(const char* text) {
    static std::deque<std::string> kept;
    std::string filled = text;
    for (size_t at = filled.find("{tmp}"); at != std::string::npos; at = filled.find("{tmp}", at)) {
        filled.replace(at, 5, private_dir());
    }
    kept.push_back(filled);
    return kept.back().c_str();
}

// The file `path` ({tmp} replaced) holding `bytes` bytes of `image` (an image the header embeds), written now.
inline const char* image_file(const char* path, const unsigned long long* image, size_t bytes) {
    const char* filled = tmp_path(path);
    if (FILE* f = std::fopen(filled, "wb")) {
        std::fwrite(image, 1, bytes, f);
        std::fclose(f);
    }
    return filled;
}

// ---- One script operation as it ran (harness::record::observations::OpRecord).

struct OpInfo {
    unsigned line;
    const char* label;
    const char* thread;
    const char* text;
    std::vector<const char*> acceptable;
    unsigned repeat;
};

struct Op {
    int index;
    const OpInfo* info;
    std::optional<std::string> code;
    uint64_t start_ns = 0, end_ns = 0;
    std::optional<std::string> value;  // the OpValue, as JSON
    std::optional<std::string> not_run;

    // Makes the call (`repeat N`: N times back to back, stopping at a failure) and records its code and host
    // times; true if it returned cudaSuccess every time.
    template <class F>
    bool call(F f) {
        start_ns = now_ns();
        cudaError_t e = f();
        for (unsigned i = 1; i < info->repeat && e == cudaSuccess; i++) e = f();
        end_ns = now_ns();
        code = code_name(e);
        return e == cudaSuccess;
    }
    // A host-only operation (open, sleep): it cannot fail.
    template <class F>
    void host(F f) {
        start_ns = now_ns();
        f();
        end_ns = now_ns();
        code = "cudaSuccess";
    }
    bool ok() const { return code && *code == "cudaSuccess"; }
    // The operation cannot run: `why` is recorded instead of a code.
    void skip(const std::string& why) { not_run = why; }
    template <class S>
    bool need(const S& slot) {
        if (slot.ready()) return true;
        skip(slot.why());
        return false;
    }
    bool need_graph(const Graph& g) {
        if (g.usable()) return true;
        skip(g.why());
        return false;
    }
    bool need_exec(const Exec& e) {
        if (e.usable()) return true;
        skip(e.why());
        return false;
    }
    bool need_condition(const Condition& c) {
        if (c.created) return true;
        skip(c.why());
        return false;
    }
    bool need_gate(const Gate& g) {
        if (g.created()) return true;
        skip("gate " + g.name + " was not created");
        return false;
    }
};

// ---- The run: what the program observed, printed as one JSON line at the end.

struct GraphRecord {
    std::string name;
    size_t end_capture_op;
    std::string json;
};

struct Run {
    std::string case_id;
    std::vector<int> ordinals;  // the ordinal of each device of the case
    const std::vector<OpInfo>& ops;
    std::vector<std::string> decls;  // DeclRecord JSON
    std::vector<Op> records;
    std::vector<std::string> notes;
    std::vector<Gate*> gates;
    std::vector<Graph*> graphs;
    std::vector<Exec*> execs;
    std::vector<Stream*> streams;
    std::vector<Pool*> pools;
    cudaStream_t reader = nullptr;        // the stream `read` copies device buffers on
    std::vector<void*> allocations;       // `malloc` operations
    std::vector<std::pair<int, int>> peers_enabled;  // (current, peer) ordinals the script enabled
    // Captures the script began: the stream (a declared one, or a built-in handle) and the thread that began it.
    struct Begun {
        Stream* named;
        cudaStream_t builtin;
        const char* thread;
    };
    std::vector<Begun> captures;
    // Each thread's capture mode before its first exchange-capture-mode (`nullptr`: main), restored at the end.
    std::vector<std::pair<const char*, cudaStreamCaptureMode>> original_modes;
    std::map<std::string, CaseThread*> threads;
    Nodes nodes;
    Keeper keeper;
    std::vector<GraphRecord> graph_records;
    std::vector<std::unique_ptr<HostCall>> host_calls;
    uint64_t* stamps = nullptr;        // two u64 per kernel launch operation (what kernels get)
    uint64_t* stamps_host = nullptr;   // several devices: the host side of the mapped stamps
    std::vector<int> stamp_owners;     // the launch operation of each slot
    bool stamps_mapped = false;        // several devices: portable mapped host memory
    uint64_t deadline_ms = DEFAULT_DEADLINE_MS;
    std::optional<std::string> final_sync;
    int multiprocessors = 1;
    int priority_greatest = 0, priority_least = 0;
    // `timing: events`: the origin, the before/after events of each timed operation, and those recorded.
    cudaEvent_t timing_origin = nullptr;
    cudaStream_t timing_stream = nullptr;
    std::map<int, std::pair<cudaEvent_t, cudaEvent_t>> timing_pairs;
    std::vector<int> timed;
    // issue 20: IPC handles and mappings by label, user objects, `malloc-managed` memory (see above).
    std::map<std::string, cudaIpcMemHandle_t> ipc_mem;
    std::map<std::string, cudaIpcEventHandle_t> ipc_events;
    std::map<std::string, void*> ipc_opened;
    std::map<std::string, UserObject> user_objects;
    std::vector<void*> managed;
    // The case's other processes: in the main process, each one started; in a peer, its own name and pipes.
    std::vector<std::string> processes;
    std::map<std::string, PeerProcess> peers;
    std::optional<std::string> peer_name;
    int peer_in = -1, peer_out = -1;
    std::string peer_pending;
    std::string self;  // argv[0]
    // `open G after D` waits D times this (--gate-delay-scale, at most 1): the runner's shortened delays, which it
    // confirms at the written ones where a short delay may have decided the verdict. A person runs it as written.
    double gate_delay_scale = 1.0;

    Run(int argc, char** argv, const char* id, int device_count, const std::vector<OpInfo>& script)
        : case_id(id), ops(script), self(argv[0]) {
        case_start();
        for (int i = 1; i < argc; i++) {
            if (strcmp(argv[i], "--devices") == 0 && i + 1 < argc) {
                std::string list = argv[++i];
                size_t at = 0;
                while (at <= list.size()) {
                    size_t comma = list.find(',', at);
                    if (comma == std::string::npos) comma = list.size();
                    if (comma > at) ordinals.push_back(atoi(list.substr(at, comma - at).c_str()));
                    at = comma + 1;
                }
            } else if (strcmp(argv[i], "--peer") == 0 && i + 3 < argc) {
                // Started by the main process as its peer NAME (see start_peers): not a command for people.
                peer_name = argv[++i];
                sscanf(argv[++i], "%d,%d", &peer_in, &peer_out);
                case_start() = std::chrono::steady_clock::time_point(
                    std::chrono::steady_clock::duration(strtoll(argv[++i], nullptr, 10)));
            } else if (strcmp(argv[i], "--gate-delay-scale") == 0 && i + 1 < argc) {
                char* end = nullptr;
                gate_delay_scale = strtod(argv[++i], &end);
                if (end == argv[i] || *end != '\0' || !(gate_delay_scale > 0.0 && gate_delay_scale <= 1.0)) {
                    fprintf(stderr, "%s: --gate-delay-scale takes a number in (0, 1], not %s\n", argv[0], argv[i]);
                    exit(2);
                }
            } else {
                fprintf(stderr, "usage: %s [--devices 0,1,...] [--gate-delay-scale X]\n", argv[0]);
                exit(2);
            }
        }
        for (int i = (int)ordinals.size(); i < device_count; i++) ordinals.push_back(i);
        ordinals.resize(device_count);
        if (const char* ms = getenv("CUDA_CONFORMANCE_DEADLINE_MS")) deadline_ms = strtoull(ms, nullptr, 10);
        const char* block = getenv(BLOCKING_WAITS_ENV);
        if (block != nullptr && strcmp(block, "1") == 0) block_host_waits();
    }

    // CUDA_CONFORMANCE_BLOCKING_WAITS=1 (the runner sets it where the Rust executor's worker for the case would
    // block, its default `--host-waits block`): the host threads block while they wait for each device of the case
    // (cudaDeviceScheduleBlockingSync) instead of cudart's default (spin with fewer contexts than cores), set as the
    // worker sets it (runner::worker::block_host_waits), before the case's first CUDA call. Run by hand: the default.
    void block_host_waits() {
        for (int ordinal : ordinals) {
            cudaError_t e = cudaSetDevice(ordinal);
            if (e == cudaSuccess) e = cudaSetDeviceFlags(cudaDeviceScheduleBlockingSync);
            if (e != cudaSuccess) {
                notes.push_back("cannot make device " + std::to_string(ordinal) + "'s waits block (cudaSetDeviceFlags): " +
                                code_name(e));
            }
        }
        cudaGetLastError();
    }

    // The delay of a written `open G after D` (D in nanoseconds), as this run waits it.
    std::chrono::nanoseconds gate_delay(long long written_ns) const {
        return std::chrono::nanoseconds((long long)((double)written_ns * gate_delay_scale));
    }

    int device(unsigned index) const { return index < ordinals.size() ? ordinals[index] : ordinals[0]; }
    // `L: call ...` (issue 30): what each call wrote into its outputs, by "L.param"; `output` copies one into an
    // argument (zero-extended to its size), or records why the operation cannot run.
    std::map<std::string, std::vector<unsigned char>> call_outputs;
    bool output(const std::string& key, void* dst, size_t size, Op& op) {
        auto it = call_outputs.find(key);
        if (it == call_outputs.end()) {
            op.skip(key + " was not written (its call failed or did not run)");
            return false;
        }
        memset(dst, 0, size);
        memcpy(dst, it->second.data(), it->second.size() < size ? it->second.size() : size);
        return true;
    }
    // A text an earlier call wrote (kept with its NUL), as a later call's `const char *` argument.
    bool output_text(const std::string& key, const char** dst, Op& op) {
        auto it = call_outputs.find(key);
        if (it == call_outputs.end()) {
            op.skip(key + " was not written (its call failed or did not run)");
            return false;
        }
        if (it->second.empty() || it->second.back() != 0) it->second.push_back(0);
        *dst = (const char*)it->second.data();
        return true;
    }
    static int device_count() {
        int n = 0;
        cudaGetDeviceCount(&n);
        return n > 0 ? n : 0;
    }
    bool single() const { return ordinals.size() <= 1; }
    // Runs `f` with device `ordinal` current, then makes the previous one current again (several devices only).
    template <class F>
    auto on(int ordinal, F f) -> decltype(f()) {
        if (single()) return f();
        int previous = -1;
        bool known = cudaGetDevice(&previous) == cudaSuccess;
        if (!known || previous != ordinal) cudaSetDevice(ordinal);
        struct Restore {
            bool known;
            int previous, ordinal;
            ~Restore() {
                if (known && previous != ordinal) cudaSetDevice(previous);
            }
        } restore{known, previous, ordinal};
        return f();
    }

    void decl(const char* name, const char* kind, unsigned line, std::optional<cudaError_t> code,
              std::vector<std::string> acceptable = {"cudaSuccess"}) {
        decls.push_back("{\"name\":" + json(name) + ",\"kind\":" + json(kind) + ",\"line\":" + std::to_string(line) +
                        ",\"code\":" + (code ? json(code_name(*code)) : "null") +
                        ",\"acceptable\":" + json_strings(acceptable) + "}");
    }

    uint64_t* stamp(int op_index) const {
        if (stamps == nullptr) return nullptr;
        for (size_t i = 0; i < stamp_owners.size(); i++) {
            if (stamp_owners[i] == op_index) return stamps + 2 * i;
        }
        return nullptr;
    }

    // After a failed final synchronize: waits until every callback CUDA accepted has been called (CUDA owes them,
    // with the error as their status, and the failed synchronize does not wait for them), or until the case
    // deadline, noting those that were not. As the Rust executor (HostLog::wait_for).
    void wait_for_owed_callbacks() {
        std::vector<int> owed;
        for (const Op& r : records) {
            bool callback = false;
            for (const auto& c : host_calls) callback = callback || (c->op_index == r.index && c->callback);
            if (callback && r.ok()) owed.push_back(r.index);
        }
        auto missing = [&] {
            std::vector<int> m;
            std::lock_guard<std::mutex> lock(host_log_mutex());
            for (int i : owed) {
                bool ran = false;
                for (const HostRecord& h : host_log()) ran = ran || h.op_index == i;
                if (!ran) m.push_back(i);
            }
            return m;
        };
        std::vector<int> left = missing();
        while (!left.empty() && now_ns() < deadline_ms * 1000000ull) {
            std::this_thread::sleep_for(std::chrono::microseconds(100));
            left = missing();
        }
        if (left.empty()) return;
        std::string ops;
        for (int i : left) ops += (ops.empty() ? "#" : ", #") + std::to_string(i);
        notes.push_back("after the device error, the callbacks of operations " + ops +
                        " had not run by the case deadline");
    }

    // Runs script operation `index` on its thread (main's, or the `@T` thread) and records it.
    void step(int index, const std::function<void(Op&)>& body) {
        Op op{index, &ops[index]};
        const char* t = ops[index].thread;
        if (peer_name) {
            // A peer runs only its own operations, when the main process sends them.
            if (t != nullptr && *peer_name == t) serve_op(op, body);
            return;
        }
        if (t != nullptr && std::find(processes.begin(), processes.end(), t) != processes.end()) {
            run_in_peer(op, t);
        } else if (t == nullptr) {
            body(op);
        } else if (threads.count(t) != 0) {
            threads[t]->run([&] { body(op); });
        } else {
            op.skip(std::string("thread ") + t + " is not running");
        }
        records.push_back(std::move(op));
    }

    // After an operation on a capturing stream: which node it made.
    void learn(const Op& op, cudaStream_t s) {
        if (!op.ok() || s == cudaStreamLegacy || s == nullptr) return;
        nodes.learn(s, op.index);
    }

    // The node operation `label_op` made, or why the executor cannot name one.
    bool node(Op& op, int label_op, const char* label, cudaGraphNode_t& out) {
        auto it = nodes.by_op.find(label_op);
        if (it == nodes.by_op.end()) {
            op.skip(std::string(label) + " made no node the executor knows");
            return false;
        }
        out = it->second;
        return true;
    }

    // The label of the operation that made `n` (null for a null node, `?` for one nobody names).
    std::string node_label(cudaGraphNode_t n) const {
        if (n == nullptr) return "null";
        auto op = nodes.op_of(std::nullopt, n);
        if (op && ops[*op].label != nullptr) return json(ops[*op].label);
        return json("?");
    }

    // `timing: events`: records the event before operation `index` on `s`, unless it is capturing.
    bool timing_before(int index, cudaStream_t s) {
        auto it = timing_pairs.find(index);
        if (it == timing_pairs.end()) return false;
        bool capturable = s != cudaStreamLegacy && s != nullptr;
        if (capturable && capture_id(s)) return false;
        return cudaEventRecord(it->second.first, s) == cudaSuccess;
    }
    void timing_after(int index, cudaStream_t s, bool bracketed) {
        if (!bracketed) return;
        if (cudaEventRecord(timing_pairs[index].second, s) == cudaSuccess) timed.push_back(index);
    }

    // The topology of graph `g`, as the report records it (nodes named by the operations that made them).
    void record_graph(const std::string& name, size_t op_index, cudaGraph_t g,
                      std::optional<unsigned long long> capture) {
        std::string nodes_json = "[]", edges_json = "[]", error = "null";
        if (g != nullptr) {
            size_t count = 0;
            cudaError_t code = quietly([&] { return cudaGraphGetNodes(g, nullptr, &count); });
            std::vector<cudaGraphNode_t> handles(count);
            if (code == cudaSuccess && count > 0) {
                code = quietly([&] { return cudaGraphGetNodes(g, handles.data(), &count); });
                handles.resize(count);
            }
            std::vector<std::string> items;
            size_t edge_count = 0;
            std::vector<cudaGraphNode_t> from, to;
            if (code != cudaSuccess) {
                error = json("cudaGraphGetNodes returned " + code_name(code));
            } else {
                for (size_t i = 0; i < handles.size(); i++) {
                    cudaGraphNodeType type = cudaGraphNodeTypeCount;
                    cudaError_t c = quietly([&] { return cudaGraphNodeGetType(handles[i], &type); });
                    std::string kind =
                        c == cudaSuccess ? node_type_name(type) : "cudaGraphNodeGetType returned " + code_name(c);
                    auto op = nodes.op_of(capture, handles[i]);
                    std::string label = op && ops[*op].label != nullptr ? json(ops[*op].label) : "null";
                    items.push_back("{\"index\":" + std::to_string(i) + ",\"kind\":" + json(kind) +
                                    ",\"op_index\":" + (op ? std::to_string(*op) : "null") + ",\"label\":" + label +
                                    "}");
                }
                if (!handles.empty()) {
                    code = quietly([&] { return cudaGraphGetEdges(g, nullptr, nullptr, nullptr, &edge_count); });
                    if (code != cudaSuccess) error = json("cudaGraphGetEdges returned " + code_name(code));
                }
            }
            std::vector<std::string> edges;
            if (error == "null" && edge_count > 0) {
                from.resize(edge_count);
                to.resize(edge_count);
                std::vector<cudaGraphEdgeData> data(edge_count);
                code = quietly([&] { return cudaGraphGetEdges(g, from.data(), to.data(), data.data(), &edge_count); });
                if (code != cudaSuccess) {
                    error = json("cudaGraphGetEdges returned " + code_name(code));
                } else {
                    for (size_t e = 0; e < edge_count; e++) {
                        auto a = std::find(handles.begin(), handles.end(), from[e]);
                        auto b = std::find(handles.begin(), handles.end(), to[e]);
                        if (a == handles.end() || b == handles.end()) {
                            error = json("cudaGraphGetEdges named a node that cudaGraphGetNodes did not list");
                            break;
                        }
                        edges.push_back("[" + std::to_string(a - handles.begin()) + "," +
                                        std::to_string(b - handles.begin()) + "]");
                    }
                }
            }
            if (error == "null") {
                nodes_json = json_list(items);
                edges_json = json_list(edges);
            }
        }
        std::string record = "{\"name\":" + json(name) + ",\"end_capture_op\":" + std::to_string(op_index) +
                             ",\"null\":" + (g == nullptr ? "true" : "false") + ",\"nodes\":" + nodes_json +
                             ",\"edges\":" + edges_json + ",\"error\":" + error + "}";
        graph_records.erase(std::remove_if(graph_records.begin(), graph_records.end(),
                                           [&](const GraphRecord& r) { return r.name == name; }),
                            graph_records.end());
        graph_records.push_back({name, op_index, record});
    }

    // The slot that owns graph `g`, if one does.
    Graph* graph_owner(cudaGraph_t g) {
        if (g == nullptr) return nullptr;
        for (Graph* slot : graphs) {
            if (slot->body == g) return slot;
        }
        for (Graph* slot : graphs) {
            if (slot->state == READY && slot->h == g) return slot;
        }
        return nullptr;
    }

    HostCall* host_call(int op_index, bool callback, const void* snapshot = nullptr, size_t words = 0,
                        const uint32_t* hold = nullptr) {
        host_calls.push_back(std::make_unique<HostCall>(HostCall{op_index, callback, snapshot, words, hold}));
        return host_calls.back().get();
    }

    // Runs `f` on case thread `t` (`nullptr`: here).
    void on_thread(const char* t, const std::function<void()>& f) {
        if (t == nullptr) {
            f();
        } else if (threads.count(t) != 0) {
            threads[t]->run(f);
        }
    }

    void begun(Stream* named, cudaStream_t builtin, const char* thread) {
        for (auto& b : captures) {
            if (b.named == named && b.builtin == builtin && (b.thread == thread || (b.thread && thread && strcmp(b.thread, thread) == 0))) return;
        }
        captures.push_back({named, builtin, thread});
    }

    void exchanged(const char* thread, cudaStreamCaptureMode previous) {
        for (auto& m : original_modes) {
            if (m.first == thread || (m.first && thread && strcmp(m.first, thread) == 0)) return;
        }
        original_modes.push_back({thread, previous});
    }

    // Ends every capture still open, on the thread that began it, and destroys its graph, so that the final
    // synchronize is not refused by a capturing stream. Streams that joined a capture through an event wait come
    // after (on main).
    void end_open_captures() {
        std::vector<Begun> list = captures;
        for (Stream* s : streams) {
            bool listed = false;
            for (auto& b : list) listed = listed || b.named == s;
            if (s->ready() && !listed) list.push_back({s, nullptr, nullptr});
        }
        for (auto& b : list) {
            on_thread(b.thread, [&] {
                if (b.named != nullptr && !b.named->ready()) return;
                cudaStream_t s = b.named != nullptr ? b.named->h : b.builtin;
                if (s == cudaStreamLegacy || s == nullptr) return;
                cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
                if (quietly([&] { return cudaStreamIsCapturing(s, &status); }) != cudaSuccess ||
                    status == cudaStreamCaptureStatusNone) {
                    return;
                }
                cudaGraph_t g = nullptr;
                cudaError_t ended = quietly([&] { return cudaStreamEndCapture(s, &g); });
                if (g != nullptr) cudaGraphDestroy(g);
                notes.push_back("the script left a capture on " + (b.named != nullptr ? b.named->name : std::string("a built-in stream")) +
                                " (" + capture_status_name(status) + "); the executor ended it: cudaStreamEndCapture returned " + code_name(ended));
            });
        }
    }

    void restore_capture_modes() {
        for (auto& m : original_modes) {
            on_thread(m.first, [&] {
                cudaStreamCaptureMode mode = m.second;
                quietly([&] { return cudaThreadExchangeStreamCaptureMode(&mode); });
            });
        }
    }

    // Every graph a slot still holds, then the bodies of conditional nodes, read again (name order).
    void record_live_graphs() {
        std::vector<Graph*> sorted = graphs;
        std::sort(sorted.begin(), sorted.end(), [](Graph* a, Graph* b) { return a->name < b->name; });
        for (Graph* g : sorted) {
            if (g->state == READY) record_graph(g->name, ops.size(), g->h, std::nullopt);
        }
        for (Graph* g : sorted) {
            if (g->body != nullptr) record_graph(g->name, ops.size(), g->body, std::nullopt);
        }
    }

    // ---- The case's other processes (see PeerProcess).

    bool is_peer() const { return peer_name.has_value(); }

    // Main process: starts one peer per `process` declaration and waits until each has made its objects. A peer
    // only learns the names.
    void start_peers(const std::vector<std::string>& names) {
        processes = names;
        if (peer_name) return;
        std::string devices;
        for (int o : ordinals) devices += (devices.empty() ? "" : ",") + std::to_string(o);
        for (const std::string& name : names) {
            int to[2], from[2];
            if (pipe(to) != 0 || pipe(from) != 0) {
                notes.push_back("process " + name + " did not start: cannot make pipes");
                continue;
            }
            std::string fds = std::to_string(to[0]) + "," + std::to_string(from[1]);
            std::string start = std::to_string(case_start().time_since_epoch().count());
            fflush(stdout);
            fflush(stderr);
            pid_t pid = fork();
            if (pid == 0) {
                // The child only replaces itself with this program again: no CUDA call before exec.
                close(to[1]);
                close(from[0]);
                execl("/proc/self/exe", self.c_str(), "--devices", devices.c_str(), "--peer", name.c_str(), fds.c_str(),
                      start.c_str(), (char*)nullptr);
                _exit(127);
            }
            close(to[0]);
            close(from[1]);
            if (pid < 0) {
                close(to[1]);
                close(from[0]);
                notes.push_back("process " + name + " did not start: cannot start: fork failed");
                continue;
            }
            PeerProcess p;
            p.pid = pid;
            p.to = to[1];
            p.from = from[0];
            fcntl(p.to, F_SETFD, FD_CLOEXEC);
            fcntl(p.from, F_SETFD, FD_CLOEXEC);
            std::string line, why;
            if (!read_line(p.from, p.pending, line, deadline_ms, why) || line != "READY") {
                if (why.empty()) why = "answered " + line;
                notes.push_back("process " + name + " did not start: " + why);
                kill(pid, SIGKILL);
                waitpid(pid, nullptr, 0);
                close(p.to);
                close(p.from);
                continue;
            }
            peers[name] = p;
        }
    }

    // Peer: its objects exist; the main process may send operations. Setup notes are the main process's.
    void peer_ready() {
        if (!peer_name) return;
        notes.clear();
        if (!write_all(peer_out, "READY\n")) exit(3);
    }

    std::string handles_wire() const {
        std::string out;
        for (auto& h : ipc_mem) out += "M " + h.first + " " + hex(&h.second, sizeof h.second) + "\n";
        for (auto& h : ipc_events) out += "E " + h.first + " " + hex(&h.second, sizeof h.second) + "\n";
        return out + "END\n";
    }
    // Adds one handle line of another process (a label names one operation of the case: ours wins).
    void merge_handle(const std::string& line) {
        size_t sp = line.find(' ', 2);
        if (line.size() < 3 || sp == std::string::npos) return;
        std::string label = line.substr(2, sp - 2), bytes = line.substr(sp + 1);
        if (line[0] == 'M' && ipc_mem.count(label) == 0) unhex(bytes, &ipc_mem[label], sizeof(cudaIpcMemHandle_t));
        if (line[0] == 'E' && ipc_events.count(label) == 0) unhex(bytes, &ipc_events[label], sizeof(cudaIpcEventHandle_t));
    }

    // Main process: runs `op` in process `name` with the handles this process holds; its record and the handles
    // the peer holds after it come back.
    void run_in_peer(Op& op, const std::string& name) {
        auto it = peers.find(name);
        if (it == peers.end()) {
            op.skip("process " + name + " is not running");
            return;
        }
        PeerProcess& p = it->second;
        if (!p.broken.empty()) {
            op.skip(p.broken);
            return;
        }
        auto fail = [&](const std::string& why) {
            kill(p.pid, SIGKILL);
            p.broken = why;
            op.skip(why);
        };
        if (!write_all(p.to, "OP " + std::to_string(op.index) + "\n" + handles_wire())) return fail("cannot send: the process ended");
        std::string line, why;
        for (;;) {
            if (!read_line(p.from, p.pending, line, deadline_ms, why)) return fail(why);
            if (line == "END") break;
            if (line.rfind("CODE ", 0) == 0) op.code = line.substr(5);
            if (line.rfind("TIMES ", 0) == 0) sscanf(line.c_str() + 6, "%llu %llu", (unsigned long long*)&op.start_ns, (unsigned long long*)&op.end_ns);
            if (line.rfind("VALUE ", 0) == 0) op.value = line.substr(6);
            if (line.rfind("NOTRUN ", 0) == 0) op.not_run = line.substr(7);
            if (line.rfind("M ", 0) == 0 || line.rfind("E ", 0) == 0) merge_handle(line);
        }
    }

    // Peer: waits for the main process to send operation `op`, runs it and answers.
    void serve_op(Op& op, const std::function<void(Op&)>& body) {
        std::string line, why;
        if (!read_line(peer_in, peer_pending, line, 86400000ull, why) || line != "OP " + std::to_string(op.index)) exit(3);
        while (read_line(peer_in, peer_pending, line, 86400000ull, why) && line != "END") merge_handle(line);
        body(op);
        std::string reply;
        if (op.code) reply += "CODE " + *op.code + "\n";
        reply += "TIMES " + std::to_string(op.start_ns) + " " + std::to_string(op.end_ns) + "\n";
        if (op.value) reply += "VALUE " + *op.value + "\n";
        if (op.not_run) reply += "NOTRUN " + *op.not_run + "\n";
        reply += handles_wire();
        if (!write_all(peer_out, reply)) exit(3);
    }

    // Peer: after its script, until the main process says FINISH (its gates are open by then).
    void peer_wait_finish() {
        if (!peer_name) return;
        std::string line, why;
        while (read_line(peer_in, peer_pending, line, 86400000ull, why) && line != "FINISH") {
        }
    }

    // Peer: its notes (prefixed `peer: `), after its final synchronize and release.
    void peer_finished(cudaError_t sync) {
        if (sync != cudaSuccess) notes.push_back("the peer's final cudaDeviceSynchronize returned " + code_name(sync));
        std::string reply;
        for (auto& n : notes) reply += "NOTE peer: " + n + "\n";
        write_all(peer_out, reply + "FINISHED\n");
    }

    // Main process: tells every peer to finish (open its gates, synchronize, release) and collects its notes.
    void finish_peers() {
        for (auto& entry : peers) {
            PeerProcess& p = entry.second;
            if (p.broken.empty()) {
                std::string line, why;
                if (!write_all(p.to, "FINISH\n")) why = "cannot send: the process ended";
                while (why.empty() && read_line(p.from, p.pending, line, deadline_ms, why) && line != "FINISHED") {
                    if (line.rfind("NOTE ", 0) == 0) notes.push_back(line.substr(5));
                }
                if (!why.empty()) notes.push_back("process " + entry.first + ": " + why);
            } else {
                kill(p.pid, SIGKILL);
            }
            close(p.to);
            close(p.from);
            waitpid(p.pid, nullptr, 0);
        }
        peers.clear();
    }

    // Releases what the run itself holds and the graphs, executables, peer access and `malloc` memory of the
    // script (the declared streams, events, buffers and pools are released in the .cu).
    void release() {
        for (auto& p : peers_enabled) on(p.first, [&] { return cudaDeviceDisablePeerAccess(p.second); });
        // IPC mappings close before any memory is freed; the case's user-object references go back.
        for (auto& m : ipc_opened) cudaIpcCloseMemHandle(m.second);
        ipc_opened.clear();
        for (auto& u : user_objects) {
            if (u.second.owned > 0) cudaUserObjectRelease(u.second.h, u.second.owned);
        }
        user_objects.clear();
        for (void* p : managed) cudaFree(p);
        managed.clear();
        for (Exec* e : execs) {
            if (e->state == READY) cudaGraphExecDestroy(e->h);
            for (auto r : e->retired) cudaGraphExecDestroy(r);
        }
        for (Graph* g : graphs) {
            if (g->state == READY) cudaGraphDestroy(g->h);
            for (auto r : g->retired) cudaGraphDestroy(r);
        }
        if (reader != nullptr) cudaStreamDestroy(reader);
        for (void* p : allocations) cudaFree(p);
        for (auto& pair : timing_pairs) {
            cudaEventDestroy(pair.second.first);
            cudaEventDestroy(pair.second.second);
        }
        if (timing_origin != nullptr) cudaEventDestroy(timing_origin);
        if (timing_stream != nullptr) cudaStreamDestroy(timing_stream);
        if (stamps != nullptr) {
            if (stamps_mapped) {
                cudaFreeHost(stamps_host);
            } else {
                cudaFree(stamps);
            }
        }
    }

    // The observations as one JSON line (harness::record::observations::Observations). Call before anything is
    // released: it reads the stamps, the gates' timed-out words and the timing events.
    std::string observations(const std::vector<std::string>& buffers) {
        std::vector<std::string> op_items;
        for (const Op& op : records) {
            const OpInfo& i = *op.info;
            std::vector<std::string> acceptable(i.acceptable.begin(), i.acceptable.end());
            op_items.push_back("{\"index\":" + std::to_string(op.index) + ",\"line\":" + std::to_string(i.line) +
                               ",\"label\":" + json(i.label) + ",\"thread\":" + json(i.thread) +
                               ",\"text\":" + json(i.text) + ",\"code\":" + json(op.code) +
                               ",\"acceptable\":" + json_strings(acceptable) +
                               ",\"start_ns\":" + std::to_string(op.start_ns) +
                               ",\"end_ns\":" + std::to_string(op.end_ns) +
                               ",\"value\":" + (op.value ? *op.value : "null") + ",\"not_run\":" + json(op.not_run) +
                               "}");
        }
        // Kernel stamps, relative to the earliest non-zero one.
        std::vector<uint64_t> raw(2 * stamp_owners.size(), 0);
        if (stamps != nullptr && !stamp_owners.empty()) {
            if (stamps_mapped) {
                raw = read_host64(stamps_host, raw.size());
            } else if (cudaMemcpy(raw.data(), stamps, raw.size() * 8, cudaMemcpyDeviceToHost) != cudaSuccess) {
                notes.push_back("reading the kernel stamps failed");
                std::fill(raw.begin(), raw.end(), 0);
            }
        }
        std::optional<uint64_t> origin;
        for (uint64_t t : raw) {
            if (t != 0 && (!origin || t < *origin)) origin = t;
        }
        std::vector<std::string> kernels;
        for (size_t i = 0; i < stamp_owners.size(); i++) {
            auto rel = [&](uint64_t t) { return t == 0 ? std::string("null") : std::to_string(t - *origin); };
            kernels.push_back("{\"op_index\":" + std::to_string(stamp_owners[i]) +
                              ",\"label\":" + json(ops[stamp_owners[i]].label) + ",\"entry_ns\":" + rel(raw[2 * i]) +
                              ",\"exit_ns\":" + rel(raw[2 * i + 1]) + "}");
        }
        std::vector<std::string> gate_items;
        for (Gate* g : gates) {
            uint64_t opened = g->opened.load();
            bool timed_out = g->host != nullptr && __atomic_load_n(&g->host[1], __ATOMIC_SEQ_CST) != 0;
            gate_items.push_back(
                "{\"name\":" + json(g->name) + ",\"opened_ns\":" +
                (opened == UINT64_MAX ? "null" : std::to_string(opened)) + ",\"opened_by\":" +
                (opened == UINT64_MAX ? "null" : json(opener_name(g->by.load()))) +
                ",\"timed_out\":" + (timed_out ? "true" : "false") + "}");
        }
        std::vector<std::string> calls;
        {
            std::lock_guard<std::mutex> lock(host_log_mutex());
            for (const HostRecord& r : host_log()) {
                calls.push_back("{\"op_index\":" + std::to_string(r.op_index) +
                                ",\"label\":" + json(ops[r.op_index].label) +
                                ",\"kind\":" + json(r.callback ? "callback" : "host-func") +
                                ",\"at_ns\":" + std::to_string(r.at_ns) +
                                ",\"status\":" + (r.status ? json(code_name(*r.status)) : "null") +
                                ",\"snapshot\":" + (r.snapshot ? contents(*r.snapshot) : "null") + "}");
            }
        }
        std::vector<std::string> timed_items;
        std::sort(timed.begin(), timed.end());
        timed.erase(std::unique(timed.begin(), timed.end()), timed.end());
        for (int index : timed) {
            float a = 0, b = 0;
            cudaError_t ca = cudaEventElapsedTime(&a, timing_origin, timing_pairs[index].first);
            cudaError_t cb = cudaEventElapsedTime(&b, timing_origin, timing_pairs[index].second);
            if (ca == cudaSuccess && cb == cudaSuccess) {
                timed_items.push_back("{\"op_index\":" + std::to_string(index) +
                                      ",\"label\":" + json(ops[index].label) + ",\"start_ms\":" + json_f64(a) +
                                      ",\"end_ms\":" + json_f64(b) + "}");
            } else {
                notes.push_back("timing: cudaEventElapsedTime for operation #" + std::to_string(index) +
                                " returned " + code_name(ca != cudaSuccess ? ca : cb));
            }
        }
        std::vector<std::string> graph_items;
        for (auto& r : graph_records) graph_items.push_back(r.json);
        std::vector<std::string> device_items;
        for (int o : ordinals) device_items.push_back(std::to_string(o));
        std::string out = "{\"case_id\":" + json(case_id) + ",\"decls\":" + json_list(decls) +
                          ",\"ops\":" + json_list(op_items) + ",\"kernels\":" + json_list(kernels) +
                          ",\"stamp_origin_ns\":" + json(origin) + ",\"gates\":" + json_list(gate_items) +
                          ",\"host_calls\":" + json_list(calls) + ",\"buffers\":" + json_list(buffers) +
                          ",\"graphs\":" + json_list(graph_items) + ",\"final_sync\":" + json(final_sync) +
                          ",\"devices\":" + json_list(device_items) + ",\"watchdog_fired_ns\":" +
                          json(keeper.fired) + ",\"notes\":" + json_strings(notes) +
                          ",\"wall_ns\":" + std::to_string(now_ns()) + ",\"timed\":" + json_list(timed_items) + "}";
        return out;
    }

    // Prints the observations as the last line of stdout.
    static void print(const std::string& observations) {
        fflush(stderr);
        printf("%s\n", observations.c_str());
        fflush(stdout);
    }

    static std::vector<uint64_t> read_host64(const uint64_t* p, size_t n) {
        std::vector<uint64_t> out(n);
        const volatile uint64_t* v = p;
        for (size_t i = 0; i < n; i++) out[i] = v[i];
        return out;
    }
};

// A buffer's final contents, as the report records it (`words`: read after the final synchronize).
inline std::string buffer_record(const Buffer& b, const char* kind, uint64_t bytes, const std::vector<uint64_t>& probes,
                                 cudaError_t read, const std::vector<uint32_t>& words, const std::string& not_ready) {
    std::string c = "null", err = "null";
    if (!not_ready.empty()) {
        err = json(not_ready);
    } else if (read != cudaSuccess) {
        err = json("reading it back returned " + code_name(read));
    } else {
        c = contents(words, probes);
    }
    return "{\"name\":" + json(b.name) + ",\"kind\":" + json(kind) + ",\"bytes\":" + std::to_string(bytes) +
           ",\"contents\":" + c + ",\"read_error\":" + err + "}";
}

}  // namespace cc

// ---- Vulkan, for the external-resource cases (`vk-memory`, `vk-semaphore`, `vk-write`, `vk-read`, `vk-counter`).
//
// The loader is opened at run time (dlopen("libvulkan.so.1"), as the Rust executor's ash::Entry::load does), so a
// reproducer links no Vulkan library: it builds where only the headers are (Debian's libvulkan-dev) and runs where
// the loader is unpacked beside the run (LD_LIBRARY_PATH; the loader reads VK_DRIVER_FILES / VK_ICD_FILENAMES
// itself). Only a program of a case that uses these words needs <vulkan/vulkan.h>; without it every program still
// compiles, and those operations are recorded as not run, saying why (the stub below).
#if __has_include(<vulkan/vulkan.h>)
#define VK_NO_PROTOTYPES
#include <vulkan/vulkan.h>
#include <dlfcn.h>

namespace cc {

// One instance and device on the Vulkan device whose UUID is the CUDA device's, and the objects made on it. `why`
// says why there is none.
struct VulkanSession {
    std::string why;
    void* lib = nullptr;
    VkInstance instance = VK_NULL_HANDLE;
    VkDevice device = VK_NULL_HANDLE;
    uint32_t memory_type = 0;
    struct Memory {
        VkDeviceMemory memory;
        unsigned char* map;
        uint64_t size;
    };
    std::map<std::string, Memory> memories;
    std::map<std::string, VkSemaphore> semaphores;
    PFN_vkGetInstanceProcAddr gipa = nullptr;
    PFN_vkGetDeviceProcAddr gdpa = nullptr;

    template <class F>
    F instance_fn(const char* name) { return (F)gipa(instance, name); }
    template <class F>
    F device_fn(const char* name) { return (F)gdpa(device, name); }

    static std::string result(const char* what, VkResult r) { return std::string(what) + ": VkResult " + std::to_string((int)r); }

    explicit VulkanSession(int cuda_device) {
        cudaDeviceProp prop{};
        if (cudaGetDeviceProperties(&prop, cuda_device) != cudaSuccess) {
            cudaGetLastError();
            why = "cudaGetDeviceProperties failed: no UUID to find the Vulkan device by";
            return;
        }
        lib = dlopen("libvulkan.so.1", RTLD_NOW | RTLD_LOCAL);
        if (lib == nullptr) {
            why = std::string("no Vulkan loader: ") + dlerror();
            return;
        }
        gipa = (PFN_vkGetInstanceProcAddr)dlsym(lib, "vkGetInstanceProcAddr");
        auto create_instance = gipa ? (PFN_vkCreateInstance)gipa(VK_NULL_HANDLE, "vkCreateInstance") : nullptr;
        if (create_instance == nullptr) {
            why = "the Vulkan loader has no vkGetInstanceProcAddr/vkCreateInstance";
            return;
        }
        VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
        app.apiVersion = VK_API_VERSION_1_2;
        VkInstanceCreateInfo ici{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
        ici.pApplicationInfo = &app;
        if (VkResult r = create_instance(&ici, nullptr, &instance); r != VK_SUCCESS) {
            why = result("vkCreateInstance", r);
            instance = VK_NULL_HANDLE;
            return;
        }
        auto enumerate = instance_fn<PFN_vkEnumeratePhysicalDevices>("vkEnumeratePhysicalDevices");
        auto props2 = instance_fn<PFN_vkGetPhysicalDeviceProperties2>("vkGetPhysicalDeviceProperties2");
        uint32_t n = 0;
        enumerate(instance, &n, nullptr);
        std::vector<VkPhysicalDevice> devices(n);
        enumerate(instance, &n, devices.data());
        VkPhysicalDevice physical = VK_NULL_HANDLE;
        for (VkPhysicalDevice pd : devices) {
            VkPhysicalDeviceIDProperties id{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_ID_PROPERTIES};
            VkPhysicalDeviceProperties2 p{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
            p.pNext = &id;
            props2(pd, &p);
            if (memcmp(id.deviceUUID, prop.uuid.bytes, VK_UUID_SIZE) == 0) physical = pd;
        }
        if (physical == VK_NULL_HANDLE) {
            why = "no Vulkan physical device has the UUID of the CUDA device";
            return;
        }
        VkPhysicalDeviceMemoryProperties mp{};
        instance_fn<PFN_vkGetPhysicalDeviceMemoryProperties>("vkGetPhysicalDeviceMemoryProperties")(physical, &mp);
        const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
        int pick = -1;
        for (VkMemoryPropertyFlags want : {host | VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, host}) {
            for (uint32_t i = 0; i < mp.memoryTypeCount && pick < 0; i++) {
                if ((mp.memoryTypes[i].propertyFlags & want) == want) pick = (int)i;
            }
        }
        if (pick < 0) {
            why = "the Vulkan device has no host-visible, host-coherent memory type";
            return;
        }
        memory_type = (uint32_t)pick;
        float priority = 1.0f;
        VkDeviceQueueCreateInfo q{VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO};
        q.queueFamilyIndex = 0;
        q.queueCount = 1;
        q.pQueuePriorities = &priority;
        const char* extensions[] = {VK_KHR_EXTERNAL_MEMORY_FD_EXTENSION_NAME, VK_KHR_EXTERNAL_SEMAPHORE_FD_EXTENSION_NAME};
        VkPhysicalDeviceVulkan12Features f12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
        f12.timelineSemaphore = VK_TRUE;
        VkDeviceCreateInfo dci{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
        dci.pNext = &f12;
        dci.queueCreateInfoCount = 1;
        dci.pQueueCreateInfos = &q;
        dci.enabledExtensionCount = 2;
        dci.ppEnabledExtensionNames = extensions;
        if (VkResult r = instance_fn<PFN_vkCreateDevice>("vkCreateDevice")(physical, &dci, nullptr, &device);
            r != VK_SUCCESS) {
            why = result("vkCreateDevice with the external fd extensions and timeline semaphores", r);
            device = VK_NULL_HANDLE;
            return;
        }
        gdpa = instance_fn<PFN_vkGetDeviceProcAddr>("vkGetDeviceProcAddr");
    }

    ~VulkanSession() {
        if (device != VK_NULL_HANDLE) {
            for (auto& [name, s] : semaphores) device_fn<PFN_vkDestroySemaphore>("vkDestroySemaphore")(device, s, nullptr);
            for (auto& [name, m] : memories) {
                device_fn<PFN_vkUnmapMemory>("vkUnmapMemory")(device, m.memory);
                device_fn<PFN_vkFreeMemory>("vkFreeMemory")(device, m.memory, nullptr);
            }
            device_fn<PFN_vkDestroyDevice>("vkDestroyDevice")(device, nullptr);
        }
        if (instance != VK_NULL_HANDLE) instance_fn<PFN_vkDestroyInstance>("vkDestroyInstance")(instance, nullptr);
    }

    bool ready() const { return why.empty(); }

    // `L: vk-memory BYTES`: exportable host-visible memory, mapped; an opaque FD of it into *fd.
    std::string memory(const std::string& name, uint64_t bytes, int* fd) {
        VkExportMemoryAllocateInfo ex{VK_STRUCTURE_TYPE_EXPORT_MEMORY_ALLOCATE_INFO};
        ex.handleTypes = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
        VkMemoryAllocateInfo ai{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
        ai.pNext = &ex;
        ai.allocationSize = bytes;
        ai.memoryTypeIndex = memory_type;
        VkDeviceMemory m = VK_NULL_HANDLE;
        if (VkResult r = device_fn<PFN_vkAllocateMemory>("vkAllocateMemory")(device, &ai, nullptr, &m); r != VK_SUCCESS)
            return result("vkAllocateMemory", r);
        void* map = nullptr;
        if (VkResult r = device_fn<PFN_vkMapMemory>("vkMapMemory")(device, m, 0, VK_WHOLE_SIZE, 0, &map); r != VK_SUCCESS) {
            device_fn<PFN_vkFreeMemory>("vkFreeMemory")(device, m, nullptr);
            return result("vkMapMemory", r);
        }
        memories[name] = Memory{m, (unsigned char*)map, bytes};
        VkMemoryGetFdInfoKHR gi{VK_STRUCTURE_TYPE_MEMORY_GET_FD_INFO_KHR};
        gi.memory = m;
        gi.handleType = VK_EXTERNAL_MEMORY_HANDLE_TYPE_OPAQUE_FD_BIT;
        if (VkResult r = device_fn<PFN_vkGetMemoryFdKHR>("vkGetMemoryFdKHR")(device, &gi, fd); r != VK_SUCCESS)
            return result("vkGetMemoryFdKHR", r);
        return "";
    }

    // `L: vk-semaphore binary|timeline [initial N]`: an exportable semaphore; an opaque FD of it into *fd.
    std::string semaphore(const std::string& name, bool timeline, uint64_t initial, int* fd) {
        VkSemaphoreTypeCreateInfo ti{VK_STRUCTURE_TYPE_SEMAPHORE_TYPE_CREATE_INFO};
        ti.semaphoreType = timeline ? VK_SEMAPHORE_TYPE_TIMELINE : VK_SEMAPHORE_TYPE_BINARY;
        ti.initialValue = timeline ? initial : 0;
        VkExportSemaphoreCreateInfo ex{VK_STRUCTURE_TYPE_EXPORT_SEMAPHORE_CREATE_INFO};
        ex.pNext = &ti;
        ex.handleTypes = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
        VkSemaphoreCreateInfo ci{VK_STRUCTURE_TYPE_SEMAPHORE_CREATE_INFO};
        ci.pNext = &ex;
        VkSemaphore s = VK_NULL_HANDLE;
        if (VkResult r = device_fn<PFN_vkCreateSemaphore>("vkCreateSemaphore")(device, &ci, nullptr, &s); r != VK_SUCCESS)
            return result("vkCreateSemaphore (exportable)", r);
        semaphores[name] = s;
        VkSemaphoreGetFdInfoKHR gi{VK_STRUCTURE_TYPE_SEMAPHORE_GET_FD_INFO_KHR};
        gi.semaphore = s;
        gi.handleType = VK_EXTERNAL_SEMAPHORE_HANDLE_TYPE_OPAQUE_FD_BIT;
        if (VkResult r = device_fn<PFN_vkGetSemaphoreFdKHR>("vkGetSemaphoreFdKHR")(device, &gi, fd); r != VK_SUCCESS)
            return result("vkGetSemaphoreFdKHR", r);
        return "";
    }

    // `vk-write L VALUE` / `vk-read L`: through the host mapping (coherent: no flush or invalidate).
    std::string write(const std::string& name, uint32_t value) {
        auto it = memories.find(name);
        if (it == memories.end()) return "no Vulkan memory " + name;
        volatile uint32_t* w = (volatile uint32_t*)it->second.map;
        for (uint64_t i = 0; i < it->second.size / 4; i++) w[i] = value;
        return "";
    }
    // Bytes [at, at + bytes) (to the end when bytes is 0).
    std::string read(const std::string& name, uint64_t at, uint64_t bytes, std::vector<uint32_t>& words) {
        auto it = memories.find(name);
        if (it == memories.end()) return "no Vulkan memory " + name;
        uint64_t end = bytes == 0 ? it->second.size : at + bytes;
        if (at >= end || end > it->second.size)
            return "bytes " + std::to_string(at) + ".." + std::to_string(end) + " are outside Vulkan memory `" + name +
                   "` of " + std::to_string(it->second.size) + " bytes";
        volatile const uint32_t* w = (volatile const uint32_t*)(it->second.map + at);
        words.assign((end - at) / 4, 0);
        for (size_t i = 0; i < words.size(); i++) words[i] = w[i];
        return "";
    }
    // `vk-counter L`: vkGetSemaphoreCounterValue.
    std::string counter(const std::string& name, uint64_t* value) {
        auto it = semaphores.find(name);
        if (it == semaphores.end()) return "no Vulkan semaphore " + name;
        VkResult r = device_fn<PFN_vkGetSemaphoreCounterValue>("vkGetSemaphoreCounterValue")(device, it->second, value);
        return r == VK_SUCCESS ? "" : result("vkGetSemaphoreCounterValue", r);
    }
};

// The program's session: made on the first Vulkan operation, on the case's device 0, and destroyed by
// release_vulkan() with the case's other objects, never by a destructor at exit. A static object's destructor
// would run after the atexit handlers the Vulkan driver registered while the instance was made (registered later,
// they run first), on a driver already torn down: the first H100 run of these programs died with SIGSEGV after
// their script, with no observations printed.
inline VulkanSession*& vulkan_session() {
    static VulkanSession* session = nullptr;
    return session;
}
inline VulkanSession& vulkan(int cuda_device) {
    VulkanSession*& session = vulkan_session();
    if (session == nullptr) session = new VulkanSession(cuda_device);
    return *session;
}
// Destroys what the program made through Vulkan (the Rust executor does so in the case's cleanup).
inline void release_vulkan() {
    VulkanSession*& session = vulkan_session();
    delete session;
    session = nullptr;
}

}  // namespace cc
#else
namespace cc {
// Built without <vulkan/vulkan.h>: the program still compiles, and each Vulkan operation is recorded as not run with
// this reason (the Rust executor decides `requires: vulkan` before a case runs; this says why the C++ one cannot).
struct VulkanSession {
    std::string why = "this reproducer was compiled without <vulkan/vulkan.h> (install libvulkan-dev and rebuild it)";
    bool ready() const { return false; }
    std::string memory(const std::string&, uint64_t, int*) { return why; }
    std::string semaphore(const std::string&, bool, uint64_t, int*) { return why; }
    std::string write(const std::string&, uint32_t) { return why; }
    std::string read(const std::string&, uint64_t, uint64_t, std::vector<uint32_t>&) { return why; }
    std::string counter(const std::string&, uint64_t*) { return why; }
};
inline VulkanSession& vulkan(int) {
    static VulkanSession session;
    return session;
}
inline void release_vulkan() {}
}  // namespace cc
#endif
