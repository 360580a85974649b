//! A child process spoken to in lines: one request per line on its stdin, answers on its stdout marked by a prefix
//! (so that stray output, a driver message, cannot pass for one), its stderr kept for the crash message. The
//! parent's side of a worker ([`super::worker::Worker`]) runs on it.

use crate::record::verdict::VerdictKind;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// How long a process told to finish may take to exit on its own (tearing its CUDA context down) before it is
/// killed.
const EXIT_GRACE: Duration = Duration::from_secs(5);

/// A started process and the threads draining its output.
pub(crate) struct Process {
    child: Child,
    /// `None` once closed, which tells the process to exit.
    stdin: Option<ChildStdin>,
    /// Lines of its stdout, each with when it arrived, read by a thread so that waiting for one can time out. (The
    /// thread is not joined: it ends when the process's stdout closes.)
    lines: Receiver<(Instant, String)>,
    /// Drained on a thread so that a chatty process cannot block on a full pipe.
    stderr: JoinHandle<String>,
    /// The process leads a process group of its own, killed whole: a tool that runs the worker as its child
    /// (compute-sanitizer) would otherwise leave the worker running, holding the pipes open, when it is killed.
    group: bool,
}

impl Process {
    /// Starts `command` with its three streams piped.
    pub(crate) fn start(command: &mut Command) -> Result<Process, String> {
        Process::start_in(command, false)
    }

    /// As [`Process::start`], the process leading a new process group, which [`Process::stop`] kills whole.
    pub(crate) fn start_group(command: &mut Command) -> Result<Process, String> {
        std::os::unix::process::CommandExt::process_group(command, 0);
        Process::start_in(command, true)
    }

    /// The process's id.
    pub(crate) fn id(&self) -> u32 {
        self.child.id()
    }

    fn start_in(command: &mut Command, group: bool) -> Result<Process, String> {
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start the worker {}: {e}", command.get_program().to_string_lossy()))?;
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
                if sender.send((Instant::now(), line)).is_err() {
                    break;
                }
            }
        });
        Ok(Process { child, stdin: Some(stdin), lines, stderr: drain(Some(stderr)), group })
    }

    /// The rest of the next stdout line that starts with `prefix` (other lines are skipped), waiting until `until`.
    pub(crate) fn line_with(&self, prefix: &str, until: Instant) -> Result<String, RecvTimeoutError> {
        self.line_arriving_with(prefix, until).map(|(_, rest)| rest)
    }

    /// As [`Process::line_with`], with when the line arrived (read from the pipe, not when it was asked for).
    pub(crate) fn line_arriving_with(
        &self,
        prefix: &str,
        until: Instant,
    ) -> Result<(Instant, String), RecvTimeoutError> {
        loop {
            let (arrived, line) = self.lines.recv_timeout(until.saturating_duration_since(Instant::now()))?;
            if let Some(rest) = line.strip_prefix(prefix) {
                return Ok((arrived, rest.to_owned()));
            }
        }
    }

    /// Sends `request` and waits for the answer line marked by `prefix`, until `deadline` after `started`: the
    /// process and the answer (without the prefix). A process that cannot be written to, dies or does not answer
    /// in time is stopped, and the verdict that costs the case (crash or timeout) comes back with the reason.
    pub(crate) fn ask(
        mut self,
        request: &str,
        prefix: &str,
        started: Instant,
        deadline: Duration,
    ) -> Result<(Process, String), (VerdictKind, String)> {
        let sent = match self.stdin.as_mut() {
            Some(stdin) => writeln!(stdin, "{request}").and_then(|()| stdin.flush()),
            None => Err(std::io::Error::other("its stdin is closed")),
        };
        if let Err(e) = sent {
            let (status, stderr) = self.stop();
            let why = format!("cannot send the case to the worker ({e}); it exited with {status}; stderr: {stderr}");
            return Err((VerdictKind::Crash, why));
        }
        match self.line_with(prefix, started + deadline) {
            Ok(answer) => Ok((self, answer)),
            Err(RecvTimeoutError::Timeout) => {
                let (_, stderr) = self.stop();
                Err((
                    VerdictKind::Timeout,
                    format!("no result within {deadline:?}; the worker was killed. stderr: {stderr}"),
                ))
            }
            Err(RecvTimeoutError::Disconnected) => {
                let (status, stderr) = self.stop();
                Err((VerdictKind::Crash, format!("the worker exited with {status} and no result; stderr: {stderr}")))
            }
        }
    }

    /// Closes its stdin and waits, until `until`, for it to exit: every line of its stdout, its exit status and the
    /// tail of its stderr. A process still running at `until` is killed: `Err` with its stderr's tail.
    pub(crate) fn output(mut self, until: Instant) -> Result<Finished, String> {
        self.stdin = None;
        let mut lines = Vec::new();
        loop {
            match self.lines.recv_timeout(until.saturating_duration_since(Instant::now())) {
                Ok((_, line)) => lines.push(line),
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => return Err(self.stop().1),
            }
        }
        // Its stdout closed: it is exiting (or closed it and went on, which the deadline still bounds).
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => {
                    let stderr = self.stderr.join().unwrap_or_default();
                    return Ok(Finished { lines, status, stderr: tail(&stderr) });
                }
                Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(1)),
                _ => return Err(self.stop().1),
            }
        }
    }

    /// Kills the process (whatever it is doing) and returns its exit status and the tail of its stderr.
    pub(crate) fn stop(mut self) -> (String, String) {
        if self.group {
            // The whole group: `kill -KILL -PGID` (the group's id is the leader's pid). A group already gone is
            // what a finished process leaves: `kill`'s "No such process" is not for the run's console.
            let group = format!("-{}", self.child.id());
            let _ = Command::new("kill").args(["-KILL", "--", &group]).stderr(Stdio::null()).status();
        }
        let _ = self.child.kill();
        self.collect()
    }

    /// Closes its stdin so that it exits on its own, killing it after [`EXIT_GRACE`].
    pub(crate) fn finish(mut self) {
        self.stdin = None;
        let until = Instant::now() + EXIT_GRACE;
        while matches!(self.child.try_wait(), Ok(None)) && Instant::now() < until {
            std::thread::sleep(Duration::from_millis(2));
        }
        self.stop();
    }

    /// Waits for the process to end and for its stderr, which closes with it.
    fn collect(mut self) -> (String, String) {
        self.stdin = None;
        let status = self.child.wait().map(|s| s.to_string()).unwrap_or_else(|e| format!("an unknown status ({e})"));
        let stderr = self.stderr.join().unwrap_or_default();
        (status, tail(&stderr))
    }
}

/// A process that ran to its end ([`Process::output`]).
pub(crate) struct Finished {
    pub lines: Vec<String>,
    pub status: std::process::ExitStatus,
    /// The tail of its stderr.
    pub stderr: String,
}

/// Reads `pipe` to its end on a thread of its own (so that a chatty process cannot block on a full pipe).
fn drain<R: Read + Send + 'static>(pipe: Option<R>) -> JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(mut pipe) = pipe {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            text = String::from_utf8_lossy(&bytes).into_owned();
        }
        text
    })
}

/// The last 20 lines of `text`, for a crash message.
fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.len().saturating_sub(20);
    let joined = lines[start..].join("\n");
    if joined.is_empty() {
        "(empty)".into()
    } else {
        joined
    }
}
