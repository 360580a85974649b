//! One case in this process: requirements, execution, verdict, as a [`CaseResult`]. A worker process runs each case
//! it is sent through it.

use crate::case::ast::Case;
use crate::exec::{self, ExecOptions};
use crate::gpu::DeviceInfo;
use crate::kernels::KernelTable;
use crate::report::CaseResult;
use crate::requirements::unmet_requirement;
use crate::verdict::{self, Verdict, VerdictKind};
use std::time::Instant;

/// Runs `case` in this process with `opts`: requirements, execution, verdict.
pub fn run_in_process_with(case: &Case, kernels: &KernelTable, device: &DeviceInfo, opts: &ExecOptions) -> CaseResult {
    let start = Instant::now();
    if let Some(reason) = unmet_requirement(case, device) {
        return CaseResult::new(case, verdict_of(VerdictKind::NotSupported, reason), None, start.elapsed());
    }
    let observations = exec::run_case(case, kernels, device, opts);
    let verdict = verdict::judge(case, &observations);
    CaseResult::new(case, verdict, Some(observations), start.elapsed())
}

/// A verdict with no observations behind it: an unmet requirement, or a case the worker did not answer for.
pub fn verdict_of(kind: VerdictKind, message: String) -> Verdict {
    Verdict { kind, variant: None, observed: None, messages: vec![message] }
}
