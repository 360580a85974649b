//! JUnit XML for CI dashboards (`run --junit FILE`, `summary --format junit REPORT`): one `<testcase>` per case,
//! named by its id in a class named by its area. Fail, crash, timeout and unexpected pass are `<failure>`s whose
//! text is what `cargo test` prints for the case ([`super::trace::failure_text`]); not-supported and skipped are
//! `<skipped>` with the reason; a flake, a variant or an expected failure passes, with its detail in `<system-out>`.
//! A run that could not start is one `<testcase name="could-not-run">` with an `<error>` saying why, so that a
//! dashboard shows the host rather than an empty suite.

use super::escape::xml;
use super::trace;
use crate::record::verdict::VerdictKind;
use crate::record::Report;
use std::fmt::Write as _;

impl Report {
    pub fn junit(&self) -> String {
        let p = &self.provenance;
        let suite = format!("{} driver {} runtime {}", p.gpu_name, p.driver_release, p.runtime_version);
        let count = |f: fn(VerdictKind) -> bool| self.cases.iter().filter(|c| f(c.verdict.kind)).count();
        let failures = self.cases.iter().filter(|c| c.verdict.kind.is_failure() || c.executors_disagree()).count();
        let skipped = count(|k| matches!(k, VerdictKind::NotSupported | VerdictKind::Skipped));
        let errors = usize::from(self.could_not_run.is_some());
        let tests = self.cases.len() + errors;
        let seconds = self.wall_ms as f64 / 1000.0;
        let mut out = String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        let _ = writeln!(
            out,
            "<testsuites name=\"cuda-conformance\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\" time=\"{seconds:.3}\">"
        );
        let _ = writeln!(
            out,
            "  <testsuite name=\"{}\" tests=\"{tests}\" failures=\"{failures}\" errors=\"{errors}\" skipped=\"{skipped}\" time=\"{seconds:.3}\" timestamp=\"{}\" hostname=\"{}\">",
            xml(&suite),
            xml(&p.started_at),
            xml(&p.hostname)
        );
        let _ = writeln!(out, "    <properties>");
        for (name, value) in [
            ("gpu", &p.gpu_name),
            ("gpu_uuid", &p.gpu_uuid),
            ("driver", &p.driver_release),
            ("driver_version", &p.driver_version),
            ("runtime", &p.runtime_version),
            ("commit", &p.commit),
        ] {
            let _ = writeln!(out, "      <property name=\"{name}\" value=\"{}\"/>", xml(value));
        }
        let _ = writeln!(out, "    </properties>");
        if let Some(reason) = &self.could_not_run {
            let _ = writeln!(
                out,
                "    <testcase classname=\"cuda-conformance\" name=\"could-not-run\" time=\"{seconds:.3}\">\n      \
                 <error type=\"could-not-run\" message=\"{}\">{}</error>\n    </testcase>",
                xml(reason),
                xml(&format!("the suite could not run on {} (node {}): {reason}", p.hostname, p.node))
            );
        }
        for c in &self.cases {
            let _ = write!(
                out,
                "    <testcase classname=\"cuda-conformance.{}\" name=\"{}\" file=\"{}\" time=\"{:.3}\"",
                xml(&c.area),
                xml(&c.id),
                xml(c.location.rsplit_once(':').map_or(c.location.as_str(), |(f, _)| f)),
                c.wall_ms as f64 / 1000.0
            );
            let first = c.verdict.messages.first().map(String::as_str).unwrap_or("");
            let kind = c.verdict.kind;
            if kind.is_failure() || c.executors_disagree() {
                // A disagreement of the executors fails the case whatever its verdict: one of them is wrong.
                let (kind, first) = match c.disagreement_lines().first() {
                    Some(line) if !kind.is_failure() => ("executors-disagree".to_owned(), line.clone()),
                    _ => (kind.to_string(), first.to_owned()),
                };
                let reproduce = c.reproduce_line_if_failed().map(|l| format!(" ({l})")).unwrap_or_default();
                let _ = writeln!(out, ">");
                let _ = writeln!(
                    out,
                    "      <failure type=\"{kind}\" message=\"{}\">{}</failure>",
                    xml(&format!("{kind}: {first}{reproduce}")),
                    xml(&trace::failure_text(c))
                );
                let _ = writeln!(out, "    </testcase>");
            } else if matches!(kind, VerdictKind::NotSupported | VerdictKind::Skipped) {
                let _ = writeln!(out, ">");
                let _ = writeln!(out, "      <skipped message=\"{}\"/>", xml(&format!("{kind}: {first}")));
                let _ = writeln!(out, "    </testcase>");
            } else if kind != VerdictKind::Pass {
                let _ = writeln!(out, ">");
                let detail = format!("{}: {}\n{}", c.outcome(), c.id, c.verdict.messages.join("\n"));
                let _ = writeln!(out, "      <system-out>{}</system-out>", xml(&detail));
                let _ = writeln!(out, "    </testcase>");
            } else {
                let _ = writeln!(out, "/>");
            }
        }
        out.push_str("  </testsuite>\n</testsuites>\n");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{report, result};
    use crate::record::verdict::VerdictKind;

    #[test]
    fn failures_carry_the_cargo_test_text_and_skips_their_reason() {
        let r = report(
            "H100",
            13000,
            vec![
                result("events/a", VerdictKind::Pass, None),
                result("events/b<&>", VerdictKind::Fail, None),
                result("capture/c", VerdictKind::NotSupported, None),
                result("implicit-sync/d", VerdictKind::Variant, Some("concurrent")),
            ],
        );
        let xml = r.junit();
        assert!(xml.contains(r#"tests="4" failures="1" errors="0" skipped="1""#), "{xml}");
        assert!(xml.contains(r#"<testcase classname="cuda-conformance.events" name="events/a" file="cases/test.case""#));
        assert!(xml.contains("name=\"events/b&lt;&amp;&gt;\""), "{xml}");
        // The failure text is the cargo test text: verdict and id, rule, source, location, messages.
        let text = super::super::trace::failure_text(&r.cases[1]);
        assert!(xml.contains(&super::xml(&text)), "{xml}");
        assert!(text.starts_with("fail events/b<&>\n  rule:   the rule of events/b<&>\n"), "{text}");
        assert!(xml.contains(r#"<skipped message="not-supported: line 9: why capture/c is not-supported"/>"#));
        assert!(xml.contains("<system-out>variant concurrent: implicit-sync/d"), "{xml}");
        assert_eq!(xml.matches("<testcase ").count(), 4);
        assert_eq!(super::xml("a\u{1}b"), "a\u{FFFD}b");
    }

    #[test]
    fn a_run_that_could_not_start_is_one_error() {
        let mut r = report("unknown", 0, vec![]);
        r.complete = false;
        r.could_not_run = Some("cannot run the suite: no CUDA device: cudaErrorNoDevice".into());
        let xml = r.junit();
        assert!(xml.contains(r#"tests="1" failures="0" errors="1" skipped="0""#), "{xml}");
        assert!(xml.contains(r#"name="could-not-run""#), "{xml}");
        assert!(xml.contains(
            r#"<error type="could-not-run" message="cannot run the suite: no CUDA device: cudaErrorNoDevice">"#
        ));
    }
}
