//! `coverage`: which cudart functions the cases call, which return codes they assert, and which documented codes no
//! case has seen (harness::report::coverage). Needs no GPU; the header is the build's toolkit's by default.

use super::cases::load;
use super::output::write_outputs;
use super::status::Outcome;
use harness::record::Report;
use harness::report::coverage::{coverage, coverage_of_table, html, markdown, parse_unreachable};
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct CoverageCmd {
    /// Reports of runs whose returned codes count as seen (besides the codes the cases assert).
    #[arg(long = "report")]
    reports: Vec<PathBuf>,
    /// The `cuda_runtime_api.h` whose functions and documented return codes are the rows (default: the one the
    /// bindings of this binary were generated from).
    #[arg(long)]
    header: Option<PathBuf>,
    #[arg(long)]
    markdown: Option<PathBuf>,
    #[arg(long)]
    json: Option<PathBuf>,
    /// One self-contained HTML page.
    #[arg(long)]
    html: Option<PathBuf>,
}

impl CoverageCmd {
    pub fn exec(self, dir: &Path) -> Outcome {
        let cases = load(dir)?;
        let reports = self.reports.iter().map(|p| Report::read(p)).collect::<Result<Vec<_>, _>>()?;
        let c = match &self.header {
            // Another header: its own functions and return lists, without the platform dispositions.
            Some(header) => {
                let text = std::fs::read_to_string(header).map_err(|e| {
                    format!(
                        "{}: cannot read the header: {e} (name a cuda_runtime_api.h with --header)",
                        header.display()
                    )
                })?;
                let c = coverage(&cases, &text, &reports);
                if c.functions.iter().all(|f| !f.in_header) {
                    return Err(format!(
                        "{}: no cudart function declarations found; is it cuda_runtime_api.h?",
                        header.display()
                    ));
                }
                c
            }
            // The API table of this build, and the codes `cases/unreachable.txt` says no run here can produce.
            None => {
                let file = dir.join("unreachable.txt");
                let rules = match std::fs::read_to_string(&file) {
                    Ok(text) => parse_unreachable(&file.display().to_string(), &text)?,
                    Err(_) => Vec::new(),
                };
                coverage_of_table(&cases, &reports, &rules)
            }
        };
        write_outputs([
            (self.markdown.as_deref(), &|| markdown(&c)),
            (self.json.as_deref(), &|| serde_json::to_string_pretty(&c).expect("coverage serialises") + "\n"),
            (self.html.as_deref(), &|| html(&c)),
        ])
    }
}
