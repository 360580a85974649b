//! Every case under `cases/` as one libtest trial named by its id (`cargo test -- capture/` filters), plus one
//! CPU-only trial per case file that parses and validates it, `lint/suite` (the weak-case lint over all of them),
//! the runner's trials in mock child mode (`runner/...`: crash, timeout, dirty context, flakes, gate delays,
//! baselines, expectation files; no GPU needed) and the command line's (`cli/...`).
//!
//! Verdicts map onto libtest: pass, variant and quality-warning pass (their detail is printed); not-supported and
//! skipped are ignored with the reason; fail, crash, timeout and flake fail with the text of
//! `harness::report::trace::failure_text`. With `CUDA_CONFORMANCE_BASELINE=FILE` (a `baseline bless` file, e.g.
//! `baselines/<gpu>_driver-<release>.txt`), the cases are judged against its section for this GPU, driver and
//! runtime: a known failure is expected-fail (a pass for libtest) and an unexpected pass fails. With
//! `CUDA_CONFORMANCE_EXPECTATIONS=FILE` (`harness::report::expectations`), its `skip` lines' cases are ignored with
//! the line, and its `flake` and `fail` lines judge the others (a declared flake passes, printed). The cases run in
//! worker processes of this binary (re-executed), one at a time whatever `--test-threads` says: the legacy stream
//! and the device are process-wide and machine-wide state.
//!
//! cargo-nextest runs one process per trial (docs/running.md#cargo-nextest), so: without a device the GPU trials
//! are ignored *when listed* (`cudaGetDeviceCount`, no context), which nextest reports as skipped where a trial
//! ignored at run time would count as passed; so are the cases whose `requires:` this device does not meet (device
//! 0 probed without a context: too few devices, a no-driver row on a host with a driver), under nextest and for
//! `--list` (plain `cargo test` reports them ignored at run time, with the reason); a process asked for one case
//! (`--exact`) parses only that case's file, and probes device 0 without a context (its worker makes one).
//!
//! With `CUDA_CONFORMANCE_REPORT=FILE`, the run is also a report session (`harness::runner::session`, as in
//! `cuda-conformance run`): FILE gets the report of the case trials that ran, unfinished from the start, or the
//! could-not-run report when there is no GPU or the case files are invalid. Without it `cargo test` writes nothing;
//! `--list` never writes it, and neither does a process under cargo-nextest (each would overwrite it with its one
//! trial: there the record is nextest's JUnit).

mod cli_trials;
mod fleet_trials;
mod runner_trials;

use cuda_conformance::{cases_dir, kernel_table, BUILD_COMMIT};
use harness::case::ast::Case;
use harness::device::gpu::{self, DeviceInfo};
use harness::device::requirements::unmet_requirement;
use harness::record::verdict::VerdictKind;
use harness::record::CaseResult;
use harness::report::baseline::Key;
use harness::report::expectations::{Action, Expectations};
use harness::report::trace::failure_text;
use harness::runner::device_runner::DeviceRunner;
use harness::runner::select::Tier;
use harness::runner::session::{self, Outputs, Purpose, ReportHeader, Session};
use harness::runner::stats::SuiteStats;
use harness::runner::{self, RunOptions};
use libtest_mimic::{Arguments, Completion, Failed, Trial};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

fn main() {
    runner::worker::serve_child_request(kernel_table);
    let args = Arguments::from_args();
    let dir = cases_dir();
    let session = report_session(&args);
    let fixture = Arc::new(runner_trials::Fixture::lazy(&dir));
    let mut trials = validation_trials(&dir);
    trials.extend(runner_trials::trials(&fixture));
    trials.extend(cli_trials::trials(&fixture));
    trials.extend(fleet_trials::trials(&dir));
    // The GPU trials whose results go into the session's report, and where that report is.
    let mut recording: Option<(Arc<Gpu>, PathBuf)> = None;
    match load_cases(&dir, &args) {
        // The validation trials report the diagnostics, and no case can run.
        Err(diagnostics) => {
            if let Some(session) = &session {
                let reason = format!("{} problem(s) in the case files under {}", diagnostics.len(), dir.display());
                session.could_not_run(&format!("cannot run the suite: {reason}"), None);
            }
        }
        Ok(cases) => {
            let expectations = expectations();
            if let (Some(expectations), false) = (&expectations, args.exact && !args.list) {
                // Every case is loaded here (not a one-trial process): a line naming none of them is an error.
                let unmatched = expectations.unmatched(cases.iter().map(|(_, c)| c.id.as_str()));
                if !unmatched.is_empty() {
                    eprintln!("{EXPECTATIONS_VAR}: {}", unmatched.join("; "));
                    std::process::exit(2);
                }
            }
            // Listing, and cargo-nextest (which lists, then runs each trial in a process of its own and counts a
            // trial ignored at run time as passed), decide the requirements when the trials are listed.
            let at_list_time = args.list || under_nextest();
            let gpu = Arc::new(Gpu::new(no_gpu_at_all(), expectations, at_list_time));
            if let Some(reason) = &gpu.absent {
                eprintln!("GPU cases ignored: {reason}");
            }
            if let Some(session) = &session {
                match gpu.device() {
                    Err(reason) => session.could_not_run(&format!("cannot run the suite: {reason}"), None),
                    Ok(device) => match session.begin(device) {
                        Ok(path) => recording = Some((Arc::clone(&gpu), path)),
                        Err(e) => session.could_not_run(&e, Some(device)),
                    },
                }
            }
            let trials_of_cases = cases.into_iter().map(|(i, case)| case_trial(i, case, Arc::clone(&gpu)));
            trials.extend(trials_of_cases);
        }
    }
    let conclusion = libtest_mimic::run(&args, trials);
    if let (Some(session), Some((gpu, path))) = (&session, recording) {
        gpu.write_report(session, &path);
    }
    conclusion.exit();
}

/// Why no GPU trial can run on this machine, asked once per process through `cudaGetDeviceCount` (no context, no
/// device touched): then every GPU trial is *ignored at list time*, so `--list --ignored` names them and
/// cargo-nextest reports them skipped, where a trial that ignored itself at run time would count as passed. `None`
/// under `CUDA_CONFORMANCE_REQUIRE_GPU=1` (the bundle's run-tests.sh): there a missing device fails each trial.
fn no_gpu_at_all() -> Option<String> {
    let reason = gpu::device_count().err()?.to_string();
    (!require_gpu()).then_some(reason)
}

/// The expectation file the test binaries read (what `cuda-conformance run --expectations FILE` reads).
const EXPECTATIONS_VAR: &str = "CUDA_CONFORMANCE_EXPECTATIONS";

/// `$CUDA_CONFORMANCE_EXPECTATIONS`, read once. One that cannot be read or parsed stops the binary (exit 2): running
/// without it would run the cases its owner asked to skip, and fail on the flakes they declared.
fn expectations() -> Option<Expectations> {
    let path = std::env::var_os(EXPECTATIONS_VAR)?;
    match Expectations::read(Path::new(&path)) {
        Ok(expectations) => Some(expectations),
        Err(e) => {
            eprintln!("{EXPECTATIONS_VAR}: {e}");
            std::process::exit(2);
        }
    }
}

fn require_gpu() -> bool {
    std::env::var("CUDA_CONFORMANCE_REQUIRE_GPU").is_ok_and(|v| v == "1")
}

/// The cases this process may run, each with its index in the suite. A process asked for one trial by its exact
/// name (`--exact NAME`, the way cargo-nextest starts one process per trial) parses and validates only that case's
/// file, since a case's area is its file's stem (validation enforces it): it does not pay for all the files. A file
/// with problems falls back to the whole suite, so the diagnostics are those of a full run.
fn load_cases(dir: &Path, args: &Arguments) -> Result<Vec<(usize, Case)>, Vec<harness::case::Diagnostic>> {
    let every_case = || harness::case::suite::load_dir(dir).map(|cases| cases.into_iter().enumerate().collect());
    let Some(name) = args.filter.as_deref().filter(|_| args.exact && !args.list && dir.is_dir()) else {
        return every_case();
    };
    // libtest-mimic lists a case as `[area] area/case`; `--exact` takes it with or without the kind.
    let id = name.strip_prefix('[').and_then(|rest| rest.split_once("] ")).map_or(name, |(_, id)| id);
    let Some((area, _)) = id.split_once('/') else { return Ok(Vec::new()) };
    let file = dir.join(format!("{area}.case"));
    if !file.is_file() {
        // No case file of that area, so no case of that id: the trial asked for is not a case's.
        return Ok(Vec::new());
    }
    match harness::case::suite::load_dir(&file) {
        Ok(cases) => Ok(cases.into_iter().enumerate().filter(|(_, c)| c.id == id).collect()),
        Err(_) => every_case(),
    }
}

/// The report session `$CUDA_CONFORMANCE_REPORT` asks for, if set: the full tier, filtered by libtest's filter.
/// Never while listing, and never under cargo-nextest: it starts one process per trial, and each would rewrite the
/// file with its one case. There the run's record is nextest's JUnit (the `ci` profile of `.config/nextest.toml`),
/// and a report comes from `cuda-conformance run`.
fn report_session(args: &Arguments) -> Option<Session> {
    let path = std::env::var_os("CUDA_CONFORMANCE_REPORT")?;
    if args.list {
        return None;
    }
    if under_nextest() {
        eprintln!(
            "CUDA_CONFORMANCE_REPORT={} is not written under cargo-nextest (one process per trial would each \
             overwrite it): use nextest's JUnit, or `cuda-conformance run --report FILE`",
            Path::new(&path).display()
        );
        return None;
    }
    let header = ReportHeader {
        commit: BUILD_COMMIT.to_owned(),
        started_at: time::OffsetDateTime::now_utc()
            .format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_else(|_| "unknown".into()),
        filter: args.filter.clone().unwrap_or_default(),
        shard: None,
        baseline: std::env::var("CUDA_CONFORMANCE_BASELINE").ok(),
        kernel_image: cuda_conformance::kernel_image(),
    };
    let outputs = Outputs { report: Some(PathBuf::from(path)), ..Outputs::default() };
    Some(Session::new(Purpose::Cases(Tier::Full), header, outputs))
}

/// cargo-nextest started this process (it sets `NEXTEST`): one trial per process, and no report.
fn under_nextest() -> bool {
    std::env::var_os("NEXTEST").is_some()
}

/// The device and the one runner (a worker process, replaced when a case kills or dirties it) the GPU trials share,
/// and the results they obtained (with each case's index in the suite).
struct Gpu {
    /// Why no GPU trial can run here, known before any trial ([`no_gpu_at_all`]): they are listed as ignored.
    absent: Option<String>,
    /// The trials are listed for a runner that cannot see a trial ignored at run time (`--list`, cargo-nextest):
    /// a case this device cannot run (an unmet `requires:`) is ignored when listed, and device 0 is probed without
    /// a context (no report is written then).
    at_list_time: bool,
    /// Device 0, probed when a GPU trial first runs (or the report session starts, or the trials are listed
    /// [`Self::at_list_time`]), not by a process that runs a CPU trial: the full probe makes device 0 current,
    /// which creates its context.
    device: OnceLock<Result<DeviceInfo, String>>,
    runner: OnceLock<Mutex<DeviceRunner<'static>>>,
    results: Mutex<Vec<(usize, CaseResult)>>,
    /// `$CUDA_CONFORMANCE_EXPECTATIONS`: skips (decided at list time where they can be), flakes, expected failures.
    expectations: Option<Expectations>,
    /// Device 0's GPU, driver and runtime, for the expectation lines' conditions.
    configuration: OnceLock<Key>,
}

impl Gpu {
    fn new(absent: Option<String>, expectations: Option<Expectations>, at_list_time: bool) -> Gpu {
        Gpu {
            absent,
            at_list_time,
            device: OnceLock::new(),
            runner: OnceLock::new(),
            results: Mutex::new(Vec::new()),
            expectations,
            configuration: OnceLock::new(),
        }
    }

    /// Whether a `skip` line of the expectation file names `case` here, decided while listing so that nextest
    /// reports it skipped: a line without conditions at once; one with GPU, driver or runtime globs by probing
    /// device 0 (only then does listing probe the device fully).
    fn skips(&self, case: &Case) -> bool {
        let Some(expectations) = &self.expectations else { return false };
        if expectations.unconditional_skip(&case.id).is_some() {
            return true;
        }
        let named_by_conditional_skip = expectations.entries.iter().any(|e| {
            e.action == Action::Skip
                && e.has_conditions()
                && harness::report::expectations::glob_matches(&e.cases, &case.id)
        });
        if !named_by_conditional_skip {
            return false;
        }
        let Ok(device) = self.device() else { return false };
        let configuration = self.configuration.get_or_init(|| harness::runner::suite::configuration(device));
        expectations.entry_for(&case.id, configuration).is_some_and(|e| e.action == Action::Skip)
    }

    /// Device 0. Listing, and under cargo-nextest (a process per trial, no report), it is probed without a context:
    /// a trial's worker makes its own and probes fully, and the parent's would cost each trial a context creation.
    fn device(&self) -> Result<&DeviceInfo, &String> {
        let probed = self.device.get_or_init(|| match &self.absent {
            Some(reason) => Err(reason.clone()),
            None if self.at_list_time => gpu::probe_without_context(0).map_err(|e| e.to_string()),
            None => gpu::probe(0).map_err(|e| e.to_string()),
        });
        probed.as_ref()
    }

    /// Whether `case` is listed as ignored because this device cannot run it (`requires:` unmet: too few devices,
    /// a driver present for a no-driver row, ...), which only a list-time decision shows to cargo-nextest. The
    /// runner decides the same at run time (not-supported, with the reason) under plain `cargo test`.
    fn listed_unmet(&self, case: &Case) -> bool {
        self.at_list_time && self.device().is_ok_and(|device| unmet_requirement(case, device).is_some())
    }

    fn run(&self, device: &DeviceInfo, case: &Case) -> CaseResult {
        let runner = self.runner.get_or_init(|| {
            // Leaked once per test binary: the runner borrows its device and options for the binary's lifetime.
            let device: &'static DeviceInfo = Box::leak(Box::new(device.clone()));
            let opts = RunOptions {
                baseline: baseline_section(device),
                expectations: self.expectations.clone(),
                ..RunOptions::default()
            };
            let opts: &'static RunOptions = Box::leak(Box::new(opts));
            let exe = std::env::current_exe().unwrap_or_default();
            Mutex::new(DeviceRunner::new(device, opts, exe))
        });
        runner.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).run_case(case)
    }

    /// The report of the cases that ran, in suite order, finished and written by `session` at `path`.
    fn write_report(&self, session: &Session, path: &std::path::Path) {
        let Ok(device) = self.device() else { return };
        let results = session::in_order(&self.results.lock().unwrap_or_else(|poisoned| poisoned.into_inner()));
        // The trials' runner uses the default options (the baseline changes verdicts, not what the report records).
        let opts = RunOptions::default();
        let header = session.header();
        let report = session::report_of(
            header,
            std::slice::from_ref(device),
            &opts,
            &SuiteStats::default(),
            Duration::ZERO,
            results,
        );
        if let Err(e) = session.write(&session.conclude(report, &[]), path) {
            eprintln!("{e}");
        }
    }
}

/// The section of `$CUDA_CONFORMANCE_BASELINE` for this device, if the variable is set. A baseline that cannot be
/// read, or has no section for this GPU, driver and runtime, stops the binary: judging without it would turn known
/// driver deviations into failures the user asked to see as expected.
fn baseline_section(device: &DeviceInfo) -> Option<std::collections::BTreeMap<String, String>> {
    use harness::report::baseline::{Baseline, Key};
    let path = std::env::var_os("CUDA_CONFORMANCE_BASELINE")?;
    let provenance = harness::record::Provenance::new(device, "", String::new());
    let section = Baseline::read(std::path::Path::new(&path)).and_then(|b| b.section(&Key::of(&provenance)).cloned());
    match section {
        Ok(section) => Some(section),
        Err(e) => {
            eprintln!("CUDA_CONFORMANCE_BASELINE={}: {e}", std::path::Path::new(&path).display());
            std::process::exit(2);
        }
    }
}

/// One CPU-only trial per case file: it parses and validates, and fails with every diagnostic.
fn validation_trials(dir: &std::path::Path) -> Vec<Trial> {
    let mut files: Vec<_> = std::fs::read_dir(dir)
        .map(|entries| entries.filter_map(|e| e.ok().map(|e| e.path())).collect())
        .unwrap_or_default();
    files.retain(|p| p.extension().is_some_and(|e| e == "case"));
    files.sort();
    let mut trials: Vec<Trial> = files
        .into_iter()
        .map(|path| {
            let name = format!("validate/{}", path.file_name().unwrap_or_default().to_string_lossy());
            Trial::test(name, move || {
                let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
                let file = harness::case::parse_file(&path.display().to_string(), &text).map_err(diagnostics)?;
                let problems = harness::case::validate(&file);
                if problems.is_empty() {
                    Ok(())
                } else {
                    Err(diagnostics(problems))
                }
            })
        })
        .collect();
    let dir = dir.to_path_buf();
    trials.push(lint_trial(dir.clone()));
    trials.push(Trial::test("validate/suite", move || {
        let cases = harness::case::suite::load_dir(&dir).map_err(diagnostics)?;
        if cases.is_empty() {
            return Err(format!("no cases in {}", dir.display()).into());
        }
        Ok(())
    }));
    trials
}

/// The weak-case lint over the shipped cases (CPU only; what `cuda-conformance check` also runs): fails with every
/// warning, so a case that cannot fail never lands.
fn lint_trial(dir: std::path::PathBuf) -> Trial {
    Trial::test("lint/suite", move || {
        let cases = harness::case::suite::load_dir(&dir).map_err(diagnostics)?;
        let warnings = harness::case::lint::lint_all(&cases);
        if warnings.is_empty() {
            return Ok(());
        }
        let mut lines: Vec<String> = warnings.iter().map(|w| w.to_string()).collect();
        lines.push(format!("{} weak check(s): see harness/src/case/lint.rs for the rules", warnings.len()));
        Err(lines.join("\n").into())
    })
}

fn diagnostics(list: Vec<harness::case::Diagnostic>) -> Failed {
    let lines: Vec<String> = list.iter().map(|d| d.to_string()).collect();
    lines.join("\n").into()
}

fn case_trial(index: usize, case: Case, gpu: Arc<Gpu>) -> Trial {
    let name = case.id.clone();
    let area = case.area().to_owned();
    let listed_ignored = gpu.absent.is_some() || gpu.skips(&case) || gpu.listed_unmet(&case);
    Trial::ignorable_test(name, move || {
        let device = match gpu.device() {
            Ok(device) => device,
            // The bundle's run-tests.sh sets this: on a GPU host, a missing device is a failure, not a skip.
            Err(reason) if require_gpu() => return Err(format!("CUDA_CONFORMANCE_REQUIRE_GPU=1 but {reason}").into()),
            // Run although listed as ignored (`--include-ignored`), or a device that the full probe refused.
            Err(reason) => return Ok(Completion::ignored_with(reason)),
        };
        let result = gpu.run(device, &case);
        gpu.results.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push((index, result.clone()));
        outcome(&case, result)
    })
    .with_kind(area)
    .with_ignored_flag(listed_ignored)
}

fn outcome(case: &Case, result: CaseResult) -> Result<Completion, Failed> {
    let detail = result.verdict.messages.join("; ");
    match result.verdict.kind {
        VerdictKind::Pass | VerdictKind::ExpectedFail => Ok(Completion::Completed),
        // Declared in the expectation file or the baseline: tolerated, and printed so that it stays seen.
        VerdictKind::Flake if result.is_known_flake() => {
            eprintln!("{}: known flake: {detail}", case.id);
            Ok(Completion::Completed)
        }
        VerdictKind::Variant | VerdictKind::QualityWarning => {
            let variant = result.verdict.variant.as_deref().unwrap_or("");
            eprintln!("{}: {} {variant} {detail}", case.id, result.verdict.kind);
            Ok(Completion::Completed)
        }
        VerdictKind::NotSupported | VerdictKind::Skipped => {
            Ok(Completion::ignored_with(format!("{}: {detail}", result.verdict.kind)))
        }
        VerdictKind::Fail
        | VerdictKind::Crash
        | VerdictKind::Timeout
        | VerdictKind::Flake
        | VerdictKind::UnexpectedPass => Err(failure_text(&result).into()),
    }
}
