//! A simulated executor for the part of the case language that lowered programs use, so the whole pipeline
//! (lowering, the capture wrapper, the checks, shrinking, printing) runs and is tested without a GPU.
//!
//! It follows the documented semantics, not the model's code: streams are FIFO; a record snapshots what the
//! stream has enqueued; a wait adds the event's snapshot current at the call (nothing before the first record);
//! during a capture, work on a capturing stream becomes a node depending on the stream's capture dependencies, a
//! captured event carries dependencies, waiting on a captured event brings a stream into the capture, waiting on a
//! non-captured event from a capturing stream is an error (as the docs say; the H100 accepts a never-recorded
//! one), and `end-capture` fails if a stream was not joined back; a graph launch runs after earlier work on its
//! stream and after the previous launch of the same exec.
//!
//! Once the script has been issued, the device "runs": tasks execute one at a time in an order chosen by
//! [`Schedule`] among those whose dependencies are done, with a logical clock for stamps. [`Faults`] break the
//! device on purpose, to show that each check catches what it should.

use crate::checks::{Execution, Executor, GraphShape};
use harness::case::ast::{Case, Decl, OpKind, StreamRef, Target};
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
    /// Marks the end of a graph launch.
    Barrier,
}

impl Action {
    fn is_kernel(&self) -> bool {
        matches!(self, Action::Fill { .. } | Action::Transform { .. } | Action::Compare { .. })
    }
}

#[derive(Debug, Clone)]
struct Task {
    action: Action,
    label: Option<String>,
    deps: Vec<usize>,
}

#[derive(Debug, Clone, Default)]
struct Graph {
    nodes: Vec<(Action, Option<String>)>,
    edges: Vec<(usize, usize)>,
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
    buffers: HashMap<String, Vec<u32>>,
    graph_seen: Option<String>,
}

fn union(into: &mut Vec<usize>, more: &[usize]) {
    for &m in more {
        if !into.contains(&m) {
            into.push(m);
        }
    }
}

impl Executor for Sim {
    fn execute(&mut self, case: &Case) -> Result<Execution, String> {
        let mut st = State::default();
        for d in &case.decls {
            match d {
                Decl::Stream { name, .. } => {
                    st.tail.insert(name.clone(), Vec::new());
                }
                Decl::Event { name, .. } => {
                    st.events.insert(name.clone(), EventState::Never);
                }
                Decl::Buffer { name, bytes, .. } => {
                    st.buffers.insert(name.clone(), vec![0; (*bytes / 4) as usize]);
                }
                Decl::Graph { .. } | Decl::Exec { .. } => {}
                other => return Err(format!("sim: unsupported declaration {other:?}")),
            }
        }
        for (i, op) in case.script.iter().enumerate() {
            if !(op.expect.is_empty() || op.expect == ["cudaSuccess"]) || op.thread.is_some() {
                return Err(format!("sim: op {i}: only plain operations expected to succeed are simulated"));
            }
            self.issue(&mut st, &op.kind, op.label.clone()).map_err(|e| format!("op {i} ({:?}): {e}", op.label))?;
        }
        Ok(self.run_device(st))
    }
}

fn stream_name(s: &StreamRef) -> Result<String, String> {
    match s {
        StreamRef::Named(n) => Ok(n.clone()),
        other => Err(format!("sim: default stream {other:?} is not simulated")),
    }
}

impl Sim {
    fn issue(&self, st: &mut State, kind: &OpKind, label: Option<String>) -> Result<(), String> {
        let work = |action: Action, stream: &StreamRef| Ok::<_, String>((action, stream_name(stream)?));
        let (action, stream) = match kind {
            OpKind::LaunchFill { buf, value, stream } => {
                work(Action::Fill { buf: buf.clone(), value: *value }, stream)?
            }
            OpKind::LaunchTransform { buf, mul, add, stream } => {
                work(Action::Transform { buf: buf.clone(), mul: *mul, add: *add }, stream)?
            }
            OpKind::LaunchCompare { a, b, into, stream } => {
                work(Action::Compare { a: a.clone(), b: b.clone(), into: into.clone() }, stream)?
            }
            OpKind::Memcpy { dst, src, bytes: None, stream: Some(s) } => {
                work(Action::Copy { dst: dst.clone(), src: src.clone() }, s)?
            }
            OpKind::Memset { buf, byte, bytes: None, stream: Some(s) } => {
                work(Action::Memset { buf: buf.clone(), byte: *byte }, s)?
            }
            OpKind::HostFunc { stream, snapshot, hold: None } => {
                work(Action::Host { snapshot: snapshot.clone() }, stream)?
            }
            OpKind::Record { event, stream, external: false } => {
                let s = stream_name(stream)?;
                let state = match st.capturing.get(&s) {
                    Some(deps) => EventState::Captured(deps.clone()),
                    None => EventState::Eager(st.tail.get(&s).ok_or("undeclared stream")?.clone()),
                };
                st.events.insert(event.clone(), state);
                return Ok(());
            }
            OpKind::Wait { stream, event, external: false } => {
                let s = stream_name(stream)?;
                if self.faults.ignore_waits {
                    return Ok(());
                }
                let state = st.events.get(event).ok_or("undeclared event")?.clone();
                match (st.capturing.get_mut(&s), state) {
                    (Some(deps), EventState::Captured(more)) => union(deps, &more),
                    (Some(_), _) => {
                        return Err("a capturing stream waits on an event not recorded in the capture \
                                                (invalid without `external`: the capture is invalidated)"
                            .into())
                    }
                    (None, EventState::Captured(more)) => {
                        st.capturing.insert(s, more);
                    }
                    (None, EventState::Eager(more)) => union(st.tail.get_mut(&s).ok_or("undeclared stream")?, &more),
                    (None, EventState::Never) => {}
                }
                return Ok(());
            }
            OpKind::BeginCapture { stream, .. } => {
                let s = stream_name(stream)?;
                if !st.capturing.is_empty() {
                    return Err("sim: one capture at a time".into());
                }
                st.capturing.insert(s.clone(), Vec::new());
                st.origin = Some(s);
                st.building = Graph::default();
                return Ok(());
            }
            OpKind::EndCapture { stream, graph } => {
                let s = stream_name(stream)?;
                if st.origin.as_ref() != Some(&s) {
                    return Err("end-capture on a stream that is not the capture's origin".into());
                }
                let closure = ancestors(&st.building);
                let joined = st.capturing.get(&s).ok_or("the origin is not capturing")?;
                for (other, deps) in &st.capturing {
                    let covered = |d: &usize| joined.contains(d) || joined.iter().any(|&j| closure[j].contains(d));
                    if !deps.iter().all(covered) {
                        return Err(format!(
                            "stream {other} was not joined back to the origin (StreamCaptureUnjoined)"
                        ));
                    }
                }
                st.capturing.clear();
                st.origin = None;
                st.graphs.insert(graph.clone(), std::mem::take(&mut st.building));
                st.graph_seen = Some(graph.clone());
                return Ok(());
            }
            OpKind::Instantiate { exec, graph, .. } => {
                let g = st.graphs.get(graph).ok_or("instantiate from an empty graph slot")?.clone();
                st.execs.insert(exec.clone(), g);
                return Ok(());
            }
            OpKind::LaunchGraph { exec, stream } => return self.launch(st, exec, &stream_name(stream)?),
            OpKind::Sync { target: Target::Stream(stream) } => {
                let s = stream_name(stream)?;
                if !st.capturing.is_empty() {
                    return Err("sync during a capture".into());
                }
                let tail = st.tail.get(&s).ok_or("undeclared stream")?.clone();
                union(&mut st.fence, &tail);
                return Ok(());
            }
            other => return Err(format!("sim: unsupported operation {other:?}")),
        };
        if let Some(deps) = st.capturing.get(&stream).cloned() {
            let n = st.building.nodes.len();
            st.building.nodes.push((action, label));
            st.building.edges.extend(deps.iter().map(|&d| (d, n)));
            st.capturing.insert(stream, vec![n]);
        } else {
            let mut deps = st.tail.get(&stream).ok_or("undeclared stream")?.clone();
            union(&mut deps, &st.fence.clone());
            st.tasks.push(Task { action, label, deps });
            st.tail.insert(stream, vec![st.tasks.len() - 1]);
        }
        Ok(())
    }

    fn launch(&self, st: &mut State, exec: &str, stream: &str) -> Result<(), String> {
        if !st.capturing.is_empty() {
            return Err("sim: graph launch during a capture".into());
        }
        let g = st.execs.get(exec).ok_or("launch of an empty exec slot")?.clone();
        let mut base = st.tail.get(stream).ok_or("undeclared stream")?.clone();
        union(&mut base, &st.fence.clone());
        if let Some(&prev) = st.last_launch.get(exec) {
            union(&mut base, &[prev]);
        }
        let first = st.tasks.len();
        for (n, (action, label)) in g.nodes.iter().enumerate() {
            let mut deps: Vec<usize> = g.edges.iter().filter(|e| e.1 == n).map(|e| first + e.0).collect();
            if deps.is_empty() {
                deps = base.clone();
            }
            st.tasks.push(Task { action: action.clone(), label: label.clone(), deps });
        }
        let all: Vec<usize> = (first..st.tasks.len()).chain(base).collect();
        st.tasks.push(Task { action: Action::Barrier, label: None, deps: all });
        let barrier = st.tasks.len() - 1;
        st.tail.insert(stream.to_string(), vec![barrier]);
        st.last_launch.insert(exec.to_string(), barrier);
        Ok(())
    }

    /// Runs every task once its dependencies are done, one at a time, and reports what it saw.
    fn run_device(&self, mut st: State) -> Execution {
        let mut ex = Execution::default();
        let n = st.tasks.len();
        let mut done = vec![false; n];
        let mut ready: BTreeSet<usize> = BTreeSet::new();
        let mut clock = 1000u64;
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
            apply(&mut st.buffers, &task.action);
            if let Some(label) = &task.label {
                if task.action.is_kernel() {
                    ex.stamps.insert(label.clone(), (entry, exit));
                }
                if let Action::Host { snapshot } = &task.action {
                    ex.host_order.push(label.clone());
                    if let Some(words) = snapshot.as_ref().and_then(|b| st.buffers.get(b)) {
                        ex.snapshots.insert(label.clone(), words.clone());
                    }
                }
            }
            done[i] = true;
            // Tasks only depend on earlier tasks, so only later ones can become ready.
            for (j, t) in st.tasks.iter().enumerate().skip(i + 1) {
                if !done[j] && t.deps.contains(&i) && is_ready(t, &done) {
                    ready.insert(j);
                }
            }
        }
        ex.buffers = st.buffers;
        ex.graph = st
            .graph_seen
            .and_then(|g| st.graphs.get(&g))
            .map(|g| GraphShape { nodes: g.nodes.iter().map(|(_, l)| l.clone()).collect(), edges: g.edges.clone() });
        ex
    }
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

fn apply(buffers: &mut HashMap<String, Vec<u32>>, action: &Action) {
    match action {
        Action::Fill { buf, value } => buffers.get_mut(buf).into_iter().for_each(|w| w.fill(*value)),
        Action::Transform { buf, mul, add } => {
            for x in buffers.get_mut(buf).into_iter().flatten() {
                *x = x.wrapping_mul(*mul).wrapping_add(*add);
            }
        }
        Action::Compare { a, b, into } => {
            let differ = match (buffers.get(a), buffers.get(b)) {
                (Some(x), Some(y)) => x.iter().zip(y).filter(|(p, q)| p != q).count() as u32,
                _ => 0,
            };
            if let Some(first) = buffers.get_mut(into).and_then(|w| w.first_mut()) {
                *first = differ;
            }
        }
        Action::Copy { dst, src } => {
            if let Some(words) = buffers.get(src).cloned() {
                buffers.insert(dst.clone(), words);
            }
        }
        Action::Memset { buf, byte } => {
            buffers.get_mut(buf).into_iter().for_each(|w| w.fill(u32::from_ne_bytes([*byte; 4])))
        }
        Action::Host { .. } | Action::Barrier => {}
    }
}

pub mod tests {
    use super::*;
    use crate::checks::{check_program, Check};
    use crate::lower::tests::sample;
    use crate::model::ModelMode;
    use crate::program::{Op, Program};

    /// The sample program passes every check on a faithful simulated device, in both schedules.
    pub fn faithful_device_passes() {
        for schedule in [Schedule::IssueOrder, Schedule::LatestFirst] {
            let mut sim = Sim { schedule, faults: Faults::default() };
            if let Err(f) = check_program(&sample(), &mut sim, ModelMode::Faithful) {
                panic!("{schedule:?}: {f}");
            }
        }
    }

    /// A device that ignores waits is caught: by the order check first (stamps), and by the data check when the
    /// stamps are not compared (the copy ran before the fill it waited for).
    pub fn device_ignoring_waits_is_caught() {
        let mut sim = Sim { schedule: Schedule::LatestFirst, faults: Faults { ignore_waits: true } };
        let p = Program {
            ops: vec![
                Op::Fill { stream: 0, buf: 0, value: 5 },
                Op::Record { stream: 0, event: 0 },
                Op::Wait { stream: 1, event: 0 },
                Op::Transform { stream: 1, buf: 0, mul: 3, add: 1 },
            ],
            ..sample()
        };
        let f = check_program(&p, &mut sim, ModelMode::Faithful).expect_err("must be caught");
        assert_eq!(f.check, Check::Order, "{f}");
        let no_kernels = Program {
            ops: vec![
                Op::Memset { stream: 0, buf: 0, byte: 5 },
                Op::Record { stream: 0, event: 0 },
                Op::Wait { stream: 1, event: 0 },
                Op::Copy { stream: 1, dst: 1, src: 0 },
            ],
            ..sample()
        };
        let f = check_program(&no_kernels, &mut sim, ModelMode::Faithful).expect_err("must be caught");
        assert_eq!(f.check, Check::Data, "{f}");
    }

    /// The capture rules the lowering relies on: a wait on a non-captured event inside the capture is an error,
    /// and so is a stream left unjoined.
    pub fn capture_rules() {
        use crate::interpret;
        use crate::lower::{lower, Variant};
        use crate::model::HappensBefore;
        let p = Program { ops: vec![Op::Wait { stream: 1, event: 0 }], ..sample() };
        let case = lower(
            &p,
            Variant::Captured { launches: 1 },
            &HappensBefore::build(&p, ModelMode::Faithful),
            &interpret::run(&p, 1),
        );
        let err = Sim::default().execute(&case).expect_err("never-recorded wait in capture");
        assert!(err.contains("not recorded in the capture"), "{err}");
        let mut unjoined = lower(
            &sample(),
            Variant::Captured { launches: 1 },
            &HappensBefore::build(&sample(), ModelMode::Faithful),
            &interpret::run(&sample(), 1),
        );
        // Drop the join of s1 (its record and origin's wait).
        unjoined.script.retain(
            |o| !matches!(&o.kind, OpKind::Record { event, .. } | OpKind::Wait { event, .. } if event == "join1"),
        );
        let err = Sim::default().execute(&unjoined).expect_err("unjoined");
        assert!(err.contains("not joined"), "{err}");
    }
}
