//! `check` and `list`: the case files, with no GPU.

use super::output::emit;
use super::run::TierName;
use super::status::{Outcome, Status};
use harness::case::ast::Case;
use harness::runner::select::select_tier;
use std::io::Write as _;
use std::path::Path;

#[derive(clap::Args)]
pub struct ListCmd {
    filter: Option<String>,
    #[arg(long, value_enum, default_value_t = TierName::Full)]
    tier: TierName,
}

/// The cases under `dir`; on invalid files, every diagnostic printed and the count as the message.
pub fn load(dir: &Path) -> Result<Vec<Case>, String> {
    harness::case::suite::load_dir(dir).map_err(|diagnostics| {
        for d in &diagnostics {
            eprintln!("{d}");
        }
        format!("{} problem(s) in the case files under {}", diagnostics.len(), dir.display())
    })
}

/// `check`: valid cases can still check less than they say; the weak-case lint (harness::case::lint) fails CI.
pub fn check(dir: &Path) -> Outcome {
    let cases = load(dir)?;
    let warnings = harness::case::lint::lint_all(&cases);
    for w in &warnings {
        eprintln!("{w}");
    }
    let line = if warnings.is_empty() {
        format!("{} cases in {}: all valid, no weak checks", cases.len(), dir.display())
    } else {
        format!("{} cases in {}: all valid, {} weak check(s)", cases.len(), dir.display(), warnings.len())
    };
    // The verdict is the lint's: stdout trouble is reported by `emit` but does not change it.
    emit(&format!("{line}\n"));
    Ok(Status::failed_if(!warnings.is_empty()))
}

impl ListCmd {
    pub fn exec(self, dir: &Path) -> Outcome {
        let cases = load(dir)?;
        let mut out = std::io::stdout().lock();
        for case in select_tier(&cases, self.tier.tier(), self.filter.as_deref(), None) {
            // A closed pipe (`list | head`) ends the listing quietly.
            if writeln!(out, "{:<60} {}", case.id, case.rule).is_err() {
                break;
            }
        }
        Ok(Status::Ok)
    }
}
