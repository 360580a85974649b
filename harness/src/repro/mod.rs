//! Reproducers: every case as one standalone CUDA C++ program (issue 19). [`program`] writes the `.cu` file of a
//! case; [`header`] the one header they all include ([`HEADER_NAME`]: the probe kernels verbatim, and the
//! bookkeeping of a run). The program makes the same CUDA runtime calls in the same order as the Rust executor
//! ([`crate::exec`]), with the same objects, gates, stamps, host threads, host functions, graphs, captures, pools
//! and devices, and prints what it observed as the JSON of [`crate::record::observations::Observations`] on its last
//! stdout line, so the project's own verdict code judges it.
//!
//! The emitter mirrors the interpreter: [`emit_op`] is one exhaustive `match` over [`OpKind`] (no wildcard arm, so a
//! new operation does not compile until it has its C++), each arm a function in the file of its family, named as in
//! `exec/interpret/`. Declarations are one exhaustive match too ([`decls`]). Nothing here calls CUDA.

mod attributes;
mod call;
mod captures;
mod code;
mod decls;
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
#[cfg(test)]
mod tests;
mod vulkan;

use crate::case::ast::{Case, OpKind};
use crate::case::print::op_kind as op_text;
use code::{cstr, Code, Names};
use std::fmt;

/// The name of the one header every reproducer includes (written beside them).
pub const HEADER_NAME: &str = "cuda_conformance_repro.h";

/// One reproducer: `<file_stem>.cu` and its C++ source.
#[derive(Debug, Clone, PartialEq)]
pub struct Program {
    pub file_stem: String,
    pub source: String,
}

/// Why a case (one of its lines) cannot be written as C++.
#[derive(Debug, Clone, PartialEq)]
pub struct ReproError {
    pub case_id: String,
    pub line: u32,
    /// The operation or declaration, as written.
    pub operation: String,
    pub why: String,
}

impl fmt::Display for ReproError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "case {} line {}: {} cannot be written as C++: {}", self.case_id, self.line, self.operation, self.why)
    }
}

impl std::error::Error for ReproError {}

/// The file name of a case's reproducer, without `.cu` (kept with the report schema, which the C++ executor and
/// the failure outputs read too).
pub use crate::record::executors::file_stem;

pub use crate::device::kernels::OtherImages;

/// The shared header without the other images ([`OtherImages::NONE`]): what the harness's tests compile.
pub fn header() -> String {
    header_with(&OtherImages::NONE)
}

/// The shared header: the probe kernels of `kernels/` verbatim (a kernel change reaches every reproducer), the
/// other images' bytes, the executor's defaults, and the bookkeeping of a run.
pub fn header_with(images: &OtherImages) -> String {
    let defaults = crate::exec::ExecOptions::default();
    include_str!("header.h")
        .replace("@@OTHER_IMAGES@@", &other_images(images))
        .replace("@@PROBES@@", include_str!("../../kernels/probes.cu").trim_end())
        .replace("@@CONDITIONAL@@", include_str!("../../kernels/conditional.cu").trim_end())
        .replace("@@DEVICE_LAUNCH@@", include_str!("../../kernels/device_launch.cu").trim_end())
        .replace("@@DEADLINE_MS@@", &defaults.case_deadline.as_millis().to_string())
        .replace("@@GATE_TIMEOUT_NS@@", &defaults.gate_timeout_ns.to_string())
        .replace("@@DATA_BLOCK_THREADS@@", &crate::device::kernels::DATA_BLOCK_THREADS.to_string())
}

/// An image as a C array of 64-bit words (a fat binary must be 8-byte aligned), as build.rs writes it for
/// kernels/register.c; at least one word, so an absent image is still an array.
fn image_array(name: &str, image: &[u8]) -> String {
    let mut words: Vec<String> = image
        .chunks(8)
        .map(|chunk| {
            let mut word = [0u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            format!("0x{:016x}ull,", u64::from_le_bytes(word))
        })
        .collect();
    if words.is_empty() {
        words.push("0ull,".into());
    }
    let lines: Vec<String> = words.chunks(6).map(|line| line.join(" ")).collect();
    format!(
        "static const unsigned long long {name}[] __attribute__((aligned(8))) = {{\n{}\n}};\nconstexpr size_t {}_BYTES = {};\n",
        lines.join("\n"),
        name.to_uppercase(),
        image.len()
    )
}

/// The header's block of the other images: their bytes, and whether to register them.
fn other_images(images: &OtherImages) -> String {
    [
        ("cc_sm80_only_image", images.sm80_only),
        ("cc_ptx_only_image", images.ptx_only),
        ("cc_bad_ptx_image", images.bad_ptx),
        ("cc_future_ptx_image", images.future_ptx),
    ]
    .iter()
    .map(|(name, image)| image_array(name, image))
    .collect()
}

/// The reproducer of `case`.
pub fn program(case: &Case) -> Result<Program, ReproError> {
    let names = Names::of(case);
    let mut out = String::new();
    out.push_str(&decls::preamble(case));
    out.push_str(&op_table(case));
    out.push_str("int main(int argc, char** argv) {\n");
    out.push_str(&decls::setup(case, &names)?);
    for index in 0..case.script.len() {
        out.push_str(&step(case, &names, index)?);
    }
    out.push_str(&decls::teardown(case, &names));
    out.push_str("    return 0;\n}\n");
    Ok(Program { file_stem: file_stem(&case.id), source: out })
}

/// The table of the script's operations: what each one's record says besides what it observed.
fn op_table(case: &Case) -> String {
    let mut out = String::from(
        "// The script: each operation's line, label, thread, text and acceptable codes, and `repeat N`.\n\
         static const std::vector<cc::OpInfo> OPS = {\n",
    );
    for (index, op) in case.script.iter().enumerate() {
        let opt = |s: &Option<String>| s.as_deref().map_or("nullptr".to_owned(), cstr);
        let acceptable = crate::case::ast::accepted_codes(&op.expect);
        out.push_str(&format!(
            "    {{{}, {}, {}, {}, {{{}}}, {}}},\n",
            line_of(case, index),
            opt(&op.label),
            opt(&op.thread),
            cstr(&op_text(&op.kind)),
            acceptable.iter().map(|c| cstr(c)).collect::<Vec<_>>().join(", "),
            op.repeat.max(1)
        ));
    }
    out.push_str("};\n\n");
    out
}

fn line_of(case: &Case, index: usize) -> u32 {
    case.positions.op_lines.get(index).copied().unwrap_or(0)
}

/// One script line: its text as a comment, then the block that runs it on its thread and records it.
fn step(case: &Case, names: &Names, index: usize) -> Result<String, ReproError> {
    let op = &case.script[index];
    let line = line_of(case, index);
    let written = crate::case::print::op(op);
    let fail = |why: String| ReproError { case_id: case.id.clone(), line, operation: written.clone(), why };
    let x = code::Step { case, names, index, op };
    let code = emit_op(&x).map_err(fail)?;
    let mut out = format!("\n    // line {line}: {}\n", code::comment_text(&written));
    out.push_str(&format!("    run.step({index}, [&](cc::Op& op) {{\n"));
    // `timing: events`: the operation's stream gets an event before it and one after it (outside its host times).
    let bracket = case.is_timed(index).then(|| op.kind.work_stream()).flatten().map(|s| names.stream(s));
    if let Some(s) = &bracket {
        out.push_str(&format!("        bool bracketed = {} && run.timing_before({index}, {});\n", s.ready(), s.h));
    }
    let indent = |lines: &[String], out: &mut String| {
        for l in lines {
            out.push_str("        ");
            out.push_str(l);
            out.push('\n');
        }
    };
    indent(&code.pre, &mut out);
    indent(&code.call, &mut out);
    if let Some(s) = &bracket {
        out.push_str(&format!("        run.timing_after({index}, {}, bracketed);\n", s.h));
    }
    indent(&code.post, &mut out);
    // Which node a captured operation made: the executor asks right after it (cudaStreamGetCaptureInfo).
    if let Some(s) = op.kind.capture_stream() {
        out.push_str(&format!("        run.learn(op, {});\n", names.stream(s).h));
    }
    out.push_str("    });\n");
    Ok(out)
}

/// The C++ of one operation: the table of contents of the emitter, one line per operation to its function in the
/// file of its family (as `exec::interpret::interpret`). No wildcard arm: a new operation needs its C++ here.
fn emit_op(x: &code::Step) -> Result<Code, String> {
    match &x.op.kind {
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
