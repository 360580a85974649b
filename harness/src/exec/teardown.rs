//! The end of a case, after its script: captures the script left open are ended and capture modes restored (on
//! the threads that own them), then, after the final device synchronize, buffers are read back. Every gate is
//! already open by then, so nothing here can wait on one.

use super::buffers::Readback;
use super::capture::{self, quietly};
use super::devices::CaseDevices;
use super::interpret::Ctx;
use super::objects::{CaptureBegun, Objects, Slot};
use super::resources::Graph;
use super::sys_words::ToSys;
use super::threads::CaseThreads;
use super::BufferReads;
use crate::case::ast::CaptureStatus;
use crate::case::ast::{Case, Decl, Expectation, MemKind, Predicate, StreamRef};
use crate::case::words::Word;
use crate::record::observations::BufferRecord;
use cuda_sys as sys;
use std::sync::PoisonError;

/// Ends every capture still open, on the thread that began it (global and thread-local captures must be ended
/// there), and destroys its graph, so the next case starts with no stream capturing. Returns a note for each.
pub fn end_open_captures<'env>(ctx: &'env Ctx<'env>, threads: &CaseThreads<'_, 'env>) -> Vec<String> {
    let candidates: Vec<CaptureBegun> = {
        let st = ctx.state.lock().unwrap_or_else(PoisonError::into_inner);
        let mut list = st.captures.clone();
        // Streams that joined a capture through an event wait, never through begin-capture: after their origin.
        for (name, slot) in &st.streams {
            let stream = StreamRef::Named(name.clone());
            if matches!(slot, Slot::Ready(_)) && !list.iter().any(|c| c.stream == stream) {
                list.push(CaptureBegun { stream, thread: None });
            }
        }
        list
    };
    let mut notes = Vec::new();
    for begun in candidates {
        let thread = begun.thread.clone();
        match threads.run(thread.as_deref(), move || end_capture_if_open(ctx, &begun.stream)) {
            Ok(Some(note)) => notes.push(note),
            Ok(None) => {}
            Err(why) => notes.push(format!("could not check for an open capture: {why}")),
        }
    }
    notes
}

fn end_capture_if_open(ctx: &Ctx, stream: &StreamRef) -> Option<String> {
    let st = ctx.state.lock().unwrap_or_else(PoisonError::into_inner);
    let s = st.stream(stream).ok()?;
    if s == sys::cudaStreamLegacy || s.is_null() {
        return None;
    }
    let mut status = sys::cudaStreamCaptureStatus::cudaStreamCaptureStatusNone;
    // SAFETY: a live (or built-in) stream handle; status is a valid out-pointer.
    let (code, _) = quietly(|| unsafe { sys::cudaStreamIsCapturing(s, &mut status) });
    if code != sys::cudaError::cudaSuccess || status == sys::cudaStreamCaptureStatus::cudaStreamCaptureStatusNone {
        return None;
    }
    let mut graph = std::ptr::null_mut();
    // SAFETY: as above; graph is a valid out-pointer.
    let (ended, _) = quietly(|| unsafe { sys::cudaStreamEndCapture(s, &mut graph) });
    let released = Graph::from_raw(graph).release();
    Some(format!(
        "the script left a capture on {} ({}); the executor ended it: cudaStreamEndCapture returned {}, destroying \
         its graph {}",
        stream.name(),
        CaptureStatus::name_of(status),
        ended,
        released
    ))
}

/// The graph memory attributes `reset_graph_memory` sets back to 0 (the only value they take): the high-water marks.
const GRAPH_MEMORY_HIGHS: [sys::cudaGraphMemAttributeType; 2] = [
    sys::cudaGraphMemAttributeType::cudaGraphMemAttrUsedMemHigh,
    sys::cudaGraphMemAttributeType::cudaGraphMemAttrReservedMemHigh,
];

/// Gives each of `ordinals` its graph memory as a fresh process has it, after the case released its graphs and
/// executables: what the graphs' allocator still reserves goes back to the driver (`cudaDeviceGraphMemTrim`) and the
/// high-water marks are reset. The device's graph memory is process state that outlives a case; a worker runs many
/// cases, and a later case that reads `graph-mem-get` (or whose graph is mapped onto memory reserved earlier) would
/// otherwise see an earlier case's reservation: stream-memory/graph/captured-alloc-owned-by-graph read 64 MiB in
/// use for its 32 MiB allocation after mem-attrs-unfreed-allocation's 64 MiB had stayed reserved on that device,
/// where its reproducer, a fresh process, read 32 MiB. Returns a note for each call that failed.
pub fn reset_graph_memory(devices: &CaseDevices) -> Vec<String> {
    let mut notes = Vec::new();
    for &ordinal in devices.ordinals() {
        devices.on(ordinal, || {
            // SAFETY: no pointers.
            let (code, _) = quietly(|| unsafe { sys::cudaDeviceGraphMemTrim(ordinal) });
            if code != sys::cudaError::cudaSuccess {
                notes.push(format!("cleanup: cudaDeviceGraphMemTrim({ordinal}) returned {code}"));
            }
            for attr in GRAPH_MEMORY_HIGHS {
                let mut zero = 0u64;
                // SAFETY: zero is a valid u64, the type these attributes take.
                let (code, _) = quietly(|| unsafe {
                    sys::cudaDeviceSetGraphMemAttribute(ordinal, attr, (&mut zero as *mut u64).cast())
                });
                if code != sys::cudaError::cudaSuccess {
                    notes.push(format!(
                        "cleanup: resetting graph memory attribute {} on {ordinal} returned {code}",
                        attr.0
                    ));
                }
            }
        });
    }
    notes
}

/// Gives every case thread that exchanged its capture mode the mode it had before.
pub fn restore_capture_modes<'env>(ctx: &'env Ctx<'env>, threads: &CaseThreads<'_, 'env>) -> Vec<String> {
    let originals = ctx.state.lock().unwrap_or_else(PoisonError::into_inner).original_modes.clone();
    let mut notes = Vec::new();
    for (thread, mode) in originals {
        let restored = threads.run(thread.as_deref(), move || {
            let mut mode = mode;
            // SAFETY: mode is a valid in/out pointer.
            quietly(|| unsafe { sys::cudaThreadExchangeStreamCaptureMode(&mut mode) }).0
        });
        match restored {
            Ok(code) if code == sys::cudaError::cudaSuccess => {}
            Ok(code) => notes.push(format!("restoring a thread's capture mode returned {}", code)),
            Err(why) => notes.push(format!("could not restore a thread's capture mode: {why}")),
        }
    }
    notes
}

/// Final contents of every declared buffer (with [`BufferReads::Named`], of those an expectation names), in
/// declaration order, each read with its device current, and a note if the host memory they were read through
/// could not be freed. Call after the final device synchronize.
pub fn read_buffers(case: &Case, st: &Objects, reads: BufferReads) -> (Vec<BufferRecord>, Option<String>) {
    let kind_of = |buf: &str| {
        case.decls.iter().find_map(|d| match d {
            Decl::Buffer { name, kind, .. } if name == buf => Some(*kind),
            _ => None,
        })
    };
    let wanted: Vec<(&String, MemKind, u64)> = case
        .decls
        .iter()
        .filter(|decl| reads == BufferReads::All || names_buffer(case, decl.name()))
        .filter_map(|decl| match decl {
            // A `later` buffer's contents are undefined until the script writes them (the case language says so):
            // read only when an expectation names it, so that no unwritten memory is read back (initcheck reports
            // such a read, and a record of stale bytes would mean nothing).
            Decl::Buffer { name, later: true, .. } if !names_buffer(case, name) => None,
            Decl::Buffer { name, kind, bytes, .. } => Some((name, *kind, *bytes)),
            // Its buffer is read anyway: a slice only when an expectation names it.
            Decl::Slice { name, of, bytes, .. } if names_buffer(case, name) => Some((name, kind_of(of)?, *bytes)),
            _ => None,
        })
        .collect();
    // Device memory to copy back, on the case's one device (a case on several reads through pageable memory, which
    // every device's copies may write).
    let device_bytes: u64 = if st.devices.is_single() {
        wanted
            .iter()
            .filter_map(|(name, _, _)| st.buffer(name).ok())
            .filter(|buffer| buffer.host_words().is_none())
            .map(|buffer| buffer.bytes)
            .sum()
    } else {
        0
    };
    let mut readback = Readback::for_bytes(device_bytes);
    let records = wanted
        .into_iter()
        .map(|(name, kind, bytes)| {
            let (contents, read_error) = match st.buffer(name) {
                Err(why) => (None, Some(why)),
                Ok(buffer) => {
                    let probes = probe_indices(case, name);
                    match st.devices.on(st.device_of(name), || buffer.contents(&probes, &mut readback)) {
                        Ok(contents) => (Some(contents), None),
                        Err(code) => (None, Some(format!("reading it back returned {}", code))),
                    }
                }
            };
            BufferRecord { name: name.clone(), kind: kind.word().to_owned(), bytes, contents, read_error }
        })
        .collect();
    let note = readback.release().map(|code| format!("cleanup: freeing the pinned read-back chunk returned {code}"));
    (records, note)
}

/// Whether an expectation reads buffer `buf`'s contents.
fn names_buffer(case: &Case, buf: &str) -> bool {
    case.expects
        .iter()
        .flat_map(Expectation::predicates)
        .any(|p| matches!(p, Predicate::BufferEquals { buf: b, .. } if b == buf))
}

/// The word indices of `buf` that the case's expectations name (`BUF[I] == V`), so they are kept even past the
/// first words.
fn probe_indices(case: &Case, buf: &str) -> Vec<u64> {
    let mut indices = Vec::new();
    let mut visit = |p: &Predicate| {
        if let Predicate::BufferEquals { buf: b, index: Some(i), .. } = p {
            if b == buf {
                indices.push(*i);
            }
        }
    };
    for e in &case.expects {
        match e {
            Expectation::Expect(p) | Expectation::Quality(p) => visit(p),
            Expectation::Variant(alternatives) | Expectation::Observe(alternatives) => {
                alternatives.iter().for_each(|(_, p)| visit(p))
            }
            Expectation::Measure(_) => {}
        }
    }
    indices
}

/// Every graph the case still holds, read again after the script: graphs built or changed through the graph API
/// (and bodies of conditional nodes) have no `end-capture` record, and one that has may have changed since. A
/// graph destroyed by the script keeps the record it had.
pub fn record_graphs(case: &Case, st: &mut Objects) {
    let mut live: Vec<(String, sys::cudaGraph_t)> = st
        .graphs
        .iter()
        .filter_map(|(name, slot)| match slot {
            Slot::Ready(g) => Some((name.clone(), g.raw())),
            _ => None,
        })
        .collect();
    live.extend(st.bodies.iter().map(|(name, &raw)| (name.clone(), raw as sys::cudaGraph_t)));
    for (name, raw) in live {
        let record = capture::graph_record(case, &name, case.script.len(), raw, None, &st.nodes);
        st.graph_records.retain(|r| r.name != name);
        st.graph_records.push(record);
    }
}
