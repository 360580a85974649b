//! `matrix` and `fleet`: many reports merged into one view.

use super::output::write_outputs;
use super::status::{Outcome, Status};
use harness::record::Report;
use harness::report::baseline::Baseline;
use harness::report::fleet::{self, Expected, FleetMerge, Reference};
use harness::report::matrix::MatrixBuilder;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct MatrixCmd {
    #[arg(required = true)]
    reports: Vec<PathBuf>,
    #[arg(long)]
    markdown: Option<PathBuf>,
    #[arg(long)]
    json: Option<PathBuf>,
    /// One self-contained HTML page (no network needed to view it).
    #[arg(long)]
    html: Option<PathBuf>,
    /// The findings' data files (e.g. results/findings): each case with a findings page links to it, at the
    /// folder's path from the repository root (`/results/findings/<slug>.md`).
    #[arg(long)]
    findings: Option<PathBuf>,
}

impl MatrixCmd {
    pub fn exec(self) -> Outcome {
        let mut builder = MatrixBuilder::default();
        let mut first_error = None;
        read_streaming(&self.reports, |_, read| match read {
            Ok(r) => builder.add(&r),
            Err(e) => {
                first_error.get_or_insert(e);
            }
        });
        if let Some(e) = first_error {
            return Err(e);
        }
        let mut m = builder.finish();
        if let Some(dir) = &self.findings {
            let base = format!("/{}/", dir.display().to_string().trim_start_matches("./").trim_matches('/'));
            m.link_findings(&harness::report::findings::links(&super::findings::read_findings(dir)?, &base));
        }
        write_outputs([
            (self.markdown.as_deref(), &|| m.markdown()),
            (self.json.as_deref(), &|| m.json()),
            (self.html.as_deref(), &|| m.html()),
        ])
    }
}

#[derive(clap::Args)]
pub struct FleetCmd {
    /// Report files, or folders whose *.json and *.json.gz files are read.
    #[arg(required = true)]
    reports: Vec<PathBuf>,
    /// The expected tasks: a count N (task ids 0 to N-1) or ids and ranges as in `sbatch --array`, e.g. 0-7,9.
    #[arg(long, conflicts_with = "nodes")]
    tasks: Option<String>,
    /// The expected nodes, in Slurm's hostlist syntax (`n[1-4],gpu07`), or @FILE with names one per line.
    #[arg(long)]
    nodes: Option<String>,
    /// Merge only the reports of this job: the Slurm array job id (or job id), or the Kubernetes Job's name.
    #[arg(long)]
    job: Option<String>,
    /// Compare each report with this baseline's section for its GPU, driver and runtime instead of with the
    /// majority of its GPU model.
    #[arg(long)]
    baseline: Option<PathBuf>,
    #[arg(long)]
    markdown: Option<PathBuf>,
    #[arg(long)]
    json: Option<PathBuf>,
    /// The semantics matrix of the reports that ran, as one self-contained HTML page.
    #[arg(long)]
    html: Option<PathBuf>,
}

impl FleetCmd {
    /// Reads the reports (files, or the *.json files of folders), merges them against the expected tasks and writes
    /// the outputs; the status is the merge's.
    pub fn exec(self) -> Outcome {
        let expected = match (&self.tasks, &self.nodes) {
            (Some(t), _) => Expected::Tasks(fleet::parse_tasks(t)?),
            (None, Some(n)) => Expected::Nodes(match n.strip_prefix('@') {
                Some(file) => std::fs::read_to_string(file)
                    .map_err(|e| format!("--nodes @{file}: cannot read it: {e}"))
                    .and_then(|text| fleet::parse_nodes(&text))?,
                None => fleet::parse_nodes(n)?,
            }),
            (None, None) => Expected::Seen,
        };
        let reference = match &self.baseline {
            Some(p) => Reference::Baseline { name: p.display().to_string(), baseline: Baseline::read(p)? },
            None => Reference::Majority,
        };
        let mut files = Vec::new();
        for p in &self.reports {
            if p.is_dir() {
                let entries =
                    std::fs::read_dir(p).map_err(|e| format!("{}: cannot list the folder: {e}", p.display()))?;
                let mut found: Vec<PathBuf> = entries.filter_map(|e| Some(e.ok()?.path())).collect();
                found.retain(|f| {
                    let name = f.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                    (name.ends_with(".json") || name.ends_with(".json.gz")) && !name.starts_with('.') && f.is_file()
                });
                found.sort();
                files.extend(found);
            } else {
                files.push(p.clone());
            }
        }
        let mut merge = FleetMerge::new(&reference, self.job.as_deref());
        read_streaming(&files, |file, read| merge.add(file.display().to_string(), read));
        let merged = merge.finish(expected);
        // Unlike `matrix`, stdout trouble does not change the status: the merge's verdict is what automation reads.
        write_outputs([
            (self.markdown.as_deref(), &|| merged.markdown()),
            (self.json.as_deref(), &|| merged.json()),
            (self.html.as_deref(), &|| merged.matrix.html()),
        ])?;
        eprintln!("{}", merged.headline());
        Ok(match merged.exit_status {
            0 => Status::Ok,
            1 => Status::Failed,
            _ => Status::Unable,
        })
    }
}

/// Reads `files` as reports and hands each to `each` in the order given, parsing a few at a time on every core: a
/// fleet's reports are read and dropped in batches, so memory stays that of one batch however many there are.
pub fn read_streaming(files: &[PathBuf], mut each: impl FnMut(&Path, Result<Report, String>)) {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    // A few reports per thread per batch: enough to keep every core busy, few enough to bound memory.
    for batch in files.chunks(threads * 4) {
        let mut read: Vec<Option<Result<Report, String>>> = Vec::new();
        read.resize_with(batch.len(), || None);
        std::thread::scope(|scope| {
            for (slots, paths) in read.chunks_mut(4).zip(batch.chunks(4)) {
                scope.spawn(move || {
                    for (slot, path) in slots.iter_mut().zip(paths) {
                        *slot = Some(Report::read(path));
                    }
                });
            }
        });
        for (path, report) in batch.iter().zip(read) {
            each(path, report.unwrap_or_else(|| Err(format!("{}: not read", path.display()))));
        }
    }
}
