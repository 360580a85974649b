//! Tools that serialise device work, as this process can see them, and the cases that cannot be observed under one.
//!
//! compute-sanitizer (every `--tool`), Nsight Compute and `CUDA_LAUNCH_BLOCKING=1` run kernels one at a time and
//! make calls wait for device work that would otherwise run on behind them. A case whose verdict needs a call to
//! return, or a stream to be seen busy, before device work ends cannot hold there: measured on the H100 under
//! memcheck, racecheck and synccheck, 34 to 38 such cases failed (shared/SANITIZERS.md). They are *not-supported*
//! with the reason instead, as under launch blocking.
//!
//! How the tool is seen (no tool tells the target which one it is; the environment says *that* one runs):
//! - compute-sanitizer starts its target with `NV_SANITIZER_INJECTION_PORT_BASE` (and the other
//!   `NV_SANITIZER_INJECTION_*` variables), `NVTX_INJECTION64_PATH=libsanitizer-collection.so`, and preloads its
//!   libraries from `<cuda>/compute-sanitizer/` (`/proc/self/maps` lists them).
//! - Nsight Compute injects through `CUDA_INJECTION64_PATH` pointing into its own install (`nsight-compute`,
//!   `ncu`); a path elsewhere (Nsight Systems, a tracer) is recorded as a tool too, since the run's verdicts can
//!   depend on it.
//! - `CUDA_LAUNCH_BLOCKING=1`.
//!
//! `run --sanitizer TOOL` names the tool to its workers through [`SANITIZER_TOOL_VAR`], so the report says which.

use crate::case::ast::{
    Case, ConditionalKind, Decl, Expectation, Fault, HostWait, InstantiateFlag, KernelCall, NodeKernel, NodeSpec,
    OpKind, Predicate, StreamRef,
};
use crate::case::words::KernelWord;
use std::collections::HashMap;

/// Set by `run --sanitizer TOOL` in its workers' environment: the compute-sanitizer tool they run under.
pub const SANITIZER_TOOL_VAR: &str = "CUDA_CONFORMANCE_SANITIZER";

/// What serialises this process's device work, in words for the report (`None`: nothing seen). A tool is set up
/// when the process starts and nothing here changes the environment, so the answer is read once per process: every
/// case's requirements ask for it, and reading `/proc/self/maps` of a CUDA process each time was work per case.
pub fn detect() -> Option<String> {
    static SEEN: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    SEEN.get_or_init(|| {
        let env: Vec<(String, String)> = std::env::vars().collect();
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap_or_default();
        detect_in(&env, &maps)
    })
    .clone()
}

/// [`detect`] over an environment and the text of `/proc/self/maps` (so tests need not change the process).
pub fn detect_in(env: &[(String, String)], maps: &str) -> Option<String> {
    let var = |name: &str| env.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str());
    let mut seen = Vec::new();
    let injected = env.iter().find(|(k, _)| k.starts_with("NV_SANITIZER_INJECTION_")).map(|(k, _)| k.clone());
    let collection = var("NVTX_INJECTION64_PATH").filter(|p| p.contains("sanitizer"));
    let mapped = maps.lines().find(|l| l.contains("/compute-sanitizer/")).and_then(|l| l.split_whitespace().last());
    if injected.is_some() || collection.is_some() || mapped.is_some() {
        let tool = var(SANITIZER_TOOL_VAR).map(|t| format!(" --tool {t}")).unwrap_or_default();
        let evidence = injected
            .map(|k| format!("{k} is set"))
            .or(collection.map(|p| format!("NVTX_INJECTION64_PATH={p}")))
            .or(mapped.map(|m| format!("{m} is mapped")))
            .unwrap_or_default();
        seen.push(format!("compute-sanitizer{tool} ({evidence})"));
    }
    if let Some(path) = var("CUDA_INJECTION64_PATH").filter(|p| !p.trim().is_empty()) {
        let profiler = if path.contains("nsight-compute") || path.contains("ncu") {
            "Nsight Compute"
        } else {
            "an injected CUDA tool"
        };
        seen.push(format!("{profiler} (CUDA_INJECTION64_PATH={path})"));
    }
    if var("CUDA_LAUNCH_BLOCKING").is_some_and(|v| v.trim() == "1") {
        seen.push("CUDA_LAUNCH_BLOCKING=1".to_owned());
    }
    (!seen.is_empty()).then(|| seen.join(", "))
}

/// Why `case`'s verdict needs device work to run on behind the host (or beside other work), if it does: an
/// `expect`/`quality` (or every alternative of a `variant`) that needs a call to return before a gate opens
/// (`not-waited-for`), a stream or event seen not ready, or two kernels overlapping; or a call whose only accepted
/// code is `cudaErrorNotReady`. Under a serialising tool these cannot hold, whatever the driver does.
pub fn needs_asynchrony(case: &Case) -> Option<String> {
    for expectation in &case.expects {
        let asynchronous = match expectation {
            Expectation::Expect(p) | Expectation::Quality(p) => asynchronous(p).then_some(p),
            // A variant or an observation records which behaviour the driver shows. If one of its behaviours is
            // asynchronous, the tool can take it away and force another (or none: measured, the implicit-sync
            // `between-kernels` variants held no alternative under racecheck and synccheck), so what it would
            // record is the tool's, not the driver's.
            Expectation::Variant(alts) | Expectation::Observe(alts) => {
                alts.iter().map(|(_, p)| p).find(|p| asynchronous(p))
            }
            Expectation::Measure(_) => None,
        };
        if let Some(p) = asynchronous {
            return Some(format!("its verdict needs work still running when a call returns ({})", describe(p)));
        }
    }
    let not_ready_only = case.script.iter().find(|op| op.expect.len() == 1 && op.expect[0] == "cudaErrorNotReady");
    if let Some(op) = not_ready_only {
        let label = op.label.as_deref().unwrap_or("an operation");
        return Some(format!("{label} must return cudaErrorNotReady: device work still running when it is called"));
    }
    held_behind_gate(case)
}

/// Why `case` would wait on its gate's in-kernel timeout when kernels run one at a time, if it would: the main
/// thread waits on the host (a stream or event synchronize, a device synchronize, a synchronous copy ...) for a
/// kernel launched after a gate kernel that the host opens only later in the script. Without a tool that kernel
/// runs beside the held gate; under one it queues behind the gate's kernel, which ends only at its timeout
/// (measured: `managed-memory/access-coherent-during-pending-prefetch` under memcheck, "gate g timed out inside its
/// kernel", issue 34). The validator's can-finish check ([`crate::case::validate`]) is the same walk without
/// serialisation: there only work on the gate's own stream (or behind it by an event) waits for it.
fn held_behind_gate(case: &Case) -> Option<String> {
    // Gates held by graph kernel nodes: any graph launch may launch them (as the can-finish check counts them).
    let graph_gates: Vec<&str> = case
        .script
        .iter()
        .filter_map(|op| match &op.kind {
            OpKind::AddNode { node: NodeSpec::Kernel(NodeKernel::Gate { gate }), .. }
            | OpKind::SetNode { spec: NodeSpec::Kernel(NodeKernel::Gate { gate }), .. } => Some(gate.as_str()),
            _ => None,
        })
        .collect();
    let mut closed: Vec<&str> = Vec::new(); // gate kernels launched for real, not yet opened (nor scheduled to be)
    let mut opened: Vec<&str> = Vec::new();
    let mut capturing: Vec<&StreamRef> = Vec::new();
    let mut behind: HashMap<&StreamRef, &str> = HashMap::new(); // stream -> the gate its latest kernel queues behind
    let mut events_behind: HashMap<&str, &str> = HashMap::new(); // event -> the gate the work before it queues behind
    let still_closed = |closed: &Vec<&str>, g: &str| closed.contains(&g);
    for (i, op) in case.script.iter().enumerate() {
        let label = || op.label.clone().unwrap_or_else(|| format!("operation {}", i + 1));
        match &op.kind {
            OpKind::BeginCapture { stream, .. } | OpKind::BeginCaptureToGraph { stream, .. } => capturing.push(stream),
            OpKind::EndCapture { stream, .. } => capturing.retain(|s| *s != stream),
            OpKind::Open { gate, .. } => {
                closed.retain(|g| g != gate);
                opened.push(gate);
            }
            OpKind::Launch { kernel: KernelCall::Gate { gate }, stream } if !capturing.contains(&stream) => {
                closed.push(gate);
            }
            OpKind::Record { event, stream, .. } => {
                match behind.get(stream).filter(|g| still_closed(&closed, g)) {
                    Some(g) => events_behind.insert(event, g),
                    None => events_behind.remove(event.as_str()),
                };
            }
            OpKind::Wait { stream, event, .. } => {
                if let Some(g) = events_behind.get(event.as_str()).filter(|g| still_closed(&closed, g)) {
                    behind.insert(stream, g);
                }
            }
            kind => {
                // A kernel this launches now (not into a capture) queues behind every gate kernel still held.
                let kernel_stream = match kind {
                    OpKind::Launch { stream, .. }
                    | OpKind::LaunchGraph { stream, .. }
                    | OpKind::QueueDepth { stream, .. } => Some(stream),
                    _ => None,
                };
                if let OpKind::LaunchGraph { stream, .. } = kind {
                    if !capturing.contains(&stream) {
                        closed.extend(graph_gates.iter().filter(|g| !opened.contains(g)));
                    }
                }
                if let Some(stream) = kernel_stream.filter(|s| !capturing.contains(s)) {
                    if let Some(g) = closed.last() {
                        behind.insert(stream, g);
                    }
                }
                if op.thread.is_some() {
                    continue; // another host thread may wait; the main thread goes on to open the gate
                }
                let held = |s: &StreamRef| behind.get(s).copied().filter(|g| still_closed(&closed, g));
                let legacy_waits = || {
                    behind.keys().find_map(|s| match s {
                        StreamRef::Named(n) if crate::case::case_stream_non_blocking(case, n) => None,
                        _ => held(s),
                    })
                };
                let any = || behind.keys().find_map(|s| held(s));
                let waits_for = match kind.facts().waits {
                    HostWait::Nothing => None,
                    HostWait::Device => any(),
                    HostWait::Destroy(name) if is_buffer(case, name) => any(),
                    HostWait::Destroy(_) => None,
                    HostWait::LegacyStream => legacy_waits(),
                    HostWait::Stream(StreamRef::Legacy | StreamRef::Null) => legacy_waits(),
                    HostWait::Stream(s) => held(s),
                    HostWait::Event(e) => events_behind.get(e).copied().filter(|g| still_closed(&closed, g)),
                };
                if let Some(gate) = waits_for {
                    return Some(format!(
                        "{} waits on the host for a kernel launched behind gate {gate}, which the script opens only \
                         later: run one at a time, that kernel queues behind the gate's kernel, which ends only at \
                         its in-kernel timeout",
                        label()
                    ));
                }
            }
        }
    }
    None
}

fn is_buffer(case: &Case, name: &str) -> bool {
    case.decls.iter().any(|d| matches!(d, Decl::Buffer { name: n, .. } if n == name))
}

/// Why `case` cannot be observed under compute-sanitizer's `tool` (`None`: the tool is not known, so every
/// tool's limits apply), beyond the serialisation every tool shares; each measured on the H100 (2025.3.1, issue 23).
pub fn tool_limitation(case: &Case, tool: Option<&str>) -> Option<String> {
    let is = |t: &str| tool.is_none_or(|named| named == t);
    let launches = |f: &dyn Fn(&KernelCall) -> bool| {
        case.script.iter().any(|op| matches!(&op.kind, OpKind::Launch { kernel, .. } if f(kernel)))
    };
    let illegal_address = launches(&|k| matches!(k, KernelCall::Fault { fault: Fault::IllegalAddress }));
    if is("memcheck") && illegal_address {
        return Some(
            "memcheck stops the faulting store itself and the context then reports cudaErrorLaunchFailure, not the \
             hardware's cudaErrorIllegalAddress: the code the case checks would be the tool's"
                .to_owned(),
        );
    }
    if is("initcheck") && launches_gate(case) {
        return Some(
            "initcheck makes host calls wait for device work, so a gate the host opens later in the script is held \
             until its in-kernel timeout (measured: 9 gate timeouts under initcheck, none under the other tools)"
                .to_owned(),
        );
    }
    if let Some(buf) = kernel_reads_ipc_opened(case).filter(|_| is("initcheck")) {
        return Some(format!(
            "initcheck knows only the writes of the process it watches: a kernel of the importing process reads              {buf}, memory another process opened through IPC and wrote, and each word read is reported as              uninitialised (measured: 16384 reports for ipc/peer-opens-memory-and-writes-exporter-allocation, whose              values were right); a plain program of the same two processes (scripts/sanitizer/ipc_initcheck.cu)              gets the same reports"
        ));
    }
    if let Some(max) = queue_depth_launched(case).filter(|_| is("racecheck")) {
        return Some(format!(
            "racecheck instruments every one of the {max} spin launches with which `queue-depth` fills the launch \
             queue: measured, launch-queue/scaled-down-queue-still-blocks and scaled-up-queue-still-blocks (50 000 \
             and 100 000 launches) each ran into the 60 s deadline (issue 34)"
        ));
    }
    if let Some(max) = queue_depth_launched(case).filter(|_| is("memcheck")) {
        return Some(format!(
            "memcheck takes 12 to 17 ms for each spin launch with which `queue-depth` (at most {max}) fills the \
             launch queue: measured on the H100 (2 shards), the four launch-queue cases that fill it spent 12.7 to \
             17.5 s filling 1023 entries, and scaled-up-queue-still-blocks ran into the executor's 20 s case deadline \
             (under synccheck the same cases took 6 to 10 s)"
        ));
    }
    let graph_allocates =
        case.script.iter().any(|op| matches!(&op.kind, OpKind::AddNode { node: NodeSpec::MemAlloc { .. }, .. }));
    let graph_launches = case.script.iter().filter(|op| matches!(op.kind, OpKind::LaunchGraph { .. })).count();
    if is("initcheck") && graph_allocates && graph_launches > 1 {
        return Some(
            "initcheck loses a graph kernel node's writes to graph-allocated memory on a relaunch: the first launch \
             of the same node is clean, the second reports the upper 2 KiB of a 4 KiB allocation the node wrote as \
             uninitialised; a plain program of the same graph (scripts/sanitizer/graph_memnode_relaunch.cu) gets the \
             same 64 reports on its second launch"
                .to_owned(),
        );
    }
    let while_node = case.script.iter().any(|op| {
        matches!(&op.kind, OpKind::AddNode { node: NodeSpec::Conditional { kind: ConditionalKind::While, .. }, .. })
    });
    if is("racecheck") && while_node {
        return Some(
            "racecheck kills the process (SIGSEGV, no stderr) running a WHILE body of the suite's countdown and \
             transform kernels: a plain program that registers the suite's own kernel image the same way \
             (scripts/sanitizer/suite_image.cu, `countdown suite`) crashes alike under racecheck, though that image \
             computes the right values without the tool and under memcheck and initcheck, and the same graph with \
             nvcc-built kernels (cubin or JIT-compiled PTX) runs clean under racecheck: the tool's"
                .to_owned(),
        );
    }
    if let Some(exec) = device_launched_with_barrier(case).filter(|_| is("synccheck")) {
        return Some(format!(
            "synccheck reports every thread of a kernel that waits at a block barrier (__syncthreads) in a graph \
             launched from the device as \"Barrier error detected. Divergent thread(s) in warp\", and the kernel \
             fails (cudaErrorLaunchFailure); {exec} is such a graph. A plain program (scripts/sanitizer/suite_image.cu \
             `devtail`) gets 256 such errors for the transform's 256 threads and cudaErrorLaunchFailure, with the \
             suite's kernel image and with an nvcc-built copy alike, while the same graph launched from the host \
             (`devhost`) and the copy without its barrier launched from the device are clean: the tool's (issue 34)"
        ));
    }
    // Executables instantiated for device launch that the script launches (from the host).
    let device_launchable: Vec<&str> = case
        .script
        .iter()
        .filter_map(|op| match &op.kind {
            OpKind::Instantiate { exec, flags, .. } if flags.contains(&InstantiateFlag::DeviceLaunch) => {
                Some(exec.as_str())
            }
            _ => None,
        })
        .collect();
    let launches_device_launchable = case
        .script
        .iter()
        .any(|op| matches!(&op.kind, OpKind::LaunchGraph { exec, .. } if device_launchable.contains(&exec.as_str())));
    if is("initcheck") && launches_device_launchable {
        return Some(
            "initcheck never finishes a host launch of a graph instantiated for device launch: a plain program of \
             the same graph (scripts/sanitizer/suite_image.cu, `devlaunch`) is still running after 40 s under \
             initcheck, with the suite's kernel image or nvcc-built kernels alike, and finishes at once without the \
             tool and under memcheck and racecheck"
                .to_owned(),
        );
    }
    None
}

/// The buffer a kernel of the case reads that an `ipc-open-mem ... as BUF` maps from another process, if any.
fn kernel_reads_ipc_opened(case: &Case) -> Option<&str> {
    let opened: Vec<&str> = case
        .script
        .iter()
        .filter_map(|op| match &op.kind {
            OpKind::IpcOpenMem { into: Some(buf), .. } => Some(buf.as_str()),
            _ => None,
        })
        .collect();
    case.script.iter().find_map(|op| {
        let read: Vec<&str> = match &op.kind {
            OpKind::Launch { kernel, .. } => match kernel {
                KernelCall::Transform { buf, .. } | KernelCall::SinCos { buf, .. } => vec![buf],
                KernelCall::Compare { a, b, .. } | KernelCall::VecAdd { a, b, .. } => vec![a, b],
                _ => vec![],
            },
            _ => vec![],
        };
        read.into_iter().find(|b| opened.contains(b))
    })
}

/// Whether `kernel` waits at a block barrier (`__syncthreads`): the data and timing kernels do, in their exit stamp
/// (kernels/probes.cu `stamp_exit`, `sampled_exit`, `spin_body`) or around a shared total (`cc_compare`); the
/// gate, the fault and the one-thread kernels of conditional.cu and device_launch.cu do not.
fn waits_at_block_barrier(kernel: KernelWord) -> bool {
    match kernel {
        KernelWord::Spin
        | KernelWord::LazySpin
        | KernelWord::Fill
        | KernelWord::Transform
        | KernelWord::Compare
        | KernelWord::VecAdd
        | KernelWord::SinCos
        | KernelWord::Sleep => true,
        KernelWord::Gate
        | KernelWord::Fault
        | KernelWord::Bounded32
        | KernelWord::ManyRegisters
        | KernelWord::Sm80Only
        | KernelWord::PtxOnly
        | KernelWord::BadPtx
        | KernelWord::FuturePtx
        | KernelWord::SetCondition
        | KernelWord::Countdown
        | KernelWord::DeviceLaunch
        | KernelWord::RelaunchSelf
        | KernelWord::CurrentGraph => false,
    }
}

/// The first executable that `case` launches from the device (a `device-launch` kernel captured into a graph: a
/// device graph is launched from another graph) and whose graph, instantiated for device launch or updated from,
/// has a kernel that waits at a block barrier, if there is one.
fn device_launched_with_barrier(case: &Case) -> Option<&str> {
    // Graphs with such a kernel: kernel nodes added to them, kernels captured into them, and their clones.
    let mut with_barrier: Vec<&str> = Vec::new();
    let mut capturing: HashMap<&StreamRef, bool> = HashMap::new(); // capturing stream -> a barrier kernel captured
    let mut launched_from_device: Vec<&str> = Vec::new();
    let mut graphs_of: Vec<(&str, &str)> = Vec::new(); // (exec, graph it was instantiated for device launch or updated from)
    for op in &case.script {
        match &op.kind {
            OpKind::BeginCapture { stream, .. } | OpKind::BeginCaptureToGraph { stream, .. } => {
                capturing.insert(stream, false);
            }
            OpKind::EndCapture { stream, graph } => {
                // The capture ends whether or not it took a barrier kernel.
                let took_barrier = capturing.remove(stream) == Some(true);
                if took_barrier {
                    with_barrier.push(graph);
                }
            }
            OpKind::Launch { kernel, stream } => {
                if let Some(seen) = capturing.get_mut(stream) {
                    *seen |= waits_at_block_barrier(kernel.word());
                    if let KernelCall::DeviceLaunch { exec, .. } = kernel {
                        launched_from_device.push(exec);
                    }
                }
            }
            OpKind::AddNode { graph, node: NodeSpec::Kernel(k), .. } if waits_at_block_barrier(k.word()) => {
                with_barrier.push(graph);
            }
            OpKind::Clone { copy, graph } if with_barrier.contains(&graph.as_str()) => with_barrier.push(copy),
            OpKind::Instantiate { exec, graph, flags, .. } if flags.contains(&InstantiateFlag::DeviceLaunch) => {
                graphs_of.push((exec, graph));
            }
            OpKind::Update { exec, graph } => graphs_of.push((exec, graph)),
            _ => {}
        }
    }
    launched_from_device.into_iter().find(|exec| graphs_of.iter().any(|(e, g)| e == exec && with_barrier.contains(g)))
}

/// The most launches a `queue-depth` of `case` makes for real (outside a stream capture, where launches only add
/// nodes), if it has one.
fn queue_depth_launched(case: &Case) -> Option<u32> {
    let mut capturing: Vec<&StreamRef> = Vec::new();
    let mut most = None;
    for op in &case.script {
        match &op.kind {
            OpKind::BeginCapture { stream, .. } | OpKind::BeginCaptureToGraph { stream, .. } => capturing.push(stream),
            OpKind::EndCapture { stream, .. } => capturing.retain(|s| *s != stream),
            OpKind::QueueDepth { stream, max, .. } if !capturing.contains(&stream) => {
                most = most.max(Some(max.saturating_mul(op.repeat.max(1))));
            }
            _ => {}
        }
    }
    most
}

/// The compute-sanitizer tool this process runs under, when it is one and it is known (`run --sanitizer` says
/// which through [`SANITIZER_TOOL_VAR`]).
pub fn sanitizer_tool() -> Option<String> {
    std::env::var(SANITIZER_TOOL_VAR).ok().filter(|t| !t.is_empty())
}

/// Whether `case` launches a gate kernel (directly or as a graph's kernel node): under `CUDA_LAUNCH_BLOCKING=1`
/// the launch holds the host until the gate opens, which only the host can do.
pub fn launches_gate(case: &Case) -> bool {
    case.script.iter().any(|op| {
        matches!(op.kind, OpKind::Launch { kernel: KernelCall::Gate { .. }, .. })
            || matches!(&op.kind, OpKind::AddNode { node: NodeSpec::Kernel(NodeKernel::Gate { .. }), .. })
    })
}

fn asynchronous(p: &Predicate) -> bool {
    match p {
        Predicate::NotWaitedFor { .. } | Predicate::Overlaps { .. } => true,
        Predicate::Returned { code, .. } => code == "cudaErrorNotReady",
        _ => false,
    }
}

fn describe(p: &Predicate) -> String {
    match p {
        Predicate::NotWaitedFor { op, gate } => format!("{op} not-waited-for {gate}"),
        Predicate::Overlaps { a, b } => format!("{a} overlaps {b}"),
        Predicate::Returned { op, code } => format!("{op} returned {code}"),
        other => format!("{other:?}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn compute_sanitizer_is_seen_from_its_injection() {
        assert_eq!(detect_in(&env(&[("PATH", "/usr/bin")]), ""), None);
        let by_port = detect_in(&env(&[("NV_SANITIZER_INJECTION_PORT_BASE", "12340")]), "").unwrap();
        assert!(by_port.starts_with("compute-sanitizer (NV_SANITIZER_INJECTION_PORT_BASE"), "{by_port}");
        let maps = "7f00-7f01 r-xp 0 08:01 5 /usr/local/cuda/compute-sanitizer/libInterceptorInjectionTarget.so\n";
        let by_map = detect_in(&env(&[(SANITIZER_TOOL_VAR, "initcheck")]), maps).unwrap();
        assert!(by_map.starts_with("compute-sanitizer --tool initcheck (") && by_map.contains("is mapped"), "{by_map}");
    }

    #[test]
    fn profilers_and_launch_blocking_are_seen() {
        let ncu = detect_in(&env(&[("CUDA_INJECTION64_PATH", "/opt/nsight-compute/libInject.so")]), "").unwrap();
        assert!(ncu.starts_with("Nsight Compute"), "{ncu}");
        assert_eq!(detect_in(&env(&[("CUDA_LAUNCH_BLOCKING", "1")]), "").as_deref(), Some("CUDA_LAUNCH_BLOCKING=1"));
        assert_eq!(detect_in(&env(&[("CUDA_LAUNCH_BLOCKING", "0")]), ""), None);
    }

    fn case(body: &str) -> Case {
        let text = format!("case area/one\n  rule: r\n  source: s\n{body}end\n");
        crate::case::parse_file("area.case", &text).unwrap_or_else(|d| panic!("{d:?}")).cases.remove(0)
    }

    #[test]
    fn asynchrony_is_needed_by_what_only_running_work_shows() {
        let held = "  stream s blocking\n  stream t non-blocking\n  gate g\n  h: launch gate g on s\n";
        let not_waited =
            case(&format!("{held}  k: launch spin on t\n  open g\n  sync s\n  expect k not-waited-for g\n"));
        assert!(needs_asynchrony(&not_waited).unwrap().contains("k not-waited-for g"));
        let not_ready = case(&format!("{held}  q: query s => cudaErrorNotReady\n  open g\n  sync s\n"));
        assert!(needs_asynchrony(&not_ready).unwrap().contains("q must return cudaErrorNotReady"));
        // A variant one of whose behaviours is asynchronous: the tool would decide which one shows.
        let either = case(&format!(
            "{held}  k: sync t\n  open g after 300ms\n  sync s\n  variant a: k waited-for g | b: k not-waited-for g\n"
        ));
        assert!(needs_asynchrony(&either).unwrap().contains("k not-waited-for g"));
        assert!(launches_gate(&either));
        let waits = case(&format!("{held}  k: sync s\n  open g after 300ms\n  expect k waited-for g\n"));
        assert_eq!(needs_asynchrony(&waits), None);
        assert!(tool_limitation(&waits, Some("initcheck")).unwrap().contains("gate"));
        assert_eq!(tool_limitation(&waits, Some("memcheck")), None);
        assert!(tool_limitation(&waits, None).is_some(), "an unknown tool: every tool's limits apply");
    }

    #[test]
    fn a_host_wait_for_a_kernel_behind_a_held_gate_cannot_finish_when_kernels_run_one_at_a_time() {
        let decls =
            "  stream s non-blocking\n  stream t non-blocking\n  event e\n  graph gr\n  buffer m device 4KiB\n  gate g\n";
        let held = |script: &str| case(&format!("{decls}  h: launch gate g on s\n{script}  sync s\n  expect m == 9\n"));
        // The kernel on t queues behind the gate's kernel; the host waits for it before it opens the gate.
        let waits = held("  w: launch fill m 9 on t\n  ws: sync t\n  open g\n");
        assert!(needs_asynchrony(&waits).unwrap().contains("ws waits on the host for a kernel launched behind gate g"));
        let by_event = held("  launch fill m 9 on t\n  record e on t\n  we: sync e\n  open g\n");
        assert!(needs_asynchrony(&by_event).unwrap().contains("we waits"));
        let by_device = held("  launch fill m 9 on t\n  wd: device-sync\n  open g\n");
        assert!(needs_asynchrony(&by_device).is_some(), "a device synchronize waits for the gate itself too");
        // Opened (or scheduled to open) first, launched before the gate, or only captured: nothing waits for it.
        assert_eq!(needs_asynchrony(&held("  open g after 300ms\n  launch fill m 9 on t\n  sync t\n")), None);
        assert_eq!(needs_asynchrony(&held("  launch fill m 9 on t\n  open g\n  sync t\n")), None);
        let before = case(&format!(
            "{decls}  launch fill m 9 on t\n  h: launch gate g on s\n  sync t\n  open g\n  sync s\n  expect m == 9\n"
        ));
        assert_eq!(needs_asynchrony(&before), None);
        let captured = held(
            "  begin-capture t\n  launch fill m 9 on t\n  end-capture t into gr\n  sync t\n  open g\n  \
             launch fill m 9 on t\n",
        );
        assert_eq!(needs_asynchrony(&captured), None);
    }

    /// The suite's cases that a serialising tool would hold on a gate (issue 34 measured one under memcheck), and the
    /// launch-queue cases racecheck would run past the deadline: each named, so a new case that joins them is seen.
    #[test]
    fn the_suites_cases_held_behind_a_gate_under_serialisation() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
        let cases = crate::case::suite::load_dir(&dir).unwrap();
        let held: Vec<&str> = cases
            .iter()
            .filter(|c| needs_asynchrony(c).is_some_and(|why| why.contains("behind gate")))
            .map(|c| c.id.as_str())
            .collect();
        eprintln!("held behind a gate under serialisation: {held:#?}");
        assert!(held.contains(&"managed-memory/access-coherent-during-pending-prefetch"), "{held:?}");
        let queue: Vec<&str> = cases
            .iter()
            .filter(|c| tool_limitation(c, Some("racecheck")).is_some_and(|why| why.contains("queue-depth")))
            .map(|c| c.id.as_str())
            .collect();
        eprintln!("queue-depth under racecheck: {queue:#?}");
        assert!(queue.contains(&"launch-queue/scaled-down-queue-still-blocks"), "{queue:?}");
        assert!(queue.contains(&"launch-queue/scaled-up-queue-still-blocks"), "{queue:?}");
        assert!(!queue.contains(&"launch-queue/captured-launches-never-block"), "{queue:?}");
        let under_memcheck: Vec<&str> = cases
            .iter()
            .filter(|c| tool_limitation(c, Some("memcheck")).is_some_and(|why| why.contains("queue-depth")))
            .map(|c| c.id.as_str())
            .collect();
        assert_eq!(under_memcheck, queue, "the queue-filling cases are the same under memcheck and racecheck");
        let barrier: Vec<&str> = cases
            .iter()
            .filter(|c| tool_limitation(c, Some("synccheck")).is_some_and(|why| why.contains("block barrier")))
            .map(|c| c.id.as_str())
            .collect();
        eprintln!("device-launched graphs with a block barrier under synccheck: {barrier:#?}");
        assert!(barrier.contains(&"device-graph-launch/tail/runs-after-the-launching-graph"), "{barrier:?}");
        assert!(!barrier.contains(&"device-graph-launch/current-graph/set-in-a-device-graph"), "{barrier:?}");
    }

    #[test]
    fn synccheck_rules_out_device_launched_graphs_with_a_block_barrier_only() {
        let launched = |child: &str, flag: &str| {
            case(&format!(
                "  stream s\n  graph gc\n  graph gp\n  exec ec\n  exec ep\n  buffer x device 4\n  buffer code device 4\n  \
                 begin-capture s\n  {child}\n  end-capture s into gc\n  instantiate ec from gc{flag}\n  \
                 upload ec on s\n  begin-capture s\n  launch device-launch ec tail into code on s\n  \
                 end-capture s into gp\n  instantiate ep from gp\n  launch-graph ep on s\n  sync s\n"
            ))
        };
        let with_barrier = launched("launch transform x mul 10 add 1 on s", " device-launch");
        assert!(tool_limitation(&with_barrier, Some("synccheck")).unwrap().contains("ec is such a graph"));
        assert_eq!(tool_limitation(&with_barrier, Some("racecheck")), None);
        let one_thread = launched("launch current-graph into x on s", " device-launch");
        assert_eq!(tool_limitation(&one_thread, Some("synccheck")), None);
        // A host graph launched from the device: refused (or a fault), its kernel never runs as a device graph's.
        let host_graph = launched("launch transform x mul 10 add 1 on s", "");
        assert_eq!(tool_limitation(&host_graph, Some("synccheck")), None);
    }

    #[test]
    fn racecheck_and_memcheck_rule_out_queue_depth_launches_but_not_captured_ones() {
        let queue = "  stream s\n  gate g\n  held: launch gate g on s\n  open g after 1s\n  \
                     q: queue-depth s behind g max 50000\n  sync s\n  expect q waited-for g\n";
        let launched = case(queue);
        assert!(tool_limitation(&launched, Some("racecheck")).unwrap().contains("50000 spin launches"));
        assert!(tool_limitation(&launched, Some("memcheck")).unwrap().contains("at most 50000"));
        assert_eq!(tool_limitation(&launched, Some("synccheck")), None);
        let captured = case(
            "  stream s\n  gate g\n  graph gr\n  begin-capture s\n  q: queue-depth s behind g max 5000\n  \
             end-capture s into gr\n  open g\n  expect q value == 5000\n",
        );
        assert_eq!(tool_limitation(&captured, Some("racecheck")), None);
        assert_eq!(tool_limitation(&captured, Some("memcheck")), None);
    }

    #[test]
    fn initcheck_rules_out_kernels_reading_memory_another_process_wrote() {
        let ipc = |kernel: &str| {
            case(&format!(
                "  process p\n  buffer d device 64KiB\n  buffer m device 64KiB later\n  h: ipc-mem-handle d\n  \
                 o: @p ipc-open-mem h as m\n  @p launch {kernel} on legacy\n  @p sync legacy\n"
            ))
        };
        let reads = ipc("transform m mul 2 add 1");
        assert!(tool_limitation(&reads, Some("initcheck")).unwrap().contains("ipc_initcheck.cu"));
        assert_eq!(tool_limitation(&reads, Some("memcheck")), None);
        assert_eq!(tool_limitation(&ipc("fill m 3"), Some("initcheck")), None, "a kernel that only writes");
    }

    #[test]
    fn initcheck_rules_out_host_launches_of_device_launchable_graphs_only() {
        let graph = "  stream s blocking\n  graph g\n  exec ex\n  exec other\n  buffer x device 4KiB\n  create g\n  \
                     k: add-node g kernel fill x 1\n";
        let launched = case(&format!(
            "{graph}  i: instantiate ex from g device-launch with-params\n  launch-graph ex on s\n  sync s\n  \
             expect x == 1\n"
        ));
        assert!(tool_limitation(&launched, Some("initcheck")).unwrap().contains("device launch"));
        assert_eq!(tool_limitation(&launched, Some("memcheck")), None);
        // Refused for device launch, launched as an ordinary graph: nothing the tool changes.
        let refused = case(&format!(
            "{graph}  i: instantiate ex from g device-launch with-params => cudaErrorInvalidValue | cudaSuccess\n  \
             instantiate other from g\n  launch-graph other on s\n  sync s\n  expect x == 1\n"
        ));
        assert_eq!(tool_limitation(&refused, Some("initcheck")), None);
    }
}
