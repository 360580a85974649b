//! Runs cases, one at a time, each in a child process with a deadline, so that a crash, a hang or a sticky CUDA
//! error (which poisons the whole context) costs one case and never the results of the others.
//!
//! Both the CLI and the `cargo test` binary re-execute themselves as the child: at start they call
//! [`serve_child_request`], which runs the requested case in-process when the environment asks for it, prints its
//! [`CaseResult`] as one JSON line on stdout and exits.

use crate::case::ast::Case;
use crate::exec::{self, ExecOptions};
use crate::gpu::{self, DeviceInfo};
use crate::kernels::KernelTable;
use crate::observations::Observations;
use crate::requirements::unmet_requirement;
use crate::verdict::{self, Verdict, VerdictKind};
use serde::{Deserialize, Serialize};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Environment variables through which a parent asks its re-executed child to run one case.
const CHILD_CASES_DIR: &str = "CUDA_CONFORMANCE_CHILD_CASES";
const CHILD_CASE_ID: &str = "CUDA_CONFORMANCE_CHILD_ID";
const CHILD_DEVICE: &str = "CUDA_CONFORMANCE_CHILD_DEVICE";
/// Marks the child's one line of JSON on stdout, so that stray output (a driver message) cannot be mistaken for it.
const RESULT_PREFIX: &str = "CUDA-CONFORMANCE-RESULT ";

/// Everything known about one case after it ran (or could not run).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CaseResult {
    pub id: String,
    pub area: String,
    pub rule: String,
    pub source: String,
    /// Source file and line of the case, e.g. `cases/events.case:12`.
    pub location: String,
    pub verdict: Verdict,
    /// The trace: absent when the case did not run (not supported, skipped, crashed).
    pub observations: Option<Observations>,
    /// Wall time of the case, including its process start.
    pub wall_ms: u64,
}

impl CaseResult {
    pub(crate) fn new(case: &Case, verdict: Verdict, observations: Option<Observations>, wall: Duration) -> Self {
        CaseResult {
            id: case.id.clone(),
            area: case.area().to_owned(),
            rule: case.rule.clone(),
            source: case.source.clone(),
            location: format!("{}:{}", case.positions.file, case.positions.case_line),
            verdict,
            observations,
            wall_ms: wall.as_millis() as u64,
        }
    }
}

/// How a parent runs its cases.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The `cases/` folder the child loads the case from.
    pub cases_dir: PathBuf,
    pub device: i32,
    /// A child still running after this is killed and the case is a timeout.
    pub case_deadline: Duration,
}

/// Runs `case` in a child process of the current executable and returns what it reported. The device must have
/// been probed already (an unmet requirement is decided here, without starting a child).
pub fn run_isolated(case: &Case, device: &DeviceInfo, opts: &RunOptions) -> CaseResult {
    let start = Instant::now();
    if let Some(reason) = unmet_requirement(case, device) {
        return CaseResult::new(case, verdict_of(VerdictKind::NotSupported, reason), None, start.elapsed());
    }
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => return crashed(case, format!("cannot find the current executable: {e}"), start),
    };
    // The case's `env:` variables are process-wide settings of the runtime (module loading, connections), so
    // they can only be given to a process of the case's own.
    let child = Command::new(exe)
        .envs(case.env.iter().map(|(name, value)| (name, value)))
        .env(CHILD_CASES_DIR, &opts.cases_dir)
        .env(CHILD_CASE_ID, &case.id)
        .env(CHILD_DEVICE, opts.device.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(e) => return crashed(case, format!("cannot start the child process: {e}"), start),
    };
    // Drain both pipes on threads so a chatty child cannot block on a full pipe while we wait for it.
    let stdout = drain(child.stdout.take());
    let stderr = drain(child.stderr.take());
    let status = loop {
        // The deadline is checked first, so a child still around at its deadline is a timeout even if it was
        // just finishing.
        if start.elapsed() >= opts.case_deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) => std::thread::sleep(Duration::from_millis(5)),
            Err(e) => return crashed(case, format!("waiting for the child failed: {e}"), start),
        }
    };
    let stdout = stdout.join().unwrap_or_default();
    let stderr = stderr.join().unwrap_or_default();
    let Some(status) = status else {
        let msg = format!("no result within {:?}; the child was killed. stderr: {}", opts.case_deadline, tail(&stderr));
        return CaseResult::new(case, verdict_of(VerdictKind::Timeout, msg), None, start.elapsed());
    };
    let reported = stdout.lines().find_map(|l| l.strip_prefix(RESULT_PREFIX)).map(serde_json::from_str::<CaseResult>);
    match reported {
        Some(Ok(mut result)) => {
            result.wall_ms = start.elapsed().as_millis() as u64;
            result
        }
        Some(Err(e)) => crashed(case, format!("unreadable result from the child: {e}"), start),
        None => {
            crashed(case, format!("the child exited with {status} and no result; stderr: {}", tail(&stderr)), start)
        }
    }
}

pub(crate) fn drain<R: Read + Send + 'static>(pipe: Option<R>) -> std::thread::JoinHandle<String> {
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

pub(crate) fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.len().saturating_sub(20);
    let joined = lines[start..].join("\n");
    if joined.is_empty() {
        "(empty)".into()
    } else {
        joined
    }
}

pub(crate) fn verdict_of(kind: VerdictKind, message: String) -> Verdict {
    Verdict { kind, variant: None, observed: None, messages: vec![message] }
}

fn crashed(case: &Case, message: String, start: Instant) -> CaseResult {
    CaseResult::new(case, verdict_of(VerdictKind::Crash, message), None, start.elapsed())
}

/// Runs `case` in this process: requirements, execution, verdict.
pub fn run_in_process(case: &Case, kernels: &KernelTable, device: &DeviceInfo) -> CaseResult {
    let start = Instant::now();
    if let Some(reason) = unmet_requirement(case, device) {
        return CaseResult::new(case, verdict_of(VerdictKind::NotSupported, reason), None, start.elapsed());
    }
    let observations = exec::run_case(case, kernels, device, &ExecOptions::default());
    let verdict = verdict::judge(case, &observations);
    CaseResult::new(case, verdict, Some(observations), start.elapsed())
}

/// If this process was started by [`run_isolated`], runs the requested case, prints its result and exits.
/// Otherwise returns at once. Call it first thing in `main`.
pub fn serve_child_request(kernels: impl FnOnce() -> KernelTable) {
    let (Some(dir), Some(id)) = (std::env::var_os(CHILD_CASES_DIR), std::env::var(CHILD_CASE_ID).ok()) else {
        return;
    };
    let device: i32 = std::env::var(CHILD_DEVICE).ok().and_then(|d| d.parse().ok()).unwrap_or(0);
    let code = match child_result(Path::new(&dir), &id, device, kernels()) {
        Ok(result) => match serde_json::to_string(&result) {
            Ok(json) => {
                println!("{RESULT_PREFIX}{json}");
                0
            }
            Err(e) => {
                eprintln!("cannot serialise the result of {id}: {e}");
                3
            }
        },
        Err(e) => {
            eprintln!("{e}");
            3
        }
    };
    std::process::exit(code);
}

fn child_result(dir: &Path, id: &str, device: i32, kernels: KernelTable) -> Result<CaseResult, String> {
    let cases = crate::suite::load_dir(dir).map_err(|diags| {
        let lines: Vec<String> = diags.iter().map(|d| d.to_string()).collect();
        lines.join("\n")
    })?;
    let case = cases.iter().find(|c| c.id == id).ok_or_else(|| format!("no case {id} in {}", dir.display()))?;
    let device = gpu::probe(device).map_err(|e| e.to_string())?;
    Ok(run_in_process(case, &kernels, &device))
}
