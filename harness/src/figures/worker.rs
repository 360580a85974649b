//! A long-lived child process that runs generated cases: the parent writes a case's text as one JSON string per
//! line on the worker's stdin; the worker parses it, runs it in-process ([`runner::run_in_process`]) and prints its
//! [`CaseResult`] as one prefixed JSON line on stdout.
//!
//! Why a worker, and not [`runner::run_isolated`] or the parent itself: a figure is dozens of short cases. One
//! process per case would spend more time creating CUDA contexts than measuring; running them in the `run` process
//! would let a crash, a hang or a sticky error lose the report. The worker keeps its context across points, and the
//! parent replaces it after a crash, a point past its deadline, or a sticky error (the final device synchronize
//! failed), so such a point costs only itself.
//!
//! The CLI re-executes itself as the worker: it calls [`serve_worker_request`] first thing in `main`.

use super::parse_case_text;
use crate::case::ast::Case;
use crate::device::gpu;
use crate::device::kernels::KernelTable;
use crate::record::verdict::VerdictKind;
use crate::record::CaseResult;
use crate::runner;
use crate::runner::process::Process;
use std::io::{BufRead, Write};
use std::process::Command;
use std::time::{Duration, Instant};

/// Set (to the device ordinal) in the environment of a worker: it tells the re-executed binary to serve cases.
const WORKER_DEVICE: &str = "CUDA_CONFORMANCE_CASE_WORKER";
/// Marks the worker's result lines, so that stray output (a driver message) cannot be mistaken for one.
const RESULT_PREFIX: &str = "CUDA-CONFORMANCE-WORKER-RESULT ";

/// If this process was started as a worker, serves case texts from stdin until it closes, then exits. Otherwise
/// returns at once. Call it first thing in `main`.
pub fn serve_worker_request(kernels: impl FnOnce() -> KernelTable) {
    let Ok(ordinal) = std::env::var(WORKER_DEVICE) else {
        return;
    };
    let code = match serve(ordinal.parse().unwrap_or(0), kernels()) {
        Ok(()) => 0,
        Err(why) => {
            eprintln!("{why}");
            3
        }
    };
    std::process::exit(code);
}

fn serve(ordinal: i32, kernels: KernelTable) -> Result<(), String> {
    let device = gpu::probe(ordinal).map_err(|e| e.to_string())?;
    for line in std::io::stdin().lock().lines() {
        let line = line.map_err(|e| format!("cannot read a request: {e}"))?;
        let text: String = serde_json::from_str(&line).map_err(|e| format!("unreadable request: {e}"))?;
        // The parent validated the text already; a failure here is a bug, and the parent reports it as a crash.
        let case = parse_case_text(&text)?;
        let result = runner::run_in_process(&case, &kernels, &device);
        let json = serde_json::to_string(&result).map_err(|e| format!("cannot serialise the result: {e}"))?;
        let mut out = std::io::stdout().lock();
        writeln!(out, "{RESULT_PREFIX}{json}").and_then(|()| out.flush()).map_err(|e| format!("cannot reply: {e}"))?;
    }
    Ok(())
}

/// The parent's handle on a worker: started on the first case, replaced after one that killed or poisoned it.
pub struct Worker {
    start: Box<dyn Fn() -> Result<Command, String>>,
    running: Option<Process>,
}

impl Worker {
    /// A worker on device `ordinal`: this executable, re-executed.
    pub fn new(ordinal: i32) -> Self {
        Worker::with_command(move || {
            let exe = std::env::current_exe().map_err(|e| format!("cannot find the current executable: {e}"))?;
            let mut command = Command::new(exe);
            command.env(WORKER_DEVICE, ordinal.to_string());
            Ok(command)
        })
    }

    /// A worker started by `start` (tests substitute a fake one).
    fn with_command(start: impl Fn() -> Result<Command, String> + 'static) -> Self {
        Worker { start: Box::new(start), running: None }
    }

    /// Runs `case`, whose text is `text`, in the worker and returns its result; a worker that dies or exceeds
    /// `deadline` gives a *crash* or *timeout* result and is replaced for the next case. Requirements are not
    /// checked here.
    pub fn run(&mut self, case: &Case, text: &str, deadline: Duration) -> CaseResult {
        let started = Instant::now();
        let running = match self.running.take().map_or_else(|| self.spawn(), Ok) {
            Ok(running) => running,
            Err(why) => return failed(case, VerdictKind::Crash, why, started),
        };
        let request = serde_json::Value::String(text.to_owned()).to_string();
        let (running, json) = match running.ask(&request, RESULT_PREFIX, started, deadline) {
            Ok(answer) => answer,
            Err((kind, why)) => return failed(case, kind, why, started),
        };
        match serde_json::from_str::<CaseResult>(&json) {
            Ok(mut result) => {
                result.wall_ms = started.elapsed().as_millis() as u64;
                // A failed final synchronize means a sticky error: the worker's context is unusable.
                let poisoned = result
                    .observations
                    .as_ref()
                    .is_some_and(|o| o.final_sync.as_deref().is_some_and(|code| code != "cudaSuccess"));
                if poisoned {
                    running.stop();
                } else {
                    self.running = Some(running);
                }
                result
            }
            Err(e) => {
                running.stop();
                failed(case, VerdictKind::Crash, format!("unreadable result from the worker: {e}"), started)
            }
        }
    }

    fn spawn(&self) -> Result<Process, String> {
        Process::start(&mut (self.start)()?)
    }
}

impl Drop for Worker {
    /// Closes the worker's stdin so it exits on its own (tearing its context down), and kills it only if it does not.
    fn drop(&mut self) {
        if let Some(running) = self.running.take() {
            running.finish();
        }
    }
}

/// The result of a case the worker did not answer for.
fn failed(case: &Case, kind: VerdictKind, message: String, started: Instant) -> CaseResult {
    CaseResult::new(case, runner::verdict_of(kind, message), None, started.elapsed())
}

#[cfg(test)]
mod tests {
    use super::super::staging::{case_text, Series};
    use super::*;
    use crate::record::observations::Observations;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// A fake worker: `sh -c SCRIPT` with `RESULT` (a result line's JSON), `PREFIX` and `REQUEST` (the request line
    /// the parent must send) in its environment. Counts how often it is started.
    fn fake(script: &str, result: &CaseResult, text: &str) -> (Worker, Arc<AtomicUsize>) {
        let starts = Arc::new(AtomicUsize::new(0));
        let counter = Arc::clone(&starts);
        let script = script.to_owned();
        let env = [
            ("RESULT", serde_json::to_string(result).unwrap()),
            ("PREFIX", RESULT_PREFIX.to_owned()),
            ("REQUEST", serde_json::Value::String(text.to_owned()).to_string()),
        ];
        let worker = Worker::with_command(move || {
            counter.fetch_add(1, Ordering::SeqCst);
            let mut command = Command::new("sh");
            command.arg("-c").arg(&script).envs(env.clone());
            Ok(command)
        });
        (worker, starts)
    }

    fn generated() -> (Case, String) {
        let text = case_text(Series::H2dAsync, 4096);
        (parse_case_text(&text).unwrap(), text)
    }

    fn answer(case: &Case, final_sync: &str) -> CaseResult {
        let mut result = failed(case, VerdictKind::Pass, "line 15: observed returns-early held".into(), Instant::now());
        result.verdict.observed = Some("returns-early".into());
        result.observations = Some(Observations { final_sync: Some(final_sync.into()), ..Observations::default() });
        result
    }

    /// Answers every request that is exactly `$REQUEST`, after a line of stray output.
    const SERVE: &str = r#"while IFS= read -r line; do
        [ "$line" = "$REQUEST" ] || { echo "unexpected request: $line" >&2; exit 9; }
        echo "stray driver output"
        printf '%s%s\n' "$PREFIX" "$RESULT"
    done"#;

    #[test]
    fn results_come_back_and_the_worker_is_kept() {
        let (case, text) = generated();
        let (mut worker, starts) = fake(SERVE, &answer(&case, "cudaSuccess"), &text);
        for _ in 0..3 {
            let result = worker.run(&case, &text, Duration::from_secs(20));
            assert_eq!(result.verdict.kind, VerdictKind::Pass, "{:?}", result.verdict);
            assert_eq!(result.verdict.observed.as_deref(), Some("returns-early"));
        }
        assert_eq!(starts.load(Ordering::SeqCst), 1);
    }

    #[test]
    fn a_sticky_error_replaces_the_worker() {
        let (case, text) = generated();
        let (mut worker, starts) = fake(SERVE, &answer(&case, "cudaErrorIllegalAddress"), &text);
        worker.run(&case, &text, Duration::from_secs(20));
        worker.run(&case, &text, Duration::from_secs(20));
        assert_eq!(starts.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn a_crash_costs_one_case() {
        let (case, text) = generated();
        let script = r#"IFS= read -r line; echo "segmentation fault" >&2; exit 7"#;
        let (mut worker, starts) = fake(script, &answer(&case, "cudaSuccess"), &text);
        let result = worker.run(&case, &text, Duration::from_secs(20));
        assert_eq!(result.verdict.kind, VerdictKind::Crash);
        let message = &result.verdict.messages[0];
        assert!(message.contains("exit status: 7") && message.contains("segmentation fault"), "{message}");
        worker.run(&case, &text, Duration::from_secs(20));
        assert_eq!(starts.load(Ordering::SeqCst), 2);
    }

    #[test]
    fn a_hang_is_killed_at_the_deadline() {
        let (case, text) = generated();
        let (mut worker, _) = fake("IFS= read -r line; exec sleep 60", &answer(&case, "cudaSuccess"), &text);
        let started = Instant::now();
        let result = worker.run(&case, &text, Duration::from_millis(300));
        assert_eq!(result.verdict.kind, VerdictKind::Timeout, "{:?}", result.verdict);
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn a_worker_that_cannot_start_is_a_crash() {
        let (case, text) = generated();
        let mut worker = Worker::with_command(|| Ok(Command::new("/nonexistent/cuda-conformance-worker")));
        let result = worker.run(&case, &text, Duration::from_secs(1));
        assert_eq!(result.verdict.kind, VerdictKind::Crash);
        assert!(result.verdict.messages[0].contains("cannot start the worker"));
    }
}
