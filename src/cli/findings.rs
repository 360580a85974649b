//! `findings`: the findings pages (harness::report::findings) from their data files, the committed reports and each
//! case's reproducer, which the `repro` subcommand of this same binary writes.

use super::cases::load;
use super::status::{Outcome, Status};
use harness::record::Report;
use harness::report::findings::{self, Finding, Reproducer};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct FindingsCmd {
    /// The findings' data files (`<slug>.json`: title, cases, the documentation's sentences, reports).
    #[arg(long, default_value = "results/findings")]
    data: PathBuf,
    /// Where to write `<slug>.md` and the index `README.md` (default: beside the data files).
    #[arg(long)]
    out: Option<PathBuf>,
    /// The folder the data files' report paths are relative to (the repository root).
    #[arg(long, default_value = ".")]
    root: PathBuf,
}

impl FindingsCmd {
    pub fn exec(self, dir: &Path) -> Outcome {
        let cases = load(dir)?;
        let list = read_findings(&self.data)?;
        if list.is_empty() {
            return Err(format!("{}: no finding data files (<slug>.json)", self.data.display()));
        }
        let mut reports: BTreeMap<String, Report> = BTreeMap::new();
        for path in list.iter().flat_map(|(_, f)| &f.reports) {
            if !reports.contains_key(path) {
                reports.insert(path.clone(), Report::read(&self.root.join(path))?);
            }
        }
        let out = self.out.clone().unwrap_or_else(|| self.data.clone());
        std::fs::create_dir_all(&out).map_err(|e| format!("{}: cannot create: {e}", out.display()))?;
        for (slug, finding) in &list {
            let file = self.data.join(format!("{slug}.json"));
            for id in &finding.cases {
                if !cases.iter().any(|c| &c.id == id) {
                    return Err(format!("{}: case `{id}` is not in {}", file.display(), dir.display()));
                }
            }
            let Some(case) = finding.cases.first().and_then(|id| cases.iter().find(|c| &c.id == id)) else {
                return Err(format!("{}: `cases` is empty", file.display()));
            };
            let read: Vec<(String, Report)> =
                finding.reports.iter().filter_map(|p| Some((p.clone(), reports.get(p)?.clone()))).collect();
            if findings::seen_configurations(finding, &read).is_empty() {
                return Err(format!("{}: none of its reports ran its cases", file.display()));
            }
            let text = findings::page(finding, case, &read, &reproducer(case)?);
            write(&out.join(format!("{slug}.md")), &text)?;
        }
        // The reproducers' shared header, once for every page (each links to it).
        write(
            &out.join(harness::repro::HEADER_NAME),
            &harness::repro::header_with(&cuda_conformance::kernel_image::embedded_other_images()),
        )?;
        write(&out.join("README.md"), &findings::index(&list, &reports))?;
        eprintln!("wrote {} finding page(s) and the index into {}", list.len(), out.display());
        Ok(Status::Ok)
    }
}

/// Every `<slug>.json` of `data`, sorted by slug; a bad file is an error naming its line and column.
pub fn read_findings(data: &Path) -> Result<Vec<(String, Finding)>, String> {
    let entries = std::fs::read_dir(data).map_err(|e| format!("{}: cannot read: {e}", data.display()))?;
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.retain(|p| p.extension().is_some_and(|e| e == "json"));
    paths.sort();
    paths
        .iter()
        .map(|path| {
            let text = std::fs::read_to_string(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
            let finding: Finding = serde_json::from_str(&text).map_err(|e| {
                format!(
                    "{}:{}:{}: not a finding ({e}); expected title, cases, documentation, driver_did, reports",
                    path.display(),
                    e.line(),
                    e.column()
                )
            })?;
            let slug = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
            Ok((slug, finding))
        })
        .collect()
}

/// The reproducer of `case` as `cuda-conformance repro` writes it: its program and the shared header.
fn reproducer(case: &harness::case::ast::Case) -> Result<Reproducer, String> {
    let program = harness::repro::program(case).map_err(|e| e.to_string())?;
    Ok(Reproducer {
        program: program.source,
        header: harness::repro::header_with(&cuda_conformance::kernel_image::embedded_other_images()),
        header_name: harness::repro::HEADER_NAME.to_owned(),
    })
}

fn write(path: &Path, text: &str) -> Result<(), String> {
    harness::record::write_atomic(path, text.as_bytes()).map_err(|e| format!("{}: cannot write: {e}", path.display()))
}
