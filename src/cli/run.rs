//! `run` and `bench`, and how the cases run (the flags both share with `seeds`).

use super::output::emit;
use super::status::{Outcome, Status};
use super::{cases, now_rfc3339};
use cuda_conformance::BUILD_COMMIT;
use harness::case::ast::Case;
use harness::device::gpu::{self, DeviceInfo};
use harness::figures::staging;
use harness::record::figures::Figures;
use harness::record::{Provenance, Report, Traces};
use harness::report::baseline::{Baseline, Key};
use harness::report::expectations::Expectations;
use harness::runner::bench::{self, Mode};
use harness::runner::select::{parse_devices, parse_shard, select_tier, Tier};
use harness::runner::session::{Outputs, Purpose, ReportHeader, Session};
use harness::runner::{self, Executors, RunOptions};
use indicatif::{ProgressBar, ProgressStyle};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How the cases run (shared by `run`, `bench` and `seeds`).
#[derive(clap::Args, Clone)]
pub struct RunArgs {
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
    /// Run the workers under compute-sanitizer with this tool (memcheck, racecheck, synccheck, initcheck): each
    /// error is attributed to its case, and one the case does not provoke on purpose fails it.
    #[arg(long)]
    sanitizer: Option<String>,
    /// Which cases keep their whole trace in the report: `non-pass` (a passing case keeps its verdict, measures
    /// and timeline: what every command reads) or `all`.
    #[arg(long, value_enum, default_value_t = TraceKeep::NonPass)]
    trace: TraceKeep,
    /// How the workers' host threads wait for the device: `block` (cudaDeviceScheduleBlockingSync: woken when the
    /// work completes, quick on a busy host) or `auto` (cudart's default: spin while the process has fewer contexts
    /// than the host has cores).
    #[arg(long, value_enum, default_value_t = HostWaitsName::Block)]
    host_waits: HostWaitsName,
    /// With several `--devices`: which devices' lanes start processes ahead for the cases that need a process of
    /// their own and run them, between batch cases: `every-device` (each lane as its pool empties) or
    /// `first-device` (the first lane only).
    #[arg(long, value_enum, default_value_t = OwnProcessesName::EveryDevice)]
    own_processes: OwnProcessesName,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum OwnProcessesName {
    FirstDevice,
    EveryDevice,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum HostWaitsName {
    Block,
    Auto,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum TraceKeep {
    NonPass,
    All,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum TierName {
    Smoke,
    Full,
}

impl TierName {
    pub fn tier(self) -> Tier {
        match self {
            TierName::Smoke => Tier::Smoke,
            TierName::Full => Tier::Full,
        }
    }
}

/// The devices a run uses (probed), its options and its shard.
pub struct Prepared {
    pub devices: Vec<DeviceInfo>,
    pub opts: RunOptions,
    pub shard: Option<(usize, usize)>,
}

impl RunArgs {
    /// The devices these flags name (probed), the options they give and the shard; or why not.
    pub fn prepare(&self) -> Result<Prepared, String> {
        let shard = self.shard.as_deref().map(parse_shard).transpose()?;
        let mut opts = RunOptions {
            case_deadline: Duration::from_secs(self.deadline),
            gate_delay: Duration::from_millis(self.gate_delay),
            reruns: self.reruns,
            process_per_case: self.isolate,
            traces: match self.trace {
                TraceKeep::All => Traces::All,
                TraceKeep::NonPass => Traces::NonPass,
            },
            host_waits: match self.host_waits {
                HostWaitsName::Block => runner::HostWaits::Block,
                HostWaitsName::Auto => runner::HostWaits::Auto,
            },
            own_processes: match self.own_processes {
                OwnProcessesName::FirstDevice => runner::OwnProcessLanes::FirstDevice,
                OwnProcessesName::EveryDevice => runner::OwnProcessLanes::EveryDevice,
            },
            ..RunOptions::default()
        };
        if let Some(tool) = &self.sanitizer {
            opts.sanitizer = Some(runner::sanitizer::SanitizerSpec::find(tool)?);
        }
        // Mock child mode (harness::runner::mock): no GPU; demos and the CI browser test make reports this way.
        if let Ok(spec) = std::env::var(runner::mock::MOCK_ENV) {
            opts.mock = Some(spec);
            // Two mock GPUs, or as many as CUDA_CONFORMANCE_MOCK_DEVICES says (to see the schedule of 4 or 8).
            let count = std::env::var(runner::mock::MOCK_DEVICES_ENV).ok().and_then(|n| n.parse().ok()).unwrap_or(2);
            let devices = parse_devices(&self.devices, count)?
                .into_iter()
                .map(|o| DeviceInfo { ordinal: o, uuid: format!("GPU-mock-{o}"), ..runner::mock::mock_device() })
                .collect::<Vec<_>>();
            opts.restrict_visibility = devices.len() > 1;
            return Ok(Prepared { devices, opts, shard });
        }
        let count = gpu::probe(0).map(|d| d.device_count as usize).map_err(|e| format!("cannot run the suite: {e}"))?;
        let ordinals = parse_devices(&self.devices, count)?;
        let devices = ordinals
            .iter()
            .map(|&o| gpu::probe(o).map_err(|e| format!("cannot run the suite on device {o}: {e}")))
            .collect::<Result<Vec<_>, _>>()?;
        // Several devices get one GPU each; so does a single one on a host with more (a process that sees every
        // GPU initialises them all: on a 4 x H100 host each own-process case and IPC peer paid for it). A single
        // device of a host with one (or a MIG instance) keeps the environment's visibility.
        opts.restrict_visibility = devices.len() > 1 || devices.iter().any(|d| d.device_count > 1);
        Ok(Prepared { devices, opts, shard })
    }
}

/// The cases under `dir` for a session: invalid files are a could-not-run report there, whose reason names the
/// first diagnostic (all of them are printed).
pub fn load_for_session(dir: &Path) -> Result<Vec<Case>, String> {
    harness::case::suite::load_dir(dir).map_err(|diagnostics| {
        for d in &diagnostics {
            eprintln!("{d}");
        }
        let first = diagnostics.first().map(|d| format!(": {d}")).unwrap_or_default();
        format!(
            "cannot run the suite: {} problem(s) in the case files under {}{first}",
            diagnostics.len(),
            dir.display()
        )
    })
}

#[derive(clap::Args)]
pub struct RunCmd {
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
    /// An expectation file: cases to skip, known flakes and expected failures, each line with a reason and optional
    /// GPU, driver and runtime globs (`skip ipc/* gpu=*A100* hangs driver 535 (bug 12)`; see docs/running.md).
    #[arg(long)]
    expectations: Option<PathBuf>,
    /// Skip the figures (measurements recorded, never asserted) that run after the cases.
    #[arg(long)]
    no_figures: bool,
    /// Which executor runs the cases: `rust` (the harness's, in worker processes), `cxx` (each case's compiled C++
    /// reproducer, one process per case, at the written gate delays), or `both` (each case by each, the two
    /// compared: a disagreement is listed and makes the exit status 3 when no case failed).
    #[arg(long, value_enum, default_value_t = ExecutorName::Rust)]
    executor: ExecutorName,
    /// The compiled reproducers of `--executor cxx|both` (default: `repro/bin` in the folder above the binary's,
    /// where `scripts/bundle.sh` puts them).
    #[arg(long)]
    repro_dir: Option<PathBuf>,
}

#[derive(Clone, Copy, clap::ValueEnum)]
pub enum ExecutorName {
    Rust,
    Cxx,
    Both,
}

impl ExecutorName {
    fn executors(self) -> Executors {
        match self {
            ExecutorName::Rust => Executors::Rust,
            ExecutorName::Cxx => Executors::Cxx,
            ExecutorName::Both => Executors::Both,
        }
    }
}

/// The expectation file at `path`, checked against the suite: a line whose pattern names no case is an error (a
/// stale or mistyped line would otherwise silently expect nothing).
pub fn read_expectations(path: &Path, cases: &[Case]) -> Result<Expectations, String> {
    let expectations = Expectations::read(path)?;
    let unmatched = expectations.unmatched(cases.iter().map(|c| c.id.as_str()));
    if !unmatched.is_empty() {
        return Err(unmatched.join("; "));
    }
    Ok(expectations)
}

/// The bundle's compiled reproducers: `repro/bin` in the folder above the binary's (`bin/`).
fn default_repro_dir() -> Result<PathBuf, String> {
    let exe = std::env::current_exe().map_err(|e| format!("--repro-dir: cannot find the current executable: {e}"))?;
    let root = exe.parent().and_then(Path::parent).ok_or("--repro-dir: the executable has no parent folder")?;
    Ok(root.join("repro").join("bin"))
}

impl RunCmd {
    pub fn exec(self, dir: &Path) -> Outcome {
        // Loaded before the session's clock starts, as the report's wall time has always counted from after it.
        let cases = load_for_session(dir);
        let tier = self.how.tier.tier();
        let header = ReportHeader {
            commit: BUILD_COMMIT.to_owned(),
            started_at: now_rfc3339(),
            filter: self.filter.clone().unwrap_or_default(),
            shard: self.how.shard.clone(),
            baseline: self.baseline.as_ref().map(|p| p.display().to_string()),
            kernel_image: cuda_conformance::kernel_image(),
        };
        let outputs = Outputs { report: self.report.clone(), junit: self.junit.clone(), ..Outputs::default() };
        let session = Session::new(Purpose::Cases(tier), header, outputs);
        let could_not_run = |reason: String, device: Option<&DeviceInfo>| {
            session.could_not_run(&reason, device);
            Ok(Status::Unable)
        };
        let cases = match cases {
            Ok(cases) => cases,
            Err(e) => return could_not_run(e, None),
        };
        let Prepared { devices, mut opts, shard } = match self.how.prepare() {
            Ok(p) => p,
            Err(e) => return could_not_run(e, None),
        };
        if let Err(e) = self.choose_executors(&mut opts) {
            return could_not_run(e, Some(&devices[0]));
        }
        let d = &devices[0];
        if let Some(path) = &self.baseline {
            let provenance = Provenance::new(d, BUILD_COMMIT, session.header().started_at.clone());
            match Baseline::read(path).and_then(|b| b.section(&Key::of(&provenance)).cloned()) {
                Ok(section) => opts.baseline = Some(section),
                Err(e) => return could_not_run(format!("{}: {e}", path.display()), Some(d)),
            }
        }
        if let Some(path) = &self.expectations {
            match read_expectations(path, &cases) {
                Ok(expectations) => opts.expectations = Some(expectations),
                Err(e) => return could_not_run(e, Some(d)),
            }
        }
        let selected = select_tier(&cases, tier, self.filter.as_deref(), shard);
        self.announce(selected.len(), &devices);
        let bar = ProgressBar::new(selected.len() as u64);
        bar.set_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} {elapsed_precise} {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        let path = match session.begin(d) {
            Ok(path) => path,
            Err(e) => return could_not_run(e, Some(d)),
        };
        // The figures (recorded, never asserted: they change neither a verdict nor the exit status) are measured
        // in worker processes of their own on the measuring lane, as a measurement: on several GPUs while the
        // other lanes run cases, on one after the cases; the lane starts their processes ahead.
        let figures_out: std::sync::Mutex<Option<(Vec<harness::record::figures::SeriesFigure>, f64)>> =
            std::sync::Mutex::new(None);
        let measurement: Option<harness::runner::suite::Measurement> =
            session.wants_figures(!self.no_figures, &opts, shard).then(|| {
                let series = staging::select(self.filter.as_deref().filter(|f| !f.is_empty()));
                let to_start = series.clone();
                let (deadline, out) = (opts.case_deadline, &figures_out);
                harness::runner::suite::Measurement {
                    start: Box::new(move |device: &DeviceInfo| staging::start_workers(&to_start, device)),
                    run: Box::new(move |device: &DeviceInfo, workers| {
                        let started = std::time::Instant::now();
                        let staging = staging::measure_with(&series, device, deadline, &mut |_| {}, workers);
                        *out.lock().unwrap_or_else(|p| p.into_inner()) =
                            Some((staging, started.elapsed().as_secs_f64()));
                    }),
                }
            });
        let mut report = session.run_measuring(&selected, &devices, &opts, &path, measurement, |result, error| {
            bar.set_message(result.id.clone());
            if result.verdict.kind.is_failure() || result.verdict.kind == harness::record::verdict::VerdictKind::Flake {
                bar.println(format!("{} {}", result.verdict.kind, result.id));
            }
            for line in result.disagreement_lines() {
                bar.println(format!("  {line}"));
            }
            if let Some(line) = result.reproduce_line_if_failed() {
                bar.println(format!("  {line}"));
            }
            if let Some(e) = error {
                bar.println(format!("cannot write the report to {}: {e}", path.display()));
            }
            bar.inc(1);
        });
        bar.finish_and_clear();
        if let Some((staging, seconds)) = figures_out.into_inner().unwrap_or_else(|p| p.into_inner()) {
            report.figures = (!staging.is_empty()).then_some(Figures { staging });
            if let Some(phases) = report.run.as_mut().and_then(|r| r.phases.as_mut()) {
                phases.figures_s = Some(seconds);
            }
        }
        let report = session.conclude(report, &[]);
        emit(&report.summary_table());
        session.write(&report, &path)?;
        if report.passed() && report.cases.iter().any(|c| c.executors_disagree()) {
            return Ok(Status::Disagreed);
        }
        Ok(Status::failed_if(!report.passed()))
    }

    /// Sets the executors and their reproducers in `opts`; the C++ executor runs the cases at the written delays
    /// (a reproducer has no gate-delay scale) and not under a sanitizer (which wraps the Rust workers).
    fn choose_executors(&self, opts: &mut RunOptions) -> Result<(), String> {
        opts.executors = self.executor.executors();
        if opts.executors == Executors::Rust {
            return Ok(());
        }
        if opts.sanitizer.is_some() {
            return Err(
                "--sanitizer runs the Rust executor's workers under the tool; use it with --executor rust".into()
            );
        }
        let dir = match &self.repro_dir {
            Some(dir) => dir.clone(),
            None => default_repro_dir()?,
        };
        let packed = dir.with_extension("tar.xz");
        if !dir.is_dir() && packed.is_file() {
            let parent = dir.parent().unwrap_or(Path::new("."));
            return Err(format!(
                "--executor {}: the reproducers are packed: unpack them first with `tar -xJf {} -C {}`",
                opts.executors.word(),
                packed.display(),
                parent.display()
            ));
        }
        if !dir.is_dir() {
            return Err(format!(
                "--executor {}: no reproducers in {} (scripts/bundle.sh builds them into the bundle's repro/bin; or                  give --repro-dir)",
                opts.executors.word(),
                dir.display()
            ));
        }
        opts.repro_dir = Some(dir);
        Ok(())
    }

    /// The line that says what runs where, and the warnings about the environment.
    fn announce(&self, cases: usize, devices: &[DeviceInfo]) {
        let names: Vec<String> = devices.iter().map(|d| format!("{} {} ({})", d.ordinal, d.name, d.uuid)).collect();
        let d = &devices[0];
        eprintln!(
            "{} cases on {}, driver {}, runtime {}; gate delay {} ms, {} re-run(s), {}",
            cases,
            names.join(" + "),
            gpu::version_string(d.driver_version),
            gpu::version_string(d.runtime_version),
            if matches!(self.executor, ExecutorName::Cxx) { 300 } else { self.how.gate_delay.min(300) },
            self.how.reruns,
            match (self.executor, self.how.isolate) {
                (ExecutorName::Cxx, _) => "each case's C++ reproducer (at the written delays)",
                (ExecutorName::Both, _) => "worker processes and each case's C++ reproducer, compared",
                (ExecutorName::Rust, true) => "one process per case",
                (ExecutorName::Rust, false) => "worker processes",
            }
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
            eprintln!(
                "warning: CUDA_LAUNCH_BLOCKING=1 makes every launch synchronous; cases with gates are not supported"
            );
        }
        let serialising = harness::device::serialising::detect()
            .or_else(|| self.how.sanitizer.as_ref().map(|t| format!("compute-sanitizer --tool {t} (--sanitizer)")));
        if let Some(tool) = serialising {
            eprintln!("warning: {tool} serialises device work; cases that need asynchrony are not supported");
        }
    }
}

#[derive(clap::Args)]
pub struct BenchCmd {
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
}

impl BenchCmd {
    pub fn exec(self, dir: &Path) -> Outcome {
        let cases = cases::load(dir)?;
        let Prepared { devices, opts, shard } = self.how.prepare()?;
        let mut list = Vec::new();
        for word in self.modes.split(',').map(str::trim) {
            match Mode::from_word(word) {
                Some(Mode::WorkersAllDevices) if devices.len() < 2 => {
                    eprintln!("workers-all-devices skipped: --devices gives one GPU");
                }
                Some(m) => list.push(m),
                None => {
                    let known: Vec<&str> = Mode::ALL.iter().map(|m| m.word()).collect();
                    return Err(format!("--modes: unknown mode `{word}` (one of {})", known.join(", ")));
                }
            }
        }
        let selected = select_tier(&cases, self.how.tier.tier(), self.filter.as_deref(), shard);
        let results = bench::bench(&selected, &devices, &opts, &list, |what| eprintln!("bench: {what} ..."));
        let figures: Vec<bench::Figure> = results.iter().map(|(f, _)| f.clone()).collect();
        if let Some(folder) = &self.reports {
            let started_at = now_rfc3339();
            for (f, results) in &results {
                let mut r = Report::new(
                    Provenance::new(&devices[0], BUILD_COMMIT, started_at.clone()),
                    self.filter.clone().unwrap_or_default(),
                    (f.wall_s * 1000.0) as u64,
                    results.clone(),
                );
                r.complete = true;
                let p = folder.join(format!("{}.json", f.mode.word()));
                r.write(&p).map_err(|e| format!("cannot write {}: {e}", p.display()))?;
            }
        }
        if let Some(p) = &self.json {
            let text = serde_json::to_string_pretty(&figures).unwrap_or_default();
            harness::record::write_atomic(p, text.as_bytes())
                .map_err(|e| format!("cannot write {}: {e}", p.display()))?;
        }
        Ok(emit(&bench::table(&figures)))
    }
}
