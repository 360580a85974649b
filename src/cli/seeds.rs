//! `seeds`: the seeds' programs and the cases their claims read, judged together in one report.

use super::now_rfc3339;
use super::output::emit;
use super::run::{load_for_session, Prepared, RunArgs};
use super::status::{Outcome, Status};
use cuda_conformance::{seed_programs_dir, BUILD_COMMIT};
use harness::case::ast::Case;
use harness::runner::session::{Outputs, Purpose, ReportHeader, Session};
use std::path::{Path, PathBuf};
use std::time::Duration;

#[derive(clap::Args)]
pub struct SeedsCmd {
    #[command(flatten)]
    how: RunArgs,
    /// Where to write the JSON report (default: reports/seeds-<gpu>-driver-<driver>-<time>.json).
    #[arg(long)]
    report: Option<PathBuf>,
    /// The self-contained HTML page (claims, bounds, every timeline).
    #[arg(long)]
    html: Option<PathBuf>,
    /// A folder for one SVG per case with a timeline.
    #[arg(long)]
    svg: Option<PathBuf>,
    /// Where the seeds' programs are (default: $CUDA_CONFORMANCE_SEED_PROGRAMS, ../seeds beside the binary, or
    /// target/seeds).
    #[arg(long)]
    programs: Option<PathBuf>,
    /// Run only the cases, not the programs.
    #[arg(long)]
    no_programs: bool,
    /// Seconds after which a program is killed.
    #[arg(long, default_value_t = 120)]
    program_deadline: u64,
}

impl SeedsCmd {
    /// The programs first (each alone on the GPU, before any worker holds a context), then the cases the claims
    /// read, then the claims, into one report.
    pub fn exec(self, dir: &Path) -> Outcome {
        // Loaded before the session's clock starts, as the report's wall time has always counted from after it.
        let cases = load_for_session(dir);
        let header = ReportHeader {
            commit: BUILD_COMMIT.to_owned(),
            started_at: now_rfc3339(),
            filter: "seeds".to_owned(),
            shard: None,
            baseline: None,
            kernel_image: cuda_conformance::kernel_image(),
        };
        let outputs =
            Outputs { report: self.report.clone(), html: self.html.clone(), svg: self.svg.clone(), junit: None };
        let session = Session::new(Purpose::Seeds, header, outputs);
        let could_not_run = |reason: String, device| {
            session.could_not_run(&reason, device);
            Ok(Status::Unable)
        };
        let cases = match cases {
            Ok(cases) => cases,
            Err(e) => return could_not_run(e, None),
        };
        let Prepared { devices, opts, .. } = match self.how.prepare() {
            Ok(p) => p,
            Err(e) => return could_not_run(e, None),
        };
        let path = match session.begin(&devices[0]) {
            Ok(path) => path,
            Err(e) => return could_not_run(e, Some(&devices[0])),
        };
        let mut runs = Vec::new();
        if !self.no_programs {
            let programs_dir = self.programs.clone().unwrap_or_else(seed_programs_dir);
            // The programs use their process's device 0: make it the device the cases run on.
            let env = vec![("CUDA_VISIBLE_DEVICES".to_owned(), devices[0].uuid.clone())];
            for program in &harness::claims::programs::PROGRAMS {
                let deadline = Duration::from_secs(self.program_deadline);
                let run = harness::claims::programs::run(&programs_dir, program, deadline, &env);
                eprintln!("===== {} ({:.1} s)", run.title(), run.wall_ms as f64 / 1000.0);
                eprint!("{}", run.output);
                if let Some(e) = &run.error {
                    eprintln!("({e})");
                }
                runs.push(run);
            }
        }
        let selected: Vec<&Case> = cases.iter().filter(|c| harness::claims::reads_case(&c.id)).collect();
        eprintln!("===== {} cases (performance/ and the cases the claims read)", selected.len());
        let report = session.run(&selected, &devices, &opts, &path, |result, _| {
            eprintln!("{:<16} {}", result.outcome(), result.id);
        });
        let report = session.conclude(report, &runs);
        emit(&report.summary_table());
        session.write(&report, &path)?;
        // Claims are quality verdicts: only a case that failed (its data was wrong) makes the exit status 1.
        Ok(Status::failed_if(!report.passed()))
    }
}
