//! The properties checked against real (or simulated) executions.
//!
//! For each program three cases run (see lower.rs): eager once, captured and launched N times (updated after the
//! first launch when the program has an update), eager N times. Each is judged by the harness's own verdict
//! (`harness::readings::verdict::judge`) on the case `lower.rs` wrote, so a failure saved under `cases/` is judged by the
//! code that found it: the buffers and uniform snapshots the interpreter computed, `before` and `host-order` for
//! what the model orders, `host-runs`, the graph's node count, node kinds, paths and no-paths, the update's result
//! and return code, and every operation's return code and the final synchronize.
//!
//! Beyond the verdict, only what the case language cannot say:
//! - relaunch equivalence: N graph launches leave exactly the buffers N eager runs leave;
//! - host functions per launch: in *every* launch of the graph, host functions ran in the model's order
//!   (`host-order` looks at first runs), and every run's snapshot equals the interpreter's (`snapshot L == V`
//!   says only that every word is V);
//! - every node of the captured graph carries the label of a work op, each a different one.

use crate::interpret::{self, Expected};
use crate::lower::{self, rep_label, Variant};
use crate::model::{HappensBefore, ModelMode};
use crate::program::{buffer_name, label, label_index, Op, Program};
use harness::case::ast::Case;
use harness::readings::verdict::judge;
use harness::record::observations::{Contents, Observations};
use harness::record::verdict::VerdictKind;
use std::fmt;

/// Whatever runs a case: the GPU executor (`harness::exec::run_case`) or the simulator.
pub type Executor<'a> = dyn FnMut(&Case) -> Observations + 'a;

/// Which property failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// A CPU-only property of the program itself (well-formed, model invariants, round trip).
    Program,
    /// The harness's verdict on the case is not `pass`.
    Verdict,
    /// N launches differ from N eager runs.
    Relaunch,
    /// Host functions out of order, or a wrong snapshot, in some launch.
    HostRuns,
    /// A graph node without a work op's label, or two with one.
    Labels,
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

/// How many times the captured graph is launched and the eager body repeated.
pub const RELAUNCHES: u32 = 3;

/// One judged run: the case and what it showed.
struct Run {
    variant: Variant,
    case: Case,
    obs: Observations,
}

impl Run {
    fn fail(&self, check: Check, message: String) -> Failure {
        Failure { check, variant: self.variant, message, case: Box::new(self.case.clone()) }
    }
}

/// Lowers, runs and judges `program` as `variant`: the verdict must be `pass`.
fn run(program: &Program, exec: &mut Executor<'_>, variant: Variant, mode: ModelMode) -> Result<Run, Failure> {
    let case = lower::lower(program, variant, mode);
    let obs = exec(&case);
    let run = Run { variant, case, obs };
    let verdict = judge(&run.case, &run.obs);
    if verdict.kind != VerdictKind::Pass {
        let mut lines = verdict.messages.clone();
        lines.truncate(8);
        return Err(run.fail(Check::Verdict, format!("verdict {}: {}", verdict.kind, lines.join("; "))));
    }
    Ok(run)
}

/// Every property of one capturable program, with the given model.
pub fn check_program(program: &Program, exec: &mut Executor<'_>, mode: ModelMode) -> Result<(), Failure> {
    let eager = run(program, exec, Variant::Eager { reps: 1 }, mode)?;
    let captured = run(program, exec, Variant::Captured { launches: RELAUNCHES }, mode)?;
    let eager_many = run(program, exec, Variant::Eager { reps: RELAUNCHES }, mode)?;
    let model = HappensBefore::build(program, mode);
    for r in [&eager, &captured, &eager_many] {
        let expected = interpret::run(program, r.variant.runs(), mode);
        check_host_runs(program, &model, &expected, r.variant, &r.obs).map_err(|m| r.fail(Check::HostRuns, m))?;
    }
    check_labels(program, &model, &captured.obs).map_err(|m| captured.fail(Check::Labels, m))?;
    check_relaunch(program, &eager_many.obs, &captured.obs).map_err(|m| captured.fail(Check::Relaunch, m))
}

/// The properties of one eager-only program (it may wait on never-recorded events).
pub fn check_eager_program(program: &Program, exec: &mut Executor<'_>, mode: ModelMode) -> Result<(), Failure> {
    let r = run(program, exec, Variant::Eager { reps: 1 }, mode)?;
    let model = HappensBefore::build(program, mode);
    let expected = interpret::run(program, 1, mode);
    check_host_runs(program, &model, &expected, r.variant, &r.obs).map_err(|m| r.fail(Check::HostRuns, m))
}

/// Every word of a buffer or snapshot, as far as the observations kept them.
fn words(c: &Contents) -> Vec<u32> {
    c.all_words().unwrap_or_else(|| c.first_words.clone())
}

/// Host functions per run: in the graph's k-th launch, the k-th runs of two host functions the model orders
/// came in that order; in every run, each snapshot equals the interpreter's for that run.
pub fn check_host_runs(
    program: &Program,
    model: &HappensBefore,
    expected: &Expected,
    variant: Variant,
    obs: &Observations,
) -> Result<(), String> {
    let host: Vec<usize> = program.work_ops().filter(|&i| matches!(program.ops[i], Op::HostFunc { .. })).collect();
    // The label and the call number of op i's run r.
    let run_of = |i: usize, r: u32| match variant {
        Variant::Captured { .. } => (label(i), r as usize),
        Variant::Eager { .. } => (rep_label(i, r), 0),
    };
    let position = |i: usize, r: u32| {
        let (l, k) = run_of(i, r);
        obs.host_calls.iter().enumerate().filter(|(_, c)| c.label.as_deref() == Some(l.as_str())).nth(k)
    };
    for r in 0..variant.runs() {
        for &i in &host {
            let (l, k) = run_of(i, r);
            let (at, call) = position(i, r).ok_or_else(|| format!("host function {l} has no run {}", k + 1))?;
            for &j in host.iter().filter(|&&j| model.before(i, j)) {
                let (lj, _) = run_of(j, r);
                match position(j, r) {
                    Some((later, _)) if later > at => {}
                    _ => return Err(format!("in run {}, host function {lj} did not run after {l}", r + 1)),
                }
            }
            if let Some(want) = expected.snapshots.get(&i).and_then(|s| s.get(r as usize)) {
                let got = call.snapshot.as_ref().map(words).ok_or_else(|| format!("{l} took no snapshot"))?;
                compare_words(&format!("snapshot of {l} in run {} ({})", r + 1, program.ops[i]), want, &got)?;
            }
        }
    }
    Ok(())
}

/// Every node of the captured graph carries the label of a work op, no two the same one.
pub fn check_labels(program: &Program, model: &HappensBefore, obs: &Observations) -> Result<(), String> {
    let g = obs.graph(lower::GRAPH).ok_or("nothing was captured into g")?;
    let mut seen = vec![false; model.nodes()];
    for n in &g.nodes {
        let l = n.label.as_deref().ok_or_else(|| format!("graph node {} ({}) carries no label", n.index, n.kind))?;
        let m = label_index(l)
            .and_then(|op| model.node_of_op(op))
            .ok_or_else(|| format!("graph node {} has label {l}, which is no work op of the program", n.index))?;
        if std::mem::replace(&mut seen[m], true) {
            return Err(format!("two graph nodes carry label {l} ({})", program.ops[model.work[m]]));
        }
    }
    Ok(())
}

/// N launches of the graph leave exactly what N eager runs leave, in every permanent buffer.
pub fn check_relaunch(program: &Program, eager: &Observations, captured: &Observations) -> Result<(), String> {
    for i in (0..program.buffers.len()).filter(|&i| program.buffers[i].is_permanent()) {
        let name = buffer_name(i);
        let contents = |obs: &Observations| obs.buffer(&name).and_then(|b| b.contents.as_ref()).map(words);
        let (e, c) = (contents(eager), contents(captured));
        if e != c {
            let show = |w: &Option<Vec<u32>>| {
                w.as_ref().and_then(|w| w.first()).map_or("nothing".into(), |v| format!("{v:#010x}.."))
            };
            return Err(format!(
                "buffer {name} after {RELAUNCHES} graph launches ({}) differs from {RELAUNCHES} eager runs ({})",
                show(&c),
                show(&e)
            ));
        }
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

pub mod tests {
    use super::*;
    use crate::lower::tests::sample;
    use crate::sim::Sim;

    fn observed(p: &Program, variant: Variant) -> (Case, Observations) {
        let case = lower::lower(p, variant, ModelMode::Faithful);
        let obs = Sim::default().run(&case);
        (case, obs)
    }

    /// The simulator's run of the sample passes the verdict and every check beyond it.
    pub fn good_execution_passes() {
        let p = sample();
        let model = HappensBefore::build(&p, ModelMode::Faithful);
        for variant in [Variant::Eager { reps: 1 }, Variant::Captured { launches: 3 }, Variant::Eager { reps: 3 }] {
            let (case, obs) = observed(&p, variant);
            assert_eq!(judge(&case, &obs).kind, VerdictKind::Pass, "{variant:?}: {:?}", judge(&case, &obs));
            let expected = interpret::run(&p, variant.runs(), ModelMode::Faithful);
            assert_eq!(check_host_runs(&p, &model, &expected, variant, &obs), Ok(()));
        }
        let (_, captured) = observed(&p, Variant::Captured { launches: 3 });
        let (_, eager) = observed(&p, Variant::Eager { reps: 3 });
        assert_eq!(check_labels(&p, &model, &captured), Ok(()));
        assert_eq!(check_relaunch(&p, &eager, &captured), Ok(()));
    }

    /// The verdict catches a kernel that started before its predecessor ended, and a wrong buffer.
    pub fn verdict_violations() {
        let p = sample();
        let (case, mut obs) = observed(&p, Variant::Eager { reps: 1 });
        let w5 = obs.kernels.iter_mut().find(|k| k.label.as_deref() == Some("w5")).expect("w5");
        w5.entry_ns = Some(0);
        let v = judge(&case, &obs);
        assert_eq!(v.kind, VerdictKind::Fail);
        assert!(v.messages.iter().any(|m| m.contains("w0 before w5")), "{v:?}");
        let (case, mut obs) = observed(&p, Variant::Eager { reps: 1 });
        let b1 = obs.buffers.iter_mut().find(|b| b.name == "b1").expect("b1");
        b1.contents = Some(Contents::of(&[4, 7, 0, 7], &[]));
        assert_eq!(judge(&case, &obs).kind, VerdictKind::Fail);
    }

    /// Per launch: a host function that ran too few times; a wrong snapshot in the second launch.
    pub fn host_run_violations() {
        let p = sample();
        let model = HappensBefore::build(&p, ModelMode::Faithful);
        let variant = Variant::Captured { launches: 3 };
        let expected = interpret::run(&p, 3, ModelMode::Faithful);
        let (_, obs) = observed(&p, variant);
        let mut fewer = obs.clone();
        fewer.host_calls.pop();
        let err = check_host_runs(&p, &model, &expected, variant, &fewer).expect_err("two runs");
        assert!(err.contains("has no run 3"), "{err}");
        let mut wrong = obs;
        wrong.host_calls[1].snapshot = Some(Contents::of(&[9; 4], &[]));
        let err = check_host_runs(&p, &model, &expected, variant, &wrong).expect_err("snapshot");
        assert!(err.contains("snapshot of w4 in run 2"), "{err}");
    }

    /// Labels: an unlabelled node, a duplicate label.
    pub fn label_violations() {
        let p = sample();
        let model = HappensBefore::build(&p, ModelMode::Faithful);
        let (_, obs) = observed(&p, Variant::Captured { launches: 1 });
        let mut unlabelled = obs.clone();
        unlabelled.graphs[0].nodes[1].label = None;
        assert!(check_labels(&p, &model, &unlabelled).expect_err("unlabelled").contains("carries no label"));
        let mut dup = obs;
        dup.graphs[0].nodes[1].label = Some("w0".into());
        assert!(check_labels(&p, &model, &dup).expect_err("dup").contains("two graph nodes"));
    }

    /// Relaunch: the graph's N launches differ from N eager runs.
    pub fn relaunch_violation() {
        let p = sample();
        let (_, eager) = observed(&p, Variant::Eager { reps: 3 });
        let (_, mut captured) = observed(&p, Variant::Captured { launches: 3 });
        let b2 = captured.buffers.iter_mut().find(|b| b.name == "b2").expect("b2");
        b2.contents = Some(Contents::of(&[4; 4], &[]));
        let err = check_relaunch(&p, &eager, &captured).expect_err("once vs thrice");
        assert!(err.contains("after 3 graph launches"), "{err}");
    }
}
