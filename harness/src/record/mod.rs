//! What a run records: plain serde data that crosses stages, processes and files. A case's [`CaseResult`] goes from
//! a worker process to the runner as JSON; the whole [`Report`] goes to a file and is read back by every `report/`
//! format, by `compare`, `baseline` and fleet merges. Nothing here computes a reading or talks to a GPU, so this
//! folder imports nothing else of the harness: every stage above may name these types.

pub mod claims;
pub mod executors;
pub mod figures;
pub mod observations;
pub mod provenance;
pub mod task;
pub mod timeline;
pub mod verdict;

pub use provenance::{KernelImage, PeerLink, Provenance, VisibleDevice};
pub use task::Task;

use claims::SeedClaims;
use figures::Figures;
use observations::{MeasureRecord, Observations};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use timeline::Timeline;
use verdict::{Verdict, VerdictKind};

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
    /// The case's `measure` figures, in the order written: read from the observations, recorded, never judged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub measures: Vec<MeasureRecord>,
    /// The case's device work on one clock, one lane per stream, for a picture (`cuda-conformance timeline`); absent
    /// when nothing has device times.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeline: Option<Timeline>,
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
    /// The line of the expectation file (`run --expectations FILE`) that decided this case, e.g. `flake
    /// (ci/expect.txt:4): passes 9 runs in 10 (bug 34)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expectation: Option<String>,
    /// What compute-sanitizer reported while this case ran (`run --sanitizer`), intended or not. An unintended
    /// error makes the verdict a fail.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sanitizer: Vec<SanitizerError>,
    /// The executor whose run gave `verdict` and `observations`: absent for the Rust one (every report from before
    /// the C++ executor), `cxx` for the case's compiled reproducer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub executor: Option<executors::Executor>,
    /// With `run --executor both`: the other executor's run and whether the two agree.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub second: Option<executors::SecondRun>,
}

/// One error compute-sanitizer reported while a case ran.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SanitizerError {
    /// The error's first line, without the tool's `========= ` prefix (e.g. `Invalid __global__ write of size 4
    /// bytes`, `Program hit cudaErrorNotReady (error 600) ... on CUDA API call to cudaStreamQuery.`).
    pub headline: String,
    /// Its next lines (where, which thread, which allocation), at most a few.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub detail: Vec<String>,
    /// True when the case provokes it on purpose, with why (`intended`).
    pub intended: bool,
    /// Why it is intended or not: the code the case expects, the fault kernel its header declares, or what is
    /// unexpected about it.
    pub why: String,
}

/// A run made under compute-sanitizer (`run --sanitizer TOOL`): the tool and what it reported over the cases.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SanitizerRun {
    /// `memcheck`, `racecheck`, `synccheck` or `initcheck`.
    pub tool: String,
    /// The compute-sanitizer executable the workers ran under.
    pub executable: String,
    /// Errors the cases provoke on purpose (an API error code a case expects, a fault kernel's memory error).
    pub intended_errors: usize,
    /// Every other error: each one fails its case.
    pub unintended_errors: usize,
    /// Cases with at least one unintended error.
    pub cases_with_unintended: Vec<String>,
}

impl SanitizerRun {
    /// One line for the summary: the tool, the errors intended and not, and the cases of the unintended ones.
    pub fn line(&self) -> String {
        let cases = if self.cases_with_unintended.is_empty() {
            String::new()
        } else {
            format!(" (in {})", self.cases_with_unintended.join(", "))
        };
        format!(
            "compute-sanitizer {} ({}): {} unintended error(s){cases}, {} intended (API errors the cases expect, \
             declared faults)",
            self.tool, self.executable, self.unintended_errors, self.intended_errors
        )
    }

    /// The totals of `tool` over `cases`.
    pub fn over(tool: &str, executable: &str, cases: &[CaseResult]) -> SanitizerRun {
        let count = |intended: bool| cases.iter().flat_map(|c| &c.sanitizer).filter(|e| e.intended == intended).count();
        SanitizerRun {
            tool: tool.to_owned(),
            executable: executable.to_owned(),
            intended_errors: count(true),
            unintended_errors: count(false),
            cases_with_unintended: cases
                .iter()
                .filter(|c| c.sanitizer.iter().any(|e| !e.intended))
                .map(|c| c.id.clone())
                .collect(),
        }
    }
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
    /// What decided a run that neither passed nor picked a variant (a fail, timeout, crash ...): the case's own
    /// verdict keeps only the run that counts, so without these a flake would not say why its other run failed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub messages: Vec<String>,
}

impl CaseResult {
    /// The verdict as one word with its variant, as tables and baselines show it: `pass`, `variant concurrent`.
    pub fn outcome(&self) -> String {
        outcome_text(self.verdict.kind, self.verdict.variant.as_deref())
    }

    /// A flake that an expectation file or the baseline declared (`flake REASON`): tolerated, and tracked.
    pub fn is_known_flake(&self) -> bool {
        let declared = |line: &Option<String>| line.as_deref().is_some_and(|l| l.starts_with("flake "));
        self.verdict.kind == verdict::VerdictKind::Flake && (declared(&self.expectation) || declared(&self.baseline))
    }

    /// The executor of the case's own verdict (Rust when the report does not say).
    pub fn executor(&self) -> executors::Executor {
        self.executor.unwrap_or_default()
    }

    /// True when `--executor both` ran the case and the two executors disagree.
    pub fn executors_disagree(&self) -> bool {
        self.second.as_ref().is_some_and(|s| s.agreement.kind == executors::AgreementKind::Disagree)
    }

    /// With `--executor both` and a disagreement: what each executor gave and each difference, one line each.
    pub fn disagreement_lines(&self) -> Vec<String> {
        let Some(second) = self.second.as_ref().filter(|_| self.executors_disagree()) else { return Vec::new() };
        let mut lines = vec![format!(
            "executors disagree: {} gave {}, {} gave {}",
            self.executor(),
            self.outcome(),
            second.executor,
            outcome_text(second.verdict.kind, second.verdict.variant.as_deref())
        )];
        lines.extend(second.agreement.differences.iter().map(|d| format!("  {d}")));
        lines
    }

    /// The failing case's reproduce line ([`executors::reproduce_line`]), when it failed; `None` otherwise.
    pub fn reproduce_line_if_failed(&self) -> Option<String> {
        (self.verdict.kind.is_failure() || self.executors_disagree()).then(|| executors::reproduce_line(&self.id, None))
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
    /// The compute-sanitizer tool the workers ran under (`run --sanitizer`), with its totals.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sanitizer: Option<SanitizerRun>,
    /// Which cases keep their whole trace (`observations`) in the written report: `all` (`run --trace all`, and
    /// every report from before compact reports), or `non-pass`, where a case that passed keeps only what `compare`,
    /// `matrix`, `fleet`, `summary`, `baseline`, `timeline` and the claims read (verdict, attempts, measures,
    /// timeline) and its trace is dropped as it is written.
    #[serde(default)]
    pub traces: Traces,
    /// Which executor ran the cases (`run --executor`): `cxx`, or `both` (each case's `second` then holds the C++
    /// executor's run and the agreement); absent for the Rust one alone and in reports from before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub executor: Option<String>,
    /// How the workers' host threads waited for the device: `block` (cudaDeviceScheduleBlockingSync) or `auto`
    /// (cudart's default: spin with fewer contexts than cores). Absent in reports from before the choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_waits: Option<String>,
    /// Which devices took the cases that need a process of their own (`run --own-processes`), when the run used
    /// several and spread them (`every-device`); absent for the first device alone, the default.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own_processes: Option<String>,
    /// Where the run's time went, for a benchmark under load to read.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phases: Option<RunPhases>,
}

/// Where a run's wall time went, in seconds from the start of its cases (the first device's runner).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RunPhases {
    /// When the cases that need a process of their own (and the several-device ones) were done.
    pub own_phase_end_s: f64,
    /// How long those cases waited for their processes' contexts (what starting them ahead did not hide).
    pub own_ready_wait_s: f64,
    /// When the batch worker had its context and the batch cases began.
    pub batch_start_s: f64,
    /// When the last case ended.
    pub cases_end_s: f64,
    /// How long the figures after the cases took (`run` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub figures_s: Option<f64>,
    /// How long at least one process started ahead was making its context, on any lane (from its spawn until it
    /// said it was ready). The host makes one at a time, so a value close to the wall means the run was bound by
    /// how many processes it started. Absent in reports from before it was recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub starting_s: Option<f64>,
    /// The time of the cases that fault their context on purpose, summed over the GPUs. On one GPU, process starts
    /// (`starting_s`), these cases, the cases that measure and the figures exclude one another (the schedule's
    /// rules): their sum is the part of the wall that nothing else overlaps. Absent in reports from before it was
    /// recorded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub faulting_s: Option<f64>,
    /// The time of the cases that measure, summed over the GPUs (see `faulting_s`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub measuring_s: Option<f64>,
}

impl RunPhases {
    /// The time of the run that its schedule keeps apart from all other work, in words: process starts (the host
    /// makes one at a time), the cases that fault their context, the cases that measure and the figures. On one GPU
    /// none of them overlaps another, so their sum says how close the run came to the least its processes and cases
    /// allow (docs/running.md, "What bounds a node"). `None` for reports from before these were recorded.
    pub fn unshared_time(&self, devices: usize, wall_s: f64) -> Option<String> {
        let (starting, faulting, measuring) = (self.starting_s?, self.faulting_s?, self.measuring_s?);
        // A run without figures (`bench`, a tier without them) has none to list.
        let figures = self.figures_s.unwrap_or(0.0);
        let parts = format!(
            "process starts {starting:.1} s, cases that fault their context {faulting:.1} s, cases that measure \
             {measuring:.1} s{}",
            self.figures_s.map(|f| format!(", figures {f:.1} s")).unwrap_or_default()
        );
        Some(if devices == 1 {
            let sum = starting + faulting + measuring + figures;
            format!("{parts}: {sum:.1} s of the {wall_s:.1} s run, none of them beside another")
        } else {
            format!("{parts} (the cases summed over the {devices} GPUs, the starts host-wide)")
        })
    }
}

/// Which cases' traces a written report keeps (see [`RunInfo::traces`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Traces {
    /// Every case's trace. The default when reading, as reports from before this field kept them all.
    #[default]
    All,
    /// Only the traces of cases that did not pass: 95% of a full report's bytes were passing cases' traces,
    /// which nothing but a human reading the JSON used.
    NonPass,
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
    pub seeds: Option<SeedClaims>,
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

    /// With `--executor both`: how many cases agree, disagree and could not be compared (`None` otherwise).
    pub fn agreement_totals(&self) -> Option<AgreementTotals> {
        let mut totals = AgreementTotals::default();
        let mut any = false;
        for (id, second) in self.cases.iter().filter_map(|c| Some((&c.id, c.second.as_ref()?))) {
            any = true;
            match second.agreement.kind {
                executors::AgreementKind::Agree => totals.agree += 1,
                executors::AgreementKind::Disagree => totals.disagree.push(id.clone()),
                executors::AgreementKind::NotComparable => totals.not_comparable += 1,
            }
        }
        any.then_some(totals)
    }

    /// Reads a report written by `run`, plain or gzipped (told by its first bytes, whatever its name), with a
    /// message naming the file (and line and column of bad JSON).
    pub fn read(path: &Path) -> Result<Report, String> {
        let text = read_text(path).map_err(|e| format!("{}: cannot read the report: {e}", path.display()))?;
        Report::from_text(path, &text)
    }

    /// A report from its JSON `text`, read from `path` (named in messages). Parsed straight into the report's types:
    /// a fleet merge reads thousands, and a detour through `serde_json::Value` doubled the time of each.
    pub fn from_text(path: &Path, text: &str) -> Result<Report, String> {
        let mut report: Report = serde_json::from_str(text).map_err(|e| {
            format!("{}:{}:{}: not a cuda-conformance report: {e}", path.display(), e.line(), e.column())
        })?;
        lift_readings_of_older_report(&mut report);
        Ok(report)
    }

    /// Writes the report as compact JSON, gzipped when `path` ends in `.gz`, atomically: to a temporary file beside
    /// `path`, then renamed over it, so a reader (or a run killed mid-write) never sees half a report. The traces
    /// of passing cases are left out unless the run keeps them all ([`RunInfo::traces`]).
    pub fn write(&self, path: &Path) -> std::io::Result<()> {
        let json = serde_json::to_string(&self.as_written()).map_err(std::io::Error::other)?;
        // A run rewrites its report after every case: those copies are packed fast (a few ms each, on the
        // runner's thread), the finished report as well as the default level packs it.
        let level = if self.complete { flate2::Compression::default() } else { flate2::Compression::fast() };
        write_atomic(path, &encode_for(path, json.as_bytes(), level)?)
    }

    /// The report as [`Report::write`] writes it: without the traces of passing cases when the run says so.
    /// Borrowed as is when nothing is dropped, so a `--trace all` run costs no copy.
    pub fn as_written(&self) -> std::borrow::Cow<'_, Report> {
        let traces = self.run.as_ref().map_or(Traces::All, |r| r.traces);
        if !self.cases.iter().any(|c| c.drops_trace(traces)) {
            return std::borrow::Cow::Borrowed(self);
        }
        let mut compact = self.clone();
        compact.cases.iter_mut().for_each(|c| c.drop_trace(traces));
        std::borrow::Cow::Owned(compact)
    }
}

impl CaseResult {
    /// Whether a report written with `traces` leaves out this result's trace: a passing case's, under
    /// [`Traces::NonPass`].
    pub fn drops_trace(&self, traces: Traces) -> bool {
        traces == Traces::NonPass && self.verdict.kind == VerdictKind::Pass && self.observations.is_some()
    }

    /// This result as a report written with `traces` keeps it (see [`Report::as_written`]).
    pub fn drop_trace(&mut self, traces: Traces) {
        if traces != Traces::NonPass || self.verdict.kind != VerdictKind::Pass {
            return;
        }
        self.observations = None;
        // The second executor's trace too, unless it is the evidence of a disagreement.
        if let Some(second) = self.second.as_mut().filter(|s| s.agreement.kind != executors::AgreementKind::Disagree) {
            second.observations = None;
        }
    }
}

/// How a `--executor both` run's cases compare (see [`Report::agreement_totals`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgreementTotals {
    pub agree: usize,
    /// The ids of the cases whose executors disagree.
    pub disagree: Vec<String>,
    pub not_comparable: usize,
}

impl AgreementTotals {
    /// One line for the summaries: `executors (rust, cxx): 380 agree, 1 disagree (a/b), 4 not comparable`.
    pub fn line(&self) -> String {
        // The first few by name: each is listed in full under its case.
        const NAMED: usize = 5;
        let mut named: Vec<&str> = self.disagree.iter().take(NAMED).map(String::as_str).collect();
        let more = format!("{} more", self.disagree.len().saturating_sub(NAMED));
        if self.disagree.len() > NAMED {
            named.push(&more);
        }
        let which = if named.is_empty() { String::new() } else { format!(" ({})", named.join(", ")) };
        format!(
            "executors (rust and cxx): {} agree, {} disagree{which}, {} not comparable",
            self.agree,
            self.disagree.len(),
            self.not_comparable
        )
    }
}

/// The first two bytes of every gzip stream (RFC 1952).
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// The text of `path`, unpacked first when it is gzipped (by its content: a `.json` that is gzipped reads too).
pub fn read_text(path: &Path) -> std::io::Result<String> {
    let bytes = std::fs::read(path)?;
    let bytes = if bytes.starts_with(&GZIP_MAGIC) {
        let mut out = Vec::with_capacity(bytes.len() * 8);
        std::io::Read::read_to_end(&mut flate2::read::MultiGzDecoder::new(&bytes[..]), &mut out)
            .map_err(|e| std::io::Error::new(e.kind(), format!("not a valid gzip file: {e}")))?;
        out
    } else {
        bytes
    };
    String::from_utf8(bytes).map_err(|e| {
        std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()),
        )
    })
}

/// `bytes` gzipped at `level` when `path` ends in `.gz`, else as they are.
pub fn encode_for(path: &Path, bytes: &[u8], level: flate2::Compression) -> std::io::Result<Vec<u8>> {
    if path.extension().is_some_and(|e| e == "gz") {
        let mut gz = flate2::write::GzEncoder::new(Vec::with_capacity(bytes.len() / 8), level);
        std::io::Write::write_all(&mut gz, bytes)?;
        gz.finish()
    } else {
        Ok(bytes.to_vec())
    }
}

/// Reports written while the executor derived the measures and the timeline kept them inside each case's
/// `observations`; they now sit on the case itself. Moves them there, so that an old report reads like a new one (a
/// case that already has its own keeps them).
fn lift_readings_of_older_report(report: &mut Report) {
    for case in &mut report.cases {
        let Some(obs) = case.observations.as_mut() else { continue };
        if let Some(measures) = obs.older_measures.take() {
            if case.measures.is_empty() {
                case.measures = measures;
            }
        }
        if let Some(timeline) = obs.older_timeline.take() {
            case.timeline.get_or_insert(timeline);
        }
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
mod tests {
    use super::*;
    use crate::report::test_support::{report, result};

    #[test]
    fn a_report_from_before_the_cxx_executor_reads_as_the_rust_executor_s() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../results/2026-11-22_first-suite_h100/report.json.gz");
        let old = Report::read(&path).unwrap_or_else(|e| panic!("{e}"));
        assert!(old.cases.len() > 100);
        assert!(old.cases.iter().all(|c| c.executor() == executors::Executor::Rust && c.second.is_none()));
        assert_eq!((old.agreement_totals(), old.run.as_ref().and_then(|r| r.executor.clone())), (None, None));
    }

    #[test]
    fn the_unshared_time_is_summed_on_one_gpu_and_only_listed_on_several() {
        let p = RunPhases {
            starting_s: Some(18.5),
            faulting_s: Some(7.25),
            measuring_s: Some(5.0),
            figures_s: Some(2.5),
            ..RunPhases::default()
        };
        let one = p.unshared_time(1, 36.6).unwrap_or_default();
        assert!(
            one.starts_with("process starts 18.5 s, cases that fault their context 7.2 s, cases that measure 5.0 s")
        );
        assert!(one.ends_with("figures 2.5 s: 33.2 s of the 36.6 s run, none of them beside another"), "{one}");
        let two = p.unshared_time(2, 29.0).unwrap_or_default();
        assert!(two.ends_with("(the cases summed over the 2 GPUs, the starts host-wide)") && !two.contains("33.2"));
        let bench = RunPhases { figures_s: None, ..p.clone() }.unshared_time(1, 31.0).unwrap_or_default();
        assert!(bench.ends_with("cases that measure 5.0 s: 30.8 s of the 31.0 s run, none of them beside another"));
        // A report from before the faulting and measuring times were recorded says nothing.
        assert_eq!(RunPhases { faulting_s: None, ..p }.unshared_time(1, 36.6), None);
    }

    #[test]
    fn the_agreement_line_names_the_first_disagreements_and_counts_the_rest() {
        let totals =
            AgreementTotals { agree: 3, disagree: (1..=7).map(|i| format!("a/{i}")).collect(), not_comparable: 2 };
        assert_eq!(
            totals.line(),
            "executors (rust and cxx): 3 agree, 7 disagree (a/1, a/2, a/3, a/4, a/5, 2 more), 2 not comparable"
        );
        let none = AgreementTotals { agree: 1, disagree: vec![], not_comparable: 0 };
        assert_eq!(none.line(), "executors (rust and cxx): 1 agree, 0 disagree, 0 not comparable");
    }

    #[test]
    fn an_older_report_keeps_its_measures_and_timeline_inside_the_observations_and_reads_like_a_new_one() {
        let mut older =
            serde_json::to_value(report("GPU", 13000, vec![result("perf/one", VerdictKind::Pass, None)])).unwrap();
        let measure = serde_json::json!([{ "name": "h2d", "of": "bandwidth c", "value": 5.0, "unit": "GB/s" }]);
        let timeline = serde_json::json!({ "clock": "events", "lanes": ["s"], "bars": [], "marks": [], "span_ns": 7,
            "notes": [] });
        older["cases"][0]["observations"] = serde_json::json!({ "measures": measure, "timeline": timeline });
        let obs = serde_json::to_value(Observations::default()).unwrap();
        for (key, value) in obs.as_object().unwrap() {
            older["cases"][0]["observations"][key] = value.clone();
        }
        let dir = std::env::temp_dir().join(format!("older-report-{}", std::process::id()));
        let path = dir.join("report.json");
        write_atomic(&path, older.to_string().as_bytes()).unwrap();
        let read = Report::read(&path).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        let case = &read.cases[0];
        assert_eq!((case.measures.len(), case.measures[0].value), (1, Some(5.0)));
        assert_eq!(case.timeline.as_ref().map(|t| t.span_ns), Some(7));
        let written = serde_json::to_value(&read).unwrap();
        assert!(written["cases"][0]["observations"].get("timeline").is_none(), "{written}");
        assert_eq!(written["cases"][0]["timeline"]["span_ns"], 7);
    }
}
