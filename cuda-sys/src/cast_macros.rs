//! The header macros bindgen cannot translate because their values are casts, e.g.
//! `#define cudaStreamLegacy ((cudaStream_t)0x1)`. Each value is checked against the header text by
//! `tests/cast_macros.rs`, which also fails if the headers gain a cast macro that is missing here.

use crate::cudaStream_t;

/// The legacy default stream (`driver_types.h`): implicitly synchronises with every blocking stream of the context.
pub const cudaStreamLegacy: cudaStream_t = 0x1 as cudaStream_t;
/// The calling thread's per-thread default stream (`driver_types.h`): does not synchronise with other created
/// streams, but does with the legacy default stream.
pub const cudaStreamPerThread: cudaStream_t = 0x2 as cudaStream_t;
/// Per-grid stream with tail-launch semantics; device-side (dynamic parallelism) only (`cuda_device_runtime_api.h`).
pub const cudaStreamTailLaunch: cudaStream_t = 0x3 as cudaStream_t;
/// Per-grid fire-and-forget stream; device-side (dynamic parallelism) only (`cuda_device_runtime_api.h`).
pub const cudaStreamFireAndForget: cudaStream_t = 0x4 as cudaStream_t;
/// Device id that represents the CPU (`driver_types.h`), e.g. for `cudaMemPrefetchAsync` locations.
pub const cudaCpuDeviceId: i32 = -1;
/// Device id that represents an invalid device (`driver_types.h`).
pub const cudaInvalidDeviceId: i32 = -2;
