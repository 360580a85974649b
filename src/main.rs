//! `cuda-conformance`: runs the conformance cases on a GPU and writes a report per host; compares, judges and merges
//! reports. A thin front end: the work is in `harness::runner` (running) and `harness::report` (reports); the
//! commands are in [`cli`], one module per family.
//!
//! ```text
//! cuda-conformance run [FILTER]        run the suite in worker processes, write a JSON report (and JUnit)
//! cuda-conformance bench [FILTER]      run it several ways (process per case, workers, all GPUs) and print figures
//! cuda-conformance measure staging     measure the pageable staging threshold (a figure: recorded, not asserted)
//! cuda-conformance seeds               the seeds' programs and their claims against the bounds, in one report
//! cuda-conformance timeline REPORT     every case's timeline as an SVG
//! cuda-conformance check               parse, validate and lint every case file (no GPU needed)
//! cuda-conformance list [FILTER]       list case ids with their rules
//! cuda-conformance summary REPORT      a report's Markdown summary (or its table, or JUnit XML)
//! cuda-conformance compare BASE NEW    regressions, fixes, variant changes, new/removed cases, environment changes
//! cuda-conformance baseline bless R    write the baseline of R's GPU, driver and runtime
//! cuda-conformance matrix REPORT...    the semantics matrix across hosts, GPUs and drivers (Markdown, JSON, HTML)
//! cuda-conformance fleet REPORT|DIR... a fleet run against its expected tasks: ran, could not run, missing
//! cuda-conformance info                the device and build this binary would report
//! ```

mod cli;

use clap::Parser;
use cuda_conformance::kernel_table;
use std::process::ExitCode;

fn main() -> ExitCode {
    // This binary is also its own worker: a child started by the runner (for a case or a figure's point), or the
    // second process of a case that declares one (`process NAME`), serves its request and exits.
    harness::runner::worker::serve_child_request(kernel_table);
    cli::Cli::parse().exec().code()
}
