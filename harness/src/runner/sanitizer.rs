//! `run --sanitizer TOOL`: every worker process runs under `compute-sanitizer --tool TOOL`, and each error the tool
//! reports is attributed to the case that was running and judged intended or not.
//!
//! - **Attribution.** Each worker process writes the tool's output to a log file of its own (`--log-file`). A
//!   worker runs one case at a time and is idle between them, so what the log gained from sending a case to
//!   reading its result (and a short grace after, for a report the tool's front end prints late) is that case's.
//! - **Intended errors.** An API error whose code the case's text names (an operation's `=> CODE`, `returned CODE`,
//!   `callback L status CODE`, `poisons-context: CODE`) is what the case asks for, not an error. A device error
//!   (memcheck's `Invalid __global__ write`, `Warp illegal address`, ...) is intended only in a case that faults
//!   the device on purpose and says so in its header: `poisons-context:` naming a fault's code (a fault kernel, or
//!   a call the driver answers with a context fault, such as a device-side launch of a host graph). An API error of
//!   a function the case calls with `=> any` (a sweep's `observe`, a row whose page lists no code) is what the case
//!   records, so intended too; so is the same code echoed afterwards by `cudaPeekAtLastError`/`cudaGetLastError`
//!   (the suite's own checks between operations make those calls). Anything else is unintended and fails the case.
//! - **Crashes.** The tool's `Error: process didn't terminate successfully` is the worker's crash, which the case's
//!   verdict already reports (*crash*); it is not a second error.
//! - **Serialisation.** The workers see the tool's injection ([`crate::device::serialising`]) and make the cases
//!   that need asynchrony *not-supported*.

use crate::case::ast::Case;
use crate::device::serialising::SANITIZER_TOOL_VAR;
use crate::record::verdict::VerdictKind;
use crate::record::{CaseResult, SanitizerError};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The tools `--sanitizer` takes.
pub const TOOLS: [&str; 4] = ["memcheck", "racecheck", "synccheck", "initcheck"];
/// Overrides where compute-sanitizer is looked for.
pub const EXECUTABLE_VAR: &str = "CUDA_CONFORMANCE_COMPUTE_SANITIZER";
/// The prefix of every line the tool prints.
const PREFIX: &str = "=========";
/// The most lines of detail kept per error.
const DETAIL_LINES: usize = 4;

/// The tool and the compute-sanitizer executable a run uses.
#[derive(Debug, Clone, PartialEq)]
pub struct SanitizerSpec {
    pub tool: String,
    pub executable: String,
}

impl SanitizerSpec {
    /// `tool` with compute-sanitizer found ([`EXECUTABLE_VAR`], `PATH`, the usual CUDA install folders), or why not.
    pub fn find(tool: &str) -> Result<SanitizerSpec, String> {
        if !TOOLS.contains(&tool) {
            return Err(format!("unknown sanitizer tool `{tool}`: expected one of {}", TOOLS.join(", ")));
        }
        let mut candidates: Vec<PathBuf> = std::env::var_os(EXECUTABLE_VAR).map(PathBuf::from).into_iter().collect();
        if let Some(path) = std::env::var_os("PATH") {
            candidates.extend(std::env::split_paths(&path).map(|d| d.join("compute-sanitizer")));
        }
        candidates.push("/usr/local/cuda/bin/compute-sanitizer".into());
        candidates.push("/usr/local/cuda/compute-sanitizer/compute-sanitizer".into());
        match candidates.iter().find(|p| p.is_file()) {
            Some(p) => Ok(SanitizerSpec { tool: tool.to_owned(), executable: p.display().to_string() }),
            None => Err(format!(
                "--sanitizer {tool}: compute-sanitizer is not installed (not on PATH, not in /usr/local/cuda); set \
                 {EXECUTABLE_VAR} to its path"
            )),
        }
    }

    /// The command that runs `exe` under the tool, its output going to `log`.
    pub fn command(&self, exe: &Path, log: &Path) -> Command {
        let mut command = Command::new(&self.executable);
        command
            .arg("--tool")
            .arg(&self.tool)
            // Every error, not the first 100 (the default): each is attributed to a case.
            .args(["--print-limit", "100000"])
            .arg("--log-file")
            .arg(log)
            .arg(exe)
            .env(SANITIZER_TOOL_VAR, &self.tool);
        command
    }
}

/// A fresh log file name for a worker process (this process's id and a counter keep them apart).
pub fn log_path() -> PathBuf {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    std::env::temp_dir().join(format!("cuda-conformance-sanitizer-{}-{n}.log", std::process::id()))
}

/// The errors in the tool's output `text`: each starts at an unindented line after the prefix, its indented lines
/// follow. The banner and the summaries are not errors.
pub fn parse(text: &str) -> Vec<(String, Vec<String>)> {
    let mut errors: Vec<(String, Vec<String>)> = Vec::new();
    let mut open = false;
    for line in text.lines() {
        let Some(rest) = line.strip_prefix(PREFIX) else { continue };
        let body = rest.strip_prefix(' ').unwrap_or(rest);
        if body.trim().is_empty() {
            open = false;
        } else if body.starts_with(' ') {
            if let (true, Some((_, detail))) = (open, errors.last_mut()) {
                if detail.len() < DETAIL_LINES {
                    detail.push(body.trim().to_owned());
                }
            }
        } else if is_banner(body) {
            open = false;
        } else {
            errors.push((body.trim().to_owned(), Vec::new()));
            open = true;
        }
    }
    errors
}

fn is_banner(body: &str) -> bool {
    ["COMPUTE-SANITIZER", "ERROR SUMMARY", "RACECHECK SUMMARY", "LEAK SUMMARY", "Target application returned"]
        .iter()
        .any(|b| body.starts_with(b))
}

/// What the tool prints when the process it watches dies (a worker's crash).
const CRASH_HEADLINE: &str = "Error: process didn't terminate successfully";

/// The function an API error line names (`... on CUDA API call to cudaStreamQuery.`), if it is one.
fn api_error_function(headline: &str) -> Option<&str> {
    let (_, rest) = headline.split_once("on CUDA API call to ")?;
    let name = rest.trim_end_matches('.');
    name.starts_with("cuda").then_some(name)
}

/// The cudaError code of an API error line (`Program hit cudaErrorNotReady (error 600) ...`), if it is one. A
/// driver API error that cudart's own calls hit (`Program hit CUDA_ERROR_NO_BINARY_FOR_GPU (error 209) ... on CUDA
/// API call to cuLibraryGetKernel.`, when a launch loads a module that has no code for the device) is the runtime
/// code of the same number, which the runtime returns for it: the runtime's codes carry the driver's numbers
/// (driver_types.h and cuda.h: cudaErrorNoKernelImageForDevice and CUDA_ERROR_NO_BINARY_FOR_GPU are both 209,
/// cudaErrorInvalidPtx and CUDA_ERROR_INVALID_PTX 218).
fn api_error_code(headline: &str) -> Option<String> {
    let rest = headline.strip_prefix("Program hit ")?;
    let word = rest.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).next()?;
    if word.starts_with("cudaError") {
        return Some(word.to_owned());
    }
    if !word.starts_with("CUDA_ERROR_") {
        return None;
    }
    let number: u32 = rest.split_once("(error ")?.1.split(')').next()?.trim().parse().ok()?;
    cuda_sys::cudaError(number).name().filter(|n| n.starts_with("cudaError")).map(str::to_owned)
}

/// Every `cudaError...` word of the case's text: the codes it expects some call to return.
fn expected_codes(case: &Case) -> Vec<&str> {
    let mut codes: Vec<&str> = case
        .positions
        .text
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| w.starts_with("cudaError"))
        .collect();
    codes.extend(case.poisons.iter().map(String::as_str));
    codes
}

/// Whether `case` declares in its header that it faults the device on purpose: `poisons-context:` naming a code
/// other than `cudaSuccess` (the sticky error a fault leaves). A fault kernel is one way; a call the driver answers
/// by faulting the context is another (`device-graph-launch/host-graph-cannot-be-launched-from-the-device`: the
/// device runtime's own code takes the illegal address, which memcheck reports as `Warp illegal address`).
fn declares_fault(case: &Case) -> bool {
    case.poisons.iter().any(|code| code != "cudaSuccess")
}

/// The functions the case calls with `=> any`: it records whatever they return.
fn observed_functions(case: &Case) -> Vec<&'static str> {
    case.script
        .iter()
        .filter(|op| op.expect.iter().any(|c| c == "any"))
        .flat_map(|op| op.kind.cudart_calls(&case.decls))
        .collect()
}

/// `errors` judged for `case`.
pub fn judge(case: &Case, tool: &str, errors: Vec<(String, Vec<String>)>) -> Vec<SanitizerError> {
    let codes = expected_codes(case);
    let observed = observed_functions(case);
    // The codes of intended API errors so far: a last-error call that returns one of them echoes that error.
    let mut intended_codes: Vec<String> = Vec::new();
    errors
        .into_iter()
        .map(|(headline, detail)| {
            let function = api_error_function(&headline);
            let code = api_error_code(&headline);
            let (intended, why) = match code.as_deref() {
                Some(code) if codes.contains(&code) => (true, format!("the case expects {code}")),
                Some(code) if function.is_some_and(|f| observed.contains(&f)) => {
                    (true, format!("the case records what {} returns (=> any): {code}", function.unwrap_or_default()))
                }
                Some(code)
                    if function.is_some_and(crate::api::reads_last_error)
                        && intended_codes.iter().any(|c| c == code) =>
                {
                    (true, format!("the last error echoes an earlier intended {code}"))
                }
                Some(code) => (false, format!("an API error the case does not expect ({code})")),
                None if declares_fault(case) => {
                    (true, "the case faults the device on purpose (its header: poisons-context)".to_owned())
                }
                None => (false, format!("a {tool} error in a case that provokes none")),
            };
            if let (true, Some(code)) = (intended, code) {
                intended_codes.push(code);
            }
            SanitizerError { headline, detail, intended, why }
        })
        .collect()
}

/// Records `errors` in `result`: an unintended one fails the case (unless it failed already in another way).
pub fn apply(result: &mut CaseResult, tool: &str, mut errors: Vec<SanitizerError>) {
    if result.verdict.kind == VerdictKind::Crash {
        for e in errors.iter_mut().filter(|e| e.headline.starts_with(CRASH_HEADLINE)) {
            e.intended = true;
            e.why = "the worker's crash, which the case's verdict reports".to_owned();
        }
    }
    let unintended: Vec<&SanitizerError> = errors.iter().filter(|e| !e.intended).collect();
    if let Some(first) = unintended.first() {
        let message = format!(
            "compute-sanitizer {tool}: {} unintended error(s); the first: {} ({})",
            unintended.len(),
            first.headline,
            first.why
        );
        if !result.verdict.kind.is_failure() {
            result.verdict.kind = VerdictKind::Fail;
            result.verdict.variant = None;
        }
        result.verdict.messages.push(message);
    }
    result.sanitizer.extend(errors);
}

#[cfg(test)]
mod tests {
    use super::*;

    const OUTPUT: &str = "========= COMPUTE-SANITIZER\n\
        ========= Program hit cudaErrorNotReady (error 600) due to \"device not ready\" on CUDA API call to cudaStreamQuery.\n\
        =========     Saved host backtrace up to driver entry point at error\n\
        =========         Host Frame: cudaStreamQuery\n\
        =========\n\
        ========= Invalid __global__ write of size 4 bytes\n\
        =========     at cc_fault+0x30\n\
        =========     by thread (0,0,0) in block (0,0,0)\n\
        =========\n\
        ========= ERROR SUMMARY: 2 errors\n";

    fn case(text: &str) -> Case {
        crate::case::parse_file("area.case", text).unwrap_or_else(|d| panic!("{d:?}")).cases.remove(0)
    }

    /// What memcheck printed for `execution/kernel-without-an-image-for-the-device` on the H100: cudart's own driver
    /// call failing inside the launch.
    const DRIVER_ERROR: &str = "========= Program hit CUDA_ERROR_NO_BINARY_FOR_GPU (error 209) due to \"no kernel \
        image is available for execution on the device\" on CUDA API call to cuLibraryGetKernel.\n\
        =========\n";

    #[test]
    fn a_driver_error_is_the_runtime_code_of_its_number() {
        let errors = parse(DRIVER_ERROR);
        assert_eq!(api_error_code(&errors[0].0).as_deref(), Some("cudaErrorNoKernelImageForDevice"));
        let expecting = case(
            "case area/n\n  rule: r\n  source: s\n  stream s blocking\n  \
             k: sync s => cudaSuccess | cudaErrorNoKernelImageForDevice\nend\n",
        );
        assert!(judge(&expecting, "memcheck", parse(DRIVER_ERROR))[0].intended);
        let not_expecting = case("case area/m\n  rule: r\n  source: s\n  stream s blocking\n  k: sync s\nend\n");
        let judged = judge(&not_expecting, "memcheck", parse(DRIVER_ERROR));
        assert!(!judged[0].intended && judged[0].why.contains("cudaErrorNoKernelImageForDevice"), "{judged:?}");
    }

    #[test]
    fn errors_are_parsed_without_banner_or_summary() {
        let errors = parse(OUTPUT);
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert!(errors[0].0.starts_with("Program hit cudaErrorNotReady"));
        assert_eq!(errors[0].1.len(), 2);
        assert_eq!(errors[1].0, "Invalid __global__ write of size 4 bytes");
        assert_eq!(api_error_code(&errors[0].0).as_deref(), Some("cudaErrorNotReady"));
        assert_eq!(api_error_code(&errors[1].0), None);
        assert!(parse("========= COMPUTE-SANITIZER\n========= ERROR SUMMARY: 0 errors\n").is_empty());
    }

    #[test]
    fn expected_codes_and_declared_faults_are_intended_and_nothing_else() {
        let querying = case(
            "case area/q\n  rule: r\n  source: s\n  stream s blocking\n  gate g\n  launch gate g on s\n  \
             q: query s => cudaErrorNotReady\n  open g\n  sync s\nend\n",
        );
        let judged = judge(&querying, "memcheck", parse(OUTPUT));
        assert!(judged[0].intended, "{judged:?}");
        assert!(!judged[1].intended && judged[1].why.contains("provokes none"), "{judged:?}");
        let faulting = case(
            "case area/f\n  rule: r\n  source: s\n  poisons-context: cudaErrorIllegalAddress\n  stream s blocking\n  \
             launch fault illegal-address on s\n  k: sync s => cudaErrorIllegalAddress\nend\n",
        );
        let judged = judge(&faulting, "memcheck", parse(OUTPUT));
        assert!(!judged[0].intended, "a code the case does not name: {judged:?}");
        assert!(judged[1].intended, "{judged:?}");
        // No fault kernel: a call the driver may answer by faulting the context, declared in the header.
        let declared = |poisons: &str| {
            case(&format!(
                "case area/d\n  rule: r\n  source: s\n  poisons-context: {poisons}\n  stream s blocking\n  \
                 k: sync s => cudaSuccess | cudaErrorIllegalAddress\nend\n"
            ))
        };
        let judged = judge(&declared("cudaSuccess | cudaErrorIllegalAddress"), "memcheck", parse(OUTPUT));
        assert!(judged[1].intended && judged[1].why.contains("poisons-context"), "{judged:?}");
        let judged = judge(&declared("cudaSuccess"), "memcheck", parse(OUTPUT));
        assert!(!judged[1].intended, "a clean context declares no fault: {judged:?}");
    }

    #[test]
    fn errors_of_observed_calls_and_their_last_error_echoes_are_intended() {
        let output = "========= Program hit cudaErrorInvalidValue (error 1) due to \"invalid argument\" on CUDA API call to cudaMemGetInfo.\n\
            ========= Program hit cudaErrorInvalidValue (error 1) due to \"invalid argument\" on CUDA API call to cudaPeekAtLastError.\n\
            ========= Program hit cudaErrorNotReady (error 600) due to \"device not ready\" on CUDA API call to cudaGetLastError.\n";
        let observing = case("case area/o\n  rule: r\n  source: s\n  m: call cudaMemGetInfo => any\nend\n");
        let judged = judge(&observing, "memcheck", parse(output));
        assert!(judged[0].intended && judged[0].why.contains("cudaMemGetInfo"), "{judged:?}");
        assert!(judged[1].intended && judged[1].why.contains("echoes"), "{judged:?}");
        assert!(!judged[2].intended, "a last error no intended call set: {judged:?}");
        let asserting = case("case area/a\n  rule: r\n  source: s\n  m: call cudaMemGetInfo\nend\n");
        let judged = judge(&asserting, "memcheck", parse(output));
        assert!(judged.iter().all(|e| !e.intended), "{judged:?}");
    }

    #[test]
    fn the_tools_crash_report_is_the_crash_verdict_not_another_error() {
        let c = case("case area/c\n  rule: r\n  source: s\n  stream s blocking\n  k: sync s\nend\n");
        let crash = "========= Error: process didn't terminate successfully\n";
        let mut result = CaseResult::new(
            &c,
            crate::runner::one_case::verdict_of(VerdictKind::Crash, "signal 11".to_owned()),
            None,
            std::time::Duration::ZERO,
        );
        apply(&mut result, "memcheck", judge(&c, "memcheck", parse(crash)));
        assert!(result.sanitizer.iter().all(|e| e.intended), "{:?}", result.sanitizer);
        let mut passed = CaseResult::new(
            &c,
            crate::runner::one_case::verdict_of(VerdictKind::Pass, String::new()),
            None,
            std::time::Duration::ZERO,
        );
        apply(&mut passed, "memcheck", judge(&c, "memcheck", parse(crash)));
        assert_eq!(passed.verdict.kind, VerdictKind::Fail, "a crash the verdict does not report is an error");
    }

    #[test]
    fn an_unintended_error_fails_the_case() {
        let c = case("case area/p\n  rule: r\n  source: s\n  stream s blocking\n  k: sync s\n  expect k returned cudaSuccess\nend\n");
        let verdict = crate::runner::one_case::verdict_of(VerdictKind::Pass, String::new());
        let mut result = CaseResult::new(&c, verdict, None, std::time::Duration::ZERO);
        apply(&mut result, "initcheck", judge(&c, "initcheck", parse(OUTPUT)));
        assert_eq!(result.verdict.kind, VerdictKind::Fail);
        assert_eq!(result.sanitizer.len(), 2);
        assert!(result.verdict.messages.last().unwrap().contains("2 unintended"), "{:?}", result.verdict);
        assert!(SanitizerSpec::find("helgrind").unwrap_err().contains("unknown sanitizer tool"));
    }
}
