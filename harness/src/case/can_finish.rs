//! Whether a script can finish: a gate nobody opens, or a host-blocking call on the main thread that would wait for a
//! closed gate before anything opens it, makes a case hang until the watchdog. The validator rejects both before any
//! GPU work. What an operation may wait for is its `waits` column in the table of facts ([`OpKind::facts`]).

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
                OpKind::Launch { kernel: KernelCall::Gate { gate }, stream }
                | OpKind::HostFunc { hold: Some(gate), stream, .. } => {
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
        let any_gate = || closed.iter().next().map(|(g, (l, _))| (*g, *l));
        match kind.facts().waits {
            HostWait::Nothing => None,
            HostWait::Device => any_gate(),
            HostWait::Destroy(name) if self.is_buffer(name) => any_gate(),
            HostWait::Destroy(_) => None,
            HostWait::LegacyStream => legacy_waits(),
            HostWait::Stream(s) if is_legacy(s) => legacy_waits(),
            HostWait::Stream(s) => closed.iter().find(|(_, (_, gs))| *gs == s).map(|(g, (l, _))| (*g, *l)),
            HostWait::Event(e) => {
                let g = recorded_behind.get(e)?;
                closed.get(g).map(|(l, _)| (*g, *l))
            }
        }
    }
}

/// Whether `name` is a stream the case declares non-blocking (`non-blocking`, or raw flags with
/// cudaStreamNonBlocking): the legacy stream does not wait for it.
pub(crate) fn case_stream_non_blocking(case: &Case, name: &str) -> bool {
    case.decls.iter().any(|d| match d {
        Decl::Stream { name: n, non_blocking, raw_flags, .. } if n == name => {
            *non_blocking || raw_flags.is_some_and(|f| f & 1 != 0)
        }
        _ => false,
    })
}
