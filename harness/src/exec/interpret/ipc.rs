//! Inter-process handles: memory and event handles, and exporting a pool. The handles are kept
//! under the label of the operation that got them, for the operations that open them.

use super::Step;
use crate::case::ast::Decl;
use crate::exec::buffers::Buffer;
use crate::exec::handles::{bytes_of, digest};
use crate::exec::objects::Slot;
use crate::exec::resources::Event;
use crate::record::observations::OpValue;
use cuda_sys as sys;

/// The key an operation's handle or mapping is kept under: its label, or `#INDEX` for an unlabelled one (which no
/// later operation can name, but cleanup must still close).
fn key(x: &Step) -> String {
    x.op.label.clone().unwrap_or_else(|| format!("#{}", x.index))
}

/// `ipc-mem-handle BUF`: cudaIpcGetMemHandle; the value is a digest of the handle.
pub(super) fn mem_handle(x: Step, buf: &str) -> Result<(), String> {
    let ptr = x.st.buffer(buf)?.copy_ptr();
    let mut handle = sys::cudaIpcMemHandle_t::default();
    // SAFETY: handle is a valid out-pointer; ptr a live buffer's pointer.
    if x.t.call(|| unsafe { sys::cudaIpcGetMemHandle(&mut handle, ptr) }) {
        x.t.value(OpValue::Address(digest(bytes_of(&handle))));
        if let Some(l) = x.op.label.clone() {
            x.st.handles.mem.insert(l, handle);
        }
    }
    Ok(())
}

/// `ipc-open-mem L`: cudaIpcOpenMemHandle(&ptr, handle, cudaIpcMemLazyEnablePeerAccess); the value is the pointer.
/// With `as BUF`, the mapping becomes the `later` buffer BUF (a view: closing the mapping is the handle table's).
pub(super) fn open_mem(x: Step, handle: &str, into: &Option<String>) -> Result<(), String> {
    let h = *x.st.handles.mem.get(handle).ok_or_else(|| format!("{handle} got no memory handle"))?;
    let size = |buf: &String| {
        x.ctx.case.decls.iter().find_map(|d| match d {
            Decl::Buffer { name, bytes, .. } if name == buf => Some(*bytes),
            _ => None,
        })
    };
    let bytes = into.as_ref().and_then(size);
    let mut ptr = std::ptr::null_mut();
    // SAFETY: ptr is a valid out-pointer; h a handle cudaIpcGetMemHandle filled.
    if x.t.call(|| unsafe { sys::cudaIpcOpenMemHandle(&mut ptr, h, sys::cudaIpcMemLazyEnablePeerAccess) }) {
        x.t.value(OpValue::Address(ptr as u64));
        let k = key(&x);
        x.st.handles.opened.insert(k, ptr as usize);
        if let (Some(buf), Some(bytes)) = (into, bytes) {
            x.st.buffers.insert(buf.clone(), Slot::Ready(Buffer::mapping(ptr, bytes)));
        }
    }
    Ok(())
}

/// `ipc-close-mem L`: cudaIpcCloseMemHandle of the pointer `ipc-open-mem` L returned.
pub(super) fn close_mem(x: Step, opened: &str) -> Result<(), String> {
    let ptr = *x.st.handles.opened.get(opened).ok_or_else(|| format!("{opened} opened no mapping"))?;
    // SAFETY: a pointer cudaIpcOpenMemHandle returned, not closed yet.
    if x.t.call(|| unsafe { sys::cudaIpcCloseMemHandle(ptr as *mut std::ffi::c_void) }) {
        x.st.handles.opened.remove(opened);
    }
    Ok(())
}

/// `ipc-event-handle EVENT`: cudaIpcGetEventHandle.
pub(super) fn event_handle(x: Step, event: &str) -> Result<(), String> {
    let e = x.st.event(event)?;
    let mut handle = sys::cudaIpcEventHandle_t::default();
    // SAFETY: handle is a valid out-pointer; e a live event.
    if x.t.call(|| unsafe { sys::cudaIpcGetEventHandle(&mut handle, e) }) {
        if let Some(l) = x.op.label.clone() {
            x.st.handles.events.insert(l, handle);
        }
    }
    Ok(())
}

/// `ipc-open-event L into EVENT`: cudaIpcOpenEventHandle into the `later` event slot.
pub(super) fn open_event(x: Step, handle: &str, into: &str) -> Result<(), String> {
    let h = *x.st.handles.events.get(handle).ok_or_else(|| format!("{handle} got no event handle"))?;
    let mut raw = std::ptr::null_mut();
    // SAFETY: raw is a valid out-pointer; h a handle cudaIpcGetEventHandle filled.
    if x.t.call(|| unsafe { sys::cudaIpcOpenEventHandle(&mut raw, h) }) {
        x.st.events.insert(into.to_owned(), Slot::Ready(Event::from_raw(raw)));
    }
    Ok(())
}

/// `[L:] pool-export POOL`: cudaMemPoolExportToShareableHandle as a POSIX file descriptor. With a label the
/// descriptor is kept as `L.fd` (a C `int`, as a call's outputs are kept) for a later call
/// (`cudaMemPoolImportFromShareableHandle shareableHandle=L.fd`) and closed when the case ends; without one it is
/// closed at once.
pub(super) fn pool_export(x: Step, pool: &str) -> Result<(), String> {
    let p = x.st.pool(pool)?;
    let mut fd: i32 = -1;
    let kind = sys::cudaMemAllocationHandleType::cudaMemHandleTypePosixFileDescriptor;
    // SAFETY: for a POSIX descriptor the shareable handle is an int; fd is a valid out-pointer.
    let exported =
        x.t.call(|| unsafe { sys::cudaMemPoolExportToShareableHandle((&mut fd as *mut i32).cast(), p, kind, 0) });
    if exported && fd >= 0 {
        // SAFETY: fd is a descriptor this process now owns and nothing else uses.
        let owned = unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fd) };
        if let Some(label) = &x.op.label {
            x.st.handles.offer_fd(label, fd);
            x.st.handles.exported_fds.push(owned);
        }
    }
    Ok(())
}
