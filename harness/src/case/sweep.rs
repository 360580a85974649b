//! `sweep ID ... end`: one rule across the functions it applies to, a case per row (`cases/README.md`, "Sweeps").
//!
//! ```text
//! sweep api/null-out
//!   rule: A NULL output pointer is rejected with cudaErrorInvalidValue.
//!   source: CUDA Runtime API 13.0, each function's \return list
//!   mutate: out=null            # the row's parameter of this class (named after the function, or the first) gets this value
//!   each => cudaErrorInvalidValue
//!   row cudaGetDeviceCount
//!   row cudaMemGetInfo total observe
//!   row cudaDeviceGetAttribute value attr=cudaDevAttrWarpSize
//! end
//! ```
//!
//! Each row becomes the case `ID/FUNCTION[/PARAM]`: the sweep's header lines, its declarations and prelude
//! operations (every other line), the row's call labelled `row` (its arguments, the mutation, the row's codes or
//! the sweep's `each`), then the `then` operations. `observe` accepts any code (`=> any`): the report records what
//! the driver returned. The case's text is that generated case, so workers and reproducers get it as any case;
//! its first line is numbered so that the call has the row's line number. A row makes only the declarations one of
//! its lines names ([`unused_declaration_lines`]; not for rows in a process of their own).

use super::ast::Case;
use super::cursor::diag;
use super::diagnostic::{did_you_mean, Diagnostic};
use super::parse::parse_file_at;
use super::tokens::strip_comment;
use std::collections::BTreeSet;

/// The cases of one sweep block (`block[0]` is its `sweep ID` line, the last its `end`).
pub(super) fn expand(path: &str, block: &[(u32, &str)]) -> Result<Vec<Case>, Diagnostic> {
    let (first, head) = block[0];
    let id = strip_comment(head).trim().strip_prefix("sweep").unwrap_or("").trim().to_owned();
    if id.is_empty() {
        return Err(diag(path, first, 1, "expected `sweep ID`".into()));
    }
    if block.len() < 2 || strip_comment(block[block.len() - 1].1).trim() != "end" {
        return Err(diag(path, first, 1, format!("sweep `{id}` has no `end`")));
    }
    let mut header = Vec::new();
    let mut body = Vec::new();
    let mut then = Vec::new();
    let mut mutate: Option<(u32, String, Vec<String>)> = None;
    let mut call_on = String::new();
    let mut each = String::from("");
    let mut rows = Vec::new();
    for &(number, raw) in &block[1..block.len() - 1] {
        let line = strip_comment(raw).trim();
        let keep_comment = raw.trim();
        if line.is_empty() {
            continue;
        }
        if let Some(rest) = line.strip_prefix("mutate:") {
            let Some((class, value)) = rest.trim().split_once('=') else {
                return Err(diag(path, number, 1, "expected `mutate: CLASS=VALUE` (e.g. `mutate: out=null`)".into()));
            };
            let values = value.split('|').map(|v| v.trim().to_owned()).filter(|v| !v.is_empty()).collect();
            mutate = Some((number, class.trim().to_owned(), values));
        } else if let Some(rest) = line.strip_prefix("call-on:") {
            call_on = format!("@{} ", rest.trim());
        } else if let Some(rest) = line.strip_prefix("each") {
            let rest = rest.trim();
            each = if rest == "observe" { "=> any".to_owned() } else { rest.to_owned() };
            if each.ends_with("where documented") && !each.starts_with("=>") {
                return Err(diag(
                    path,
                    number,
                    1,
                    "expected `each => CODE [| CODE ...] [where documented]` or `each observe`".into(),
                ));
            }
        } else if let Some(rest) = line.strip_prefix("row ") {
            rows.push((number, rest.trim().to_owned()));
        } else if let Some(rest) = line.strip_prefix("then ") {
            then.push(rest.trim().to_owned());
        } else if ["rule:", "source:", "requires:", "env:", "own-process:", "poisons-context:", "timing:"]
            .iter()
            .any(|k| line.starts_with(k))
        {
            header.push(keep_comment.to_owned());
        } else {
            body.push(line.to_owned());
        }
    }
    if rows.is_empty() {
        return Err(diag(path, first, 1, format!("sweep `{id}` has no `row` lines")));
    }
    let mut cases = Vec::new();
    let mut ids = std::collections::BTreeSet::new();
    for (number, row) in rows {
        let (call, codes) = match row.split_once("=>") {
            Some((call, codes)) => (call.trim().to_owned(), format!("=> {}", codes.trim())),
            None => match row.strip_suffix(" observe") {
                Some(call) => (call.trim().to_owned(), "=> any".to_owned()),
                None => (row.clone(), each.clone()),
            },
        };
        let mut words = call.split_whitespace();
        let function = words.next().unwrap_or_default().to_owned();
        // A build against a header older than the suite's (CUDA 12.x) may lack the function or the parameter a row
        // names: the row's case is still made, and its call, which that build cannot resolve, is not run.
        let old_header = crate::api::header_version().is_some_and(|v| v < 13000);
        let missing = crate::api::ApiFunction::missing(&function);
        let api_row = match crate::api::function(&function) {
            Some(row) => row,
            None if old_header => &missing,
            None => {
                let hint = did_you_mean(&function, crate::api::table().iter().map(|f| f.name.as_str()));
                return Err(diag(path, number, 1, format!("`{function}` is not a function of the API table{hint}")));
            }
        };
        let mut args: Vec<String> = Vec::new();
        let mut target: Option<String> = None;
        for w in words {
            // A bare parameter name right after the function is the one the sweep mutates (any bare word, for a
            // function this build's header lacks: its parameters are unknown here).
            let known = api_row.params.iter().any(|p| p.name == w) || (old_header && api_row.params.is_empty());
            if target.is_none() && args.is_empty() && !w.contains('=') && known {
                target = Some(w.to_owned());
            } else {
                args.push(w.to_owned());
            }
        }
        // One case per value of the mutation (one case when the sweep mutates nothing).
        let values: Vec<Option<&String>> = match &mutate {
            Some((_, _, values)) => values.iter().map(Some).collect(),
            None => vec![None],
        };
        for value in values {
            let mut args = args.clone();
            // `each => CODE where documented`: the code where the function's \return list names it, else observe.
            let codes = match codes.strip_suffix("where documented") {
                Some(listed) => {
                    let listed = listed.trim();
                    let all_documented = listed
                        .trim_start_matches("=>")
                        .split('|')
                        .map(str::trim)
                        .all(|c| c == "cudaSuccess" || api_row.documented.iter().any(|d| d == c));
                    if all_documented {
                        listed.to_owned()
                    } else {
                        "=> any".to_owned()
                    }
                }
                None => codes.clone(),
            };
            let mut suffix = String::new();
            if let (Some((mline, class, all)), Some(value)) = (&mutate, value) {
                let param = match &target {
                    Some(t) => api_row.params.iter().find(|p| p.name == t),
                    None => api_row
                        .params
                        .iter()
                        .find(|p| p.class.word() == *class || p.class.word().starts_with(&format!("{class}:"))),
                };
                // The value in the id where the sweep has several (`.../count`, `.../1-negative`).
                let value_suffix = |value: &str| {
                    let mut v = format!(
                        "/{}",
                        value.trim_start_matches('-').replace(|c: char| !c.is_ascii_alphanumeric(), "-")
                    );
                    if value.starts_with('-') {
                        v.push_str("-negative");
                    }
                    v
                };
                match param {
                    // The row's case is made, its call unresolved (not run), under the id a 13.0 build gives it as
                    // far as this build can tell (a second parameter of the class it cannot see).
                    None if old_header => {
                        args.push(format!("{class}={value}"));
                        if let Some(t) = &target {
                            suffix.push_str(&format!("/{}", kebab(t)));
                        }
                        if all.len() > 1 {
                            suffix.push_str(&value_suffix(value));
                        }
                    }
                    None => {
                        return Err(diag(
                            path,
                            number,
                            1,
                            format!("`{function}` has no parameter of class `{class}` to mutate (line {mline})"),
                        ))
                    }
                    Some(param) => {
                        if args.iter().any(|a| a.starts_with(&format!("{}=", param.name))) {
                            return Err(diag(
                                path,
                                number,
                                1,
                                format!("the row names `{}`, which the sweep mutates", param.name),
                            ));
                        }
                        args.push(format!("{}={value}", param.name));
                        if target.is_some() || api_row.params.iter().filter(|p| p.class == param.class).count() > 1 {
                            suffix.push_str(&format!("/{}", kebab(param.name)));
                        }
                        if all.len() > 1 {
                            suffix.push_str(&value_suffix(value));
                        }
                    }
                }
            }
            let case_id = format!("{id}/{function}{suffix}");
            let case_id = if ids.contains(&case_id) { format!("{case_id}/{number}") } else { case_id };
            ids.insert(case_id.clone());
            cases.extend(row_case(path, number, &case_id, &header, &body, &then, &call_on, &function, &args, &codes)?);
        }
    }
    Ok(cases)
}

/// The case of one row: the sweep's header and body, the row's call labelled `row` (numbered so that it has the
/// row's line), the `then` operations.
#[allow(clippy::too_many_arguments)]
fn row_case(
    path: &str,
    number: u32,
    case_id: &str,
    header: &[String],
    body: &[String],
    then: &[String],
    call_on: &str,
    function: &str,
    args: &[String],
    codes: &str,
) -> Result<Vec<Case>, Diagnostic> {
    let mut text = vec![format!("case {case_id}")];
    text.extend(header.iter().cloned());
    text.extend(body.iter().cloned());
    let before = text.len() as u32;
    text.push(format!("  row: {call_on}call {function} {} {codes}", args.join(" ")));
    text.extend(then.iter().cloned());
    text.push("end".to_owned());
    let start = number.saturating_sub(before).max(1);
    let file = parse_file_at(path, start, &text.join("\n")).map_err(|mut e| e.remove(0))?;
    // A row in a process of its own keeps every declaration: rows share such a process only when their
    // declarations are the same (`runner::policy::shares_process`).
    let Some(case) = file.cases.first().filter(|c| !c.needs_own_process()) else { return Ok(file.cases) };
    let unused = unused_declaration_lines(case, &text[1 + header.len()..], start + 1 + header.len() as u32);
    if unused.is_empty() {
        return Ok(file.cases);
    }
    // The line keeps its number, as a comment that says why, so every later line (and a diagnostic) keeps its own.
    for line in unused {
        let declaration = &mut text[(line - start) as usize];
        *declaration = format!("  # not made for this row, which names it nowhere: {}", declaration.trim());
    }
    let file = parse_file_at(path, start, &text.join("\n")).map_err(|mut e| e.remove(0))?;
    Ok(file.cases)
}

/// The lines of the declarations of the row `case` that no other line of its body names (`body`: the lines after
/// its header, the first numbered `start`): a stream, event, buffer, slice, pool, graph or executable graph whose
/// name is no word of any operation or expectation (the header's `rule:` and `source:` are prose). A sweep declares
/// what any of its rows needs, and a row creates and releases only what it uses: on an H100 the rows of api/valid
/// and api/device-ordinal spent 15-19 ms each making and freeing objects no call of theirs passed, 3-5 s of a run
/// (results/2026-11-27_phases_h100). What a call is given is only what its arguments name (`call` fills no
/// parameter from a declaration by itself), so an object named nowhere can change no row's call. The test is on words, so it keeps too much rather than too little (a
/// name that is also a word of another line stays). Gates, threads, conditions and processes stay, and so does what
/// a kept slice is part of. A row that measures or times with events keeps all (its figures are not the call's).
fn unused_declaration_lines(case: &Case, body: &[String], start: u32) -> Vec<u32> {
    use super::ast::{Decl, Expectation};
    if case.timing.is_some() || case.expects.iter().any(|e| matches!(e, Expectation::Measure(_))) {
        return Vec::new();
    }
    let declaration_lines: BTreeSet<u32> = case.positions.decl_lines.iter().copied().collect();
    let is_name_char = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-';
    let mut used: BTreeSet<&str> = body
        .iter()
        .enumerate()
        .filter(|(i, _)| !declaration_lines.contains(&(start + *i as u32)))
        .flat_map(|(_, t)| strip_comment(t).split(|c: char| !is_name_char(c)))
        .filter(|w| !w.is_empty())
        .collect();
    // A slice may be of a slice: until no kept slice adds the name of what it is part of.
    loop {
        let parts: Vec<&str> = case
            .decls
            .iter()
            .filter_map(|d| match d {
                Decl::Slice { name, of, .. } if used.contains(name.as_str()) && !used.contains(of.as_str()) => {
                    Some(of.as_str())
                }
                _ => None,
            })
            .collect();
        if parts.is_empty() {
            break;
        }
        used.extend(parts);
    }
    case.decls
        .iter()
        .zip(&case.positions.decl_lines)
        .filter(|(decl, _)| {
            let prunable = matches!(
                decl,
                Decl::Stream { .. }
                    | Decl::Event { .. }
                    | Decl::Buffer { .. }
                    | Decl::Slice { .. }
                    | Decl::Pool { .. }
                    | Decl::Graph { .. }
                    | Decl::Exec { .. }
            );
            prunable && !used.contains(decl.name())
        })
        .map(|(_, line)| *line)
        .collect()
}

/// `leastPriority` -> `least-priority`, `type_` -> `type`: a parameter's name as a case id segment.
fn kebab(name: &str) -> String {
    let mut out = String::new();
    for c in name.trim_matches('_').chars() {
        if c.is_ascii_uppercase() {
            if !out.is_empty() {
                out.push('-');
            }
            out.push(c.to_ascii_lowercase());
        } else if c.is_ascii_alphanumeric() {
            out.push(c);
        } else {
            out.push('-');
        }
    }
    out
}
