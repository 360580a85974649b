//! A compact report (passing cases without their trace, compact JSON, gzipped) loses nothing any command reads:
//! every output of `summary` (all formats), `compare`, `matrix`, `fleet`, `baseline bless` and `timeline` is
//! byte-identical on the full and the compact report of the same run. The run is the committed full H100 report
//! (385 cases with every trace), so the check covers real traces, measures, timelines and claims.

// The package is published as cuda-conformance-harness; its dependents call it `harness`, and so does this test.
extern crate cuda_conformance_harness as harness;

use harness::record::{Report, Traces};
use harness::report::baseline::Baseline;
use harness::report::compare::Comparison;
use harness::report::fleet::{Expected, Fleet, Reference};
use harness::report::matrix::Matrix;
use harness::report::timeline::svg;
use std::path::{Path, PathBuf};

const FULL: &str = "../results/2026-11-25_consolidation_h100/report-83ca549.json.gz";

/// Every command's output on `r`, one string each, named.
fn outputs(r: &Report, file: &str) -> Vec<(&'static str, String)> {
    let fleet = Fleet::merge(vec![(file.to_owned(), Ok(r.clone()))], Expected::Seen, &Reference::Majority, None);
    let matrix = Matrix::new(std::slice::from_ref(r));
    let mut baseline = Baseline::parse("b.txt", "").unwrap();
    baseline.bless(r);
    let svgs: String = r.timelines().map(|(id, t)| svg(id, t)).collect();
    vec![
        ("summary markdown", r.markdown()),
        ("summary table", r.summary_table()),
        ("summary junit", r.junit()),
        ("summary html", r.html()),
        ("compare with itself", Comparison::new(r, r).text()),
        ("matrix markdown", matrix.markdown()),
        ("matrix json", matrix.json()),
        ("matrix html", matrix.html()),
        ("fleet markdown", fleet.markdown()),
        ("fleet json", fleet.json()),
        ("fleet headline", fleet.headline()),
        ("baseline bless", baseline.text()),
        ("timeline svgs", svgs),
    ]
}

fn temp(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("compact-reports-{}-{name}", std::process::id()))
}

#[test]
fn every_command_prints_the_same_on_the_full_and_the_compact_report_of_one_run() {
    let mut full = Report::read(Path::new(FULL)).expect("the committed full report reads, gzipped as it is");
    let passing_traces = full.cases.iter().filter(|c| c.verdict.kind.to_string() == "pass").count();
    assert!(full.cases.iter().filter(|c| c.observations.is_some()).count() >= passing_traces && passing_traces > 300);
    full.run.as_mut().unwrap().traces = Traces::All;
    let (full_path, compact_path) = (temp("full.json"), temp("compact.json.gz"));
    full.write(&full_path).unwrap();
    let mut compact = full.clone();
    compact.run.as_mut().unwrap().traces = Traces::NonPass;
    compact.write(&compact_path).unwrap();
    let (full_read, compact_read) = (Report::read(&full_path).unwrap(), Report::read(&compact_path).unwrap());
    let sizes = [&full_path, &compact_path].map(|p| std::fs::metadata(p).unwrap().len());
    std::fs::remove_file(&full_path).unwrap();
    std::fs::remove_file(&compact_path).unwrap();

    // The compact one really dropped the passing traces and kept the others.
    for (f, c) in full_read.cases.iter().zip(&compact_read.cases) {
        let pass = f.verdict.kind.to_string() == "pass";
        assert_eq!(c.observations.is_some(), !pass && f.observations.is_some(), "{}", f.id);
    }
    assert!(sizes[1] * 10 < sizes[0], "compact gzipped {} bytes against {} full", sizes[1], sizes[0]);

    // Both read as the same file name, so a command that names its input prints the same.
    let (a, b) = (outputs(&full_read, "report.json"), outputs(&compact_read, "report.json"));
    for ((name, x), (_, y)) in a.iter().zip(&b) {
        assert!(!x.is_empty(), "{name} printed nothing: the check would be empty");
        assert!(x == y, "{name} differs between the full and the compact report");
    }
    // compare across the two forms: no change at all.
    let across = Comparison::new(&full_read, &compact_read);
    assert!(across.ok());
    assert_eq!(across.text(), Comparison::new(&full_read, &full_read).text());
}

#[test]
fn a_report_that_is_not_gzip_nor_utf8_is_a_clear_error() {
    let path = temp("bad.json.gz");
    std::fs::write(&path, [0x1f, 0x8b, 0x08, 0x00, 0xff, 0xff]).unwrap();
    let gz = Report::read(&path).unwrap_err();
    std::fs::write(&path, [0xff, 0xfe, 0x00]).unwrap();
    let bin = Report::read(&path).unwrap_err();
    std::fs::remove_file(&path).unwrap();
    assert!(gz.contains("cannot read the report") && gz.contains("gzip"), "{gz}");
    assert!(bin.contains("not UTF-8"), "{bin}");
}
