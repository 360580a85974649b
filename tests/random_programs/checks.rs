//! The properties checked against real (or simulated) executions, and the boundary to whatever runs a case.
//!
//! For each program three cases run (see lower.rs): eager once, captured and launched N times, eager N times.
//! - (a) every happens-before pair of the model holds in the device stamps (kernels) and in the host log (host
//!   functions) of the single eager run and of the captured run;
//! - (b) final buffers and host-function snapshots equal the CPU interpreter's, in both;
//! - (c) the captured graph has one node per work op, labelled with that op, and its edges' transitive closure is
//!   exactly the model's;
//! - (d) N graph launches leave the same buffers as N eager runs (and as N interpreter runs).

use crate::interpret::{self, Expected};
use crate::lower::{self, Variant};
use crate::model::{Closure, HappensBefore, ModelMode};
use crate::program::{buffer_name, label, label_index, Op, Program};
use harness::case::ast::Case;
use std::collections::HashMap;
use std::fmt;

/// What one run of a case showed: the part of the executor's observations these checks need.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Execution {
    /// Device stamps `[entry, exit]` (ns, `%globaltimer`) of each labelled kernel. In a graph launched several
    /// times: those of the last launch (each launch overwrites the node's stamp slot).
    pub stamps: HashMap<String, (u64, u64)>,
    /// Each buffer's words after the script and a device synchronize, by buffer name.
    pub buffers: HashMap<String, Vec<u32>>,
    /// What each labelled host function saw in its snapshot buffer when it last ran.
    pub snapshots: HashMap<String, Vec<u32>>,
    /// Labels of host functions in the order they ran (a graph's host node once per launch).
    pub host_order: Vec<String>,
    /// The graph captured by the case, if it captured one.
    pub graph: Option<GraphShape>,
}

/// A captured graph as read back with cudaGraphGetNodes/cudaGraphGetEdges.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GraphShape {
    /// The label of the operation whose capture produced each node; `None` for a node no labelled op produced.
    pub nodes: Vec<Option<String>>,
    /// Edges as `(from, to)` indices into `nodes`.
    pub edges: Vec<(usize, usize)>,
}

/// Runs a case and reports what it saw. `Err` when the case could not run as written (an operation returned an
/// unexpected code, the capture was invalidated, a deadline passed): the message says which and why.
pub trait Executor {
    fn execute(&mut self, case: &Case) -> Result<Execution, String>;
}

/// The executor for the GPU, or why there is none: runs each case in this process through
/// `harness::exec::run_case` and keeps the part of its observations these checks need.
pub fn gpu_executor() -> Result<Box<dyn Executor>, String> {
    let device = harness::gpu::probe(0).map_err(|e| e.to_string())?;
    Ok(Box::new(GpuExecutor { device, kernels: cuda_conformance::kernel_table() }))
}

struct GpuExecutor {
    device: harness::gpu::DeviceInfo,
    kernels: harness::kernels::KernelTable,
}

impl Executor for GpuExecutor {
    fn execute(&mut self, case: &Case) -> Result<Execution, String> {
        use harness::exec::{run_case, ExecOptions};
        let obs = run_case(case, &self.kernels, &self.device, &ExecOptions::default());
        let mut problems: Vec<String> = obs
            .ops
            .iter()
            .filter(|op| op.code.as_ref().is_none_or(|c| !op.acceptable.contains(c)))
            .map(|op| {
                format!(
                    "line {}: `{}` returned {:?} {}",
                    op.line,
                    op.text,
                    op.code,
                    op.not_run.as_deref().unwrap_or("")
                )
            })
            .collect();
        problems.extend(obs.gates.iter().filter(|g| g.timed_out).map(|g| format!("gate {} timed out", g.name)));
        if obs.final_sync.as_deref() != Some("cudaSuccess") {
            problems.push(format!("final device synchronize: {:?}", obs.final_sync));
        }
        problems.extend(obs.notes.iter().cloned());
        problems.extend(obs.graphs.iter().filter_map(|g| Some(format!("graph {}: {}", g.name, g.error.as_ref()?))));
        if !problems.is_empty() {
            return Err(problems.join("; "));
        }
        let stamps = obs.kernels.iter().filter_map(|k| Some((k.label.clone()?, (k.entry_ns?, k.exit_ns?)))).collect();
        // Generated ops write whole buffers (compare one word), so buffers have few runs and are rebuilt exactly;
        // should one not be, its first words stand in and the data check fails showing them.
        let words = |c: &harness::observations::Contents| c.all_words().unwrap_or_else(|| c.first_words.clone());
        let buffers = obs.buffers.iter().filter_map(|b| Some((b.name.clone(), words(b.contents.as_ref()?)))).collect();
        let snapshots =
            obs.host_calls.iter().filter_map(|h| Some((h.label.clone()?, words(h.snapshot.as_ref()?)))).collect();
        let host_order = obs.host_calls.iter().filter_map(|h| h.label.clone()).collect();
        let graph = obs.graphs.last().map(|g| GraphShape {
            nodes: g.nodes.iter().map(|n| n.label.clone()).collect(),
            edges: g.edges.iter().map(|e| (e[0], e[1])).collect(),
        });
        Ok(Execution { stamps, buffers, snapshots, host_order, graph })
    }
}

/// Which property failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// A CPU-only property of the program itself (well-formed, model invariants, round trip).
    Program,
    /// The case did not run as written.
    Runs,
    /// (a) happens-before holds in stamps and host order.
    Order,
    /// (b) buffers and snapshots equal the interpreter's.
    Data,
    /// (c) graph nodes and the closure of its edges equal the model's.
    Graph,
    /// (d) N launches equal N eager runs.
    Relaunch,
}

/// A failed property: which one, in which run, what was seen, and the case that shows it.
#[derive(Debug, Clone)]
pub struct Failure {
    pub check: Check,
    pub variant: Variant,
    pub message: String,
    /// The case that shows it (boxed: failures travel in `Result`s).
    pub case: Box<Case>,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} check failed in the {:?} run: {}", self.check, self.variant, self.message)
    }
}

/// How many times the captured graph is launched and the eager body repeated, for (d).
pub const RELAUNCHES: u32 = 3;

/// Checks (a)–(d) for one capturable program, with the given model.
pub fn check_program(program: &Program, exec: &mut dyn Executor, mode: ModelMode) -> Result<(), Failure> {
    let model = HappensBefore::build(program, mode);
    let once = interpret::run(program, 1);
    let many = interpret::run(program, RELAUNCHES);
    let (single, graph, repeated) =
        (Variant::Eager { reps: 1 }, Variant::Captured { launches: RELAUNCHES }, Variant::Eager { reps: RELAUNCHES });

    let eager = run(program, exec, single, &model, &once)?;
    let captured = run(program, exec, graph, &model, &many)?;
    let eager_many = run(program, exec, repeated, &model, &many)?;

    for (variant, ex, expected) in [(single, &eager, &once), (graph, &captured, &many)] {
        let fail = |check, message| failure(program, variant, &model, expected, check, message);
        check_order(program, &model, ex, variant.runs()).map_err(|m| fail(Check::Order, m))?;
        check_data(program, expected, ex).map_err(|m| fail(Check::Data, m))?;
    }
    let fail = |check, message| failure(program, graph, &model, &many, check, message);
    let shape = captured.graph.as_ref().ok_or_else(|| fail(Check::Graph, "the executor reported no graph".into()))?;
    check_graph(program, &model, shape).map_err(|m| fail(Check::Graph, m))?;
    check_relaunch(program, &many, &eager_many, &captured).map_err(|m| fail(Check::Relaunch, m))
}

/// Checks (a) and (b) for one eager-only program (it may wait on never-recorded events).
pub fn check_eager_program(program: &Program, exec: &mut dyn Executor, mode: ModelMode) -> Result<(), Failure> {
    let model = HappensBefore::build(program, mode);
    let once = interpret::run(program, 1);
    let single = Variant::Eager { reps: 1 };
    let ex = run(program, exec, single, &model, &once)?;
    let fail = |check, message| failure(program, single, &model, &once, check, message);
    check_order(program, &model, &ex, 1).map_err(|m| fail(Check::Order, m))?;
    check_data(program, &once, &ex).map_err(|m| fail(Check::Data, m))
}

fn run(
    program: &Program,
    exec: &mut dyn Executor,
    variant: Variant,
    model: &HappensBefore,
    expected: &Expected,
) -> Result<Execution, Failure> {
    let case = lower::lower(program, variant, model, expected);
    exec.execute(&case).map_err(|message| Failure { check: Check::Runs, variant, message, case: Box::new(case) })
}

fn failure(
    program: &Program,
    variant: Variant,
    model: &HappensBefore,
    expected: &Expected,
    check: Check,
    message: String,
) -> Failure {
    Failure { check, variant, message, case: Box::new(lower::lower(program, variant, model, expected)) }
}

/// (a) For every ordered pair of the model: kernels' stamps say the first ended before the second started; host
/// functions ran in that order in every one of the `runs` launches (the k-th entries of each label in the log).
pub fn check_order(program: &Program, model: &HappensBefore, ex: &Execution, runs: u32) -> Result<(), String> {
    let work: Vec<usize> = program.work_ops().collect();
    let stamp = |i: usize| ex.stamps.get(&label(i)).ok_or_else(|| format!("no stamps for kernel {}", label(i)));
    let host_runs = |i: usize| -> Vec<usize> {
        ex.host_order.iter().enumerate().filter(|(_, l)| **l == label(i)).map(|(pos, _)| pos).collect()
    };
    for &i in &work {
        if program.ops[i].is_kernel() {
            let (entry, exit) = *stamp(i)?;
            if exit < entry {
                return Err(format!("kernel {} exited at {exit} before it entered at {entry}", label(i)));
            }
        }
        if let Op::HostFunc { .. } = program.ops[i] {
            let n = host_runs(i).len();
            if n != runs as usize {
                return Err(format!("host function {} ran {n} times, expected {runs}", label(i)));
            }
        }
    }
    for &a in &work {
        for &b in &work {
            if !model.before(a, b) {
                continue;
            }
            let (oa, ob) = (&program.ops[a], &program.ops[b]);
            if oa.is_kernel() && ob.is_kernel() {
                let ((_, a_exit), (b_entry, _)) = (*stamp(a)?, *stamp(b)?);
                if b_entry < a_exit {
                    return Err(format!(
                        "{} must finish before {} starts, but {} started at {b_entry} and {} ended at {a_exit} \
                         ({} ns early)",
                        label(a),
                        label(b),
                        label(b),
                        label(a),
                        a_exit - b_entry
                    ));
                }
            }
            if let (Op::HostFunc { .. }, Op::HostFunc { .. }) = (oa, ob) {
                for (k, (pa, pb)) in host_runs(a).into_iter().zip(host_runs(b)).enumerate() {
                    if pb < pa {
                        return Err(format!("host function {} ran before {} in run {}", label(b), label(a), k + 1));
                    }
                }
            }
        }
    }
    Ok(())
}

/// (b) Buffers and snapshots equal the interpreter's.
pub fn check_data(program: &Program, expected: &Expected, ex: &Execution) -> Result<(), String> {
    check_buffers(expected, ex)?;
    for (&i, want) in &expected.snapshots {
        let got = ex.snapshots.get(&label(i)).ok_or_else(|| format!("no snapshot from host function {}", label(i)))?;
        compare_words(&format!("snapshot of {} ({})", label(i), program.ops[i]), want, got)?;
    }
    Ok(())
}

fn check_buffers(expected: &Expected, ex: &Execution) -> Result<(), String> {
    for (i, want) in expected.buffers.iter().enumerate() {
        let name = buffer_name(i);
        let got = ex.buffers.get(&name).ok_or_else(|| format!("no contents for buffer {name}"))?;
        compare_words(&format!("buffer {name}"), want, got)?;
    }
    Ok(())
}

fn compare_words(what: &str, want: &[u32], got: &[u32]) -> Result<(), String> {
    if want.len() != got.len() {
        return Err(format!("{what}: {} words, expected {}", got.len(), want.len()));
    }
    match want.iter().zip(got).position(|(w, g)| w != g) {
        None => Ok(()),
        Some(k) => Err(format!(
            "{what}[{k}] = {:#010x}, expected {:#010x} ({} of {} words differ)",
            got[k],
            want[k],
            want.iter().zip(got).filter(|(w, g)| w != g).count(),
            want.len()
        )),
    }
}

/// (c) One node per work op, each labelled with its op, and the closure of the graph's edges equals the model's.
/// Comparing closures (not edges) leaves the driver free to add or drop redundant edges.
pub fn check_graph(program: &Program, model: &HappensBefore, graph: &GraphShape) -> Result<(), String> {
    if graph.nodes.len() != model.nodes() {
        return Err(format!("{} graph nodes for {} work ops", graph.nodes.len(), model.nodes()));
    }
    // Model node of each graph node.
    let mut node_of = Vec::with_capacity(graph.nodes.len());
    let mut seen = vec![false; model.nodes()];
    for (g, l) in graph.nodes.iter().enumerate() {
        let l = l.as_deref().ok_or_else(|| format!("graph node {g} was produced by no labelled op"))?;
        let m = label_index(l)
            .and_then(|op| model.node_of_op(op))
            .ok_or_else(|| format!("graph node {g} has label {l}, which is no work op of the program"))?;
        if std::mem::replace(&mut seen[m], true) {
            return Err(format!("two graph nodes carry label {l}"));
        }
        node_of.push(m);
    }
    if let Some(&(a, b)) = graph.edges.iter().find(|&&(a, b)| a >= node_of.len() || b >= node_of.len()) {
        return Err(format!("graph edge {a} -> {b} names a node that does not exist"));
    }
    let edges: Vec<(usize, usize)> = graph.edges.iter().map(|&(a, b)| (node_of[a], node_of[b])).collect();
    let closure = Closure::of(model.nodes(), &edges)
        .map_err(|n| format!("the graph has a cycle through {}", label(model.work[n])))?;
    let wanted = model.closure();
    for a in 0..model.nodes() {
        for b in 0..model.nodes() {
            let (in_graph, in_model) = (closure.reaches(a, b), wanted.reaches(a, b));
            if in_graph != in_model {
                let (la, lb) = (label(model.work[a]), label(model.work[b]));
                let (oa, ob) = (&program.ops[model.work[a]], &program.ops[model.work[b]]);
                return Err(if in_graph {
                    format!("the graph orders {la} ({oa}) before {lb} ({ob}); the model does not")
                } else {
                    format!("the model orders {la} ({oa}) before {lb} ({ob}); the graph has no path")
                });
            }
        }
    }
    Ok(())
}

/// (d) N launches of the graph leave what N eager runs leave, and both what N interpreter runs leave.
pub fn check_relaunch(
    program: &Program,
    expected: &Expected,
    eager: &Execution,
    captured: &Execution,
) -> Result<(), String> {
    for i in 0..program.buffers.len() {
        let name = buffer_name(i);
        let (e, c) = (eager.buffers.get(&name), captured.buffers.get(&name));
        if e != c {
            let show =
                |w: Option<&Vec<u32>>| w.and_then(|w| w.first()).map_or("nothing".into(), |v| format!("{v:#010x}.."));
            return Err(format!(
                "buffer {name} after {RELAUNCHES} graph launches ({}) differs from {RELAUNCHES} eager runs ({})",
                show(c),
                show(e)
            ));
        }
    }
    // Only buffers: the repeated eager body's host functions carry per-repetition labels (see lower::rep_label).
    check_buffers(expected, eager).map_err(|m| format!("{RELAUNCHES} eager runs: {m}"))
}

pub mod tests {
    use super::*;
    use crate::lower::tests::sample;

    /// A correct synthetic execution of `lower::tests::sample` (w0 fill; w3 copy; w4 host func; w5 transform),
    /// for `runs` runs: w0 → w3 → w4 and w0 → w5 are the model's order.
    fn good(runs: u32) -> (Program, HappensBefore, Expected, Execution) {
        let p = sample();
        let model = HappensBefore::build(&p, ModelMode::Faithful);
        let expected = interpret::run(&p, runs);
        let mut ex = Execution::default();
        ex.stamps.insert("w0".into(), (100, 200));
        ex.stamps.insert("w5".into(), (250, 300));
        for (i, words) in expected.buffers.iter().enumerate() {
            ex.buffers.insert(buffer_name(i), words.clone());
        }
        ex.snapshots.insert("w4".into(), expected.snapshots[&4].clone());
        ex.host_order = vec!["w4".into(); runs as usize];
        // Node order as a driver might list it, with a redundant edge w0 -> w4.
        ex.graph = Some(GraphShape {
            nodes: vec![Some("w4".into()), Some("w5".into()), Some("w0".into()), Some("w3".into())],
            edges: vec![(2, 3), (3, 0), (2, 1), (2, 0)],
        });
        (p, model, expected, ex)
    }

    pub fn good_execution_passes() {
        let (p, model, expected, ex) = good(1);
        assert_eq!(check_order(&p, &model, &ex, 1), Ok(()));
        assert_eq!(check_data(&p, &expected, &ex), Ok(()));
        assert_eq!(check_graph(&p, &model, ex.graph.as_ref().expect("graph")), Ok(()));
        let (_, _, many, ex3) = good(3);
        assert_eq!(check_relaunch(&p, &many, &ex3, &ex3), Ok(()));
    }

    /// (a): a kernel that started before its predecessor ended; a missing stamp; a host function run twice.
    pub fn order_violations() {
        let (p, model, _, mut ex) = good(1);
        ex.stamps.insert("w5".into(), (150, 300));
        let err = check_order(&p, &model, &ex, 1).expect_err("overlap must fail");
        assert!(err.contains("w0 must finish before w5"), "{err}");
        ex.stamps.remove("w5");
        assert!(check_order(&p, &model, &ex, 1).expect_err("missing").contains("no stamps"));
        let (_, _, _, mut ex) = good(1);
        ex.host_order.push("w4".into());
        assert!(check_order(&p, &model, &ex, 1).expect_err("twice").contains("ran 2 times"));
    }

    /// (b): a wrong word in a buffer; a wrong snapshot.
    pub fn data_violations() {
        let (p, _, expected, mut ex) = good(1);
        if let Some(w) = ex.buffers.get_mut("b1") {
            w[2] ^= 1;
        }
        let err = check_data(&p, &expected, &ex).expect_err("wrong word");
        assert!(err.starts_with("buffer b1[2]"), "{err}");
        let (_, _, _, mut ex) = good(1);
        ex.snapshots.insert("w4".into(), vec![0; 4]);
        assert!(check_data(&p, &expected, &ex).expect_err("snapshot").contains("snapshot of w4"));
    }

    /// (c): a missing edge, an extra edge, a missing node, an unlabelled node, a duplicate label, a cycle.
    pub fn graph_violations() {
        let (p, model, _, ex) = good(1);
        let g = ex.graph.expect("graph");
        let with_edges = |edges: Vec<(usize, usize)>| GraphShape { nodes: g.nodes.clone(), edges };
        let err = check_graph(&p, &model, &with_edges(vec![(2, 3), (3, 0)])).expect_err("missing edge");
        assert!(err.contains("the model orders w0") && err.contains("w5"), "{err}");
        let err = check_graph(&p, &model, &with_edges(vec![(2, 3), (3, 0), (2, 1), (1, 3)])).expect_err("extra");
        assert!(err.contains("the graph orders w5"), "{err}");
        let fewer = GraphShape { nodes: g.nodes[..3].to_vec(), edges: vec![] };
        assert!(check_graph(&p, &model, &fewer).expect_err("node count").contains("3 graph nodes"));
        let mut unlabelled = g.clone();
        unlabelled.nodes[1] = None;
        assert!(check_graph(&p, &model, &unlabelled).expect_err("unlabelled").contains("no labelled op"));
        let mut dup = g.clone();
        dup.nodes[1] = Some("w0".into());
        assert!(check_graph(&p, &model, &dup).expect_err("dup").contains("two graph nodes"));
        let err = check_graph(&p, &model, &with_edges(vec![(2, 3), (3, 0), (0, 2), (2, 1)])).expect_err("cycle");
        assert!(err.contains("cycle"), "{err}");
    }

    /// (d): the graph's N launches differ from N eager runs.
    pub fn relaunch_violation() {
        let (p, _, many, eager) = good(3);
        let mut captured = eager.clone();
        captured.buffers.insert("b2".into(), interpret::run(&p, 1).buffers[2].clone());
        let err = check_relaunch(&p, &many, &eager, &captured).expect_err("once vs thrice");
        assert!(err.contains("after 3 graph launches"), "{err}");
        // Equal to each other but not to the interpreter: still a failure.
        assert!(check_relaunch(&p, &many, &captured, &captured).is_err());
    }
}
