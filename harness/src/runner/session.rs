//! One run session: what `cuda-conformance run`, `cuda-conformance seeds` and the `cargo test` binary share around
//! the cases. A session names its report, writes a report even when it cannot run (so that a fleet merge can tell a
//! task that could not run from one that never ran), writes an unfinished report before the first case (so that a
//! task killed in a hang is `incomplete`, not missing), rewrites it after every case, judges the claims, and writes
//! the finished report and its outputs. The front ends keep their flags, their progress display and the figures,
//! which they measure (through the figures wing, above the runner) when [`Session::wants_figures`] says so.
//!
//! ```text
//! Session::new ── could_not_run (no driver, no device, invalid case files, an unreadable baseline): report, done
//!      │
//!      └── begin (unfinished report) → run (rewritten after each case) → conclude (claims, complete) → write
//! ```

use super::mock::mock_device;
use super::select::Tier;
use super::stats::SuiteStats;
use super::suite::{run_suite_measuring, Measurement};
use super::{RunOptions, WRITTEN_GATE_DELAY};
use crate::case::ast::Case;
use crate::device::gpu::DeviceInfo;
use crate::record::claims::ProgramRun;
use crate::record::{write_atomic, CaseResult, KernelImage, Provenance, Report, RunInfo, SanitizerRun};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// What a report records besides the results: where the run came from and how it was made.
#[derive(Debug, Clone)]
pub struct ReportHeader {
    pub commit: String,
    pub started_at: String,
    pub filter: String,
    pub shard: Option<String>,
    pub baseline: Option<String>,
    /// The probe kernels of the binary that runs the cases (the harness does not know how they were built).
    pub kernel_image: KernelImage,
}

/// [`run_suite`](super::suite::run_suite), with the report rewritten (atomically) at `path` after every case so that a run killed half-way
/// keeps what it obtained. `on_result` sees each result and whether the rewrite failed. Returns the report
/// (`complete` is left for the caller, which may add figures first).
pub fn run_to_report(
    cases: &[&Case],
    devices: &[DeviceInfo],
    opts: &RunOptions,
    header: &ReportHeader,
    path: Option<&Path>,
    on_result: impl FnMut(&CaseResult, Option<std::io::Error>),
) -> Report {
    run_to_report_measuring(cases, devices, opts, header, path, None, on_result)
}

/// [`run_to_report`], with `measurement` (the figures) run where the schedule puts it (see [`run_suite_measuring`]).
pub fn run_to_report_measuring(
    cases: &[&Case],
    devices: &[DeviceInfo],
    opts: &RunOptions,
    header: &ReportHeader,
    path: Option<&Path>,
    measurement: Option<Measurement<'_>>,
    mut on_result: impl FnMut(&CaseResult, Option<std::io::Error>),
) -> Report {
    let start = Instant::now();
    let mut done: Vec<(usize, CaseResult)> = Vec::new();
    let mut pacing = RewritePacing::default();
    let (results, stats) = run_suite_measuring(cases, devices, opts, measurement, |index, result| {
        // Kept as the rewrites write it: a passing case's trace, which they leave out, is not copied into each of
        // them (twice: once into the report, once more to leave it out), which made the rewrites quadratic in the
        // traces. The report returned is made from the full results.
        let mut written = result.clone();
        written.drop_trace(opts.traces);
        done.push((index, written));
        let error = path.filter(|_| pacing.due()).and_then(|p| {
            let began = Instant::now();
            let so_far = in_order(&done);
            let error =
                report_of(header, devices, opts, &SuiteStats::default(), start.elapsed(), so_far).write(p).err();
            pacing.wrote(began.elapsed());
            error
        });
        on_result(result, error);
    });
    // The last results the pacing held back: the report is whole whatever the caller does next.
    if let Some(p) = path.filter(|_| pacing.held_back) {
        let so_far = in_order(&done);
        let error = report_of(header, devices, opts, &SuiteStats::default(), start.elapsed(), so_far).write(p).err();
        if let Some(e) = error {
            eprintln!("cannot write the report to {}: {e}", p.display());
        }
    }
    report_of(header, devices, opts, &stats, start.elapsed(), results)
}

/// When the report is rewritten: after every case while a rewrite is cheap, and once it is not, no more than a
/// fifth of the time. A rewrite is the whole report (gzipped JSON), so its cost grows with the results, and the
/// rewrites together with their square: with every trace kept (`--trace all`) the 1347-case report is about 6 MB
/// of JSON, which took 280 ms to write on the 2-core development machine (100 ms at half the cases). Rewriting after
/// every case, a run on an H100 reported 75.9 s of wall time against 59.5 s of cases and 5.8 s of figures
/// (results/2026-11-27_runner-groups_h100): the results queued behind the rewrites. A run killed half-way loses at
/// most the results of four rewrites' time.
#[derive(Debug, Default)]
struct RewritePacing {
    /// How long the last rewrite took, and when it ended.
    last: Option<(Duration, Instant)>,
    /// A result came since the last rewrite.
    held_back: bool,
}

impl RewritePacing {
    /// A rewrite below this is cheap enough to make after every case.
    const CHEAP: Duration = Duration::from_millis(20);

    /// Whether to rewrite now, after a new result.
    fn due(&mut self) -> bool {
        let due = match self.last {
            None => true,
            Some((took, _)) if took < Self::CHEAP => true,
            Some((took, ended)) => ended.elapsed() >= took * 4,
        };
        self.held_back = !due;
        due
    }

    fn wrote(&mut self, took: Duration) {
        self.last = Some((took, Instant::now()));
    }
}

/// The results of `done` in the order of their indices (the order of the cases).
pub fn in_order(done: &[(usize, CaseResult)]) -> Vec<CaseResult> {
    let mut sorted: Vec<&(usize, CaseResult)> = done.iter().collect();
    sorted.sort_by_key(|(i, _)| *i);
    sorted.into_iter().map(|(_, r)| r.clone()).collect()
}

/// The unfinished report of `results`, run with `opts` on `devices` (the first names the report) in `wall`.
pub fn report_of(
    header: &ReportHeader,
    devices: &[DeviceInfo],
    opts: &RunOptions,
    stats: &SuiteStats,
    wall: Duration,
    results: Vec<CaseResult>,
) -> Report {
    let mut provenance = match devices.first() {
        Some(d) => Provenance::new(d, &header.commit, header.started_at.clone()),
        None => Provenance::new(&mock_device(), &header.commit, header.started_at.clone()),
    };
    provenance.kernel_image = header.kernel_image.clone();
    if let Some(s) = &opts.sanitizer {
        // The parent runs outside the tool; its workers run under it, which is what the cases saw.
        provenance.serialising.get_or_insert_with(|| format!("compute-sanitizer --tool {} (run --sanitizer)", s.tool));
    }
    let mut report = Report::new(provenance, header.filter.clone(), wall.as_millis() as u64, results);
    report.run = Some(RunInfo {
        gate_delay_ms: opts.gate_delay_scale() * WRITTEN_GATE_DELAY.as_secs_f64() * 1000.0,
        reruns: opts.reruns,
        process_per_case: opts.process_per_case,
        devices: devices.iter().map(|d| format!("{}: {} ({})", d.ordinal, d.name, d.uuid)).collect(),
        shard: header.shard.clone(),
        baseline: header.baseline.clone(),
        processes_started: stats.processes_started,
        extra_runs: stats.extra_runs,
        sanitizer: opts.sanitizer.as_ref().map(|s| SanitizerRun::over(&s.tool, &s.executable, &report.cases)),
        traces: opts.traces,
        host_waits: Some(opts.host_waits.word().to_owned()),
        own_processes: (opts.own_processes != super::OwnProcessLanes::default() && devices.len() > 1)
            .then(|| opts.own_processes.word().to_owned()),
        phases: stats.phases(),
        executor: (opts.executors != super::Executors::Rust).then(|| opts.executors.word().to_owned()),
    });
    report
}

/// What a session runs; it decides the report's name, its tier and when the claims are judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Purpose {
    /// The cases of a tier (`run`, `cargo test`): the claims are judged when a `performance/` case ran.
    Cases(Tier),
    /// The seeds' programs and the cases their claims read (`seeds`): the claims are always judged, with the
    /// programs' runs; the report's name starts with `seeds-`.
    Seeds,
}

/// Where a session writes. Only the report is always written (under `reports/` unless given).
#[derive(Debug, Clone, Default)]
pub struct Outputs {
    /// The JSON report.
    pub report: Option<PathBuf>,
    /// The results as JUnit XML.
    pub junit: Option<PathBuf>,
    /// The self-contained HTML page (claims, bounds, every timeline).
    pub html: Option<PathBuf>,
    /// A folder for one SVG per case with a timeline.
    pub svg: Option<PathBuf>,
}

/// One run, from its start to its written report.
pub struct Session {
    purpose: Purpose,
    header: ReportHeader,
    outputs: Outputs,
    start: Instant,
}

impl Session {
    /// A session starting now; `header.started_at` is the caller's clock reading of the same moment.
    pub fn new(purpose: Purpose, header: ReportHeader, outputs: Outputs) -> Session {
        Session { purpose, header, outputs, start: Instant::now() }
    }

    pub fn header(&self) -> &ReportHeader {
        &self.header
    }

    /// Prints `reason` and writes the report of a run that could not start its cases (and its JUnit XML): no case,
    /// `complete: false`, the reason in `could_not_run`. `device` names the GPU when one was probed already.
    pub fn could_not_run(&self, reason: &str, device: Option<&DeviceInfo>) {
        let mut provenance = match device {
            Some(d) => Provenance::new(d, &self.header.commit, self.header.started_at.clone()),
            None => Provenance::without_device(&self.header.commit, self.header.started_at.clone()),
        };
        provenance.kernel_image = self.header.kernel_image.clone();
        let path = self
            .outputs
            .report
            .clone()
            .unwrap_or_else(|| self.named(&format!("could-not-run-{}", safe(&provenance.node))));
        let mut report = Report::could_not_run(
            provenance,
            self.header.filter.clone(),
            self.start.elapsed().as_millis() as u64,
            reason.to_owned(),
        );
        report.tier = self.tier();
        eprintln!("{reason}");
        match report.write(&path) {
            Ok(()) => eprintln!("report (could not run): {}", path.display()),
            Err(e) => eprintln!("cannot write the report to {}: {e}", path.display()),
        }
        if let Some(j) = &self.outputs.junit {
            if let Err(e) = write_atomic(j, report.junit().as_bytes()) {
                eprintln!("cannot write the JUnit report to {}: {e}", j.display());
            }
        }
    }

    /// Writes the unfinished report (no case yet) of a run on `device` and returns its path; the run rewrites it
    /// after every case. On a write error the session could not run: the caller writes that report.
    pub fn begin(&self, device: &DeviceInfo) -> Result<PathBuf, String> {
        let mut provenance = Provenance::new(device, &self.header.commit, self.header.started_at.clone());
        provenance.kernel_image = self.header.kernel_image.clone();
        let path = self.outputs.report.clone().unwrap_or_else(|| {
            self.named(&format!("{}-driver-{}", safe(&provenance.gpu_name), provenance.driver_version))
        });
        let mut started = Report::new(provenance, self.header.filter.clone(), 0, Vec::new());
        started.tier = self.tier();
        started.write(&path).map_err(|e| format!("cannot write the report to {}: {e}", path.display()))?;
        Ok(path)
    }

    /// Runs `cases` into the report at `path` (from [`Session::begin`]), rewriting it after every case.
    pub fn run(
        &self,
        cases: &[&Case],
        devices: &[DeviceInfo],
        opts: &RunOptions,
        path: &Path,
        on_result: impl FnMut(&CaseResult, Option<std::io::Error>),
    ) -> Report {
        run_to_report(cases, devices, opts, &self.header, Some(path), on_result)
    }

    /// [`Session::run`], with `measurement` (the figures) run on the measuring lane as the schedule allows.
    pub fn run_measuring(
        &self,
        cases: &[&Case],
        devices: &[DeviceInfo],
        opts: &RunOptions,
        path: &Path,
        measurement: Option<Measurement<'_>>,
        on_result: impl FnMut(&CaseResult, Option<std::io::Error>),
    ) -> Report {
        run_to_report_measuring(cases, devices, opts, &self.header, Some(path), measurement, on_result)
    }

    /// Whether the figures (measured, never asserted) follow the cases: when asked for, on the full tier, on a GPU
    /// (not in mock mode) and in the first shard only, so that a sharded run measures them once.
    pub fn wants_figures(&self, asked: bool, opts: &RunOptions, shard: Option<(usize, usize)>) -> bool {
        asked && self.purpose == Purpose::Cases(Tier::Full) && opts.mock.is_none() && shard.is_none_or(|(i, _)| i == 1)
    }

    /// The finished report: the claims judged (from `programs` and the cases that ran), the wall time of the whole
    /// session, `complete`.
    pub fn conclude(&self, mut report: Report, programs: &[ProgramRun]) -> Report {
        let measured = report.cases.iter().any(|c| c.id.starts_with(crate::claims::AREA));
        if self.purpose == Purpose::Seeds || measured {
            report.seeds = Some(crate::claims::evaluate(&report.cases, programs, &report.provenance));
        }
        report.wall_ms = self.start.elapsed().as_millis() as u64;
        report.complete = true;
        report.tier = self.tier();
        report
    }

    /// Writes the finished report at `path` and the outputs asked for, each named on stderr; stops at the first
    /// that cannot be written.
    pub fn write(&self, report: &Report, path: &Path) -> Result<(), String> {
        report.write(path).map_err(|e| format!("cannot write the report to {}: {e}", path.display()))?;
        match self.purpose {
            Purpose::Cases(_) => eprintln!("report: {} ({:.1} s)", path.display(), report.wall_ms as f64 / 1000.0),
            Purpose::Seeds => eprintln!("report: {}", path.display()),
        }
        if let Some(j) = &self.outputs.junit {
            write_atomic(j, report.junit().as_bytes())
                .map_err(|e| format!("cannot write the JUnit report to {}: {e}", j.display()))?;
            eprintln!("junit: {}", j.display());
        }
        if let Some(html) = &self.outputs.html {
            write_atomic(html, report.html().as_bytes())
                .map_err(|e| format!("cannot write {}: {e}", html.display()))?;
            eprintln!("html: {}", html.display());
        }
        if let Some(folder) = &self.outputs.svg {
            write_timelines(report, None, folder)?;
        }
        Ok(())
    }

    fn tier(&self) -> Option<String> {
        match self.purpose {
            Purpose::Cases(tier) => Some(tier.word().to_owned()),
            Purpose::Seeds => None,
        }
    }

    /// `reports/[seeds-]<stem>-<time>.json`: `<GPU>-driver-<driver>`, or `could-not-run-<node>` for a report with
    /// no GPU to name it by.
    fn named(&self, stem: &str) -> PathBuf {
        let stamp: String = self.header.started_at.chars().filter(|c| c.is_ascii_digit()).take(14).collect();
        let prefix = if self.purpose == Purpose::Seeds { "seeds-" } else { "" };
        PathBuf::from("reports").join(format!("{prefix}{stem}-{stamp}.json"))
    }
}

/// `name` with every character but ASCII letters and digits made a `-`, for a file name.
fn safe(name: &str) -> String {
    name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect()
}

/// One SVG per case of `report` with a timeline (whose id contains `filter`) into `folder`.
pub fn write_timelines(report: &Report, filter: Option<&str>, folder: &Path) -> Result<(), String> {
    let mut written = 0;
    for (id, timeline) in report.timelines().filter(|(id, _)| filter.is_none_or(|f| id.contains(f))) {
        let path = folder.join(crate::report::timeline::file_name(id));
        write_atomic(&path, crate::report::timeline::svg(id, timeline).as_bytes())
            .map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
        written += 1;
    }
    eprintln!("{written} timeline(s) in {}", folder.display());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::verdict::VerdictKind;
    use crate::record::Traces;
    use crate::report::test_support::device;

    /// The rewrites after each case keep the results as they write them (passing cases without their traces):
    /// what they write is what writing the full results wrote, for a real run's results (the full-trace report of
    /// `83ca549`: passes, variants, failures, not-supported) at every length a run goes through.
    #[test]
    fn a_rewrite_from_the_results_as_written_writes_what_the_full_results_wrote() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../results/2026-11-25_consolidation_h100/report-83ca549.json.gz");
        let full = Report::read(&path).unwrap_or_else(|e| panic!("{e}")).cases;
        assert!(full.iter().any(|c| c.verdict.kind == VerdictKind::Pass && c.observations.is_some()));
        assert!(full.iter().any(|c| c.verdict.kind != VerdictKind::Pass && c.observations.is_some()));
        let header = ReportHeader {
            commit: "test".into(),
            started_at: "2026-01-01T00:00:00Z".into(),
            filter: String::new(),
            shard: None,
            baseline: None,
            kernel_image: Default::default(),
        };
        let devices = [device("NVIDIA H100 80GB HBM3", 58000)];
        let opts = RunOptions::default();
        assert_eq!(opts.traces, Traces::NonPass, "the default the rewrites run with");
        let written = |results: Vec<CaseResult>| {
            let report = report_of(&header, &devices, &opts, &SuiteStats::default(), Duration::from_secs(1), results);
            serde_json::to_string(&*report.as_written()).unwrap()
        };
        for n in [1, 2, 17, full.len() / 2, full.len()] {
            let compacted: Vec<CaseResult> = full[..n]
                .iter()
                .map(|r| {
                    let mut r = r.clone();
                    r.drop_trace(opts.traces);
                    r
                })
                .collect();
            assert_eq!(written(compacted), written(full[..n].to_vec()), "the first {n} results");
        }
    }
}
