//! The C++ executor (`run --executor cxx`): a case runs as its compiled reproducer, the standalone program
//! `cuda-conformance repro` writes for it, one process per case. The program runs the case once and prints what it
//! observed as the JSON of [`Observations`] on its last stdout line; this module starts it, bounds it by the run's
//! deadline and reads that line, and [`super::one_case::read`] judges it with the same code as the Rust executor's
//! observations. A program that dies, hangs, exits non-zero or prints no readable last line costs the case a
//! `crash` or `timeout` verdict, as a worker that dies does.
//!
//! The reproducer's command line: `<dir>/<stem> [--devices 0,1,...] [--gate-delay-scale X]` (the ordinals of the
//! case's devices, as the process sees them; the factor on its `open G after D` delays, as the Rust executor's
//! `gate_delay_scale`, given only below 1), with the case's `env:`, [`DEADLINE_ENV`] (when its watchdog opens
//! every gate), [`UUID_ENV`] (the case device's UUID, which the program writes for `{uuid}` in the `env:` values it
//! sets) and [`BLOCKING_WAITS_ENV`] (where the case's worker would block while it waits) in its environment. Run by hand, a reproducer waits the written delays and looks the UUID up itself.

use super::one_case::{read, verdict_of};
use super::process::{Finished, Process};
use crate::case::ast::Case;
use crate::exec::ExecOptions;
use crate::record::executors::{file_stem, Executor};
use crate::record::observations::Observations;
use crate::record::verdict::VerdictKind;
use crate::record::CaseResult;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// The reproducer's watchdog deadline, in milliseconds (the Rust executor's `ExecOptions::case_deadline`).
pub const DEADLINE_ENV: &str = "CUDA_CONFORMANCE_DEADLINE_MS";

/// The case device's UUID (`GPU-…`), for the reproducer to fill `{uuid}` and `{uuid-prefix}` in the case's `env:`
/// values as a worker does (the header's `cc::UUID_ENV`). Without it (run by hand) the program asks CUDA.
pub const UUID_ENV: &str = "CUDA_CONFORMANCE_UUID";

/// `1` where the reproducer's host threads block while they wait for the device, as the Rust executor's worker for
/// the case does (`HostWaits::Block`, not for the cases that measure): the header's `cc::BLOCKING_WAITS_ENV`.
pub const BLOCKING_WAITS_ENV: &str = "CUDA_CONFORMANCE_BLOCKING_WAITS";

/// Where a case's reproducer runs: which GPUs the process sees and which of them are the case's devices.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Placement {
    /// `CUDA_VISIBLE_DEVICES` for the process, or none to leave it as it is.
    pub visible: Option<String>,
    /// The ordinal of each device of the case, index 0 first, as the process sees them (`--devices`).
    pub ordinals: Vec<i32>,
    /// The case device's UUID (`GPU-…`), for `{uuid}` in the case's `env:` values, as a worker substitutes it.
    pub uuid: String,
    /// Host threads block while they wait for the device (`cudaDeviceScheduleBlockingSync`), as in the worker that
    /// would run the case; otherwise cudart's default.
    pub blocking_waits: bool,
}

/// The compiled reproducers of a run: a folder of programs named by [`file_stem`].
#[derive(Debug, Clone)]
pub struct Reproducers {
    pub dir: PathBuf,
}

impl Reproducers {
    /// The program of `case`.
    pub fn program(&self, case: &Case) -> PathBuf {
        self.dir.join(file_stem(&case.id))
    }

    /// Runs `case`'s reproducer once (and again for `samples: N`) with its gate delays scaled by `scale` (1: as
    /// written), killing it after `deadline`: the judged result, or the crash or timeout it cost.
    pub fn run(&self, case: &Case, placement: &Placement, scale: f64, deadline: Duration) -> CaseResult {
        let start = Instant::now();
        let program = self.program(case);
        let mut result = if !program.is_file() {
            CaseResult::new(case, verdict_of(VerdictKind::Crash, missing(case, &program)), None, start.elapsed())
        } else {
            match run_program(&program, case, placement, scale, deadline) {
                Ok(observations) => {
                    let again = || run_program(&program, case, placement, scale, deadline).ok();
                    read(case, observations, again, start)
                }
                Err((kind, why)) => CaseResult::new(case, verdict_of(kind, why), None, start.elapsed()),
            }
        };
        result.executor = Some(Executor::Cxx);
        result.wall_ms = start.elapsed().as_millis() as u64;
        result
    }
}

/// Why a case has no program, and the commands that make it.
fn missing(case: &Case, program: &Path) -> String {
    let src = program.parent().and_then(Path::parent).map(|p| p.join("src")).unwrap_or_else(|| PathBuf::from("src"));
    format!(
        "no reproducer {}: build it with `cuda-conformance repro {} --out {} && nvcc -std=c++17 {}/{}.cu -o {}` \
         (scripts/bundle.sh builds every case's into the bundle's repro/bin)",
        program.display(),
        case.id,
        src.display(),
        src.display(),
        file_stem(&case.id),
        program.display()
    )
}

/// Starts `program` for `case` and reads its observations, or the verdict its end costs the case.
fn run_program(
    program: &Path,
    case: &Case,
    placement: &Placement,
    scale: f64,
    deadline: Duration,
) -> Result<Observations, (VerdictKind, String)> {
    let started = Instant::now();
    let mut command = Command::new(program);
    if !placement.ordinals.is_empty() {
        let list: Vec<String> = placement.ordinals.iter().map(i32::to_string).collect();
        command.arg("--devices").arg(list.join(","));
    }
    if scale < 1.0 {
        command.arg("--gate-delay-scale").arg(scale.to_string());
    }
    // The case's own settings, then the watchdog: the program's, as the Rust executor's, fires before the runner's
    // deadline kills the process, so a lost gate open still ends in a trace.
    let watchdog = ExecOptions::default().case_deadline.min(deadline);
    // The program sets the case's `env:` itself, filling `{uuid}` from UUID_ENV as the worker fills it here.
    let env = case.env.iter().map(|(k, v)| (k, super::worker::with_uuid(v, &placement.uuid)));
    command.envs(env).env(DEADLINE_ENV, watchdog.as_millis().to_string());
    if placement.blocking_waits {
        command.env(BLOCKING_WAITS_ENV, "1");
    } else {
        command.env_remove(BLOCKING_WAITS_ENV);
    }
    if placement.uuid.is_empty() {
        command.env_remove(UUID_ENV);
    } else {
        command.env(UUID_ENV, &placement.uuid);
    }
    if let Some(visible) = &placement.visible {
        command.env("CUDA_VISIBLE_DEVICES", visible);
    }
    let name = program.display();
    let running = Process::start_group(&mut command).map_err(|why| (VerdictKind::Crash, why))?;
    let Finished { lines, status, stderr } = running.output(started + deadline).map_err(|stderr| {
        let why = format!("the reproducer {name} gave no result within {deadline:?} and was killed; stderr: {stderr}");
        (VerdictKind::Timeout, why)
    })?;
    let crash = |why: String| (VerdictKind::Crash, format!("the reproducer {name} {why}; stderr: {stderr}"));
    if !status.success() {
        return Err(crash(format!("exited with {status}")));
    }
    let last = lines.iter().rev().find(|l| !l.trim().is_empty()).map(String::as_str).unwrap_or("");
    let observations: Observations = serde_json::from_str(last).map_err(|e| {
        let shown: String = last.chars().take(200).collect();
        crash(format!("printed no observations as its last line ({e}): {shown:?}"))
    })?;
    if observations.case_id != case.id {
        return Err(crash(format!("ran case `{}`, not `{}`", observations.case_id, case.id)));
    }
    Ok(observations)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    const CASE: &str = "case area/fake\n  rule: r\n  source: s\n  env: CUDA_MODULE_LOADING=EAGER\n  \
                        stream s blocking\n  k: sync s\n  expect k returned cudaSuccess\nend\n";

    fn case() -> Case {
        let file = crate::case::parse_file("area.case", CASE).unwrap_or_else(|d| panic!("{d:?}"));
        file.cases.into_iter().next().unwrap_or_else(|| panic!("no case"))
    }

    /// The trace of `case` with `code` as the return of its one operation (as a reproducer prints it).
    fn observations(code: &str) -> String {
        let obs = Observations {
            case_id: "area/fake".into(),
            ops: vec![crate::record::observations::OpRecord {
                index: 0,
                line: 6,
                label: Some("k".into()),
                thread: None,
                text: "sync s".into(),
                code: Some(code.into()),
                acceptable: vec!["cudaSuccess".into()],
                start_ns: 1,
                end_ns: 2,
                value: None,
                not_run: None,
            }],
            final_sync: Some("cudaSuccess".into()),
            ..Observations::default()
        };
        serde_json::to_string(&obs).unwrap_or_default()
    }

    /// A folder with a fake reproducer of `area/fake` running `script`.
    fn fake(name: &str, script: &str) -> Reproducers {
        let dir = std::env::temp_dir().join(format!("cxx-executor-{name}-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        let program = dir.join("area__fake");
        std::fs::write(&program, format!("#!/bin/sh\n{script}\n")).unwrap_or_else(|e| panic!("{e}"));
        std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap_or_else(|e| panic!("{e}"));
        Reproducers { dir }
    }

    fn run(name: &str, script: &str, deadline: Duration) -> CaseResult {
        run_scaled(name, script, 1.0, deadline)
    }

    fn run_scaled(name: &str, script: &str, scale: f64, deadline: Duration) -> CaseResult {
        let placement =
            Placement { visible: Some("GPU-x".into()), ordinals: vec![0], uuid: "GPU-x".into(), blocking_waits: true };
        let reproducers = fake(name, script);
        let result = reproducers.run(&case(), &placement, scale, deadline);
        let _ = std::fs::remove_dir_all(&reproducers.dir);
        result
    }

    #[test]
    fn a_shortened_gate_delay_is_passed_on_and_the_written_one_is_not() {
        // The fake passes only when its arguments are exactly what a reproducer is given.
        let script = |args: &str| {
            format!("if [ \"$*\" = '{args}' ]; then echo '{}'; else echo \"args: $*\"; fi", observations("cudaSuccess"))
        };
        let fast = run_scaled("scaled", &script("--devices 0 --gate-delay-scale 0.1"), 0.1, Duration::from_secs(2));
        assert_eq!(fast.verdict.kind, VerdictKind::Pass, "{:?}", fast.verdict);
        let written = run_scaled("written", &script("--devices 0"), 1.0, Duration::from_secs(2));
        assert_eq!(written.verdict.kind, VerdictKind::Pass, "{:?}", written.verdict);
    }

    #[test]
    fn the_last_line_is_judged_by_the_verdict_code_and_the_program_gets_its_devices_and_environment() {
        // Chatter before the last line (a driver message) is ignored; the arguments and environment are checked by
        // the fake itself, which prints a failing trace otherwise.
        let script = format!(
            "echo 'some driver message'\n\
             if [ \"$1 $2\" = '--devices 0' ] && [ \"$CUDA_MODULE_LOADING\" = EAGER ] && \
             [ \"$CUDA_VISIBLE_DEVICES\" = GPU-x ] && [ \"${DEADLINE_ENV}\" = 2000 ] && [ \"${UUID_ENV}\" = GPU-x ] && [ \"${BLOCKING_WAITS_ENV}\" = 1 ]; then\n\
             echo '{}'\nelse\necho '{}'\nfi",
            observations("cudaSuccess"),
            observations("cudaErrorInvalidValue")
        );
        let result = run("pass", &script, Duration::from_secs(2));
        assert_eq!(result.verdict.kind, VerdictKind::Pass, "{:?}", result.verdict);
        assert_eq!(result.executor, Some(Executor::Cxx));
        assert!(result.observations.is_some());
        let failing = run("fail", &format!("echo '{}'", observations("cudaErrorInvalidValue")), Duration::from_secs(2));
        assert_eq!(failing.verdict.kind, VerdictKind::Fail, "{:?}", failing.verdict);
    }

    #[test]
    fn a_case_that_names_its_device_by_uuid_gets_the_uuid_and_its_own_visible_devices() {
        // launch-queue/visible-devices-uuid-then-invalid on the second GPU of a run over several: the program is
        // given the device's UUID (it fills `{uuid}` in the env: values it sets itself), the case's own
        // CUDA_VISIBLE_DEVICES, filled, instead of the runner's, and ordinal 0.
        let text = CASE.replace("env: CUDA_MODULE_LOADING=EAGER", "env: CUDA_VISIBLE_DEVICES={uuid},-1,0");
        let file = crate::case::parse_file("area.case", &text).unwrap_or_else(|d| panic!("{d:?}"));
        let case = file.cases.into_iter().next().unwrap_or_else(|| panic!("no case"));
        let uuid = "GPU-6167f060-ed55-bbfc-f61f-fa3b3ac86e0e";
        let script = format!(
            "if [ \"$*\" = '--devices 0' ] && [ \"$CUDA_VISIBLE_DEVICES\" = '{uuid},-1,0' ] && \
             [ \"${UUID_ENV}\" = '{uuid}' ] && [ -z \"${BLOCKING_WAITS_ENV}\" ]; then echo '{}'; else echo \"got $* $CUDA_VISIBLE_DEVICES\"; fi",
            observations("cudaSuccess")
        );
        let reproducers = fake("uuid", &script);
        let placement = Placement { visible: None, ordinals: vec![0], uuid: uuid.into(), blocking_waits: false };
        let result = reproducers.run(&case, &placement, 1.0, Duration::from_secs(2));
        let _ = std::fs::remove_dir_all(&reproducers.dir);
        assert_eq!(result.verdict.kind, VerdictKind::Pass, "{:?}", result.verdict);
    }

    #[test]
    fn a_crash_a_hang_garbage_a_wrong_case_and_a_missing_program_each_cost_the_case() {
        let outcomes = [
            ("crash", "echo partial; kill -SEGV $$".to_owned(), VerdictKind::Crash, "exited with signal: 11"),
            ("exit", format!("echo '{}'; exit 3", observations("cudaSuccess")), VerdictKind::Crash, "exit status: 3"),
            ("hang", "sleep 30".to_owned(), VerdictKind::Timeout, "no result within"),
            ("garbage", "echo '{not json'".to_owned(), VerdictKind::Crash, "printed no observations"),
            ("silent", "true".to_owned(), VerdictKind::Crash, "printed no observations"),
            (
                "other",
                format!("echo '{}'", observations("cudaSuccess").replace("area/fake", "area/other")),
                VerdictKind::Crash,
                "ran case `area/other`",
            ),
        ];
        for (name, script, kind, says) in outcomes {
            let started = Instant::now();
            let result = run(name, &script, Duration::from_millis(500));
            assert_eq!(result.verdict.kind, kind, "{name}: {:?}", result.verdict);
            assert!(result.verdict.messages[0].contains(says), "{name}: {:?}", result.verdict.messages);
            assert!(started.elapsed() < Duration::from_secs(5), "{name}: the hang was not killed");
        }
        let nowhere = Reproducers { dir: PathBuf::from("/nonexistent/repro/bin") };
        let result = nowhere.run(
            &case(),
            &Placement { visible: None, ordinals: vec![0], uuid: String::new(), blocking_waits: false },
            1.0,
            Duration::from_secs(1),
        );
        assert_eq!(result.verdict.kind, VerdictKind::Crash);
        assert!(
            result.verdict.messages[0].contains(
                "cuda-conformance repro area/fake --out /nonexistent/repro/src && nvcc -std=c++17 \
                 /nonexistent/repro/src/area__fake.cu -o /nonexistent/repro/bin/area__fake"
            ),
            "{:?}",
            result.verdict.messages
        );
    }
}
