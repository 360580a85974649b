//! One case in this process: requirements, execution, then the three readings of what it observed (verdict,
//! measures, timeline), as a [`CaseResult`]. A worker process runs each case it is sent through it.

use crate::case::ast::Case;
use crate::device::gpu::DeviceInfo;
use crate::device::kernels::KernelTable;
use crate::device::requirements::unmet_requirement;
use crate::exec::{self, ExecOptions};
use crate::readings::{measure, timeline, verdict};
use crate::record::observations::Observations;
use crate::record::verdict::{Verdict, VerdictKind};
use crate::record::CaseResult;
use std::time::{Duration, Instant};

/// Runs `case` in this process with `opts`: requirements, execution, then the three readings of what it observed
/// (verdict, measures, timeline).
pub fn run_in_process_with(case: &Case, kernels: &KernelTable, device: &DeviceInfo, opts: &ExecOptions) -> CaseResult {
    let start = Instant::now();
    if let Some(reason) = unmet_requirement(case, device) {
        return CaseResult::new(case, verdict_of(VerdictKind::NotSupported, reason), None, start.elapsed());
    }
    match exec::run_case_keeping(case, kernels, device, opts) {
        // `samples: N` on the first run's objects (see `exec::Kept`): they are released after the last sample, into
        // the first run's observations, which the readings never look at for what the release adds (notes, wall).
        (observations, Some(mut kept)) => {
            let mut result = read(case, observations, || Some(kept.sample(case, kernels, device, opts)), start);
            if let Some(first) = result.observations.as_mut() {
                kept.release(first);
            }
            result.wall_ms = start.elapsed().as_millis() as u64;
            result
        }
        (observations, None) => read(case, observations, || Some(exec::run_sample(case, kernels, device, opts)), start),
    }
}

/// The result of `case` from its `observations`: the verdict, the measures and the timeline. Under `samples: N`,
/// `again` runs the script N − 1 more times for the figures (`None`: that run gave no trace). Both executors' runs
/// are read here, so they are judged by the same code.
pub fn read(
    case: &Case,
    observations: Observations,
    mut again: impl FnMut() -> Option<Observations>,
    start: Instant,
) -> CaseResult {
    let verdict = verdict::judge(case, &observations);
    let mut measures = measure::compute(case, &observations);
    // `samples: N`: the same script N − 1 more times, for the figures only. A run whose verdict differs from the
    // first's is not the same measurement (its figures are dropped); the first run alone decides the verdict.
    // Under a tool that serialises device work the figures would be the tool's, so the script runs once
    // ([`crate::exec::samples_to_run`]).
    if crate::exec::samples_to_run(case) > 1 && verdict.kind == VerdictKind::Pass && !measures.is_empty() {
        for _ in 1..case.samples {
            let Some(more) = again() else { continue };
            if verdict::judge(case, &more).kind == verdict.kind {
                measure::add_samples(&mut measures, &measure::compute(case, &more));
            }
        }
    }
    let timeline = timeline::build(case, &observations);
    exec::phases::mark("readings");
    CaseResult { measures, timeline, ..CaseResult::new(case, verdict, Some(observations), start.elapsed()) }
}

/// A verdict with no observations behind it: an unmet requirement, or a case the worker did not answer for.
pub fn verdict_of(kind: VerdictKind, message: String) -> Verdict {
    Verdict { kind, variant: None, observed: None, messages: vec![message] }
}

// The result of a case is recorded data (`record/`, which knows no case); it is made here, where cases are run.
impl CaseResult {
    /// The result of `case` with its verdict and trace, before any reading of the trace or any second run.
    pub fn new(case: &Case, verdict: Verdict, observations: Option<Observations>, wall: Duration) -> Self {
        CaseResult {
            id: case.id.clone(),
            area: case.area().to_owned(),
            rule: case.rule.clone(),
            source: case.source.clone(),
            location: format!("{}:{}", case.positions.file, case.positions.case_line),
            verdict,
            observations,
            measures: Vec::new(),
            timeline: None,
            wall_ms: wall.as_millis() as u64,
            device: None,
            attempts: Vec::new(),
            dirty: None,
            baseline: None,
            expectation: None,
            sanitizer: Vec::new(),
            executor: None,
            second: None,
        }
    }
}
