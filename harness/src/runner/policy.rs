//! The runner's rules about a case, as pure functions of the case and its results: which process it needs, which
//! of its results a short gate delay could have decided (and so must be confirmed at the written delays), which
//! must reproduce before they count, and what makes a flake. [`super::device_runner::DeviceRunner::run_case`]
//! applies them; the module documentation of [`super`] says why they are what they are.

use crate::case::ast::{Case, Expectation, KernelCall, OpKind, Predicate, Requirement};
use crate::record::verdict::{Verdict, VerdictKind};
use crate::record::{Attempt, CaseResult};
use std::collections::BTreeMap;

/// A case the runner runs in a process of its own: one that needs it ([`Case::needs_own_process`]), one `baseline`
/// expects to crash or time out, and one with peers (`process NAME`) on one device. In the batch worker a case
/// expected to crash would end the worker, and the lane would wait for another (measured on an H100 at `5a2704b`:
/// the cases right after 9 crashes took 3.8-4.1 s in all, with a spare worker started ahead); in a process started
/// ahead for it, it costs that process alone. A case with peers started each peer on the lane's path, 0.1–1.1 s
/// (4.0 s for 7 cases of a one-H100 run); its process started ahead starts the peers with it ([`peers_ahead`]).
/// The case runs the same script in either, from a context no other case has touched.
pub fn gets_own_process(case: &Case, baseline: Option<&BTreeMap<String, String>>) -> bool {
    case.needs_own_process()
        || peers_ahead(case) > 0
        || baseline.and_then(|b| b.get(&case.id)).is_some_and(|e| e == "crash" || e == "timeout")
}

/// How many peers (`process NAME`) of `case` its process started ahead starts with it: all of them, for a case on
/// one device (a case on several runs in the several-device worker, whose peers see several GPUs).
pub fn peers_ahead(case: &Case) -> usize {
    if needs_all_devices(case) {
        return 0;
    }
    case.decls.iter().filter(|d| matches!(d, crate::case::ast::Decl::Process { .. })).count()
}

/// The `env:` under which `case`, a case that gets a process of its own ([`gets_own_process`]), may share that
/// process with the other cases of the same `env:` (`suite::units_of`): one after another, each its whole script,
/// as the batch worker runs its cases, the process ending when a case leaves it dirty (the next one gets a fresh
/// one). That is a case whose only reason for a process of its own is its `env:` (the environment is what the
/// process must have, not a context nothing touched), or its peers started ahead (a case the batch worker could
/// run: [`peers_ahead`]). One process per environment rather than per case: the host creates processes at a rate
/// of its own, and that rate bounds a node (results/2026-11-28_node-time-2).
///
/// None for a case that needs its process alone: one that changes or reads process state untouched
/// (`own-process:`), faults its context, the baseline expects to crash or time out, measures, needs several
/// devices, may pick a variant (its second run must be as its first), runs several samples, or must be the first
/// in its process to use a kernel ([`loads_a_kernel_first`]). A case that reads the last error may share: the
/// executor clears it before every script, as in the batch worker (the rows of a sweep that poisons its context
/// are another matter: [`shares_process`]).
pub fn shared_process_env<'c>(
    case: &'c Case,
    baseline: Option<&BTreeMap<String, String>>,
) -> Option<&'c [(String, String)]> {
    let reason_is_env_or_peers =
        case.poisons.is_empty() && case.own_process.is_none() && (!case.env.is_empty() || peers_ahead(case) > 0);
    let alone = runs_alone_anywhere(case, baseline)
        || loads_a_kernel_first(case)
        || baseline.and_then(|b| b.get(&case.id)).is_some_and(|e| e == "crash" || e == "timeout");
    (reason_is_env_or_peers && !alone).then_some(case.env.as_slice())
}

/// A case whose script must be the first in its process to use a kernel: it launches `lazy-spin` (its first launch
/// is what loads it) or calls with a kernel of another image (its first call loads that module: a missing image,
/// a JIT compilation; `KernelWord::preloaded`).
pub fn loads_a_kernel_first(case: &Case) -> bool {
    case.script.iter().any(|op| match &op.kind {
        OpKind::Launch { kernel: KernelCall::LazySpin { .. }, .. } => true,
        OpKind::Call(call) => call.kernels().any(|k| !k.preloaded()),
        _ => false,
    })
}

/// A case that runs alone in whatever process it is given, so shares it with no other case: it measures, needs
/// several devices, may pick a variant (its second run must be as its first; judged against `baseline`), or runs
/// several samples. [`shared_process_env`] and [`shares_process`] each add their own reasons.
fn runs_alone_anywhere(case: &Case, baseline: Option<&BTreeMap<String, String>>) -> bool {
    measures(case) || needs_all_devices(case) || expected_runs(case, baseline) > 1 || case.samples > 1
}

/// A case that calls a function returning the last error ([`crate::api::reads_last_error`]).
fn reads_last_error(case: &Case) -> bool {
    case.script.iter().any(|op| matches!(&op.kind, OpKind::Call(call) if crate::api::reads_last_error(&call.function)))
}

/// Whether case `next` may run in the process of `first` (and so of the rows between them), one after the other:
/// both are rows of one sweep (`case::sweep`) that need a process of their own, with the same header, declarations
/// and operations before their call, so one process with that environment serves them all, and when they poison
/// the context, one prelude ([`crate::exec::SharedRows`]). Rows that measure, need several devices, may pick a
/// variant (a second run each) or wait on a delayed open (a short delay could decide them) run alone, and so do
/// rows that call a function returning the last error ([`crate::api::reads_last_error`]): after other rows' calls
/// (and the executor's own cudaGetLastError before each script) it is not what the prelude alone left.
pub fn shares_process(first: &Case, next: &Case) -> bool {
    let Some(k) = crate::exec::row_index(first) else { return false };
    let alone =
        |c: &Case| runs_alone_anywhere(c, None) || reads_last_error(c) || !c.needs_own_process() || has_delayed_open(c);
    !alone(first)
        && !alone(next)
        && crate::exec::row_index(next) == Some(k)
        && first.env == next.env
        && first.own_process == next.own_process
        && first.poisons == next.poisons
        && first.requires == next.requires
        && first.timing == next.timing
        && first.decls == next.decls
        && first.script[..k] == next.script[..k]
}

/// A case with `measure` figures (bandwidths, kernel and launch times: what the seeds' claims are judged on).
pub fn measures(case: &Case) -> bool {
    case.expects.iter().any(|e| matches!(e, Expectation::Measure(_)))
}

/// A case that uses several devices: its process sees them all, and it may touch every GPU of the host.
pub fn needs_all_devices(case: &Case) -> bool {
    case.requires.iter().any(|r| matches!(r, Requirement::Devices(n) if *n > 1))
}

/// True when the case schedules a gate open (`open G after D`), so its timing depends on the gate delay.
pub fn has_delayed_open(case: &Case) -> bool {
    case.script.iter().any(|op| matches!(op.kind, OpKind::Open { after_ns: Some(_), .. }))
}

/// How many runs an own-process case will most likely take: one, and a second for variant stability when it can
/// pick a variant (one whose pick a short delay could decide starts at the written delays: see `run_case`), unless
/// `baseline` expects a variant of it ([`needs_stability_run`]).
pub(super) fn expected_runs(case: &Case, baseline: Option<&BTreeMap<String, String>>) -> usize {
    let picks = case.expects.iter().any(|e| matches!(e, Expectation::Variant(_)));
    let known = baseline.and_then(|b| b.get(&case.id)).is_some_and(|e| e.starts_with("variant "));
    1 + usize::from(picks && !known)
}

/// Whether variant `result` must be run a second time to show it is stable: not when `baseline` expects this very
/// variant. The baseline's line is what an earlier run showed (twice); a run that picks another one is a change
/// against it, reported as any unexpected result is (and run again), just as a known failure runs once.
pub(super) fn needs_stability_run(result: &CaseResult, baseline: Option<&BTreeMap<String, String>>) -> bool {
    result.verdict.kind == VerdictKind::Variant
        && baseline.and_then(|b| b.get(&result.id)).is_none_or(|expected| *expected != result.outcome())
}

/// True when the case schedules a gate open and picks a variant or an observation by `waited-for` or `before`:
/// a result at a shortened delay may have to be confirmed at the written ones.
pub(super) fn short_delay_can_decide(case: &Case) -> bool {
    has_delayed_open(case)
        && case.expects.iter().any(|e| match e {
            Expectation::Variant(alts) | Expectation::Observe(alts) => {
                alts.iter().any(|(_, p)| a_short_delay_can_make_hold(p))
            }
            _ => false,
        })
}

/// Whether a result at a shortened gate delay must be confirmed at the written delays: anything but a plain pass
/// or an unmet requirement, unless every alternative it picked is one a short delay cannot make hold.
pub(super) fn needs_written_delays(case: &Case, verdict: &Verdict) -> bool {
    match verdict.kind {
        VerdictKind::Pass | VerdictKind::NotSupported | VerdictKind::Skipped => {
            verdict.observed.as_deref().is_some_and(|picked| !picks_are_trusted(case, picked))
        }
        VerdictKind::Variant => {
            !verdict.variant.as_deref().is_some_and(|picked| picks_are_trusted(case, picked))
                || verdict.observed.as_deref().is_some_and(|picked| !picks_are_trusted(case, picked))
        }
        // Crash and timeout do not come from gate timing; a flake is decided later.
        VerdictKind::Crash | VerdictKind::Timeout | VerdictKind::Flake => false,
        _ => true,
    }
}

/// True when every picked alternative (names joined with `,`) holds by predicates a short delay cannot make true:
/// `not-waited-for` can only be helped by an open that comes *later*, and non-timing predicates do not depend on it.
fn picks_are_trusted(case: &Case, picked: &str) -> bool {
    let alternatives: Vec<&(String, Predicate)> = case
        .expects
        .iter()
        .flat_map(|e| match e {
            Expectation::Variant(alts) | Expectation::Observe(alts) => alts.iter().collect::<Vec<_>>(),
            _ => Vec::new(),
        })
        .collect();
    picked.split(',').all(|name| {
        let preds: Vec<&Predicate> = alternatives.iter().filter(|(n, _)| n == name).map(|(_, p)| p).collect();
        !preds.is_empty() && preds.iter().all(|p| !a_short_delay_can_make_hold(p))
    })
}

/// A predicate that compares a return or a kernel start with a gate's open: a shortened open delay can make it hold
/// when it should not.
fn a_short_delay_can_make_hold(p: &Predicate) -> bool {
    matches!(p, Predicate::WaitedFor { .. } | Predicate::Before { .. })
}

/// Whether `result` must reproduce before it counts (it is then run again [`super::RunOptions::reruns`] times): a
/// result the `baseline` does not expect, or without one a failure. A flake is decided already, and a timeout
/// already waited its whole deadline: neither is run again.
pub(super) fn must_reproduce(result: &CaseResult, baseline: Option<&BTreeMap<String, String>>) -> bool {
    let unexpected = match baseline {
        // A known flake (`flake REASON`): only a failure is worth running again, as without a baseline.
        Some(section) if section.get(&result.id).is_some_and(|e| e.starts_with("flake ")) => {
            result.verdict.kind.is_failure()
        }
        Some(section) => result.outcome() != section.get(&result.id).map_or("pass", String::as_str),
        None => result.verdict.kind.is_failure(),
    };
    unexpected && result.verdict.kind != VerdictKind::Flake && result.verdict.kind != VerdictKind::Timeout
}

/// Makes `result` a flake: its runs (`attempts`) did not agree, for the reason `why`.
pub(super) fn make_flake(result: &mut CaseResult, why: &str, attempts: &[Attempt]) {
    let runs: Vec<String> =
        attempts.iter().map(|a| crate::record::outcome_text(a.kind, a.variant.as_deref())).collect();
    result.verdict.messages.insert(0, format!("flake: {why} (runs: {})", runs.join(", ")));
    result.verdict.kind = VerdictKind::Flake;
}
