//! The findings pages (`results/findings/`): one short Markdown page per place where the driver does not do what
//! NVIDIA's documentation says, the text a person pastes into a bug report. Each page is rendered from a small
//! committed data file ([`Finding`]: the title, the cases, the documentation's sentences and links, a sentence of
//! what the driver did), the committed reports (what each GPU, driver and runtime gave, read from their provenance
//! and verdicts, never typed in), and the case's standalone reproducer. `cuda-conformance findings` writes them;
//! a test checks that the committed pages are what it writes.

use crate::case::ast::Case;
use crate::record::executors::reproduce_line;
use crate::record::observations::OpValue;
use crate::record::Report;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// A finding's data file, `results/findings/<slug>.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Finding {
    /// One line: what the driver does differently.
    pub title: String,
    /// The cases that show it; the first one's reproducer is the page's.
    pub cases: Vec<String>,
    /// The documentation's sentences it departs from, each with where it is.
    pub documentation: Vec<Quote>,
    /// What the driver did, in a sentence or two (the exact codes follow, read from the reports).
    pub driver_did: String,
    /// The outcomes of the cases that show the finding, as the page's verdict column spells them: `fail`,
    /// `expected-fail`, `pass observed invalid-value` (an `observe` pick). A configuration whose cases gave another
    /// outcome is listed as not showing it (a runtime that returns the documented code).
    pub shown_by: Vec<String>,
    /// The committed reports to read, relative to the repository root.
    pub reports: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Quote {
    /// NVIDIA's sentence, exactly.
    pub sentence: String,
    /// Where it is: `CUDA Runtime API, cudaGraphExecUpdate`.
    pub source: String,
    pub url: String,
}

/// A case's standalone program as `cuda-conformance repro` writes it.
#[derive(Debug, Clone, PartialEq)]
pub struct Reproducer {
    /// `<stem>.cu`.
    pub program: String,
    /// The shared header the program includes, written once beside the pages (each page links to it by name).
    pub header: String,
    pub header_name: String,
}

/// Where a finding's page is, for the pages that link to it (the reference, the matrix).
#[derive(Debug, Clone, PartialEq)]
pub struct FindingLink {
    pub case_id: String,
    pub title: String,
    /// The page's address as the linking page needs it.
    pub href: String,
}

/// The links to `findings` (by slug) for every case each names, each page at `base` + `<slug>.md`.
pub fn links(findings: &[(String, Finding)], base: &str) -> Vec<FindingLink> {
    findings
        .iter()
        .flat_map(|(slug, f)| {
            f.cases.iter().map(move |id| FindingLink {
                case_id: id.clone(),
                title: f.title.clone(),
                href: format!("{base}{slug}.md"),
            })
        })
        .collect()
}

/// One row of "Seen on": a configuration and what the case gave there, with the reports that show it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Seen {
    gpu: String,
    driver: String,
    runtime: String,
    case: String,
    outcome: String,
    detail: String,
    /// The outcome is one of the finding's `shown_by`.
    shows: bool,
}

/// What `case_id` gave in `report`: its outcome and the exact codes (every operation that did not return
/// cudaSuccess, and the results an update or instantiate named), else its verdict's messages.
fn seen_in(report: &Report, case_id: &str, shown_by: &[String]) -> Option<Seen> {
    let case = report.cases.iter().find(|c| c.id == case_id)?;
    let p = &report.provenance;
    let mut details: Vec<String> = Vec::new();
    if let Some(obs) = &case.observations {
        for op in &obs.ops {
            let code = op.code.as_deref().unwrap_or("not run");
            let result = match &op.value {
                Some(OpValue::Result { result, error_node, error_from }) => format!(
                    ", result `{result}`, errorNode {}, errorFromNode {}",
                    error_node.as_deref().map_or("NULL".to_owned(), |n| format!("`{n}`")),
                    error_from.as_deref().map_or("NULL".to_owned(), |n| format!("`{n}`"))
                ),
                _ => String::new(),
            };
            if code != "cudaSuccess" || !result.is_empty() {
                details.push(format!("line {} `{}` returned `{code}`{result}", op.line, op.text));
            }
        }
    }
    details.extend(case.verdict.messages.iter().cloned());
    let outcome = match &case.verdict.observed {
        Some(o) => format!("{} observed {o}", case.outcome()),
        None => case.outcome(),
    };
    // `shown_by` names an outcome with what it observed (`pass observed invalid-value`: the observation is the
    // finding), or the bare verdict, which then shows it whatever the case observed besides (a sweep row's
    // last-error codes).
    let shows = shown_by.contains(&outcome) || shown_by.contains(&case.outcome());
    Some(Seen {
        shows,
        gpu: p.gpu_name.clone(),
        driver: p.driver_release.clone(),
        runtime: p.runtime_version.clone(),
        case: case_id.to_owned(),
        outcome,
        detail: details.join("; "),
    })
}

/// The configurations the finding was seen in: per (GPU, driver, runtime, case, what it gave), the commits of the
/// reports that show it. A configuration where the case did not run (not supported: one GPU for a two-GPU case) is
/// left out: it says nothing about the finding.
fn seen_on(finding: &Finding, reports: &[(String, Report)]) -> BTreeMap<Seen, Vec<String>> {
    let mut seen: BTreeMap<Seen, Vec<String>> = BTreeMap::new();
    for (path, report) in reports {
        for id in &finding.cases {
            let Some(row) = seen_in(report, id, &finding.shown_by) else { continue };
            if row.outcome == "not-supported" {
                continue;
            }
            let commit: String = report.provenance.commit.chars().take(7).collect();
            seen.entry(row).or_default().push(format!("[`{commit}`](/{path})"));
        }
    }
    seen
}

/// The distinct (GPU, driver, runtime) where `reports` show the finding (none: they do not show it).
pub fn seen_configurations(finding: &Finding, reports: &[(String, Report)]) -> Vec<String> {
    configurations(&seen_on(finding, reports))
}

/// The distinct (GPU, driver, runtime) where the finding showed, for the index (sorted: equal ones are adjacent).
fn configurations(seen: &BTreeMap<Seen, Vec<String>>) -> Vec<String> {
    let mut all: Vec<String> = seen
        .keys()
        .filter(|s| s.shows)
        .map(|s| format!("{}, driver {}, runtime {}", s.gpu, s.driver, s.runtime))
        .collect();
    all.dedup();
    all
}

/// The page of `finding` (`slug`), with its first case `case`, the reports it reads and the reproducer.
pub fn page(finding: &Finding, case: &Case, reports: &[(String, Report)], reproducer: &Reproducer) -> String {
    let mut out = format!("# {}\n\n", finding.title);
    let file = std::path::Path::new(&case.positions.file)
        .file_name()
        .map_or_else(|| case.positions.file.clone(), |n| n.to_string_lossy().into_owned());
    let others: Vec<String> = finding.cases.iter().skip(1).map(|c| format!("`{c}`")).collect();
    let _ = writeln!(
        out,
        "Case `{}` ([`cases/{file}:{line}`](/cases/{file}#L{line})){}: {}\n",
        case.id,
        if others.is_empty() { String::new() } else { format!(", also {}", others.join(", ")) },
        case.rule,
        line = case.positions.case_line,
    );
    out.push_str("## What the documentation says\n\n");
    for q in &finding.documentation {
        let _ = writeln!(out, "> {}\n\n— [{}]({})\n", q.sentence, q.source, q.url);
    }
    out.push_str("## What the driver did\n\n");
    let _ = writeln!(out, "{}\n", finding.driver_did);
    let seen = seen_on(finding, reports);
    out.push_str(
        "| GPU | driver | runtime | case | verdict | shows it | what it returned | reports |\n\
         |---|---|---|---|---|---|---|---|\n",
    );
    for (s, commits) in &seen {
        let _ = writeln!(
            out,
            "| {} | {} | {} | `{}` | {} | {} | {} | {} |",
            s.gpu,
            s.driver,
            s.runtime,
            s.case,
            s.outcome,
            if s.shows { "yes" } else { "no" },
            s.detail.replace('|', "\\|"),
            commits.join(" ")
        );
    }
    let _ = writeln!(
        out,
        "\nRead from the committed reports' provenance and verdicts ({} reports; a configuration where the case could \
         not run is left out).\n",
        reports.len()
    );
    out.push_str("## Reproducer\n\n");
    let _ = writeln!(
        out,
        "A standalone CUDA runtime program (`cuda-conformance repro {}`); it needs only the CUDA toolkit and prints \
         what it observed as JSON. Save both files in one folder, then:\n\n```sh\nnvcc -std=c++17 {stem}.cu -o {stem} \
         && ./{stem}\n```\n\nFrom a checkout of this project: `{}`\n",
        case.id,
        reproduce_line(&case.id, None).trim_start_matches("reproduce: "),
        stem = crate::record::executors::file_stem(&case.id),
    );
    let _ = writeln!(
        out,
        "`{}.cu`:\n\n```cpp\n{}\n```\n",
        crate::record::executors::file_stem(&case.id),
        reproducer.program.trim_end()
    );
    // One copy of the header for every page, beside them (`findings` writes it): each page used to carry its own
    // ~90 KB copy.
    let _ = writeln!(
        out,
        "The shared header it includes, the same for every program: [`{0}`]({0}) beside this page (`cuda-conformance \
         repro` writes it beside the programs too).",
        reproducer.header_name,
    );
    out
}

/// The index of the findings: one row per page, with where each was seen.
pub fn index(findings: &[(String, Finding)], reports: &BTreeMap<String, Report>) -> String {
    let mut out = String::from(
        "# Findings\n\nWhere the driver does not do what NVIDIA's documentation says: one page each, with the \
         documentation's sentence, what the driver did on each GPU, driver and runtime of the committed reports, and \
         a standalone C++ reproducer to paste into a bug report. Written by `cuda-conformance findings --out \
         results/findings` from the `*.json` beside each page; do not edit the pages by hand.\n\n\
         | finding | cases | seen on |\n|---|---|---|\n",
    );
    for (slug, f) in findings {
        let loaded: Vec<(String, Report)> =
            f.reports.iter().filter_map(|p| Some((p.clone(), reports.get(p)?.clone()))).collect();
        let cases: Vec<String> = f.cases.iter().map(|c| format!("`{c}`")).collect();
        let _ = writeln!(
            out,
            "| [{}]({slug}.md) | {} | {} |",
            f.title,
            cases.join(", "),
            configurations(&seen_on(f, &loaded)).join("; ")
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::observations::{Observations, OpRecord};
    use crate::record::verdict::VerdictKind;
    use crate::report::test_support::{report, result};

    const CASE: &str = "case graph/update-x\n  rule: The rule.\n  source: s\n  stream s blocking\n  k: sync s\n  \
                        expect k returned cudaSuccess\nend\n";

    fn finding() -> Finding {
        Finding {
            title: "The update names no node".into(),
            cases: vec!["graph/update-x".into()],
            documentation: vec![Quote {
                sentence: "errorNode is set to the node from hGraph".into(),
                source: "CUDA Runtime API, cudaGraphExecUpdate".into(),
                url: "https://docs.nvidia.com/cuda/cuda-runtime-api/group__CUDART__GRAPH.html".into(),
            }],
            driver_did: "It set errorNode to NULL.".into(),
            shown_by: vec!["fail".into()],
            reports: vec!["results/a/r.json.gz".into(), "results/b/r.json.gz".into()],
        }
    }

    fn failing(gpu: &str, commit: &str) -> Report {
        let mut r = report(gpu, 13000, vec![result("graph/update-x", VerdictKind::Fail, None)]);
        r.provenance.commit = commit.into();
        let case = &mut r.cases[0];
        case.verdict.messages = vec!["line 7: expect u error-node is c2: it named none".into()];
        case.observations = Some(Observations {
            ops: vec![OpRecord {
                index: 0,
                line: 6,
                label: Some("u".into()),
                thread: None,
                text: "update ex from g2".into(),
                code: Some("cudaErrorGraphExecUpdateFailure".into()),
                acceptable: vec![],
                start_ns: 0,
                end_ns: 0,
                value: Some(OpValue::Result { result: "topology-changed".into(), error_node: None, error_from: None }),
                not_run: None,
            }],
            ..Observations::default()
        });
        r
    }

    #[test]
    fn a_page_quotes_the_docs_reads_the_codes_and_configurations_from_the_reports_and_embeds_the_program() {
        let file = crate::case::parse_file("cases/graph.case", CASE).unwrap_or_else(|d| panic!("{d:?}"));
        // A configuration where the case passes does not show the finding: listed as such, left out of the index.
        let mut passing = report("NVIDIA H200", 12090, vec![result("graph/update-x", VerdictKind::Pass, None)]);
        passing.provenance.commit = "9999999".into();
        let reports = vec![
            ("results/a/r.json.gz".to_owned(), failing("NVIDIA H100", "abcdef123")),
            ("results/b/r.json.gz".to_owned(), failing("NVIDIA H100", "1234567ff")),
            ("results/c/r.json.gz".to_owned(), passing),
        ];
        let reproducer = Reproducer {
            program: "int main() { return 0; }\n".into(),
            header: "#pragma once\n".into(),
            header_name: "cuda_conformance_repro.h".into(),
        };
        let text = page(&finding(), &file.cases[0], &reports, &reproducer);
        for want in [
            "# The update names no node",
            "> errorNode is set to the node from hGraph\n\n— [CUDA Runtime API, cudaGraphExecUpdate](https://docs.nvidia.com/",
            "line 6 `update ex from g2` returned `cudaErrorGraphExecUpdateFailure`, result `topology-changed`, errorNode NULL",
            "it named none",
            // Two reports of one configuration and outcome are one row naming both commits.
            "| fail | yes | line 6",
            "[`abcdef1`](/results/a/r.json.gz) [`1234567`](/results/b/r.json.gz) |",
            "```cpp\nint main() { return 0; }\n```",
            "cuda-conformance repro graph/update-x --out repro/",
            "[`cuda_conformance_repro.h`](cuda_conformance_repro.h) beside this page",
        ] {
            assert!(text.contains(want), "{want:?} not in:\n{text}");
        }
        assert_eq!(text.matches("| NVIDIA H100 |").count(), 1, "{text}");
        assert!(!text.contains("#pragma once"), "the header is linked, not copied: {text}");
        assert!(text.contains("| `graph/update-x` | pass | no |"), "{text}");
        let by_path: BTreeMap<String, Report> = reports.into_iter().collect();
        let index = index(&[("graph-update".into(), finding())], &by_path);
        assert!(
            index.contains("| [The update names no node](graph-update.md) | `graph/update-x` | NVIDIA H100, driver"),
            "{index}"
        );
        assert!(!index.contains("H200"), "{index}");
    }
}
