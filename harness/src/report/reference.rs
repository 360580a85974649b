//! The rules reference (issue 21): a static site, one page per area, each rule with its source sentence (links kept
//! as links), its case (id, file and line), and the verdicts from the reports given, one column per (GPU, driver,
//! runtime) as in the semantics matrix; a fail, crash, timeout or unexpected pass in any column is marked as a
//! finding. Plain HTML and one style sheet, no script and nothing from the network: it opens from the file system.

use crate::case::ast::Case;
use crate::record::Report;
use crate::report::escape::xml;
use crate::report::findings::FindingLink;
use crate::report::matrix::Matrix;
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// One file of the site.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    /// A file name without folders: `index.html`, `<area>.html`.
    pub file: String,
    pub html: String,
}

const STYLE: &str = "body{font-family:sans-serif;margin:2em;max-width:80em}section{border-top:1px solid #ccc;\
padding:.5em 0}section.finding{border-left:4px solid #c00;padding-left:.7em}.finding-mark{color:#c00;font-weight:bold}\
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}.where{color:#555}\
code{font-size:95%}";

/// Verdicts that make a cell a finding: the driver did something the rule does not allow, or could not be judged.
fn is_finding(cell: &str) -> bool {
    ["fail", "crash", "timeout", "unexpected-pass"].iter().any(|f| cell.split([' ', '/', '(']).any(|w| w == *f))
}

/// The area's page name: area ids are case-id segments (letters, digits, `-`), so they are safe file names.
pub fn area_file(area: &str) -> String {
    format!("{area}.html")
}

/// The site for `cases`, with the verdicts of `reports`.
pub fn site(cases: &[Case], reports: &[Report]) -> Vec<Page> {
    site_with_findings(cases, reports, &[])
}

/// [`site`], each case that has a findings page linking to it (`finding_links`: addresses relative to the site).
pub fn site_with_findings(cases: &[Case], reports: &[Report], finding_links: &[FindingLink]) -> Vec<Page> {
    let matrix = Matrix::new(reports);
    let rows: BTreeMap<&str, &Vec<Option<String>>> = matrix.rows.iter().map(|r| (r.id.as_str(), &r.cells)).collect();
    let titles: Vec<String> = matrix.columns.iter().map(Matrix::column_title).collect();
    let mut areas: BTreeMap<&str, Vec<&Case>> = BTreeMap::new();
    for case in cases {
        areas.entry(case.area()).or_default().push(case);
    }

    let mut pages = Vec::new();
    let mut index_rows = String::new();
    for (area, cases) in &areas {
        let mut body = String::new();
        let mut findings = 0;
        for case in cases {
            let cells = rows.get(case.id.as_str());
            let finding = cells.is_some_and(|c| c.iter().flatten().any(|v| is_finding(v)));
            findings += usize::from(finding);
            let _ = writeln!(
                body,
                "<section id=\"{id}\" class=\"case{cls}\" data-case=\"{id}\">\n<h2>{mark}<code>{id}</code></h2>\n\
                 <p class=\"rule\">{rule}</p>\n<p class=\"source\">Source: {source}</p>\n\
                 <p class=\"where\">Case: <code>{file}:{line}</code></p>",
                id = xml(&case.id),
                cls = if finding { " finding" } else { "" },
                mark = if finding { "<span class=\"finding-mark\">finding</span> " } else { "" },
                rule = xml(&case.rule),
                source = linked(&case.source),
                // The file's name under cases/, not the absolute path of the machine that wrote the site.
                file = xml(&format!(
                    "cases/{}",
                    std::path::Path::new(&case.positions.file)
                        .file_name()
                        .map_or_else(|| case.positions.file.clone(), |n| n.to_string_lossy().into_owned())
                )),
                line = case.positions.case_line,
            );
            for link in finding_links.iter().filter(|l| l.case_id == case.id) {
                let _ = writeln!(
                    body,
                    "<p class=\"finding-page\">Finding: <a href=\"{}\">{}</a> (the documentation's sentence, what the \
                     driver did, a standalone reproducer)</p>",
                    xml(&link.href),
                    xml(&link.title)
                );
            }
            match cells {
                Some(cells) if !titles.is_empty() => {
                    body.push_str("<table class=\"verdicts\"><tr><th>GPU, driver, runtime</th><th>verdict</th></tr>\n");
                    for (title, cell) in titles.iter().zip(cells.iter()) {
                        let _ = writeln!(
                            body,
                            "<tr><td>{}</td><td>{}</td></tr>",
                            xml(title),
                            cell.as_deref().map_or("not run".to_owned(), xml)
                        );
                    }
                    body.push_str("</table>\n");
                }
                _ => body.push_str("<p class=\"verdicts none\">Not in the results given.</p>\n"),
            }
            body.push_str("</section>\n");
        }
        pages.push(Page { file: area_file(area), html: page(&format!("Rules: {area}"), &body) });
        let _ = writeln!(
            index_rows,
            "<tr><td><a href=\"{}\">{}</a></td><td>{}</td><td>{}</td></tr>",
            xml(&area_file(area)),
            xml(area),
            cases.len(),
            findings
        );
    }
    let mut index = format!(
        "<p>{} rules in {} areas, each checked by one case of cuda-conformance. Verdicts from {} report(s) in {} \
         configuration(s):</p>\n<ul>\n",
        cases.len(),
        areas.len(),
        reports.len(),
        titles.len()
    );
    for t in &titles {
        let _ = writeln!(index, "<li>{}</li>", xml(t));
    }
    index.push_str("</ul>\n<table id=\"areas\"><tr><th>area</th><th>rules</th><th>findings</th></tr>\n");
    index.push_str(&index_rows);
    index.push_str("</table>\n");
    pages.push(Page { file: "index.html".to_owned(), html: page("CUDA runtime rules: reference", &index) });
    pages
}

fn page(title: &str, body: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{t}</title><style>{STYLE}</style>\
         </head>\n<body>\n<p><a href=\"index.html\">All areas</a></p>\n<h1>{t}</h1>\n{body}</body></html>\n",
        t = xml(title)
    )
}

/// The source text with every `http://` or `https://` address as a link.
fn linked(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(start) = rest.find("http://").or_else(|| rest.find("https://")) {
        out.push_str(&xml(&rest[..start]));
        let url_len = rest[start..]
            .find(|c: char| c.is_whitespace() || matches!(c, ')' | ']' | '"' | ',' | ';' | '>'))
            .unwrap_or(rest.len() - start);
        let url = rest[start..start + url_len].trim_end_matches('.');
        let _ = write!(out, "<a href=\"{0}\">{0}</a>", xml(url));
        rest = &rest[start + url.len()..];
    }
    out.push_str(&xml(rest));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rule_with_a_findings_page_links_to_it() {
        let text = "case a/one\n  rule: r\n  source: s\n  stream s blocking\n  k: sync s\n  \
                    expect k returned cudaSuccess\nend\n";
        let file = crate::case::parse_file("a.case", text).unwrap_or_else(|d| panic!("{d:?}"));
        let link =
            FindingLink { case_id: "a/one".into(), title: "One <finding>".into(), href: "findings/one.md".into() };
        let pages = site_with_findings(&file.cases, &[], &[link]);
        let area = pages.iter().find(|p| p.file == "a.html").map(|p| p.html.as_str()).unwrap_or("");
        assert!(area.contains("Finding: <a href=\"findings/one.md\">One &lt;finding&gt;</a>"), "{area}");
        let plain = site(&file.cases, &[]);
        assert!(!plain.iter().any(|p| p.html.contains("finding-page")));
    }

    #[test]
    fn sources_keep_their_links_and_are_escaped() {
        assert_eq!(
            linked("PG <x> (https://docs.nvidia.com/a.html), more."),
            "PG &lt;x&gt; (<a href=\"https://docs.nvidia.com/a.html\">https://docs.nvidia.com/a.html</a>), more."
        );
        assert_eq!(linked("see https://e.org/x."), "see <a href=\"https://e.org/x\">https://e.org/x</a>.");
        assert_eq!(linked("no link"), "no link");
    }

    #[test]
    fn findings_are_the_verdicts_a_rule_does_not_allow() {
        assert!(is_finding("fail"));
        assert!(is_finding("pass (host1) / fail (host2)"));
        assert!(is_finding("unexpected-pass"));
        assert!(!is_finding("pass"));
        assert!(!is_finding("variant concurrent"));
        assert!(!is_finding("not-supported"));
    }

    #[test]
    fn every_case_has_its_section_on_its_area_page() {
        let text = "case a/one\n  rule: first <rule>\n  source: s\n\n  stream s blocking\n  device-sync\nend\n\n\
                    case b/two\n  rule: second\n  source: s\n\n  stream s blocking\n  device-sync\nend\n";
        let cases = crate::case::parse_file_at("t.case", 1, text).expect("valid").cases;
        let pages = site(&cases, &[]);
        let names: Vec<&str> = pages.iter().map(|p| p.file.as_str()).collect();
        assert_eq!(names, ["a.html", "b.html", "index.html"]);
        assert!(pages[0].html.contains("<section id=\"a/one\""));
        assert!(pages[0].html.contains("first &lt;rule&gt;"));
        assert!(pages[0].html.contains("Not in the results given."));
        assert!(pages[0].html.contains("<code>cases/t.case:1</code>"));
        assert!(pages[1].html.contains("<section id=\"b/two\""));
        assert!(pages[2].html.contains("<a href=\"a.html\">a</a>"));
    }
}
