//! Whether a script can finish: a gate nobody opens, or a host-blocking call on the main thread that would wait for a
//! closed gate before anything opens it, makes a case hang until the watchdog. The validator rejects both before any
//! GPU work. [`Checker::blocks_on`] is exhaustive over the operations: a new one must say whether it can block.

use super::ast::*;
use super::validate::Checker;
use std::collections::{HashMap, HashSet};

impl Checker<'_, '_> {
    /// Rejects scripts that can never finish: a gate nobody opens, and host-blocking calls on the main thread that
    /// could wait for a gate before anything opens it.
    pub(super) fn gates_can_finish(&mut self) {
        let case = self.case;
        let expected_timeouts: HashSet<&str> = case
            .expects
            .iter()
            .flat_map(Expectation::predicates)
            .filter_map(|p| match p {
                Predicate::TimedOut { gate } => Some(gate.as_str()),
                _ => None,
            })
            .collect();
        // gate → (line it was launched on, its stream), while not yet opened or scheduled.
        let mut closed: HashMap<&str, (u32, &StreamRef)> = HashMap::new();
        // Gates held by graph kernel nodes: launching any graph may launch them (which graph holds which node is
        // not tracked here, so every launch counts: conservative).
        let graph_gates: Vec<&str> = case
            .script
            .iter()
            .filter_map(|o| match &o.kind {
                OpKind::AddNode { node: NodeSpec::Kernel(NodeKernel::Gate { gate }), .. }
                | OpKind::SetNode { spec: NodeSpec::Kernel(NodeKernel::Gate { gate }), .. } => Some(gate.as_str()),
                _ => None,
            })
            .collect();
        let mut opened: HashSet<&str> = HashSet::new();
        let mut recorded_behind: HashMap<&str, &str> = HashMap::new(); // event → gate it was recorded behind
        for (i, op) in case.script.iter().enumerate() {
            let line = self.op_line(i);
            match &op.kind {
                OpKind::LaunchGate { gate, stream } | OpKind::HostFunc { hold: Some(gate), stream, .. } => {
                    let opened_anywhere =
                        case.script.iter().any(|o| matches!(&o.kind, OpKind::Open { gate: g, .. } if g == gate));
                    if !opened_anywhere && !expected_timeouts.contains(gate.as_str()) {
                        self.report(line, format!("gate `{gate}` is launched but never opened: add `open {gate}` (or `expect {gate} timed-out`)"));
                    }
                    if !expected_timeouts.contains(gate.as_str()) {
                        closed.insert(gate, (line, stream));
                    }
                }
                OpKind::Open { gate, .. } => {
                    closed.remove(gate.as_str());
                    opened.insert(gate.as_str());
                }
                OpKind::AddNode { node: NodeSpec::Kernel(NodeKernel::Gate { gate }), .. } => {
                    let opened_anywhere =
                        case.script.iter().any(|o| matches!(&o.kind, OpKind::Open { gate: g, .. } if g == gate));
                    if !opened_anywhere && !expected_timeouts.contains(gate.as_str()) {
                        self.report(line, format!("gate `{gate}` is held by a graph node but never opened: add `open {gate}` (or `expect {gate} timed-out`)"));
                    }
                }
                OpKind::LaunchGraph { stream, .. } => {
                    for gate in &graph_gates {
                        if !opened.contains(gate) && !expected_timeouts.contains(gate) {
                            closed.insert(gate, (line, stream));
                        }
                    }
                }
                OpKind::Record { event, stream, .. } => {
                    match closed.iter().find(|(_, (_, s))| *s == stream) {
                        Some((g, _)) => recorded_behind.insert(event, g),
                        None => recorded_behind.remove(event.as_str()),
                    };
                }
                kind if op.thread.is_none() => {
                    if let Some((gate, gate_line)) = self.blocks_on(kind, &closed, &recorded_behind) {
                        self.report(line, format!(
                            "this would wait forever for gate `{gate}` launched on line {gate_line}: open it first, or schedule `open {gate} after 300ms` before this line"
                        ));
                    }
                }
                _ => {}
            }
        }
    }

    /// The closed gate a host-blocking operation could wait for, if any.
    fn blocks_on<'a>(
        &self,
        kind: &OpKind,
        closed: &HashMap<&'a str, (u32, &StreamRef)>,
        recorded_behind: &HashMap<&str, &'a str>,
    ) -> Option<(&'a str, u32)> {
        let non_blocking = |s: &StreamRef| match s {
            StreamRef::Named(n) => case_stream_non_blocking(self.case, n),
            _ => false,
        };
        let is_legacy = |s: &StreamRef| matches!(s, StreamRef::Legacy | StreamRef::Null);
        // A legacy-stream sync (or a synchronous copy, issued on the legacy stream) waits for every blocking stream
        // and the per-thread stream.
        let legacy_waits = || closed.iter().find(|(_, (_, s))| !non_blocking(s)).map(|(g, (l, _))| (*g, *l));
        match kind {
            OpKind::DeviceSync => closed.iter().next().map(|(g, (l, _))| (*g, *l)),
            OpKind::Sync { target: Target::Stream(s) } if is_legacy(s) => legacy_waits(),
            OpKind::Sync { target: Target::Stream(s) } => {
                closed.iter().find(|(_, (_, gs))| *gs == s).map(|(g, (l, _))| (*g, *l))
            }
            OpKind::Sync { target: Target::Event(e) } => {
                let g = recorded_behind.get(e.as_str())?;
                closed.get(g).map(|(l, _)| (*g, *l))
            }
            OpKind::Memcpy { stream: None, .. } | OpKind::Memset { stream: None, .. } => legacy_waits(),
            // cudaMemcpyPeer is "serialized with respect all pending and future asynchronous work in to the current
            // device, srcDevice, and dstDevice": whatever a gate holds on any device may hold it.
            OpKind::MemcpyPeer { stream: None, .. } => closed.iter().next().map(|(g, (l, _))| (*g, *l)),
            // Calls that may wait for the whole device (the docs let cudaFree, cudaMalloc, cudaHostRegister and
            // device-wide settings synchronize): a case must schedule the open before them.
            OpKind::Destroy { name } if !self.is_buffer(name) => None,
            OpKind::Create { .. }
            | OpKind::Destroy { .. }
            | OpKind::Register { .. }
            | OpKind::Unregister { .. }
            | OpKind::Malloc { .. }
            | OpKind::GraphMemTrim
            // No page says whether enabling peer access waits for the devices' work.
            | OpKind::PeerAccess { .. }
            | OpKind::SetLimit { .. }
            | OpKind::SetCacheConfig { .. } => closed.iter().next().map(|(g, (l, _))| (*g, *l)),
            OpKind::LaunchGate { .. }
            | OpKind::LaunchSpin { .. }
            | OpKind::LaunchLazySpin { .. }
            | OpKind::LaunchFault { .. }
            | OpKind::LaunchFill { .. }
            | OpKind::LaunchTransform { .. }
            | OpKind::LaunchCompare { .. }
            | OpKind::LaunchVecAdd { .. }
            | OpKind::LaunchSinCos { .. }
            | OpKind::LaunchSleep { .. }
            | OpKind::Memcpy { stream: Some(_), .. }
            | OpKind::MemcpyPeer { stream: Some(_), .. }
            | OpKind::Memset { stream: Some(_), .. }
            | OpKind::Record { .. }
            | OpKind::Wait { .. }
            | OpKind::Query { .. }
            | OpKind::Elapsed { .. }
            | OpKind::HostFunc { .. }
            | OpKind::Callback { .. }
            | OpKind::BeginCapture { .. }
            | OpKind::EndCapture { .. }
            | OpKind::CaptureStatus { .. }
            | OpKind::CaptureDeps { .. }
            | OpKind::PointerType { .. }
            | OpKind::ExchangeCaptureMode { .. }
            | OpKind::Instantiate { .. }
            | OpKind::LaunchGraph { .. }
            | OpKind::Upload { .. }
            | OpKind::MallocAsync { .. }
            | OpKind::FreeAsync { .. }
            // cudaSetDevice "will do no synchronization with the previous or new device".
            | OpKind::SetDevice { .. }
            | OpKind::GetDevice { .. }
            | OpKind::CanAccessPeer { .. }
            | OpKind::StreamPriority { .. }
            | OpKind::Read { .. }
            | OpKind::GetLastError
            | OpKind::PeekLastError
            | OpKind::Open { .. }
            | OpKind::Sleep { .. }
            // cudaMemPoolTrimTo releases what no outstanding allocation holds; nothing says it waits.
            | OpKind::PoolTrim { .. }
            | OpKind::Update { .. }
            | OpKind::AddNode { .. }
            | OpKind::Dependency { .. }
            | OpKind::Clone { .. }
            | OpKind::DestroyNode { .. }
            | OpKind::List { .. }
            | OpKind::SetNode { .. }
            | OpKind::SetEnabled { .. }
            | OpKind::GetEnabled { .. }
            | OpKind::BeginCaptureToGraph { .. }
            | OpKind::UpdateCaptureDeps { .. }
            | OpKind::ConditionCreate { .. }
            | OpKind::PoolSet { .. }
            | OpKind::PoolGet { .. }
            | OpKind::GraphMemGet { .. } => None,
        }
    }
}

fn case_stream_non_blocking(case: &Case, name: &str) -> bool {
    case.decls.iter().any(|d| match d {
        Decl::Stream { name: n, non_blocking, raw_flags, .. } if n == name => {
            *non_blocking || raw_flags.is_some_and(|f| f & 1 != 0)
        }
        _ => false,
    })
}
