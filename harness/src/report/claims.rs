//! The seeds' claims as text: the Markdown section of a report's summary and the console lines of `seeds`.

use super::escape::markdown_cell;
use crate::record::claims::{Quantity, SeedClaims};
use std::fmt::Write as _;

impl Quantity {
    /// `5.123 ms`, or the text of an observation.
    pub fn shown(&self) -> String {
        let Some(value) = self.value else { return self.what.clone() };
        let digits = match self.unit.as_str() {
            "GB/s" | "%" => 1,
            "us" | "×" => 2,
            _ => 3,
        };
        format!("{:.*} {}", digits, value, self.unit)
    }
}

/// `1.23×` or `—`.
fn ratio_text(r: Option<f64>) -> String {
    r.filter(|r| r.is_finite()).map_or("—".into(), |r| format!("{r:.2}×"))
}

impl SeedClaims {
    /// The Markdown section of a report's summary: the bounds, then the claims.
    pub fn markdown(&self) -> String {
        let mut out =
            String::from("\n## The seeds' performance claims (figures, judged against the bound; never pass/fail)\n\n");
        out.push_str("### Bounds measured in this run\n\n| bound | suite | C++ program | suite / program | measured by |\n|---|---|---|---|---|\n");
        for b in &self.bounds {
            let shown = |v: Option<f64>| v.map_or("—".into(), |v| Quantity::new(v, &b.unit, "").shown());
            let ratio = match (b.suite, b.program) {
                (Some(s), Some(p)) if p > 0.0 => format!("{:.3}", s / p),
                _ => "—".into(),
            };
            let _ =
                writeln!(out, "| {} | {} | {} | {ratio} | `{}` |", b.what, shown(b.suite), shown(b.program), b.source);
        }
        out.push_str("\n### Claims\n\n| claim | seed's words | figure | bound | ratio | verdict | seed's program as written |\n|---|---|---|---|---|---|---|\n");
        for c in &self.claims {
            let shown = |q: &Option<Quantity>| q.as_ref().map_or("—".into(), |q| markdown_cell(&q.shown()));
            let _ = writeln!(
                out,
                "| `{}`: {} | {} | {} | {} | {} | **{}** | {} |",
                c.id,
                markdown_cell(&c.claim),
                markdown_cell(&c.words),
                shown(&c.figure),
                shown(&c.bound),
                ratio_text(c.ratio),
                c.verdict,
                markdown_cell(c.program.as_deref().unwrap_or("—"))
            );
        }
        out.push_str("\nHow each verdict is decided, and what the figures are:\n\n");
        for c in &self.claims {
            let what = |q: &Option<Quantity>| q.as_ref().filter(|q| q.value.is_some()).map(|q| q.what.clone());
            let detail: Vec<String> =
                [what(&c.figure).map(|w| format!("figure: {w}")), what(&c.bound).map(|w| format!("bound: {w}"))]
                    .into_iter()
                    .flatten()
                    .collect();
            let detail = if detail.is_empty() { String::new() } else { format!(" ({})", detail.join("; ")) };
            let _ = writeln!(out, "- `{}` — {}{detail}", c.id, c.why);
        }
        for p in self.programs.iter().filter(|p| p.error.is_some()) {
            let _ = writeln!(out, "\n`{}`: {}", p.title(), p.error.as_deref().unwrap_or_default());
        }
        out
    }

    /// For the console: one line per claim.
    pub fn console(&self) -> String {
        let mut out =
            String::from("seed claims (figure against the bound measured in this run; quality, never pass/fail)\n");
        for c in &self.claims {
            let shown = |q: &Option<Quantity>| q.as_ref().map_or("—".into(), Quantity::shown);
            let _ = writeln!(
                out,
                "  {:<26} {:<14} figure {}, bound {}, ratio {}",
                c.id,
                c.verdict.to_string(),
                shown(&c.figure),
                shown(&c.bound),
                ratio_text(c.ratio)
            );
        }
        out
    }
}
