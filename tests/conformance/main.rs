//! Every case under `cases/` as one libtest trial named by its id (`cargo test -- capture/` filters), plus one
//! CPU-only trial per case file that parses and validates it, `lint/suite` (the weak-case lint over all of them),
//! the runner's trials in mock child mode (`runner/...`: crash, timeout, dirty context, flakes, gate delays,
//! baselines; no GPU needed) and the command line's (`cli/...`).
//!
//! Verdicts map onto libtest: pass, variant and quality-warning pass (their detail is printed); not-supported and
//! skipped are ignored with the reason; fail, crash, timeout and flake fail with the text of
//! `harness::report::trace::failure_text`. With `CUDA_CONFORMANCE_BASELINE=FILE` (a `baseline bless` file, e.g.
//! `baselines/<gpu>_driver-<release>.toml`), the cases are judged against its section for this GPU, driver and
//! runtime: a known failure is expected-fail (a pass for libtest) and an unexpected pass fails. The cases run in
//! worker processes of this binary (re-executed), one at a
//! time whatever `--test-threads` says: the legacy stream and the device are process-wide and machine-wide state.
//!
//! With `CUDA_CONFORMANCE_REPORT=FILE`, the run is also a report session (`harness::runner::session`, as in
//! `cuda-conformance run`): FILE gets the report of the case trials that ran, unfinished from the start, or the
//! could-not-run report when there is no GPU or the case files are invalid. Without it `cargo test` writes nothing.

mod cli_trials;
mod fleet_trials;
mod runner_trials;

use cuda_conformance::{cases_dir, kernel_table, BUILD_COMMIT};
use harness::case::ast::Case;
use harness::device::gpu::{self, DeviceInfo};
use harness::record::verdict::VerdictKind;
use harness::record::CaseResult;
use harness::report::trace::failure_text;
use harness::runner::device_runner::DeviceRunner;
use harness::runner::select::Tier;
use harness::runner::session::{self, Outputs, Purpose, ReportHeader, Session};
use harness::runner::stats::SuiteStats;
use harness::runner::{self, RunOptions};
use libtest_mimic::{Arguments, Completion, Failed, Trial};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

fn main() {
    runner::worker::serve_child_request(kernel_table);
    let args = Arguments::from_args();
    let dir = cases_dir();
    let session = report_session(&args);
    let mut trials = validation_trials(&dir);
    trials.extend(runner_trials::trials(&dir));
    trials.extend(cli_trials::trials(&dir));
    trials.extend(fleet_trials::trials(&dir));
    // The GPU trials whose results go into the session's report, and where that report is.
    let mut recording: Option<(Arc<Gpu>, PathBuf)> = None;
    match harness::case::suite::load_dir(&dir) {
        // The validation trials report the diagnostics, and no case can run.
        Err(diagnostics) => {
            if let Some(session) = &session {
                let reason = format!("{} problem(s) in the case files under {}", diagnostics.len(), dir.display());
                session.could_not_run(&format!("cannot run the suite: {reason}"), None);
            }
        }
        Ok(cases) => {
            let gpu = Arc::new(Gpu {
                device: gpu::probe(0).map_err(|e| e.to_string()),
                runner: OnceLock::new(),
                results: Mutex::new(Vec::new()),
            });
            match (&gpu.device, &session) {
                (Err(reason), session) => {
                    eprintln!("GPU cases ignored: {reason}");
                    if let Some(session) = session {
                        session.could_not_run(&format!("cannot run the suite: {reason}"), None);
                    }
                }
                (Ok(device), Some(session)) => match session.begin(device) {
                    Ok(path) => recording = Some((Arc::clone(&gpu), path)),
                    Err(e) => session.could_not_run(&e, Some(device)),
                },
                (Ok(_), None) => {}
            }
            let trials_of_cases = cases.into_iter().enumerate().map(|(i, case)| case_trial(i, case, Arc::clone(&gpu)));
            trials.extend(trials_of_cases);
        }
    }
    let conclusion = libtest_mimic::run(&args, trials);
    if let (Some(session), Some((gpu, path))) = (&session, recording) {
        gpu.write_report(session, &path);
    }
    conclusion.exit();
}

/// The report session `$CUDA_CONFORMANCE_REPORT` asks for, if set: the full tier, filtered by libtest's filter.
fn report_session(args: &Arguments) -> Option<Session> {
    let path = std::env::var_os("CUDA_CONFORMANCE_REPORT")?;
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

/// The device and the one runner (a worker process, replaced when a case kills or dirties it) the GPU trials share,
/// and the results they obtained (with each case's index in the suite).
struct Gpu {
    device: Result<DeviceInfo, String>,
    runner: OnceLock<Mutex<DeviceRunner<'static>>>,
    results: Mutex<Vec<(usize, CaseResult)>>,
}

impl Gpu {
    fn run(&self, device: &DeviceInfo, case: &Case) -> CaseResult {
        let runner = self.runner.get_or_init(|| {
            // Leaked once per test binary: the runner borrows its device and options for the binary's lifetime.
            let device: &'static DeviceInfo = Box::leak(Box::new(device.clone()));
            let opts = RunOptions { baseline: baseline_section(device), ..RunOptions::default() };
            let opts: &'static RunOptions = Box::leak(Box::new(opts));
            let exe = std::env::current_exe().unwrap_or_default();
            Mutex::new(DeviceRunner::new(device, opts, exe))
        });
        runner.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).run_case(case)
    }

    /// The report of the cases that ran, in suite order, finished and written by `session` at `path`.
    fn write_report(&self, session: &Session, path: &std::path::Path) {
        let Ok(device) = &self.device else { return };
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
    Trial::ignorable_test(name, move || {
        let device = match &gpu.device {
            Ok(device) => device,
            // The bundle's run-tests.sh sets this: on a GPU host, a missing device is a failure, not a skip.
            Err(reason) if std::env::var("CUDA_CONFORMANCE_REQUIRE_GPU").is_ok_and(|v| v == "1") => {
                return Err(format!("CUDA_CONFORMANCE_REQUIRE_GPU=1 but {reason}").into())
            }
            Err(reason) => return Ok(Completion::ignored_with(reason)),
        };
        let result = gpu.run(device, &case);
        gpu.results.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).push((index, result.clone()));
        outcome(&case, result)
    })
    .with_kind(area)
}

fn outcome(case: &Case, result: CaseResult) -> Result<Completion, Failed> {
    let detail = result.verdict.messages.join("; ");
    match result.verdict.kind {
        VerdictKind::Pass | VerdictKind::ExpectedFail => Ok(Completion::Completed),
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
