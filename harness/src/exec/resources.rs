//! Owned CUDA objects and allocations. Each releases itself when dropped, so whatever a case created is freed even
//! when the executor stops early; `release` frees it now and returns CUDA's answer, for the cleanup notes.
//! Nothing here decides *when* to free: the executor opens every gate first (cudaFree waits for all work).

use cuda_sys as sys;
use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Owned objects alive in this process (see [`super::live_objects`]).
static LIVE: AtomicUsize = AtomicUsize::new(0);

pub fn live_objects() -> usize {
    LIVE.load(Ordering::SeqCst)
}

fn born(raw_is_null: bool) {
    if !raw_is_null {
        LIVE.fetch_add(1, Ordering::SeqCst);
    }
}

fn gone() {
    LIVE.fetch_sub(1, Ordering::SeqCst);
}

/// An owned object freed by other means (cudaFreeAsync) and then forgotten.
pub fn forgotten() {
    gone();
}

/// What the script's `destroy` does to an owned object: free it now. Only on success is the handle gone (on
/// failure CUDA still holds the object, and cleanup frees it again).
pub trait Destroy {
    fn destroy(&mut self) -> sys::cudaError_t;
}

/// `Ok` for cudaSuccess, otherwise the code.
pub fn check(code: sys::cudaError_t) -> Result<(), sys::cudaError_t> {
    if code == sys::cudaError::cudaSuccess {
        Ok(())
    } else {
        Err(code)
    }
}

macro_rules! owned {
    ($(#[$doc:meta])* $name:ident($raw:ty), freed by $free:path) => {
        $(#[$doc])*
        #[derive(Debug)]
        pub struct $name {
            raw: $raw,
        }

        // SAFETY: CUDA handles and allocations belong to the process, not to a thread: the runtime API accepts them
        // from any host thread. The executor serialises its own use of them.
        unsafe impl Send for $name {}

        impl $name {
            /// Takes ownership of `raw`, which must come from the CUDA call that this type frees with
            #[doc = concat!("`", stringify!($free), "` (or be null, which owns nothing).")]
            pub fn from_raw(raw: $raw) -> Self {
                born(raw.is_null());
                $name { raw }
            }

            pub fn raw(&self) -> $raw {
                self.raw
            }

            /// Frees it now; CUDA's answer is returned and the handle is gone either way.
            pub fn release(mut self) -> sys::cudaError_t {
                let raw = std::mem::replace(&mut self.raw, ptr::null_mut());
                if raw.is_null() {
                    return sys::cudaError::cudaSuccess;
                }
                gone();
                // SAFETY: raw came from the matching creation call and is freed only here (Drop now sees null).
                unsafe { $free(raw) }
            }

        }

        impl Destroy for $name {
            fn destroy(&mut self) -> sys::cudaError_t {
                if self.raw.is_null() {
                    return sys::cudaError::cudaSuccess;
                }
                // SAFETY: as in `release`; on success raw is cleared so it is never freed twice.
                let code = unsafe { $free(self.raw) };
                if code == sys::cudaError::cudaSuccess {
                    self.raw = ptr::null_mut();
                    gone();
                }
                code
            }
        }

        impl Drop for $name {
            fn drop(&mut self) {
                if !self.raw.is_null() {
                    gone();
                    // SAFETY: as in `release`; the handle is not used after this.
                    let _ = unsafe { $free(self.raw) };
                }
            }
        }
    };
}

owned!(
    /// A created stream (cudaStreamCreateWithPriority).
    Stream(sys::cudaStream_t), freed by sys::cudaStreamDestroy
);
owned!(
    /// A created event (cudaEventCreateWithFlags).
    Event(sys::cudaEvent_t), freed by sys::cudaEventDestroy
);
owned!(
    /// A captured graph (cudaStreamEndCapture).
    Graph(sys::cudaGraph_t), freed by sys::cudaGraphDestroy
);
owned!(
    /// An executable graph (cudaGraphInstantiate).
    GraphExec(sys::cudaGraphExec_t), freed by sys::cudaGraphExecDestroy
);
owned!(
    /// A created memory pool (cudaMemPoolCreate). Destroying it while allocations are outstanding is allowed: CUDA
    /// releases the pool when the last one is freed.
    MemPool(sys::cudaMemPool_t), freed by sys::cudaMemPoolDestroy
);
owned!(
    /// Device memory (cudaMalloc).
    DeviceMemory(*mut c_void), freed by sys::cudaFree
);
owned!(
    /// Page-locked host memory (cudaMallocHost or cudaHostAlloc).
    HostMemory(*mut c_void), freed by sys::cudaFreeHost
);

impl Stream {
    pub fn create(flags: u32, priority: i32) -> Result<Stream, sys::cudaError_t> {
        let mut raw = ptr::null_mut();
        // SAFETY: raw is a valid out-pointer.
        check(unsafe { sys::cudaStreamCreateWithPriority(&mut raw, flags, priority) })?;
        Ok(Stream::from_raw(raw))
    }
}

impl Event {
    pub fn create(flags: u32) -> Result<Event, sys::cudaError_t> {
        let mut raw = ptr::null_mut();
        // SAFETY: raw is a valid out-pointer.
        check(unsafe { sys::cudaEventCreateWithFlags(&mut raw, flags) })?;
        Ok(Event::from_raw(raw))
    }
}

impl DeviceMemory {
    /// Gives up ownership without freeing (for [`super::harness_memory`]): the caller now answers for freeing the
    /// allocation, which no longer counts as a live object.
    pub fn into_raw(mut self) -> *mut c_void {
        let raw = std::mem::replace(&mut self.raw, ptr::null_mut());
        if !raw.is_null() {
            gone();
        }
        raw
    }

    pub fn alloc(bytes: usize) -> Result<DeviceMemory, sys::cudaError_t> {
        let mut raw = ptr::null_mut();
        // SAFETY: raw is a valid out-pointer.
        check(unsafe { sys::cudaMalloc(&mut raw, bytes) })?;
        Ok(DeviceMemory::from_raw(raw))
    }
}

impl HostMemory {
    /// Gives up ownership without freeing (for [`super::pinned_cache`]): the caller now answers for freeing the
    /// allocation, which no longer counts as a live object.
    pub fn into_raw(mut self) -> *mut c_void {
        let raw = std::mem::replace(&mut self.raw, ptr::null_mut());
        if !raw.is_null() {
            gone();
        }
        raw
    }

    /// cudaMallocHost: page-locked, device-accessible through unified addressing.
    pub fn pinned(bytes: usize) -> Result<HostMemory, sys::cudaError_t> {
        let mut raw = ptr::null_mut();
        // SAFETY: raw is a valid out-pointer.
        check(unsafe { sys::cudaMallocHost(&mut raw, bytes) })?;
        Ok(HostMemory::from_raw(raw))
    }

    /// cudaHostAlloc(cudaHostAllocMapped | cudaHostAllocPortable) and the device alias of the allocation. Portable,
    /// so that kernels on every device of a case may use it (a gate held on another device than the one current
    /// at allocation); with unified addressing it is anyway ("Allocations via cudaHostAlloc() are automatically
    /// portable").
    pub fn mapped(bytes: usize) -> Result<(HostMemory, *mut c_void), sys::cudaError_t> {
        let mut raw = ptr::null_mut();
        let flags = sys::cudaHostAllocMapped | sys::cudaHostAllocPortable;
        // SAFETY: raw is a valid out-pointer.
        check(unsafe { sys::cudaHostAlloc(&mut raw, bytes, flags) })?;
        let host = HostMemory::from_raw(raw);
        let mut device = ptr::null_mut();
        // SAFETY: host.raw() is a live mapped allocation; device is a valid out-pointer.
        check(unsafe { sys::cudaHostGetDevicePointer(&mut device, host.raw(), 0) })?;
        Ok((host, device))
    }
}
