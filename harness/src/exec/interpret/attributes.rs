//! Batched copies, stream identity and launch attributes: `memcpy-batch`, `memcpy-3d-batch`,
//! `stream-device`, `stream-id`, `stream-attr`, `set-stream-attr`, `copy-stream-attrs`, `node-attr`,
//! `set-node-attr`.

use super::Step;
use crate::case::ast::{AttrValue, LaunchAttr, Priority, SrcAccessOrder, StreamRef};
use crate::exec::graph_api;
use crate::exec::sys_words::ToSys;
use crate::record::observations::OpValue;
use cuda_sys as sys;

// Every `unsafe` below is one CUDA call whose pointers were just resolved from live objects of this case (buffers,
// streams, graph nodes), all kept alive until after the final synchronize, or point at locals of the call.

/// One cudaMemcpyBatchAsync (or cudaMemcpy3DBatchAsync) of every pair, each the smaller buffer's size; every
/// attributes entry has `order`, one per `attrs_at` index (default the single index 0).
pub(super) fn memcpy_batch(
    x: Step,
    copies: &[(String, String)],
    stream: &StreamRef,
    order: SrcAccessOrder,
    attrs_at: &Option<Vec<u64>>,
    three_d: bool,
) -> Result<(), String> {
    let Step { st, t, .. } = x;
    let mut dsts = Vec::with_capacity(copies.len());
    let mut srcs = Vec::with_capacity(copies.len());
    let mut sizes = Vec::with_capacity(copies.len());
    for (dst, src) in copies {
        let (dp, sp, n, _) = st.copy_operands(dst, src, None)?;
        dsts.push(dp);
        srcs.push(sp);
        sizes.push(n);
    }
    let s = st.stream(stream)?;
    let order = order.to_sys();
    let idxs: Vec<usize> = attrs_at.as_deref().unwrap_or(&[0]).iter().map(|&i| i as usize).collect();
    let orders = vec![order; idxs.len()];
    let mut fail_idx = usize::MAX;
    if three_d {
        // SAFETY: see above; the arrays hold copies.len() entries.
        t.call(|| unsafe {
            sys::compat::memcpy_3d_batch_async(
                dsts.as_ptr(),
                srcs.as_ptr(),
                sizes.as_ptr(),
                dsts.len(),
                order,
                &mut fail_idx,
                s,
            )
        });
    } else {
        // SAFETY: see above; dsts, srcs, sizes hold copies.len() entries, orders and idxs idxs.len().
        t.call(|| unsafe {
            sys::compat::memcpy_batch_async(
                dsts.as_ptr(),
                srcs.as_ptr(),
                sizes.as_ptr(),
                dsts.len(),
                orders.as_ptr(),
                idxs.as_ptr(),
                idxs.len(),
                &mut fail_idx,
                s,
            )
        });
    }
    Ok(())
}

pub(super) fn stream_device(x: Step, stream: &StreamRef) -> Result<(), String> {
    let Step { st, t, .. } = x;
    let s = st.stream(stream)?;
    let mut device = -1;
    // SAFETY: a live (or built-in) stream handle; device is a valid out-pointer.
    if t.call(|| unsafe { sys::compat::stream_get_device(s, &mut device) }) {
        t.value(OpValue::Device(device));
    }
    Ok(())
}

pub(super) fn stream_id(x: Step, stream: &StreamRef) -> Result<(), String> {
    let Step { st, t, .. } = x;
    let s = st.stream(stream)?;
    let mut id = 0;
    // SAFETY: a live (or built-in) stream handle; id is a valid out-pointer.
    if t.call(|| unsafe { sys::cudaStreamGetId(s, &mut id) }) {
        t.value(OpValue::Number(id));
    }
    Ok(())
}

/// The attribute value to set: a priority resolved against the device's range, or a domain.
fn to_value(value: &AttrValue, range: (i32, i32)) -> sys::cudaLaunchAttributeValue {
    // SAFETY: all zero is a valid attribute value (a union of plain data) before one member is set.
    let mut v: sys::cudaLaunchAttributeValue = unsafe { std::mem::zeroed() };
    match value {
        AttrValue::Priority(p) => {
            v.priority = match p {
                Priority::Value(n) => *n,
                Priority::Greatest => range.0,
                Priority::Least => range.1,
            }
        }
        AttrValue::MemSyncDomain(d) => v.memSyncDomain = d.to_sys(),
    }
    v
}

/// What a read attribute holds, as the record keeps it.
fn read_value(attr: LaunchAttr, v: &sys::cudaLaunchAttributeValue, range: (i32, i32)) -> OpValue {
    // SAFETY: the member read is the one the attribute ID selects, which the call just wrote.
    match attr {
        LaunchAttr::Priority => {
            OpValue::StreamPriority { value: unsafe { v.priority }, greatest: range.0, least: range.1 }
        }
        LaunchAttr::MemSyncDomain => OpValue::Number(u64::from(unsafe { v.memSyncDomain }.0)),
    }
}

pub(super) fn stream_attr(x: Step, stream: &StreamRef, value: &AttrValue) -> Result<(), String> {
    let Step { ctx, st, t, .. } = x;
    let s = st.stream(stream)?;
    let attr = value.attr();
    // SAFETY: all zero is a valid attribute value.
    let mut out: sys::cudaLaunchAttributeValue = unsafe { std::mem::zeroed() };
    // SAFETY: a live (or built-in) stream; out is a valid out-pointer.
    if t.call(|| unsafe { sys::cudaStreamGetAttribute(s, attr.to_sys(), &mut out) }) {
        t.value(read_value(attr, &out, ctx.device.stream_priority_range));
    }
    Ok(())
}

pub(super) fn set_stream_attr(x: Step, stream: &StreamRef, value: &AttrValue) -> Result<(), String> {
    let Step { ctx, st, t, .. } = x;
    let s = st.stream(stream)?;
    let v = to_value(value, ctx.device.stream_priority_range);
    // SAFETY: a live (or built-in) stream; v lives until the call returns.
    t.call(|| unsafe { sys::cudaStreamSetAttribute(s, value.attr().to_sys(), &v) });
    Ok(())
}

pub(super) fn copy_stream_attrs(x: Step, dst: &StreamRef, src: &StreamRef) -> Result<(), String> {
    let Step { st, t, .. } = x;
    let (d, s) = (st.stream(dst)?, st.stream(src)?);
    // SAFETY: live (or built-in) streams.
    t.call(|| unsafe { sys::cudaStreamCopyAttributes(d, s) });
    Ok(())
}

pub(super) fn node_attr(x: Step, node: &str, value: &AttrValue) -> Result<(), String> {
    let Step { ctx, st, t, .. } = x;
    let n = graph_api::dependencies(ctx.case, st, &[node.to_owned()])?[0];
    let attr = value.attr();
    // SAFETY: all zero is a valid attribute value.
    let mut out: sys::cudaLaunchAttributeValue = unsafe { std::mem::zeroed() };
    // SAFETY: a live node of a live graph; out is a valid out-pointer.
    if t.call(|| unsafe { sys::cudaGraphKernelNodeGetAttribute(n, attr.to_sys(), &mut out) }) {
        t.value(read_value(attr, &out, ctx.device.stream_priority_range));
    }
    Ok(())
}

pub(super) fn set_node_attr(x: Step, node: &str, value: &AttrValue) -> Result<(), String> {
    let Step { ctx, st, t, .. } = x;
    let n = graph_api::dependencies(ctx.case, st, &[node.to_owned()])?[0];
    let v = to_value(value, ctx.device.stream_priority_range);
    // SAFETY: a live node of a live graph; v lives until the call returns.
    t.call(|| unsafe { sys::cudaGraphKernelNodeSetAttribute(n, value.attr().to_sys(), &v) });
    Ok(())
}
