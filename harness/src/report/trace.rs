//! The text a failed case prints: what `cargo test` shows for it, and the failure text of the JUnit report.

use crate::record::observations::{GraphRecord, Observations, OpValue};
use crate::record::{outcome_text, CaseResult};
use std::fmt::Write as _;

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
            let outcome = outcome_text(a.kind, a.variant.as_deref());
            text.push_str(&format!("    {outcome} ({}, gates at {} ms)\n", a.why, a.gate_delay_ms));
        }
    }
    for line in result.disagreement_lines() {
        text.push_str(&format!("  {line}\n"));
    }
    if let Some(line) = result.reproduce_line_if_failed() {
        text.push_str(&format!("  {line}\n"));
    }
    if let Some(obs) = &result.observations {
        text.push_str("  trace:\n");
        text.push_str(&trace_text(obs, "    "));
    }
    text
}

/// A readable trace for failure messages: one line per operation, then stamps, gates, host calls, buffers,
/// graphs and notes. Every line starts with `indent`.
pub fn trace_text(obs: &Observations, indent: &str) -> String {
    let mut out = String::new();
    for d in obs.decls.iter().filter(|d| d.code.as_deref().is_some_and(|c| c != "cudaSuccess")) {
        let _ = writeln!(out, "{indent}line {:>3}  {} {}: {}", d.line, d.kind, d.name, d.code.as_deref().unwrap_or(""));
    }
    for o in &obs.ops {
        let label = o.label.as_deref().map(|l| format!("{l}: ")).unwrap_or_default();
        let thread = o.thread.as_deref().map(|t| format!("@{t} ")).unwrap_or_default();
        let outcome = match (&o.code, &o.not_run) {
            (Some(code), _) => code.clone(),
            (None, Some(why)) => format!("not run: {why}"),
            (None, None) => "not run".to_owned(),
        };
        let value = o.value.as_ref().map(|v| format!("  [{}]", value_text(v))).unwrap_or_default();
        let _ = writeln!(
            out,
            "{indent}line {:>3}  {:>12} .. {:>12} ns  {label}{thread}{} => {outcome}{value}",
            o.line, o.start_ns, o.end_ns, o.text
        );
    }
    for k in &obs.kernels {
        let name = k.label.clone().unwrap_or_else(|| format!("op #{}", k.op_index));
        match (k.entry_ns, k.exit_ns) {
            (Some(a), Some(b)) => {
                let _ = writeln!(out, "{indent}kernel {name}: device {a} .. {b} ns");
            }
            _ => {
                let _ = writeln!(out, "{indent}kernel {name}: no stamps (never ran)");
            }
        }
    }
    for g in &obs.gates {
        let opened = match (g.opened_ns, g.opened_by) {
            (Some(t), Some(by)) => format!("opened at {t} ns by {by:?}"),
            _ => "never opened".to_owned(),
        };
        let timeout = if g.timed_out { ", TIMED OUT" } else { "" };
        let _ = writeln!(out, "{indent}gate {}: {opened}{timeout}", g.name);
    }
    for c in &obs.host_calls {
        let name = c.label.clone().unwrap_or_else(|| format!("op #{}", c.op_index));
        let status = c.status.as_deref().map(|s| format!(" status {s}")).unwrap_or_default();
        let snap = c.snapshot.as_ref().map(|s| format!(" saw {}", s.summary)).unwrap_or_default();
        let _ = writeln!(out, "{indent}host call {name} at {} ns{status}{snap}", c.at_ns);
    }
    for b in &obs.buffers {
        let what = match (&b.contents, &b.read_error) {
            (Some(c), _) => c.summary.clone(),
            (None, Some(e)) => format!("unread: {e}"),
            (None, None) => "unread".to_owned(),
        };
        let _ = writeln!(out, "{indent}buffer {} ({} {} B): {what}", b.name, b.kind, b.bytes);
    }
    for g in &obs.graphs {
        let _ = writeln!(out, "{indent}graph {}: {}", g.name, graph_text(g));
    }
    if let Some(code) = &obs.final_sync {
        let _ = writeln!(out, "{indent}final cudaDeviceSynchronize: {code}");
    }
    for n in &obs.notes {
        let _ = writeln!(out, "{indent}note: {n}");
    }
    out
}

fn value_text(v: &OpValue) -> String {
    match v {
        OpValue::ElapsedMs(ms) => format!("{ms} ms"),
        OpValue::CaptureStatus(s) => format!("status {s}"),
        OpValue::CaptureDeps { status, count, nodes, edge_types } => {
            format!("status {status}, {count} dependencies [{}], edges [{}]", nodes.join(" "), edge_types.join(" "))
        }
        OpValue::PreviousCaptureMode(m) => format!("previous mode {m}"),
        OpValue::PointerType(t) => format!("memory type {t}"),
        OpValue::StreamPriority { value, greatest, least } => {
            format!("priority {value} (range greatest {greatest}, least {least})")
        }
        OpValue::Snapshot(contents) => format!("contents {}", contents.summary),
        OpValue::Device(d) => format!("device {d}"),
        OpValue::GridBlocks(n) => format!("{n} blocks"),
        OpValue::Number(n) => format!("value {n}"),
        OpValue::Listed { count, null_padded } => {
            format!("count {count}{}", if *null_padded { ", rest NULL" } else { "" })
        }
        OpValue::Address(a) => format!("address {a:#x}"),
        OpValue::Outputs(outputs) => {
            let each: Vec<String> =
                outputs
                    .iter()
                    .map(|o| {
                        if o.varies {
                            format!("{} {:#x}", o.param, o.value)
                        } else {
                            format!("{} {}", o.param, o.value)
                        }
                    })
                    .collect();
            format!("outputs {}", each.join(", "))
        }
        OpValue::Result { result, error_node, error_from } => format!(
            "result {result}, error node {}, error-from node {}",
            error_node.as_deref().unwrap_or("none"),
            error_from.as_deref().unwrap_or("none")
        ),
    }
}

fn graph_text(g: &GraphRecord) -> String {
    if g.null {
        return "NULL".to_owned();
    }
    let name = |i: usize| {
        g.nodes
            .get(i)
            .map(|n| n.label.clone().unwrap_or_else(|| format!("{}#{i}", n.kind)))
            .unwrap_or_else(|| format!("#{i}"))
    };
    let nodes: Vec<String> = (0..g.nodes.len()).map(|i| format!("{}:{}", name(i), g.nodes[i].kind)).collect();
    let edges: Vec<String> = g.edges.iter().map(|[a, b]| format!("{} -> {}", name(*a), name(*b))).collect();
    let error = g.error.as_deref().map(|e| format!(" ({e})")).unwrap_or_default();
    format!("nodes [{}], edges [{}]{error}", nodes.join(", "), edges.join(", "))
}
