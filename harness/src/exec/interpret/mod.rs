//! The operation interpreter: runs one script operation through cuda-sys on the calling thread and records its
//! return code and host times. Operands are resolved before the clock starts, so the recorded interval is the CUDA
//! call alone (the blocking oracle).
//!
//! [`interpret`] is the table of contents: one line per operation, to its function in the file of its family.

// Batched copies, stream identity, launch attributes.
mod attributes;
mod call;
pub use call::call_bare;
mod captures;
mod device;
mod environment;
mod graphs;
mod host;
mod ipc;
mod launches;
mod lifetimes;
mod managed;
mod memory;
mod mempools;
mod sync;
mod vulkan;

use super::clock::CaseClock;
use super::devices::CaseDevices;
use super::gates::{GateKeeper, GateSet};
use super::host_calls::HostLog;
use super::objects::Objects;
use super::stamps::StampPool;
use super::timing::EventTiming;
use super::ExecOptions;
use crate::case::ast::{Case, Op, OpKind};
use crate::case::print::op_kind as op_text;
use crate::device::gpu::DeviceInfo;
use crate::device::kernels::KernelTable;
use crate::record::observations::{OpRecord, OpValue};
use cuda_sys as sys;
use std::sync::{Arc, Mutex, PoisonError};

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
        acceptable: crate::case::ast::accepted_codes(&op.expect),
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

/// What every operation's function gets: the shared context, the case's objects, its own index and line, and the
/// timer that records its call.
struct Step<'s, 'c, 'r> {
    ctx: &'s Ctx<'c>,
    st: &'s mut Objects,
    index: usize,
    op: &'s Op,
    t: &'s mut Timed<'r>,
}

/// Runs `op`; `Err` says why it could not be run. The table of contents of the interpreter: one line per operation,
/// to its function in the file of its family.
fn interpret(ctx: &Ctx, st: &mut Objects, index: usize, op: &Op, t: &mut Timed) -> Result<(), String> {
    let x = Step { ctx, st, index, op, t };
    match &op.kind {
        OpKind::Launch { kernel, stream } => launches::launch(x, kernel, stream),
        OpKind::Memcpy { dst, src, bytes, inferred, stream } => memory::memcpy(x, dst, src, bytes, *inferred, stream),
        OpKind::MemcpyPeer { dst, src, bytes, stream } => memory::memcpy_peer(x, dst, src, bytes, stream),
        OpKind::Memset { buf, byte, bytes, stream } => memory::memset(x, buf, *byte, bytes, stream),
        OpKind::PointerType { buf, .. } => memory::pointer_type(x, buf),
        OpKind::Destroy { name } => memory::destroy(x, name),
        OpKind::Create { name } => memory::create(x, name),
        OpKind::MallocAsync { buf, stream, pool } => memory::malloc_async(x, buf, stream, pool),
        OpKind::FreeAsync { buf, stream } => memory::free_async(x, buf, stream),
        OpKind::Register { buf } => memory::register(x, buf),
        OpKind::Unregister { buf } => memory::unregister(x, buf),
        OpKind::Read { buf } => memory::read(x, buf),
        OpKind::Malloc { bytes } => memory::malloc(x, *bytes),
        OpKind::Record { event, stream, external } => sync::record(x, event, stream, *external),
        OpKind::Wait { stream, event, external } => sync::wait(x, stream, event, *external),
        OpKind::Query { target } => sync::query(x, target),
        OpKind::Sync { target } => sync::sync(x, target),
        OpKind::DeviceSync => sync::device_sync(x),
        OpKind::Elapsed { start, stop } => sync::elapsed(x, start, stop),
        OpKind::HostFunc { stream, snapshot, hold } => host::host_func(x, stream, snapshot, hold),
        OpKind::Callback { stream } => host::callback(x, stream),
        OpKind::Open { gate, after_ns } => host::open(x, gate, after_ns),
        OpKind::Sleep { ns } => host::sleep(x, *ns),
        OpKind::BeginCapture { stream, mode } => captures::begin_capture(x, stream, *mode),
        OpKind::EndCapture { stream, graph } => captures::end_capture(x, stream, graph),
        OpKind::CaptureStatus { stream, .. } => captures::capture_status(x, stream),
        OpKind::CaptureDeps { stream, .. } => captures::capture_deps(x, stream),
        OpKind::ExchangeCaptureMode { mode } => captures::exchange_capture_mode(x, *mode),
        OpKind::BeginCaptureToGraph { stream, graph, after, mode } => {
            captures::begin_capture_to_graph(x, stream, graph, after, *mode)
        }
        OpKind::UpdateCaptureDeps { stream, set, nodes } => captures::update_capture_deps(x, stream, *set, nodes),
        OpKind::Instantiate { exec, graph, flags, upload, with_params } => {
            graphs::instantiate(x, exec, graph, flags, upload, *with_params)
        }
        OpKind::Update { exec, graph } => graphs::update(x, exec, graph),
        OpKind::AddNode { graph, node, after } => graphs::add_node(x, graph, node, after),
        OpKind::Dependency { graph, from, to, remove } => graphs::dependency(x, graph, from, to, *remove),
        OpKind::Clone { copy, graph } => graphs::clone_graph(x, copy, graph),
        OpKind::DestroyNode { node } => graphs::destroy_node(x, node),
        OpKind::List { what, graph, room } => graphs::list(x, *what, graph, room),
        OpKind::SetNode { exec, node, spec } => graphs::set_node(x, exec, node, spec),
        OpKind::SetEnabled { exec, node, enabled } => graphs::set_enabled(x, exec, node, *enabled),
        OpKind::GetEnabled { exec, node } => graphs::get_enabled(x, exec, node),
        OpKind::ConditionCreate { condition, graph, default } => graphs::condition_create(x, condition, graph, default),
        OpKind::LaunchGraph { exec, stream } => graphs::launch_graph(x, exec, stream),
        OpKind::Upload { exec, stream } => graphs::upload(x, exec, stream),
        OpKind::PoolSet { pool, attr, value } => mempools::pool_set(x, pool, *attr, *value),
        OpKind::PoolGet { pool, attr } => mempools::pool_get(x, pool, *attr),
        OpKind::PoolTrim { pool, keep } => mempools::pool_trim(x, pool, *keep),
        OpKind::GraphMemTrim => mempools::graph_mem_trim(x),
        OpKind::GraphMemGet { attr } => mempools::graph_mem_get(x, *attr),
        OpKind::SetDevice { device } => device::set_device(x, *device),
        OpKind::PeerAccess { peer, enable } => device::peer_access(x, *peer, *enable),
        OpKind::CanAccessPeer { device, peer } => device::can_access_peer(x, *device, *peer),
        OpKind::GetDevice { .. } => device::get_device(x),
        OpKind::SetLimit { limit, value } => device::set_limit(x, *limit, *value),
        OpKind::SetCacheConfig { config } => device::set_cache_config(x, *config),
        OpKind::StreamPriority { stream, .. } => device::stream_priority(x, stream),
        OpKind::StreamFlags { stream } => device::stream_flags(x, stream),
        OpKind::PeekLastError => device::peek_last_error(x),
        OpKind::GetLastError => device::get_last_error(x),
        // Batched copies, stream identity, stream and kernel-node attributes.
        OpKind::MemcpyBatch { copies, stream, order, attrs_at, three_d } => {
            attributes::memcpy_batch(x, copies, stream, *order, attrs_at, *three_d)
        }
        OpKind::StreamDevice { stream, .. } => attributes::stream_device(x, stream),
        OpKind::StreamId { stream } => attributes::stream_id(x, stream),
        OpKind::StreamAttr { stream, value } => attributes::stream_attr(x, stream, value),
        OpKind::SetStreamAttr { stream, value } => attributes::set_stream_attr(x, stream, value),
        OpKind::CopyStreamAttrs { dst, src } => attributes::copy_stream_attrs(x, dst, src),
        OpKind::NodeAttr { node, value } => attributes::node_attr(x, node, value),
        OpKind::SetNodeAttr { node, value } => attributes::set_node_attr(x, node, value),
        // Managed memory, IPC, user objects, device facts, the launch queue
        OpKind::Attach { buf, stream, mode, bytes } => managed::attach(x, buf, stream, *mode, *bytes),
        OpKind::Prefetch { buf, to, stream } => managed::prefetch(x, buf, *to, stream),
        OpKind::Advise { buf, advice, place } => managed::advise(x, buf, *advice, *place),
        OpKind::MallocManaged { bytes, host } => managed::malloc_managed(x, *bytes, *host),
        OpKind::DeviceAttr { attr } => environment::device_attr(x, *attr),
        OpKind::DeviceCount => environment::device_count(x),
        OpKind::QueueDepth { stream, gate, max } => environment::queue_depth(x, stream, gate, *max),
        OpKind::Call(c) => call::call(x, c),
        OpKind::IpcMemHandle { buf } => ipc::mem_handle(x, buf),
        OpKind::IpcOpenMem { handle, into } => ipc::open_mem(x, handle, into),
        OpKind::IpcCloseMem { opened } => ipc::close_mem(x, opened),
        OpKind::IpcEventHandle { event } => ipc::event_handle(x, event),
        OpKind::IpcOpenEvent { handle, into } => ipc::open_event(x, handle, into),
        OpKind::PoolExport { pool } => ipc::pool_export(x, pool),
        OpKind::VkMemory { bytes } => vulkan::memory(x, *bytes),
        OpKind::VkSemaphore { timeline } => vulkan::semaphore(x, *timeline),
        OpKind::VkWrite { memory, value } => vulkan::write(x, memory, *value),
        OpKind::VkRead { memory, at, bytes } => vulkan::read(x, memory, *at, *bytes),
        OpKind::VkCounter { semaphore } => vulkan::counter(x, semaphore),
        OpKind::UserObject => lifetimes::create(x),
        OpKind::RetainUserObject { graph, object, count, take } => lifetimes::retain(x, graph, object, *count, *take),
        OpKind::ReleaseUserObject { graph, object, count } => lifetimes::release(x, graph, object, *count),
        OpKind::Destroyed { object, wait } => lifetimes::destroyed(x, object, *wait),
    }
}
