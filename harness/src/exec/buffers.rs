//! Case buffers by memory kind: where each lives, which pointer kernels, copies and memsets get, and how the final
//! contents are read back. Every declared buffer starts with every byte [`INITIAL_BYTE`] (0xCD), never zero: a
//! check can pass only on words the script wrote (cases/README.md, "Initial contents").

use super::pinned_cache;
use super::resources::{check, Destroy, DeviceMemory, HostMemory};
use crate::case::ast::{MemKind, INITIAL_BYTE, INITIAL_WORD};
use crate::record::observations::{Contents, ContentsScan};
use cuda_sys as sys;
use std::ffi::c_void;
use std::ptr;

/// Words of device memory read back per cudaMemcpy when a buffer's contents are summarised: 16 MiB of host memory
/// reused for the whole buffer, rather than a copy of all of it (256 MiB of fresh pages to fault in and scan), in
/// chunks large enough that a 256 MiB buffer takes 16 waits for the device, not hundreds.
const READBACK_WORDS: usize = 1 << 22;

/// At least this many bytes of device memory to read back after a case, and they are read through pinned host
/// memory (see [`Readback`]).
const PINNED_READBACK_BYTES: u64 = 64 << 20;

/// The host memory that device buffers are read back through after a case, one chunk shared by every buffer.
/// Pinned when there is much to read: the copy engine then writes it directly, whereas into pageable memory the
/// driver copies every byte a second time on the host, out of its own pinned staging buffer (the 384 MiB of device
/// memory a performance case reads back cost as much host memcpy, on the critical path). An ordinary vector when
/// there is little (pinning 16 MiB costs more than staging a few KiB), or when pinning fails.
pub struct Readback {
    pinned: Option<(HostMemory, usize)>,
    pageable: Vec<u32>,
}

impl Readback {
    /// The chunk for reading back `device_bytes` of device memory in all.
    pub fn for_bytes(device_bytes: u64) -> Readback {
        let pinned = (device_bytes >= PINNED_READBACK_BYTES)
            .then(|| {
                let words = usize::try_from(device_bytes / 4).unwrap_or(READBACK_WORDS).min(READBACK_WORDS);
                pinned_cache::pinned(words * 4).ok().map(|memory| (memory, words))
            })
            .flatten();
        Readback { pinned, pageable: Vec::new() }
    }

    /// Host memory for reading back a buffer of `words` words: the pinned chunk, or the vector grown to
    /// `words` (at most [`READBACK_WORDS`]).
    fn chunk(&mut self, words: usize) -> &mut [u32] {
        if let Some((memory, n)) = &self.pinned {
            // SAFETY: a live pinned allocation of n words, owned by this value, which only cudaMemcpy (synchronous
            // with respect to the host for host destinations) and the scan after it touch.
            return unsafe { std::slice::from_raw_parts_mut(memory.raw().cast::<u32>(), *n) };
        }
        let wanted = words.min(READBACK_WORDS);
        if self.pageable.len() < wanted {
            self.pageable.resize(wanted, 0);
        }
        &mut self.pageable
    }

    /// Frees the pinned chunk, if any; its code if that failed.
    pub fn release(self) -> Option<sys::cudaError_t> {
        let (memory, words) = self.pinned?;
        let code = pinned_cache::keep(memory, words * 4);
        (code != sys::cudaError::cudaSuccess).then_some(code)
    }
}

/// The cudaMemcpyKind of a copy from `src` to `dst`: pinned, pageable and mapped memory are host memory.
pub fn memcpy_kind(dst: MemKind, src: MemKind) -> sys::cudaMemcpyKind {
    use sys::cudaMemcpyKind as K;
    match (src.is_host(), dst.is_host()) {
        (true, true) => K::cudaMemcpyHostToHost,
        (true, false) => K::cudaMemcpyHostToDevice,
        (false, true) => K::cudaMemcpyDeviceToHost,
        (false, false) => K::cudaMemcpyDeviceToDevice,
    }
}

/// The byte count of a copy or memset: as written, or the whole (smaller) buffer; never past a buffer's end.
pub fn byte_count(bytes: Option<u64>, limit: u64) -> Result<usize, String> {
    let bytes = bytes.unwrap_or(limit);
    if bytes > limit {
        return Err(format!("{bytes} bytes do not fit ({limit} bytes available)"));
    }
    usize::try_from(bytes).map_err(|e| e.to_string())
}

/// Ordinary host memory that the device never owns. Held as a raw allocation rather than a `Vec` because CUDA
/// copies into it behind Rust's back (memcpy-async), so no Rust reference to it may exist while work is pending.
#[derive(Debug)]
struct PageableMemory {
    ptr: *mut u32,
    words: usize,
}

impl PageableMemory {
    fn initial(words: usize) -> Self {
        let boxed: Box<[u32]> = vec![INITIAL_WORD; words].into_boxed_slice();
        PageableMemory { ptr: Box::into_raw(boxed).cast::<u32>(), words }
    }
}

impl Drop for PageableMemory {
    fn drop(&mut self) {
        // SAFETY: ptr and words are exactly the boxed slice made in `initial`, freed only here.
        drop(unsafe { Box::from_raw(ptr::slice_from_raw_parts_mut(self.ptr, self.words)) });
    }
}

#[derive(Debug)]
enum Storage {
    Device(DeviceMemory),
    Pinned(HostMemory),
    /// The host allocation and its device alias (what kernels get).
    Mapped(HostMemory, *mut c_void),
    Pageable(PageableMemory),
    // Managed memory
    /// cudaMallocManaged memory (freed by cudaFree): one pointer for the host, kernels and copies.
    Managed(DeviceMemory),
    /// A slice of another buffer: its pointers, offset; the other buffer owns the memory (and outlives the view:
    /// the validator refuses to free a buffer that has slices).
    View {
        copy: *mut c_void,
        kernel: Option<*mut u32>,
    },
}

/// One declared buffer.
#[derive(Debug)]
pub struct Buffer {
    pub kind: MemKind,
    pub bytes: u64,
    storage: Storage,
}

// SAFETY: the storage is plain memory owned by this buffer; CUDA pointers may be used from any host thread, and the
// executor serialises host access to host-visible words (reads happen only after the final device synchronize).
unsafe impl Send for Buffer {}

impl Buffer {
    /// Allocates `bytes` of `kind` and sets every byte to [`INITIAL_BYTE`] (device and page-locked memory with
    /// cudaMemset on the legacy stream: the executor synchronizes the device before the script starts, so no case
    /// sees that work). Page-locked memory may be an allocation an earlier case declared ([`pinned_cache`]).
    pub fn create(kind: MemKind, bytes: u64) -> Result<Buffer, sys::cudaError_t> {
        Buffer::allocate(kind, bytes, true)
    }

    /// Allocates without writing device memory: for `create` in the script, where the allocation call alone is
    /// under test (a cudaMemset would be a second call, and one the implicit-synchronisation rules name). Host
    /// memory is still filled with the pattern, on the host (no CUDA call).
    pub fn create_uninit(kind: MemKind, bytes: u64) -> Result<Buffer, sys::cudaError_t> {
        Buffer::allocate(kind, bytes, false)
    }

    /// Device memory from cudaMallocAsync (freed by cudaFree at cleanup, which is allowed for such memory).
    pub fn from_async(raw: *mut c_void, bytes: u64) -> Buffer {
        Buffer { kind: MemKind::Device, bytes, storage: Storage::Device(DeviceMemory::from_raw(raw)) }
    }

    fn allocate(kind: MemKind, bytes: u64, fill_device: bool) -> Result<Buffer, sys::cudaError_t> {
        let size = usize::try_from(bytes).map_err(|_| sys::cudaError::cudaErrorMemoryAllocation)?;
        let storage = match kind {
            MemKind::Device => {
                let mem = DeviceMemory::alloc(size)?;
                if fill_device {
                    // SAFETY: mem is a live device allocation of size bytes.
                    check(unsafe { sys::cudaMemset(mem.raw(), i32::from(INITIAL_BYTE), size) })?;
                }
                Storage::Device(mem)
            }
            MemKind::Pinned if fill_device => {
                // Written by the device, like device memory: the host writes 256 MiB in 23 ms idle and 90–100 ms
                // with four busy loops per core, the copy engine in 5 and 15 (page-locked memory is device memory's
                // peer under unified addressing: kernels get the same pointer).
                let mem = pinned_cache::pinned(size)?;
                // SAFETY: mem is a live page-locked allocation of size bytes that no work uses.
                check(unsafe { sys::cudaMemset(mem.raw(), i32::from(INITIAL_BYTE), size) })?;
                Storage::Pinned(mem)
            }
            MemKind::Pinned => {
                let mem = HostMemory::pinned(size)?;
                // SAFETY: mem is a live host allocation of size bytes that no one else uses yet.
                unsafe { ptr::write_bytes(mem.raw().cast::<u8>(), INITIAL_BYTE, size) };
                Storage::Pinned(mem)
            }
            MemKind::Mapped => {
                let (mem, device) = HostMemory::mapped(size)?;
                // SAFETY: as for pinned memory.
                unsafe { ptr::write_bytes(mem.raw().cast::<u8>(), INITIAL_BYTE, size) };
                Storage::Mapped(mem, device)
            }
            MemKind::Pageable => Storage::Pageable(PageableMemory::initial(size / 4)),
            // Written on the host (no CUDA call), like the other host-visible kinds.
            MemKind::Managed => {
                let mut raw = ptr::null_mut();
                // SAFETY: raw is a valid out-pointer.
                check(unsafe { sys::cudaMallocManaged(&mut raw, size, sys::cudaMemAttachGlobal) })?;
                let mem = DeviceMemory::from_raw(raw);
                // SAFETY: a live managed allocation of size bytes that no kernel uses yet; the host may write it.
                unsafe { ptr::write_bytes(raw.cast::<u8>(), INITIAL_BYTE, size) };
                Storage::Managed(mem)
            }
        };
        Ok(Buffer { kind, bytes, storage })
    }

    /// Device memory this process mapped from another's (cudaIpcOpenMemHandle): it owns nothing,
    /// since the mapping is closed (cudaIpcCloseMemHandle), never freed, by whoever opened it.
    pub fn mapping(raw: *mut c_void, bytes: u64) -> Buffer {
        Buffer { kind: MemKind::Device, bytes, storage: Storage::View { copy: raw, kernel: Some(raw.cast()) } }
    }

    /// A view of `bytes` bytes of `parent` from `offset` (whole words inside it; the validator checked).
    pub fn view(parent: &Buffer, offset: u64, bytes: u64) -> Result<Buffer, String> {
        if offset.checked_add(bytes).is_none_or(|end| end > parent.bytes) || offset % 4 != 0 {
            return Err(format!("the slice [{offset}, {offset} + {bytes}) is not inside its buffer"));
        }
        let at = usize::try_from(offset).map_err(|e| e.to_string())?;
        // SAFETY: offset + bytes is inside the parent's allocation, so both pointers stay inside it (no access).
        let copy = unsafe { parent.copy_ptr().cast::<u8>().add(at).cast::<c_void>() };
        // SAFETY: as above, for the kernel alias of the same allocation.
        let kernel = parent.kernel_ptr().map(|p| unsafe { p.cast::<u8>().add(at).cast::<u32>() });
        Ok(Buffer { kind: parent.kind, bytes, storage: Storage::View { copy, kernel } })
    }

    /// Number of u32 words.
    pub fn words(&self) -> u64 {
        self.bytes / 4
    }

    /// What kernels get: the device pointer, a pinned buffer's host pointer (unified addressing), or a mapped
    /// buffer's device alias. `None` for pageable memory, which kernels must not touch.
    pub fn kernel_ptr(&self) -> Option<*mut u32> {
        match &self.storage {
            Storage::Device(m) => Some(m.raw().cast()),
            Storage::Pinned(m) => Some(m.raw().cast()),
            Storage::Mapped(_, device) => Some(device.cast()),
            Storage::Pageable(_) => None,
            Storage::Managed(m) => Some(m.raw().cast()),
            Storage::View { kernel, .. } => *kernel,
        }
    }

    /// What cudaMemcpy gets: host memory by its host pointer (the copy kind says it is host memory).
    pub fn copy_ptr(&self) -> *mut c_void {
        match &self.storage {
            Storage::Device(m) | Storage::Managed(m) => m.raw(),
            Storage::Pinned(m) | Storage::Mapped(m, _) => m.raw(),
            Storage::Pageable(p) => p.ptr.cast(),
            Storage::View { copy, .. } => *copy,
        }
    }

    /// What cudaMemset gets: the pointer kernels use, or the host pointer of pageable memory (CUDA decides).
    pub fn memset_ptr(&self) -> *mut c_void {
        match (&self.storage, self.kernel_ptr()) {
            (_, Some(p)) => p.cast(),
            (Storage::Pageable(p), None) => p.ptr.cast(),
            (Storage::View { copy, .. }, None) => *copy,
            (_, None) => ptr::null_mut(),
        }
    }

    /// Host pointer and word count of host-visible memory (for host-function snapshots); `None` for device memory.
    pub fn host_words(&self) -> Option<(*const u32, usize)> {
        let words = usize::try_from(self.words()).ok()?;
        match &self.storage {
            Storage::Pinned(m) | Storage::Mapped(m, _) => Some((m.raw().cast_const().cast(), words)),
            Storage::Pageable(p) => Some((p.ptr.cast_const(), p.words)),
            // Managed memory is read by the host directly (the device is synchronized, or the case requires
            // concurrent-managed-access to read it while kernels run).
            Storage::Managed(m) => Some((m.raw().cast_const().cast(), words)),
            Storage::View { copy, .. } if self.kind.host_readable() => Some((copy.cast_const().cast(), words)),
            Storage::Device(_) | Storage::View { .. } => None,
        }
    }

    /// The whole contents, copied (the tests compare [`Buffer::contents`] with it). Call only when no work can touch
    /// the buffer (after the final device synchronize).
    #[cfg(test)]
    pub fn read(&self) -> Result<Vec<u32>, sys::cudaError_t> {
        let words = usize::try_from(self.words()).map_err(|_| sys::cudaError::cudaErrorInvalidValue)?;
        let mut out = vec![0u32; words];
        match self.host_words() {
            // SAFETY: ptr holds n words of live host memory; nothing writes it any more (see above).
            Some((ptr, n)) => out.copy_from_slice(unsafe { std::slice::from_raw_parts(ptr, n) }),
            None => {
                let kind = sys::cudaMemcpyKind::cudaMemcpyDeviceToHost;
                // SAFETY: out has words*4 bytes; copy_ptr is the device allocation of the same size.
                check(unsafe { sys::cudaMemcpy(out.as_mut_ptr().cast(), self.copy_ptr(), words * 4, kind) })?;
            }
        }
        Ok(out)
    }

    /// The whole contents as a [`Contents`] record (keeping the words at `probe_indices`), in one pass: host-visible
    /// memory is scanned where it lies, device memory is read back through `readback`, [`READBACK_WORDS`] at a time.
    /// Call only when no work can touch the buffer (after the final device synchronize).
    pub fn contents(&self, probe_indices: &[u64], readback: &mut Readback) -> Result<Contents, sys::cudaError_t> {
        let mut scan = ContentsScan::new(probe_indices);
        if let Some((ptr, n)) = self.host_words() {
            // SAFETY: ptr holds n words of live host memory; nothing writes it any more (see above).
            scan.push(unsafe { std::slice::from_raw_parts(ptr, n) });
            return Ok(scan.finish());
        }
        let words = usize::try_from(self.words()).map_err(|_| sys::cudaError::cudaErrorInvalidValue)?;
        let chunk = readback.chunk(words);
        let kind = sys::cudaMemcpyKind::cudaMemcpyDeviceToHost;
        let mut done = 0;
        while done < words {
            let n = (words - done).min(chunk.len());
            // SAFETY: chunk has at least n words; the source is n words inside the device allocation (done + n is
            // at most its word count).
            let src = unsafe { self.copy_ptr().cast::<u32>().add(done) }.cast::<c_void>();
            // cudaMemcpy to host memory returns once the copy is complete: the chunk is read only after that.
            check(unsafe { sys::cudaMemcpy(chunk.as_mut_ptr().cast(), src, n * 4, kind) })?;
            scan.push(&chunk[..n]);
            done += n;
        }
        Ok(scan.finish())
    }

    /// The device allocation, for cudaFreeAsync; `None` for host memory.
    pub fn device_raw(&self) -> Option<*mut c_void> {
        match &self.storage {
            Storage::Device(m) => Some(m.raw()),
            _ => None,
        }
    }

    /// After a successful cudaFreeAsync: the memory is no longer ours to free.
    pub fn disown(self) {
        if matches!(self.storage, Storage::Device(_)) {
            super::resources::forgotten();
        }
        std::mem::forget(self);
    }

    /// The contents at this moment, while work may still be running (`read`): host-visible memory is read with
    /// volatile loads; device memory is copied on `reader`, a non-blocking stream of its own, so the copy is ordered
    /// after no other stream's work.
    pub fn read_now(&self, reader: sys::cudaStream_t) -> Result<Vec<u32>, sys::cudaError_t> {
        if let Some((ptr, n)) = self.host_words() {
            // SAFETY: ptr holds n words of live host memory; volatile, since the GPU may be writing it.
            return Ok((0..n).map(|i| unsafe { ptr.add(i).read_volatile() }).collect());
        }
        let words = usize::try_from(self.words()).map_err(|_| sys::cudaError::cudaErrorInvalidValue)?;
        let mut out = vec![0u32; words];
        let kind = sys::cudaMemcpyKind::cudaMemcpyDeviceToHost;
        // SAFETY: out has words*4 bytes; copy_ptr is the device allocation of the same size; out outlives the
        // synchronize below.
        check(unsafe { sys::cudaMemcpyAsync(out.as_mut_ptr().cast(), self.copy_ptr(), words * 4, kind, reader) })?;
        // SAFETY: a live stream handle.
        check(unsafe { sys::cudaStreamSynchronize(reader) })?;
        Ok(out)
    }

    /// Frees the memory now and returns CUDA's answer (pageable memory always succeeds).
    pub fn release(self) -> sys::cudaError_t {
        match self.storage {
            Storage::Device(m) | Storage::Managed(m) => m.release(),
            // Kept for the next case that declares this size (see [`pinned_cache`]): cleanup runs after the final
            // device synchronize, so no work uses it.
            Storage::Pinned(m) => pinned_cache::keep(m, usize::try_from(self.bytes).unwrap_or(usize::MAX)),
            Storage::Mapped(m, _) => m.release(),
            Storage::Pageable(_) | Storage::View { .. } => sys::cudaError::cudaSuccess,
        }
    }

    /// Gives up the memory without freeing it, for when a late host function might still read it (a failed
    /// final synchronize leaves no guarantee that callbacks are done).
    pub fn leak(self) {
        std::mem::forget(self);
    }
}

impl Destroy for Buffer {
    /// `destroy BUF`: cudaFree / cudaFreeHost now; on success nothing is left to free.
    fn destroy(&mut self) -> sys::cudaError_t {
        match &mut self.storage {
            Storage::Device(m) | Storage::Managed(m) => m.destroy(),
            Storage::Pinned(m) | Storage::Mapped(m, _) => m.destroy(),
            Storage::Pageable(_) => sys::cudaError::cudaSuccess,
            // The validator refuses `destroy SLICE`: a view has nothing of its own to free.
            Storage::View { .. } => sys::cudaError::cudaErrorInvalidValue,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use sys::cudaMemcpyKind as K;

    #[test]
    fn copy_kind_follows_the_memory_kinds() {
        use MemKind::*;
        assert_eq!(memcpy_kind(Device, Pinned), K::cudaMemcpyHostToDevice);
        assert_eq!(memcpy_kind(Device, Pageable), K::cudaMemcpyHostToDevice);
        assert_eq!(memcpy_kind(Device, Mapped), K::cudaMemcpyHostToDevice);
        assert_eq!(memcpy_kind(Pinned, Device), K::cudaMemcpyDeviceToHost);
        assert_eq!(memcpy_kind(Pageable, Device), K::cudaMemcpyDeviceToHost);
        assert_eq!(memcpy_kind(Device, Device), K::cudaMemcpyDeviceToDevice);
        assert_eq!(memcpy_kind(Pinned, Pageable), K::cudaMemcpyHostToHost);
        assert_eq!(memcpy_kind(Mapped, Pinned), K::cudaMemcpyHostToHost);
    }

    #[test]
    fn a_view_is_a_window_on_its_buffer() {
        let b = Buffer::create(MemKind::Pageable, 64).unwrap();
        let (base, _) = b.host_words().unwrap();
        let v = Buffer::view(&b, 16, 32).unwrap();
        assert_eq!((v.kind, v.bytes, v.words()), (MemKind::Pageable, 32, 8));
        let (ptr, n) = v.host_words().unwrap();
        assert_eq!((ptr as usize - base as usize, n), (16, 8));
        assert!(v.kernel_ptr().is_none(), "a view of pageable memory is no kernel buffer either");
        assert_eq!(v.read().unwrap(), vec![INITIAL_WORD; 8]);
        assert!(Buffer::view(&b, 48, 32).is_err(), "past the end");
        assert!(Buffer::view(&b, 2, 4).is_err(), "not whole words");
        assert_eq!(v.release(), sys::cudaError::cudaSuccess, "a view frees nothing");
        assert_eq!(b.release(), sys::cudaError::cudaSuccess);
    }

    /// A little to read back goes through a vector as large as the largest buffer needs; a lot, through one pinned
    /// chunk of READBACK_WORDS (or, where nothing can be pinned, as without a GPU, the vector again).
    #[test]
    fn the_read_back_chunk_is_pinned_only_for_much_device_memory() {
        let mut little = Readback::for_bytes(4096);
        assert!(little.pinned.is_none());
        assert_eq!(little.chunk(1024).len(), 1024);
        assert_eq!(little.chunk(16).len(), 1024, "grown once, reused");
        assert_eq!(little.chunk(usize::MAX).len(), READBACK_WORDS, "never more than a chunk");
        assert_eq!(little.release(), None);
        let mut much = Readback::for_bytes(PINNED_READBACK_BYTES);
        let pinned = much.pinned.is_some();
        assert_eq!(pinned, crate::device::gpu::probe(0).is_ok());
        assert_eq!(much.chunk(READBACK_WORDS).len(), READBACK_WORDS);
        assert_eq!(much.chunk(16).len(), READBACK_WORDS, "one chunk for every buffer");
        assert_eq!(much.release(), None);
    }

    #[test]
    fn pageable_buffers_need_no_gpu() {
        let b = Buffer::create(MemKind::Pageable, 64).unwrap();
        assert_eq!(b.words(), 16);
        assert!(b.kernel_ptr().is_none());
        assert_eq!(b.host_words().map(|(_, n)| n), Some(16));
        // The pattern, not zero: a check that expects 0 cannot pass on words nobody wrote.
        assert_eq!(b.read().unwrap(), vec![0xCDCD_CDCD; 16]);
        let c = b.contents(&[3], &mut Readback::for_bytes(0)).unwrap();
        assert_eq!((c.words, c.uniform, c.word(3)), (16, Some(0xCDCD_CDCD), Some(0xCDCD_CDCD)));
        assert_eq!(c, Contents::of(&b.read().unwrap(), &[3]), "scanned in place, as if copied");
        assert_eq!(b.release(), sys::cudaError::cudaSuccess);
    }
}
