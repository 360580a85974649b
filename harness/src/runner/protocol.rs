//! What the parent and a worker process say to each other ([`super::worker`] speaks it on both sides; the mock child
//! of [`super::mock`] answers in it):
//!
//! - The parent re-executes its own binary with [`CHILD_DEVICE`] (the ordinal the child uses; with `--devices` the
//!   child sees only its GPU, through `CUDA_VISIBLE_DEVICES`), and [`CHILD_WARM`] or [`CHILD_ALL_DEVICES`] when
//!   the child is to create its context(s) before its first request.
//! - It writes one [`Request`] per line on the child's stdin: the case as written (its file, its first line and its
//!   text), whether it comes from `cases/` or is a figure's generated point, so the child parses and validates
//!   exactly that case, with the diagnostics and `location` of its file, and never reads a cases folder.
//! - The child answers each with [`RESULT_PREFIX`] and a [`Reply`] on stdout. When `dirty` is set (a sticky error,
//!   CUDA objects not released, a device limit changed that cannot be set back, a capture left open) the child exits after answering, and
//!   the parent starts a fresh one for the next case. `memory` is how much less device memory was free after the
//!   case than before: only the parent knows whether another process of the run could have allocated on the device
//!   meanwhile, so the parent judges it (and ends the child by closing its stdin when the loss is the case's).
//! - A child started warm says [`READY_PREFIX`] and a [`Ready`] once its context exists, so the parent can start
//!   the processes a run will need before the cases that share a device begin.
//! - A child that dies, prints something unreadable or outlives the case's deadline costs that case a `crash` or
//!   `timeout` verdict; the parent kills it and starts a fresh one at the next case.

use crate::case::ast::Case;
use crate::record::CaseResult;
use serde::{Deserialize, Serialize};

/// Set (to the device ordinal the child uses) in a worker's environment: it tells the re-executed binary to serve
/// requests.
pub(super) const CHILD_DEVICE: &str = "CUDA_CONFORMANCE_CHILD_DEVICE";
/// Set for a child started warm: it creates its CUDA context before reading requests and says it is ready.
pub(super) const CHILD_WARM: &str = "CUDA_CONFORMANCE_CHILD_WARM";
/// Set for a child that runs the cases needing several devices: it creates a context on every device it sees at
/// once, so that a case's first use of a device does not look like memory it failed to release.
pub(super) const CHILD_ALL_DEVICES: &str = "CUDA_CONFORMANCE_CHILD_ALL_DEVICES";
/// Set for a child whose host threads block while they wait for the device (`cudaDeviceScheduleBlockingSync`), rather
/// than spin as cudart's default does with fewer contexts than cores (see [`super::HostWaits`]).
pub(super) const CHILD_BLOCKING_WAITS: &str = "CUDA_CONFORMANCE_CHILD_BLOCKING_WAITS";
/// Marks the line a warm child prints once its context exists.
pub(super) const READY_PREFIX: &str = "CUDA-CONFORMANCE-READY";
/// Marks the child's result lines, so that stray output (a driver message) cannot be mistaken for one.
pub(super) const RESULT_PREFIX: &str = "CUDA-CONFORMANCE-RESULT ";

/// One case for a worker to run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Request {
    /// The file the case is written in, as the parent loaded it (diagnostics and the result's `location` name it).
    pub file: String,
    /// The line of `file` that `text` starts at: the case's `case` line.
    pub first_line: u32,
    /// The case's lines as written, `case` to `end`.
    pub text: String,
    /// What the case's open delays are multiplied by (1: as written).
    pub gate_delay_scale: f64,
    /// The case is a sweep row whose prelude it may share with the previous row this child ran (see
    /// [`crate::exec::SharedRows`]): the child keeps the row's objects for the next such request, and stays even
    /// when the row leaves a sticky error; the parent ends it after the sweep's last row.
    #[serde(default)]
    pub shares_prelude: bool,
    /// The parent will not judge the device memory this case leaves (a process of the run could allocate on its
    /// device meanwhile): the child skips its two `cudaMemGetInfo` calls, which wait behind the driver's lock
    /// while another process creates its context (results/2026-11-27_phases_h100).
    #[serde(default)]
    pub skip_memory_check: bool,
}

impl Request {
    /// The request that runs `case` (parsed by the parent, which keeps its text) at `gate_delay_scale`.
    pub fn new(case: &Case, gate_delay_scale: f64) -> Request {
        Request {
            file: case.positions.file.clone(),
            first_line: case.positions.case_line,
            text: case.positions.text.clone(),
            gate_delay_scale,
            shares_prelude: false,
            skip_memory_check: false,
        }
    }

    /// The case this request carries, parsed and validated as its file would be.
    pub fn case(&self) -> Result<Case, String> {
        crate::case::parse_one(&self.file, self.first_line, &self.text).map_err(|diagnostics| {
            let lines: Vec<String> = diagnostics.iter().map(ToString::to_string).collect();
            lines.join("\n")
        })
    }
}

/// What a warm child says when its context exists: how long the driver's initialisation and the context took.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
pub struct Ready {
    pub init_ms: f64,
    pub context_ms: f64,
}

/// The child's answer to a [`Request`].
#[derive(Debug, Serialize, Deserialize)]
pub struct Reply {
    pub result: CaseResult,
    /// Why the child's context is no longer fit for another case (the child exits after this answer).
    pub dirty: Option<String>,
    #[serde(default)]
    pub memory: MemoryLoss,
}

/// How much less device memory was free after a case than before it, in MiB: on the child's own device, and the
/// most on any other device it sees.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryLoss {
    pub own_device_mib: u64,
    pub other_devices_mib: u64,
}

/// True in a worker started warm (its context created before its first case).
pub(super) fn started_warm() -> bool {
    std::env::var_os(CHILD_WARM).is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = "cases/area.case";

    fn two_cases() -> String {
        let case = |id: &str| {
            format!(
                "case area/{id}\n  rule: r\n  source: s\n  stream s blocking\n  k: sync s\n  \
                 expect k returned cudaSuccess\nend\n"
            )
        };
        format!("# a comment\n\n{}\n{}", case("first"), case("second"))
    }

    #[test]
    fn a_request_carries_its_case_with_the_lines_of_its_file() {
        let file = crate::case::parse_file(FILE, &two_cases()).unwrap_or_else(|d| panic!("{d:?}"));
        let second = &file.cases[1];
        assert_eq!(second.positions.case_line, 11);
        let request = Request::new(second, 0.1);
        assert_eq!(request.text.lines().next(), Some("case area/second"));
        assert_eq!(request.text.lines().last(), Some("end"));
        let json = serde_json::to_string(&request).unwrap_or_default();
        let sent: Request = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{e}: {json}"));
        let case = sent.case().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(&case, second);
        assert_eq!((case.positions.file.as_str(), case.positions.case_line), (FILE, 11));
        assert_eq!(case.positions.op_lines, second.positions.op_lines);
        assert_eq!(case.positions.expect_lines, second.positions.expect_lines);
    }

    #[test]
    fn an_invalid_case_is_diagnosed_at_its_line_of_the_file() {
        let file = crate::case::parse_file(FILE, &two_cases()).unwrap_or_else(|d| panic!("{d:?}"));
        let mut request = Request::new(&file.cases[1], 1.0);
        request.text = request.text.replace("k: sync s", "k: sync nowhere");
        let error = request.case().expect_err("an unknown stream");
        assert!(error.starts_with(&format!("{FILE}:15:")), "{error}");
    }

    #[test]
    fn a_request_holds_exactly_one_case() {
        let request = Request {
            file: FILE.into(),
            first_line: 1,
            text: two_cases(),
            gate_delay_scale: 1.0,
            shares_prelude: false,
            skip_memory_check: false,
        };
        let error = request.case().expect_err("two cases");
        assert!(error.contains("exactly one case, found 2"), "{error}");
    }
}
