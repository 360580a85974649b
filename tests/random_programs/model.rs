//! The happens-before model: which work ops of a program must finish before which others start, from stream order
//! and event semantics alone. It knows nothing of the executor or of CUDA's API; it is written from the rules in
//! SEMANTICS.md §0.4–0.5:
//!
//! - ops issued to one stream run in issue order;
//! - `record e on s` captures "the contents of s at the time of this call" and overwrites any earlier record;
//! - `wait t for e` makes all later work on t wait for the record of e *current at the time of the wait call*
//!   (later re-records do not change it); before any record an event is an empty set of work, so the wait adds
//!   nothing.
//!
//! Every stream keeps a *frontier*: the nodes the next work op on it directly depends on. A work op depends on the
//! frontier and becomes the whole frontier; a record copies the frontier into the event; a wait adds the event's
//! copy to the frontier. Everything earlier in a stream is an ancestor of its frontier, so the frontier stands for
//! all of it. Edges always run from an earlier-issued op to a later one, so the model is acyclic by construction
//! and issue order is one valid execution order.

use crate::program::{Op, Program};

/// Whether the model is the faithful one or a deliberately broken one (to prove the checks catch it).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelMode {
    Faithful,
    /// Ignores every wait: cross-stream ordering is lost. Selected by `RANDOM_PROGRAMS_BROKEN_MODEL=ignore-waits`.
    IgnoreWaits,
    /// Thinks an update changes no parameters: launches after it run the parameters captured (`ignore-updates`).
    IgnoreUpdates,
    /// Thinks a forbidden update (a topology change) succeeds and applies the template's parameters
    /// (`forbidden-update-succeeds`).
    ForbiddenUpdateSucceeds,
}

pub const BROKEN_MODEL_VAR: &str = "RANDOM_PROGRAMS_BROKEN_MODEL";

impl ModelMode {
    pub const BROKEN: [(&'static str, ModelMode); 3] = [
        ("ignore-waits", ModelMode::IgnoreWaits),
        ("ignore-updates", ModelMode::IgnoreUpdates),
        ("forbidden-update-succeeds", ModelMode::ForbiddenUpdateSucceeds),
    ];

    /// The model the checks use: faithful unless [`BROKEN_MODEL_VAR`] asks for a broken one.
    pub fn from_env() -> Result<Self, String> {
        match std::env::var(BROKEN_MODEL_VAR).as_deref() {
            Err(_) | Ok("") => Ok(ModelMode::Faithful),
            Ok(word) => Self::BROKEN.iter().find(|(w, _)| *w == word).map(|(_, m)| *m).ok_or_else(|| {
                let words: Vec<&str> = Self::BROKEN.iter().map(|(w, _)| *w).collect();
                format!("{BROKEN_MODEL_VAR}={word}: the broken models are {}", words.join(", "))
            }),
        }
    }
}

/// What the update of a program does, by the documented rules (CUDA Runtime API, cudaGraphExecUpdate and
/// cudaGraphExecKernelNodeSetParams):
/// - `exec-set-node` changes the executable graph's node at once; `set-node` changes only the template;
/// - a whole update (`update gx from g`) of a topologically identical graph succeeds and sets the parameters of
///   *every* node from the template, so it also undoes earlier `exec-set-node` changes of nodes the template does
///   not have; "All nodeParams fields may change", the kernel function included (same device, no CDP);
/// - a whole update from a graph with another node count fails with `topology-changed`, names no error node
///   ("in which case resultInfo->errorNode is set to NULL"), and changes nothing;
/// - changes "only affect future launches": launches already enqueued run the parameters they had.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AfterUpdate {
    /// The body that later launches run.
    pub ops: Vec<Op>,
    /// The result `update gx from g` reports (`success` or `topology-changed`), if the update has one.
    pub result: Option<&'static str>,
}

pub fn after_update(program: &Program, mode: ModelMode) -> AfterUpdate {
    let Some(u) = &program.update else { return AfterUpdate { ops: program.ops.clone(), result: None } };
    let mut exec = program.ops.clone();
    let mut template = program.ops.clone();
    let mut result = None;
    let mut whole = |exec: &mut Vec<Op>, template: &Vec<Op>| {
        let forbidden = u.add_node && mode != ModelMode::ForbiddenUpdateSucceeds;
        result = Some(if forbidden { "topology-changed" } else { "success" });
        if !forbidden {
            exec.clone_from(template);
        }
    };
    for (k, e) in u.edits.iter().enumerate() {
        if u.whole == Some(k) {
            whole(&mut exec, &template);
        }
        if e.exec {
            exec[e.op] = e.to;
        } else {
            template[e.op] = e.to;
        }
    }
    if u.whole == Some(u.edits.len()) {
        whole(&mut exec, &template);
    }
    if mode == ModelMode::IgnoreUpdates {
        exec = program.ops.clone();
    }
    AfterUpdate { ops: exec, result }
}

/// A set of small integers (node indices).
#[derive(Debug, Clone, Default)]
pub struct Bits(Vec<u64>);

impl PartialEq for Bits {
    /// Equal as sets, whatever the number of trailing empty words.
    fn eq(&self, other: &Self) -> bool {
        let word = |b: &Bits, i: usize| b.0.get(i).copied().unwrap_or(0);
        (0..self.0.len().max(other.0.len())).all(|i| word(self, i) == word(other, i))
    }
}
impl Eq for Bits {}

impl Bits {
    pub fn insert(&mut self, i: usize) {
        let (w, b) = (i / 64, i % 64);
        if self.0.len() <= w {
            self.0.resize(w + 1, 0);
        }
        self.0[w] |= 1 << b;
    }
    pub fn contains(&self, i: usize) -> bool {
        self.0.get(i / 64).is_some_and(|w| w & (1 << (i % 64)) != 0)
    }
    pub fn union_with(&mut self, other: &Bits) {
        if self.0.len() < other.0.len() {
            self.0.resize(other.0.len(), 0);
        }
        for (a, b) in self.0.iter_mut().zip(&other.0) {
            *a |= b;
        }
    }
}

/// The transitive closure of a directed graph on nodes `0..n`: `reach[j]` holds every node with a path to `j`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Closure {
    ancestors: Vec<Bits>,
}

impl Closure {
    /// Closure of arbitrary edges (a graph read back from the driver may list nodes in any order).
    /// `Err(node)` names a node on a cycle.
    pub fn of(n: usize, edges: &[(usize, usize)]) -> Result<Closure, usize> {
        let mut preds = vec![Vec::new(); n];
        for &(a, b) in edges {
            preds[b].push(a);
        }
        // Kahn's order, then ancestors in that order: each node's ancestors are final before it is used.
        let mut indegree: Vec<usize> = vec![0; n];
        let mut succs = vec![Vec::new(); n];
        for &(a, b) in edges {
            indegree[b] += 1;
            succs[a].push(b);
        }
        let mut ready: Vec<usize> = (0..n).filter(|&i| indegree[i] == 0).collect();
        let mut order = Vec::with_capacity(n);
        while let Some(i) = ready.pop() {
            order.push(i);
            for &j in &succs[i] {
                indegree[j] -= 1;
                if indegree[j] == 0 {
                    ready.push(j);
                }
            }
        }
        if order.len() < n {
            return Err((0..n).find(|&i| indegree[i] > 0).unwrap_or(0));
        }
        let mut ancestors = vec![Bits::default(); n];
        for &j in &order {
            let mut acc = Bits::default();
            for &p in &preds[j] {
                acc.insert(p);
                acc.union_with(&ancestors[p]);
            }
            ancestors[j] = acc;
        }
        Ok(Closure { ancestors })
    }

    pub fn len(&self) -> usize {
        self.ancestors.len()
    }

    /// Is there a path from `a` to `b`?
    pub fn reaches(&self, a: usize, b: usize) -> bool {
        self.ancestors[b].contains(a)
    }

    /// The pairs `(a, b)` with a path from `a` to `b`.
    pub fn pairs(&self) -> Vec<(usize, usize)> {
        let n = self.len();
        (0..n).flat_map(|b| (0..n).filter(move |&a| self.reaches(a, b)).map(move |a| (a, b))).collect()
    }
}

/// The model of one program: nodes are its work ops in issue order.
#[derive(Debug, Clone)]
pub struct HappensBefore {
    /// `ops` index of each node.
    pub work: Vec<usize>,
    /// Direct edges between nodes (earlier node first): from each op's stream frontier, as a capture records its
    /// dependencies. The driver may leave out the redundant ones (the H100 does), so only closures are compared.
    pub edges: Vec<(usize, usize)>,
    /// Node of each op (`None` for record and wait).
    node_of_op: Vec<Option<usize>>,
    ancestors: Vec<Bits>,
}

impl HappensBefore {
    pub fn build(program: &Program, mode: ModelMode) -> Self {
        let mut b = Builder::new(program.streams.len(), program.events, mode);
        for op in &program.ops {
            b.push(op);
        }
        b.finish()
    }

    pub fn nodes(&self) -> usize {
        self.work.len()
    }

    pub fn node_of_op(&self, op: usize) -> Option<usize> {
        self.node_of_op.get(op).copied().flatten()
    }

    /// Must op `a` (an index into `ops`) finish before op `b` starts? False unless both are work ops.
    pub fn before(&self, a: usize, b: usize) -> bool {
        match (self.node_of_op(a), self.node_of_op(b)) {
            (Some(x), Some(y)) => self.ancestors[y].contains(x),
            _ => false,
        }
    }

    /// The closure as a [`Closure`] over node indices.
    pub fn closure(&self) -> Closure {
        Closure { ancestors: self.ancestors.clone() }
    }
}

/// Builds the model one op at a time, so the generator can ask, while it builds a program, whether an earlier op
/// is already ordered before the next op of a stream.
#[derive(Debug, Clone)]
pub struct Builder {
    mode: ModelMode,
    frontier: Vec<Vec<usize>>,
    /// The frontier copied by the event's latest record; `None` before the first.
    recorded: Vec<Option<Vec<usize>>>,
    work: Vec<usize>,
    edges: Vec<(usize, usize)>,
    node_of_op: Vec<Option<usize>>,
    ancestors: Vec<Bits>,
}

impl Builder {
    pub fn new(streams: usize, events: usize, mode: ModelMode) -> Self {
        Builder {
            mode,
            frontier: vec![Vec::new(); streams],
            recorded: vec![None; events],
            work: Vec::new(),
            edges: Vec::new(),
            node_of_op: Vec::new(),
            ancestors: Vec::new(),
        }
    }

    /// Appends the next op of the program.
    pub fn push(&mut self, op: &Op) {
        let op_index = self.node_of_op.len();
        let mut node = None;
        match *op {
            Op::Record { stream, event } => self.recorded[event] = Some(self.frontier[stream].clone()),
            Op::Wait { stream, event } => {
                if self.mode != ModelMode::IgnoreWaits {
                    // A never-recorded event is an empty set of work: nothing to add.
                    if let Some(deps) = &self.recorded[event] {
                        for &d in deps {
                            if !self.frontier[stream].contains(&d) {
                                self.frontier[stream].push(d);
                            }
                        }
                    }
                }
            }
            _ => {
                let n = self.work.len();
                let mut anc = Bits::default();
                for &d in &self.frontier[op.stream()] {
                    self.edges.push((d, n));
                    anc.insert(d);
                    anc.union_with(&self.ancestors[d]);
                }
                self.ancestors.push(anc);
                self.work.push(op_index);
                self.frontier[op.stream()] = vec![n];
                node = Some(n);
            }
        }
        self.node_of_op.push(node);
    }

    /// Would a work op issued now on `stream` have to wait for node-carrying op `op` (an index into the ops
    /// pushed so far)?
    pub fn ordered_before_next(&self, op: usize, stream: usize) -> bool {
        let Some(Some(n)) = self.node_of_op.get(op).copied() else { return false };
        self.frontier[stream].iter().any(|&d| d == n || self.ancestors[d].contains(n))
    }

    /// Has `event` been recorded so far?
    pub fn is_recorded(&self, event: usize) -> bool {
        self.recorded[event].is_some()
    }

    pub fn finish(self) -> HappensBefore {
        HappensBefore { work: self.work, edges: self.edges, node_of_op: self.node_of_op, ancestors: self.ancestors }
    }
}

pub mod tests {
    use super::*;
    use crate::program::BufKind;

    fn program(streams: usize, ops: Vec<Op>) -> Program {
        Program {
            streams: vec![false; streams],
            events: 2,
            buffers: vec![BufKind::Device; 3],
            buffer_bytes: 64,
            ops,
            update: None,
            placement: Default::default(),
        }
    }
    fn fill(stream: usize, buf: usize) -> Op {
        Op::Fill { stream, buf, value: 1 }
    }

    /// Program order within a stream, nothing across streams without events.
    pub fn stream_order_only() {
        let p = program(2, vec![fill(0, 0), fill(1, 1), fill(0, 2)]);
        let hb = HappensBefore::build(&p, ModelMode::Faithful);
        assert!(hb.before(0, 2));
        assert!(!hb.before(0, 1) && !hb.before(1, 2) && !hb.before(1, 0));
    }

    /// A wait uses the record current at the time of the wait call; re-recording later changes only later waits.
    pub fn wait_uses_record_current_at_wait_time() {
        let p = program(
            3,
            vec![
                fill(0, 0),                         // 0: w0 on s0
                Op::Record { stream: 0, event: 0 }, // 1
                Op::Wait { stream: 1, event: 0 },   // 2: s1 waits for {w0}
                fill(0, 1),                         // 3: w3 on s0
                Op::Record { stream: 0, event: 0 }, // 4: re-record: now {w0, w3}
                Op::Wait { stream: 2, event: 0 },   // 5: s2 waits for {w0, w3}
                fill(1, 2),                         // 6
                fill(2, 2),                         // 7
            ],
        );
        let hb = HappensBefore::build(&p, ModelMode::Faithful);
        assert!(hb.before(0, 6) && !hb.before(3, 6), "s1's wait must not see the later re-record");
        assert!(hb.before(0, 7) && hb.before(3, 7));
        assert!(!hb.before(6, 7) && !hb.before(7, 6));
    }

    /// Waiting on a never-recorded event adds nothing; a record after the wait does not reach back.
    pub fn never_recorded_wait_is_a_no_op() {
        let p = program(
            2,
            vec![fill(0, 0), Op::Wait { stream: 1, event: 1 }, fill(1, 0), Op::Record { stream: 0, event: 1 }],
        );
        let hb = HappensBefore::build(&p, ModelMode::Faithful);
        assert!(!hb.before(0, 2));
        assert_eq!(hb.edges, vec![]);
    }

    /// Ordering is transitive through a third stream, and the broken model drops every cross-stream edge.
    pub fn transitive_and_broken_mode() {
        let p = program(
            3,
            vec![
                fill(0, 0),
                Op::Record { stream: 0, event: 0 },
                Op::Wait { stream: 1, event: 0 },
                fill(1, 1),
                Op::Record { stream: 1, event: 1 },
                Op::Wait { stream: 2, event: 1 },
                fill(2, 2),
            ],
        );
        let hb = HappensBefore::build(&p, ModelMode::Faithful);
        assert!(hb.before(0, 3) && hb.before(3, 6) && hb.before(0, 6));
        assert_eq!(hb.edges, vec![(0, 1), (1, 2)], "capture-style direct edges");
        let broken = HappensBefore::build(&p, ModelMode::IgnoreWaits);
        assert!(!broken.before(0, 3) && !broken.before(0, 6));
    }

    /// The closure of arbitrary edges, and cycle detection.
    pub fn closure_of_graphs() {
        let c = Closure::of(4, &[(2, 1), (1, 0), (3, 0)]).expect("acyclic");
        assert!(c.reaches(2, 0) && c.reaches(3, 0) && !c.reaches(0, 2) && !c.reaches(2, 3) && !c.reaches(0, 0));
        assert_eq!(c.pairs(), vec![(1, 0), (2, 0), (3, 0), (2, 1)]);
        assert!(Closure::of(3, &[(0, 1), (1, 2), (2, 1)]).is_err());
    }

    /// Bit sets beyond one word.
    pub fn bits_beyond_one_word() {
        let mut a = Bits::default();
        a.insert(3);
        let mut b = Bits::default();
        b.insert(130);
        a.union_with(&b);
        assert!(a.contains(3) && a.contains(130) && !a.contains(64) && !a.contains(1000));
        let mut c = Bits(vec![0; 5]);
        c.insert(3);
        let mut d = Bits::default();
        d.insert(3);
        assert_eq!(c, d, "trailing empty words do not matter");
    }
}
