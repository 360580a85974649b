//! A simulated executor for the part of the case language that lowered programs use, so the whole pipeline
//! (lowering, the capture wrapper, the update, the judge, shrinking, printing) runs and is tested without a GPU.
//! It produces the same [`Observations`] as the GPU executor, so the harness's verdict judges both.
//!
//! It follows the documented semantics, not the model's code: streams are FIFO; a record snapshots what the
//! stream has enqueued; a wait adds the event's snapshot current at the call (nothing before the first record);
//! during a capture, work on a capturing stream becomes a node depending on the stream's capture dependencies, a
//! captured event carries dependencies, waiting on a captured event brings a stream into the capture, waiting on a
//! non-captured event from a capturing stream is an error (as the docs say; the H100 accepts a never-recorded
//! one), and `end-capture` fails if a stream was not joined back; a graph launch runs after earlier work on its
//! stream and after the previous launch of the same exec, with the node parameters the exec has when it is
//! launched. `set-node` changes the template, `exec-set-node` the exec; `update` fails with `topology-changed`
//! when node counts or edges differ, and otherwise copies every node's parameters from the template. A kernel node
//! whose parameters were set carries no stamp slot (as the executor's). `malloc-async` makes an async buffer exist
//! on the device, with garbage, from the moment its task runs until its `free-async` task runs; work touching it
//! outside that span is an illegal address, reported by the final synchronize. On several devices (declarations
//! with `device N`), `set-device` changes the current device, a kernel launch on a stream of another device fails
//! and so does a record of an event on a stream of another device (Programming Guide, "Multi-Device System");
//! peer access is granted, a peer copy is a copy, and a capture refuses one (as the H200 pair does).
//!
//! Once the script has been issued, the device "runs": tasks execute one at a time in an order chosen by
//! [`Schedule`] among those whose dependencies are done, with a logical clock for stamps. [`Faults`] break the
//! device on purpose, to show that the checks catch what they should.

use crate::program::SYMBOL_BYTES;
use harness::case::ast::{
    Case, Decl, Expectation, KernelCall, NodeKernel, NodeSpec, OpKind, Predicate, SrcAccessOrder, StreamRef, Target,
    INITIAL_WORD,
};
use harness::case::call::{ArgValue, PROBE_SYMBOL};
use harness::case::print;
use harness::case::words::Word;
use harness::record::observations::{
    BufferRecord, Contents, DeclRecord, GraphRecord, HostCallKind, HostCallRecord, KernelRecord, NodeRecord,
    Observations, OpRecord, OpValue,
};
use std::collections::{BTreeSet, HashMap};

/// Which ready task runs next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Schedule {
    /// The earliest issued: looks like a serialising device.
    IssueOrder,
    /// The latest issued: as far from issue order as the dependencies allow, so missing edges show.
    LatestFirst,
}

/// Deliberate device bugs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Faults {
    /// Waits do nothing, eagerly and in capture.
    pub ignore_waits: bool,
    /// `exec-set-node` and `update` report success and change nothing.
    pub ignore_updates: bool,
}

#[derive(Debug, Clone, Copy)]
pub struct Sim {
    pub schedule: Schedule,
    pub faults: Faults,
}

impl Default for Sim {
    fn default() -> Self {
        Sim { schedule: Schedule::LatestFirst, faults: Faults::default() }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Action {
    Fill {
        buf: String,
        value: u32,
    },
    Transform {
        buf: String,
        mul: u32,
        add: u32,
    },
    Compare {
        a: String,
        b: String,
        into: String,
    },
    Copy {
        dst: String,
        src: String,
    },
    Memset {
        buf: String,
        byte: u8,
    },
    Host {
        snapshot: Option<String>,
    },
    Alloc {
        buf: String,
    },
    Free {
        buf: String,
    },
    Empty,
    /// Marks the end of a graph launch.
    Barrier,
}

impl Action {
    fn is_kernel(&self) -> bool {
        matches!(self, Action::Fill { .. } | Action::Transform { .. } | Action::Compare { .. })
    }

    fn node_kind(&self) -> &'static str {
        match self {
            Action::Fill { .. } | Action::Transform { .. } | Action::Compare { .. } => "kernel",
            Action::Copy { .. } => "memcpy",
            Action::Memset { .. } => "memset",
            Action::Host { .. } => "host",
            Action::Alloc { .. } => "mem-alloc",
            Action::Free { .. } => "mem-free",
            Action::Empty | Action::Barrier => "empty",
        }
    }

    fn buffers(&self) -> Vec<&String> {
        match self {
            Action::Fill { buf, .. } | Action::Transform { buf, .. } | Action::Memset { buf, .. } => vec![buf],
            Action::Compare { a, b, into } => vec![a, b, into],
            Action::Copy { dst, src } => vec![dst, src],
            Action::Host { snapshot } => snapshot.iter().collect(),
            Action::Alloc { .. } | Action::Free { .. } | Action::Empty | Action::Barrier => Vec::new(),
        }
    }
}

/// A unit of work: what it does, the operation that issued (or captured) it, the kernel launch operation whose
/// stamp slot it writes, and what it waits for.
#[derive(Debug, Clone)]
struct Task {
    action: Action,
    op: Option<usize>,
    stamp: Option<usize>,
    deps: Vec<usize>,
}

#[derive(Debug, Clone, PartialEq)]
struct Node {
    action: Action,
    op: Option<usize>,
    stamp: Option<usize>,
}

#[derive(Debug, Clone, Default)]
struct Graph {
    nodes: Vec<Node>,
    edges: Vec<(usize, usize)>,
    /// The operation that filled the slot.
    made_by: usize,
}

#[derive(Debug, Clone)]
enum EventState {
    Never,
    Eager(Vec<usize>),
    Captured(Vec<usize>),
}

#[derive(Debug, Default)]
struct State {
    tasks: Vec<Task>,
    /// Tasks the next eager task on each stream depends on.
    tail: HashMap<String, Vec<usize>>,
    /// Capture dependencies of each capturing stream (graph node indices).
    capturing: HashMap<String, Vec<usize>>,
    origin: Option<String>,
    building: Graph,
    events: HashMap<String, EventState>,
    graphs: HashMap<String, Graph>,
    execs: HashMap<String, Graph>,
    /// The barrier task of each exec's latest launch.
    last_launch: HashMap<String, usize>,
    /// Tasks every later task depends on (the host synchronised with them).
    fence: Vec<usize>,
    /// Words of each buffer on the device; `None` while an async buffer is not allocated.
    buffers: HashMap<String, Option<Vec<u32>>>,
    /// Async buffers allocated as far as the host knows (malloc-async issued, free-async not yet).
    host_allocated: BTreeSet<String>,
    words: HashMap<String, usize>,
    /// The device each declared stream and event belongs to, and the script's current device.
    devices: HashMap<String, u32>,
    current: u32,
    /// The first illegal access the device made.
    fault: Option<String>,
    allocations: u32,
}

fn union(into: &mut Vec<usize>, more: &[usize]) {
    for &m in more {
        if !into.contains(&m) {
            into.push(m);
        }
    }
}

/// A failed operation: its code, and the value it recorded all the same (an update's result info).
#[derive(Debug)]
struct Fail(String, Option<Box<OpValue>>);

impl From<&str> for Fail {
    fn from(code: &str) -> Self {
        Fail(code.to_string(), None)
    }
}

/// The outcome of issuing one operation: its value, or its error code.
type Issued = Result<Option<OpValue>, Fail>;

impl Sim {
    /// Runs `case` and reports what it saw, as the GPU executor would.
    pub fn run(&self, case: &Case) -> Observations {
        let mut st = State::default();
        // The probes' device variable, with what an earlier case left in it.
        let symbol_words = (SYMBOL_BYTES / 4) as usize;
        st.words.insert(PROBE_SYMBOL.to_owned(), symbol_words);
        st.buffers.insert(PROBE_SYMBOL.to_owned(), Some(vec![0x5eed_0000; symbol_words]));
        let mut obs = Observations { case_id: case.id.clone(), ..Observations::default() };
        for d in &case.decls {
            st.devices.insert(d.name().to_string(), d.device().unwrap_or(0));
            let code = match d {
                Decl::Stream { name, .. } => {
                    st.tail.insert(name.clone(), Vec::new());
                    Some("cudaSuccess".to_string())
                }
                Decl::Event { name, .. } => {
                    st.events.insert(name.clone(), EventState::Never);
                    Some("cudaSuccess".to_string())
                }
                Decl::Buffer { name, bytes, later, .. } => {
                    let words = (*bytes / 4) as usize;
                    st.words.insert(name.clone(), words);
                    // As the executor: declared buffers start with the pattern, `later` ones are undefined until allocated.
                    st.buffers.insert(name.clone(), (!later).then(|| vec![INITIAL_WORD; words]));
                    (!later).then(|| "cudaSuccess".to_string())
                }
                Decl::Graph { .. } | Decl::Exec { .. } => None,
                other => {
                    obs.notes.push(format!("sim: unsupported declaration {other:?}"));
                    Some("cudaErrorNotSupported".to_string())
                }
            };
            obs.decls.push(DeclRecord {
                name: d.name().to_string(),
                kind: d.word().word().to_string(),
                line: 0,
                code,
                acceptable: vec!["cudaSuccess".into()],
            });
        }
        for (i, op) in case.script.iter().enumerate() {
            let acceptable = if op.expect.is_empty() { vec!["cudaSuccess".to_string()] } else { op.expect.clone() };
            let (code, value) = match op.thread {
                Some(_) => ("cudaErrorNotSupported".to_string(), None),
                None => match self.issue(&mut st, case, i) {
                    Ok(value) => ("cudaSuccess".to_string(), value),
                    Err(Fail(code, value)) => (code, value.map(|v| *v)),
                },
            };
            let t = 2 * i as u64;
            obs.ops.push(OpRecord {
                index: i,
                line: case.positions.op_lines.get(i).copied().unwrap_or(0),
                label: op.label.clone(),
                thread: op.thread.clone(),
                text: print::op(op),
                code: Some(code),
                acceptable,
                start_ns: t,
                end_ns: t + 1,
                value,
                not_run: None,
            });
        }
        self.run_device(case, st, obs)
    }

    fn issue(&self, st: &mut State, case: &Case, index: usize) -> Issued {
        let kind = &case.script[index].kind;
        let stream_of = |s: &StreamRef| match s {
            StreamRef::Named(n) if st.tail.contains_key(n) => Ok(n.clone()),
            _ => Err(Fail::from("cudaErrorInvalidResourceHandle")),
        };
        let device_of = |s: &StreamRef| st.devices.get(s.name()).copied().unwrap_or(0);
        if kind.is_kernel_launch() && kind.capture_stream().is_some_and(|s| device_of(s) != st.current) {
            // "A kernel launch will fail if it is issued to a stream that is not associated to the current device."
            return Err("cudaErrorInvalidResourceHandle".into());
        }
        let (action, stream) = match kind {
            OpKind::SetDevice { device } => {
                st.current = *device;
                return Ok(None);
            }
            OpKind::PeerAccess { .. } => return Ok(None),
            OpKind::MemcpyPeer { dst, src, bytes: None, stream: Some(s) } => {
                if st.capturing.contains_key(s.name()) {
                    // As the H200 pair with driver 580.159.04 answers (the docs say nothing).
                    return Err("cudaErrorStreamCaptureUnsupported".into());
                }
                (Action::Copy { dst: dst.clone(), src: src.clone() }, s)
            }
            OpKind::Launch { kernel: KernelCall::Fill { buf, value }, stream } => {
                (Action::Fill { buf: buf.clone(), value: *value }, stream)
            }
            OpKind::Launch { kernel: KernelCall::Transform { buf, mul, add }, stream } => {
                (Action::Transform { buf: buf.clone(), mul: *mul, add: *add }, stream)
            }
            OpKind::Launch { kernel: KernelCall::Compare { a, b, into }, stream } => {
                (Action::Compare { a: a.clone(), b: b.clone(), into: into.clone() }, stream)
            }
            OpKind::Memcpy { dst, src, bytes: None, inferred: false, stream: Some(s) } => {
                (Action::Copy { dst: dst.clone(), src: src.clone() }, s)
            }
            OpKind::Memset { buf, byte, bytes: None, stream: Some(s) } => {
                (Action::Memset { buf: buf.clone(), byte: *byte }, s)
            }
            // A one-copy batch in stream order is a stream-ordered copy ("The batch as a whole
            // executes in stream order"); the header refuses the legacy NULL stream.
            OpKind::MemcpyBatch {
                copies,
                stream: s,
                order: SrcAccessOrder::Stream,
                attrs_at: None,
                three_d: false,
            } if copies.len() == 1 => {
                if matches!(s, StreamRef::Legacy | StreamRef::Null) {
                    return Err("cudaErrorInvalidValue".into());
                }
                if st.capturing.contains_key(s.name()) {
                    // As the H100 with driver 580.159.04 answers (the header says nothing; cuda.core: no graph node).
                    return Err("cudaErrorStreamCaptureUnsupported".into());
                }
                (Action::Copy { dst: copies[0].0.clone(), src: copies[0].1.clone() }, s)
            }
            // The random programs' one generic call: a whole-buffer cudaMemcpy2DAsync (program.rs, Op::Copy2D), a
            // stream-ordered copy, captured as a memcpy node.
            OpKind::Call(call) if call.function == "cudaMemcpy2DAsync" => {
                let value = |name: &str| call.args.iter().find(|a| a.name == name).map(|a| &a.value);
                match (value("dst"), value("src"), value("stream")) {
                    (Some(ArgValue::Object(dst, _)), Some(ArgValue::Object(src, _)), Some(ArgValue::Stream(s))) => {
                        (Action::Copy { dst: dst.clone(), src: src.clone() }, s)
                    }
                    _ => return Err("cudaErrorInvalidValue".into()),
                }
            }
            // The symbol copies of the random programs (program.rs, Op::ToSymbol and Op::FromSymbol): stream-ordered
            // copies of `count` bytes at offset 0, captured as memcpy nodes.
            OpKind::Call(call)
                if call.function == "cudaMemcpyToSymbolAsync" || call.function == "cudaMemcpyFromSymbolAsync" =>
            {
                let value = |name: &str| call.args.iter().find(|a| a.name == name).map(|a| &a.value);
                let symbol = PROBE_SYMBOL.to_owned();
                match (value("src"), value("dst"), value("offset"), value("stream")) {
                    (Some(ArgValue::Object(src, _)), None, Some(ArgValue::Int(0)), Some(ArgValue::Stream(s))) => {
                        (Action::Copy { dst: symbol, src: src.clone() }, s)
                    }
                    (None, Some(ArgValue::Object(dst, _)), Some(ArgValue::Int(0)), Some(ArgValue::Stream(s))) => {
                        (Action::Copy { dst: dst.clone(), src: symbol }, s)
                    }
                    _ => return Err("cudaErrorInvalidValue".into()),
                }
            }
            OpKind::HostFunc { stream, snapshot, hold: None } => (Action::Host { snapshot: snapshot.clone() }, stream),
            OpKind::MallocAsync { buf, stream, pool: None } => {
                if !st.host_allocated.insert(buf.clone()) {
                    return Err("cudaErrorInvalidValue".into());
                }
                (Action::Alloc { buf: buf.clone() }, stream)
            }
            OpKind::FreeAsync { buf, stream } => {
                if !st.host_allocated.remove(buf) {
                    return Err("cudaErrorInvalidValue".into());
                }
                (Action::Free { buf: buf.clone() }, stream)
            }
            OpKind::Record { event, stream, external: false } => {
                let s = stream_of(stream)?;
                if st.devices.get(event) != st.devices.get(&s) {
                    // "cudaEventRecord() will fail if the input event and input stream are associated to different
                    // devices."
                    return Err("cudaErrorInvalidResourceHandle".into());
                }
                let state = match st.capturing.get(&s) {
                    Some(deps) => EventState::Captured(deps.clone()),
                    None => EventState::Eager(st.tail[&s].clone()),
                };
                st.events.insert(event.clone(), state);
                return Ok(None);
            }
            OpKind::Wait { stream, event, external: false } => {
                let s = stream_of(stream)?;
                if self.faults.ignore_waits {
                    return Ok(None);
                }
                let state = st.events.get(event).ok_or("cudaErrorInvalidResourceHandle")?.clone();
                match (st.capturing.get_mut(&s), state) {
                    (Some(deps), EventState::Captured(more)) => union(deps, &more),
                    // A capturing stream waits on an event not recorded in the capture: invalid without `external`.
                    (Some(_), _) => return Err("cudaErrorStreamCaptureIsolation".into()),
                    (None, EventState::Captured(more)) => {
                        st.capturing.insert(s, more);
                    }
                    (None, EventState::Eager(more)) => union(st.tail.get_mut(&s).expect("stream"), &more),
                    (None, EventState::Never) => {}
                }
                return Ok(None);
            }
            OpKind::BeginCapture { stream, .. } => {
                let s = stream_of(stream)?;
                if !st.capturing.is_empty() {
                    return Err("cudaErrorNotSupported".into());
                }
                st.capturing.insert(s.clone(), Vec::new());
                st.origin = Some(s);
                st.building = Graph { made_by: index, ..Graph::default() };
                return Ok(None);
            }
            OpKind::EndCapture { stream, graph } => {
                let s = stream_of(stream)?;
                if st.origin.as_ref() != Some(&s) {
                    return Err("cudaErrorIllegalState".into());
                }
                let closure = ancestors(&st.building);
                let joined = st.capturing.get(&s).cloned().unwrap_or_default();
                let covered = |d: &usize| joined.contains(d) || joined.iter().any(|&j| closure[j].contains(d));
                let unjoined = st.capturing.values().any(|deps| !deps.iter().all(covered));
                st.capturing.clear();
                st.origin = None;
                let mut g = std::mem::take(&mut st.building);
                if unjoined {
                    return Err("cudaErrorStreamCaptureUnjoined".into());
                }
                g.made_by = index;
                st.graphs.insert(graph.clone(), g);
                return Ok(None);
            }
            OpKind::Instantiate { exec, graph, .. } => {
                let g = st.graphs.get(graph).ok_or("cudaErrorInvalidValue")?.clone();
                st.execs.insert(exec.clone(), g);
                return Ok(None);
            }
            OpKind::Clone { copy, graph } => {
                let mut g = st.graphs.get(graph).ok_or("cudaErrorInvalidValue")?.clone();
                g.made_by = index;
                st.graphs.insert(copy.clone(), g);
                return Ok(None);
            }
            OpKind::AddNode { graph, node: NodeSpec::Empty, after } if after.is_empty() => {
                let g = st.graphs.get_mut(graph).ok_or("cudaErrorInvalidValue")?;
                g.nodes.push(Node { action: Action::Empty, op: Some(index), stamp: None });
                return Ok(None);
            }
            OpKind::SetNode { exec, node, spec: NodeSpec::Kernel(kernel) } => {
                let action = match kernel {
                    NodeKernel::Fill { buf, value } => Action::Fill { buf: buf.clone(), value: *value },
                    NodeKernel::Transform { buf, mul, add } => {
                        Action::Transform { buf: buf.clone(), mul: *mul, add: *add }
                    }
                    _ => return Err("cudaErrorNotSupported".into()),
                };
                let op = case.script.iter().position(|o| o.label.as_ref() == Some(node));
                let g = match exec {
                    Some(e) if self.faults.ignore_updates => {
                        st.execs.get(e).ok_or("cudaErrorInvalidValue")?;
                        return Ok(None);
                    }
                    Some(e) => st.execs.get_mut(e),
                    // The template graph: the one holding the node.
                    None => st.graphs.values_mut().find(|g| g.nodes.iter().any(|n| n.op == op)),
                };
                let n = g
                    .and_then(|g| g.nodes.iter_mut().find(|n| n.op == op && op.is_some()))
                    .filter(|n| n.action.is_kernel())
                    .ok_or("cudaErrorInvalidValue")?;
                n.action = action;
                n.stamp = None;
                return Ok(None);
            }
            OpKind::Update { exec, graph } => {
                let from = st.graphs.get(graph).ok_or("cudaErrorInvalidValue")?.clone();
                let e = st.execs.get_mut(exec).ok_or("cudaErrorInvalidValue")?;
                let result = |word: &str, node: Option<String>| {
                    Some(OpValue::Result { result: word.into(), error_node: node, error_from: None })
                };
                if self.faults.ignore_updates {
                    return Ok(result("success", None));
                }
                let failure = |node| {
                    Err(Fail("cudaErrorGraphExecUpdateFailure".into(), result("topology-changed", node).map(Box::new)))
                };
                if from.nodes.len() != e.nodes.len() {
                    return failure(None);
                }
                let label = |i: usize| from.nodes[i].op.and_then(|op| case.script[op].label.clone());
                let mut edges = from.edges.clone();
                let mut theirs = e.edges.clone();
                edges.sort_unstable();
                theirs.sort_unstable();
                if edges != theirs {
                    let n = edges.iter().zip(&theirs).find(|(a, b)| a != b).map_or(0, |(a, _)| a.1);
                    return failure(Some(label(n).unwrap_or_else(|| "?".into())));
                }
                for (mine, new) in e.nodes.iter_mut().zip(&from.nodes) {
                    mine.action = new.action.clone();
                    mine.stamp = new.stamp;
                }
                return Ok(result("success", None));
            }
            OpKind::LaunchGraph { exec, stream } => {
                let s = stream_of(stream)?;
                return self.launch(st, exec, &s).map(|()| None);
            }
            OpKind::Sync { target: Target::Stream(stream) } => {
                let s = stream_of(stream)?;
                if !st.capturing.is_empty() {
                    return Err("cudaErrorStreamCaptureUnsupported".into());
                }
                let tail = st.tail[&s].clone();
                union(&mut st.fence, &tail);
                return Ok(None);
            }
            _ => return Err("cudaErrorNotSupported".into()),
        };
        let stream = stream_of(stream)?;
        let value = match &action {
            Action::Alloc { .. } => {
                st.allocations += 1;
                Some(OpValue::Address(0x7f00_0000_0000 + u64::from(st.allocations) * 0x10_0000))
            }
            _ => None,
        };
        let stamp = action.is_kernel().then_some(index);
        if let Some(deps) = st.capturing.get(&stream).cloned() {
            let n = st.building.nodes.len();
            st.building.nodes.push(Node { action, op: Some(index), stamp });
            st.building.edges.extend(deps.iter().map(|&d| (d, n)));
            st.capturing.insert(stream, vec![n]);
        } else {
            let mut deps = st.tail[&stream].clone();
            union(&mut deps, &st.fence.clone());
            st.tasks.push(Task { action, op: Some(index), stamp, deps });
            st.tail.insert(stream, vec![st.tasks.len() - 1]);
        }
        Ok(value)
    }

    fn launch(&self, st: &mut State, exec: &str, stream: &str) -> Result<(), Fail> {
        if !st.capturing.is_empty() {
            return Err("cudaErrorNotSupported".into());
        }
        let g = st.execs.get(exec).ok_or("cudaErrorInvalidValue")?.clone();
        let mut base = st.tail[stream].clone();
        union(&mut base, &st.fence.clone());
        if let Some(&prev) = st.last_launch.get(exec) {
            union(&mut base, &[prev]);
        }
        let first = st.tasks.len();
        for (n, node) in g.nodes.iter().enumerate() {
            let mut deps: Vec<usize> = g.edges.iter().filter(|e| e.1 == n).map(|e| first + e.0).collect();
            if deps.is_empty() {
                deps = base.clone();
            }
            st.tasks.push(Task { action: node.action.clone(), op: node.op, stamp: node.stamp, deps });
        }
        let all: Vec<usize> = (first..st.tasks.len()).chain(base).collect();
        st.tasks.push(Task { action: Action::Barrier, op: None, stamp: None, deps: all });
        let barrier = st.tasks.len() - 1;
        st.tail.insert(stream.to_string(), vec![barrier]);
        st.last_launch.insert(exec.to_string(), barrier);
        Ok(())
    }

    /// Runs every task once its dependencies are done, one at a time, and completes the observations.
    fn run_device(&self, case: &Case, mut st: State, mut obs: Observations) -> Observations {
        let n = st.tasks.len();
        let mut done = vec![false; n];
        let mut ready: BTreeSet<usize> = BTreeSet::new();
        let mut clock = 1000u64;
        let mut stamps: HashMap<usize, (u64, u64)> = HashMap::new();
        let is_ready = |t: &Task, done: &[bool]| t.deps.iter().all(|&d| done[d]);
        for (i, t) in st.tasks.iter().enumerate() {
            if is_ready(t, &done) {
                ready.insert(i);
            }
        }
        while let Some(i) = match self.schedule {
            Schedule::IssueOrder => ready.pop_first(),
            Schedule::LatestFirst => ready.pop_last(),
        } {
            let task = st.tasks[i].clone();
            let (entry, exit) = (clock, clock + 10);
            clock += 20;
            if let Some(buf) = task.action.buffers().into_iter().find(|b| !matches!(st.buffers.get(*b), Some(Some(_))))
            {
                st.fault.get_or_insert(format!("{:?} touched {buf}, which is not allocated", task.action));
            }
            apply(&mut st, &task.action);
            if let Some(slot) = task.stamp {
                stamps.insert(slot, (entry, exit));
            }
            if let (Action::Host { snapshot }, Some(op)) = (&task.action, task.op) {
                let words = snapshot.as_ref().and_then(|b| st.buffers.get(b).cloned().flatten());
                obs.host_calls.push(HostCallRecord {
                    op_index: op,
                    label: case.script[op].label.clone(),
                    kind: HostCallKind::HostFunc,
                    at_ns: entry,
                    status: None,
                    snapshot: words.map(|w| Contents::of(&w, &[])),
                });
            }
            done[i] = true;
            // Tasks only depend on earlier tasks, so only later ones can become ready.
            for (j, t) in st.tasks.iter().enumerate().skip(i + 1) {
                if !done[j] && t.deps.contains(&i) && is_ready(t, &done) {
                    ready.insert(j);
                }
            }
        }
        for (i, op) in case.script.iter().enumerate().filter(|(_, o)| o.kind.is_kernel_launch()) {
            let s = stamps.get(&i);
            obs.kernels.push(KernelRecord {
                op_index: i,
                label: op.label.clone(),
                entry_ns: s.map(|s| s.0),
                exit_ns: s.map(|s| s.1),
            });
        }
        for d in &case.decls {
            match d {
                Decl::Buffer { name, kind, bytes, .. } => {
                    let words = st.buffers.get(name).cloned().flatten();
                    obs.buffers.push(BufferRecord {
                        name: name.clone(),
                        kind: kind.word().to_string(),
                        bytes: *bytes,
                        read_error: words.is_none().then(|| format!("{name} was not created")),
                        contents: words.map(|w| Contents::of(&w, &probe_indices(case, name))),
                    });
                }
                Decl::Graph { name } => {
                    if let Some(g) = st.graphs.get(name) {
                        obs.graphs.push(GraphRecord {
                            name: name.clone(),
                            end_capture_op: g.made_by,
                            null: false,
                            nodes: g
                                .nodes
                                .iter()
                                .enumerate()
                                .map(|(index, n)| NodeRecord {
                                    index,
                                    kind: n.action.node_kind().to_string(),
                                    op_index: n.op,
                                    label: n.op.and_then(|op| case.script[op].label.clone()),
                                })
                                .collect(),
                            edges: g.edges.iter().map(|&(a, b)| [a, b]).collect(),
                            error: None,
                        });
                    }
                }
                _ => {}
            }
        }
        obs.final_sync = Some(if st.fault.is_some() { "cudaErrorIllegalAddress" } else { "cudaSuccess" }.into());
        obs.notes.extend(st.fault);
        obs
    }
}

/// The word indices of `buf` that the case's expectations name, kept past the first words (as the executor does).
fn probe_indices(case: &Case, buf: &str) -> Vec<u64> {
    case.expects
        .iter()
        .flat_map(Expectation::predicates)
        .filter_map(|p| match p {
            Predicate::BufferEquals { buf: b, index: Some(i), .. } if b == buf => Some(*i),
            _ => None,
        })
        .collect()
}

/// Ancestors of each node of a graph under construction (edges run from earlier to later nodes).
fn ancestors(g: &Graph) -> Vec<Vec<usize>> {
    let mut anc: Vec<Vec<usize>> = vec![Vec::new(); g.nodes.len()];
    for &(a, b) in &g.edges {
        let mut more = anc[a].clone();
        more.push(a);
        union(&mut anc[b], &more);
    }
    anc
}

fn apply(st: &mut State, action: &Action) {
    let buffers = &mut st.buffers;
    fn words<'a>(buffers: &'a mut HashMap<String, Option<Vec<u32>>>, b: &str) -> Option<&'a mut Vec<u32>> {
        buffers.get_mut(b).and_then(Option::as_mut)
    }
    match action {
        Action::Fill { buf, value } => words(buffers, buf).into_iter().for_each(|w| w.fill(*value)),
        Action::Transform { buf, mul, add } => {
            for x in words(buffers, buf).into_iter().flatten() {
                *x = x.wrapping_mul(*mul).wrapping_add(*add);
            }
        }
        Action::Compare { a, b, into } => {
            let differ = match (buffers.get(a).cloned().flatten(), buffers.get(b).cloned().flatten()) {
                (Some(x), Some(y)) => x.iter().zip(&y).filter(|(p, q)| p != q).count() as u32,
                _ => 0,
            };
            if let Some(first) = buffers.get_mut(into).and_then(Option::as_mut).and_then(|w| w.first_mut()) {
                *first = differ;
            }
        }
        // As many words as both have: a buffer and the larger symbol share a prefix.
        Action::Copy { dst, src } => {
            if let Some(from) = buffers.get(src).cloned().flatten() {
                if let Some(to) = buffers.get_mut(dst).and_then(Option::as_mut) {
                    let n = from.len().min(to.len());
                    to[..n].copy_from_slice(&from[..n]);
                }
            }
        }
        Action::Memset { buf, byte } => {
            words(buffers, buf).into_iter().for_each(|w| w.fill(u32::from_ne_bytes([*byte; 4])))
        }
        Action::Alloc { buf } => {
            // Fresh memory holds whatever it held: a different pattern per allocation, so a read before the first
            // write shows.
            st.allocations += 1;
            let junk = 0xa110_c000 ^ st.allocations;
            let n = st.words.get(buf).copied().unwrap_or(0);
            st.buffers.insert(buf.clone(), Some(vec![junk; n]));
        }
        Action::Free { buf } => {
            st.buffers.insert(buf.clone(), None);
        }
        Action::Host { .. } | Action::Empty | Action::Barrier => {}
    }
}

pub mod tests {
    use super::*;
    use crate::checks::{check_program, Check};
    use crate::lower::tests::sample;
    use crate::lower::{lower, Variant};
    use crate::model::ModelMode;
    use crate::program::{BufKind, Edit, Op, Program, Update};
    use harness::readings::verdict::judge;
    use harness::record::verdict::VerdictKind;

    fn check(sim: Sim, p: &Program) -> Result<(), crate::checks::Failure> {
        check_program(p, &mut |c: &Case| sim.run(c), ModelMode::Faithful)
    }

    /// The sample program passes every check on a faithful simulated device, in both schedules.
    pub fn faithful_device_passes() {
        for schedule in [Schedule::IssueOrder, Schedule::LatestFirst] {
            if let Err(f) = check(Sim { schedule, faults: Faults::default() }, &sample()) {
                panic!("{schedule:?}: {f}");
            }
        }
    }

    /// A device that ignores waits is caught by the verdict: by a `before` (stamps), and by a buffer when no
    /// kernel is involved (the copy ran before the memset it waited for).
    pub fn device_ignoring_waits_is_caught() {
        let sim = Sim { schedule: Schedule::LatestFirst, faults: Faults { ignore_waits: true, ..Faults::default() } };
        let p = Program {
            ops: vec![
                Op::Fill { stream: 0, buf: 0, value: 5 },
                Op::Record { stream: 0, event: 0 },
                Op::Wait { stream: 1, event: 0 },
                Op::Transform { stream: 1, buf: 0, mul: 3, add: 1 },
            ],
            ..sample()
        };
        let f = check(sim, &p).expect_err("must be caught");
        assert_eq!(f.check, Check::Verdict, "{f}");
        assert!(f.message.contains("w0 before w3"), "{f}");
        let no_kernels = Program {
            ops: vec![
                Op::Memset { stream: 0, buf: 0, byte: 5 },
                Op::Record { stream: 0, event: 0 },
                Op::Wait { stream: 1, event: 0 },
                Op::Copy { stream: 1, dst: 1, src: 0 },
            ],
            ..sample()
        };
        let f = check(sim, &no_kernels).expect_err("must be caught");
        assert!(f.message.contains("expect b1 =="), "{f}");
    }

    /// The capture rules the lowering relies on: a wait on a non-captured event inside the capture is an error,
    /// and so is a stream left unjoined.
    pub fn capture_rules() {
        let p = Program { ops: vec![Op::Wait { stream: 1, event: 0 }], ..sample() };
        let case = lower(&p, Variant::Captured { launches: 1 }, ModelMode::Faithful);
        let v = judge(&case, &Sim::default().run(&case));
        assert!(v.messages.iter().any(|m| m.contains("cudaErrorStreamCaptureIsolation")), "{v:?}");
        let mut unjoined = lower(&sample(), Variant::Captured { launches: 1 }, ModelMode::Faithful);
        // Drop the join of s1 (its record and origin's wait).
        unjoined.script.retain(
            |o| !matches!(&o.kind, OpKind::Record { event, .. } | OpKind::Wait { event, .. } if event == "join1"),
        );
        let v = judge(&unjoined, &Sim::default().run(&unjoined));
        assert!(v.messages.iter().any(|m| m.contains("cudaErrorStreamCaptureUnjoined")), "{v:?}");
    }

    /// The sample with an exec edit, a template function change and a whole update: it passes, and a device
    /// that ignores updates is caught; the forbidden form (one more node) passes with its rejection.
    pub fn updates() {
        let mut p = sample();
        p.update = Some(Update {
            edits: vec![
                Edit { op: 0, to: Op::Fill { stream: 0, buf: 0, value: 9 }, exec: true },
                Edit { op: 5, to: Op::Fill { stream: 0, buf: 2, value: 4 }, exec: false },
            ],
            whole: Some(2),
            add_node: false,
        });
        assert_eq!(p.check_well_formed(crate::program::Flavor::Capturable), Ok(()));
        check(Sim::default(), &p).unwrap_or_else(|f| panic!("{f}"));
        let ignoring = Sim { faults: Faults { ignore_updates: true, ..Faults::default() }, ..Sim::default() };
        let f = check(ignoring, &p).expect_err("ignored update");
        assert_eq!((f.check, f.variant), (Check::Verdict, Variant::Captured { launches: 3 }), "{f}");
        if let Some(u) = p.update.as_mut() {
            u.add_node = true;
        }
        check(Sim::default(), &p).unwrap_or_else(|f| panic!("{f}"));
    }

    /// Over two devices the samples pass (the eager one with its peer copy); without its device switches the first
    /// kernel on device 1's stream fails to launch, as the Programming Guide says it must, and the verdict fails
    /// the case; captured, a peer copy is refused.
    pub fn two_devices() {
        let p = crate::lower::tests::two_device_sample();
        check(Sim::default(), &p).unwrap_or_else(|f| panic!("{f}"));
        let eager = crate::lower::tests::two_device_eager_sample();
        crate::checks::check_eager_program(&eager, &mut |c: &Case| Sim::default().run(c), ModelMode::Faithful)
            .unwrap_or_else(|f| panic!("{f}"));
        let refused = check(Sim::default(), &eager).expect_err("a peer copy in a capture");
        assert!(refused.message.contains("cudaErrorStreamCaptureUnsupported"), "{refused}");
        let mut case = lower(&p, Variant::Eager { reps: 1 }, ModelMode::Faithful);
        case.script.retain(|o| !matches!(o.kind, OpKind::SetDevice { .. }));
        let v = judge(&case, &Sim::default().run(&case));
        assert_eq!(v.kind, VerdictKind::Fail);
        assert!(
            v.messages
                .iter()
                .any(|m| m.contains("launch transform b1") && m.contains("cudaErrorInvalidResourceHandle")),
            "{v:?}"
        );
    }

    /// An async buffer: allocated on s0, filled there, copied out on s1 behind an event, freed on s1. Without
    /// the wait, the sim's device copies from memory that is not allocated yet (latest-first schedule).
    pub fn stream_ordered_allocation() {
        let mut p = Program {
            buffers: vec![BufKind::Device, BufKind::Async],
            ops: vec![
                Op::Alloc { stream: 0, buf: 1 },
                Op::Fill { stream: 0, buf: 1, value: 7 },
                Op::Record { stream: 0, event: 0 },
                Op::Wait { stream: 1, event: 0 },
                Op::Copy { stream: 1, dst: 0, src: 1 },
                Op::Free { stream: 1, buf: 1 },
            ],
            ..sample()
        };
        assert_eq!(p.check_well_formed(crate::program::Flavor::Capturable), Ok(()));
        check(Sim::default(), &p).unwrap_or_else(|f| panic!("{f}"));
        p.ops.remove(3);
        let case = lower(&p, Variant::Eager { reps: 1 }, ModelMode::Faithful);
        let obs = Sim::default().run(&case);
        assert_eq!(obs.final_sync.as_deref(), Some("cudaErrorIllegalAddress"), "{:?}", obs.notes);
        assert_eq!(judge(&case, &obs).kind, VerdictKind::Fail);
    }
}
