//! The semantics matrix (`cuda-conformance matrix REPORT...`): reports from many hosts, GPUs and drivers merged into
//! one table. Rows are cases, columns are (GPU, driver, runtime), cells are verdicts with their variants; rows where
//! the columns disagree come first. Reports with the same GPU, driver and runtime (several hosts of a fleet) share
//! a column; if they disagree, the cell lists each outcome with the hosts that saw it.
//!
//! Written as Markdown, JSON, and one self-contained HTML page (styles, data and script inline: no network needed
//! to view it), whose table the page's script builds from the embedded JSON.

use super::baseline::Key;
use crate::record::Report;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Matrix {
    pub columns: Vec<Column>,
    /// Disagreeing rows first, then the rest; each group in id order.
    pub rows: Vec<Row>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Column {
    pub gpu: String,
    pub driver: String,
    pub runtime: String,
    pub compute_capability: String,
    pub hosts: Vec<String>,
    /// The commits the reports were built from.
    pub commits: Vec<String>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Row {
    pub id: String,
    pub rule: String,
    /// True when the columns that ran the case do not all show the same outcome.
    pub disagree: bool,
    /// One per column: the outcome (`pass`, `variant concurrent`, ...), `None` where no report of the column has the
    /// case. Hosts of one column that disagree give `a (host1) / b (host2)`.
    pub cells: Vec<Option<String>>,
}

impl Matrix {
    pub fn new(reports: &[Report]) -> Matrix {
        let mut keys: Vec<Key> = reports.iter().map(|r| Key::of(&r.provenance)).collect();
        keys.sort();
        keys.dedup();
        let column_of = |r: &Report| keys.iter().position(|k| *k == Key::of(&r.provenance)).unwrap_or(0);
        let mut columns: Vec<Column> = keys
            .iter()
            .map(|k| Column {
                gpu: k.gpu.clone(),
                driver: k.driver.clone(),
                runtime: k.runtime.clone(),
                compute_capability: String::new(),
                hosts: Vec::new(),
                commits: Vec::new(),
            })
            .collect();
        // id → column → outcome → hosts.
        let mut seen: BTreeMap<&str, Vec<BTreeMap<String, BTreeSet<String>>>> = BTreeMap::new();
        let mut rules: BTreeMap<&str, &str> = BTreeMap::new();
        for r in reports {
            let c = column_of(r);
            let col = &mut columns[c];
            col.compute_capability = r.provenance.compute_capability.clone();
            // A fleet's hosts by node and task (`n3[5]`): simulated nodes and containers can share a hostname.
            let host = r.provenance.site();
            for (list, item) in [(&mut col.hosts, &host), (&mut col.commits, &r.provenance.commit)] {
                if !list.contains(item) {
                    list.push(item.clone());
                }
            }
            for case in &r.cases {
                rules.entry(&case.id).or_insert(&case.rule);
                let cells = seen.entry(&case.id).or_insert_with(|| vec![BTreeMap::new(); keys.len()]);
                cells[c].entry(case.outcome()).or_default().insert(host.clone());
            }
        }
        let mut rows: Vec<Row> = seen
            .into_iter()
            .map(|(id, cells)| {
                let cells: Vec<Option<String>> = cells
                    .into_iter()
                    .map(|outcomes| match outcomes.len() {
                        0 => None,
                        1 => outcomes.into_keys().next(),
                        _ => Some(
                            outcomes
                                .into_iter()
                                .map(|(o, hosts)| format!("{o} ({})", hosts.into_iter().collect::<Vec<_>>().join(", ")))
                                .collect::<Vec<_>>()
                                .join(" / "),
                        ),
                    })
                    .collect();
                let distinct: BTreeSet<&String> = cells.iter().flatten().collect();
                Row {
                    id: id.to_owned(),
                    rule: rules.get(id).copied().unwrap_or("").to_owned(),
                    disagree: distinct.len() > 1,
                    cells,
                }
            })
            .collect();
        rows.sort_by(|a, b| b.disagree.cmp(&a.disagree).then_with(|| a.id.cmp(&b.id)));
        Matrix { columns, rows }
    }

    pub fn column_title(c: &Column) -> String {
        format!("{} (cc {}), driver {}, runtime {}", c.gpu, c.compute_capability, c.driver, c.runtime)
    }

    pub fn json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    pub fn markdown(&self) -> String {
        let mut out = String::from("# Semantics matrix\n\n");
        let disagree = self.rows.iter().filter(|r| r.disagree).count();
        let _ = writeln!(
            out,
            "{} cases on {} configurations; {disagree} where the configurations disagree (listed first).\n",
            self.rows.len(),
            self.columns.len()
        );
        for (i, c) in self.columns.iter().enumerate() {
            let _ = writeln!(
                out,
                "- **C{}**: {} — hosts {}; commits {}",
                i + 1,
                Matrix::column_title(c),
                c.hosts.join(", "),
                c.commits.join(", ")
            );
        }
        out.push_str("\n| case |");
        for i in 0..self.columns.len() {
            let _ = write!(out, " C{} |", i + 1);
        }
        out.push_str("\n|---|");
        out.push_str(&"---|".repeat(self.columns.len()));
        out.push('\n');
        for r in &self.rows {
            let id = if r.disagree { format!("**`{}`**", r.id) } else { format!("`{}`", r.id) };
            let _ = write!(out, "| {id} |");
            for cell in &r.cells {
                let _ = write!(out, " {} |", cell.as_deref().unwrap_or("—").replace('|', "\\|"));
            }
            out.push('\n');
        }
        out
    }

    /// One HTML page with everything inline. The table is built by the page's script from the embedded JSON (the
    /// browser test checks the rendered cells against it); a filter box and a "disagreeing only" switch narrow it.
    pub fn html(&self) -> String {
        // `</` cannot appear inside a script element.
        let data = serde_json::to_string(self).unwrap_or_default().replace("</", "<\\/");
        let disagree = self.rows.iter().filter(|r| r.disagree).count();
        format!(
            r##"<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>cuda-conformance semantics matrix</title>
<style>
body {{ font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }}
h1 {{ font-size: 1.4em; margin: 0 0 .3em; }}
#controls {{ margin: .8em 0; }}
table {{ border-collapse: collapse; }}
th, td {{ border: 1px solid #ccc; padding: 2px 8px; text-align: left; vertical-align: top; }}
th {{ background: #f3f3f3; position: sticky; top: 0; }}
td.case {{ font-family: ui-monospace, monospace; font-size: 12px; }}
tr.disagree td.case {{ font-weight: bold; border-left: 4px solid #c60; }}
td.v-pass {{ background: #dff5df; }}
td.v-variant, td.v-expected-fail {{ background: #e3ecfb; }}
td.v-quality-warning, td.v-flake {{ background: #fdf1cf; }}
td.v-not-supported, td.v-skipped, td.v-missing {{ background: #eee; color: #666; }}
td.v-fail, td.v-crash, td.v-timeout, td.v-unexpected-pass {{ background: #f9d6d5; font-weight: bold; }}
td.v-mixed {{ background: #fbe3c6; }}
</style>
</head>
<body>
<h1>cuda-conformance semantics matrix</h1>
<p id="summary">{rows} cases on {cols} configurations; {disagree} where they disagree (listed first).</p>
<div id="controls"><label>filter <input id="filter" type="search" placeholder="case id"></label>
<label><input id="only-disagree" type="checkbox"> disagreeing only</label> <span id="shown"></span></div>
<table id="matrix"><thead></thead><tbody></tbody></table>
<noscript><p>This page builds its table with JavaScript; the same data is in the matrix's JSON and Markdown.</p></noscript>
<script type="application/json" id="matrix-data">{data}</script>
<script>
"use strict";
const data = JSON.parse(document.getElementById("matrix-data").textContent);
const thead = document.querySelector("#matrix thead"), tbody = document.querySelector("#matrix tbody");
const head = document.createElement("tr");
const th0 = document.createElement("th"); th0.textContent = "case"; head.appendChild(th0);
data.columns.forEach((c, i) => {{
  const th = document.createElement("th");
  th.dataset.column = String(i);
  th.textContent = c.gpu + " · driver " + c.driver + " · runtime " + c.runtime;
  th.title = "compute capability " + c.compute_capability + "; hosts: " + c.hosts.join(", ") + "; commits: " + c.commits.join(", ");
  head.appendChild(th);
}});
thead.appendChild(head);
function kindOf(cell) {{
  if (cell === null) return "missing";
  if (cell.includes(" / ")) return "mixed";
  return cell.split(" ")[0];
}}
for (const row of data.rows) {{
  const tr = document.createElement("tr");
  tr.dataset.case = row.id;
  if (row.disagree) tr.className = "disagree";
  const td0 = document.createElement("td"); td0.className = "case"; td0.textContent = row.id; td0.title = row.rule;
  tr.appendChild(td0);
  row.cells.forEach((cell, i) => {{
    const td = document.createElement("td");
    td.className = "cell v-" + kindOf(cell);
    td.dataset.column = String(i);
    td.textContent = cell === null ? "—" : cell;
    tr.appendChild(td);
  }});
  tbody.appendChild(tr);
}}
const filter = document.getElementById("filter"), only = document.getElementById("only-disagree");
function apply() {{
  let shown = 0;
  for (const tr of tbody.rows) {{
    const visible = tr.dataset.case.includes(filter.value) && (!only.checked || tr.classList.contains("disagree"));
    tr.hidden = !visible;
    if (visible) shown++;
  }}
  document.getElementById("shown").textContent = shown + " shown";
}}
filter.addEventListener("input", apply); only.addEventListener("change", apply);
apply();
document.body.dataset.rendered = "true";
</script>
</body>
</html>
"##,
            rows = self.rows.len(),
            cols = self.columns.len(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{report, result};
    use super::Matrix;
    use crate::record::verdict::VerdictKind::*;

    #[test]
    fn columns_rows_and_disagreements_first() {
        let h100 =
            report("H100", 13000, vec![result("a/same", Pass, None), result("a/differs", Variant, Some("sync"))]);
        let h200 =
            report("H200", 13000, vec![result("a/same", Pass, None), result("a/differs", Variant, Some("async"))]);
        let mut h200b = report("H200", 13000, vec![result("a/same", Fail, None), result("a/only", Pass, None)]);
        h200b.provenance.hostname = "host-b".into();
        let m = Matrix::new(&[h100, h200, h200b]);
        assert_eq!(m.columns.len(), 2);
        assert_eq!(m.columns[1].hosts, vec!["host-H200", "host-b"]);
        let ids: Vec<&str> = m.rows.iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, vec!["a/differs", "a/same", "a/only"]);
        assert_eq!(m.rows[0].cells, vec![Some("variant sync".into()), Some("variant async".into())]);
        assert_eq!(m.rows[1].cells[1].as_deref(), Some("fail (host-b) / pass (host-H200)"));
        assert_eq!(m.rows[2].cells, vec![None, Some("pass".into())]);
        assert!(!m.rows[2].disagree);
        let md = m.markdown();
        assert!(md.contains("| **`a/differs`** | variant sync | variant async |"), "{md}");
        let html = m.html();
        assert!(html.contains("<script type=\"application/json\" id=\"matrix-data\">{\"columns\""));
        assert!(!html.contains("http://") && !html.contains("https://"), "the page must need no network");
        let back: Matrix = serde_json::from_str(&m.json()).unwrap();
        assert_eq!(back.rows.len(), 3);
    }
}
