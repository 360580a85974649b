//! The runner benchmark (`cuda-conformance bench`): the same cases run several ways, with figures for each — wall
//! time, cases per second, milliseconds per case, the cases' own time (the executor's, mostly waiting for gates)
//! and the overhead beyond it per case — and whether every way gave every case the same verdict. Figures are
//! printed, never asserted.

use super::protocol::Ready;
use super::stats::{critical_lane, LaneTimes};
use super::suite::run_suite;
use super::{RunOptions, WRITTEN_GATE_DELAY};
use crate::case::ast::Case;
use crate::device::gpu::DeviceInfo;
use crate::record::CaseResult;
use serde::Serialize;
use std::fmt::Write as _;
use std::time::Instant;

/// One way of running the suite.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// One process per case, cases as written (300 ms gate opens): how the suite ran before worker processes.
    ProcessPerCaseWritten,
    /// One process per case at the run's gate delay.
    ProcessPerCase,
    /// Worker processes on one GPU at the run's gate delay.
    Workers,
    /// Worker processes on every given GPU.
    WorkersAllDevices,
}

impl Mode {
    pub const ALL: [Mode; 4] =
        [Mode::ProcessPerCaseWritten, Mode::ProcessPerCase, Mode::Workers, Mode::WorkersAllDevices];

    pub fn word(self) -> &'static str {
        match self {
            Mode::ProcessPerCaseWritten => "process-per-case-written",
            Mode::ProcessPerCase => "process-per-case",
            Mode::Workers => "workers",
            Mode::WorkersAllDevices => "workers-all-devices",
        }
    }

    pub fn from_word(w: &str) -> Option<Mode> {
        Mode::ALL.into_iter().find(|m| m.word() == w)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct Figure {
    pub mode: Mode,
    pub devices: usize,
    pub gate_delay_ms: f64,
    pub cases: usize,
    pub wall_s: f64,
    pub cases_per_s: f64,
    pub ms_per_case: f64,
    /// The executor's own time per case (gate waits, spins, sleeps), over every run of it.
    pub own_ms_per_case: f64,
    /// (wall × devices − own time) / cases: process starts, contexts, protocol, re-runs' overhead.
    pub overhead_ms_per_case: f64,
    pub processes_started: u64,
    pub extra_runs: u64,
    /// Cases whose verdict and variant differ from the first mode's.
    pub differing: Vec<String>,
    /// Outcome counts (`pass`: 194, ...).
    pub totals: std::collections::BTreeMap<String, usize>,
    /// Each device's timeline: where the wall time went.
    pub lanes: Vec<LaneTimes>,
    /// Processes waited for, and their mean driver initialisation and context creation, in milliseconds.
    pub contexts: (usize, f64, f64),
    /// Where the run's time went ([`SuiteStats::phases`](super::stats::SuiteStats::phases)): how long at least one
    /// of those processes was starting, and the cases the schedule runs beside nothing else.
    pub phases: Option<crate::record::RunPhases>,
    /// Cases whose device-memory check was skipped (another process could have allocated on the device).
    pub memory_checks_skipped: u64,
}

/// Runs `cases` once per mode and returns the figures (and each mode's results, for reports).
pub fn bench(
    cases: &[&Case],
    devices: &[DeviceInfo],
    opts: &RunOptions,
    modes: &[Mode],
    mut progress: impl FnMut(&str),
) -> Vec<(Figure, Vec<CaseResult>)> {
    let mut out: Vec<(Figure, Vec<CaseResult>)> = Vec::new();
    for &mode in modes {
        let mut o = opts.clone();
        o.process_per_case = matches!(mode, Mode::ProcessPerCase | Mode::ProcessPerCaseWritten);
        if mode == Mode::ProcessPerCaseWritten {
            o.gate_delay = WRITTEN_GATE_DELAY;
        }
        let devs = if mode == Mode::WorkersAllDevices { devices } else { &devices[..devices.len().min(1)] };
        o.restrict_visibility = mode == Mode::WorkersAllDevices || opts.restrict_visibility;
        progress(&format!("{} on {} device(s)", mode.word(), devs.len()));
        let start = Instant::now();
        let (results, stats) = run_suite(cases, devs, &o, |_, _| {});
        let wall = start.elapsed().as_secs_f64();
        let own_ns: u64 = results
            .iter()
            .map(|r| {
                let runs = r.attempts.len().max(1) as u64;
                r.observations.as_ref().map_or(0, |o| o.wall_ns) * runs
            })
            .sum();
        let n = results.len().max(1) as f64;
        let differing = match out.first() {
            Some((_, first)) => first
                .iter()
                .zip(&results)
                .filter(|(a, b)| a.outcome() != b.outcome())
                .map(|(a, b)| format!("{}: {} vs {}", a.id, a.outcome(), b.outcome()))
                .collect(),
            None => Vec::new(),
        };
        let mut totals = std::collections::BTreeMap::new();
        for r in &results {
            *totals.entry(r.verdict.kind.to_string()).or_insert(0) += 1;
        }
        let figure = Figure {
            mode,
            devices: devs.len(),
            gate_delay_ms: o.gate_delay_scale() * WRITTEN_GATE_DELAY.as_secs_f64() * 1000.0,
            cases: results.len(),
            wall_s: wall,
            cases_per_s: results.len() as f64 / wall,
            ms_per_case: wall * 1000.0 / n,
            own_ms_per_case: own_ns as f64 / 1e6 / n,
            overhead_ms_per_case: (wall * 1000.0 * devs.len() as f64 - own_ns as f64 / 1e6) / n,
            processes_started: stats.processes_started,
            extra_runs: stats.extra_runs,
            differing,
            totals,
            lanes: stats.lanes.clone(),
            memory_checks_skipped: stats.memory_checks_skipped,
            contexts: {
                let n = stats.ready.len();
                let mean = |f: fn(&Ready) -> f64| stats.ready.iter().map(f).sum::<f64>() / n.max(1) as f64;
                (n, mean(|r| r.init_ms), mean(|r| r.context_ms))
            },
            phases: stats.phases(),
        };
        out.push((figure, results));
    }
    out
}

/// The figures as a Markdown table, with the verdict differences after it.
pub fn table(figures: &[Figure]) -> String {
    let mut out = String::from(
        "| mode | GPUs | gate delay | cases | wall | cases/s | ms/case | own ms/case | overhead ms/case | processes | extra runs | verdicts differing from the first row |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for f in figures {
        let _ = writeln!(
            out,
            "| {} | {} | {:.0} ms | {} | {:.1} s | {:.1} | {:.1} | {:.1} | {:.1} | {} | {} | {} |",
            f.mode.word(),
            f.devices,
            f.gate_delay_ms,
            f.cases,
            f.wall_s,
            f.cases_per_s,
            f.ms_per_case,
            f.own_ms_per_case,
            f.overhead_ms_per_case,
            f.processes_started,
            f.extra_runs,
            f.differing.len()
        );
    }
    for f in figures.iter().filter(|f| f.lanes.len() > 1 || f.mode != Mode::ProcessPerCaseWritten) {
        for l in &f.lanes {
            let _ = writeln!(
                out,
                "\n{} on GPU {}: {} cases ({} in processes of their own or the several-device block), ended at \
                 {:.2} s: {}",
                f.mode.word(),
                l.device,
                l.cases,
                l.own_cases,
                l.end_s,
                l.breakdown()
            );
        }
        if let Some(critical) = critical_lane(&f.lanes).filter(|_| f.lanes.len() > 1) {
            let _ = writeln!(
                out,
                "{}: the critical path is GPU {} (ended last, at {:.2} s; the first lane to end ended at {:.2} s)",
                f.mode.word(),
                critical.device,
                critical.end_s,
                f.lanes.iter().map(|l| l.end_s).fold(f64::INFINITY, f64::min)
            );
        }
        let (n, init, context) = f.contexts;
        if n > 0 || f.memory_checks_skipped > 0 {
            let _ = writeln!(
                out,
                "{}: {n} warm processes waited for: driver initialisation {init:.0} ms, context {context:.0} ms on \
                 average; {} device-memory checks skipped",
                f.mode.word(),
                f.memory_checks_skipped
            );
            // The host makes one process's context at a time, whatever its GPU: starting time close to the wall
            // means more GPUs cannot make this run faster, fewer processes can.
            let starting_s = f.phases.as_ref().and_then(|p| p.starting_s).unwrap_or(0.0);
            let _ = writeln!(
                out,
                "{}: at least one of them was starting during {starting_s:.1} s of the {:.1} s run ({:.0} %)",
                f.mode.word(),
                f.wall_s,
                100.0 * starting_s / f.wall_s.max(f64::MIN_POSITIVE)
            );
        }
        if let Some(line) = f.phases.as_ref().and_then(|p| p.unshared_time(f.lanes.len(), f.wall_s)) {
            let _ = writeln!(out, "{}: {line}", f.mode.word());
        }
    }
    for f in figures.iter().filter(|f| !f.differing.is_empty()) {
        let _ = writeln!(out, "\n{} differs from the first row on:", f.mode.word());
        for d in &f.differing {
            let _ = writeln!(out, "- {d}");
        }
    }
    if let (Some(one), Some(all)) = (
        figures.iter().find(|f| f.mode == Mode::Workers),
        figures.iter().find(|f| f.mode == Mode::WorkersAllDevices && f.devices > 1),
    ) {
        let _ =
            writeln!(out, "\nthroughput on {} GPUs: {:.2}x one GPU's", all.devices, all.cases_per_s / one.cases_per_s);
    }
    out
}
