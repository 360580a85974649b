//! The seeds' claims as text: the Markdown section of a report's summary and the console lines of `seeds`.

use super::escape::markdown_cell;
use crate::record::claims::{ClaimRow, ClaimVerdict, Quantity, SeedClaims};
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

/// The ratio, and under `samples:` its least and greatest value: `1.05× (1.00–1.15×, 5 samples)`.
pub fn claim_ratio_text(c: &ClaimRow) -> String {
    match c.samples.as_ref().and_then(|s| s.ratio) {
        Some(s) if s.n > 1 => format!("{} ({:.2}–{:.2}×, {} samples)", ratio_text(c.ratio), s.min, s.max, s.n),
        _ => ratio_text(c.ratio),
    }
}

/// The verdict, and where the samples disagree, how many gave each: `holds (samples: 2 holds, 1 holds partly)`,
/// `undecided (samples: 3 holds, 2 holds partly)`.
pub fn verdict_text(c: &ClaimRow) -> String {
    let Some(s) = c.samples.as_ref().filter(|s| s.straddles) else { return c.verdict.to_string() };
    format!("{} (samples: {})", c.verdict, ClaimVerdict::counts_text(&s.verdicts))
}

/// The rule for claims judged on several samples, as the Markdown section states it.
pub const SAMPLES_RULE: &str = "Where the cases ran more than once (`samples:`), each claim is judged on every \
    sample (sample k takes the k-th run of every case it reads); the figures shown are the median sample's, the ratio \
    has the samples' least and greatest value. The verdict: order the samples by the verdict each gives and set \
    aside a quarter of them at each end (rounded down; at least one once there are three); the middle ones decide. \
    When they agree, that is the verdict (with 3 samples the median decides, with 5 the middle 3); when they differ, \
    the middle of the distribution straddles a threshold and the claim is undecided. One or two samples must all \
    agree.";

impl SeedClaims {
    /// The Markdown section of a report's summary: the bounds, then the claims.
    pub fn markdown(&self) -> String {
        let mut out =
            String::from("\n## The seeds' performance claims (figures, judged against the bound; never pass/fail)\n\n");
        out.push_str("### Bounds measured in this run\n\n| bound | suite | C++ program | suite / program | measured by |\n|---|---|---|---|---|\n");
        for b in &self.bounds {
            let shown = |v: Option<f64>| v.map_or("—".into(), |v| Quantity::new(v, &b.unit, "").shown());
            let suite = match b.spread {
                Some(s) => {
                    format!("{} ({}–{}, {} samples)", shown(b.suite), shown(Some(s.min)), shown(Some(s.max)), s.n)
                }
                None => shown(b.suite),
            };
            let ratio = match (b.suite, b.program) {
                (Some(s), Some(p)) if p > 0.0 => format!("{:.3}", s / p),
                _ => "—".into(),
            };
            let _ = writeln!(out, "| {} | {suite} | {} | {ratio} | `{}` |", b.what, shown(b.program), b.source);
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
                claim_ratio_text(c),
                verdict_text(c),
                markdown_cell(c.program.as_deref().unwrap_or("—"))
            );
        }
        out.push_str("\nHow each verdict is decided, and what the figures are:\n\n");
        if self.claims.iter().any(|c| c.samples.is_some()) {
            let _ = writeln!(out, "{SAMPLES_RULE}\n");
        }
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
                verdict_text(c),
                shown(&c.figure),
                shown(&c.bound),
                claim_ratio_text(c)
            );
        }
        out
    }
}
