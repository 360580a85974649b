//! Stream capture: `begin-capture`, `begin-capture-to-graph`, `end-capture`, `capture-status`, `capture-deps`,
//! `update-capture-deps`, `exchange-capture-mode`.

use super::Step;
use crate::case::ast::{CaptureMode, CaptureStatus, StreamRef};
use crate::exec::capture::{self, active_capture_id, capture_info};
use crate::exec::graph_api;
use crate::exec::objects::CaptureBegun;
use crate::exec::resources::Graph;
use crate::exec::sys_words::ToSys;
use crate::record::observations::OpValue;
use cuda_sys as sys;

// Every `unsafe` below is one CUDA call whose pointers were just resolved from live objects of this case (buffers,
// gates, stamp slots, host-call contexts), all kept alive until after the final synchronize.

pub(super) fn begin_capture(x: Step, stream: &StreamRef, mode: CaptureMode) -> Result<(), String> {
    let Step { st, op, t, .. } = x;
    let s = st.stream(stream)?;
    // SAFETY: a live (or built-in) stream handle.
    if t.call(|| unsafe { sys::cudaStreamBeginCapture(s, mode.to_sys()) }) {
        let begun = CaptureBegun { stream: stream.clone(), thread: op.thread.clone() };
        if !st.captures.contains(&begun) {
            st.captures.push(begun);
        }
    }
    Ok(())
}

pub(super) fn end_capture(x: Step, stream: &StreamRef, graph: &str) -> Result<(), String> {
    let Step { ctx, st, index, t, .. } = x;
    let s = st.stream(stream)?;
    st.graph_slot(graph)?;
    // The capture id names this capture's nodes in the node map; once ended, the stream cannot tell it.
    let id = active_capture_id(s);
    let mut raw = std::ptr::null_mut();
    // SAFETY: a live stream handle; raw is a valid out-pointer.
    t.call(|| unsafe { sys::cudaStreamEndCapture(s, &mut raw) });
    let record = capture::graph_record(ctx.case, graph, index, raw, id, &st.nodes);
    st.graph_records.retain(|r| r.name != graph);
    st.graph_records.push(record);
    // A capture begun with begin-capture-to-graph returns the graph it captured into, which a slot owns
    // already: a second owner would destroy it twice.
    match st.graph_owner(raw) {
        None => st.set_graph(graph, (!raw.is_null()).then(|| Graph::from_raw(raw))),
        Some(owner) if owner == *graph => {}
        Some(owner) => st.notes.push(format!("end-capture returned graph {owner}; slot {graph} is unchanged")),
    }
    Ok(())
}

pub(super) fn capture_status(x: Step, stream: &StreamRef) -> Result<(), String> {
    let Step { st, t, .. } = x;
    let s = st.stream(stream)?;
    let mut status = sys::cudaStreamCaptureStatus::cudaStreamCaptureStatusNone;
    // SAFETY: a live (or built-in) stream handle; status is a valid out-pointer.
    if t.call(|| unsafe { sys::cudaStreamIsCapturing(s, &mut status) }) {
        t.value(OpValue::CaptureStatus(CaptureStatus::name_of(status)));
    }
    Ok(())
}

pub(super) fn capture_deps(x: Step, stream: &StreamRef) -> Result<(), String> {
    let Step { ctx, st, t, .. } = x;
    let s = st.stream(stream)?;
    let mut info = None;
    let ok = t.call(|| {
        let (code, i) = capture_info(s);
        info = Some(i);
        code
    });
    if let Some(info) = info.filter(|_| ok) {
        let count = info.dependencies.len() as u64;
        let nodes =
            info.dependencies.iter().map(|&n| graph_api::node_label(ctx.case, st, n).unwrap_or_default()).collect();
        let edge_types = info
            .edge_types
            .iter()
            .map(|&t| match t {
                0 => "default".to_owned(),
                1 => "programmatic".to_owned(),
                other => format!("unknown({other})"),
            })
            .collect();
        let status = CaptureStatus::name_of(info.status);
        t.value(OpValue::CaptureDeps { status, count, nodes, edge_types });
    }
    Ok(())
}

pub(super) fn exchange_capture_mode(x: Step, mode: CaptureMode) -> Result<(), String> {
    let Step { st, op, t, .. } = x;
    let mut previous = mode.to_sys();
    // SAFETY: previous is a valid in/out pointer.
    if t.call(|| unsafe { sys::cudaThreadExchangeStreamCaptureMode(&mut previous) }) {
        t.value(OpValue::PreviousCaptureMode(CaptureMode::name_of(previous)));
        if !st.original_modes.iter().any(|(thread, _)| *thread == op.thread) {
            st.original_modes.push((op.thread.clone(), previous));
        }
    }
    Ok(())
}

pub(super) fn begin_capture_to_graph(
    x: Step,
    stream: &StreamRef,
    graph: &str,
    after: &[String],
    mode: CaptureMode,
) -> Result<(), String> {
    let Step { ctx, st, op, t, .. } = x;
    let (s, g) = (st.stream(stream)?, st.graph(graph)?);
    let deps = graph_api::dependencies(ctx.case, st, after)?;
    let (d, n) = (if deps.is_empty() { std::ptr::null() } else { deps.as_ptr() }, deps.len());
    // SAFETY: live stream and graph; d holds n live nodes (or is null for none).
    if t.call(|| unsafe { sys::compat::stream_begin_capture_to_graph(s, g, d, n, mode.to_sys()) }) {
        let begun = CaptureBegun { stream: stream.clone(), thread: op.thread.clone() };
        if !st.captures.contains(&begun) {
            st.captures.push(begun);
        }
    }
    Ok(())
}

pub(super) fn update_capture_deps(x: Step, stream: &StreamRef, set: bool, nodes: &[String]) -> Result<(), String> {
    let Step { ctx, st, t, .. } = x;
    let s = st.stream(stream)?;
    let mut deps = graph_api::dependencies(ctx.case, st, nodes)?;
    use sys::cudaStreamUpdateCaptureDependenciesFlags as F;
    let flags = if set { F::cudaStreamSetCaptureDependencies.0 } else { F::cudaStreamAddCaptureDependencies.0 };
    let (d, n) = (if deps.is_empty() { std::ptr::null_mut() } else { deps.as_mut_ptr() }, deps.len());
    // SAFETY: a live stream; d holds n live nodes; no edge data.
    t.call(|| unsafe { sys::compat::stream_update_capture_dependencies(s, d, n, flags) });
    Ok(())
}
