//! The stream-ordered allocator's objects: memory pools, their attributes, and the device's graph-memory attributes,
//! each read or written as a plain number (`u64`; the reuse flags are `int` in CUDA and 0 or 1 here).

use super::resources::{check, MemPool};
use crate::case::ast::{GraphMemAttr, PoolAttr};
use cuda_sys as sys;
use std::ffi::c_void;

/// A pool of pinned device memory on `device`, without IPC handles: what cudaMallocAsync's default pool is; with
/// `posix_fd`, exportable as a POSIX file descriptor.
pub fn create_pool(device: i32, posix_fd: bool) -> Result<MemPool, sys::cudaError_t> {
    // SAFETY: an all-zero cudaMemPoolProps is valid (no IPC handle, no Windows attributes, no maximum size).
    let mut props: sys::cudaMemPoolProps = unsafe { std::mem::zeroed() };
    props.allocType = sys::cudaMemAllocationType::cudaMemAllocationTypePinned;
    props.handleTypes = if posix_fd {
        sys::cudaMemAllocationHandleType::cudaMemHandleTypePosixFileDescriptor
    } else {
        sys::cudaMemAllocationHandleType::cudaMemHandleTypeNone
    };
    props.location = sys::compat::mem_location(sys::cudaMemLocationType::cudaMemLocationTypeDevice, device);
    let mut pool = std::ptr::null_mut();
    // SAFETY: props is initialised; pool is a valid out-pointer.
    check(unsafe { sys::cudaMemPoolCreate(&mut pool, &props) })?;
    Ok(MemPool::from_raw(pool))
}

/// The device's default pool (not owned: never destroyed).
pub fn default_pool(device: i32) -> Result<sys::cudaMemPool_t, sys::cudaError_t> {
    let mut pool = std::ptr::null_mut();
    // SAFETY: pool is a valid out-pointer.
    check(unsafe { sys::cudaDeviceGetDefaultMemPool(&mut pool, device) })?;
    Ok(pool)
}

/// `cudaMemPoolAttr` and whether CUDA stores it as an `int` (the reuse flags) rather than a `cuuint64_t`.
fn pool_attr(attr: PoolAttr) -> (sys::cudaMemPoolAttr, bool) {
    use sys::cudaMemPoolAttr as A;
    match attr {
        PoolAttr::ReleaseThreshold => (A::cudaMemPoolAttrReleaseThreshold, false),
        PoolAttr::ReuseFollowEventDependencies => (A::cudaMemPoolReuseFollowEventDependencies, true),
        PoolAttr::ReuseAllowOpportunistic => (A::cudaMemPoolReuseAllowOpportunistic, true),
        PoolAttr::ReuseAllowInternalDependencies => (A::cudaMemPoolReuseAllowInternalDependencies, true),
        PoolAttr::ReservedMemCurrent => (A::cudaMemPoolAttrReservedMemCurrent, false),
        PoolAttr::ReservedMemHigh => (A::cudaMemPoolAttrReservedMemHigh, false),
        PoolAttr::UsedMemCurrent => (A::cudaMemPoolAttrUsedMemCurrent, false),
        PoolAttr::UsedMemHigh => (A::cudaMemPoolAttrUsedMemHigh, false),
    }
}

/// cudaMemPoolSetAttribute. A flag is set to 1 for any non-zero value.
pub fn set(pool: sys::cudaMemPool_t, attr: PoolAttr, value: u64) -> sys::cudaError_t {
    let (attr, is_int) = pool_attr(attr);
    let mut wide = value;
    let mut flag: i32 = i32::from(value != 0);
    let ptr: *mut c_void = if is_int { (&mut flag as *mut i32).cast() } else { (&mut wide as *mut u64).cast() };
    // SAFETY: ptr points to a live value of the type CUDA expects for this attribute.
    unsafe { sys::cudaMemPoolSetAttribute(pool, attr, ptr) }
}

/// cudaMemPoolGetAttribute.
pub fn get(pool: sys::cudaMemPool_t, attr: PoolAttr) -> (sys::cudaError_t, u64) {
    let (attr, is_int) = pool_attr(attr);
    let (mut wide, mut flag) = (0u64, 0i32);
    let ptr: *mut c_void = if is_int { (&mut flag as *mut i32).cast() } else { (&mut wide as *mut u64).cast() };
    // SAFETY: ptr points to a live value of the type CUDA writes for this attribute.
    let code = unsafe { sys::cudaMemPoolGetAttribute(pool, attr, ptr) };
    (code, if is_int { u64::from(flag != 0) } else { wide })
}

/// cudaDeviceGetGraphMemAttribute.
pub fn graph_mem_get(device: i32, attr: GraphMemAttr) -> (sys::cudaError_t, u64) {
    use sys::cudaGraphMemAttributeType as A;
    let attr = match attr {
        GraphMemAttr::UsedMemCurrent => A::cudaGraphMemAttrUsedMemCurrent,
        GraphMemAttr::UsedMemHigh => A::cudaGraphMemAttrUsedMemHigh,
        GraphMemAttr::ReservedMemCurrent => A::cudaGraphMemAttrReservedMemCurrent,
        GraphMemAttr::ReservedMemHigh => A::cudaGraphMemAttrReservedMemHigh,
    };
    let mut value = 0u64;
    // SAFETY: every graph memory attribute is a cuuint64_t.
    let code = unsafe { sys::cudaDeviceGetGraphMemAttribute(device, attr, (&mut value as *mut u64).cast()) };
    (code, value)
}
