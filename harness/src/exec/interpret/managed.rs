//! Managed memory: `attach`, `prefetch`, `advise`, `malloc-managed`.

use super::Step;
use crate::case::ast::{Advice, AttachMode, MemPlace, StreamRef};
use crate::exec::resources::DeviceMemory;
use cuda_sys as sys;

/// The `cudaMemLocation` of a place: the case's device 0, or the host.
fn location(x: &Step, place: MemPlace) -> sys::cudaMemLocation {
    use sys::cudaMemLocationType as L;
    match place {
        MemPlace::Device => sys::compat::mem_location(L::cudaMemLocationTypeDevice, x.ctx.devices.ordinal(0)),
        MemPlace::Host => sys::compat::mem_location(sys::compat::cudaMemLocationTypeHost, 0),
    }
}

/// `attach BUF on STREAM global|host|single [bytes N]`: cudaStreamAttachMemAsync(stream, ptr, N or 0, flag).
pub(super) fn attach(
    x: Step,
    buf: &str,
    stream: &StreamRef,
    mode: AttachMode,
    bytes: Option<u64>,
) -> Result<(), String> {
    let s = x.st.stream(stream)?;
    let ptr = x.st.buffer(buf)?.copy_ptr();
    let length = usize::try_from(bytes.unwrap_or(0)).map_err(|e| e.to_string())?;
    let flags = match mode {
        AttachMode::Global => sys::cudaMemAttachGlobal,
        AttachMode::Host => sys::cudaMemAttachHost,
        AttachMode::Single => sys::cudaMemAttachSingle,
    };
    // SAFETY: a live buffer's pointer and a live (or built-in) stream; CUDA validates the rest.
    x.t.call(|| unsafe { sys::cudaStreamAttachMemAsync(s, ptr, length, flags) });
    Ok(())
}

/// `prefetch BUF to device|host on STREAM`: the whole buffer, flags 0.
pub(super) fn prefetch(x: Step, buf: &str, to: MemPlace, stream: &StreamRef) -> Result<(), String> {
    let loc = location(&x, to);
    let s = x.st.stream(stream)?;
    let b = x.st.buffer(buf)?;
    let (ptr, bytes) = (b.copy_ptr().cast_const(), usize::try_from(b.bytes).map_err(|e| e.to_string())?);
    // SAFETY: a live buffer of `bytes` bytes and a live (or built-in) stream.
    x.t.call(|| unsafe { sys::compat::mem_prefetch_async(ptr, bytes, loc, 0, s) });
    Ok(())
}

/// `advise BUF ADVICE device|host`: the whole buffer.
pub(super) fn advise(x: Step, buf: &str, advice: Advice, place: MemPlace) -> Result<(), String> {
    use sys::cudaMemoryAdvise as A;
    let loc = location(&x, place);
    let b = x.st.buffer(buf)?;
    let (ptr, bytes) = (b.copy_ptr().cast_const(), usize::try_from(b.bytes).map_err(|e| e.to_string())?);
    let advice = match advice {
        Advice::ReadMostly => A::cudaMemAdviseSetReadMostly,
        Advice::UnsetReadMostly => A::cudaMemAdviseUnsetReadMostly,
        Advice::PreferredLocation => A::cudaMemAdviseSetPreferredLocation,
        Advice::UnsetPreferredLocation => A::cudaMemAdviseUnsetPreferredLocation,
        Advice::AccessedBy => A::cudaMemAdviseSetAccessedBy,
        Advice::UnsetAccessedBy => A::cudaMemAdviseUnsetAccessedBy,
    };
    // SAFETY: a live buffer of `bytes` bytes.
    x.t.call(|| unsafe { sys::compat::mem_advise(ptr, bytes, advice, loc) });
    Ok(())
}

/// `malloc-managed BYTES [host]`: cudaMallocManaged; what it returns is freed at cleanup.
pub(super) fn malloc_managed(x: Step, bytes: u64, host: bool) -> Result<(), String> {
    let size = usize::try_from(bytes).map_err(|e| e.to_string())?;
    let flags = if host { sys::cudaMemAttachHost } else { sys::cudaMemAttachGlobal };
    let mut raw = std::ptr::null_mut();
    // SAFETY: raw is a valid out-pointer.
    if x.t.call(|| unsafe { sys::cudaMallocManaged(&mut raw, size, flags) }) && !raw.is_null() {
        x.st.handles.managed.push(DeviceMemory::from_raw(raw));
    }
    Ok(())
}
