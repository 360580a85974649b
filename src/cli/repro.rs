//! `repro ID|FILTER --out DIR`: each selected case as a standalone CUDA C++ program (harness::repro), plus the one
//! header they include. `--judge DIR` instead judges what such programs printed, with the suite's verdict code.

use super::cases::load;
use super::status::{Outcome, Status};
use harness::record::observations::Observations;
use harness::runner::select::{select_tier, Tier};
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct ReproCmd {
    /// The case id, or a filter (the cases whose id contains it), as `run` selects them.
    filter: String,
    /// The folder to write `<id with / as __>.cu` per case and the shared header into (made if missing).
    #[arg(long, required_unless_present = "judge")]
    out: Option<PathBuf>,
    /// Judge instead: read `<stem>.json` (a reproducer's last stdout line) from this folder for each selected case
    /// and print one JSON line per case with its verdict, variant and observe picks (cases without a file are
    /// left out).
    #[arg(long, conflicts_with = "out")]
    judge: Option<PathBuf>,
}

impl ReproCmd {
    pub fn exec(self, dir: &Path) -> Outcome {
        let cases = load(dir)?;
        let selected = select_tier(&cases, Tier::Full, Some(&self.filter), None);
        if selected.is_empty() {
            return Err(format!("no case id contains {:?}", self.filter));
        }
        if let Some(judge) = &self.judge {
            return judge_all(&selected, judge);
        }
        let out = self.out.as_ref().ok_or("--out DIR is required")?;
        std::fs::create_dir_all(out).map_err(|e| format!("{}: cannot create: {e}", out.display()))?;
        let header = out.join(harness::repro::HEADER_NAME);
        std::fs::write(&header, harness::repro::header_with(&cuda_conformance::kernel_image::embedded_other_images()))
            .map_err(|e| format!("{}: {e}", header.display()))?;
        let mut failed = Vec::new();
        for case in &selected {
            match harness::repro::program(case) {
                Ok(p) => {
                    let path = out.join(format!("{}.cu", p.file_stem));
                    std::fs::write(&path, &p.source).map_err(|e| format!("{}: {e}", path.display()))?;
                    println!("{}: {}", case.id, path.display());
                }
                Err(e) => {
                    println!("{}: not written: {e}", case.id);
                    failed.push(e.to_string());
                }
            }
        }
        if failed.is_empty() {
            eprintln!(
                "wrote {} reproducer(s) and {} into {}",
                selected.len(),
                harness::repro::HEADER_NAME,
                out.display()
            );
            Ok(Status::Ok)
        } else {
            for f in &failed {
                eprintln!("{f}");
            }
            Err(format!("{} of {} case(s) could not be written as C++", failed.len(), selected.len()))
        }
    }
}

/// Prints `{"id", "verdict", "variant", "observed"}` for each case whose observations file exists.
fn judge_all(selected: &[&harness::case::ast::Case], dir: &Path) -> Outcome {
    let mut unreadable = 0;
    for case in selected {
        let path = dir.join(format!("{}.json", harness::repro::file_stem(&case.id)));
        let Ok(text) = std::fs::read_to_string(&path) else { continue };
        let line = text.lines().rev().find(|l| !l.trim().is_empty()).unwrap_or("");
        match serde_json::from_str::<Observations>(line) {
            Ok(obs) => {
                let verdict = harness::readings::verdict::judge(case, &obs);
                let json = serde_json::json!({ "id": case.id, "verdict": verdict });
                println!("{json}");
            }
            Err(e) => {
                unreadable += 1;
                println!("{}", serde_json::json!({ "id": case.id, "error": e.to_string() }));
            }
        }
    }
    Ok(Status::failed_if(unreadable > 0))
}
