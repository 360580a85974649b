//! `baseline bless`: what a GPU, driver and runtime are known to do, from a report.

use super::output::emit;
use super::status::{Outcome, Status};
use harness::record::Report;
use harness::report::baseline::Baseline;
use std::path::PathBuf;

#[derive(clap::Subcommand)]
pub enum BaselineCommand {
    /// Write the non-pass cases of REPORT as the section of its GPU, driver and runtime: into --output (other
    /// sections kept), or on stdout.
    Bless {
        report: PathBuf,
        #[arg(long)]
        output: Option<PathBuf>,
    },
}

impl BaselineCommand {
    pub fn exec(self) -> Outcome {
        let BaselineCommand::Bless { report, output } = self;
        let r = Report::read(&report)?;
        let mut b = match output.as_deref().filter(|p| p.exists()) {
            Some(p) => Baseline::read(p)?,
            None => Baseline::default(),
        };
        let key = b.bless(&r);
        let text = b.text();
        let Some(p) = output else { return Ok(emit(&text)) };
        harness::record::write_atomic(&p, text.as_bytes())
            .map_err(|e| format!("{}: cannot write the baseline: {e}", p.display()))?;
        eprintln!(
            "blessed [{key}] from {} ({} non-pass cases) into {}",
            report.display(),
            b.sections[&key].len(),
            p.display()
        );
        Ok(Status::Ok)
    }
}
