//! Builds a case's [`Timeline`] from a run's observations (pure, no CUDA). The runner stores it on the case's result,
//! so a saved report can be drawn again ([`crate::report::timeline`] draws it as SVG).
//!
//! The clock is the case's: under `timing: events`, every bracketed operation (copies included) from the events
//! around it; otherwise the kernels' `%globaltimer` stamps, and copies are not shown. Host functions run on the
//! host's clock: they are placed by the offset between a gate's opening (host) and its kernel's end (device), when
//! the case has a gate that was opened; otherwise they are left out and a note says so.

use super::measure::{device_interval, memory_kind};
use crate::case::ast::{Case, KernelCall, MemKind, Op, OpKind, StreamRef};
use crate::record::observations::Observations;
use crate::record::timeline::{Bar, BarKind, Mark, MarkKind, Timeline};

/// The timeline of a run, or `None` when nothing in it has a device time.
pub fn build(case: &Case, obs: &Observations) -> Option<Timeline> {
    let events = case.timing.is_some() && !obs.timed.is_empty();
    let indices: Vec<usize> = if events {
        obs.timed.iter().map(|t| t.op_index).collect()
    } else {
        obs.kernels.iter().filter(|k| k.entry_ns.is_some() && k.exit_ns.is_some()).map(|k| k.op_index).collect()
    };
    let spans: Vec<(usize, (f64, f64))> =
        indices.into_iter().filter_map(|i| Some((i, device_interval(case, obs, i)?))).collect();
    if spans.is_empty() {
        return None;
    }
    let mut notes = Vec::new();
    let copies = |op: &Op| matches!(op.kind, OpKind::Memcpy { .. } | OpKind::MemcpyPeer { .. } | OpKind::Memset { .. });
    if !events && case.script.iter().any(copies) {
        notes.push("copies and memsets are not shown: only kernels have device times without `timing: events`".into());
    }
    let lanes = lanes_of(case);
    let origin_ms = spans.iter().map(|(_, (s, _))| *s).fold(f64::INFINITY, f64::min);
    let ns = |ms: f64| ((ms - origin_ms) * 1e6).max(0.0).round() as u64;
    let lane_of = |op: &Op| {
        let stream = lane_stream(&op.kind).map_or("legacy", StreamRef::name);
        lanes.iter().position(|l| l == stream).unwrap_or(0)
    };
    let mut bars: Vec<Bar> = spans
        .iter()
        .map(|&(i, (start, end))| {
            let op = &case.script[i];
            Bar {
                lane: lane_of(op),
                start_ns: ns(start),
                end_ns: ns(end).max(ns(start)),
                kind: bar_kind(case, &op.kind),
                label: label(case, i),
                text: crate::case::print::op(op),
            }
        })
        .collect();
    bars.sort_by_key(|b| (b.lane, b.start_ns));
    let mut marks = Vec::new();
    for bar in bars.iter().filter(|b| b.kind == BarKind::Gate) {
        marks.push(Mark {
            lane: bar.lane,
            at_ns: bar.end_ns,
            kind: MarkKind::GateOpen,
            label: format!("{} opened", bar.label),
        });
    }
    // device time = host time + offset, from the first gate whose opening and kernel end are both known.
    let offset_ns = case.script.iter().enumerate().find_map(|(i, op)| {
        let OpKind::Launch { kernel: KernelCall::Gate { gate }, .. } = &op.kind else { return None };
        let opened = obs.gate(gate)?.opened_ns? as i128;
        let (_, end) = spans.iter().find(|(j, _)| *j == i)?.1;
        Some(ns(end) as i128 - opened)
    });
    let host_calls: Vec<_> = obs.host_calls.iter().collect();
    match offset_ns {
        Some(offset) => {
            for call in host_calls {
                let Some(op) = case.script.get(call.op_index) else { continue };
                let at = call.at_ns as i128 + offset;
                if at >= 0 {
                    marks.push(Mark {
                        lane: lane_of(op),
                        at_ns: at as u64,
                        kind: MarkKind::HostCall,
                        label: label(case, call.op_index),
                    });
                }
            }
            if !obs.host_calls.is_empty() {
                notes.push(
                    "host functions are placed by the host clock, aligned by a gate's opening (within microseconds)"
                        .into(),
                );
            }
        }
        None if !host_calls.is_empty() => {
            notes.push("host functions are not shown: no gate opening aligns the host clock with the device's".into())
        }
        None => {}
    }
    let span_ns = bars.iter().map(|b| b.end_ns).chain(marks.iter().map(|m| m.at_ns)).max().unwrap_or(0).max(1);
    let clock = if events { "events" } else { "stamps" }.to_owned();
    Some(Timeline { clock, lanes, bars, marks, span_ns, notes })
}

/// Every stream the script puts work on, in order of first use (`legacy` for synchronous copies and memsets).
fn lanes_of(case: &Case) -> Vec<String> {
    let mut lanes: Vec<String> = Vec::new();
    for op in &case.script {
        if let Some(s) = lane_stream(&op.kind) {
            if !lanes.iter().any(|l| l == s.name()) {
                lanes.push(s.name().to_owned());
            }
        }
    }
    lanes
}

/// The stream whose lane shows an operation: where its device work runs, or where a host function is queued.
fn lane_stream(kind: &OpKind) -> Option<&StreamRef> {
    kind.work_stream().or(match kind {
        OpKind::HostFunc { stream, .. } | OpKind::Callback { stream } => Some(stream),
        _ => None,
    })
}

fn label(case: &Case, index: usize) -> String {
    case.script[index]
        .label
        .clone()
        .unwrap_or_else(|| format!("line {}", case.positions.op_lines.get(index).copied().unwrap_or(0)))
}

fn bar_kind(case: &Case, kind: &OpKind) -> BarKind {
    match kind {
        OpKind::Launch { kernel: KernelCall::Gate { .. }, .. } => BarKind::Gate,
        OpKind::Memcpy { dst, src, .. } => {
            let host = |name: &str| memory_kind(case, name).is_some_and(MemKind::is_host);
            match (host(src), host(dst)) {
                (true, false) => BarKind::CopyH2d,
                (false, true) => BarKind::CopyD2h,
                (false, false) => BarKind::CopyD2d,
                (true, true) => BarKind::CopyH2h,
            }
        }
        // Between device buffers (of two devices, for a peer copy).
        OpKind::MemcpyPeer { .. } => BarKind::CopyD2d,
        OpKind::Memset { .. } => BarKind::Memset,
        OpKind::LaunchGraph { .. } => BarKind::Graph,
        _ => BarKind::Kernel,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::observations::{GateOpener, GateRecord, HostCallKind, HostCallRecord, KernelRecord, TimedOp};

    const CASE: &str = "\
case perf/one
  rule: r
  source: s
  timing: events

  stream up
  stream comp
  gate g
  buffer h pinned 4KiB
  buffer d device 4KiB

  held: launch gate g on up
  c:    memcpy-async d h on up
  k:    launch spin on comp
  hf:   host-func on comp
        open g
        sync up
        memcpy h d

  expect d == 0
end
";

    fn case() -> Case {
        let file = crate::case::parse_file("perf.case", CASE).unwrap();
        assert_eq!(crate::case::validate(&file), vec![]);
        file.cases.into_iter().next().unwrap()
    }

    fn timed(op_index: usize, start_ms: f64, end_ms: f64) -> TimedOp {
        TimedOp { op_index, label: None, start_ms, end_ms }
    }

    #[test]
    fn events_give_every_operation_a_bar_on_its_streams_lane() {
        let case = case();
        let obs = Observations {
            timed: vec![timed(0, 1.0, 3.0), timed(1, 3.0, 4.0), timed(2, 1.5, 1.75), timed(6, 4.5, 5.0)],
            gates: vec![GateRecord {
                name: "g".into(),
                opened_ns: Some(10_000_000),
                opened_by: Some(GateOpener::Script),
                timed_out: false,
            }],
            host_calls: vec![HostCallRecord {
                op_index: 3,
                label: Some("hf".into()),
                kind: HostCallKind::HostFunc,
                at_ns: 9_000_000,
                status: None,
                snapshot: None,
            }],
            ..Observations::default()
        };
        let t = build(&case, &obs).unwrap();
        assert_eq!(t.clock, "events");
        assert_eq!(
            t.lanes,
            ["up", "comp", "legacy"],
            "streams in order of first use; the synchronous copy's is legacy"
        );
        let bars: Vec<(usize, &str, BarKind, u64, u64)> =
            t.bars.iter().map(|b| (b.lane, b.label.as_str(), b.kind, b.start_ns, b.end_ns)).collect();
        assert_eq!(
            bars,
            [
                (0, "held", BarKind::Gate, 0, 2_000_000),
                (0, "c", BarKind::CopyH2d, 2_000_000, 3_000_000),
                (1, "k", BarKind::Kernel, 500_000, 750_000),
                (2, "line 18", BarKind::CopyD2h, 3_500_000, 4_000_000),
            ]
        );
        assert_eq!(t.span_ns, 4_000_000);
        // The gate opened at host 10 ms and its kernel ended at device 2 ms: the host function at host 9 ms is at
        // device 1 ms, on its stream's lane.
        let marks: Vec<(usize, MarkKind, u64)> = t.marks.iter().map(|m| (m.lane, m.kind, m.at_ns)).collect();
        assert_eq!(marks, [(0, MarkKind::GateOpen, 2_000_000), (1, MarkKind::HostCall, 1_000_000)]);
    }

    #[test]
    fn without_events_kernels_come_from_stamps_and_copies_are_left_out() {
        let mut case = case();
        case.timing = None;
        assert!(!case.is_timed(1));
        let stamp = |op_index, a, b| KernelRecord { op_index, label: None, entry_ns: Some(a), exit_ns: Some(b) };
        let obs = Observations {
            kernels: vec![stamp(0, 100, 2_000), stamp(2, 500, 900)],
            host_calls: vec![HostCallRecord {
                op_index: 3,
                label: Some("hf".into()),
                kind: HostCallKind::HostFunc,
                at_ns: 1,
                status: None,
                snapshot: None,
            }],
            ..Observations::default()
        };
        let t = build(&case, &obs).unwrap();
        assert_eq!(t.clock, "stamps");
        assert_eq!(t.bars.len(), 2);
        assert_eq!((t.bars[0].start_ns, t.bars[0].end_ns), (0, 1_900));
        assert!(t.notes.iter().any(|n| n.contains("copies and memsets are not shown")), "{:?}", t.notes);
        assert!(t.notes.iter().any(|n| n.contains("host functions are not shown")), "no gate opened: {:?}", t.notes);
        assert!(build(&case, &Observations::default()).is_none(), "nothing timed, no timeline");
    }
}
