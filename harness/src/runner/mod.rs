//! Runs the suite: cases in worker processes (a batch per process, one CUDA context), spread over the devices, with
//! the checks that keep a fast run's verdicts those of a slow one. [`suite::run_suite`] is the loop behind
//! `cuda-conformance run`; the `cargo test` binary hands its case trials to one [`device_runner::DeviceRunner`].
//!
//! How the pieces fit, from the top down:
//!
//! - [`run_to_report`] (here): [`suite::run_suite`], with the report rewritten after every case.
//! - [`suite`]: plans which device's runner takes which case, and runs one [`device_runner::DeviceRunner`] per device
//!   on a thread, the batch cases on a shared queue.
//! - [`device_runner`]: one device's processes (its batch worker, the warm processes of the cases that need their
//!   own, the several-device worker) and every run of a case (the first; at the written delays; for variant
//!   stability; reruns) that [`policy`] asks for.
//! - [`policy`]: the rules, as pure functions of a case and its results: which process a case needs, when a result
//!   must be confirmed at the written delays or must reproduce, and what makes a flake.
//! - [`worker`]: a worker process, both sides: the parent's handle ([`worker::Worker`], over `process`) and the
//!   child, which runs each case it is sent through [`one_case`] and checks that the context is clean after it.
//!   [`protocol`] is what they say to each other: a request carries the case's text, so the suite's cases and the
//!   figures' generated points go through the same worker. [`mock`] plays a child without a GPU, for the tests.
//! - [`one_case`]: one case in this process: requirements, execution, verdict.
//! - [`select`] (tiers, shards, devices) and [`bench`] (the same suite run several ways) serve the command line.
//!
//! What a run guarantees, and why:
//!
//! - **Isolation.** A child process runs the cases ([`worker`]); a crash, a hang or a sticky error costs one case and
//!   never the results of the others: the parent records it and starts a fresh child at the next case. A case that
//!   leaves the context dirty ends its worker. A case with `env:` (process-wide runtime settings) or with
//!   `poisons-context:` (a sticky error on purpose) gets a process of its own.
//! - **Gate delays.** A case's `open G after 300ms` is scaled to [`RunOptions::gate_delay`] (other delays in
//!   proportion): the blocking oracle only needs the open to come well after an API call's latency. A short delay
//!   can only make a predicate that compares a return or a kernel start with the open (`waited-for`, `before`) hold
//!   when it should not, never the other way. So a result at a shortened delay that is not plain `pass` — a fail, a
//!   quality warning, or a variant or observation decided by such a predicate — is run again at the written delays,
//!   and that run counts.
//! - **Flakes.** An unexpected result (a failure, or with a baseline anything it does not expect) is run again
//!   [`RunOptions::reruns`] times: if any run differs it is a `flake`, so a fail must reproduce. A `variant` runs
//!   twice and must name the same variant both times, else it is a `flake`.
//! - **Devices.** One worker per device, each seeing only its GPU; cases go to whichever device is free next.
//! - **Warm processes.** A new process's CUDA context costs about 210 ms of a resource the driver serialises across
//!   the whole host (measured on the 2-GPU H200 host: 8 processes starting at once take 1.7 s, on one GPU or on
//!   two). So the cases that need a process of their own all go to the first device's runner, which runs them
//!   before its other cases, each in a process started ahead ([`device_runner::WARM_AHEAD`] at a time) that
//!   created its context while the case before it ran; its batch worker warms up last. Such a case whose pick a short gate delay could
//!   decide starts at the written delays (it would be confirmed there anyway, in one more process). The other
//!   devices start on the shared queue of batch cases at once.
//! - **Measurements.** Cases that `measure` run one at a time across the devices (see `suite::BatchQueue`).
//! - **Several devices.** Cases that need several devices share one worker of their own that sees every GPU
//!   (with a context on each from the start), on the first device's runner, after its own-process cases.
//! - **Device memory.** A worker reports how much less device memory was free after a case than before; only the
//!   parent knows whether another process of the run could have allocated on that device meanwhile (a
//!   several-device case touching it), so the parent judges: a loss of more than
//!   [`device_runner::MEMORY_SLACK_MIB`] on an undisturbed device ends the worker, like any other dirt (objects,
//!   limits, errors, captures, which the child checks itself); on a disturbed one the check is skipped and counted.

pub mod bench;
pub mod device_runner;
pub mod mock;
pub mod one_case;
pub mod policy;
mod process;
pub mod protocol;
pub mod select;
pub mod suite;
pub mod worker;

use crate::case::ast::Case;
use crate::gpu::DeviceInfo;
use crate::report::CaseResult;
use mock::mock_device;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};
use suite::run_suite;

/// The delay the cases are written with: `open G after 300ms` is the common gate open.
pub const WRITTEN_GATE_DELAY: Duration = Duration::from_millis(300);
/// The default gate delay of a run: an order of magnitude above an API call's latency, a tenth of the written one.
pub const DEFAULT_GATE_DELAY: Duration = Duration::from_millis(30);

/// How a suite runs.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// A case with no result after this is killed (with its worker) and is a timeout.
    pub case_deadline: Duration,
    /// What a case's `open G after 300ms` stands for; other delays scale in proportion. At most the written delay.
    pub gate_delay: Duration,
    /// How often an unexpected result is run again before it counts.
    pub reruns: u32,
    /// One process per case (the slow, old way; for comparison), instead of worker processes.
    pub process_per_case: bool,
    /// Restrict each worker to its device (`CUDA_VISIBLE_DEVICES=<uuid>`); off for a single device as given.
    pub restrict_visibility: bool,
    /// Play `CUDA_CONFORMANCE_MOCK` behaviours instead of running on a GPU (tests).
    pub mock: Option<String>,
    /// The executable to re-execute as the child (default: the current one).
    pub exe: Option<PathBuf>,
    /// Expectations to judge the results against (the section of this GPU, driver and runtime).
    pub baseline: Option<BTreeMap<String, String>>,
}

impl Default for RunOptions {
    fn default() -> RunOptions {
        RunOptions {
            case_deadline: Duration::from_secs(60),
            gate_delay: DEFAULT_GATE_DELAY,
            reruns: 2,
            process_per_case: false,
            restrict_visibility: false,
            mock: None,
            exe: None,
            baseline: None,
        }
    }
}

impl RunOptions {
    /// The factor applied to the cases' open delays (1 at the written delays).
    pub fn gate_delay_scale(&self) -> f64 {
        (self.gate_delay.as_secs_f64() / WRITTEN_GATE_DELAY.as_secs_f64()).min(1.0)
    }
}

/// What a report records besides the results: where the run came from and how it was made.
#[derive(Debug, Clone)]
pub struct ReportHeader {
    pub commit: String,
    pub started_at: String,
    pub filter: String,
    pub shard: Option<String>,
    pub baseline: Option<String>,
    /// The probe kernels of the binary that runs the cases (the harness does not know how they were built).
    pub kernel_image: crate::report::KernelImage,
}

/// [`run_suite`], with the report rewritten (atomically) at `path` after every case so that a run killed half-way
/// keeps what it obtained. `on_result` sees each result and whether the rewrite failed. Returns the report
/// (`complete` is left for the caller, which may add figures first) and the run's statistics.
pub fn run_to_report(
    cases: &[&Case],
    devices: &[DeviceInfo],
    opts: &RunOptions,
    header: &ReportHeader,
    path: Option<&std::path::Path>,
    mut on_result: impl FnMut(&CaseResult, Option<std::io::Error>),
) -> crate::report::Report {
    let start = Instant::now();
    let mut provenance = match devices.first() {
        Some(d) => crate::report::Provenance::new(d, &header.commit, header.started_at.clone()),
        None => crate::report::Provenance::new(&mock_device(), &header.commit, header.started_at.clone()),
    };
    provenance.kernel_image = header.kernel_image.clone();
    let mut info = crate::report::RunInfo {
        gate_delay_ms: opts.gate_delay_scale() * WRITTEN_GATE_DELAY.as_secs_f64() * 1000.0,
        reruns: opts.reruns,
        process_per_case: opts.process_per_case,
        devices: devices.iter().map(|d| format!("{}: {} ({})", d.ordinal, d.name, d.uuid)).collect(),
        shard: header.shard.clone(),
        baseline: header.baseline.clone(),
        processes_started: 0,
        extra_runs: 0,
    };
    let mut done: Vec<(usize, CaseResult)> = Vec::new();
    let assemble = |done: &[(usize, CaseResult)], info: &crate::report::RunInfo| {
        let mut sorted: Vec<&(usize, CaseResult)> = done.iter().collect();
        sorted.sort_by_key(|(i, _)| *i);
        let results = sorted.into_iter().map(|(_, r)| r.clone()).collect();
        let mut report = crate::report::Report::new(
            provenance.clone(),
            header.filter.clone(),
            start.elapsed().as_millis() as u64,
            results,
        );
        report.run = Some(info.clone());
        report
    };
    let (results, stats) = run_suite(cases, devices, opts, |index, result| {
        done.push((index, result.clone()));
        let error = path.and_then(|p| assemble(&done, &info).write(p).err());
        on_result(result, error);
    });
    info.processes_started = stats.processes_started;
    info.extra_runs = stats.extra_runs;
    let results: Vec<(usize, CaseResult)> = results.into_iter().enumerate().collect();
    assemble(&results, &info)
}
