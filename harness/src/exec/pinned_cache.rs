//! Page-locked host memory kept from one case for the next in the same process. Allocating and freeing it is the
//! kernel's work on the calling thread (it zeroes, maps and pins every page): for 256 MiB about 100 ms and 25 ms
//! on an idle H100 host, 570–715 ms and 165–225 ms with four busy loops per core
//! (results/2026-11-26_load-ab_h100/hostmem.txt), most of what a bandwidth case costs. The performance cases
//! declare the same few sizes over and over, so a buffer freed at a case's cleanup is kept and the next
//! declaration of that size takes it. Only declarations and the read-back chunk take from here, never the script's
//! `create` (whose allocation is the call under test), and only cleanup after a healthy case gives back; what a
//! case observes is the same: a buffer of page-locked memory, every byte the initial pattern (refilled on the
//! device, see [`super::buffers`]). Small allocations are kept too: a 64 KiB cudaMallocHost and cudaFreeHost took
//! 1.4 ms on an idle H100 host but 9 ms (90th percentile 17–33 ms) while four other processes created their
//! contexts (`ctxbench ops`, results/2026-11-27_node-time), which is what a run does beside its
//! batch worker, and every row of a sweep that declares a page-locked buffer paid it twice.

use super::resources::HostMemory;
use cuda_sys as sys;
use std::ffi::c_void;
use std::sync::{Mutex, PoisonError};

/// Every size is kept (see the module documentation): the bound on the total is what limits the cache.
const SMALLEST_KEPT: usize = 1;
/// At most this much is kept; beyond it the allocations kept longest are freed.
const MOST_KEPT: usize = 1 << 30;

/// An allocation no one uses, owned by the cache.
struct Kept {
    raw: *mut c_void,
    bytes: usize,
}

// SAFETY: page-locked memory belongs to the process, not to a thread; the cache hands each allocation to one owner.
unsafe impl Send for Kept {}

/// Oldest first.
static CACHE: Mutex<Vec<Kept>> = Mutex::new(Vec::new());

/// Page-locked memory of `bytes` bytes: an allocation of that size kept from an earlier case (with that case's
/// contents), else a new one (cudaMallocHost).
pub fn pinned(bytes: usize) -> Result<HostMemory, sys::cudaError_t> {
    take(bytes).map_or_else(|| HostMemory::pinned(bytes), Ok)
}

/// Page-locked memory of exactly `bytes` bytes kept from an earlier case (with that case's contents), if there is.
fn take(bytes: usize) -> Option<HostMemory> {
    let mut cache = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    let at = cache.iter().position(|k| k.bytes == bytes)?;
    Some(HostMemory::from_raw(cache.remove(at).raw))
}

/// Keeps `memory`, an allocation of `bytes` bytes that no work uses any more, for a later case if it is large
/// enough to be worth keeping, else frees it. Returns what freeing returned (an allocation kept longest may be
/// freed to make room): `cudaSuccess` when nothing was freed.
pub fn keep(memory: HostMemory, bytes: usize) -> sys::cudaError_t {
    if !(SMALLEST_KEPT..=MOST_KEPT).contains(&bytes) {
        return memory.release();
    }
    let mut cache = CACHE.lock().unwrap_or_else(PoisonError::into_inner);
    cache.push(Kept { raw: memory.into_raw(), bytes });
    let mut code = sys::cudaError::cudaSuccess;
    while cache.iter().map(|k| k.bytes).sum::<usize>() > MOST_KEPT {
        let oldest = cache.remove(0);
        let freed = HostMemory::from_raw(oldest.raw).release();
        if freed != sys::cudaError::cudaSuccess {
            code = freed;
        }
    }
    code
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Allocations below the threshold are freed, those above are kept by size and handed out once each, and the
    /// total kept stays bounded (the oldest freed first). Without a GPU the allocations are null (nothing to
    /// free), so this checks only the bookkeeping.
    #[test]
    fn keeps_by_size_within_the_bound() {
        let fake = |n: usize| HostMemory::from_raw(n as *mut c_void);
        let _ = keep(HostMemory::from_raw(std::ptr::null_mut()), SMALLEST_KEPT - 1);
        assert!(take(SMALLEST_KEPT - 1).is_none(), "too small to keep");
        // Kept allocations are never freed in this test: the bound is not crossed.
        let a = fake(0x1000);
        assert_eq!(keep(a, 256 << 20), sys::cudaError::cudaSuccess);
        assert_eq!(keep(fake(0x2000), 128 << 20), sys::cudaError::cudaSuccess);
        let got = take(128 << 20).expect("kept");
        assert_eq!(got.into_raw() as usize, 0x2000);
        assert!(take(128 << 20).is_none(), "handed out once");
        let got = take(256 << 20).expect("kept");
        assert_eq!(got.into_raw() as usize, 0x1000);
    }
}
