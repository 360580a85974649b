//! The command line: [`Cli`] and its [`Command`]s, one module per family, each command an `Args` struct with its
//! own `exec`. Every command ends in a [`Status`] (see [`status`] for what each means per command).

mod api;
mod baseline;
mod cases;
mod coverage;
mod findings;
mod info;
mod measure;
mod merge;
mod output;
mod reference;
mod reports;
mod repro;
mod run;
mod seeds;
pub mod status;

use clap::{Parser, Subcommand};
use cuda_conformance::cases_dir;
use status::{status_of, Status};
use std::path::PathBuf;

#[derive(Parser)]
#[command(version, about = "Conformance suite for the CUDA runtime: what CUDA promises and what this GPU does")]
pub struct Cli {
    /// Folder of *.case files (default: $CUDA_CONFORMANCE_CASES, cases/ beside the binary, or the source tree's).
    #[arg(long, global = true)]
    cases: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the cases whose id contains FILTER (all without one) in worker processes, and write a JSON report.
    /// Exit status: 0 when nothing failed, 1 on a fail, crash, timeout or unexpected pass, 2 when the suite could
    /// not run (no driver, no device, invalid case files, a bad option): then too a report is written, with
    /// `complete: false` and the reason in `could_not_run`.
    Run(run::RunCmd),
    /// Run the cases several ways and print wall time, cases/s, ms per case and overhead per case for each
    /// (process per case at the written delays, process per case, workers, workers on every --devices GPU).
    Bench(run::BenchCmd),
    /// Measure a figure (recorded, never asserted) and print it; `run` measures them all after the cases.
    Measure(measure::MeasureCmd),
    /// The seeds' performance claims: run the seeds' programs as written (seeds/, built by scripts/build-seeds.sh),
    /// then the cases that measure the claims and their bounds (performance/ and a few the claims read), and judge
    /// each claim against its bound (holds / holds partly / does not hold: quality, never pass/fail). Writes one
    /// JSON report (with the programs' output), and optionally the HTML page and the timelines as SVG.
    Seeds(seeds::SeedsCmd),
    /// Write the timeline of every case in REPORT that has one (and whose id contains FILTER) as a standalone SVG
    /// into OUT (named after the case: performance_seed000-pipeline.svg).
    Timeline(reports::TimelineCmd),
    /// Parse, validate and lint every case file; print diagnostics as file:line:col and weak checks as
    /// file:line: case ID: warning (exit 1 on any warning, 2 on invalid files).
    Check,
    /// List the case ids (and rules) that FILTER selects.
    List(cases::ListCmd),
    /// Print a report's summary: Markdown (provenance, verdicts by area, variants, failures), the console table,
    /// JUnit XML, or one self-contained HTML page with the seed claims and every case's timeline.
    Summary(reports::SummaryCmd),
    /// Compare two reports: regressions, fixes, variant changes, new and removed cases, environment differences.
    /// Exit status 1 when NEW has a regression (a case failing that did not fail in BASE, or a new failing case).
    Compare(reports::CompareCmd),
    /// Judge a report's recorded traces again with these case files and this build's judge, and print each
    /// verdict that changes (old, new, why). For reviewing a case or judge fix against what a GPU did, without a
    /// GPU: only cases whose trace the report kept (not passing ones) can be judged again; the others are counted.
    /// Exit status 1 when a verdict changes.
    Rejudge(reports::RejudgeCmd),
    /// Baselines: what a GPU, driver and runtime are known to do (`run --baseline FILE` judges against one).
    #[command(subcommand)]
    Baseline(baseline::BaselineCommand),
    /// Merge reports of many hosts, GPUs and drivers into one matrix: rows are cases, columns (GPU, driver,
    /// runtime); rows where the columns disagree first. Markdown on stdout unless --markdown/--json/--html.
    Matrix(merge::MatrixCmd),
    /// Merge the reports of a fleet run (a Slurm job array, a Kubernetes Indexed Job, ...) against the tasks that
    /// should have reported: each is as-expected, deviating (an outcome differs from the majority of the same GPU
    /// model, or from --baseline), failing, could-not-run, incomplete or missing; duplicates and reports outside
    /// the set are flagged. Deviating tasks first. Markdown on stdout unless --markdown/--json/--html.
    /// Exit status: 0 all as expected, 1 deviations (or failures, duplicates, unexpected reports), 2 missing,
    /// could-not-run or incomplete tasks (or nothing to merge).
    Fleet(merge::FleetCmd),
    /// Print the provenance a run on this device would record.
    Info(info::InfoCmd),
    /// The cudart API coverage of the cases: per function that returns a cudaError_t, the cases that call it, the
    /// codes they assert (and --report runs observed), the codes its header documents that none has seen; totals
    /// per API group. Markdown on stdout unless --markdown/--json/--html (docs/coverage.md is its Markdown).
    Coverage(coverage::CoverageCmd),
    /// The API table: every cudart function of the linked header with its group, parameters and their classes,
    /// documented return codes, notes and platform (what `call` and sweep rows name).
    Api(api::ApiCmd),
    /// The rules reference as a static site in --out DIR: a page per area, each rule with its source, its case and
    /// the verdicts of the --report files per (GPU, driver, runtime), findings marked. Needs no network to view.
    Reference(reference::ReferenceCmd),
    /// Write each case whose id contains FILTER (or the case ID) as a standalone CUDA C++ program, `--out DIR`:
    /// `<id with / as __>.cu` and the shared header `cuda_conformance_repro.h`. Each makes the executor's CUDA calls
    /// in its order and prints its observations as JSON (`nvcc -std=c++17 -arch=sm_90 F.cu -o F && ./F`). Exit 2
    /// listing every case that could not be written.
    Repro(repro::ReproCmd),
    /// The findings pages (results/findings/): one page per place where the driver departs from NVIDIA's
    /// documentation, rendered from its data file (<slug>.json), the committed reports it names and the case's
    /// reproducer (written with `repro`), and the index README.md.
    Findings(findings::FindingsCmd),
}

impl Cli {
    /// Runs the command; its status, with any message printed.
    pub fn exec(self) -> Status {
        let dir = self.cases.unwrap_or_else(cases_dir);
        status_of(match self.command {
            Command::Run(cmd) => cmd.exec(&dir),
            Command::Bench(cmd) => cmd.exec(&dir),
            Command::Measure(cmd) => cmd.exec(),
            Command::Seeds(cmd) => cmd.exec(&dir),
            Command::Timeline(cmd) => cmd.exec(),
            Command::Check => cases::check(&dir),
            Command::List(cmd) => cmd.exec(&dir),
            Command::Summary(cmd) => cmd.exec(),
            Command::Compare(cmd) => cmd.exec(),
            Command::Rejudge(cmd) => cmd.exec(&dir),
            Command::Baseline(cmd) => cmd.exec(),
            Command::Matrix(cmd) => cmd.exec(),
            Command::Fleet(cmd) => cmd.exec(),
            Command::Info(cmd) => cmd.exec(),
            Command::Coverage(cmd) => cmd.exec(&dir),
            Command::Api(cmd) => cmd.exec(),
            Command::Reference(cmd) => cmd.exec(&dir),
            Command::Repro(cmd) => cmd.exec(&dir),
            Command::Findings(cmd) => cmd.exec(&dir),
        })
    }
}

/// Now, as a report records it.
fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|_| "unknown".into())
}
