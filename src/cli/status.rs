//! The exit status of every command, decided here only: each command returns a [`Status`] (or a message, which
//! `main` prints and turns into [`Status::Unable`]), and only [`Status::code`] makes it a number. The deploy scripts
//! (Slurm, Kubernetes) and the fleet merge key off these numbers.

use std::process::ExitCode;

/// What a command's end means, per command:
///
/// | status | code | `run`, `seeds` | `check` | `compare` | `fleet` | the other commands |
/// |---|---|---|---|---|---|---|
/// | `Ok` | 0 | no case failed (flakes, variants and claims do not count) | all valid, no weak check | no regression | every task as expected | done |
/// | `Failed` | 1 | a fail, crash, timeout or unexpected pass | a weak check | a regression in NEW | deviations, failures, duplicates or unexpected reports | — |
/// | `Disagreed` | 3 | no case failed, but with `--executor both` the Rust and C++ executors disagree on a case (a bug in one of them, or a real non-determinism: see the report) | — | — | — | — |
/// | `Unable` | 2 | could not run (no driver, no device, invalid case files, a bad option; a could-not-run report is written), or the report could not be written | invalid case files | a report unreadable | missing, could-not-run or incomplete tasks, or nothing to merge | a bad option, an unreadable input, an output that cannot be written, no device (`measure`, `info`) |
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Ok,
    Failed,
    Unable,
    /// `run --executor both`: the executors disagree on a case. Its own code, because it says the suite's
    /// machinery is wrong (one executor has a bug) where `Failed` says the GPU is; a failed case still makes a run
    /// `Failed`, which the fleet scripts key off.
    Disagreed,
}

impl Status {
    pub fn code(self) -> ExitCode {
        ExitCode::from(match self {
            Status::Ok => 0,
            Status::Failed => 1,
            Status::Unable => 2,
            Status::Disagreed => 3,
        })
    }

    /// `Ok` when nothing failed, else `Failed`.
    pub fn failed_if(failed: bool) -> Status {
        if failed {
            Status::Failed
        } else {
            Status::Ok
        }
    }
}

/// What a command's run function returns: its status, or a message for stderr that makes the status `Unable`.
pub type Outcome = Result<Status, String>;

/// The status of `outcome`, its message printed.
pub fn status_of(outcome: Outcome) -> Status {
    outcome.unwrap_or_else(|message| {
        eprintln!("{message}");
        Status::Unable
    })
}
