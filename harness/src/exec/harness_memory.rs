//! The executor's own allocations, kept from one case for the next in the same process: each gate's mapped words
//! and each case's kernel stamps. They are the executor's instruments, not the API under test, and every case made
//! and freed them: a cudaHostAlloc and cudaFreeHost per gate, a cudaMalloc, cudaMemset and cudaFree per case that
//! launches a kernel. Those calls wait behind the driver's host-wide lock while any process of the host makes or
//! destroys its context (probe 12, results/2026-11-28_node-time-4: beside starts on another GPU a cudaFree took 2.4 ms
//! at the 99th percentile and up to 115 ms, against 0.05 ms alone), which is what the other lanes of a node do all
//! run long. A kept allocation goes back only after a healthy case (its final synchronize succeeded, so no work
//! uses it), and the case that takes it zeroes it as a new one was: what a case observes is the same. Like
//! [`super::pinned_cache`], the kept allocations are not live objects of any case.

use super::resources::{DeviceMemory, HostMemory};
use cuda_sys as sys;
use std::ffi::c_void;
use std::sync::{Mutex, PoisonError};

/// At most this many allocations of each kind are kept (a case declares a few gates); beyond it they are freed.
const MOST_KEPT: usize = 64;

/// A mapped page-locked allocation no case uses: the host address and its device alias.
struct KeptMapped {
    host: *mut c_void,
    device: *mut c_void,
    bytes: usize,
}

/// A device allocation no case uses, on the device of ordinal `ordinal`.
struct KeptDevice {
    raw: *mut c_void,
    bytes: usize,
    ordinal: i32,
}

// SAFETY: CUDA allocations belong to the process, not to a thread; the shelves hand each one to one owner.
unsafe impl Send for KeptMapped {}
unsafe impl Send for KeptDevice {}

/// The kept allocations of one kind, at most [`MOST_KEPT`].
struct Shelf<T>(Mutex<Vec<T>>);

impl<T> Shelf<T> {
    const fn new() -> Self {
        Shelf(Mutex::new(Vec::new()))
    }

    /// The first kept allocation that `fits`, taken off the shelf.
    fn take(&self, fits: impl Fn(&T) -> bool) -> Option<T> {
        let mut kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let at = kept.iter().position(fits)?;
        Some(kept.remove(at))
    }

    /// Puts `item` on the shelf, or gives it back when the shelf is full.
    fn put(&self, item: T) -> Option<T> {
        let mut kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if kept.len() >= MOST_KEPT {
            return Some(item);
        }
        kept.push(item);
        None
    }
}

static MAPPED: Shelf<KeptMapped> = Shelf::new();
static DEVICE: Shelf<KeptDevice> = Shelf::new();

/// Portable mapped page-locked memory of `bytes` bytes and its device alias ([`HostMemory::mapped`]): one kept from
/// an earlier case (with its contents: the caller zeroes it), else a new one.
pub fn mapped(bytes: usize) -> Result<(HostMemory, *mut c_void), sys::cudaError_t> {
    match MAPPED.take(|k| k.bytes == bytes) {
        Some(kept) => Ok((HostMemory::from_raw(kept.host), kept.device)),
        None => HostMemory::mapped(bytes),
    }
}

/// Keeps `host` (from [`mapped`], `bytes` bytes, device alias `device`), which no work uses any more, for a later
/// case; frees it when the shelf is full. Returns what freeing returned (`cudaSuccess` when kept).
pub fn keep_mapped(host: HostMemory, device: *mut c_void, bytes: usize) -> sys::cudaError_t {
    match MAPPED.put(KeptMapped { host: host.into_raw(), device, bytes }) {
        Some(full) => HostMemory::from_raw(full.host).release(),
        None => sys::cudaError::cudaSuccess,
    }
}

/// Device memory of `bytes` bytes on the device of ordinal `ordinal`, the current one: one kept from an earlier case
/// (with its contents: the caller zeroes it), else a new one (cudaMalloc).
pub fn device(bytes: usize, ordinal: i32) -> Result<DeviceMemory, sys::cudaError_t> {
    match DEVICE.take(|k| k.bytes == bytes && k.ordinal == ordinal) {
        Some(kept) => Ok(DeviceMemory::from_raw(kept.raw)),
        None => DeviceMemory::alloc(bytes),
    }
}

/// Keeps `memory` (from [`device`] with these `bytes` and `ordinal`), which no work uses any more, for a later case;
/// frees it when the shelf is full. Returns what freeing returned (`cudaSuccess` when kept).
pub fn keep_device(memory: DeviceMemory, bytes: usize, ordinal: i32) -> sys::cudaError_t {
    match DEVICE.put(KeptDevice { raw: memory.into_raw(), bytes, ordinal }) {
        Some(full) => DeviceMemory::from_raw(full.raw).release(),
        None => sys::cudaError::cudaSuccess,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Kept allocations are handed out once each, to a request of the same size (and device). Without a GPU the
    /// addresses are fakes that nothing frees: this checks the bookkeeping.
    #[test]
    fn kept_allocations_go_to_a_later_request_of_the_same_size_and_device_once() {
        let fake = |n: usize| n as *mut c_void;
        assert_eq!(keep_device(DeviceMemory::from_raw(fake(0x1000)), 4096, 1), sys::cudaError::cudaSuccess);
        assert_eq!(keep_mapped(HostMemory::from_raw(fake(0x3000)), fake(0x4000), 8), sys::cudaError::cudaSuccess);
        // `device` asks the shelf as below, and allocates (here: fails, no GPU) when it has nothing that fits.
        let take_device =
            |bytes, ordinal| DEVICE.take(|k| k.bytes == bytes && k.ordinal == ordinal).map(|k| k.raw as usize);
        assert_eq!(take_device(4096, 0), None, "another device's");
        assert_eq!(take_device(8192, 1), None, "another size");
        assert_eq!(take_device(4096, 1), Some(0x1000));
        assert_eq!(take_device(4096, 1), None, "handed out once");
        let (host, device) = mapped(8).expect("kept");
        assert_eq!((host.into_raw() as usize, device as usize), (0x3000, 0x4000));
    }

    /// A full shelf gives the allocation back (its caller frees it) and keeps what it held.
    #[test]
    fn a_full_shelf_gives_the_allocation_back() {
        let shelf: Shelf<usize> = Shelf::new();
        for i in 0..MOST_KEPT {
            assert_eq!(shelf.put(i), None);
        }
        assert_eq!(shelf.put(MOST_KEPT), Some(MOST_KEPT));
        assert_eq!(shelf.take(|&i| i == 0), Some(0));
        assert_eq!(shelf.put(MOST_KEPT), None, "room again");
    }
}
