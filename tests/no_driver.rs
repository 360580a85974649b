//! The `no-driver` sweep (cases/api.case, `requires: no-driver`): on a host without an NVIDIA driver, every row's
//! call is made through the API table's caller with no case around it (`harness::exec::call_bare`) and its code
//! judged against the row's. One trial per row. CI's CPU machine has no driver, so this is where the sweep runs;
//! on a host with a driver every trial is ignored, saying so (there the runner reports the rows not-supported).

use harness::case::ast::{OpKind, Requirement};
use libtest_mimic::{Arguments, Failed, Trial};
use std::path::Path;

fn main() {
    let args = Arguments::from_args();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("cases");
    let cases = match harness::case::suite::load_dir(&dir) {
        Ok(cases) => cases,
        Err(errors) => {
            for e in errors {
                eprintln!("{e}");
            }
            std::process::exit(2);
        }
    };
    let mut version = 0;
    // SAFETY: a valid out-pointer. Without a driver this is cudaSuccess with 0, which is what the rows need.
    let driver = unsafe { cuda_sys::cudaDriverGetVersion(&mut version) };
    let has_driver = driver != cuda_sys::cudaError::cudaSuccess || version != 0;
    let trials = cases
        .into_iter()
        .filter(|c| c.requires.contains(&Requirement::NoDriver))
        .map(|case| {
            let name = case.id.clone();
            let trial = Trial::test(name, move || run(&case));
            if has_driver {
                trial.with_ignored_flag(true)
            } else {
                trial
            }
        })
        .collect::<Vec<_>>();
    if has_driver {
        eprintln!("no_driver: this host has an NVIDIA driver (cudaDriverGetVersion: {driver}, {version}): the no-driver rows are ignored");
    }
    libtest_mimic::run(&args, trials).exit();
}

/// Every operation of the row's case, in order: each must be a call the bare caller can make, returning a code
/// the operation accepts.
fn run(case: &harness::case::ast::Case) -> Result<(), Failed> {
    for (i, op) in case.script.iter().enumerate() {
        let line = case.positions.op_lines.get(i).copied().unwrap_or(0);
        let OpKind::Call(call) = &op.kind else {
            return Err(format!("line {line}: a no-driver case may only `call` (no declared objects)").into());
        };
        if let Some((why, _)) = &call.unresolved {
            // A build against an older header than the suite's lacks this function: nothing to call.
            println!("{}: line {line}: {} not in this build's header ({why})", case.id, call.function);
            continue;
        }
        let kernels = cuda_conformance::kernel_table();
        let code = harness::exec::call_bare(call, &kernels).map_err(|e| format!("line {line}: {e}"))?.0.to_string();
        let accepted: Vec<&str> =
            if op.expect.is_empty() { vec!["cudaSuccess"] } else { op.expect.iter().map(String::as_str).collect() };
        if !accepted.contains(&"any") && !accepted.contains(&code.as_str()) {
            return Err(format!(
                "line {line}: `call {}` returned {code}, expected {}",
                call.text(),
                accepted.join(" | ")
            )
            .into());
        }
        println!("{}: line {line}: {} returned {code}", case.id, call.function);
    }
    Ok(())
}
