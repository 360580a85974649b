//! `cuda-conformance`: runs the conformance cases on a GPU and writes a report per host.
//!
//! ```text
//! cuda-conformance run [FILTER]      run the suite (cases whose id contains FILTER) and figures, write a JSON report
//! cuda-conformance measure staging   measure the pageable staging threshold (a figure: recorded, not asserted)
//! cuda-conformance check             parse, validate and lint every case file (no GPU needed)
//! cuda-conformance list [FILTER]     list case ids with their rules
//! cuda-conformance summary REPORT    a report's Markdown summary
//! cuda-conformance info              the device and build this binary would report
//! ```

use clap::{Parser, Subcommand};
use cuda_conformance::{cases_dir, kernel_table, BUILD_COMMIT};
use harness::case::ast::Case;
use harness::figures::{self, staging, Figures};
use harness::gpu;
use harness::report::{Provenance, Report};
use harness::runner::{self, RunOptions};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

#[derive(Parser)]
#[command(version, about = "Conformance suite for the CUDA runtime: what CUDA promises and what this GPU does")]
struct Cli {
    /// Folder of *.case files (default: $CUDA_CONFORMANCE_CASES, cases/ beside the binary, or the source tree's).
    #[arg(long, global = true)]
    cases: Option<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run the cases whose id contains FILTER (all without one), one child process per case.
    Run {
        filter: Option<String>,
        /// CUDA device ordinal.
        #[arg(long, default_value_t = 0)]
        device: i32,
        /// Where to write the JSON report (default: reports/<gpu>-<driver>-<time>.json).
        #[arg(long)]
        report: Option<PathBuf>,
        /// Seconds after which a case's process is killed and the case is a timeout.
        #[arg(long, default_value_t = 60)]
        deadline: u64,
        /// Skip the figures (measurements recorded, never asserted) that run after the cases.
        #[arg(long)]
        no_figures: bool,
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
    /// Parse, validate and lint every case file; print diagnostics as file:line:col and weak checks as
    /// file:line: case ID: warning (exit 1 on any warning, 2 on invalid files).
    Check,
    /// List the case ids (and rules) that FILTER selects.
    List { filter: Option<String> },
    /// Print a report's Markdown summary (provenance, verdicts by area, variants seen, failures).
    Summary { report: PathBuf },
    /// Print the provenance a run on this device would record.
    Info {
        #[arg(long, default_value_t = 0)]
        device: i32,
        /// Print only the kernel image (compiler, PTX ISA, architectures); needs no GPU.
        #[arg(long)]
        kernels: bool,
    },
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
        harness::suite::load_dir(&dir).map_err(|diagnostics| {
            for d in &diagnostics {
                eprintln!("{d}");
            }
            eprintln!("{} problem(s) in the case files under {}", diagnostics.len(), dir.display());
            ExitCode::from(2)
        })
    };
    let cases = match cli.command {
        Command::Summary { .. } | Command::Info { .. } | Command::Measure { .. } => Vec::new(),
        _ => match load() {
            Ok(cases) => cases,
            Err(code) => return code,
        },
    };
    match cli.command {
        Command::Check => {
            // Valid cases can still check less than they say: the weak-case lint (harness::case::lint) fails CI.
            let warnings = harness::case::lint::lint_all(&cases);
            for w in &warnings {
                eprintln!("{w}");
            }
            if warnings.is_empty() {
                println!("{} cases in {}: all valid, no weak checks", cases.len(), dir.display());
                ExitCode::SUCCESS
            } else {
                println!("{} cases in {}: all valid, {} weak check(s)", cases.len(), dir.display(), warnings.len());
                ExitCode::FAILURE
            }
        }
        Command::List { filter } => {
            for case in select(&cases, filter.as_deref()) {
                println!("{:<60} {}", case.id, case.rule);
            }
            ExitCode::SUCCESS
        }
        Command::Summary { report } => {
            let read = std::fs::read_to_string(&report).map_err(|e| e.to_string());
            match read.and_then(|text| serde_json::from_str::<Report>(&text).map_err(|e| e.to_string())) {
                Ok(r) => {
                    print!("{}", r.markdown());
                    ExitCode::SUCCESS
                }
                Err(e) => {
                    eprintln!("cannot read the report {}: {e}", report.display());
                    ExitCode::from(2)
                }
            }
        }
        Command::Info { kernels: true, .. } => {
            let k = cuda_conformance::kernel_image();
            println!("{}, PTX ISA {}, {}", k.compiler, k.ptx_isa, k.architectures);
            ExitCode::SUCCESS
        }
        Command::Info { device, kernels: false } => match gpu::probe(device) {
            Ok(info) => {
                let mut provenance = Provenance::new(&info, BUILD_COMMIT, now_rfc3339());
                provenance.kernel_image = cuda_conformance::kernel_image();
                println!("{}", serde_json::to_string_pretty(&provenance).unwrap_or_default());
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("{e}");
                ExitCode::from(2)
            }
        },
        Command::Run { filter, device, report, deadline, no_figures } => {
            let opts = RunOptions { cases_dir: dir.clone(), device, case_deadline: Duration::from_secs(deadline) };
            run(&cases, filter, report, &opts, !no_figures)
        }
        Command::Measure { figure: FigureName::Staging, device, deadline, json, print_cases } => {
            measure_staging(device, Duration::from_secs(deadline), json, print_cases)
        }
    }
}

/// `measure staging`: the four series, printed as text or JSON.
fn measure_staging(ordinal: i32, deadline: Duration, json: bool, print_cases: bool) -> ExitCode {
    if print_cases {
        for series in staging::Series::ALL {
            println!("{}", staging::case_text(series, staging::SMALLEST));
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
fn measure_figures(device: &gpu::DeviceInfo, filter: Option<&str>, deadline: Duration) -> Vec<staging::SeriesFigure> {
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

fn select<'a>(cases: &'a [Case], filter: Option<&str>) -> Vec<&'a Case> {
    cases.iter().filter(|c| filter.is_none_or(|f| c.id.contains(f))).collect()
}

fn run(
    cases: &[Case],
    filter: Option<String>,
    report_path: Option<PathBuf>,
    opts: &RunOptions,
    with_figures: bool,
) -> ExitCode {
    let device = match gpu::probe(opts.device) {
        Ok(device) => device,
        Err(e) => {
            eprintln!("cannot run the suite: {e}");
            return ExitCode::from(2);
        }
    };
    let started_at = now_rfc3339();
    let selected = select(cases, filter.as_deref());
    eprintln!(
        "{} cases on {} ({}), driver {}, runtime {}",
        selected.len(),
        device.name,
        device.uuid,
        gpu::version_string(device.driver_version),
        gpu::version_string(device.runtime_version)
    );
    if let Some(reported) = gpu::reported_driver_version() {
        eprintln!(
            "{}: acting on driver {} (the driver reports {}); runtime calls: {}",
            gpu::ASSUME_DRIVER_VAR,
            gpu::version_string(device.driver_version),
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
    let start = Instant::now();
    let mut provenance = Provenance::new(&device, BUILD_COMMIT, started_at);
    provenance.kernel_image = cuda_conformance::kernel_image();
    let filter = filter.unwrap_or_default();
    let path = report_path.unwrap_or_else(|| default_report_path(&provenance));
    let mut results = Vec::with_capacity(selected.len());
    for case in selected {
        bar.set_message(case.id.clone());
        let result = runner::run_isolated(case, &device, opts);
        if result.verdict.kind.is_failure() {
            bar.println(format!("{} {}", result.verdict.kind, result.id));
        }
        results.push(result);
        bar.inc(1);
        // Rewrite the report after every case, so a run killed half-way still leaves what it had obtained.
        let partial =
            Report::new(provenance.clone(), filter.clone(), start.elapsed().as_millis() as u64, results.clone());
        if let Err(e) = write_report(&partial, &path) {
            bar.println(format!("cannot write the report to {}: {e}", path.display()));
        }
    }
    bar.finish_and_clear();
    // The figures come after the cases (whose report is already written), in worker processes of their own: they
    // are recorded, never asserted, so they change neither a verdict nor the exit status.
    let figures = with_figures
        .then(|| measure_figures(&device, Some(filter.as_str()).filter(|f| !f.is_empty()), opts.case_deadline))
        .filter(|staging| !staging.is_empty())
        .map(|staging| Figures { staging });
    let wall_ms = start.elapsed().as_millis() as u64;
    let mut report = Report::new(provenance, filter, wall_ms, results);
    report.figures = figures;
    report.complete = true;
    println!("{}", report.summary_table());
    match write_report(&report, &path) {
        Ok(()) => eprintln!("report: {} ({:.1} s)", path.display(), wall_ms as f64 / 1000.0),
        Err(e) => {
            eprintln!("cannot write the report to {}: {e}", path.display());
            return ExitCode::from(2);
        }
    }
    if report.passed() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

fn default_report_path(p: &Provenance) -> PathBuf {
    let gpu: String = p.gpu_name.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    let stamp: String = p.started_at.chars().filter(|c| c.is_ascii_digit()).take(14).collect();
    PathBuf::from("reports").join(format!("{gpu}-driver-{}-{stamp}.json", p.driver_version))
}

fn write_report(report: &Report, path: &std::path::Path) -> std::io::Result<()> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        std::fs::create_dir_all(parent)?;
    }
    let json = serde_json::to_string_pretty(report).map_err(std::io::Error::other)?;
    std::fs::write(path, json)
}

fn now_rfc3339() -> String {
    time::OffsetDateTime::now_utc()
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_else(|_| "unknown".into())
}
