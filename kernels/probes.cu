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
