//! The console summary of a report: one row per area, one column per verdict, then every case that did not pass.

use crate::record::verdict::VerdictKind;
use crate::record::Report;
use std::collections::BTreeMap;
use std::fmt::Write as _;

impl Report {
    /// The verdict columns of tables: pass and fail always, the others when some case has them.
    pub(crate) fn columns(&self) -> Vec<VerdictKind> {
        VerdictKind::ALL
            .into_iter()
            .filter(|k| matches!(k, VerdictKind::Pass | VerdictKind::Fail) || self.totals.contains_key(k.as_str()))
            .collect()
    }

    /// The summary table: one row per area, one column per verdict, then the non-pass cases with their reasons.
    pub fn summary_table(&self) -> String {
        let kinds = &self.columns()[..];
        let mut out = String::new();
        // The area column as wide as the longest area name (`device-graph-launch` is 19), at least 16.
        let width = self.by_area.keys().map(String::len).max().unwrap_or(0).max(16);
        let _ = write!(out, "{:<width$}", "area");
        for k in kinds {
            let _ = write!(out, " {:>15}", k.to_string());
        }
        out.push('\n');
        let mut rows: Vec<(&str, &BTreeMap<String, usize>)> =
            self.by_area.iter().map(|(a, c)| (a.as_str(), c)).collect();
        rows.push(("total", &self.totals));
        for (area, counts) in rows {
            let _ = write!(out, "{area:<width$}");
            for k in kinds {
                let _ = write!(out, " {:>15}", counts.get(&k.to_string()).copied().unwrap_or(0));
            }
            out.push('\n');
        }
        if let Some(s) = self.run.as_ref().and_then(|r| r.sanitizer.as_ref()) {
            let _ = writeln!(out, "\n{}", s.line());
        }
        if let Some(figures) = &self.figures {
            let _ = write!(out, "\n{}", figures.console());
        }
        if let Some(seeds) = &self.seeds {
            let _ = write!(out, "\n{}", seeds.console());
        }
        if let Some(totals) = self.agreement_totals() {
            let _ = writeln!(out, "\n{}", totals.line());
        }
        for case in self.cases.iter().filter(|c| c.verdict.kind != VerdictKind::Pass || c.executors_disagree()) {
            let variant = case.verdict.variant.as_deref().map(|v| format!(" ({v})")).unwrap_or_default();
            let _ = writeln!(out, "\n{} {}{variant}  [{}]", case.verdict.kind, case.id, case.location);
            for m in &case.verdict.messages {
                let _ = writeln!(out, "    {m}");
            }
            for line in case.disagreement_lines() {
                let _ = writeln!(out, "    {line}");
            }
            if let Some(line) = case.reproduce_line_if_failed() {
                let _ = writeln!(out, "    {line}");
            }
        }
        let observed: Vec<String> = self
            .cases
            .iter()
            .filter_map(|c| c.verdict.observed.as_deref().map(|o| format!("    {} ({o})", c.id)))
            .collect();
        if !observed.is_empty() {
            let _ =
                writeln!(out, "\nobserved (the docs promise nothing; recorded, not judged):\n{}", observed.join("\n"));
        }
        out
    }
}
