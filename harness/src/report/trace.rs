//! The text a failed case prints: what `cargo test` shows for it, and the failure text of the JUnit report.

use super::CaseResult;

/// The verdict and id, the rule, the source, where the case is written, every message, the runs when there were
/// several, and the trace of the run that counts.
pub fn failure_text(result: &CaseResult) -> String {
    let mut text = format!(
        "{} {}\n  rule:   {}\n  source: {}\n  at:     {}\n",
        result.verdict.kind, result.id, result.rule, result.source, result.location
    );
    if let Some(expected) = &result.baseline {
        text.push_str(&format!("  baseline: {expected}\n"));
    }
    for m in &result.verdict.messages {
        text.push_str(&format!("  - {m}\n"));
    }
    if !result.attempts.is_empty() {
        text.push_str("  runs:\n");
        for a in &result.attempts {
            let outcome = super::outcome_text(a.kind, a.variant.as_deref());
            text.push_str(&format!("    {outcome} ({}, gates at {} ms)\n", a.why, a.gate_delay_ms));
        }
    }
    if let Some(obs) = &result.observations {
        text.push_str("  trace:\n");
        text.push_str(&obs.trace_text("    "));
    }
    text
}
