//! Verdicts on synthetic observations: one fixture run in which every predicate has something to look at.

use super::*;
use crate::case::ast::{CaptureStatus, Decl, KernelCall, Op, SourceMap, StreamRef, Target};
use crate::record::observations::{
    BufferRecord, Contents, DeclRecord, GateOpener, GateRecord, GraphRecord, HostCallRecord, NodeRecord,
};

fn s(name: &str) -> StreamRef {
    StreamRef::Named(name.into())
}

fn op(label: &str, kind: OpKind) -> Op {
    Op { label: Some(label.into()), thread: None, kind, expect: vec![], repeat: 1 }
}

/// The fixture script; `obs()` below is a run of it.
fn script() -> Vec<Op> {
    vec![
        op("held", OpKind::Launch { kernel: KernelCall::Gate { gate: "g".into() }, stream: s("s") }),
        op("k1", OpKind::Launch { kernel: KernelCall::Spin { ns: 0, shape: Default::default() }, stream: s("s") }),
        op("k2", OpKind::Launch { kernel: KernelCall::Spin { ns: 0, shape: Default::default() }, stream: s("s") }),
        op("k3", OpKind::Launch { kernel: KernelCall::Spin { ns: 0, shape: Default::default() }, stream: s("t") }),
        op("q", OpKind::Query { target: Target::Stream(s("s")) }),
        op("sy", OpKind::Sync { target: Target::Stream(s("s")) }),
        op("h1", OpKind::HostFunc { stream: s("s"), snapshot: Some("b".into()), hold: None }),
        op("cb", OpKind::Callback { stream: s("s") }),
        op("el", OpKind::Elapsed { start: "e1".into(), stop: "e2".into() }),
    ]
}

fn case(expects: Vec<Expectation>) -> Case {
    let script = script();
    Case {
        id: "test/fixture".into(),
        rule: "r".into(),
        source: "s".into(),
        requires: vec![],
        env: vec![],
        own_process: None,
        poisons: vec![],
        timing: None,
        samples: 1,
        decls: vec![Decl::Gate { name: "g".into() }],
        positions: SourceMap {
            op_lines: (10..10 + script.len() as u32).collect(),
            expect_lines: (40..40 + expects.len() as u32).collect(),
            ..SourceMap::default()
        },
        script,
        expects,
    }
}

fn record(index: usize, op: &Op, start_ns: u64, end_ns: u64) -> OpRecord {
    OpRecord {
        index,
        line: 10 + index as u32,
        label: op.label.clone(),
        thread: None,
        text: crate::case::print::op_kind(&op.kind),
        code: Some("cudaSuccess".into()),
        acceptable: vec!["cudaSuccess".into()],
        start_ns,
        end_ns,
        value: None,
        not_run: None,
    }
}

fn obs() -> Observations {
    let script = script();
    let mut ops: Vec<OpRecord> =
        script.iter().enumerate().map(|(i, op)| record(i, op, 100 * i as u64, 100 * i as u64 + 50)).collect();
    ops[5].end_ns = 1500; // sy returned after g opened at 1000
    ops[8].value = Some(OpValue::ElapsedMs(2.5));
    let kernel = |op_index: usize, label: &str, entry: u64, exit: u64| KernelRecord {
        op_index,
        label: Some(label.into()),
        entry_ns: Some(entry),
        exit_ns: Some(exit),
    };
    let mut words = vec![7u32; 1000];
    words[999] = 9;
    let node = |index: usize, op_index: usize, label: &str| NodeRecord {
        index,
        kind: "kernel".into(),
        op_index: Some(op_index),
        label: Some(label.into()),
    };
    let host_call = |op_index: usize, label: &str, kind, at_ns, status: Option<&str>, snapshot| HostCallRecord {
        op_index,
        label: Some(label.into()),
        kind,
        at_ns,
        status: status.map(Into::into),
        snapshot,
    };
    Observations {
        case_id: "test/fixture".into(),
        decls: vec![DeclRecord {
            name: "g".into(),
            kind: "gate".into(),
            line: 5,
            code: Some("cudaSuccess".into()),
            acceptable: vec!["cudaSuccess".into()],
        }],
        ops,
        kernels: vec![
            kernel(0, "held", 0, 2100),
            kernel(1, "k1", 2100, 2200),
            kernel(2, "k2", 2200, 2300),
            kernel(3, "k3", 2150, 2400),
        ],
        stamp_origin_ns: Some(1_000_000),
        gates: vec![GateRecord {
            name: "g".into(),
            opened_ns: Some(1000),
            opened_by: Some(GateOpener::Script),
            timed_out: false,
        }],
        host_calls: vec![
            host_call(6, "h1", HostCallKind::HostFunc, 1600, None, Some(Contents::of(&[3; 16], &[]))),
            host_call(7, "cb", HostCallKind::Callback, 1700, Some("cudaSuccess"), None),
        ],
        buffers: vec![
            BufferRecord {
                name: "u".into(),
                kind: "device".into(),
                bytes: 4000,
                contents: Some(Contents::of(&[7; 1000], &[])),
                read_error: None,
            },
            BufferRecord {
                name: "b".into(),
                kind: "pinned".into(),
                bytes: 4000,
                contents: Some(Contents::of(&words, &[998, 999])),
                read_error: None,
            },
        ],
        graphs: vec![GraphRecord {
            name: "G".into(),
            end_capture_op: 99,
            null: false,
            nodes: vec![node(0, 1, "k1"), node(1, 2, "k2"), node(2, 3, "k3")],
            edges: vec![[0, 1], [1, 2]],
            error: None,
        }],
        final_sync: Some("cudaSuccess".into()),
        ..Observations::default()
    }
}

fn expect(p: Predicate) -> Verdict {
    judge(&case(vec![Expectation::Expect(p)]), &obs())
}

/// Asserts `p` holds in the fixture run and `not_p` fails with a message containing `why`.
fn holds_and_fails(p: Predicate, not_p: Predicate, why: &str) {
    let v = expect(p.clone());
    assert_eq!(v.kind, VerdictKind::Pass, "{}: {:?}", predicate_text(&p), v.messages);
    let v = expect(not_p.clone());
    assert_eq!(v.kind, VerdictKind::Fail, "{}", predicate_text(&not_p));
    assert!(v.messages.iter().any(|m| m.contains(why)), "{}: {:?} lacks {why:?}", predicate_text(&not_p), v.messages);
}

fn two(a: &str, b: &str) -> (String, String) {
    (a.into(), b.into())
}

#[test]
fn the_fixture_run_passes_without_expectations() {
    let v = judge(&case(vec![]), &obs());
    assert_eq!(v, Verdict { kind: VerdictKind::Pass, variant: None, observed: None, messages: vec![] });
}

#[test]
fn before_compares_exit_and_entry_stamps() {
    let (first, second) = two("k1", "k2");
    let (a, b) = two("k3", "k2");
    holds_and_fails(
        Predicate::Before { first, second },
        Predicate::Before { first: a, second: b },
        "line 40: expect k3 before k2: k2 started at 2200 ns, k3 ended at 2400 ns",
    );
}

#[test]
fn before_needs_stamps_of_kernels() {
    let v = expect(Predicate::Before { first: "q".into(), second: "k1".into() });
    assert!(v.messages[0].contains("q is not a kernel launch"), "{:?}", v.messages);
    let mut o = obs();
    o.kernels[1].entry_ns = None;
    let v = judge(&case(vec![Expectation::Expect(Predicate::Before { first: "k1".into(), second: "k2".into() })]), &o);
    assert!(v.messages[0].contains("k1 has no stamps"), "{:?}", v.messages);
}

#[test]
fn overlaps_needs_a_common_instant() {
    let (a, b) = two("k1", "k3");
    let (c, d) = two("k1", "k2");
    holds_and_fails(
        Predicate::Overlaps { a, b },
        Predicate::Overlaps { a: c, b: d },
        "k1 ran 2100..2200 ns, k2 ran 2200..2300 ns",
    );
}

#[test]
fn waited_for_uses_the_return_time_and_the_open_time() {
    holds_and_fails(
        Predicate::WaitedFor { op: "sy".into(), gate: "g".into() },
        Predicate::WaitedFor { op: "q".into(), gate: "g".into() },
        "q returned at 450 ns, before g was opened at 1000 ns (by script)",
    );
    holds_and_fails(
        Predicate::NotWaitedFor { op: "q".into(), gate: "g".into() },
        Predicate::NotWaitedFor { op: "sy".into(), gate: "g".into() },
        "sy returned at 1500 ns, after g was opened at 1000 ns",
    );
}

#[test]
fn returned_compares_the_code() {
    holds_and_fails(
        Predicate::Returned { op: "q".into(), code: "cudaSuccess".into() },
        Predicate::Returned { op: "q".into(), code: "cudaErrorNotReady".into() },
        "q returned cudaSuccess",
    );
}

#[test]
fn buffer_equality_covers_every_word_and_probed_indices() {
    let eq = |buf: &str, index, value| Predicate::BufferEquals { buf: buf.into(), index, value };
    holds_and_fails(eq("u", None, 7), eq("b", None, 7), "b holds 1000 words in 2 runs: [0..999) = 7, [999..1000) = 9");
    holds_and_fails(eq("b", Some(999), 9), eq("b", Some(998), 9), "b[998] is 7");
    holds_and_fails(eq("b", Some(3), 7), eq("b", Some(1000), 7), "b has no word 1000 (it has 1000 words)");
}

#[test]
fn timed_out_is_a_predicate_and_an_unexpected_timeout_fails() {
    let mut o = obs();
    o.gates[0].timed_out = true;
    let timed_out = Predicate::TimedOut { gate: "g".into() };
    assert_eq!(judge(&case(vec![Expectation::Expect(timed_out.clone())]), &o).kind, VerdictKind::Pass);
    let v = judge(&case(vec![]), &o);
    assert_eq!(v.kind, VerdictKind::Fail);
    assert!(v.messages[0].starts_with("gate g timed out inside its kernel"), "{:?}", v.messages);
    let v = expect(timed_out);
    assert!(v.messages[0].contains("g did not time out"), "{:?}", v.messages);
}

#[test]
fn host_order_uses_first_runs() {
    let order = |labels: &[&str]| Predicate::HostOrder { labels: labels.iter().map(|l| l.to_string()).collect() };
    holds_and_fails(order(&["h1", "cb"]), order(&["cb", "h1"]), "they ran in the order h1 cb");
    let v = expect(order(&["h1", "k1"]));
    assert!(v.messages[0].contains("k1 never ran"), "{:?}", v.messages);
}

#[test]
fn snapshot_and_callback_status() {
    holds_and_fails(
        Predicate::SnapshotEquals { label: "h1".into(), value: 3 },
        Predicate::SnapshotEquals { label: "h1".into(), value: 4 },
        "h1 saw 16 words, all 3 (0x3)",
    );
    let v = expect(Predicate::SnapshotEquals { label: "cb".into(), value: 3 });
    assert!(v.messages[0].contains("cb took no snapshot"), "{:?}", v.messages);
    holds_and_fails(
        Predicate::CallbackStatus { label: "cb".into(), code: "cudaSuccess".into() },
        Predicate::CallbackStatus { label: "cb".into(), code: "cudaErrorLaunchFailure".into() },
        "cb received cudaSuccess",
    );
    let v = expect(Predicate::CallbackStatus { label: "h1".into(), code: "cudaSuccess".into() });
    assert!(v.messages[0].contains("callback h1 never ran"), "{:?}", v.messages);
}

#[test]
fn elapsed_strict_and_inclusive() {
    let el = |ms, inclusive| Predicate::ElapsedAbove { label: "el".into(), ms, inclusive };
    holds_and_fails(el(2.5, true), el(2.5, false), "el measured 2.5 ms");
    holds_and_fails(el(2.0, false), el(3.0, true), "el measured 2.5 ms");
    let v = expect(Predicate::ElapsedAbove { label: "q".into(), ms: 1.0, inclusive: false });
    assert!(v.messages[0].contains("q returned no time"), "{:?}", v.messages);
}

#[test]
fn graph_counts_edges_and_paths() {
    let g = || "G".to_string();
    holds_and_fails(
        Predicate::NodeCount { graph: g(), count: 3 },
        Predicate::NodeCount { graph: g(), count: 2 },
        "G has 3 nodes",
    );
    holds_and_fails(
        Predicate::EdgeCount { graph: g(), count: 2 },
        Predicate::EdgeCount { graph: g(), count: 3 },
        "G has 2 edges",
    );
    let (k1, k2, k3) = ("k1".to_string(), "k2".to_string(), "k3".to_string());
    holds_and_fails(
        Predicate::Edge { graph: g(), from: k1.clone(), to: k2.clone() },
        Predicate::Edge { graph: g(), from: k1.clone(), to: k3.clone() },
        "G has no edge k1 -> k3",
    );
    holds_and_fails(
        Predicate::NoEdge { graph: g(), from: k1.clone(), to: k3.clone() },
        Predicate::NoEdge { graph: g(), from: k2.clone(), to: k3.clone() },
        "G has an edge k2 -> k3",
    );
    holds_and_fails(
        Predicate::Path { graph: g(), from: k1.clone(), to: k3.clone() },
        Predicate::Path { graph: g(), from: k3.clone(), to: k1.clone() },
        "k1 is not reachable from k3 in G",
    );
    holds_and_fails(
        Predicate::NoPath { graph: g(), from: k3.clone(), to: k1.clone() },
        Predicate::NoPath { graph: g(), from: k1.clone(), to: k3 },
        "k3 is reachable from k1 in G",
    );
    let v = expect(Predicate::Edge { graph: g(), from: k1.clone(), to: "q".into() });
    assert!(v.messages[0].contains("q produced no node of G"), "{:?}", v.messages);
    let v = expect(Predicate::NodeCount { graph: "H".into(), count: 0 });
    assert!(v.messages[0].contains("nothing was captured into H"), "{:?}", v.messages);
    let mut o = obs();
    o.graphs[0].null = true;
    let v = judge(&case(vec![Expectation::Expect(Predicate::NodeCount { graph: g(), count: 3 })]), &o);
    assert!(v.messages[0].contains("NULL graph"), "{:?}", v.messages);
}

#[test]
fn quality_gives_a_warning_not_a_failure() {
    let overlap = Predicate::Overlaps { a: "k1".into(), b: "k2".into() };
    let v = judge(&case(vec![Expectation::Quality(overlap)]), &obs());
    assert_eq!(v.kind, VerdictKind::QualityWarning);
    assert!(v.messages[0].starts_with("line 40: quality k1 overlaps k2: "), "{:?}", v.messages);
}

#[test]
fn variant_names_the_first_alternative_that_held() {
    let waited = Predicate::WaitedFor { op: "q".into(), gate: "g".into() };
    let not_waited = Predicate::NotWaitedFor { op: "q".into(), gate: "g".into() };
    let both = Expectation::Variant(vec![("sync".into(), waited.clone()), ("async".into(), not_waited.clone())]);
    let v = judge(&case(vec![both]), &obs());
    assert_eq!((v.kind, v.variant.as_deref()), (VerdictKind::Variant, Some("async")));
    assert_eq!(v.messages, ["line 40: variant async: q not-waited-for g held"]);

    let second =
        Expectation::Variant(vec![("ordered".into(), Predicate::Before { first: "k1".into(), second: "k2".into() })]);
    let v = judge(&case(vec![Expectation::Variant(vec![("async".into(), not_waited)]), second]), &obs());
    assert_eq!(v.variant.as_deref(), Some("async,ordered"));

    let none = Expectation::Variant(vec![("sync".into(), waited)]);
    let v = judge(&case(vec![none]), &obs());
    assert_eq!((v.kind, v.variant), (VerdictKind::Fail, None));
    assert!(v.messages[0].starts_with("line 40: variant: no alternative held: sync: q waited-for g (q returned"));
}

#[test]
fn a_quality_warning_outranks_a_variant() {
    let variant =
        Expectation::Variant(vec![("a".into(), Predicate::Returned { op: "q".into(), code: "cudaSuccess".into() })]);
    let quality = Expectation::Quality(Predicate::Overlaps { a: "k1".into(), b: "k2".into() });
    let v = judge(&case(vec![variant, quality]), &obs());
    assert_eq!((v.kind, v.variant.as_deref()), (VerdictKind::QualityWarning, Some("a")));
}

#[test]
fn unacceptable_codes_fail_with_the_line_and_the_codes() {
    let mut o = obs();
    o.ops[4].code = Some("cudaErrorNotReady".into());
    let v = judge(&case(vec![]), &o);
    assert_eq!(v.kind, VerdictKind::Fail);
    assert_eq!(v.messages, ["line 14: `query s` returned cudaErrorNotReady, expected cudaSuccess"]);
    o.ops[4].acceptable = vec!["cudaSuccess".into(), "cudaErrorNotReady".into()];
    assert_eq!(judge(&case(vec![]), &o).kind, VerdictKind::Pass);

    let mut o = obs();
    o.decls[0].code = Some("cudaErrorMemoryAllocation".into());
    let v = judge(&case(vec![]), &o);
    assert_eq!(v.messages, ["line 5: creating gate g returned cudaErrorMemoryAllocation, expected cudaSuccess"]);
}

#[test]
fn operations_not_run_are_noted_not_failed() {
    let mut o = obs();
    o.ops[4].code = None;
    o.ops[4].not_run = Some("stream s was not created".into());
    let v = judge(&case(vec![]), &o);
    assert_eq!(v.kind, VerdictKind::Pass);
    assert_eq!(v.messages, ["line 14: `query s` was not run: stream s was not created"]);
    let v =
        judge(&case(vec![Expectation::Expect(Predicate::Returned { op: "q".into(), code: "cudaSuccess".into() })]), &o);
    assert_eq!(v.kind, VerdictKind::Fail);
    assert!(v.messages[0].contains("q was not run: stream s was not created"), "{:?}", v.messages);
}

#[test]
fn pointer_type_asserts_the_memory_type() {
    use crate::case::ast::MemoryType;
    let mut c = case(vec![]);
    c.script.push(op("pt", OpKind::PointerType { buf: "d".into(), memory: MemoryType::Device }));
    let mut o = obs();
    let mut pt = record(9, &c.script[9], 0, 0);
    pt.value = Some(OpValue::PointerType("host".into()));
    o.ops.push(pt);
    let v = judge(&c, &o);
    assert_eq!(v.kind, VerdictKind::Fail);
    assert_eq!(v.messages, ["line 19: `pointer-type d is device`: the memory type was host"]);
    o.ops[9].value = Some(OpValue::PointerType("device".into()));
    assert_eq!(judge(&c, &o).kind, VerdictKind::Pass);
    o.ops[9].value = None;
    assert_eq!(judge(&c, &o).kind, VerdictKind::Fail);
}

#[test]
fn capture_assertions_compare_the_value_when_the_call_succeeded() {
    let mut c = case(vec![]);
    c.script.push(op("cs", OpKind::CaptureStatus { stream: s("s"), status: CaptureStatus::Active }));
    c.script.push(op("cd", OpKind::CaptureDeps { stream: s("s"), count: 1, nodes: vec![] }));
    let mut o = obs();
    let mut cs = record(9, &c.script[9], 0, 0);
    cs.value = Some(OpValue::CaptureStatus("none".into()));
    let mut cd = record(10, &c.script[10], 0, 0);
    cd.value = Some(OpValue::CaptureDeps { status: "active".into(), count: 2, nodes: vec![], edge_types: vec![] });
    o.ops.extend([cs, cd]);
    let v = judge(&c, &o);
    assert_eq!(v.kind, VerdictKind::Fail);
    assert_eq!(
        v.messages,
        [
            "line 19: `capture-status s is active`: the status was none",
            "line 20: `capture-deps s is 1`: 2 dependencies (capture status active)"
        ]
    );
    o.ops[9].value = Some(OpValue::CaptureStatus("active".into()));
    o.ops[10].value =
        Some(OpValue::CaptureDeps { status: "active".into(), count: 1, nodes: vec![], edge_types: vec![] });
    assert_eq!(judge(&c, &o).kind, VerdictKind::Pass);
    // A call that returned an accepted error asserts nothing.
    o.ops[9].code = Some("cudaErrorStreamCaptureImplicit".into());
    o.ops[9].acceptable.push("cudaErrorStreamCaptureImplicit".into());
    o.ops[9].value = None;
    assert_eq!(judge(&c, &o).kind, VerdictKind::Pass);
}

#[test]
fn the_watchdog_makes_a_timeout_and_a_failed_final_sync_fails() {
    let mut o = obs();
    o.watchdog_fired_ns = Some(20_000_000_000);
    let v = judge(&case(vec![]), &o);
    assert_eq!(v.kind, VerdictKind::Timeout);
    assert!(v.messages[0].starts_with("the watchdog opened every gate at 20000 ms"), "{:?}", v.messages);

    let mut o = obs();
    o.final_sync = Some("cudaErrorIllegalAddress".into());
    let v = judge(&case(vec![]), &o);
    assert_eq!(v.kind, VerdictKind::Fail);
    assert_eq!(v.messages, ["the cudaDeviceSynchronize after the script returned cudaErrorIllegalAddress"]);
}

#[test]
fn verdict_kinds_print_and_serialise_in_kebab_case() {
    let names: Vec<String> = VerdictKind::ALL.iter().map(|k| k.to_string()).collect();
    assert_eq!(
        names,
        [
            "pass",
            "fail",
            "not-supported",
            "variant",
            "quality-warning",
            "timeout",
            "crash",
            "skipped",
            "flake",
            "expected-fail",
            "unexpected-pass"
        ]
    );
    for k in VerdictKind::ALL {
        assert_eq!(serde_json::to_string(&k).unwrap(), format!("\"{k}\""));
    }
    assert!(VerdictKind::Timeout.is_failure() && !VerdictKind::QualityWarning.is_failure());
}

#[test]
fn observations_round_trip_through_json() {
    let o = obs();
    let json = serde_json::to_string(&o).unwrap();
    let back: Observations = serde_json::from_str(&json).unwrap();
    assert_eq!(back, o);
}

#[test]
fn elapsed_below_for_reversed_events() {
    let below = |ms, inclusive| Predicate::ElapsedBelow { label: "el".into(), ms, inclusive };
    holds_and_fails(below(2.5, true), below(2.5, false), "el measured 2.5 ms");
    holds_and_fails(below(3.0, false), below(2.0, true), "el measured 2.5 ms");
}

#[test]
fn host_runs_counts_every_run() {
    let runs = |count| Predicate::HostRuns { label: "h1".into(), count };
    holds_and_fails(runs(1), runs(2), "h1 ran 1 times");
}

#[test]
fn observe_records_without_judging_and_fails_only_when_nothing_held() {
    let waited = Predicate::WaitedFor { op: "sy".into(), gate: "g".into() };
    let not_waited = Predicate::NotWaitedFor { op: "sy".into(), gate: "g".into() };
    let v = judge(
        &case(vec![Expectation::Observe(vec![("waits".into(), waited.clone()), ("returns".into(), not_waited)])]),
        &obs(),
    );
    assert_eq!((v.kind, v.observed.as_deref(), v.variant.as_deref()), (VerdictKind::Pass, Some("waits"), None));
    let nothing = Predicate::Returned { op: "q".into(), code: "cudaErrorInvalidValue".into() };
    let v = judge(&case(vec![Expectation::Observe(vec![("never".into(), nothing)])]), &obs());
    assert_eq!(v.kind, VerdictKind::Fail, "{v:?}");
}

#[test]
fn poisons_context_names_the_final_sync_error() {
    let mut c = case(vec![]);
    let mut o = obs();
    o.final_sync = Some("cudaErrorIllegalAddress".into());
    assert_eq!(judge(&c, &o).kind, VerdictKind::Fail, "a sticky error the case did not declare fails");
    c.poisons = vec!["cudaErrorIllegalAddress".into()];
    assert_eq!(judge(&c, &o).kind, VerdictKind::Pass);
    o.final_sync = Some("cudaSuccess".into());
    let v = judge(&c, &o);
    assert_eq!(v.kind, VerdictKind::Fail, "a declared poison that never came fails: {v:?}");
}

#[test]
fn an_operation_the_driver_lacks_is_not_supported() {
    let mut o = obs();
    o.ops[0].code = Some("cudaErrorNotSupported".into());
    let v = judge(&case(vec![]), &o);
    assert_eq!(v.kind, VerdictKind::NotSupported, "{v:?}");
    assert!(v.messages[0].contains("lacks the operation"), "{:?}", v.messages);
    o.ops[0].acceptable.push("cudaErrorNotSupported".into());
    assert_eq!(judge(&case(vec![]), &o).kind, VerdictKind::Pass, "a refusal the case expects is its result");
}

#[test]
fn a_graph_an_older_driver_cannot_read_back_is_not_supported() {
    let mut o = obs();
    o.graphs[0].error = Some("cudaGraphGetEdges returned cudaErrorCallRequiresNewerDriver".into());
    let g = || "G".to_string();
    let v = judge(&case(vec![Expectation::Expect(Predicate::EdgeCount { graph: g(), count: 2 })]), &o);
    assert_eq!(v.kind, VerdictKind::NotSupported, "{v:?}");
    assert!(v.messages[0].contains("graph G: cudaGraphGetEdges returned"), "{:?}", v.messages);
    o.graphs[0].error = Some("cudaGraphGetEdges returned cudaErrorInvalidValue".into());
    let v = judge(&case(vec![Expectation::Expect(Predicate::EdgeCount { graph: g(), count: 2 })]), &o);
    assert_eq!(v.kind, VerdictKind::Fail, "any other error reading a graph still fails: {v:?}");
}

#[test]
fn a_declaration_an_older_driver_refuses_is_not_supported() {
    let mut o = obs();
    o.decls[0].code = Some("cudaErrorCallRequiresNewerDriver".into());
    let v = judge(&case(vec![]), &o);
    assert_eq!(v.kind, VerdictKind::NotSupported, "{v:?}");
    assert!(v.messages[0].contains("creating gate g returned cudaErrorCallRequiresNewerDriver"), "{:?}", v.messages);
}

/// `get-device is N` names a device of the case: on a case whose device is ordinal 1, device 1 is ordinal 0.
#[test]
fn get_device_is_judged_by_the_case_device_index() {
    let text = "case t/d\n rule: r\n source: s\n requires: devices >= 2\n a: get-device is 1\n b: get-device\nend\n";
    let case = crate::case::parse_file("t.case", text).unwrap_or_else(|e| panic!("{e:?}")).cases.remove(0);
    let rec = |index: usize, ordinal: i32| OpRecord {
        value: Some(OpValue::Device(ordinal)),
        ..record(index, &case.script[index], 0, 1)
    };
    let mut o = Observations {
        ops: vec![rec(0, 0), rec(1, 1)],
        devices: vec![1, 0],
        final_sync: Some("cudaSuccess".into()),
        ..Observations::default()
    };
    assert_eq!(judge(&case, &o).kind, VerdictKind::Pass, "{:?}", judge(&case, &o));
    o.ops[0].value = Some(OpValue::Device(1));
    let v = judge(&case, &o);
    assert_eq!(v.kind, VerdictKind::Fail);
    assert!(v.messages[0].contains("the current device was device 0 (ordinal 1)"), "{v:?}");
    o.ops[0].value = Some(OpValue::Device(5));
    assert!(judge(&case, &o).messages[0].contains("ordinal 5, none of the case's devices [1, 0]"));
}

#[test]
fn judge_again_takes_the_accepted_codes_from_the_case_as_it_reads_now() {
    let mut o = obs();
    o.ops[1].code = Some("cudaErrorNotReady".into()); // recorded when the case accepted cudaSuccess only
    let mut c = case(vec![]);
    assert_eq!(judge(&c, &o).kind, VerdictKind::Fail);
    c.script[1].expect = vec!["any".into()];
    assert_eq!(judge(&c, &o).kind, VerdictKind::Fail, "judge reads the codes the record accepted");
    assert_eq!(judge_again(&c, &o).kind, VerdictKind::Pass, "judge_again reads the case's");
    // An operation that is no longer the one recorded keeps the record's codes.
    c.script[1].kind = c.script[0].kind.clone();
    assert_eq!(judge_again(&c, &o).kind, VerdictKind::Fail);
}
