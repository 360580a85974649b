//! Lowering: a program into an `ast::Case` the harness runs, eagerly or through a captured graph, with the
//! expectations of the model and the interpreter written into it, so a printed case checks itself when saved under
//! `cases/`. And [`raise`], the inverse, which recovers the program from such a case (for the round-trip property).
//!
//! Both variants wrap the body the same way:
//! ```text
//! record fork on s0; wait s1 for fork; ...      # fork: every other stream starts after origin's work
//! <body>
//! record join1 on s1; wait s0 for join1; ...    # join: origin continues after every stream's work
//! ```
//! In a capture the fork is what brings the other streams into the capture, and the join is required before
//! `end-capture` (an unjoined stream fails the capture). Eagerly repeated, the same wrapper orders repetition r+1
//! after all of repetition r, just as each graph launch is ordered after the previous one. In a single run the
//! wrapper adds no order between body ops (the fork record precedes all work; nothing follows the join).

use crate::interpret::Expected;
use crate::model::HappensBefore;
use crate::program::{buffer_name, event_name, label, stream_name, BufKind, Op, Program};
use harness::case::ast::{self, CaptureMode, Decl, EventFlags, Expectation, MemKind, OpKind, Predicate, StreamRef};

/// How a program is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// The body `reps` times in a row on the streams, then `sync s0`.
    Eager { reps: u32 },
    /// `begin-capture s0 global`, the body, `end-capture s0 into g`, `instantiate gx from g`, `launch-graph gx on s0`
    /// `launches` times, `sync s0`.
    Captured { launches: u32 },
}

impl Variant {
    /// How many times the body runs.
    pub fn runs(self) -> u32 {
        match self {
            Variant::Eager { reps } => reps,
            Variant::Captured { launches } => launches,
        }
    }

    fn slug(self) -> String {
        match self {
            Variant::Eager { reps: 1 } => "eager".into(),
            Variant::Eager { reps } => format!("eager-x{reps}"),
            Variant::Captured { launches } => format!("captured-x{launches}"),
        }
    }
}

pub const FORK_EVENT: &str = "fork";
pub const GRAPH: &str = "g";
pub const EXEC: &str = "gx";
fn join_event(stream: usize) -> String {
    format!("join{stream}")
}

/// Label of body op `i` in repetition `rep` (repetitions after the first get a suffix: labels are unique in a case).
pub fn rep_label(i: usize, rep: u32) -> String {
    if rep == 0 {
        label(i)
    } else {
        format!("{}-r{rep}", label(i))
    }
}

fn named(name: String) -> StreamRef {
    StreamRef::Named(name)
}

fn op(label: Option<String>, kind: OpKind) -> ast::Op {
    ast::Op { label, thread: None, kind, expect: Vec::new() }
}

/// The case operation of one body op.
fn body_op(o: &Op) -> OpKind {
    let s = |i| named(stream_name(i));
    let b = buffer_name;
    match *o {
        Op::Fill { stream, buf, value } => OpKind::LaunchFill { buf: b(buf), value, stream: s(stream) },
        Op::Transform { stream, buf, mul, add } => OpKind::LaunchTransform { buf: b(buf), mul, add, stream: s(stream) },
        Op::Compare { stream, a, b: bb, into } => {
            OpKind::LaunchCompare { a: b(a), b: b(bb), into: b(into), stream: s(stream) }
        }
        Op::Copy { stream, dst, src } => {
            OpKind::Memcpy { dst: b(dst), src: b(src), bytes: None, stream: Some(s(stream)) }
        }
        Op::Memset { stream, buf, byte } => OpKind::Memset { buf: b(buf), byte, bytes: None, stream: Some(s(stream)) },
        Op::HostFunc { stream, snapshot } => {
            OpKind::HostFunc { stream: s(stream), snapshot: snapshot.map(b), hold: None }
        }
        Op::Record { stream, event } => OpKind::Record { event: event_name(event), stream: s(stream), external: false },
        Op::Wait { stream, event } => OpKind::Wait { stream: s(stream), event: event_name(event), external: false },
    }
}

/// A stable id for a program: FNV-1a of its debug form, so the same program always gets the same case id.
pub fn program_id(program: &Program) -> String {
    let mut h: u32 = 0x811c_9dc5;
    for byte in format!("{program:?}").bytes() {
        h = (h ^ u32::from(byte)).wrapping_mul(0x0100_0193);
    }
    format!("{h:08x}")
}

/// The case that runs `program` as `variant`, expecting what `model` and `expected` (the interpreter's result for
/// `variant.runs()` runs) say.
pub fn lower(program: &Program, variant: Variant, model: &HappensBefore, expected: &Expected) -> ast::Case {
    let mut decls = Vec::new();
    for (i, &non_blocking) in program.streams.iter().enumerate() {
        decls.push(Decl::Stream {
            name: stream_name(i),
            non_blocking,
            priority: None,
            raw_flags: None,
            later: false,
            expect: vec![],
        });
    }
    let event =
        |name| Decl::Event { name, flags: EventFlags::default(), raw_flags: None, later: false, expect: vec![] };
    decls.extend((0..program.events).map(event_name).map(event));
    decls.push(event(FORK_EVENT.into()));
    decls.extend((1..program.streams.len()).map(join_event).map(event));
    for (i, kind) in program.buffers.iter().enumerate() {
        let kind = match kind {
            BufKind::Device => MemKind::Device,
            BufKind::Pinned => MemKind::Pinned,
        };
        decls.push(Decl::Buffer { name: buffer_name(i), kind, bytes: program.buffer_bytes, later: false });
    }
    if let Variant::Captured { .. } = variant {
        decls.push(Decl::Graph { name: GRAPH.into() });
        decls.push(Decl::Exec { name: EXEC.into() });
    }

    let origin = || named(stream_name(0));
    let mut script = Vec::new();
    let reps = match variant {
        Variant::Eager { reps } => reps,
        Variant::Captured { .. } => 1,
    };
    if let Variant::Captured { .. } = variant {
        script.push(op(None, OpKind::BeginCapture { stream: origin(), mode: CaptureMode::Global }));
    }
    for rep in 0..reps {
        script.push(op(None, OpKind::Record { event: FORK_EVENT.into(), stream: origin(), external: false }));
        for s in 1..program.streams.len() {
            script.push(op(
                None,
                OpKind::Wait { stream: named(stream_name(s)), event: FORK_EVENT.into(), external: false },
            ));
        }
        for (i, o) in program.ops.iter().enumerate() {
            script.push(op(o.is_work().then(|| rep_label(i, rep)), body_op(o)));
        }
        for s in 1..program.streams.len() {
            script.push(op(
                None,
                OpKind::Record { event: join_event(s), stream: named(stream_name(s)), external: false },
            ));
            script.push(op(None, OpKind::Wait { stream: origin(), event: join_event(s), external: false }));
        }
    }
    if let Variant::Captured { launches } = variant {
        script.push(op(None, OpKind::EndCapture { stream: origin(), graph: GRAPH.into() }));
        script.push(op(
            None,
            OpKind::Instantiate {
                exec: EXEC.into(),
                graph: GRAPH.into(),
                flags: Vec::new(),
                upload: None,
                with_params: false,
            },
        ));
        for _ in 0..launches {
            script.push(op(None, OpKind::LaunchGraph { exec: EXEC.into(), stream: origin() }));
        }
    }
    script.push(op(None, OpKind::Sync { target: ast::Target::Stream(origin()) }));

    let how = match variant {
        Variant::Eager { reps: 1 } => "run eagerly".to_string(),
        Variant::Eager { reps } => format!("run eagerly {reps} times in a row"),
        Variant::Captured { launches } => format!("captured into a graph and launched {launches} times"),
    };
    ast::Case {
        id: format!("random/{}-{}", program_id(program), variant.slug()),
        rule: format!(
            "A multi-stream program {how} orders its work as stream order and event records and waits say, and \
             leaves the buffers that running its operations one by one on the CPU leaves."
        ),
        source: "CUDA Runtime API cudaEventRecord/cudaStreamWaitEvent; Programming Guide, stream capture \
                 (cross-stream dependencies); generated by tests/random_programs"
            .into(),
        requires: vec![],
        env: vec![],
        poisons: vec![],
        decls,
        script,
        expects: expectations(program, variant, model, expected),
        positions: ast::SourceMap::default(),
    }
}

fn expect(p: Predicate) -> Expectation {
    Expectation::Expect(p)
}

/// What the case asserts: the buffers (and snapshots) the interpreter computed; `before` for every pair of kernels
/// the model orders with no kernel between them (stamps are transitive, so these imply every ordered pair); for a
/// graph, its node count, a path for every direct edge of the model and no path for every unordered pair.
fn expectations(program: &Program, variant: Variant, model: &HappensBefore, expected: &Expected) -> Vec<Expectation> {
    let mut out = Vec::new();
    for (i, words) in expected.buffers.iter().enumerate() {
        out.extend(buffer_expectations(&buffer_name(i), words));
    }
    for (&op, words) in &expected.snapshots {
        if let Some(&value) = words.first().filter(|&&v| words.iter().all(|&w| w == v)) {
            out.push(expect(Predicate::SnapshotEquals { label: label(op), value }));
        }
    }
    let kernels: Vec<usize> = program.work_ops().filter(|&i| program.ops[i].is_kernel()).collect();
    for &a in &kernels {
        for &b in &kernels {
            let direct = model.before(a, b) && !kernels.iter().any(|&c| model.before(a, c) && model.before(c, b));
            if direct {
                out.push(expect(Predicate::Before { first: label(a), second: label(b) }));
            }
        }
    }
    if let Variant::Captured { .. } = variant {
        let graph = || GRAPH.to_string();
        out.push(expect(Predicate::NodeCount { graph: graph(), count: model.nodes() as u32 }));
        for &(a, b) in &model.edges {
            let (from, to) = (label(model.work[a]), label(model.work[b]));
            out.push(expect(Predicate::Path { graph: graph(), from, to }));
        }
        let closure = model.closure();
        for a in 0..model.nodes() {
            for b in 0..model.nodes() {
                if a != b && !closure.reaches(a, b) && !closure.reaches(b, a) {
                    let (from, to) = (label(model.work[a]), label(model.work[b]));
                    out.push(expect(Predicate::NoPath { graph: graph(), from, to }));
                }
            }
        }
    }
    out
}

/// `b == V` when every word is V; otherwise the first and last index of each run of equal words.
fn buffer_expectations(name: &str, words: &[u32]) -> Vec<Expectation> {
    let eq = |index, value| expect(Predicate::BufferEquals { buf: name.into(), index, value });
    match words.first() {
        Some(&v) if words.iter().all(|&w| w == v) => vec![eq(None, v)],
        _ => {
            let mut out = Vec::new();
            let mut start = 0;
            while start < words.len() {
                let end = start + words[start..].iter().take_while(|&&w| w == words[start]).count() - 1;
                out.push(eq(Some(start as u64), words[start]));
                if end > start {
                    out.push(eq(Some(end as u64), words[end]));
                }
                start = end + 1;
            }
            out
        }
    }
}

/// Recovers the program from a case made by [`lower`] (the body of its first repetition). Checks that labels sit
/// exactly on the work ops and name their position, so a printer or parser that drops or moves one is caught.
pub fn raise(case: &ast::Case) -> Result<Program, String> {
    let index_of = |name: &str, prefix: char| -> Option<usize> { name.strip_prefix(prefix)?.parse().ok() };
    let mut streams = Vec::new();
    let mut events = 0;
    let mut buffers = Vec::new();
    let mut buffer_bytes = 0;
    for d in &case.decls {
        match d {
            Decl::Stream { name, non_blocking, .. } if index_of(name, 's') == Some(streams.len()) => {
                streams.push(*non_blocking)
            }
            Decl::Event { name, .. } if index_of(name, 'e') == Some(events) => events += 1,
            Decl::Event { name, .. } if name == FORK_EVENT || name.starts_with("join") => {}
            Decl::Buffer { name, kind, bytes, later: false } if index_of(name, 'b') == Some(buffers.len()) => {
                buffer_bytes = *bytes;
                buffers.push(match kind {
                    MemKind::Device => BufKind::Device,
                    MemKind::Pinned => BufKind::Pinned,
                    other => return Err(format!("buffer {name}: unexpected kind {other:?}")),
                });
            }
            Decl::Graph { .. } | Decl::Exec { .. } => {}
            other => return Err(format!("unexpected declaration {other:?}")),
        }
    }
    let stream = |s: &StreamRef| match s {
        StreamRef::Named(n) => index_of(n, 's').ok_or_else(|| format!("unknown stream {n}")),
        other => Err(format!("default stream {other:?} in a generated case")),
    };
    let buf = |n: &String| index_of(n, 'b').ok_or_else(|| format!("unknown buffer {n}"));
    let program_event = |n: &String| index_of(n, 'e');
    let mut ops = Vec::new();
    let mut forks = 0;
    for o in &case.script {
        let body = match &o.kind {
            OpKind::LaunchFill { buf: b, value, stream: s } => {
                Op::Fill { stream: stream(s)?, buf: buf(b)?, value: *value }
            }
            OpKind::LaunchTransform { buf: b, mul, add, stream: s } => {
                Op::Transform { stream: stream(s)?, buf: buf(b)?, mul: *mul, add: *add }
            }
            OpKind::LaunchCompare { a, b, into, stream: s } => {
                Op::Compare { stream: stream(s)?, a: buf(a)?, b: buf(b)?, into: buf(into)? }
            }
            OpKind::Memcpy { dst, src, bytes: None, stream: Some(s) } => {
                Op::Copy { stream: stream(s)?, dst: buf(dst)?, src: buf(src)? }
            }
            OpKind::Memset { buf: b, byte, bytes: None, stream: Some(s) } => {
                Op::Memset { stream: stream(s)?, buf: buf(b)?, byte: *byte }
            }
            OpKind::HostFunc { stream: s, snapshot, hold: None } => {
                Op::HostFunc { stream: stream(s)?, snapshot: snapshot.as_ref().map(buf).transpose()? }
            }
            OpKind::Record { event, stream: s, external: false } => match program_event(event) {
                Some(e) => Op::Record { stream: stream(s)?, event: e },
                None => {
                    forks += usize::from(event == FORK_EVENT);
                    continue;
                }
            },
            OpKind::Wait { stream: s, event, external: false } => match program_event(event) {
                Some(e) => Op::Wait { stream: stream(s)?, event: e },
                None => continue,
            },
            OpKind::BeginCapture { .. }
            | OpKind::EndCapture { .. }
            | OpKind::Instantiate { .. }
            | OpKind::LaunchGraph { .. }
            | OpKind::Sync { .. } => continue,
            other => return Err(format!("unexpected operation {other:?}")),
        };
        if forks > 1 {
            break; // a later repetition: the first body is complete
        }
        let expected_label = body.is_work().then(|| label(ops.len()));
        if o.label != expected_label {
            return Err(format!("op {} ({body}) is labelled {:?}, expected {:?}", ops.len(), o.label, expected_label));
        }
        ops.push(body);
    }
    Ok(Program { streams, events, buffers, buffer_bytes, ops })
}

pub mod tests {
    use super::*;
    use crate::interpret;
    use crate::model::ModelMode;

    pub fn sample() -> Program {
        Program {
            streams: vec![false, true],
            events: 1,
            buffers: vec![BufKind::Device, BufKind::Pinned, BufKind::Device],
            buffer_bytes: 16,
            ops: vec![
                Op::Fill { stream: 0, buf: 0, value: 5 },
                Op::Record { stream: 0, event: 0 },
                Op::Wait { stream: 1, event: 0 },
                Op::Copy { stream: 1, dst: 1, src: 0 },
                Op::HostFunc { stream: 1, snapshot: Some(1) },
                Op::Transform { stream: 0, buf: 2, mul: 3, add: 1 },
            ],
        }
    }

    fn case(p: &Program, v: Variant) -> ast::Case {
        lower(p, v, &HappensBefore::build(p, ModelMode::Faithful), &interpret::run(p, v.runs()))
    }

    /// The captured variant: capture, fork, labelled body, join, end, instantiate, N launches, sync.
    pub fn captured_shape() {
        assert_eq!(sample().check_well_formed(crate::program::Flavor::Capturable), Ok(()));
        let c = case(&sample(), Variant::Captured { launches: 3 });
        let kinds: Vec<&OpKind> = c.script.iter().map(|o| &o.kind).collect();
        assert!(matches!(kinds[0], OpKind::BeginCapture { mode: CaptureMode::Global, .. }));
        assert!(matches!(kinds[1], OpKind::Record { event, .. } if event == FORK_EVENT));
        assert_eq!(c.script.iter().filter(|o| matches!(o.kind, OpKind::LaunchGraph { .. })).count(), 3);
        let labels: Vec<&str> = c.script.iter().filter_map(|o| o.label.as_deref()).collect();
        assert_eq!(labels, ["w0", "w3", "w4", "w5"]);
        assert!(c.expects.contains(&expect(Predicate::NodeCount { graph: "g".into(), count: 4 })));
        assert!(c.expects.contains(&expect(Predicate::Path { graph: "g".into(), from: "w0".into(), to: "w3".into() })));
        assert!(c.expects.contains(&expect(Predicate::NoPath {
            graph: "g".into(),
            from: "w5".into(),
            to: "w3".into()
        })));
        assert!(c.expects.contains(&expect(Predicate::Before { first: "w0".into(), second: "w5".into() })));
        assert!(c.expects.contains(&expect(Predicate::SnapshotEquals { label: "w4".into(), value: 5 })));
    }

    /// Eager repetitions carry unique labels; raising gives back the first repetition's body.
    pub fn eager_repetitions_and_raise() {
        let p = sample();
        let c = case(&p, Variant::Eager { reps: 2 });
        let labels: Vec<&str> = c.script.iter().filter_map(|o| o.label.as_deref()).collect();
        assert_eq!(labels, ["w0", "w3", "w4", "w5", "w0-r1", "w3-r1", "w4-r1", "w5-r1"]);
        assert_eq!(raise(&c), Ok(p.clone()));
        assert_eq!(raise(&case(&p, Variant::Captured { launches: 2 })), Ok(p));
    }

    /// A moved label is caught by `raise`.
    pub fn raise_catches_moved_label() {
        let mut c = case(&sample(), Variant::Eager { reps: 1 });
        let first = c.script.iter().position(|o| o.label.is_some()).unwrap_or(0);
        c.script[first].label = None;
        assert!(raise(&c).is_err());
    }

    pub fn buffer_runs() {
        let v = buffer_expectations("b", &[4, 7, 7, 7]);
        let eq = |index, value| expect(Predicate::BufferEquals { buf: "b".into(), index, value });
        assert_eq!(v, vec![eq(Some(0), 4), eq(Some(1), 7), eq(Some(3), 7)]);
        assert_eq!(buffer_expectations("b", &[9, 9]), vec![eq(None, 9)]);
    }
}
