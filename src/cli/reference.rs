//! `reference --out DIR`: the rules reference as a static site (harness::report::reference), from the cases and the
//! reports given.

use super::cases::load;
use super::status::{Outcome, Status};
use harness::record::Report;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct ReferenceCmd {
    /// The folder to write index.html and one page per area into (made if missing).
    #[arg(long)]
    out: PathBuf,
    /// Reports whose verdicts the pages show, one column per (GPU, driver, runtime), e.g. the committed ones under
    /// results/ (gunzipped).
    #[arg(long = "report")]
    reports: Vec<PathBuf>,
    /// The findings pages (results/findings: `<slug>.json` and the `<slug>.md` written by `findings`): copied into
    /// OUT/findings/, and each case with one links to it.
    #[arg(long)]
    findings: Option<PathBuf>,
}

impl ReferenceCmd {
    pub fn exec(self, dir: &Path) -> Outcome {
        let cases = load(dir)?;
        let reports = self.reports.iter().map(|p| Report::read(p)).collect::<Result<Vec<_>, _>>()?;
        std::fs::create_dir_all(&self.out).map_err(|e| format!("{}: cannot create: {e}", self.out.display()))?;
        let mut links = Vec::new();
        if let Some(dir) = &self.findings {
            let list = super::findings::read_findings(dir)?;
            let copies = self.out.join("findings");
            std::fs::create_dir_all(&copies).map_err(|e| format!("{}: cannot create: {e}", copies.display()))?;
            for (slug, _) in &list {
                let page = dir.join(format!("{slug}.md"));
                std::fs::copy(&page, copies.join(format!("{slug}.md"))).map_err(|e| {
                    format!("{}: cannot copy ({e}); `cuda-conformance findings` writes it", page.display())
                })?;
            }
            links = harness::report::findings::links(&list, "findings/");
        }
        let pages = harness::report::reference::site_with_findings(&cases, &reports, &links);
        for page in &pages {
            let path = self.out.join(&page.file);
            harness::record::write_atomic(&path, page.html.as_bytes())
                .map_err(|e| format!("{}: cannot write: {e}", path.display()))?;
        }
        eprintln!("wrote {} pages ({} cases) into {}", pages.len(), cases.len(), self.out.display());
        Ok(Status::Ok)
    }
}
