//! The semantics matrix (`cuda-conformance matrix REPORT...`): reports from many hosts, GPUs and drivers merged into
//! one table. Rows are cases, columns are (GPU, driver, runtime) and the semantic settings when they differ from the
//! driver's defaults, cells are verdicts with their variants; rows where the columns disagree come first. Reports
//! with the same column (several hosts of a fleet) share it; if they disagree, the cell lists each outcome with the
//! hosts that saw it. Built one report at a time ([`MatrixBuilder`]), so memory does not grow with report size.
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
    /// The semantic settings that differ from the driver's defaults (`CUDA_DEVICE_MAX_CONNECTIONS=1`), empty for
    /// the defaults: runs made under other settings get a column of their own.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub environment: String,
    pub hosts: Vec<String>,
    /// The commits the reports were built from.
    pub commits: Vec<String>,
}

/// A matrix built one report at a time, so that `matrix` and `fleet` never hold more than one report at once: what
/// it keeps per report is its column, its host and one small number per case.
#[derive(Debug, Default)]
pub struct MatrixBuilder {
    /// Column keys (GPU, driver, runtime; semantic settings) in the order first seen, with their columns.
    keys: Vec<(Key, String)>,
    columns: Vec<Column>,
    /// Every host seen, once; cells name hosts by index into it.
    hosts: Vec<String>,
    host_index: BTreeMap<String, u32>,
    /// id → (rule, column → outcome → host indices).
    seen: BTreeMap<String, (String, Vec<HostsByOutcome>)>,
}

/// One cell as it is built: outcome → the indices of the hosts that saw it.
type HostsByOutcome = BTreeMap<String, Vec<u32>>;

/// How many hosts a split cell names for one outcome; the rest are counted (a fleet of 10,000 hosts would otherwise
/// write every name into the cell).
const HOSTS_NAMED: usize = 8;

impl MatrixBuilder {
    pub fn add(&mut self, r: &Report) {
        let key = (Key::of(&r.provenance), r.provenance.semantic_difference());
        let c = match self.keys.iter().position(|k| *k == key) {
            Some(c) => c,
            None => {
                self.columns.push(Column {
                    gpu: key.0.gpu.clone(),
                    driver: key.0.driver.clone(),
                    runtime: key.0.runtime.clone(),
                    compute_capability: String::new(),
                    environment: key.1.clone(),
                    hosts: Vec::new(),
                    commits: Vec::new(),
                });
                self.keys.push(key);
                self.keys.len() - 1
            }
        };
        let col = &mut self.columns[c];
        col.compute_capability = r.provenance.compute_capability.clone();
        // A fleet's hosts by node and task (`n3[5]`): simulated nodes and containers can share a hostname.
        let host = r.provenance.site();
        for (list, item) in [(&mut col.hosts, &host), (&mut col.commits, &r.provenance.commit)] {
            if !list.contains(item) {
                list.push(item.clone());
            }
        }
        let next = self.hosts.len() as u32;
        let h = *self.host_index.entry(host.clone()).or_insert(next);
        if h == next {
            self.hosts.push(host);
        }
        for case in &r.cases {
            // Looked up before inserting: every report of a fleet names the same ids, cloned only the first time.
            if !self.seen.contains_key(&case.id) {
                self.seen.insert(case.id.clone(), (case.rule.clone(), Vec::new()));
            }
            let Some((_, cells)) = self.seen.get_mut(&case.id) else { continue };
            if cells.len() <= c {
                cells.resize(c + 1, BTreeMap::new());
            }
            // Pushed as they come (a host reported twice is listed once when the cell is written).
            cells[c].entry(case.outcome()).or_default().push(h);
        }
    }

    pub fn finish(self) -> Matrix {
        // Columns in key order (GPU, driver, runtime, then settings), whatever order the reports came in.
        let mut order: Vec<usize> = (0..self.keys.len()).collect();
        order.sort_by(|&a, &b| self.keys[a].cmp(&self.keys[b]));
        let hosts = &self.hosts;
        let mut rows: Vec<Row> = self
            .seen
            .into_iter()
            .map(|(id, (rule, cells))| {
                let cells: Vec<Option<String>> = order
                    .iter()
                    .map(|&c| {
                        let outcomes = cells.get(c)?;
                        match outcomes.len() {
                            0 => None,
                            1 => outcomes.keys().next().cloned(),
                            _ => Some(
                                outcomes
                                    .iter()
                                    .map(|(o, list)| format!("{o} ({})", named(hosts, list)))
                                    .collect::<Vec<_>>()
                                    .join(" / "),
                            ),
                        }
                    })
                    .collect();
                let distinct: BTreeSet<&String> = cells.iter().flatten().collect();
                Row { id, rule, disagree: distinct.len() > 1, cells, finding: None }
            })
            .collect();
        rows.sort_by(|a, b| b.disagree.cmp(&a.disagree).then_with(|| a.id.cmp(&b.id)));
        let mut columns: Vec<Option<Column>> = self.columns.into_iter().map(Some).collect();
        let columns = order.iter().filter_map(|&c| columns[c].take()).collect();
        Matrix { columns, rows }
    }
}

/// The hosts of `list` by name, sorted, the first [`HOSTS_NAMED`] of them and a count of the others.
fn named(hosts: &[String], list: &[u32]) -> String {
    let mut names: Vec<&str> = list.iter().map(|&h| hosts[h as usize].as_str()).collect();
    names.sort_unstable();
    names.dedup();
    let more = names.len().saturating_sub(HOSTS_NAMED);
    names.truncate(HOSTS_NAMED);
    let mut text = names.join(", ");
    if more > 0 {
        let _ = write!(text, " and {more} more");
    }
    text
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
    /// The findings page of the case, when it has one (`matrix --findings DIR`): its title and address.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finding: Option<(String, String)>,
}

impl Matrix {
    pub fn new(reports: &[Report]) -> Matrix {
        let mut builder = MatrixBuilder::default();
        for r in reports {
            builder.add(r);
        }
        builder.finish()
    }

    /// Links each row whose case has a findings page to it.
    pub fn link_findings(&mut self, links: &[crate::report::findings::FindingLink]) {
        for row in &mut self.rows {
            if let Some(link) = links.iter().find(|l| l.case_id == row.id) {
                row.finding = Some((link.title.clone(), link.href.clone()));
            }
        }
    }

    pub fn column_title(c: &Column) -> String {
        let env = if c.environment.is_empty() { String::new() } else { format!(", {}", c.environment) };
        format!("{} (cc {}), driver {}, runtime {}{env}", c.gpu, c.compute_capability, c.driver, c.runtime)
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
            let mut id = if r.disagree { format!("**`{}`**", r.id) } else { format!("`{}`", r.id) };
            if let Some((title, href)) = &r.finding {
                let _ = write!(id, " ([finding]({href} \"{}\"))", title.replace('"', "'"));
            }
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
  th.textContent = c.gpu + " · driver " + c.driver + " · runtime " + c.runtime + (c.environment ? " · " + c.environment : "");
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
    fn a_case_with_a_findings_page_links_to_it() {
        let mut m =
            Matrix::new(&[report("H100", 13000, vec![result("a/one", Fail, None), result("a/two", Pass, None)])]);
        let link = crate::report::findings::FindingLink {
            case_id: "a/one".into(),
            title: "The \"one\" finding".into(),
            href: "/results/findings/one.md".into(),
        };
        m.link_findings(&[link]);
        let md = m.markdown();
        assert!(md.contains("| `a/one` ([finding](/results/findings/one.md \"The 'one' finding\")) |"), "{md}");
        assert!(md.contains("| `a/two` |"), "{md}");
        assert!(m.json().contains("/results/findings/one.md"));
    }

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

    /// A report of `gpu` on host `host` whose one case `a/x` came out `kind`, run under `connections` (None: unset).
    fn run(host: &str, connections: Option<&str>, kind: crate::record::verdict::VerdictKind) -> crate::record::Report {
        let mut r = report("H100", 13000, vec![result("a/x", kind, None)]);
        r.provenance.hostname = host.into();
        let value = connections.map_or_else(|| "8 (unset: the default)".to_owned(), str::to_owned);
        r.provenance.semantic_environment = [
            ("CUDA_DEVICE_MAX_CONNECTIONS".to_owned(), value),
            ("CUDA_LAUNCH_BLOCKING".to_owned(), "0 (unset: the default)".to_owned()),
            ("CUDA_MODULE_LOADING".to_owned(), "lazy".to_owned()),
        ]
        .into();
        r
    }

    #[test]
    fn runs_under_other_semantic_settings_get_a_column_of_their_own() {
        // Set to the default value (8, or `lazy` in another case) is the default: one column with the unset run.
        let m = Matrix::new(&[run("h1", None, Pass), run("h2", Some("1"), Fail), run("h3", Some("8"), Pass)]);
        assert_eq!(m.columns.len(), 2, "{:?}", m.columns);
        assert_eq!((m.columns[0].environment.as_str(), &m.columns[0].hosts), ("", &vec!["h1".to_owned(), "h3".into()]));
        assert_eq!(m.columns[1].environment, "CUDA_DEVICE_MAX_CONNECTIONS=1");
        assert_eq!(m.rows[0].cells, vec![Some("pass".into()), Some("fail".into())]);
        assert!(Matrix::column_title(&m.columns[1]).ends_with("runtime 13.0, CUDA_DEVICE_MAX_CONNECTIONS=1"));
        assert!(m.html().contains("c.environment"));
        // The fleet's majority votes apart too: the one run with 1 connection is not outvoted by the two without.
        let inputs = [run("h1", None, Pass), run("h2", Some("1"), Fail), run("h3", None, Pass)]
            .into_iter()
            .map(|r| (r.provenance.hostname.clone(), Ok(r)))
            .collect();
        let reference = super::super::fleet::Reference::Majority;
        let f = super::super::fleet::Fleet::merge(inputs, super::super::fleet::Expected::Seen, &reference, None);
        let deviations: usize = f.slots.iter().flat_map(|s| &s.entries).map(|e| e.deviations.len()).sum();
        assert_eq!(deviations, 0, "{}", f.markdown());
        assert_eq!(f.matrix.columns.len(), 2);
    }

    #[test]
    fn a_split_cell_of_a_large_fleet_names_a_few_hosts_and_counts_the_rest() {
        let mut reports: Vec<_> = (0..20).map(|i| run(&format!("n{i:02}"), None, Pass)).collect();
        reports.push(run("n99", None, Fail));
        let m = Matrix::new(&reports);
        assert_eq!(
            m.rows[0].cells[0].as_deref(),
            Some("fail (n99) / pass (n00, n01, n02, n03, n04, n05, n06, n07 and 12 more)")
        );
    }
}
