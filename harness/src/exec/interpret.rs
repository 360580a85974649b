//! The operation interpreter: runs one script operation through cuda-sys on the calling thread and records its
//! return code and host times. Operands are resolved before the clock starts, so the recorded interval is the CUDA
//! call alone (the blocking oracle).

use super::buffers::{byte_count, Buffer};
use super::capture::{self, active_capture_id, capture_info};
use super::clock::CaseClock;
use super::devices::{self, CaseDevices};
use super::gates::{GateKeeper, GateSet};
use super::graph_api;
use super::host_calls::{host_func_entry, stream_callback_entry, HostCallContext, HostLog};
use super::objects::{acceptable, CaptureBegun, Objects};
use super::pools;
use super::resources::{DeviceMemory, Graph, GraphExec};
use super::stamps::StampPool;
use super::sys_words::ToSys;
use super::timing::EventTiming;
use super::ExecOptions;
use crate::case::ast::{
    CaptureMode, CaptureStatus, Case, ComputeShape, Decl, Fault, Grid, InstantiateFlag, InstantiateResult, MemoryType,
    NodeSpec, Op, OpKind, StreamRef, Target, UpdateResult,
};
use crate::case::print::op_kind as op_text;
use crate::case::words::Word;
use crate::device::gpu::DeviceInfo;
use crate::device::kernels::KernelTable;
use crate::record::observations::{Contents, GateOpener, HostCallKind, OpRecord, OpValue};
use cuda_sys as sys;
use std::ffi::c_void;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

const SUCCESS: sys::cudaError_t = sys::cudaError::cudaSuccess;

/// Everything an operation may touch, shared by the case's threads (each operation runs alone: the script's thread
/// waits for it).
pub struct Ctx<'a> {
    pub case: &'a Case,
    pub kernels: &'a KernelTable,
    pub device: &'a DeviceInfo,
    /// The ordinal of each device index the case names.
    pub devices: &'a CaseDevices,
    pub opts: &'a ExecOptions,
    pub clock: CaseClock,
    pub gates: &'a GateSet,
    pub stamps: &'a StampPool,
    pub log: &'a Arc<HostLog>,
    pub state: &'a Mutex<Objects>,
    pub keeper: &'a GateKeeper,
    pub timing: &'a EventTiming,
}

/// The record of operation `index` before it runs: code `None` until it does.
pub fn new_record(case: &Case, index: usize) -> OpRecord {
    let op = &case.script[index];
    OpRecord {
        index,
        line: case.positions.op_lines.get(index).copied().unwrap_or(0),
        label: op.label.clone(),
        thread: op.thread.clone(),
        text: op_text(&op.kind),
        code: None,
        acceptable: acceptable(&op.expect),
        start_ns: 0,
        end_ns: 0,
        value: None,
        not_run: None,
    }
}

/// Runs operation `index` on the calling thread.
pub fn run_op(ctx: &Ctx, index: usize) -> OpRecord {
    let op = &ctx.case.script[index];
    let mut record = new_record(ctx.case, index);
    let mut state = ctx.state.lock().unwrap_or_else(PoisonError::into_inner);
    // Under `timing: events`, events on the operation's stream before and after it, outside its host timing.
    let bracket = op.kind.work_stream().and_then(|s| state.stream(s).ok()).and_then(|s| ctx.timing.before(index, s));
    let mut timed = Timed { clock: ctx.clock, record: &mut record, repeat: op.repeat.max(1) };
    let outcome = interpret(ctx, &mut state, index, op, &mut timed);
    if let Some(bracket) = bracket {
        bracket.finish(outcome.is_ok());
    }
    if let Err(why) = outcome {
        record.not_run = Some(why);
        return record;
    }
    let stream = op.kind.capture_stream().and_then(|s| state.stream(s).ok());
    // Legacy (and null, which is legacy here) can never capture: asking would only produce errors.
    if let Some(stream) = stream.filter(|&s| s != sys::cudaStreamLegacy && !s.is_null()) {
        if record.code.as_deref() == Some("cudaSuccess") {
            if let Some(note) = state.nodes.learn(stream, index) {
                state.notes.push(format!("line {}: {note}", record.line));
            }
        }
    }
    record
}

/// Times one call into the record.
struct Timed<'r> {
    clock: CaseClock,
    record: &'r mut OpRecord,
    /// `repeat N`: the call is made N times, back to back, until one fails.
    repeat: u32,
}

impl Timed<'_> {
    /// Runs and times `f` (`repeat` times, stopping at a failure, whose code is the one recorded); true if it
    /// returned cudaSuccess every time.
    fn call(&mut self, mut f: impl FnMut() -> sys::cudaError_t) -> bool {
        self.record.start_ns = self.clock.now_ns();
        let mut code = f();
        for _ in 1..self.repeat {
            if code != SUCCESS {
                break;
            }
            code = f();
        }
        self.record.end_ns = self.clock.now_ns();
        self.record.code = Some(code.to_string());
        code == SUCCESS
    }

    /// Host-only operations (open, sleep) cannot fail.
    fn host(&mut self, f: impl FnOnce()) {
        let mut f = Some(f);
        self.call(|| {
            if let Some(f) = f.take() {
                f();
            }
            SUCCESS
        });
    }

    fn value(&mut self, value: OpValue) {
        self.record.value = Some(value);
    }
}

/// Runs `op`; `Err` says why it could not be run.
fn interpret(ctx: &Ctx, st: &mut Objects, index: usize, op: &Op, t: &mut Timed) -> Result<(), String> {
    let k = ctx.kernels;
    let stamp = ctx.stamps.slot(index);
    // Every `unsafe` below is one CUDA call whose pointers were just resolved from live objects of this case
    // (buffers, gates, stamp slots, host-call contexts), all kept alive until after the final synchronize.
    match &op.kind {
        OpKind::LaunchGate { gate, stream } => {
            let s = st.stream(stream)?;
            let g = ctx.gates.index(gate).ok_or_else(|| format!("no gate {gate} is declared"))?;
            let (flag, timed_out) = ctx.gates.kernel_args(g).ok_or_else(|| format!("gate {gate} was not created"))?;
            let timeout = ctx.opts.gate_timeout_ns;
            // SAFETY: see above; the gate kernel reads `flag` and may write `timed_out` and `stamp`.
            t.call(|| unsafe { k.launch_gate(flag, timeout, timed_out, stamp, s) });
            Ok(())
        }
        OpKind::LaunchSpin { ns, stream, shape } => {
            let s = st.stream(stream)?;
            let blocks = match shape.grid {
                Grid::Blocks(n) => n,
                Grid::Full => {
                    let per_sm = resident_blocks_per_sm(k.spin, shape.block, shape.shared_bytes);
                    let blocks = per_sm.saturating_mul(ctx.device.multiprocessors.max(1));
                    t.value(OpValue::GridBlocks(blocks));
                    blocks
                }
            };
            let func = if shape.trigger { k.spin_trigger } else { k.spin };
            let programmatic = shape.programmatic;
            let shape = (blocks, shape.block, usize::try_from(shape.shared_bytes).map_err(|e| e.to_string())?);
            if programmatic {
                let (mut n, mut p) = (*ns, stamp);
                // SAFETY: see above; the arguments match cc_spin's (u64, u64*).
                t.call(|| unsafe {
                    crate::device::kernels::launch_programmatic(
                        func,
                        shape,
                        &mut [crate::device::kernels::arg(&mut n), crate::device::kernels::arg(&mut p)],
                        s,
                    )
                });
            } else {
                // SAFETY: see above.
                t.call(|| unsafe { k.launch_spin_shaped(func, *ns, stamp, shape, s) });
            }
            Ok(())
        }
        OpKind::LaunchLazySpin { ns, stream } => {
            let s = st.stream(stream)?;
            // SAFETY: see above.
            t.call(|| unsafe { k.launch_spin_shaped(k.lazy_spin, *ns, stamp, (1, 1, 0), s) });
            Ok(())
        }
        OpKind::LaunchFault { fault, stream } => {
            let s = st.stream(stream)?;
            let mode = match fault {
                Fault::IllegalAddress => 0,
                Fault::Trap => 1,
            };
            // SAFETY: see above; the kernel faults on purpose, which only poisons this process's context.
            t.call(|| unsafe { k.launch_fault(mode, stamp, s) });
            Ok(())
        }
        OpKind::LaunchFill { buf, value, stream } => {
            let s = st.stream(stream)?;
            let (ptr, n) = st.kernel_buffer(buf)?;
            // SAFETY: see above; ptr holds n words.
            t.call(|| unsafe { k.launch_fill(ptr, n, *value, stamp, s) });
            Ok(())
        }
        OpKind::LaunchTransform { buf, mul, add, stream } => {
            let s = st.stream(stream)?;
            let (ptr, n) = st.kernel_buffer(buf)?;
            // SAFETY: see above; ptr holds n words.
            t.call(|| unsafe { k.launch_transform(ptr, n, *mul, *add, stamp, s) });
            Ok(())
        }
        OpKind::LaunchCompare { a, b, into, stream } => {
            let s = st.stream(stream)?;
            let (pa, na) = st.kernel_buffer(a)?;
            let (pb, nb) = st.kernel_buffer(b)?;
            let (pr, _) = st.kernel_buffer(into)?;
            // SAFETY: see above; both inputs hold at least min(na, nb) words, the result at least one.
            t.call(|| unsafe { k.launch_compare(pa, pb, na.min(nb), pr, stamp, s) });
            Ok(())
        }
        OpKind::LaunchVecAdd { a, b, into, stream, shape } => {
            let s = st.stream(stream)?;
            let (pa, na) = st.kernel_buffer(a)?;
            let (pb, nb) = st.kernel_buffer(b)?;
            let (pc, nc) = st.kernel_buffer(into)?;
            let n = nc.min(na).min(nb);
            let (grid, block) = compute_shape(ctx, t, k.vecadd, shape, Some(n));
            let buffers = (pa.cast_const().cast::<f32>(), pb.cast_const().cast::<f32>(), pc.cast::<f32>());
            // SAFETY: see above; each buffer holds at least n words (floats).
            t.call(|| unsafe { k.launch_vecadd(buffers, n, (grid, block), stamp, s) });
            Ok(())
        }
        OpKind::LaunchSinCos { buf, iterations, stream, shape } => {
            let s = st.stream(stream)?;
            let (ptr, n) = st.kernel_buffer(buf)?;
            let (grid, block) = compute_shape(ctx, t, k.sincos, shape, Some(n));
            // SAFETY: see above; ptr holds n words (floats).
            t.call(|| unsafe { k.launch_sincos(ptr.cast(), n, *iterations, (grid, block), stamp, s) });
            Ok(())
        }
        OpKind::LaunchSleep { cycles, stream, shape } => {
            let s = st.stream(stream)?;
            let cycles = i64::try_from(*cycles).map_err(|_| format!("{cycles} cycles do not fit a long long"))?;
            let (grid, block) = compute_shape(ctx, t, k.sleep, shape, None);
            // SAFETY: see above; the kernel touches only its stamp slot.
            t.call(|| unsafe { k.launch_sleep(cycles, (grid, block), stamp, s) });
            Ok(())
        }
        OpKind::Memcpy { dst, src, bytes, inferred, stream } => {
            let (dp, sp, n, kind) = st.copy_operands(dst, src, *bytes)?;
            let kind = if *inferred { sys::cudaMemcpyKind::cudaMemcpyDefault } else { kind };
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
        OpKind::MemcpyPeer { dst, src, bytes, stream } => {
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
        OpKind::Memset { buf, byte, bytes, stream } => {
            let b: &Buffer = st.buffer(buf)?;
            let n = byte_count(*bytes, b.bytes)?;
            let (ptr, value) = (b.memset_ptr(), i32::from(*byte));
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
        OpKind::Record { event, stream, external } => {
            let (e, s) = (st.event(event)?, st.stream(stream)?);
            if *external {
                // SAFETY: live event and stream handles.
                t.call(|| unsafe { sys::cudaEventRecordWithFlags(e, s, sys::cudaEventRecordExternal) });
            } else {
                // SAFETY: live event and stream handles.
                t.call(|| unsafe { sys::cudaEventRecord(e, s) });
            }
            Ok(())
        }
        OpKind::Wait { stream, event, external } => {
            let (s, e) = (st.stream(stream)?, st.event(event)?);
            let flags = if *external { sys::cudaEventWaitExternal } else { 0 };
            // SAFETY: live stream and event handles.
            t.call(|| unsafe { sys::cudaStreamWaitEvent(s, e, flags) });
            Ok(())
        }
        OpKind::Query { target } => {
            match target {
                // SAFETY: a live (or built-in) stream handle.
                Target::Stream(stream) => call_on_stream(st, stream, t, |s| unsafe { sys::cudaStreamQuery(s) })?,
                // SAFETY: a live event handle.
                Target::Event(event) => call_on_event(st, event, t, |e| unsafe { sys::cudaEventQuery(e) })?,
            }
            Ok(())
        }
        OpKind::Sync { target } => {
            match target {
                // SAFETY: a live (or built-in) stream handle.
                Target::Stream(stream) => call_on_stream(st, stream, t, |s| unsafe { sys::cudaStreamSynchronize(s) })?,
                // SAFETY: a live event handle.
                Target::Event(event) => call_on_event(st, event, t, |e| unsafe { sys::cudaEventSynchronize(e) })?,
            }
            Ok(())
        }
        OpKind::DeviceSync => {
            // SAFETY: no arguments.
            t.call(|| unsafe { sys::cudaDeviceSynchronize() });
            Ok(())
        }
        OpKind::Elapsed { start, stop } => {
            let (a, b) = (st.event(start)?, st.event(stop)?);
            let mut ms = 0f32;
            // SAFETY: live event handles; ms is a valid out-pointer.
            if t.call(|| unsafe { sys::cudaEventElapsedTime(&mut ms, a, b) }) {
                t.value(OpValue::ElapsedMs(f64::from(ms)));
            }
            Ok(())
        }
        OpKind::HostFunc { stream, snapshot, hold } => {
            let s = st.stream(stream)?;
            let view = match snapshot {
                None => None,
                Some(name) => Some(
                    st.buffer(name)?
                        .host_words()
                        .ok_or_else(|| format!("a snapshot needs host-visible memory; {name} is device memory"))?,
                ),
            };
            let mut context = HostCallContext::new(ctx.log, index, HostCallKind::HostFunc, view);
            if let Some(gate) = hold {
                let g = ctx.gates.index(gate).ok_or_else(|| format!("no gate {gate} is declared"))?;
                let flag = ctx.gates.host_flag(g).ok_or_else(|| format!("gate {gate} was not created"))?;
                context = context.holding(flag);
            }
            let user_data = keep_context(st, context);
            // SAFETY: see above; the context outlives every call CUDA can make with it.
            t.call(|| unsafe { sys::cudaLaunchHostFunc(s, Some(host_func_entry), user_data) });
            Ok(())
        }
        OpKind::Callback { stream } => {
            let s = st.stream(stream)?;
            let user_data = keep_context(st, HostCallContext::new(ctx.log, index, HostCallKind::Callback, None));
            // SAFETY: as for host functions; flags must be 0.
            t.call(|| unsafe { sys::cudaStreamAddCallback(s, Some(stream_callback_entry), user_data, 0) });
            Ok(())
        }
        OpKind::BeginCapture { stream, mode } => {
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
        OpKind::EndCapture { stream, graph } => {
            let s = st.stream(stream)?;
            st.graph_slot(graph)?;
            // The capture id names this capture's nodes in the node map; once ended, the stream cannot tell it.
            let id = active_capture_id(s);
            let mut raw = std::ptr::null_mut();
            // SAFETY: a live stream handle; raw is a valid out-pointer.
            t.call(|| unsafe { sys::cudaStreamEndCapture(s, &mut raw) });
            let record = capture::graph_record(ctx.case, graph, index, raw, id, &st.nodes);
            st.graph_records.retain(|r| &r.name != graph);
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
        OpKind::CaptureStatus { stream, .. } => {
            let s = st.stream(stream)?;
            let mut status = sys::cudaStreamCaptureStatus::cudaStreamCaptureStatusNone;
            // SAFETY: a live (or built-in) stream handle; status is a valid out-pointer.
            if t.call(|| unsafe { sys::cudaStreamIsCapturing(s, &mut status) }) {
                t.value(OpValue::CaptureStatus(CaptureStatus::name_of(status)));
            }
            Ok(())
        }
        OpKind::PointerType { buf, .. } => {
            let ptr = st.buffer(buf)?.copy_ptr();
            let mut attributes = sys::cudaPointerAttributes::default();
            // SAFETY: attributes is a valid out-pointer; CUDA only classifies the address, it does not access it.
            if t.call(|| unsafe { sys::cudaPointerGetAttributes(&mut attributes, ptr) }) {
                t.value(OpValue::PointerType(MemoryType::name_of(attributes.type_)));
            }
            Ok(())
        }
        OpKind::CaptureDeps { stream, .. } => {
            let s = st.stream(stream)?;
            let mut info = None;
            let ok = t.call(|| {
                let (code, i) = capture_info(s);
                info = Some(i);
                code
            });
            if let Some(info) = info.filter(|_| ok) {
                let count = info.dependencies.len() as u64;
                let nodes = info
                    .dependencies
                    .iter()
                    .map(|&n| graph_api::node_label(ctx.case, st, n).unwrap_or_default())
                    .collect();
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
        OpKind::ExchangeCaptureMode { mode } => {
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
        OpKind::Instantiate { exec, graph, flags, upload, with_params } => {
            let g = st.graph(graph)?;
            st.exec_slot(exec)?;
            let mut word: u64 = flags.iter().map(|f| instantiate_flag(*f)).fold(0, |a, b| a | b);
            let upload_stream = match upload {
                Some(u) => {
                    word |= u64::from(sys::cudaGraphInstantiateFlags::cudaGraphInstantiateFlagUpload.0);
                    st.stream(u)?
                }
                None => std::ptr::null_mut(),
            };
            let mut raw = std::ptr::null_mut();
            if *with_params {
                let mut params = sys::cudaGraphInstantiateParams {
                    flags: word,
                    uploadStream: upload_stream,
                    errNode_out: std::ptr::null_mut(),
                    result_out: sys::cudaGraphInstantiateResult(u32::MAX),
                };
                // SAFETY: g is a live graph or null; raw and params are valid pointers.
                t.call(|| unsafe { sys::cudaGraphInstantiateWithParams(&mut raw, g, &mut params) });
                let error_node = graph_api::node_label(ctx.case, st, params.errNode_out);
                let result = InstantiateResult::name_of(params.result_out);
                t.value(OpValue::Result { result, error_node, error_from: None });
            } else {
                // SAFETY: g is a live graph or null; raw is a valid out-pointer.
                t.call(|| unsafe { sys::cudaGraphInstantiateWithFlags(&mut raw, g, word) });
            }
            st.set_exec(exec, (!raw.is_null()).then(|| GraphExec::from_raw(raw)));
            Ok(())
        }
        OpKind::Update { exec, graph } => {
            let (e, g) = (st.exec(exec)?, st.graph(graph)?);
            // SAFETY: an all-zero result info is valid; CUDA fills it.
            let mut info: sys::cudaGraphExecUpdateResultInfo = unsafe { std::mem::zeroed() };
            info.result = sys::cudaGraphExecUpdateResult(u32::MAX);
            // SAFETY: live (or null) handles; info is a valid out-pointer.
            t.call(|| unsafe { sys::cudaGraphExecUpdate(e, g, &mut info) });
            let error_node = graph_api::node_label(ctx.case, st, info.errorNode);
            let error_from = graph_api::node_label(ctx.case, st, info.errorFromNode);
            t.value(OpValue::Result { result: UpdateResult::name_of(info.result), error_node, error_from });
            Ok(())
        }
        OpKind::AddNode { graph, node, after } => {
            let g = st.graph(graph)?;
            let deps = graph_api::dependencies(ctx.case, st, after)?;
            let (d, n) = (deps.as_ptr(), deps.len());
            let mut raw: sys::cudaGraphNode_t = std::ptr::null_mut();
            // Every call below: g is a live graph (or null), d holds n live nodes, raw is a valid out-pointer, and
            // the parameters point to values that live until the call returns.
            let added = match node {
                NodeSpec::Kernel(kernel) => {
                    let params = graph_api::kernel_node(k, ctx.gates, ctx.opts.gate_timeout_ns, st, kernel)?;
                    // SAFETY: see above.
                    t.call(|| unsafe { sys::cudaGraphAddKernelNode(&mut raw, g, d, n, params.params()) })
                }
                NodeSpec::Memcpy { dst, src, bytes } => {
                    let (dp, sp, count, kind) = st.copy_operands(dst, src, *bytes)?;
                    // SAFETY: see above; both buffers hold at least count bytes.
                    t.call(|| unsafe { sys::cudaGraphAddMemcpyNode1D(&mut raw, g, d, n, dp, sp, count, kind) })
                }
                NodeSpec::Memset { buf, byte, bytes } => {
                    let params = graph_api::memset_params(st, buf, *byte, *bytes)?;
                    // SAFETY: see above.
                    t.call(|| unsafe { sys::cudaGraphAddMemsetNode(&mut raw, g, d, n, &params) })
                }
                NodeSpec::Host => {
                    let user_data =
                        keep_context(st, HostCallContext::new(ctx.log, index, HostCallKind::HostFunc, None));
                    let params = sys::cudaHostNodeParams { fn_: Some(host_func_entry), userData: user_data };
                    // SAFETY: see above; the context outlives every launch of the graph.
                    t.call(|| unsafe { sys::cudaGraphAddHostNode(&mut raw, g, d, n, &params) })
                }
                NodeSpec::Empty => {
                    // SAFETY: see above.
                    t.call(|| unsafe { sys::cudaGraphAddEmptyNode(&mut raw, g, d, n) })
                }
                NodeSpec::EventRecord { event } => {
                    let e = st.event(event)?;
                    // SAFETY: see above; e is a live event.
                    t.call(|| unsafe { sys::cudaGraphAddEventRecordNode(&mut raw, g, d, n, e) })
                }
                NodeSpec::WaitEvent { event } => {
                    let e = st.event(event)?;
                    // SAFETY: see above; e is a live event.
                    t.call(|| unsafe { sys::cudaGraphAddEventWaitNode(&mut raw, g, d, n, e) })
                }
                NodeSpec::Child { graph: child } => {
                    let c = st.graph(child)?;
                    // SAFETY: see above; c is a live graph (cloned into the node).
                    t.call(|| unsafe { sys::cudaGraphAddChildGraphNode(&mut raw, g, d, n, c) })
                }
                NodeSpec::MemAlloc { buf } => {
                    if !st.creatable(buf) {
                        return Err(format!("{buf} exists already"));
                    }
                    let bytes = declared_bytes(ctx.case, buf)?;
                    // SAFETY: an all-zero cudaMemAllocNodeParams is valid before the fields below are set.
                    let mut params: sys::cudaMemAllocNodeParams = unsafe { std::mem::zeroed() };
                    params.poolProps.allocType = sys::cudaMemAllocationType::cudaMemAllocationTypePinned;
                    params.poolProps.location = sys::cudaMemLocation {
                        type_: sys::cudaMemLocationType::cudaMemLocationTypeDevice,
                        id: ctx.device.ordinal,
                    };
                    params.bytesize = usize::try_from(bytes).map_err(|e| e.to_string())?;
                    // SAFETY: see above; CUDA writes the reserved address into params.dptr.
                    let ok = t.call(|| unsafe { sys::cudaGraphAddMemAllocNode(&mut raw, g, d, n, &mut params) });
                    if ok {
                        st.set_async_buffer(buf, params.dptr, bytes);
                        st.graph_memory.push(buf.clone());
                        t.value(OpValue::Address(params.dptr as u64));
                    }
                    ok
                }
                NodeSpec::MemFree { buf } => {
                    let ptr = st.buffer(buf)?.device_raw().ok_or_else(|| format!("{buf} is not device memory"))?;
                    // SAFETY: see above; ptr is the buffer's device address.
                    t.call(|| unsafe { sys::cudaGraphAddMemFreeNode(&mut raw, g, d, n, ptr) })
                }
                NodeSpec::Conditional { kind, condition, size, bodies } => {
                    let handle = st.condition(condition)?;
                    let mut out: *mut sys::cudaGraph_t = std::ptr::null_mut();
                    let kind = kind.to_sys();
                    // SAFETY: see above; on success CUDA points `out` at `size` body graphs owned by the node.
                    let ok = t.call(|| unsafe {
                        sys::compat::graph_add_conditional_node(&mut raw, g, d, n, handle, kind, *size, &mut out)
                    });
                    if ok {
                        for (i, body) in bodies.iter().enumerate() {
                            // SAFETY: i < bodies.len() <= size (checked by the validator).
                            let b = unsafe { *out.add(i) };
                            st.bodies.insert(body.clone(), b as usize);
                        }
                    }
                    ok
                }
            };
            if added {
                st.nodes.added(index, raw);
            }
            Ok(())
        }
        OpKind::Dependency { graph, from, to, remove } => {
            let g = st.graph(graph)?;
            let a = graph_api::dependencies(ctx.case, st, std::slice::from_ref(from))?;
            let b = graph_api::dependencies(ctx.case, st, std::slice::from_ref(to))?;
            let (pa, pb) = (a.as_ptr(), b.as_ptr());
            if *remove {
                // SAFETY: one live node in each array.
                t.call(|| unsafe { sys::compat::graph_remove_dependencies(g, pa, pb, 1) });
            } else {
                // SAFETY: as above.
                t.call(|| unsafe { sys::compat::graph_add_dependencies(g, pa, pb, 1) });
            }
            Ok(())
        }
        OpKind::Clone { copy, graph } => {
            let g = st.graph(graph)?;
            st.graph_slot(copy)?;
            let mut raw = std::ptr::null_mut();
            // SAFETY: g is a live graph or null; raw is a valid out-pointer.
            t.call(|| unsafe { sys::cudaGraphClone(&mut raw, g) });
            st.set_graph(copy, (!raw.is_null()).then(|| Graph::from_raw(raw)));
            Ok(())
        }
        OpKind::DestroyNode { node } => {
            let n = graph_api::dependencies(ctx.case, st, std::slice::from_ref(node))?[0];
            // SAFETY: n is a node the script made and has not destroyed.
            if t.call(|| unsafe { sys::cudaGraphDestroyNode(n) }) {
                let op = ctx.case.script.iter().position(|o| o.label.as_deref() == Some(node.as_str()));
                if let Some(i) = op {
                    st.nodes.forget(i);
                }
            }
            Ok(())
        }
        OpKind::List { what, graph, room } => {
            let g = st.graph(graph)?;
            let (code, count, null_padded) = graph_api::list(g, *what, *room, |f| t.call(f));
            let _ = code;
            if let Some(count) = count {
                t.value(OpValue::Listed { count, null_padded });
            }
            Ok(())
        }
        OpKind::SetNode { exec, node, spec } => {
            let e = exec.as_ref().map(|e| st.exec(e)).transpose()?;
            let n = graph_api::dependencies(ctx.case, st, std::slice::from_ref(node))?[0];
            // Every call: live exec (or null) and node; parameters that live until the call returns.
            match (spec, e) {
                (NodeSpec::Kernel(kernel), e) => {
                    let params = graph_api::kernel_node(k, ctx.gates, ctx.opts.gate_timeout_ns, st, kernel)?;
                    match e {
                        // SAFETY: see above.
                        Some(e) => t.call(|| unsafe { sys::cudaGraphExecKernelNodeSetParams(e, n, params.params()) }),
                        // SAFETY: see above.
                        None => t.call(|| unsafe { sys::cudaGraphKernelNodeSetParams(n, params.params()) }),
                    };
                }
                (NodeSpec::Memcpy { dst, src, bytes }, e) => {
                    let (dp, sp, count, kind) = st.copy_operands(dst, src, *bytes)?;
                    match e {
                        // SAFETY: see above.
                        Some(e) => {
                            t.call(|| unsafe { sys::cudaGraphExecMemcpyNodeSetParams1D(e, n, dp, sp, count, kind) })
                        }
                        // SAFETY: see above.
                        None => t.call(|| unsafe { sys::cudaGraphMemcpyNodeSetParams1D(n, dp, sp, count, kind) }),
                    };
                }
                (NodeSpec::Memset { buf, byte, bytes }, e) => {
                    let params = graph_api::memset_params(st, buf, *byte, *bytes)?;
                    match e {
                        // SAFETY: see above.
                        Some(e) => t.call(|| unsafe { sys::cudaGraphExecMemsetNodeSetParams(e, n, &params) }),
                        // SAFETY: see above.
                        None => t.call(|| unsafe { sys::cudaGraphMemsetNodeSetParams(n, &params) }),
                    };
                }
                (NodeSpec::Host, e) => {
                    let user_data =
                        keep_context(st, HostCallContext::new(ctx.log, index, HostCallKind::HostFunc, None));
                    let params = sys::cudaHostNodeParams { fn_: Some(host_func_entry), userData: user_data };
                    match e {
                        // SAFETY: see above.
                        Some(e) => t.call(|| unsafe { sys::cudaGraphExecHostNodeSetParams(e, n, &params) }),
                        // SAFETY: see above.
                        None => t.call(|| unsafe { sys::cudaGraphHostNodeSetParams(n, &params) }),
                    };
                }
                (other, _) => {
                    return Err(format!(
                        "the language sets parameters of kernel, memcpy, memset and host nodes, not {}",
                        other.word().word()
                    ))
                }
            }
            Ok(())
        }
        OpKind::SetEnabled { exec, node, enabled } => {
            let e = st.exec(exec)?;
            let n = graph_api::dependencies(ctx.case, st, std::slice::from_ref(node))?[0];
            // SAFETY: live exec (or null) and node.
            t.call(|| unsafe { sys::cudaGraphNodeSetEnabled(e, n, u32::from(*enabled)) });
            Ok(())
        }
        OpKind::GetEnabled { exec, node } => {
            let e = st.exec(exec)?;
            let n = graph_api::dependencies(ctx.case, st, std::slice::from_ref(node))?[0];
            let mut enabled = 0u32;
            // SAFETY: live exec (or null) and node; enabled is a valid out-pointer.
            if t.call(|| unsafe { sys::cudaGraphNodeGetEnabled(e, n, &mut enabled) }) {
                t.value(OpValue::Number(u64::from(enabled)));
            }
            Ok(())
        }
        OpKind::BeginCaptureToGraph { stream, graph, after, mode } => {
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
        OpKind::UpdateCaptureDeps { stream, set, nodes } => {
            let s = st.stream(stream)?;
            let mut deps = graph_api::dependencies(ctx.case, st, nodes)?;
            use sys::cudaStreamUpdateCaptureDependenciesFlags as F;
            let flags =
                if *set { F::cudaStreamSetCaptureDependencies.0 } else { F::cudaStreamAddCaptureDependencies.0 };
            let (d, n) = (if deps.is_empty() { std::ptr::null_mut() } else { deps.as_mut_ptr() }, deps.len());
            // SAFETY: a live stream; d holds n live nodes; no edge data.
            t.call(|| unsafe { sys::compat::stream_update_capture_dependencies(s, d, n, flags) });
            Ok(())
        }
        OpKind::ConditionCreate { condition, graph, default } => {
            let g = st.graph(graph)?;
            let (value, flags) = match default {
                Some(v) => (*v, sys::compat::COND_ASSIGN_DEFAULT),
                None => (0, 0),
            };
            let mut handle: sys::compat::cudaGraphConditionalHandle = 0;
            // SAFETY: g is a live graph or null; handle is a valid out-pointer.
            if t.call(|| unsafe { sys::compat::graph_conditional_handle_create(&mut handle, g, value, flags) }) {
                st.conditions.insert(condition.clone(), handle);
            }
            Ok(())
        }
        OpKind::PoolSet { pool, attr, value } => {
            let p = st.pool(pool)?;
            t.call(|| pools::set(p, *attr, *value));
            Ok(())
        }
        OpKind::PoolGet { pool, attr } => {
            let p = st.pool(pool)?;
            let mut value = 0;
            if t.call(|| {
                let (code, v) = pools::get(p, *attr);
                value = v;
                code
            }) {
                t.value(OpValue::Number(value));
            }
            Ok(())
        }
        OpKind::PoolTrim { pool, keep } => {
            let p = st.pool(pool)?;
            let keep = usize::try_from(*keep).map_err(|e| e.to_string())?;
            // SAFETY: p is a live pool.
            t.call(|| unsafe { sys::cudaMemPoolTrimTo(p, keep) });
            Ok(())
        }
        OpKind::GraphMemTrim => {
            let device = ctx.device.ordinal;
            // SAFETY: no pointers.
            t.call(|| unsafe { sys::cudaDeviceGraphMemTrim(device) });
            Ok(())
        }
        OpKind::GraphMemGet { attr } => {
            let device = ctx.device.ordinal;
            let mut value = 0;
            if t.call(|| {
                let (code, v) = pools::graph_mem_get(device, *attr);
                value = v;
                code
            }) {
                t.value(OpValue::Number(value));
            }
            Ok(())
        }
        OpKind::LaunchGraph { exec, stream } => {
            let (e, s) = (st.exec(exec)?, st.stream(stream)?);
            // SAFETY: e is a live executable graph or null; s a live stream.
            t.call(|| unsafe { sys::cudaGraphLaunch(e, s) });
            Ok(())
        }
        OpKind::Upload { exec, stream } => {
            let (e, s) = (st.exec(exec)?, st.stream(stream)?);
            // SAFETY: as for cudaGraphLaunch.
            t.call(|| unsafe { sys::cudaGraphUpload(e, s) });
            Ok(())
        }
        OpKind::Destroy { name } => {
            st.destroy(name, |destroy| t.call(destroy))?;
            st.registered.retain(|r| r != name);
            Ok(())
        }
        OpKind::Create { name } => {
            let decl =
                ctx.case.decls.iter().find(|d| d.name() == name).ok_or_else(|| format!("no {name} is declared"))?;
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
        OpKind::MallocAsync { buf, stream, pool } => {
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
                    st.graph_memory.push(buf.clone());
                }
            }
            Ok(())
        }
        OpKind::FreeAsync { buf, stream } => {
            let s = st.stream(stream)?;
            let raw = st.buffer(buf)?.device_raw().ok_or_else(|| format!("{buf} is not device memory"))?;
            let capturing = active_capture_id(s).is_some();
            // SAFETY: raw is the buffer's live device allocation; s a live stream. On success the buffer no longer
            // owns it.
            if t.call(|| unsafe { sys::cudaFreeAsync(raw, s) }) {
                if capturing {
                    // A memory-free node: the address stays the graph's, and nodes of the graph (set-node,
                    // exec-set-node) may still name the buffer; the graph frees it, never the case.
                    if !st.graph_memory.contains(buf) {
                        st.graph_memory.push(buf.clone());
                    }
                    st.graph_freed.push(buf.clone());
                } else {
                    st.forget_buffer(buf);
                }
            }
            Ok(())
        }
        OpKind::Register { buf } => {
            let b = st.buffer(buf)?;
            let (ptr, n) = (b.copy_ptr(), usize::try_from(b.bytes).map_err(|e| e.to_string())?);
            // SAFETY: ptr is the live pageable allocation of n bytes; it is unregistered before it is freed.
            if t.call(|| unsafe { sys::cudaHostRegister(ptr, n, 0) }) {
                st.registered.push(buf.clone());
            }
            Ok(())
        }
        OpKind::Unregister { buf } => {
            let ptr = st.buffer(buf)?.copy_ptr();
            // SAFETY: ptr is a live host allocation; CUDA checks whether it is registered.
            if t.call(|| unsafe { sys::cudaHostUnregister(ptr) }) {
                st.registered.retain(|r| r != buf);
            }
            Ok(())
        }
        OpKind::SetDevice { device } => {
            let ordinal = ctx.devices.ordinal(*device);
            // SAFETY: no pointers.
            t.call(|| unsafe { sys::cudaSetDevice(ordinal) });
            Ok(())
        }
        OpKind::PeerAccess { peer, enable } => {
            let peer = ctx.devices.ordinal(*peer);
            let done = if *enable {
                // SAFETY: no pointers; flags must be 0.
                t.call(|| unsafe { sys::cudaDeviceEnablePeerAccess(peer, 0) })
            } else {
                // SAFETY: no pointers.
                t.call(|| unsafe { sys::cudaDeviceDisablePeerAccess(peer) })
            };
            if let (true, Ok(current)) = (done, devices::current()) {
                st.peers_enabled.retain(|&pair| pair != (current, peer));
                if *enable {
                    st.peers_enabled.push((current, peer));
                }
            }
            Ok(())
        }
        OpKind::CanAccessPeer { device, peer } => {
            let (d, p) = (ctx.devices.ordinal(*device), ctx.devices.ordinal(*peer));
            let mut can = 0;
            // SAFETY: can is a valid out-pointer.
            if t.call(|| unsafe { sys::cudaDeviceCanAccessPeer(&mut can, d, p) }) {
                t.value(OpValue::Number(u64::from(can != 0)));
            }
            Ok(())
        }
        OpKind::GetDevice { .. } => {
            let mut ordinal = -1;
            // SAFETY: ordinal is a valid out-pointer.
            if t.call(|| unsafe { sys::cudaGetDevice(&mut ordinal) }) {
                t.value(OpValue::Device(ordinal));
            }
            Ok(())
        }
        OpKind::SetLimit { limit, value } => {
            let limit = limit.to_sys();
            let value = usize::try_from(*value).map_err(|e| e.to_string())?;
            // SAFETY: no pointers.
            t.call(|| unsafe { sys::cudaDeviceSetLimit(limit, value) });
            Ok(())
        }
        OpKind::SetCacheConfig { config } => {
            let config = config.to_sys();
            // SAFETY: no pointers.
            t.call(|| unsafe { sys::cudaDeviceSetCacheConfig(config) });
            Ok(())
        }
        OpKind::StreamPriority { stream, .. } => {
            let s = st.stream(stream)?;
            let mut value = 0;
            // SAFETY: a live (or built-in) stream handle; value is a valid out-pointer.
            if t.call(|| unsafe { sys::cudaStreamGetPriority(s, &mut value) }) {
                let (greatest, least) = ctx.device.stream_priority_range;
                t.value(OpValue::StreamPriority { value, greatest, least });
            }
            Ok(())
        }
        OpKind::Read { buf } => {
            let needs_reader = st.buffer(buf)?.host_words().is_none();
            let reader = if needs_reader {
                st.reader().map_err(|code| format!("creating the read stream returned {}", code))?
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
        OpKind::PeekLastError => {
            // SAFETY: no arguments.
            t.call(|| unsafe { sys::cudaPeekAtLastError() });
            Ok(())
        }
        OpKind::Malloc { bytes } => {
            let n = usize::try_from(*bytes).map_err(|e| e.to_string())?;
            let mut raw = std::ptr::null_mut();
            // SAFETY: raw is a valid out-pointer.
            t.call(|| unsafe { sys::cudaMalloc(&mut raw, n) });
            if !raw.is_null() {
                st.allocations.push(DeviceMemory::from_raw(raw));
            }
            Ok(())
        }
        OpKind::GetLastError => {
            // SAFETY: no arguments.
            t.call(|| unsafe { sys::cudaGetLastError() });
            Ok(())
        }
        OpKind::Open { gate, after_ns } => {
            let g = ctx.gates.index(gate).ok_or_else(|| format!("no gate {gate} is declared"))?;
            match after_ns {
                None => t.host(|| ctx.gates.open(g, GateOpener::Script)),
                Some(ns) => {
                    let delay = Duration::from_nanos(*ns).mul_f64(ctx.opts.gate_delay_scale);
                    t.host(|| ctx.keeper.open_at(g, Instant::now() + delay))
                }
            }
            Ok(())
        }
        OpKind::Sleep { ns } => {
            t.host(|| std::thread::sleep(Duration::from_nanos(*ns)));
            Ok(())
        }
    }
}

fn call_on_stream(
    st: &Objects,
    stream: &StreamRef,
    t: &mut Timed,
    mut f: impl FnMut(sys::cudaStream_t) -> sys::cudaError_t,
) -> Result<(), String> {
    let s = st.stream(stream)?;
    t.call(|| f(s));
    Ok(())
}

fn call_on_event(
    st: &Objects,
    event: &str,
    t: &mut Timed,
    mut f: impl FnMut(sys::cudaEvent_t) -> sys::cudaError_t,
) -> Result<(), String> {
    let e = st.event(event)?;
    t.call(|| f(e));
    Ok(())
}

/// The threads per block of a compute kernel when the case gives none: every seed launches 256.
const COMPUTE_BLOCK: u32 = 256;

/// The grid and block of a compute kernel: as written, else the block of [`COMPUTE_BLOCK`] threads and a grid of
/// one thread per element (`elements`; one block for a kernel without elements), as the seeds compute it. A
/// `grid full` is recorded as the number of blocks it was.
fn compute_shape(
    ctx: &Ctx,
    t: &mut Timed,
    func: *const c_void,
    shape: &ComputeShape,
    elements: Option<u32>,
) -> (u32, u32) {
    let block = shape.block.unwrap_or(COMPUTE_BLOCK);
    let grid = match shape.grid {
        Some(Grid::Blocks(n)) => n,
        Some(Grid::Full) => {
            let blocks = resident_blocks_per_sm(func, block, 0).saturating_mul(ctx.device.multiprocessors.max(1));
            t.value(OpValue::GridBlocks(blocks));
            blocks
        }
        None => elements.map_or(1, |n| n.div_ceil(block.max(1)).max(1)),
    };
    (grid, block)
}

/// For `grid full`: how many blocks of `block` threads and `shared` bytes one SM keeps resident
/// (cudaOccupancyMaxActiveBlocksPerMultiprocessor, at least 1), to be multiplied by the SM count.
fn resident_blocks_per_sm(func: *const c_void, block: u32, shared: u64) -> u32 {
    let mut per_sm = 0;
    let block = i32::try_from(block).unwrap_or(i32::MAX);
    let shared = usize::try_from(shared).unwrap_or(usize::MAX);
    // SAFETY: per_sm is a valid out-pointer; func is a kernel handle.
    let code = unsafe { sys::cudaOccupancyMaxActiveBlocksPerMultiprocessor(&mut per_sm, func, block, shared) };
    if code == SUCCESS {
        u32::try_from(per_sm).unwrap_or(1).max(1)
    } else {
        // A shape the device cannot run: one block per SM, and the launch itself reports the error.
        // SAFETY: no arguments; the failed query must not leave a last error the script would see.
        let _ = unsafe { sys::cudaGetLastError() };
        1
    }
}

/// The size of buffer `name` as declared.
fn declared_bytes(case: &Case, name: &str) -> Result<u64, String> {
    case.decls
        .iter()
        .find_map(|d| match d {
            Decl::Buffer { name: n, bytes, .. } if n == name => Some(*bytes),
            _ => None,
        })
        .ok_or_else(|| format!("no buffer {name} is declared"))
}

fn instantiate_flag(flag: InstantiateFlag) -> u64 {
    use sys::cudaGraphInstantiateFlags as F;
    u64::from(
        match flag {
            InstantiateFlag::AutoFreeOnLaunch => F::cudaGraphInstantiateFlagAutoFreeOnLaunch,
            InstantiateFlag::DeviceLaunch => F::cudaGraphInstantiateFlagDeviceLaunch,
            InstantiateFlag::UseNodePriority => F::cudaGraphInstantiateFlagUseNodePriority,
        }
        .0,
    )
}

/// Keeps a host-call context alive in the state; returns its `userData` pointer.
fn keep_context(st: &mut Objects, context: Box<HostCallContext>) -> *mut c_void {
    let user_data = context.user_data();
    st.host_contexts.push(context);
    user_data
}
