//! Whether two executors' runs of one case agree (`run --executor both`): the same verdict and variant/observe
//! pick, and where both have a trace, the same return code of every declaration and operation, the same values
//! (other than times and addresses), the same buffer contents, the same graph records, the same host calls in the
//! same order, and the same final synchronize. Times, stamps and wall are not compared except through the verdict:
//! two runs never take the same nanoseconds, and the verdict is what reads them. Nor are the values of operations
//! that name an object of their process ([`identity_ops`]: a stream's id counts the streams the process made
//! before, and a worker has made many): `same-value`/`other-value` judge those, in the verdict.

use crate::case::ast::{Case, OpKind};
use crate::record::executors::{Agreement, AgreementKind};
use crate::record::observations::{GraphRecord, Observations, OpValue};
use crate::record::verdict::{Verdict, VerdictKind};

/// One executor's run: its verdict and its trace (none when it did not run the case, or died).
pub type Run<'a> = (&'a Verdict, Option<&'a Observations>);

/// At most this many differences are listed (the first ones, in the order of the trace).
const LISTED: usize = 20;

/// The operations of `case` whose value names an object of the process that ran it (`stream-id`).
pub fn identity_ops(case: &Case) -> Vec<usize> {
    let names_an_object = |kind: &OpKind| matches!(kind, OpKind::StreamId { .. });
    case.script.iter().enumerate().filter(|(_, op)| names_an_object(&op.kind)).map(|(i, _)| i).collect()
}

/// Compares `first` with `second`; the values of the operations `identities` ([`identity_ops`]) are not compared.
pub fn compare(identities: &[usize], first: Run<'_>, second: Run<'_>) -> Agreement {
    let (v1, o1) = first;
    let (v2, o2) = second;
    let neither_ran = |k: VerdictKind| matches!(k, VerdictKind::NotSupported | VerdictKind::Skipped);
    if neither_ran(v1.kind) && v1.kind == v2.kind {
        return Agreement { kind: AgreementKind::NotComparable, differences: vec![format!("both {}", v1.kind)] };
    }
    let mut d = Differences::default();
    if v1.kind != v2.kind {
        d.push(format!("verdict: {} vs {}", v1.kind, v2.kind));
    }
    d.check("variant", &v1.variant, &v2.variant);
    d.check("observed", &v1.observed, &v2.observed);
    match (o1, o2) {
        (Some(a), Some(b)) => traces(&mut d, identities, a, b),
        (None, None) => {}
        (a, b) => d.push(format!("trace: {} vs {}", presence(a), presence(b))),
    }
    let kind = if d.lines.is_empty() { AgreementKind::Agree } else { AgreementKind::Disagree };
    let mut differences = d.lines;
    if differences.len() > LISTED {
        let more = differences.len() - LISTED;
        differences.truncate(LISTED);
        differences.push(format!("(+{more} more)"));
    }
    Agreement { kind, differences }
}

fn presence(o: Option<&Observations>) -> &'static str {
    if o.is_some() {
        "recorded"
    } else {
        "none"
    }
}

#[derive(Default)]
struct Differences {
    lines: Vec<String>,
}

impl Differences {
    fn push(&mut self, line: String) {
        self.lines.push(line);
    }

    /// Records `what: A vs B` when `a` and `b` differ.
    fn check<T: PartialEq + std::fmt::Debug>(&mut self, what: &str, a: &T, b: &T) {
        if a != b {
            self.push(format!("{what}: {a:?} vs {b:?}"));
        }
    }
}

fn traces(d: &mut Differences, identities: &[usize], a: &Observations, b: &Observations) {
    d.check("declarations", &a.decls.len(), &b.decls.len());
    for (x, y) in a.decls.iter().zip(&b.decls) {
        d.check(&format!("line {} {} {}: code", x.line, x.kind, x.name), &x.code, &y.code);
    }
    d.check("operations", &a.ops.len(), &b.ops.len());
    for (x, y) in a.ops.iter().zip(&b.ops) {
        let at = format!("line {} `{}`", x.line, x.text);
        d.check(&format!("{at}: code"), &x.code, &y.code);
        d.check(&format!("{at}: run"), &x.not_run.is_some(), &y.not_run.is_some());
        if !identities.contains(&x.index) {
            d.check(&format!("{at}: value"), &comparable(&x.value), &comparable(&y.value));
        }
    }
    let calls = |o: &Observations| -> Vec<String> {
        o.host_calls
            .iter()
            .map(|c| format!("{:?} op {} {:?} status {:?}", c.kind, c.op_index, c.label, c.status))
            .collect()
    };
    d.check("host calls (in the order they ran)", &calls(a), &calls(b));
    let snapshots = |o: &Observations| -> Vec<_> { o.host_calls.iter().map(|c| c.snapshot.clone()).collect() };
    d.check("host-call snapshots", &snapshots(a), &snapshots(b));
    d.check("buffers", &a.buffers.len(), &b.buffers.len());
    for (x, y) in a.buffers.iter().zip(&b.buffers) {
        d.check(&format!("buffer {}: contents", x.name), &x.contents, &y.contents);
        d.check(&format!("buffer {}: read back", x.name), &x.read_error.is_none(), &y.read_error.is_none());
    }
    let graphs = |o: &Observations| -> Vec<GraphRecord> {
        // The reason a topology could not be read is the executor's text; whether it could is compared.
        o.graphs.iter().map(|g| GraphRecord { error: g.error.as_ref().map(|_| String::new()), ..g.clone() }).collect()
    };
    d.check("graphs", &graphs(a), &graphs(b));
    d.check("final synchronize", &a.final_sync, &b.final_sync);
    d.check("gate kernel timed out", &timed_out(a), &timed_out(b));
}

/// An operation's value without what two runs never share: elapsed times and addresses.
fn comparable(value: &Option<OpValue>) -> Option<OpValue> {
    match value {
        Some(OpValue::ElapsedMs(_)) | Some(OpValue::Address(_)) => None,
        Some(OpValue::Outputs(outputs)) => {
            Some(OpValue::Outputs(outputs.iter().filter(|o| !o.varies).cloned().collect()))
        }
        other => other.clone(),
    }
}

fn timed_out(o: &Observations) -> Vec<&str> {
    o.gates.iter().filter(|g| g.timed_out).map(|g| g.name.as_str()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::observations::{BufferRecord, Contents, HostCallKind, HostCallRecord, NodeRecord, OpRecord};

    fn verdict(kind: VerdictKind, variant: Option<&str>) -> Verdict {
        Verdict { kind, variant: variant.map(str::to_owned), observed: None, messages: vec!["why".into()] }
    }

    fn op(index: usize, code: &str, value: Option<OpValue>, start_ns: u64) -> OpRecord {
        OpRecord {
            index,
            line: 5 + index as u32,
            label: Some(format!("k{index}")),
            thread: None,
            text: format!("sync s{index}"),
            code: Some(code.into()),
            acceptable: vec!["cudaSuccess".into()],
            start_ns,
            end_ns: start_ns + 10,
            value,
            not_run: None,
        }
    }

    fn trace() -> Observations {
        Observations {
            case_id: "a/b".into(),
            ops: vec![
                op(0, "cudaSuccess", Some(OpValue::ElapsedMs(1.5)), 100),
                op(1, "cudaErrorInvalidValue", Some(OpValue::Number(3)), 200),
            ],
            host_calls: vec![
                HostCallRecord {
                    op_index: 0,
                    label: Some("h0".into()),
                    kind: HostCallKind::HostFunc,
                    at_ns: 5,
                    status: None,
                    snapshot: None,
                },
                HostCallRecord {
                    op_index: 1,
                    label: Some("h1".into()),
                    kind: HostCallKind::Callback,
                    at_ns: 9,
                    status: Some("cudaSuccess".into()),
                    snapshot: None,
                },
            ],
            buffers: vec![BufferRecord {
                name: "d".into(),
                kind: "device".into(),
                bytes: 16,
                contents: Some(Contents::of(&[1, 2, 3, 4], &[])),
                read_error: None,
            }],
            graphs: vec![GraphRecord {
                name: "g".into(),
                end_capture_op: 1,
                null: false,
                nodes: vec![NodeRecord { index: 0, kind: "kernel".into(), op_index: Some(0), label: None }],
                edges: vec![],
                error: None,
            }],
            final_sync: Some("cudaSuccess".into()),
            wall_ns: 1000,
            ..Observations::default()
        }
    }

    #[test]
    fn runs_that_differ_only_in_times_and_messages_agree() {
        let (a, mut b) = (trace(), trace());
        b.wall_ns = 99_999;
        b.ops[0].start_ns = 7;
        b.ops[0].value = Some(OpValue::ElapsedMs(2.25));
        b.host_calls[1].at_ns = 1;
        b.stamp_origin_ns = Some(42);
        let mut vb = verdict(VerdictKind::Pass, None);
        vb.messages = vec!["another wording".into()];
        let agreement = compare(&[], (&verdict(VerdictKind::Pass, None), Some(&a)), (&vb, Some(&b)));
        assert_eq!(agreement, Agreement { kind: AgreementKind::Agree, differences: vec![] });
    }

    #[test]
    fn the_value_of_an_identity_operation_is_not_compared_and_every_other_value_is() {
        let pass = verdict(VerdictKind::Pass, None);
        let (a, mut b) = (trace(), trace());
        b.ops[1].value = Some(OpValue::Number(4));
        assert_eq!(compare(&[1], (&pass, Some(&a)), (&pass, Some(&b))).kind, AgreementKind::Agree);
        assert_eq!(compare(&[0], (&pass, Some(&a)), (&pass, Some(&b))).kind, AgreementKind::Disagree);
        let case = crate::case::parse_one(
            "t.case",
            1,
            "case t/ids\n  rule: r\n  source: s\n  stream s\n  a: stream-id s\n     sync s\n  b: stream-id s\n  \
             expect a same-value b\nend\n",
        )
        .expect("valid case");
        assert_eq!(identity_ops(&case), vec![0, 2]);
    }

    #[test]
    fn each_compared_field_makes_a_disagreement_that_names_it() {
        let pass = verdict(VerdictKind::Pass, None);
        type Change = Box<dyn Fn(&mut Observations)>;
        let changes: Vec<(&str, Change)> = vec![
            ("line 6 `sync s1`: code", Box::new(|o| o.ops[1].code = Some("cudaSuccess".into()))),
            ("line 6 `sync s1`: value", Box::new(|o| o.ops[1].value = Some(OpValue::Number(4)))),
            ("host calls", Box::new(|o| o.host_calls.swap(0, 1))),
            ("buffer d: contents", Box::new(|o| o.buffers[0].contents = Some(Contents::of(&[1, 2, 3, 5], &[])))),
            ("graphs", Box::new(|o| o.graphs[0].edges.push([0, 0]))),
            ("final synchronize", Box::new(|o| o.final_sync = Some("cudaErrorLaunchFailure".into()))),
            ("operations", Box::new(|o| o.ops.truncate(1))),
        ];
        for (what, change) in changes {
            let (a, mut b) = (trace(), trace());
            change(&mut b);
            let agreement = compare(&[], (&pass, Some(&a)), (&pass, Some(&b)));
            assert_eq!(agreement.kind, AgreementKind::Disagree, "{what}");
            assert!(agreement.differences.iter().any(|l| l.starts_with(what)), "{what}: {:?}", agreement.differences);
        }
    }

    #[test]
    fn verdicts_and_picks_are_compared_and_unrun_cases_are_not_comparable() {
        let t = trace();
        let v = |k, p| verdict(k, p);
        let variant_a = v(VerdictKind::Variant, Some("sync"));
        let variant_b = v(VerdictKind::Variant, Some("async"));
        let picks = compare(&[], (&variant_a, Some(&t)), (&variant_b, Some(&t)));
        assert_eq!(picks.kind, AgreementKind::Disagree);
        assert_eq!(picks.differences, vec![r#"variant: Some("sync") vs Some("async")"#.to_owned()]);
        let crash = v(VerdictKind::Crash, None);
        let crashed = compare(&[], (&v(VerdictKind::Pass, None), Some(&t)), (&crash, None));
        assert_eq!(
            crashed.differences,
            vec!["verdict: pass vs crash".to_owned(), "trace: recorded vs none".to_owned()]
        );
        let unsupported = v(VerdictKind::NotSupported, None);
        assert_eq!(compare(&[], (&unsupported, None), (&unsupported, None)).kind, AgreementKind::NotComparable);
        assert_eq!(compare(&[], (&crash, None), (&crash, None)).kind, AgreementKind::Agree, "both died the same way");
        assert_eq!(compare(&[], (&unsupported, None), (&crash, None)).kind, AgreementKind::Disagree);
    }
}
