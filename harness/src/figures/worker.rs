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
use crate::gpu;
use crate::kernels::KernelTable;
use crate::runner::{self, CaseResult};
use crate::verdict::VerdictKind;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Set (to the device ordinal) in the environment of a worker: it tells the re-executed binary to serve cases.
const WORKER_DEVICE: &str = "CUDA_CONFORMANCE_CASE_WORKER";
/// Marks the worker's result lines, so that stray output (a driver message) cannot be mistaken for one.
const RESULT_PREFIX: &str = "CUDA-CONFORMANCE-WORKER-RESULT ";
/// How long a worker told to finish may take to exit on its own before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(5);

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
    running: Option<Running>,
}

/// A started worker and the threads draining its output.
struct Running {
    child: Child,
    /// `None` once closed, which tells the worker to exit.
    stdin: Option<ChildStdin>,
    /// Lines of the worker's stdout, read by a thread so that waiting for one can time out.
    /// (The thread itself is not joined: it ends when the worker's stdout closes.)
    lines: Receiver<String>,
    stderr: JoinHandle<String>,
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
        let mut running = match self.running.take().map_or_else(|| self.spawn(), Ok) {
            Ok(running) => running,
            Err(why) => return failed(case, VerdictKind::Crash, why, started),
        };
        let request = serde_json::Value::String(text.to_owned()).to_string();
        let sent = match running.stdin.as_mut() {
            Some(stdin) => writeln!(stdin, "{request}").and_then(|()| stdin.flush()),
            None => Err(std::io::Error::other("its stdin is closed")),
        };
        if let Err(e) = sent {
            let (status, stderr) = running.stop();
            let why = format!("cannot send the case to the worker ({e}); it exited with {status}; stderr: {stderr}");
            return failed(case, VerdictKind::Crash, why, started);
        }
        loop {
            match running.lines.recv_timeout(deadline.saturating_sub(started.elapsed())) {
                Ok(line) => {
                    // Anything else on stdout is stray output, not a result.
                    let Some(json) = line.strip_prefix(RESULT_PREFIX) else { continue };
                    return match serde_json::from_str::<CaseResult>(json) {
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
                    };
                }
                Err(RecvTimeoutError::Timeout) => {
                    let (_, stderr) = running.stop();
                    let why = format!("no result within {deadline:?}; the worker was killed. stderr: {stderr}");
                    return failed(case, VerdictKind::Timeout, why, started);
                }
                Err(RecvTimeoutError::Disconnected) => {
                    let (status, stderr) = running.stop();
                    let why = format!("the worker exited with {status} and no result; stderr: {stderr}");
                    return failed(case, VerdictKind::Crash, why, started);
                }
            }
        }
    }

    fn spawn(&self) -> Result<Running, String> {
        let mut child = (self.start)()?
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start the worker: {e}"))?;
        let (Some(stdin), Some(stdout), Some(stderr)) = (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            let _ = child.wait();
            return Err("the worker's pipes were not opened".to_owned());
        };
        let (sender, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        // Drained on a thread so a chatty worker cannot block on a full pipe; kept whole for the crash message.
        let stderr = runner::drain(Some(stderr));
        Ok(Running { child, stdin: Some(stdin), lines, stderr })
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

impl Running {
    /// Kills the worker (whatever it is doing) and returns its exit status and the tail of its stderr.
    fn stop(mut self) -> (String, String) {
        let _ = self.child.kill();
        self.collect()
    }

    /// Closes the worker's stdin so that it exits on its own, killing it after [`EXIT_GRACE`].
    fn finish(mut self) {
        self.stdin = None;
        let until = Instant::now() + EXIT_GRACE;
        while matches!(self.child.try_wait(), Ok(None)) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(10));
        }
        self.stop();
    }

    /// Waits for the worker to end and for its stderr, which closes with it.
    fn collect(mut self) -> (String, String) {
        self.stdin = None;
        let status = self.child.wait().map(|s| s.to_string()).unwrap_or_else(|e| format!("an unknown status ({e})"));
        let stderr = self.stderr.join().unwrap_or_default();
        (status, runner::tail(&stderr))
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
    use crate::observations::Observations;
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
