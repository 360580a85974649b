//! Figures: what a driver does where the documentation promises nothing, measured and recorded but never asserted.
//! A figure never changes a verdict or the exit status of a run; it appears in the report (`figures`), the console
//! summary and the Markdown summary.
//!
//! Each measurement point is a case in the case language, generated as text, parsed and validated exactly like a
//! case file, run by the ordinary executor (in the suite's [`crate::runner::worker`] processes, sent as text like
//! any case) and decided by the ordinary verdict: figures add no second way of observing the GPU.
//!
//! - [`staging`]: the pageable staging threshold (issue 7 item 6), per kind of pageable copy.

pub mod staging;
pub mod summary;

use crate::case::{self, ast::Case};

/// The file name generated cases are parsed under (their `location` in a result). Its stem is the area, as the
/// validator requires of case files: every generated id starts with `figures/`.
pub const GENERATED_FILE: &str = "<generated>/figures.case";

/// Parses and validates the text of one generated case, as a case file would be: the figures never run a case the
/// validator would reject.
pub fn parse_case_text(text: &str) -> Result<Case, String> {
    case::parse_one(GENERATED_FILE, 1, text)
        .map_err(|diagnostics| diagnostics.iter().map(ToString::to_string).collect::<Vec<_>>().join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::figures::{Figures, Point, SeriesFigure};
    use crate::report::figures::size_text;

    /// A device as `gpu::probe` would describe an H100, for tests that need one without a GPU.
    pub(super) fn device() -> crate::device::gpu::DeviceInfo {
        crate::exec::test_support::h100()
    }

    fn report(figures: Option<Figures>) -> crate::record::Report {
        let provenance = crate::record::Provenance::new(&device(), "commit", "2026-01-01T00:00:00Z".into());
        let mut report = crate::record::Report::new(provenance, String::new(), 1, Vec::new());
        report.figures = figures;
        report
    }

    fn measured() -> Figures {
        let points = staging::sweep(|bytes| Point {
            returned_early: Some(bytes <= 64 << 10),
            ..Point::undecided(bytes, String::new())
        });
        Figures { staging: vec![SeriesFigure::new(staging::Series::H2dAsync, points, Vec::new())] }
    }

    #[test]
    fn reports_without_figures_still_parse() {
        let mut json = serde_json::to_value(report(Some(measured()))).unwrap();
        json.as_object_mut().unwrap().remove("figures");
        let read: crate::record::Report = serde_json::from_value(json).unwrap();
        assert_eq!(read.figures, None);
        assert!(!read.markdown().contains("Figures"));
        // And a report without figures writes no `figures` key.
        assert!(serde_json::to_value(report(None)).unwrap().get("figures").is_none());
    }

    #[test]
    fn reports_carry_figures_into_both_summaries() {
        let written = serde_json::to_string(&report(Some(measured()))).unwrap();
        let read: crate::record::Report = serde_json::from_str(&written).unwrap();
        assert_eq!(read.figures, Some(measured()));
        let markdown = read.markdown();
        assert!(markdown.contains("## Figures (measured, not asserted)"), "{markdown}");
        assert!(markdown.contains("64 KiB (waits at 72 KiB)"), "{markdown}");
        assert!(read.summary_table().contains("64 KiB (waits at 72 KiB)"));
    }

    #[test]
    fn sizes_are_written_exactly() {
        assert_eq!(size_text(4096), "4 KiB");
        assert_eq!(size_text(4608), "4608 B");
        assert_eq!(size_text(64 << 20), "64 MiB");
        assert_eq!(size_text(1536 << 10), "1536 KiB");
    }

    #[test]
    fn a_text_with_two_cases_is_refused() {
        let one = staging::case_text(staging::Series::H2dAsync, 4096);
        let two = format!("{one}\n{}", one.replace("/4096", "/8192"));
        assert!(parse_case_text(&one).is_ok());
        assert!(parse_case_text(&two).unwrap_err().contains("exactly one case"));
    }

    #[test]
    fn an_invalid_text_reports_its_diagnostics() {
        let text = staging::case_text(staging::Series::H2dAsync, 4096).replace("buffer h pageable 4096", "");
        let err = parse_case_text(&text).unwrap_err();
        assert!(err.contains(GENERATED_FILE), "{err}");
    }
}
