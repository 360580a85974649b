//! API coverage (issue 21): for every cudart function that returns a `cudaError_t`, how many cases call it, which
//! return codes the cases assert for it, which codes a run observed, and which of the codes its header documents
//! (the `\return` list of its doc comment in `cuda_runtime_api.h`) no case has asserted or seen; totals per API
//! group (the header's `\defgroup`s: stream, event, memory, graph, pool, device, peer, error, ...).
//!
//! Needs no GPU: the cases say what they call (`case::calls`) and what they accept; a report adds what a driver
//! returned. Written as `docs/coverage.md` by `cuda-conformance coverage --markdown`.

use crate::api::header::parse_header;
pub use crate::api::header::Declared;
use crate::case::ast::{accepted_codes, Case};
use crate::record::Report;
use crate::report::escape::{markdown_cell, xml};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

/// One row of the table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FunctionCoverage {
    pub name: String,
    pub group: String,
    /// Ids of the cases that call it.
    pub cases: Vec<String>,
    /// Codes some case accepts for a call of it (`cudaSuccess` where a case wrote none).
    pub asserted: Vec<String>,
    /// Codes a call of it returned in the reports given.
    pub observed: Vec<String>,
    pub documented: Vec<String>,
    /// Documented codes neither asserted, observed nor unreachable: open.
    pub never_seen: Vec<String>,
    /// Documented codes that cannot be produced on the platforms the suite runs on, each with the platform it
    /// needs and why (`cases/unreachable.txt`, or the function's own platform tag).
    #[serde(default)]
    pub unreachable: Vec<Unreachable>,
    /// What the function needs that a headless Linux GPU host lacks (`api::platform`), if anything.
    #[serde(default)]
    pub platform: Option<String>,
    /// False for a function the cases call that this header does not declare (a newer or renamed call).
    pub in_header: bool,
}

/// A documented code no run here can produce, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Unreachable {
    pub code: String,
    pub platform: String,
    pub reason: String,
}

/// One line of `cases/unreachable.txt`: `FUNCTION|* CODE PLATFORM: REASON`.
#[derive(Debug, Clone, PartialEq)]
pub struct UnreachableRule {
    /// A function's name, or `*` for every function that documents the code.
    pub function: String,
    pub code: String,
    pub platform: String,
    pub reason: String,
}

/// Parses `cases/unreachable.txt`: `#` comments, blank lines, and `FUNCTION|* CODE PLATFORM: REASON` lines; an error
/// names the line.
pub fn parse_unreachable(file: &str, text: &str) -> Result<Vec<UnreachableRule>, String> {
    let mut out = Vec::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.split_once('#').map_or(raw, |(code, _)| code).trim();
        if line.is_empty() {
            continue;
        }
        let bad = || format!("{file}:{}: expected `FUNCTION|* CODE PLATFORM: REASON`, found `{line}`", i + 1);
        let (head, reason) = line.split_once(':').ok_or_else(bad)?;
        let words: Vec<&str> = head.split_whitespace().collect();
        let [function, code, platform] = words[..] else { return Err(bad()) };
        // A valid call reaches a function's cudaSuccess, unless no page says how to make what the call needs: then
        // only that function's, as `no-condition-known` (cudaLibraryGetUnifiedFunction: "a unified function").
        let success_allowed = code == "cudaSuccess" && function != "*" && platform == "no-condition-known";
        if !(code.starts_with("cudaError") || success_allowed) || reason.trim().is_empty() {
            return Err(bad());
        }
        out.push(UnreachableRule {
            function: function.to_owned(),
            code: code.to_owned(),
            platform: platform.to_owned(),
            reason: reason.trim().to_owned(),
        });
    }
    Ok(out)
}

/// Totals of one group.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct GroupTotals {
    pub functions: usize,
    pub called: usize,
    /// Functions not called that need a platform a headless Linux GPU host lacks (their disposition).
    #[serde(default)]
    pub platform: usize,
    pub documented_codes: usize,
    pub documented_codes_seen: usize,
    /// Documented codes not seen that are unreachable here, with a reason.
    #[serde(default)]
    pub documented_codes_unreachable: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Coverage {
    /// `CUDART_VERSION` of the header.
    pub cudart_version: Option<u32>,
    pub cases: usize,
    pub reports: usize,
    pub functions: Vec<FunctionCoverage>,
    pub groups: BTreeMap<String, GroupTotals>,
    pub total: GroupTotals,
}

/// The table for `cases` against the header text; `reports` add the codes their runs returned.
pub fn coverage(cases: &[Case], header: &str, reports: &[Report]) -> Coverage {
    let declared: Vec<(Declared, Option<String>)> = parse_header(header).into_iter().map(|d| (d, None)).collect();
    let version = header.lines().find_map(|l| l.trim().strip_prefix("#define CUDART_VERSION")?.trim().parse().ok());
    coverage_of(cases, &declared, version, reports, &[])
}

/// The table for `cases` against the API table of this build (`api::table`: the runtime header, the interop
/// headers and the profiler), with the unreachable codes of `rules`.
pub fn coverage_of_table(cases: &[Case], reports: &[Report], rules: &[UnreachableRule]) -> Coverage {
    let declared: Vec<(Declared, Option<String>)> = crate::api::table()
        .iter()
        .map(|f| {
            let d = Declared {
                name: f.name.clone(),
                group: f.group.clone(),
                documented: f.documented.clone(),
                notes: f.notes.clone(),
            };
            (d, f.platform.map(str::to_owned))
        })
        .collect();
    let version = crate::api::generated::HEADER
        .lines()
        .find_map(|l| l.trim().strip_prefix("#define CUDART_VERSION")?.trim().parse().ok());
    coverage_of(cases, &declared, version, reports, rules)
}

fn coverage_of(
    cases: &[Case],
    declared: &[(Declared, Option<String>)],
    cudart_version: Option<u32>,
    reports: &[Report],
    rules: &[UnreachableRule],
) -> Coverage {
    #[derive(Default)]
    struct Seen {
        cases: BTreeSet<String>,
        asserted: BTreeSet<String>,
        observed: BTreeSet<String>,
    }
    let mut seen: BTreeMap<&'static str, Seen> = BTreeMap::new();
    for case in cases {
        for decl in &case.decls {
            let expect = match decl {
                crate::case::ast::Decl::Stream { expect, .. } | crate::case::ast::Decl::Event { expect, .. } => {
                    expect.as_slice()
                }
                _ => &[],
            };
            for f in decl.creation_calls() {
                let s = seen.entry(f).or_default();
                s.cases.insert(case.id.clone());
                s.asserted.extend(accepted_codes(expect));
            }
        }
        for op in &case.script {
            for f in op.kind.cudart_calls(&case.decls) {
                let s = seen.entry(f).or_default();
                s.cases.insert(case.id.clone());
                // `=> any` (a sweep's observe) asserts nothing: what the driver returned is in the reports.
                s.asserted.extend(accepted_codes(&op.expect).into_iter().filter(|c| c != "any"));
            }
        }
    }
    let by_id: BTreeMap<&str, &Case> = cases.iter().map(|c| (c.id.as_str(), c)).collect();
    for report in reports {
        for result in &report.cases {
            let Some(case) = by_id.get(result.id.as_str()) else { continue };
            // A sweep row's observation (`=> any`) is in the verdict as `LABEL=CODE`, traced or not.
            for entry in result.verdict.observed.iter().flat_map(|o| o.split(',')) {
                let Some((label, code)) = entry.split_once('=') else { continue };
                let Some(written) = case.script.iter().find(|op| op.label.as_deref() == Some(label)) else { continue };
                for f in written.kind.cudart_calls(&case.decls) {
                    seen.entry(f).or_default().observed.insert(code.to_owned());
                }
            }
            let Some(obs) = result.observations.as_ref() else { continue };
            for op in &obs.ops {
                let (Some(code), Some(written)) = (&op.code, case.script.get(op.index)) else { continue };
                for f in written.kind.cudart_calls(&case.decls) {
                    seen.entry(f).or_default().observed.insert(code.clone());
                }
            }
            for (record, decl) in obs.decls.iter().zip(&case.decls) {
                let Some(code) = &record.code else { continue };
                for f in decl.creation_calls() {
                    seen.entry(f).or_default().observed.insert(code.clone());
                }
            }
        }
    }

    let mut functions = Vec::new();
    let mut listed = BTreeSet::new();
    for (d, platform) in declared {
        // Some functions are declared twice (#if branches); the first declaration is the row.
        if !listed.insert(d.name.clone()) {
            continue;
        }
        let s = seen.get(d.name.as_str());
        let mut r = row(&d.name, &d.group, &d.documented, s.map(|s| (&s.cases, &s.asserted, &s.observed)), true);
        r.platform = platform.clone();
        // The codes no run here can produce: a platform the function needs, or a rule of unreachable.txt.
        let open = std::mem::take(&mut r.never_seen);
        for code in open {
            let rule = rules.iter().find(|u| (u.function == d.name || u.function == "*") && u.code == code);
            match (platform, rule) {
                (_, Some(u)) => {
                    r.unreachable.push(Unreachable { code, platform: u.platform.clone(), reason: u.reason.clone() })
                }
                (Some(p), None) if r.cases.is_empty() => r.unreachable.push(Unreachable {
                    code,
                    platform: p.clone(),
                    reason: format!("the function needs {p}, which a headless Linux GPU host lacks"),
                }),
                _ => r.never_seen.push(code),
            }
        }
        functions.push(r);
    }
    for (name, s) in &seen {
        if !listed.contains(*name) {
            functions.push(row(name, "not in this header", &[], Some((&s.cases, &s.asserted, &s.observed)), false));
        }
    }

    let mut groups: BTreeMap<String, GroupTotals> = BTreeMap::new();
    let mut total = GroupTotals::default();
    for f in functions.iter().filter(|f| f.in_header) {
        for t in [groups.entry(f.group.clone()).or_default(), &mut total] {
            t.functions += 1;
            t.called += usize::from(!f.cases.is_empty());
            t.platform += usize::from(f.cases.is_empty() && f.platform.is_some());
            t.documented_codes += f.documented.len();
            t.documented_codes_unreachable += f.unreachable.len();
            t.documented_codes_seen += f.documented.len() - f.never_seen.len() - f.unreachable.len();
        }
    }
    Coverage { cudart_version, cases: cases.len(), reports: reports.len(), functions, groups, total }
}

fn row(
    name: &str,
    group: &str,
    documented: &[String],
    seen: Option<(&BTreeSet<String>, &BTreeSet<String>, &BTreeSet<String>)>,
    in_header: bool,
) -> FunctionCoverage {
    let empty = BTreeSet::new();
    let (cases, asserted, observed) = seen.unwrap_or((&empty, &empty, &empty));
    let never_seen = documented.iter().filter(|c| !asserted.contains(*c) && !observed.contains(*c)).cloned().collect();
    FunctionCoverage {
        name: name.to_owned(),
        group: group.to_owned(),
        cases: cases.iter().cloned().collect(),
        asserted: asserted.iter().cloned().collect(),
        observed: observed.iter().cloned().collect(),
        documented: documented.to_vec(),
        never_seen,
        unreachable: Vec::new(),
        platform: None,
        in_header,
    }
}

/// The groups the issue names first, then the rest alphabetically.
const MAIN_GROUPS: [&str; 8] = ["stream", "event", "memory", "graph", "pool", "device", "peer", "error"];

fn ordered_groups(c: &Coverage) -> Vec<(&String, &GroupTotals)> {
    let mut main: Vec<_> = MAIN_GROUPS.iter().filter_map(|g| c.groups.get_key_value(*g)).collect();
    main.extend(c.groups.iter().filter(|(g, _)| !MAIN_GROUPS.contains(&g.as_str())));
    main
}

fn percent(part: usize, whole: usize) -> String {
    (part * 100).checked_div(whole).map_or("—".to_owned(), |p| format!("{p}%"))
}

fn version(c: &Coverage) -> String {
    c.cudart_version.map_or("unknown".to_owned(), |v| format!("{}.{}", v / 1000, v % 1000 / 10))
}

/// The totals table alone (the README shows it).
pub fn totals_markdown(c: &Coverage) -> String {
    let mut out = String::from(
        "| group | functions | called by a case | not called, needs a platform | documented return codes | asserted or seen | unreachable here | open |\n|---|---|---|---|---|---|---|---|\n",
    );
    for (g, t) in ordered_groups(c).into_iter().chain([(&"all".to_owned(), &c.total)]) {
        let open = t.documented_codes - t.documented_codes_seen - t.documented_codes_unreachable;
        let _ = writeln!(
            out,
            "| {g} | {} | {} ({}) | {} | {} | {} ({}) | {} | {} |",
            t.functions,
            t.called,
            percent(t.called, t.functions),
            t.platform,
            t.documented_codes,
            t.documented_codes_seen,
            percent(t.documented_codes_seen, t.documented_codes),
            t.documented_codes_unreachable,
            open
        );
    }
    out
}

pub fn markdown(c: &Coverage) -> String {
    let mut out = String::from("# cudart API coverage\n\n");
    let _ = writeln!(
        out,
        "Generated by `cuda-conformance coverage --markdown` from the {} cases and the CUDA {} `cuda_runtime_api.h`{}; \
         CI checks that it is current. Per function that returns a `cudaError_t`: the cases that call it, the return \
         codes they assert (`cudaSuccess` where a case writes none), the codes a report observed, the documented codes \
         no run here can produce (the platform each needs, and why: `cases/unreachable.txt`), and the codes its header \
         documents in `\\return` that no case asserts{} (open).\n",
        c.cases,
        version(c),
        if c.reports > 0 { format!(" and {} report(s)", c.reports) } else { String::new() },
        if c.reports > 0 { " or a report observed" } else { "" },
    );
    out.push_str("## Totals\n\n");
    out.push_str(&totals_markdown(c));
    for (g, _) in ordered_groups(c) {
        let _ = writeln!(out, "\n## {g}\n");
        out.push_str("| function | cases | asserted | observed | documented, unreachable here | documented, open |\n|---|---|---|---|---|---|\n");
        for f in c.functions.iter().filter(|f| f.in_header && &f.group == g) {
            let unreachable: Vec<String> =
                f.unreachable.iter().map(|u| format!("{} ({}: {})", u.code, u.platform, u.reason)).collect();
            let _ = writeln!(
                out,
                "| `{}` | {} | {} | {} | {} | {} |",
                f.name,
                f.cases.len(),
                markdown_cell(&f.asserted.join(", ")),
                markdown_cell(&f.observed.join(", ")),
                markdown_cell(&unreachable.join("; ")),
                markdown_cell(&f.never_seen.join(", "))
            );
        }
    }
    let extra: Vec<_> = c.functions.iter().filter(|f| !f.in_header).collect();
    if !extra.is_empty() {
        out.push_str("\n## Called, but not declared by this header\n\n| function | cases |\n|---|---|\n");
        for f in extra {
            let _ = writeln!(out, "| `{}` | {} |", f.name, f.cases.len());
        }
    }
    out
}

pub fn html(c: &Coverage) -> String {
    let mut out = String::from(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>cudart API coverage</title>\n\
         <style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}td,th{border:1px solid #ccc;\
         padding:2px 6px;text-align:left}td.n{text-align:right}.none{color:#a00}</style></head><body>\n",
    );
    let _ = writeln!(out, "<h1>cudart API coverage (CUDA {}, {} cases)</h1>", version(c), c.cases);
    out.push_str("<table id=\"totals\"><tr><th>group</th><th>functions</th><th>called</th><th>documented codes</th><th>asserted or seen</th></tr>\n");
    for (g, t) in ordered_groups(c).into_iter().chain([(&"all".to_owned(), &c.total)]) {
        let _ = writeln!(
            out,
            "<tr><td>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td><td class=n>{}</td></tr>",
            xml(g),
            t.functions,
            t.called,
            t.documented_codes,
            t.documented_codes_seen
        );
    }
    out.push_str("</table>\n<table id=\"functions\"><tr><th>function</th><th>group</th><th>cases</th><th>asserted</th><th>observed</th><th>documented, never seen</th></tr>\n");
    for f in &c.functions {
        let _ = writeln!(
            out,
            "<tr><td><code>{}</code></td><td>{}</td><td class=\"n{}\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            xml(&f.name),
            xml(&f.group),
            if f.cases.is_empty() { " none" } else { "" },
            f.cases.len(),
            xml(&f.asserted.join(", ")),
            xml(&f.observed.join(", ")),
            xml(&f.never_seen.join(", "))
        );
    }
    out.push_str("</table>\n</body></html>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = r#"
#define CUDART_VERSION 13000
/**
 * \defgroup CUDART_STREAM Stream Management
 * @{
 */
/**
 * \brief Create a stream
 *
 * \return
 * ::cudaSuccess,
 * ::cudaErrorInvalidValue
 * \notefnerr
 * \sa ::cudaStreamDestroy
 */
extern __host__ cudaError_t CUDARTAPI cudaStreamCreate(cudaStream_t *pStream);

/**
 * \brief Query
 * \return
 * ::cudaSuccess, ::cudaErrorNotReady, ::cudaErrorInvalidResourceHandle
 */
#if defined(X)
extern __host__ cudaError_t CUDARTAPI cudaStreamQuery(cudaStream_t stream);
#endif
extern __host__ const char* CUDARTAPI cudaGetErrorName(cudaError_t error);
/**
 * \defgroup CUDART_MEMORY_POOLS Stream Ordered Memory Allocator
 */
/** \return ::cudaSuccess */
extern __host__ cudaError_t CUDARTAPI cudaMemPoolTrimTo(cudaMemPool_t memPool, size_t minBytesToKeep);
/** @} */ /* END CUDART_MEMORY_POOLS */
/**
 * \addtogroup CUDART_DEVICE
 * @{
 */
/** \return ::cudaSuccess, ::cudaErrorNoDevice */
extern __host__ cudaError_t CUDARTAPI cudaGetDeviceCount(int *count);
"#;

    #[test]
    fn the_header_gives_groups_and_the_return_lists() {
        let d = parse_header(HEADER);
        let names: Vec<&str> = d.iter().map(|d| d.name.as_str()).collect();
        // cudaGetErrorName returns a string, not a code: not a row.
        assert_eq!(names, ["cudaStreamCreate", "cudaStreamQuery", "cudaMemPoolTrimTo", "cudaGetDeviceCount"]);
        assert_eq!(d[0].group, "stream");
        assert_eq!(d[0].documented, ["cudaSuccess", "cudaErrorInvalidValue"]);
        assert_eq!(d[1].documented, ["cudaSuccess", "cudaErrorNotReady", "cudaErrorInvalidResourceHandle"]);
        assert_eq!(d[2].group, "pool");
        assert_eq!((d[3].group.as_str(), d[3].documented.len()), ("device", 2));
    }

    fn case(text: &str) -> Case {
        crate::case::parse_one("t.case", 1, text).unwrap_or_else(|d| panic!("{d:?}"))
    }

    #[test]
    fn cases_count_per_function_and_unasserted_codes_are_listed() {
        let a = case(
            "case t/a\n  rule: r\n  source: s\n\n  stream s blocking\n  q: query s => cudaSuccess | cudaErrorNotReady\n  \
             device-sync\nend\n",
        );
        let cov = coverage(std::slice::from_ref(&a), HEADER, &[]);
        let query = cov.functions.iter().find(|f| f.name == "cudaStreamQuery").expect("a row");
        assert_eq!(query.cases, ["t/a"]);
        assert_eq!(query.asserted, ["cudaErrorNotReady", "cudaSuccess"]);
        assert_eq!(query.never_seen, ["cudaErrorInvalidResourceHandle"]);
        let create = cov.functions.iter().find(|f| f.name == "cudaStreamCreate").expect("a row");
        assert!(create.cases.is_empty(), "the stream is made with cudaStreamCreateWithPriority");
        let extra = cov.functions.iter().find(|f| f.name == "cudaStreamCreateWithPriority").expect("a row");
        assert!(!extra.in_header);
        let stream = &cov.groups["stream"];
        assert_eq!(
            (stream.functions, stream.called, stream.documented_codes, stream.documented_codes_seen),
            (2, 1, 5, 2)
        );
        assert_eq!(cov.cudart_version, Some(13000));
        let md = markdown(&cov);
        let query_row = md.lines().find(|l| l.starts_with("| `cudaStreamQuery` |")).expect("a row");
        assert!(query_row.starts_with("| `cudaStreamQuery` | 1 | cudaErrorNotReady, cudaSuccess |"), "{query_row}");
        assert!(query_row.ends_with("| cudaErrorInvalidResourceHandle |"), "{query_row}");
    }

    #[test]
    fn unreachable_lines_name_the_function_code_platform_and_reason_or_the_line_that_is_wrong() {
        let rules =
            parse_unreachable("u.txt", "# c\n* cudaErrorLaunchTimeout display-watchdog: no display\n\n").unwrap();
        assert_eq!(rules.len(), 1);
        assert_eq!((rules[0].function.as_str(), rules[0].platform.as_str()), ("*", "display-watchdog"));
        let e = parse_unreachable("u.txt", "* cudaErrorLaunchTimeout no-reason\n").unwrap_err();
        assert!(e.starts_with("u.txt:1: expected"), "{e}");
        assert!(parse_unreachable("u.txt", "* cudaSuccess p: r\n").is_err(), "cudaSuccess is never unreachable");
        assert!(parse_unreachable("u.txt", "f cudaSuccess p: r\n").is_err(), "...but where no condition is known");
        assert!(parse_unreachable("u.txt", "* cudaSuccess no-condition-known: r\n").is_err(), "...of one function");
        assert!(parse_unreachable("u.txt", "f cudaSuccess no-condition-known: r\n").is_ok());
    }

    #[test]
    fn an_unreachable_code_is_neither_seen_nor_open() {
        let a = case("case t/a\n  rule: r\n  source: s\n\n  stream s blocking\n  q: query s\nend\n");
        let rule = UnreachableRule {
            function: "*".into(),
            code: "cudaErrorInvalidResourceHandle".into(),
            platform: "p".into(),
            reason: "why".into(),
        };
        let declared: Vec<(Declared, Option<String>)> = parse_header(HEADER).into_iter().map(|d| (d, None)).collect();
        let cov = coverage_of(std::slice::from_ref(&a), &declared, None, &[], std::slice::from_ref(&rule));
        let query = cov.functions.iter().find(|f| f.name == "cudaStreamQuery").unwrap();
        assert_eq!(query.never_seen, ["cudaErrorNotReady"]);
        assert_eq!(query.unreachable[0].code, "cudaErrorInvalidResourceHandle");
        let stream = &cov.groups["stream"];
        assert_eq!((stream.documented_codes_seen, stream.documented_codes_unreachable), (1, 1));
    }
}
