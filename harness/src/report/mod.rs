//! The report of a run: provenance (which GPU, driver, runtime, build, environment), a summary by area, and every
//! case's verdict and trace. Written as JSON for machines, and read back to be summarised for people ([`table`],
//! [`markdown`]), for CI dashboards ([`junit`]), against an earlier run or a blessed baseline ([`compare`],
//! [`baseline`]), and across hosts, GPUs and drivers ([`matrix`]).

pub mod baseline;
pub mod compare;
pub mod fleet;
pub mod junit;
mod markdown;
pub mod matrix;
mod provenance;
mod table;
pub mod task;
pub mod timeline;
pub mod trace;

pub use provenance::{KernelImage, Provenance};
pub use task::Task;

use crate::case::ast::Case;
use crate::figures::Figures;
use crate::observations::Observations;
use crate::verdict::{Verdict, VerdictKind};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// Everything known about one case after it ran (or could not run).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CaseResult {
    pub id: String,
    pub area: String,
    pub rule: String,
    pub source: String,
    /// Source file and line of the case, e.g. `cases/events.case:12`.
    pub location: String,
    pub verdict: Verdict,
    /// The trace: absent when the case did not run (not supported, skipped, crashed).
    pub observations: Option<Observations>,
    /// Wall time of the case as the runner saw it (all its runs, each from request to result).
    pub wall_ms: u64,
    /// The device ordinal the case ran on (absent in reports from before `--devices`, and when it did not run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub device: Option<i32>,
    /// Every run of the case when there was more than one, in order: a confirmation at the written gate delays,
    /// the second run of a variant, the re-runs of an unexpected result. The verdict above is the one that counts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub attempts: Vec<Attempt>,
    /// Why the worker that ran this case was replaced after it (a sticky error, memory or objects left behind, a
    /// capture left open). The verdict is unchanged: the next case gets a fresh process.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dirty: Option<String>,
    /// What the baseline (`run --baseline FILE`) expected of this case, e.g. `fail` or `variant concurrent`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
}

/// One run of a case that ran more than once.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Attempt {
    pub kind: VerdictKind,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub variant: Option<String>,
    /// The delay a case's `open G after 300ms` stood for in this run (300 at the written delays).
    pub gate_delay_ms: f64,
    /// Why this run was made: `first`, `written-delays`, `variant-stability`, `rerun`.
    pub why: String,
}

impl CaseResult {
    pub fn new(case: &Case, verdict: Verdict, observations: Option<Observations>, wall: Duration) -> Self {
        CaseResult {
            id: case.id.clone(),
            area: case.area().to_owned(),
            rule: case.rule.clone(),
            source: case.source.clone(),
            location: format!("{}:{}", case.positions.file, case.positions.case_line),
            verdict,
            observations,
            wall_ms: wall.as_millis() as u64,
            device: None,
            attempts: Vec::new(),
            dirty: None,
            baseline: None,
        }
    }

    /// The verdict as one word with its variant, as tables and baselines show it: `pass`, `variant concurrent`.
    pub fn outcome(&self) -> String {
        outcome_text(self.verdict.kind, self.verdict.variant.as_deref())
    }
}

/// `kind` with ` variant` after it when there is one.
pub fn outcome_text(kind: VerdictKind, variant: Option<&str>) -> String {
    match variant {
        Some(v) if !v.is_empty() => format!("{kind} {v}"),
        _ => kind.to_string(),
    }
}

/// How the run was made: the options that can change what a case observes or how its result is counted.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct RunInfo {
    /// What a case's `open G after 300ms` stood for (other delays in proportion); 300 runs cases as written.
    pub gate_delay_ms: f64,
    /// How often an unexpected result is run again before it counts (it is a flake if any run differs).
    pub reruns: u32,
    /// True when every case ran in a process of its own (`--isolate`), false with worker processes.
    pub process_per_case: bool,
    /// The devices the cases were spread over, as `ordinal: name (uuid)`.
    pub devices: Vec<String>,
    /// `I/N` when the run was one shard of several (`--shard`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shard: Option<String>,
    /// The baseline the results were judged against (`--baseline`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baseline: Option<String>,
    /// Worker processes started (a crash, timeout or dirty context replaces one; cases with `env:` or
    /// `poisons-context:` get their own).
    pub processes_started: u64,
    /// Runs beyond one per case (written-delay confirmations, variant stability, re-runs of unexpected results).
    pub extra_runs: u64,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Report {
    pub provenance: Provenance,
    /// The filter the run was given (empty: all cases).
    pub filter: String,
    /// False while the run is still going (the report is rewritten after each case) or if it was killed.
    #[serde(default)]
    pub complete: bool,
    /// Why the suite could not run at all on this host (no driver, no device visible, invalid case files, a bad
    /// option): then `complete` is false, `cases` is empty and the run's exit status was 2. A fleet merge tells
    /// such a host from one that never reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub could_not_run: Option<String>,
    /// The tier the cases were selected from (`smoke`, `full`); absent in reports from before tiers.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<String>,
    pub wall_ms: u64,
    /// verdict → count over all cases.
    pub totals: BTreeMap<String, usize>,
    /// area → verdict → count.
    pub by_area: BTreeMap<String, BTreeMap<String, usize>>,
    /// How the run was made (absent in reports from before worker processes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run: Option<RunInfo>,
    pub cases: Vec<CaseResult>,
    /// Measurements recorded but never asserted (see [`crate::figures`]); absent when none were taken (`run
    /// --no-figures`, a filter that selects no figure, a report from before figures existed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub figures: Option<Figures>,
    /// The seeds' performance claims judged against the bounds measured in the run, with the seeds' programs when
    /// `cuda-conformance seeds` ran them (see [`crate::claims`]); absent when no `performance/` case ran.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub seeds: Option<crate::claims::SeedClaims>,
}

impl Report {
    pub fn new(provenance: Provenance, filter: String, wall_ms: u64, cases: Vec<CaseResult>) -> Self {
        let mut totals = BTreeMap::new();
        let mut by_area: BTreeMap<String, BTreeMap<String, usize>> = BTreeMap::new();
        for case in &cases {
            let kind = case.verdict.kind.to_string();
            *totals.entry(kind.clone()).or_insert(0) += 1;
            *by_area.entry(case.area.clone()).or_default().entry(kind).or_insert(0) += 1;
        }
        Report {
            provenance,
            filter,
            complete: false,
            could_not_run: None,
            tier: None,
            seeds: None,
            wall_ms,
            totals,
            by_area,
            run: None,
            cases,
            figures: None,
        }
    }

    /// The report of a run that could not start its cases, and why: no case, `complete: false`.
    pub fn could_not_run(provenance: Provenance, filter: String, wall_ms: u64, reason: String) -> Self {
        let mut r = Report::new(provenance, filter, wall_ms, Vec::new());
        r.could_not_run = Some(reason);
        r
    }

    /// True when no case failed, crashed, timed out or passed against a baseline that expected it to fail.
    pub fn passed(&self) -> bool {
        self.cases.iter().all(|c| !c.verdict.kind.is_failure())
    }

    /// Reads a report written by `run`, with a message naming the file (and line and column of bad JSON).
    pub fn read(path: &Path) -> Result<Report, String> {
        let text =
            std::fs::read_to_string(path).map_err(|e| format!("{}: cannot read the report: {e}", path.display()))?;
        serde_json::from_str(&text)
            .map_err(|e| format!("{}:{}:{}: not a cuda-conformance report: {e}", path.display(), e.line(), e.column()))
    }

    /// Writes the report as JSON, atomically: to a temporary file beside `path`, then renamed over it, so a
    /// reader (or a run killed mid-write) never sees half a report.
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let json = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        write_atomic(path, json.as_bytes())
    }
}

/// Writes `bytes` to `path` through a temporary file in the same folder and a rename.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let parent = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent)?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_else(|| "report".into());
    let tmp = parent.join(format!(".{name}.{}.tmp", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path).inspect_err(|_| {
        let _ = std::fs::remove_file(&tmp);
    })
}

#[cfg(test)]
pub(crate) mod test_support {
    use super::*;
    use crate::gpu::DeviceInfo;

    pub fn device(name: &str, driver: u32) -> DeviceInfo {
        DeviceInfo {
            name: name.into(),
            uuid: format!("GPU-{name}"),
            driver_version: driver,
            ..crate::exec::test_support::h100()
        }
    }

    /// A result without a case file: `kind` with `variant`, in the area of `id`.
    pub fn result(id: &str, kind: VerdictKind, variant: Option<&str>) -> CaseResult {
        CaseResult {
            id: id.into(),
            area: id.split('/').next().unwrap_or(id).into(),
            rule: format!("the rule of {id}"),
            source: "a test".into(),
            location: "cases/test.case:1".into(),
            verdict: Verdict {
                kind,
                variant: variant.map(str::to_owned),
                observed: None,
                messages: if kind == VerdictKind::Pass { vec![] } else { vec![format!("line 9: why {id} is {kind}")] },
            },
            observations: None,
            wall_ms: 5,
            device: Some(0),
            attempts: Vec::new(),
            dirty: None,
            baseline: None,
        }
    }

    pub fn report(gpu: &str, driver: u32, cases: Vec<CaseResult>) -> Report {
        let mut p = Provenance::new(&device(gpu, driver), "abc1234", "2026-01-01T00:00:00Z".into());
        p.hostname = format!("host-{gpu}");
        // Not this test process's node and scheduler identity: reports from before fleets had neither.
        p.node = String::new();
        p.task = Task::default();
        p.driver_release = format!("{}.00", driver / 1000 * 10 + 500);
        let mut r = Report::new(p, String::new(), 1000, cases);
        r.complete = true;
        r
    }
}
