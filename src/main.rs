//! `cuda-conformance`: runs the conformance cases on a GPU and writes a report per host; compares, judges and merges
//! reports. A thin front end: the work is in `harness::runner` (running) and `harness::report` (reports).
//!
//! ```text
//! cuda-conformance run [FILTER]        run the suite in worker processes, write a JSON report (and JUnit)
//! cuda-conformance bench [FILTER]      run it several ways (process per case, workers, all GPUs) and print figures
//! cuda-conformance measure staging     measure the pageable staging threshold (a figure: recorded, not asserted)
//! cuda-conformance seeds               the seeds' programs and their claims against the bounds, in one report
//! cuda-conformance timeline REPORT     every case's timeline as an SVG
//! cuda-conformance check               parse, validate and lint every case file (no GPU needed)
//! cuda-conformance list [FILTER]       list case ids with their rules
//! cuda-conformance summary REPORT      a report's Markdown summary (or its table, or JUnit XML)
//! cuda-conformance compare BASE NEW    regressions, fixes, variant changes, new/removed cases, environment changes
//! cuda-conformance baseline bless R    write the baseline of R's GPU, driver and runtime
//! cuda-conformance matrix REPORT...    the semantics matrix across hosts, GPUs and drivers (Markdown, JSON, HTML)
//! cuda-conformance fleet REPORT|DIR... a fleet run against its expected tasks: ran, could not run, missing
//! cuda-conformance info                the device and build this binary would report
//! ```

use clap::{Parser, Subcommand};
use cuda_conformance::{cases_dir, kernel_table, seed_programs_dir, BUILD_COMMIT};
use harness::case::ast::Case;
use harness::device::gpu;
use harness::figures::{self, staging};
use harness::record::figures::{Figures, SeriesFigure, SMALLEST};
use harness::record::{Provenance, Report};
use harness::report::baseline::{Baseline, Key};
use harness::report::compare::Comparison;
use harness::report::fleet::{self, Expected, Fleet, Reference};
use harness::report::matrix::Matrix;
use harness::runner::bench::{self, Mode};
use harness::runner::select::{parse_devices, parse_shard, select_tier, Tier};
use harness::runner::{self, ReportHeader, RunOptions};
use indicatif::{ProgressBar, ProgressStyle};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

#[derive(Parser)]
#[command(version, about = "Conformance suite for the CUDA runtime: what CUDA promises and what this GPU does")]
struct Cli {
    /// Folder of *.case files (default: $CUDA_CONFORMANCE_CASES, cases/ beside the binary, or the source tree's).
    #[arg(long, global = true)]
    cases: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

/// How the cases run (shared by `run` and `bench`).
#[derive(clap::Args, Clone)]
struct RunArgs {
    /// The GPUs to spread the cases over: `all`, or ordinals like `0,2` (one worker per GPU, seeing only it).
    #[arg(long, default_value = "0")]
    devices: String,
    /// Run only shard I of N of the selected cases (to split a run across hosts), e.g. `--shard 2/4`.
    #[arg(long)]
    shard: Option<String>,
    /// Seconds after which a case's process is killed and the case is a timeout.
    #[arg(long, default_value_t = 60)]
    deadline: u64,
    /// Milliseconds a case's `open G after 300ms` stands for (other delays in proportion); a result this delay may
    /// have decided is confirmed at the written delays. 300 runs the cases as written.
    #[arg(long, default_value_t = 30)]
    gate_delay: u64,
    /// How often an unexpected result runs again before it counts (a flake if any run differs).
    #[arg(long, default_value_t = 2)]
    reruns: u32,
    /// One process per case instead of worker processes (slower; for comparison).
    #[arg(long)]
    isolate: bool,
    /// Which cases: `full` (all), or `smoke` (a few seconds: a node health check or a scheduler prolog; no figures).
    #[arg(long, value_enum, default_value_t = TierName::Full)]
    tier: TierName,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum TierName {
    Smoke,
    Full,
}

impl TierName {
    fn tier(self) -> Tier {
        match self {
            TierName::Smoke => Tier::Smoke,
            TierName::Full => Tier::Full,
        }
    }
}

#[derive(Subcommand)]
enum Command {
    /// Run the cases whose id contains FILTER (all without one) in worker processes, and write a JSON report.
    /// Exit status: 0 when nothing failed, 1 on a fail, crash, timeout or unexpected pass, 2 when the suite could
    /// not run (no driver, no device, invalid case files, a bad option): then too a report is written, with
    /// `complete: false` and the reason in `could_not_run`.
    Run {
        filter: Option<String>,
        #[command(flatten)]
        how: RunArgs,
        /// Where to write the JSON report (default: reports/<gpu>-driver-<driver>-<time>.json).
        #[arg(long)]
        report: Option<PathBuf>,
        /// Also write the results as JUnit XML here.
        #[arg(long)]
        junit: Option<PathBuf>,
        /// Judge the results against this baseline (`baseline bless`): known failures are expected-fail.
        #[arg(long)]
        baseline: Option<PathBuf>,
        /// Skip the figures (measurements recorded, never asserted) that run after the cases.
        #[arg(long)]
        no_figures: bool,
    },
    /// Run the cases several ways and print wall time, cases/s, ms per case and overhead per case for each
    /// (process per case at the written delays, process per case, workers, workers on every --devices GPU).
    Bench {
        filter: Option<String>,
        #[command(flatten)]
        how: RunArgs,
        /// The ways to run, comma-separated: process-per-case-written, process-per-case, workers,
        /// workers-all-devices.
        #[arg(long, default_value = "process-per-case-written,process-per-case,workers,workers-all-devices")]
        modes: String,
        /// Write the figures as JSON here.
        #[arg(long)]
        json: Option<PathBuf>,
        /// Write each way's report into this folder (<mode>.json).
        #[arg(long)]
        reports: Option<PathBuf>,
    },
    /// Measure a figure (recorded, never asserted) and print it; `run` measures them all after the cases.
    Measure {
        figure: FigureName,
        #[arg(long, default_value_t = 0)]
        device: i32,
        /// Seconds after which a point's case is abandoned (its worker killed) and the point is undecided.
        #[arg(long, default_value_t = 60)]
        deadline: u64,
        /// Print the figure as JSON instead of text.
        #[arg(long)]
        json: bool,
        /// Print the generated case of each series (at 4 KiB) and exit, without a GPU.
        #[arg(long)]
        print_cases: bool,
    },
    /// The seeds' performance claims: run the seeds' programs as written (seeds/, built by scripts/build-seeds.sh),
    /// then the cases that measure the claims and their bounds (performance/ and a few the claims read), and judge
    /// each claim against its bound (holds / holds partly / does not hold: quality, never pass/fail). Writes one
    /// JSON report (with the programs' output), and optionally the HTML page and the timelines as SVG.
    Seeds {
        #[command(flatten)]
        how: RunArgs,
        /// Where to write the JSON report (default: reports/seeds-<gpu>-driver-<driver>-<time>.json).
        #[arg(long)]
        report: Option<PathBuf>,
        /// The self-contained HTML page (claims, bounds, every timeline).
        #[arg(long)]
        html: Option<PathBuf>,
        /// A folder for one SVG per case with a timeline.
        #[arg(long)]
        svg: Option<PathBuf>,
        /// Where the seeds' programs are (default: $CUDA_CONFORMANCE_SEED_PROGRAMS, ../seeds beside the binary, or
        /// target/seeds).
        #[arg(long)]
        programs: Option<PathBuf>,
        /// Run only the cases, not the programs.
        #[arg(long)]
        no_programs: bool,
        /// Seconds after which a program is killed.
        #[arg(long, default_value_t = 120)]
        program_deadline: u64,
    },
    /// Write the timeline of every case in REPORT that has one (and whose id contains FILTER) as a standalone SVG
    /// into OUT (named after the case: performance_seed000-pipeline.svg).
    Timeline {
        report: PathBuf,
        filter: Option<String>,
        #[arg(long)]
        out: PathBuf,
    },
    /// Parse, validate and lint every case file; print diagnostics as file:line:col and weak checks as
    /// file:line: case ID: warning (exit 1 on any warning, 2 on invalid files).
    Check,
    /// List the case ids (and rules) that FILTER selects.
    List {
        filter: Option<String>,
        #[arg(long, value_enum, default_value_t = TierName::Full)]
        tier: TierName,
    },
    /// Print a report's summary: Markdown (provenance, verdicts by area, variants, failures), the console table,
    /// JUnit XML, or one self-contained HTML page with the seed claims and every case's timeline.
    Summary {
        report: PathBuf,
        #[arg(long, value_enum, default_value_t = SummaryFormat::Markdown)]
        format: SummaryFormat,
    },
    /// Compare two reports: regressions, fixes, variant changes, new and removed cases, environment differences.
    /// Exit status 1 when NEW has a regression (a case failing that did not fail in BASE, or a new failing case).
    Compare { base: PathBuf, new: PathBuf },
    /// Baselines: what a GPU, driver and runtime are known to do (`run --baseline FILE` judges against one).
    #[command(subcommand)]
    Baseline(BaselineCommand),
    /// Merge reports of many hosts, GPUs and drivers into one matrix: rows are cases, columns (GPU, driver,
    /// runtime); rows where the columns disagree first. Markdown on stdout unless --markdown/--json/--html.
    Matrix {
        #[arg(required = true)]
        reports: Vec<PathBuf>,
        #[arg(long)]
        markdown: Option<PathBuf>,
        #[arg(long)]
        json: Option<PathBuf>,
        /// One self-contained HTML page (no network needed to view it).
        #[arg(long)]
        html: Option<PathBuf>,
    },
    /// Merge the reports of a fleet run (a Slurm job array, a Kubernetes Indexed Job, ...) against the tasks that
    /// should have reported: each is as-expected, deviating (an outcome differs from the majority of the same GPU
    /// model, or from --baseline), failing, could-not-run, incomplete or missing; duplicates and reports outside
    /// the set are flagged. Deviating tasks first. Markdown on stdout unless --markdown/--json/--html.
    /// Exit status: 0 all as expected, 1 deviations (or failures, duplicates, unexpected reports), 2 missing,
    /// could-not-run or incomplete tasks (or nothing to merge).
    Fleet {
        /// Report files, or folders whose *.json files are read.
        #[arg(required = true)]
        reports: Vec<PathBuf>,
        /// The expected tasks: a count N (task ids 0 to N-1) or ids and ranges as in `sbatch --array`, e.g. 0-7,9.
        #[arg(long, conflicts_with = "nodes")]
        tasks: Option<String>,
        /// The expected nodes, in Slurm's hostlist syntax (`n[1-4],gpu07`), or @FILE with names one per line.
        #[arg(long)]
        nodes: Option<String>,
        /// Merge only the reports of this job: the Slurm array job id (or job id), or the Kubernetes Job's name.
        #[arg(long)]
        job: Option<String>,
        /// Compare each report with this baseline's section for its GPU, driver and runtime instead of with the
        /// majority of its GPU model.
        #[arg(long)]
        baseline: Option<PathBuf>,
        #[arg(long)]
        markdown: Option<PathBuf>,
        #[arg(long)]
        json: Option<PathBuf>,
        /// The semantics matrix of the reports that ran, as one self-contained HTML page.
        #[arg(long)]
        html: Option<PathBuf>,
    },
    /// Print the provenance a run on this device would record.
    Info {
        #[arg(long, default_value_t = 0)]
        device: i32,
        /// Print only the kernel image (compiler, PTX ISA, architectures); needs no GPU.
        #[arg(long)]
        kernels: bool,
    },
}

#[derive(Subcommand)]
enum BaselineCommand {
    /// Write the non-pass cases of REPORT as the section of its GPU, driver and runtime: into --output (other
    /// sections kept), or on stdout.
    Bless {
        report: PathBuf,
        #[arg(long)]
        output: Option<PathBuf>,
    },
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum SummaryFormat {
    Markdown,
    Table,
    Junit,
    Html,
}

/// The figures `measure` knows.
#[derive(Clone, Copy, clap::ValueEnum)]
enum FigureName {
    /// The largest size at which a pageable cudaMemcpyAsync / cudaMemcpy returns before earlier gated work.
    Staging,
}

fn main() -> ExitCode {
    runner::serve_child_request(kernel_table);
    figures::serve_worker_request(kernel_table);
    let cli = Cli::parse();
    let dir = cli.cases.unwrap_or_else(cases_dir);
    let load = || {
        harness::case::suite::load_dir(&dir).map_err(|diagnostics| {
            for d in &diagnostics {
                eprintln!("{d}");
            }
            eprintln!("{} problem(s) in the case files under {}", diagnostics.len(), dir.display());
            ExitCode::from(2)
        })
    };
    // `run` loads its cases itself: invalid case files are a could-not-run report there, not only a message.
    let needs_cases =
        matches!(cli.command, Command::Bench { .. } | Command::Check | Command::List { .. } | Command::Seeds { .. });
    let cases = if needs_cases {
        match load() {
            Ok(cases) => cases,
            Err(code) => return code,
        }
    } else {
        Vec::new()
    };
    match cli.command {
        Command::Check => {
            // Valid cases can still check less than they say: the weak-case lint (harness::case::lint) fails CI.
            let warnings = harness::case::lint::lint_all(&cases);
            for w in &warnings {
                eprintln!("{w}");
            }
            let line = if warnings.is_empty() {
                format!("{} cases in {}: all valid, no weak checks", cases.len(), dir.display())
            } else {
                format!("{} cases in {}: all valid, {} weak check(s)", cases.len(), dir.display(), warnings.len())
            };
            emit(&format!("{line}\n"));
            if warnings.is_empty() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Command::List { filter, tier } => {
            let mut out = std::io::stdout().lock();
            for case in select_tier(&cases, tier.tier(), filter.as_deref(), None) {
                // A closed pipe (`list | head`) ends the listing quietly.
                if writeln!(out, "{:<60} {}", case.id, case.rule).is_err() {
                    break;
                }
            }
            ExitCode::SUCCESS
        }
        Command::Summary { report, format } => match Report::read(&report) {
            Ok(r) => emit(&match format {
                SummaryFormat::Markdown => r.markdown(),
                SummaryFormat::Table => r.summary_table(),
                SummaryFormat::Junit => r.junit(),
                SummaryFormat::Html => r.html(),
            }),
            Err(e) => fail(e),
        },
        Command::Compare { base, new } => match (Report::read(&base), Report::read(&new)) {
            (Ok(b), Ok(n)) => {
                let c = Comparison::new(&b, &n);
                emit(&c.text());
                if c.ok() {
                    ExitCode::SUCCESS
                } else {
                    ExitCode::FAILURE
                }
            }
            (Err(e), _) | (_, Err(e)) => fail(e),
        },
        Command::Baseline(BaselineCommand::Bless { report, output }) => bless(&report, output.as_deref()),
        Command::Matrix { reports, markdown, json, html } => matrix(&reports, markdown, json, html),
        Command::Fleet { reports, tasks, nodes, job, baseline, markdown, json, html } => {
            fleet_cmd(&reports, tasks, nodes, job, baseline, [markdown, json, html])
        }
        Command::Info { kernels: true, .. } => {
            let k = cuda_conformance::kernel_image();
            emit(&format!(
                "{}, PTX ISA {}, {}
",
                k.compiler, k.ptx_isa, k.architectures
            ))
        }
        Command::Info { device, kernels: false } => match gpu::probe(device) {
            Ok(info) => {
                let mut provenance = Provenance::new(&info, BUILD_COMMIT, now_rfc3339());
                provenance.kernel_image = cuda_conformance::kernel_image();
                emit(&format!(
                    "{}
",
                    serde_json::to_string_pretty(&provenance).unwrap_or_default()
                ))
            }
            Err(e) => fail(e.to_string()),
        },
        Command::Run { filter, how, report, junit, baseline, no_figures } => {
            let cases = harness::case::suite::load_dir(&dir).map_err(|diagnostics| {
                for d in &diagnostics {
                    eprintln!("{d}");
                }
                let first = diagnostics.first().map(|d| format!(": {d}")).unwrap_or_default();
                format!("{} problem(s) in the case files under {}{first}", diagnostics.len(), dir.display())
            });
            run(cases, &dir, filter, &how, report, junit, baseline, !no_figures)
        }
        Command::Bench { filter, how, modes, json, reports } => {
            bench_cmd(&cases, &dir, filter, &how, &modes, json, reports)
        }
        Command::Measure { figure: FigureName::Staging, device, deadline, json, print_cases } => {
            measure_staging(device, Duration::from_secs(deadline), json, print_cases)
        }
        Command::Seeds { how, report, html, svg, programs, no_programs, program_deadline } => {
            let programs = (!no_programs).then(|| programs.unwrap_or_else(seed_programs_dir));
            let outputs = SeedOutputs { report, html, svg };
            seeds(&cases, &dir, &how, programs.as_deref(), Duration::from_secs(program_deadline), &outputs)
        }
        Command::Timeline { report, filter, out } => timelines(&report, filter.as_deref(), &out),
    }
}

/// Where `seeds` writes what it found.
struct SeedOutputs {
    report: Option<PathBuf>,
    html: Option<PathBuf>,
    svg: Option<PathBuf>,
}

/// `seeds`: the programs first (each alone on the GPU, before any worker holds a context), then the cases the claims
/// read, then the claims, into one report.
fn seeds(
    cases: &[Case],
    dir: &Path,
    how: &RunArgs,
    programs_dir: Option<&Path>,
    program_deadline: Duration,
    outputs: &SeedOutputs,
) -> ExitCode {
    let (devices, opts, _) = match prepare(dir, how) {
        Ok(p) => p,
        Err(e) => return fail(e),
    };
    let mut runs = Vec::new();
    if let Some(programs_dir) = programs_dir {
        // The programs use their process's device 0: make it the device the cases run on.
        let env = vec![("CUDA_VISIBLE_DEVICES".to_owned(), devices[0].uuid.clone())];
        for program in &harness::claims::programs::PROGRAMS {
            let run = harness::claims::programs::run(programs_dir, program, program_deadline, &env);
            eprintln!("===== {} ({:.1} s)", run.title(), run.wall_ms as f64 / 1000.0);
            eprint!("{}", run.output);
            if let Some(e) = &run.error {
                eprintln!("({e})");
            }
            runs.push(run);
        }
    }
    let selected: Vec<&Case> = cases.iter().filter(|c| harness::claims::reads_case(&c.id)).collect();
    eprintln!("===== {} cases (performance/ and the cases the claims read)", selected.len());
    let started_at = now_rfc3339();
    let provenance = Provenance::new(&devices[0], BUILD_COMMIT, started_at.clone());
    let path = outputs.report.clone().unwrap_or_else(|| {
        let default = default_report_path(&provenance);
        default.with_file_name(format!("seeds-{}", default.file_name().unwrap_or_default().to_string_lossy()))
    });
    let header = ReportHeader {
        commit: BUILD_COMMIT.to_owned(),
        started_at,
        filter: "seeds".to_owned(),
        shard: None,
        baseline: None,
        kernel_image: cuda_conformance::kernel_image(),
    };
    let start = std::time::Instant::now();
    let mut report = runner::run_to_report(&selected, &devices, &opts, &header, Some(&path), |result, _| {
        eprintln!("{:<16} {}", result.outcome(), result.id);
    });
    report.seeds = Some(harness::claims::evaluate(&report.cases, &runs, &report.provenance));
    report.wall_ms = start.elapsed().as_millis() as u64;
    report.complete = true;
    emit(&report.summary_table());
    if let Err(e) = report.write(&path) {
        return fail(format!("cannot write the report to {}: {e}", path.display()));
    }
    eprintln!("report: {}", path.display());
    if let Some(html) = &outputs.html {
        if let Err(e) = harness::record::write_atomic(html, report.html().as_bytes()) {
            return fail(format!("cannot write {}: {e}", html.display()));
        }
        eprintln!("html: {}", html.display());
    }
    if let Some(folder) = &outputs.svg {
        if let Err(e) = write_timelines(&report, None, folder) {
            return fail(e);
        }
    }
    // Claims are quality verdicts: only a case that failed (its data was wrong) makes the exit status 1.
    if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// `timeline REPORT --out DIR`.
fn timelines(report: &Path, filter: Option<&str>, out: &Path) -> ExitCode {
    match Report::read(report).and_then(|r| write_timelines(&r, filter, out)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => fail(e),
    }
}

/// One SVG per case of `report` with a timeline (whose id contains `filter`) into `folder`.
fn write_timelines(report: &Report, filter: Option<&str>, folder: &Path) -> Result<(), String> {
    let mut written = 0;
    for (id, timeline) in report.timelines().filter(|(id, _)| filter.is_none_or(|f| id.contains(f))) {
        let path = folder.join(harness::report::timeline::file_name(id));
        harness::record::write_atomic(&path, harness::report::timeline::svg(id, timeline).as_bytes())
            .map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
        written += 1;
    }
    eprintln!("{written} timeline(s) in {}", folder.display());
    Ok(())
}

/// Prints `text` on stdout; a closed pipe (`... | head`) is not an error.
fn emit(text: &str) -> ExitCode {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => fail(format!("cannot write to stdout: {e}")),
    }
}

fn fail(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("{message}");
    ExitCode::from(2)
}

fn bless(report: &Path, output: Option<&Path>) -> ExitCode {
    let r = match Report::read(report) {
        Ok(r) => r,
        Err(e) => return fail(e),
    };
    let mut b = match output.filter(|p| p.exists()) {
        Some(p) => match Baseline::read(p) {
            Ok(b) => b,
            Err(e) => return fail(e),
        },
        None => Baseline::default(),
    };
    let key = b.bless(&r);
    let text = b.text();
    match output {
        Some(p) => match harness::record::write_atomic(p, text.as_bytes()) {
            Ok(()) => {
                eprintln!(
                    "blessed [{key}] from {} ({} non-pass cases) into {}",
                    report.display(),
                    b.sections[&key].len(),
                    p.display()
                );
                ExitCode::SUCCESS
            }
            Err(e) => fail(format!("{}: cannot write the baseline: {e}", p.display())),
        },
        None => emit(&text),
    }
}

fn matrix(reports: &[PathBuf], markdown: Option<PathBuf>, json: Option<PathBuf>, html: Option<PathBuf>) -> ExitCode {
    let mut read = Vec::new();
    for p in reports {
        match Report::read(p) {
            Ok(r) => read.push(r),
            Err(e) => return fail(e),
        }
    }
    let m = Matrix::new(&read);
    let outputs = [(markdown.as_ref(), m.markdown()), (json.as_ref(), m.json()), (html.as_ref(), m.html())];
    if outputs.iter().all(|(p, _)| p.is_none()) {
        return emit(&m.markdown());
    }
    for (path, text) in outputs {
        if let Some(p) = path {
            if let Err(e) = harness::record::write_atomic(p, text.as_bytes()) {
                return fail(format!("{}: cannot write: {e}", p.display()));
            }
            eprintln!("wrote {}", p.display());
        }
    }
    ExitCode::SUCCESS
}

/// `fleet`: reads the reports (files, or the *.json files of folders), merges them against the expected tasks and
/// writes the outputs; the exit status is the merge's.
fn fleet_cmd(
    paths: &[PathBuf],
    tasks: Option<String>,
    nodes: Option<String>,
    job: Option<String>,
    baseline: Option<PathBuf>,
    [markdown, json, html]: [Option<PathBuf>; 3],
) -> ExitCode {
    let expected = match (tasks, nodes) {
        (Some(t), _) => fleet::parse_tasks(&t).map(Expected::Tasks),
        (None, Some(n)) => match n.strip_prefix('@') {
            Some(file) => std::fs::read_to_string(file)
                .map_err(|e| format!("--nodes @{file}: cannot read it: {e}"))
                .and_then(|text| fleet::parse_nodes(&text)),
            None => fleet::parse_nodes(&n),
        }
        .map(Expected::Nodes),
        (None, None) => Ok(Expected::Seen),
    };
    let expected = match expected {
        Ok(e) => e,
        Err(e) => return fail(e),
    };
    let reference = match &baseline {
        Some(p) => match Baseline::read(p) {
            Ok(b) => Reference::Baseline { name: p.display().to_string(), baseline: b },
            Err(e) => return fail(e),
        },
        None => Reference::Majority,
    };
    let mut inputs = Vec::new();
    for p in paths {
        if p.is_dir() {
            let listing = std::fs::read_dir(p).map_err(|e| format!("{}: cannot list the folder: {e}", p.display()));
            let mut files: Vec<PathBuf> = match listing {
                Ok(entries) => entries.filter_map(|e| Some(e.ok()?.path())).collect(),
                Err(e) => return fail(e),
            };
            files.retain(|f| {
                let name = f.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                name.ends_with(".json") && !name.starts_with('.') && f.is_file()
            });
            files.sort();
            inputs.extend(files.into_iter().map(|f| (f.display().to_string(), Report::read(&f))));
        } else {
            inputs.push((p.display().to_string(), Report::read(p)));
        }
    }
    let merged = Fleet::merge(inputs, expected, &reference, job.as_deref());
    let outputs =
        [(markdown.as_ref(), merged.markdown()), (json.as_ref(), merged.json()), (html.as_ref(), merged.matrix.html())];
    if outputs.iter().all(|(p, _)| p.is_none()) {
        emit(&merged.markdown());
    }
    for (path, text) in outputs {
        if let Some(p) = path {
            if let Err(e) = harness::record::write_atomic(p, text.as_bytes()) {
                return fail(format!("{}: cannot write: {e}", p.display()));
            }
            eprintln!("wrote {}", p.display());
        }
    }
    eprintln!("{}", merged.headline());
    ExitCode::from(merged.exit_status)
}

/// The devices `how` names (probed), the options it gives and the shard; or why not.
type Prepared = (Vec<gpu::DeviceInfo>, RunOptions, Option<(usize, usize)>);

fn prepare(dir: &Path, how: &RunArgs) -> Result<Prepared, String> {
    let shard = how.shard.as_deref().map(parse_shard).transpose()?;
    let mut opts = RunOptions::new(dir.to_path_buf());
    opts.case_deadline = Duration::from_secs(how.deadline);
    opts.gate_delay = Duration::from_millis(how.gate_delay);
    opts.reruns = how.reruns;
    opts.process_per_case = how.isolate;
    // Mock child mode (harness::runner::mock): no GPU; demos and the CI browser test make reports this way.
    if let Ok(spec) = std::env::var(runner::mock::MOCK_ENV) {
        opts.mock = Some(spec);
        let devices = parse_devices(&how.devices, 2)?
            .into_iter()
            .map(|o| harness::device::gpu::DeviceInfo {
                ordinal: o,
                uuid: format!("GPU-mock-{o}"),
                ..runner::mock_device()
            })
            .collect::<Vec<_>>();
        opts.restrict_visibility = devices.len() > 1;
        return Ok((devices, opts, shard));
    }
    let count = gpu::probe(0).map(|d| d.device_count as usize).map_err(|e| format!("cannot run the suite: {e}"))?;
    let ordinals = parse_devices(&how.devices, count)?;
    let devices = ordinals
        .iter()
        .map(|&o| gpu::probe(o).map_err(|e| format!("cannot run the suite on device {o}: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    // A single device as given keeps the environment's visibility; several get one GPU each.
    opts.restrict_visibility = devices.len() > 1;
    Ok((devices, opts, shard))
}

#[allow(clippy::too_many_arguments)]
fn run(
    cases: Result<Vec<Case>, String>,
    dir: &Path,
    filter: Option<String>,
    how: &RunArgs,
    report_path: Option<PathBuf>,
    junit: Option<PathBuf>,
    baseline: Option<PathBuf>,
    with_figures: bool,
) -> ExitCode {
    let started_at = now_rfc3339();
    let start = std::time::Instant::now();
    let tier = how.tier.tier();
    // Whatever stops the run before its first case still leaves a report, so that a fleet merge can tell a task
    // that could not run from one that never ran.
    let could_not_run = |reason: String, device: Option<&gpu::DeviceInfo>| {
        let mut provenance = match device {
            Some(d) => Provenance::new(d, BUILD_COMMIT, started_at.clone()),
            None => Provenance::without_device(BUILD_COMMIT, started_at.clone()),
        };
        provenance.kernel_image = cuda_conformance::kernel_image();
        let path = report_path.clone().unwrap_or_else(|| could_not_run_path(&provenance));
        let mut report = Report::could_not_run(
            provenance,
            filter.clone().unwrap_or_default(),
            start.elapsed().as_millis() as u64,
            reason.clone(),
        );
        report.tier = Some(tier.word().to_owned());
        eprintln!("{reason}");
        match report.write(&path) {
            Ok(()) => eprintln!("report (could not run): {}", path.display()),
            Err(e) => eprintln!("cannot write the report to {}: {e}", path.display()),
        }
        if let Some(j) = &junit {
            if let Err(e) = harness::record::write_atomic(j, report.junit().as_bytes()) {
                eprintln!("cannot write the JUnit report to {}: {e}", j.display());
            }
        }
        ExitCode::from(2)
    };
    let cases = match cases {
        Ok(cases) => cases,
        Err(e) => return could_not_run(format!("cannot run the suite: {e}"), None),
    };
    let (devices, mut opts, shard) = match prepare(dir, how) {
        Ok(p) => p,
        Err(e) => return could_not_run(e, None),
    };
    let provenance = Provenance::new(&devices[0], BUILD_COMMIT, started_at.clone());
    if let Some(path) = &baseline {
        let section = Baseline::read(path).and_then(|b| b.section(&Key::of(&provenance)).cloned());
        match section {
            Ok(section) => opts.baseline = Some(section),
            Err(e) => return could_not_run(format!("{}: {e}", path.display()), Some(&devices[0])),
        }
    }
    let selected = select_tier(&cases, tier, filter.as_deref(), shard);
    let names: Vec<String> = devices.iter().map(|d| format!("{} {} ({})", d.ordinal, d.name, d.uuid)).collect();
    let d = &devices[0];
    eprintln!(
        "{} cases on {}, driver {}, runtime {}; gate delay {} ms, {} re-run(s), {}",
        selected.len(),
        names.join(" + "),
        gpu::version_string(d.driver_version),
        gpu::version_string(d.runtime_version),
        how.gate_delay.min(300),
        how.reruns,
        if how.isolate { "one process per case" } else { "worker processes" }
    );
    if let Some(reported) = gpu::reported_driver_version() {
        eprintln!(
            "{}: acting on driver {} (the driver reports {}); runtime calls: {}",
            gpu::ASSUME_DRIVER_VAR,
            gpu::version_string(d.driver_version),
            gpu::version_string(reported),
            cuda_sys::compat::call_forms()
        );
    }
    if gpu::launch_blocking() {
        eprintln!("warning: CUDA_LAUNCH_BLOCKING=1 makes every launch synchronous; cases with gates are not supported");
    }
    let bar = ProgressBar::new(selected.len() as u64);
    bar.set_style(
        ProgressStyle::with_template("{bar:40} {pos}/{len} {elapsed_precise} {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    let path = report_path.clone().unwrap_or_else(|| default_report_path(&provenance));
    // An unfinished report before the first case: a task killed in it (a hang past the scheduler's time limit) is
    // then `incomplete` in a fleet merge, not missing. The runner rewrites it after every case.
    let mut started = Report::new(provenance.clone(), filter.clone().unwrap_or_default(), 0, Vec::new());
    started.tier = Some(tier.word().to_owned());
    if let Err(e) = started.write(&path) {
        return could_not_run(format!("cannot write the report to {}: {e}", path.display()), Some(&devices[0]));
    }
    let header = ReportHeader {
        commit: BUILD_COMMIT.to_owned(),
        started_at,
        filter: filter.clone().unwrap_or_default(),
        shard: how.shard.clone(),
        baseline: baseline.as_ref().map(|p| p.display().to_string()),
        kernel_image: cuda_conformance::kernel_image(),
    };
    let mut report = runner::run_to_report(&selected, &devices, &opts, &header, Some(&path), |result, error| {
        bar.set_message(result.id.clone());
        if result.verdict.kind.is_failure() || result.verdict.kind == harness::record::verdict::VerdictKind::Flake {
            bar.println(format!("{} {}", result.verdict.kind, result.id));
        }
        if let Some(e) = error {
            bar.println(format!("cannot write the report to {}: {e}", path.display()));
        }
        bar.inc(1);
    });
    bar.finish_and_clear();
    // The figures come after the cases (whose report is already written), in worker processes of their own: they
    // are recorded, never asserted, so they change neither a verdict nor the exit status.
    let figure_filter = filter.as_deref().filter(|f| !f.is_empty());
    let with_figures = with_figures && tier == Tier::Full;
    report.figures = (with_figures && opts.mock.is_none() && shard.is_none_or(|(i, _)| i == 1))
        .then(|| measure_figures(&devices[0], figure_filter, opts.case_deadline))
        .filter(|staging| !staging.is_empty())
        .map(|staging| Figures { staging });
    // The claims, from whatever performance cases ran (`seeds` adds the seeds' own programs beside them).
    if report.cases.iter().any(|c| c.id.starts_with(harness::claims::AREA)) {
        report.seeds = Some(harness::claims::evaluate(&report.cases, &[], &report.provenance));
    }
    report.wall_ms = start.elapsed().as_millis() as u64;
    report.complete = true;
    report.tier = Some(tier.word().to_owned());
    emit(&report.summary_table());
    if let Err(e) = report.write(&path) {
        return fail(format!("cannot write the report to {}: {e}", path.display()));
    }
    eprintln!("report: {} ({:.1} s)", path.display(), report.wall_ms as f64 / 1000.0);
    if let Some(j) = junit {
        if let Err(e) = harness::record::write_atomic(&j, report.junit().as_bytes()) {
            return fail(format!("cannot write the JUnit report to {}: {e}", j.display()));
        }
        eprintln!("junit: {}", j.display());
    }
    if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn bench_cmd(
    cases: &[Case],
    dir: &Path,
    filter: Option<String>,
    how: &RunArgs,
    modes: &str,
    json: Option<PathBuf>,
    reports: Option<PathBuf>,
) -> ExitCode {
    let (devices, opts, shard) = match prepare(dir, how) {
        Ok(p) => p,
        Err(e) => return fail(e),
    };
    let mut list = Vec::new();
    for word in modes.split(',').map(str::trim) {
        match Mode::from_word(word) {
            Some(Mode::WorkersAllDevices) if devices.len() < 2 => {
                eprintln!("workers-all-devices skipped: --devices gives one GPU");
            }
            Some(m) => list.push(m),
            None => {
                let known: Vec<&str> = Mode::ALL.iter().map(|m| m.word()).collect();
                return fail(format!("--modes: unknown mode `{word}` (one of {})", known.join(", ")));
            }
        }
    }
    let selected = select_tier(cases, how.tier.tier(), filter.as_deref(), shard);
    let results = bench::bench(&selected, &devices, &opts, &list, |what| eprintln!("bench: {what} ..."));
    let figures: Vec<bench::Figure> = results.iter().map(|(f, _)| f.clone()).collect();
    if let Some(folder) = &reports {
        let started_at = now_rfc3339();
        for (f, results) in &results {
            let mut r = Report::new(
                Provenance::new(&devices[0], BUILD_COMMIT, started_at.clone()),
                filter.clone().unwrap_or_default(),
                (f.wall_s * 1000.0) as u64,
                results.clone(),
            );
            r.complete = true;
            let p = folder.join(format!("{}.json", f.mode.word()));
            if let Err(e) = r.write(&p) {
                return fail(format!("cannot write {}: {e}", p.display()));
            }
        }
    }
    if let Some(p) = &json {
        let text = serde_json::to_string_pretty(&figures).unwrap_or_default();
        if let Err(e) = harness::record::write_atomic(p, text.as_bytes()) {
            return fail(format!("cannot write {}: {e}", p.display()));
        }
    }
    emit(&bench::table(&figures))
}

/// `measure staging`: the four series, printed as text or JSON.
fn measure_staging(ordinal: i32, deadline: Duration, json: bool, print_cases: bool) -> ExitCode {
    if print_cases {
        for series in staging::Series::ALL {
            println!("{}", staging::case_text(series, SMALLEST));
        }
        return ExitCode::SUCCESS;
    }
    let device = match gpu::probe(ordinal) {
        Ok(device) => device,
        Err(e) => {
            eprintln!("cannot measure: {e}");
            return ExitCode::from(2);
        }
    };
    let figures = Figures { staging: measure_figures(&device, None, deadline) };
    if json {
        println!("{}", serde_json::to_string_pretty(&figures).unwrap_or_default());
    } else {
        print!("{}", figures.console());
    }
    ExitCode::SUCCESS
}

/// The staging series that `filter` selects, measured with a spinner naming the point being measured.
fn measure_figures(device: &gpu::DeviceInfo, filter: Option<&str>, deadline: Duration) -> Vec<SeriesFigure> {
    let series = staging::select(filter);
    if series.is_empty() {
        return Vec::new();
    }
    let spinner = ProgressBar::new_spinner();
    spinner.enable_steady_tick(Duration::from_millis(200));
    let figures = staging::measure(&series, device, deadline, &mut |point| spinner.set_message(point.to_owned()));
    spinner.finish_and_clear();
    figures
}

/// `reports/could-not-run-<node>-<time>.json`: such a report has no GPU to name it by.
fn could_not_run_path(p: &Provenance) -> PathBuf {
    let node: String = p.node.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    let stamp: String = p.started_at.chars().filter(|c| c.is_ascii_digit()).take(14).collect();
    PathBuf::from("reports").join(format!("could-not-run-{node}-{stamp}.json"))
}

fn default_report_path(p: &Provenance) -> PathBuf {
    let gpu: String = p.gpu_name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    let stamp: String = p.started_at.chars().filter(|c| c.is_ascii_digit()).take(14).collect();
    PathBuf::from("reports").join(format!("{gpu}-driver-{}-{stamp}.json", p.driver_version))
}

fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|_| "unknown".into())
}
