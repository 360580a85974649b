//! `matrix` and `fleet`: many reports merged into one view.

use super::output::write_outputs;
use super::status::{Outcome, Status};
use harness::record::Report;
use harness::report::baseline::Baseline;
use harness::report::fleet::{self, Expected, Fleet, Reference};
use harness::report::matrix::Matrix;
use std::path::PathBuf;

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
}

impl MatrixCmd {
    pub fn exec(self) -> Outcome {
        let read = self.reports.iter().map(|p| Report::read(p)).collect::<Result<Vec<_>, _>>()?;
        let m = Matrix::new(&read);
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
        let mut inputs = Vec::new();
        for p in &self.reports {
            if p.is_dir() {
                let entries =
                    std::fs::read_dir(p).map_err(|e| format!("{}: cannot list the folder: {e}", p.display()))?;
                let mut files: Vec<PathBuf> = entries.filter_map(|e| Some(e.ok()?.path())).collect();
                files.retain(|f| {
                    let name = f.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                    (name.ends_with(".json") || name.ends_with(".json.gz")) && !name.starts_with('.') && f.is_file()
                });
                files.sort();
                inputs.extend(files.into_iter().map(|f| (f.display().to_string(), Report::read(&f))));
            } else {
                inputs.push((p.display().to_string(), Report::read(p)));
            }
        }
        let merged = Fleet::merge(inputs, expected, &reference, self.job.as_deref());
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
