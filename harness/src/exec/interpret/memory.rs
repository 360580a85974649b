//! Copies, memsets and memory: `memcpy`, `memcpy-peer`, `memset` (and their async forms), `read`, `pointer-type`,
//! `malloc`, `malloc-async`, `free-async`, `register`, `unregister`, and `create`/`destroy` of declared objects.

use super::{Step, SUCCESS};
use crate::case::ast::{Case, Decl, MemoryType, StreamRef};
use crate::exec::buffers::{byte_count, Buffer};
use crate::exec::capture::active_capture_id;
use crate::exec::devices;
use crate::exec::resources::{DeviceMemory, Graph};
use crate::exec::sys_words::ToSys;
use crate::record::observations::{Contents, OpValue};
use cuda_sys as sys;

// Every `unsafe` below is one CUDA call whose pointers were just resolved from live objects of this case (buffers,
// gates, stamp slots, host-call contexts), all kept alive until after the final synchronize.

pub(super) fn memcpy(
    x: Step,
    dst: &str,
    src: &str,
    bytes: &Option<u64>,
    inferred: bool,
    stream: &Option<StreamRef>,
) -> Result<(), String> {
    let Step { st, t, .. } = x;
    let (dp, sp, n, kind) = st.copy_operands(dst, src, *bytes)?;
    let kind = if inferred { sys::cudaMemcpyKind::cudaMemcpyDefault } else { kind };
    match stream {
        None => {
            // SAFETY: see above; both buffers hold at least n bytes.
            t.call(|| unsafe { sys::cudaMemcpy(dp, sp, n, kind) });
            Ok(())
        }
        Some(stream) => {
            let s = st.stream(stream)?;
            // SAFETY: as for cudaMemcpy.
            t.call(|| unsafe { sys::cudaMemcpyAsync(dp, sp, n, kind, s) });
            Ok(())
        }
    }
}

pub(super) fn memcpy_peer(
    x: Step,
    dst: &str,
    src: &str,
    bytes: &Option<u64>,
    stream: &Option<StreamRef>,
) -> Result<(), String> {
    let Step { st, t, .. } = x;
    let (dp, sp, n, _) = st.copy_operands(dst, src, *bytes)?;
    let (dd, sd) = (st.device_of(dst), st.device_of(src));
    match stream {
        None => {
            // SAFETY: see above; both device buffers hold at least n bytes.
            t.call(|| unsafe { sys::cudaMemcpyPeer(dp, dd, sp, sd, n) });
        }
        Some(stream) => {
            let s = st.stream(stream)?;
            // SAFETY: as for cudaMemcpyPeer.
            t.call(|| unsafe { sys::cudaMemcpyPeerAsync(dp, dd, sp, sd, n, s) });
        }
    }
    Ok(())
}

pub(super) fn memset(
    x: Step,
    buf: &str,
    byte: u8,
    bytes: &Option<u64>,
    stream: &Option<StreamRef>,
) -> Result<(), String> {
    let Step { st, t, .. } = x;
    let b: &Buffer = st.buffer(buf)?;
    let n = byte_count(*bytes, b.bytes)?;
    let (ptr, value) = (b.memset_ptr(), i32::from(byte));
    match stream {
        None => {
            // SAFETY: see above; the buffer holds at least n bytes.
            t.call(|| unsafe { sys::cudaMemset(ptr, value, n) });
            Ok(())
        }
        Some(stream) => {
            let s = st.stream(stream)?;
            // SAFETY: as for cudaMemset.
            t.call(|| unsafe { sys::cudaMemsetAsync(ptr, value, n, s) });
            Ok(())
        }
    }
}

pub(super) fn pointer_type(x: Step, buf: &str) -> Result<(), String> {
    let Step { st, t, .. } = x;
    let ptr = st.buffer(buf)?.copy_ptr();
    let mut attributes = sys::cudaPointerAttributes::default();
    // SAFETY: attributes is a valid out-pointer; CUDA only classifies the address, it does not access it.
    if t.call(|| unsafe { sys::cudaPointerGetAttributes(&mut attributes, ptr) }) {
        t.value(OpValue::PointerType(MemoryType::name_of(attributes.type_)));
    }
    Ok(())
}

pub(super) fn destroy(x: Step, name: &str) -> Result<(), String> {
    let Step { st, t, .. } = x;
    st.destroy(name, |destroy| t.call(destroy))?;
    st.registered.retain(|r| r != name);
    Ok(())
}

pub(super) fn create(x: Step, name: &str) -> Result<(), String> {
    let Step { ctx, st, t, .. } = x;
    let decl = ctx.case.decls.iter().find(|d| d.name() == name).ok_or_else(|| format!("no {name} is declared"))?;
    if matches!(decl, Decl::Graph { .. }) {
        // A graph slot: an empty graph (cudaGraphCreate) replaces whatever it held.
        st.graph_slot(name)?;
        let mut raw = std::ptr::null_mut();
        // SAFETY: raw is a valid out-pointer; flags must be 0.
        t.call(|| unsafe { sys::cudaGraphCreate(&mut raw, 0) });
        st.set_graph(name, (!raw.is_null()).then(|| Graph::from_raw(raw)));
        return Ok(());
    }
    if !st.creatable(name) {
        return Err(format!("{name} exists already"));
    }
    if t.call(|| st.create_declared(decl, ctx.device, false)) && !ctx.devices.is_single() {
        // Made on the thread's current device, which the script chose: cleanup frees it there.
        if let Ok(ordinal) = devices::current() {
            st.place(name, ordinal);
        }
    }
    Ok(())
}

pub(super) fn malloc_async(x: Step, buf: &str, stream: &StreamRef, pool: &Option<String>) -> Result<(), String> {
    let Step { ctx, st, t, .. } = x;
    let s = st.stream(stream)?;
    let p = pool.as_ref().map(|p| st.pool(p)).transpose()?;
    if !st.creatable(buf) {
        return Err(format!("{buf} exists already"));
    }
    let bytes = declared_bytes(ctx.case, buf)?;
    let n = usize::try_from(bytes).map_err(|e| e.to_string())?;
    let mut raw = std::ptr::null_mut();
    let ok = match p {
        // SAFETY: raw is a valid out-pointer; s a live stream; p a live pool.
        Some(p) => t.call(|| unsafe { sys::cudaMallocFromPoolAsync(&mut raw, n, p, s) }),
        // SAFETY: raw is a valid out-pointer; s a live stream.
        None => t.call(|| unsafe { sys::cudaMallocAsync(&mut raw, n, s) }),
    };
    if ok {
        st.set_async_buffer(buf, raw, bytes);
        t.value(OpValue::Address(raw as u64));
        // Captured, it is a memory-allocation node: the graph owns the address (cudaFree of it would be an
        // error of ours); eager, the case owns it.
        st.graph_memory.retain(|b| b != buf);
        if active_capture_id(s).is_some() {
            st.graph_memory.push(buf.to_owned());
        }
    }
    Ok(())
}

pub(super) fn free_async(x: Step, buf: &str, stream: &StreamRef) -> Result<(), String> {
    let Step { st, t, .. } = x;
    let s = st.stream(stream)?;
    let raw = st.buffer(buf)?.device_raw().ok_or_else(|| format!("{buf} is not device memory"))?;
    let capturing = active_capture_id(s).is_some();
    // SAFETY: raw is the buffer's live device allocation; s a live stream. On success the buffer no longer
    // owns it.
    if t.call(|| unsafe { sys::cudaFreeAsync(raw, s) }) {
        if capturing {
            // A memory-free node: the address stays the graph's, and nodes of the graph (set-node,
            // exec-set-node) may still name the buffer; the graph frees it, never the case.
            if !st.graph_memory.iter().any(|b| b == buf) {
                st.graph_memory.push(buf.to_owned());
            }
            st.graph_freed.push(buf.to_owned());
        } else {
            st.forget_buffer(buf);
        }
    }
    Ok(())
}

pub(super) fn register(x: Step, buf: &str) -> Result<(), String> {
    let Step { st, t, .. } = x;
    let b = st.buffer(buf)?;
    let (ptr, n) = (b.copy_ptr(), usize::try_from(b.bytes).map_err(|e| e.to_string())?);
    // SAFETY: ptr is the live pageable allocation of n bytes; it is unregistered before it is freed.
    if t.call(|| unsafe { sys::cudaHostRegister(ptr, n, 0) }) {
        st.registered.push(buf.to_owned());
    }
    Ok(())
}

pub(super) fn unregister(x: Step, buf: &str) -> Result<(), String> {
    let Step { st, t, .. } = x;
    let ptr = st.buffer(buf)?.copy_ptr();
    // SAFETY: ptr is a live host allocation; CUDA checks whether it is registered.
    if t.call(|| unsafe { sys::cudaHostUnregister(ptr) }) {
        st.registered.retain(|r| r != buf);
    }
    Ok(())
}

pub(super) fn read(x: Step, buf: &str) -> Result<(), String> {
    let Step { st, t, .. } = x;
    let needs_reader = st.buffer(buf)?.host_words().is_none();
    let reader = if needs_reader {
        st.reader().map_err(|code| format!("creating the read stream returned {code}"))?
    } else {
        std::ptr::null_mut()
    };
    let b = st.buffer(buf)?;
    let mut words = Vec::new();
    if t.call(|| match b.read_now(reader) {
        Ok(w) => {
            words = w;
            SUCCESS
        }
        Err(code) => code,
    }) {
        t.value(OpValue::Snapshot(Contents::of(&words, &[])));
    }
    Ok(())
}

pub(super) fn malloc(x: Step, bytes: u64) -> Result<(), String> {
    let Step { st, t, .. } = x;
    let n = usize::try_from(bytes).map_err(|e| e.to_string())?;
    let mut raw = std::ptr::null_mut();
    // SAFETY: raw is a valid out-pointer.
    t.call(|| unsafe { sys::cudaMalloc(&mut raw, n) });
    if !raw.is_null() {
        st.allocations.push(DeviceMemory::from_raw(raw));
    }
    Ok(())
}

/// The size of buffer `name` as declared.
pub(super) fn declared_bytes(case: &Case, name: &str) -> Result<u64, String> {
    case.decls
        .iter()
        .find_map(|d| match d {
            Decl::Buffer { name: n, bytes, .. } if n == name => Some(*bytes),
            _ => None,
        })
        .ok_or_else(|| format!("no buffer {name} is declared"))
}
