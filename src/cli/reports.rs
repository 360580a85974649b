//! `summary`, `compare` and `timeline`: reading saved reports.

use super::output::emit;
use super::status::{Outcome, Status};
use harness::record::Report;
use harness::report::compare::Comparison;
use harness::runner::session::write_timelines;
use std::path::PathBuf;

#[derive(clap::Args)]
pub struct SummaryCmd {
    report: PathBuf,
    #[arg(long, value_enum, default_value_t = SummaryFormat::Markdown)]
    format: SummaryFormat,
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum SummaryFormat {
    Markdown,
    Table,
    Junit,
    Html,
}

impl SummaryCmd {
    pub fn exec(self) -> Outcome {
        let r = Report::read(&self.report)?;
        Ok(emit(&match self.format {
            SummaryFormat::Markdown => r.markdown(),
            SummaryFormat::Table => r.summary_table(),
            SummaryFormat::Junit => r.junit(),
            SummaryFormat::Html => r.html(),
        }))
    }
}

#[derive(clap::Args)]
pub struct CompareCmd {
    base: PathBuf,
    new: PathBuf,
}

impl CompareCmd {
    pub fn exec(self) -> Outcome {
        let (base, new) = (Report::read(&self.base), Report::read(&self.new));
        let c = Comparison::new(&base?, &new?);
        // The verdict is the comparison's: stdout trouble is reported by `emit` but does not change it.
        emit(&c.text());
        Ok(Status::failed_if(!c.ok()))
    }
}

#[derive(clap::Args)]
pub struct TimelineCmd {
    report: PathBuf,
    filter: Option<String>,
    #[arg(long)]
    out: PathBuf,
}

impl TimelineCmd {
    /// `timeline REPORT --out DIR`.
    pub fn exec(self) -> Outcome {
        let report = Report::read(&self.report)?;
        write_timelines(&report, self.filter.as_deref(), &self.out)?;
        Ok(Status::Ok)
    }
}
