//! `summary`, `compare` and `timeline`: reading saved reports.

use super::output::emit;
use super::status::{Outcome, Status};
use harness::record::Report;
use harness::report::compare::Comparison;
use harness::runner::session::write_timelines;
use std::path::{Path, PathBuf};

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

#[derive(clap::Args)]
pub struct RejudgeCmd {
    report: PathBuf,
    /// Only the cases whose id contains FILTER.
    filter: Option<String>,
}

impl RejudgeCmd {
    /// `rejudge REPORT [FILTER]`: the report's traces, the current cases, `harness::readings::verdict::judge`.
    pub fn exec(self, dir: &Path) -> Outcome {
        let report = Report::read(&self.report)?;
        let cases = super::cases::load(dir)?;
        let (mut same, mut changed, mut no_trace, mut gone) = (0, 0, 0, 0);
        for result in report.cases.iter().filter(|r| self.filter.as_deref().is_none_or(|f| r.id.contains(f))) {
            let Some(case) = cases.iter().find(|c| c.id == result.id) else {
                gone += 1;
                continue;
            };
            let Some(observations) = &result.observations else {
                no_trace += 1;
                continue;
            };
            let new = harness::readings::verdict::judge_again(case, observations);
            let old = &result.verdict;
            if (new.kind, &new.variant) == (old.kind, &old.variant) {
                same += 1;
                continue;
            }
            changed += 1;
            let name = |kind: harness::record::verdict::VerdictKind, variant: &Option<String>| match variant {
                Some(v) => format!("{kind} {v}"),
                None => kind.to_string(),
            };
            println!("{}: {} -> {}", result.id, name(old.kind, &old.variant), name(new.kind, &new.variant));
            for m in &new.messages {
                println!("    {m}");
            }
        }
        println!(
            "{changed} changed, {same} unchanged, {no_trace} without a trace (not judged again), {gone} not in the cases"
        );
        Ok(Status::failed_if(changed > 0))
    }
}
