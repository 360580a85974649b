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
//!
//! A program over two devices declares each stream, event and device buffer on its device, requires two devices
//! with peer access, enables it both ways first, and makes each operation's stream's device current before the
//! operation (`set-device`): "A kernel launch will fail if it is issued to a stream that is not associated to the
//! current device". Its `before` expectations pair kernels of one device only: two GPUs' `%globaltimer` are
//! different clocks (the validator refuses the others); the data orders the rest.

use crate::interpret::{self, Expected};
use crate::model::{after_update, HappensBefore, ModelMode};
use crate::program::{
    buffer_name, event_name, label, stream_name, BufKind, Edit, Op, Placement, Program, Update, ROW_BYTES,
};
use harness::case::ast::{
    self, CaptureMode, Decl, EventFlags, Expectation, KernelCall, MemKind, NodeKernel, NodeSpec, NodeWord, OpKind,
    Predicate, Requirement, SrcAccessOrder, StreamRef, Target,
};
use harness::case::call::{ArgValue, Call, CallArg, ObjectKind};

/// How a program is run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Variant {
    /// The body `reps` times in a row on the streams (the repetitions after the first with the parameters the
    /// update gives), then `sync s0`.
    Eager { reps: u32 },
    /// `begin-capture s0 global`, the body, `end-capture s0 into g`, `instantiate gx from g`, `launch-graph gx on
    /// s0`, the update if the program has one, `launch-graph gx on s0` `launches - 1` more times, `sync s0`.
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
/// The clone of the template that gets one more node, for the forbidden update.
pub const CHANGED_GRAPH: &str = "g2";
/// Labels of the update and of the node added to the clone.
pub const UPDATE_LABEL: &str = "upd";
pub const ADDED_LABEL: &str = "grow";
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
    ast::Op { label, thread: None, kind, expect: Vec::new(), repeat: 1 }
}

/// The case operation of one body op.
fn body_op(o: &Op) -> OpKind {
    let s = |i| named(stream_name(i));
    let b = buffer_name;
    match *o {
        Op::Fill { stream, buf, value } => {
            OpKind::Launch { kernel: KernelCall::Fill { buf: b(buf), value }, stream: s(stream) }
        }
        Op::Transform { stream, buf, mul, add } => {
            OpKind::Launch { kernel: KernelCall::Transform { buf: b(buf), mul, add }, stream: s(stream) }
        }
        Op::Compare { stream, a, b: bb, into } => {
            OpKind::Launch { kernel: KernelCall::Compare { a: b(a), b: b(bb), into: b(into) }, stream: s(stream) }
        }
        Op::Copy { stream, dst, src } => {
            OpKind::Memcpy { dst: b(dst), src: b(src), bytes: None, inferred: false, stream: Some(s(stream)) }
        }
        Op::PeerCopy { stream, dst, src } => {
            OpKind::MemcpyPeer { dst: b(dst), src: b(src), bytes: None, stream: Some(s(stream)) }
        }
        Op::Memset { stream, buf, byte } => OpKind::Memset { buf: b(buf), byte, bytes: None, stream: Some(s(stream)) },
        Op::HostFunc { stream, snapshot } => {
            OpKind::HostFunc { stream: s(stream), snapshot: snapshot.map(b), hold: None }
        }
        Op::Record { stream, event } => OpKind::Record { event: event_name(event), stream: s(stream), external: false },
        Op::Wait { stream, event } => OpKind::Wait { stream: s(stream), event: event_name(event), external: false },
        Op::Alloc { stream, buf } => OpKind::MallocAsync { buf: b(buf), stream: s(stream), pool: None },
        Op::Free { stream, buf } => OpKind::FreeAsync { buf: b(buf), stream: s(stream) },
        Op::BatchCopy { stream, dst, src } => OpKind::MemcpyBatch {
            copies: vec![(b(dst), b(src))],
            stream: s(stream),
            order: SrcAccessOrder::Stream,
            attrs_at: None,
            three_d: false,
        },
        Op::Copy2D { stream, dst, src, rows } => OpKind::Call(copy_2d(&b(dst), &b(src), rows, s(stream))),
        Op::ToSymbol { stream, src, bytes, .. } => {
            OpKind::Call(symbol_copy(TO_SYMBOL, "src", &b(src), bytes, s(stream)))
        }
        Op::FromSymbol { stream, dst, bytes, .. } => {
            OpKind::Call(symbol_copy(FROM_SYMBOL, "dst", &b(dst), bytes, s(stream)))
        }
    }
}

/// The symbol copies (see [`Op::ToSymbol`], [`Op::FromSymbol`]), as `call` writes them.
const TO_SYMBOL: &str = "cudaMemcpyToSymbolAsync";
const FROM_SYMBOL: &str = "cudaMemcpyFromSymbolAsync";

/// A copy of `bytes` between buffer `buffer` (the call's parameter `side`: `src` into the symbol, `dst` out of
/// it) and the start of the symbol, in the parameter order of the header.
fn symbol_copy(function: &str, side: &str, buffer: &str, bytes: u64, stream: StreamRef) -> Call {
    let arg = |name: &str, value: ArgValue| CallArg { name: name.to_owned(), value };
    let symbol = arg("symbol", ArgValue::Symbol(harness::case::words::SymbolWord::Probe));
    let buffer = arg(side, ArgValue::Object(buffer.to_owned(), ObjectKind::Buffer));
    let (first, second) = if side == "src" { (symbol, buffer) } else { (buffer, symbol) };
    Call {
        function: function.to_owned(),
        args: vec![
            first,
            second,
            arg("count", ArgValue::Int(i128::from(bytes))),
            arg("offset", ArgValue::Int(0)),
            arg("kind", ArgValue::Constant("cudaMemcpyDefault".to_owned(), 4)),
            arg("stream", ArgValue::Stream(stream)),
        ],
        unresolved: None,
    }
}

/// The 2D copy of a whole buffer (see [`Op::Copy2D`]), as `call cudaMemcpy2DAsync` writes it.
const COPY_2D: &str = "cudaMemcpy2DAsync";

fn copy_2d(dst: &str, src: &str, rows: u64, stream: StreamRef) -> Call {
    let arg = |name: &str, value: ArgValue| CallArg { name: name.to_owned(), value };
    let bytes = |n: u64| ArgValue::Int(i128::from(n));
    let (kind, value) = ("cudaMemcpyDefault", 4);
    Call {
        function: COPY_2D.to_owned(),
        args: vec![
            arg("dst", ArgValue::Object(dst.to_owned(), ObjectKind::Buffer)),
            arg("dpitch", bytes(ROW_BYTES)),
            arg("src", ArgValue::Object(src.to_owned(), ObjectKind::Buffer)),
            arg("spitch", bytes(ROW_BYTES)),
            arg("width", bytes(ROW_BYTES)),
            arg("height", bytes(rows)),
            arg("kind", ArgValue::Constant(kind.to_owned(), value)),
            arg("stream", ArgValue::Stream(stream)),
        ],
        unresolved: None,
    }
}

/// The kernel node of a fill or transform (what `set-node` writes).
fn node_kernel(o: &Op) -> NodeSpec {
    NodeSpec::Kernel(match *o {
        Op::Transform { buf, mul, add, .. } => NodeKernel::Transform { buf: buffer_name(buf), mul, add },
        Op::Fill { buf, value, .. } => NodeKernel::Fill { buf: buffer_name(buf), value },
        // Edits only name fills and transforms (Program::check_update); a fill stands in for anything else.
        _ => NodeKernel::Fill { buf: buffer_name(0), value: 0 },
    })
}

/// The graph node a work op becomes when captured.
pub fn node_word(o: &Op) -> NodeWord {
    match o {
        Op::Fill { .. } | Op::Transform { .. } | Op::Compare { .. } => NodeWord::Kernel,
        Op::Copy { .. }
        | Op::PeerCopy { .. }
        | Op::BatchCopy { .. }
        | Op::Copy2D { .. }
        | Op::ToSymbol { .. }
        | Op::FromSymbol { .. } => NodeWord::Memcpy,
        Op::Memset { .. } => NodeWord::Memset,
        Op::HostFunc { .. } => NodeWord::Host,
        Op::Alloc { .. } => NodeWord::MemAlloc,
        Op::Free { .. } => NodeWord::MemFree,
        Op::Record { .. } | Op::Wait { .. } => NodeWord::Empty,
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

/// The ops of the update phase (after the first launch of the captured graph).
fn update_ops(u: &Update, result: Option<&str>) -> Vec<ast::Op> {
    let mut out = Vec::new();
    let whole = |out: &mut Vec<ast::Op>| {
        let from = if u.add_node {
            out.push(op(None, OpKind::Clone { copy: CHANGED_GRAPH.into(), graph: GRAPH.into() }));
            out.push(op(
                Some(ADDED_LABEL.into()),
                OpKind::AddNode { graph: CHANGED_GRAPH.into(), node: NodeSpec::Empty, after: Vec::new() },
            ));
            CHANGED_GRAPH
        } else {
            GRAPH
        };
        let mut update = op(Some(UPDATE_LABEL.into()), OpKind::Update { exec: EXEC.into(), graph: from.into() });
        if result != Some("success") {
            // cudaGraphExecUpdate returns cudaErrorGraphExecUpdateFailure when the update is not permitted.
            update.expect = vec!["cudaErrorGraphExecUpdateFailure".into()];
        }
        out.push(update);
    };
    for (k, e) in u.edits.iter().enumerate() {
        if u.whole == Some(k) {
            whole(&mut out);
        }
        let exec = e.exec.then(|| EXEC.to_string());
        out.push(op(None, OpKind::SetNode { exec, node: label(e.op), spec: node_kernel(&e.to) }));
    }
    if u.whole == Some(u.edits.len()) {
        whole(&mut out);
    }
    out
}

/// The stream an operation of a lowered case is issued to, if it names one of the program's streams.
fn stream_of(kind: &OpKind) -> Option<usize> {
    let stream = match kind {
        OpKind::Record { stream, .. }
        | OpKind::Wait { stream, .. }
        | OpKind::BeginCapture { stream, .. }
        | OpKind::EndCapture { stream, .. }
        | OpKind::LaunchGraph { stream, .. }
        | OpKind::Sync { target: Target::Stream(stream) } => Some(stream),
        other => other.capture_stream(),
    }?;
    match stream {
        StreamRef::Named(name) => name.strip_prefix('s')?.parse().ok(),
        _ => None,
    }
}

/// The script of a lowered case, with the current device kept on each operation's stream's device (programs over
/// two devices).
struct Script<'p> {
    ops: Vec<ast::Op>,
    placement: Option<&'p Placement>,
    current: u32,
}

impl Script<'_> {
    fn push(&mut self, label: Option<String>, kind: OpKind) {
        if let (Some(pl), Some(s)) = (self.placement, stream_of(&kind)) {
            let device = pl.stream(s);
            if device != self.current {
                self.ops.push(op(None, OpKind::SetDevice { device }));
                self.current = device;
            }
        }
        self.ops.push(op(label, kind));
    }
}

/// The case that runs `program` as `variant`, expecting what the model (in `mode`) and the interpreter say.
pub fn lower(program: &Program, variant: Variant, mode: ModelMode) -> ast::Case {
    let model = HappensBefore::build(program, mode);
    let expected = interpret::run(program, variant.runs(), mode);
    let after = after_update(program, mode);
    let pl = &program.placement;
    let multi = program.devices() > 1;
    let placed = |device: u32| multi.then_some(device);
    let mut decls = Vec::new();
    for (i, &non_blocking) in program.streams.iter().enumerate() {
        decls.push(Decl::Stream {
            name: stream_name(i),
            non_blocking,
            priority: None,
            raw_flags: None,
            later: false,
            device: placed(pl.stream(i)),
            expect: vec![],
        });
    }
    let event = |name, device: u32| Decl::Event {
        name,
        flags: EventFlags::default(),
        raw_flags: None,
        later: false,
        device: placed(device),
        expect: vec![],
    };
    decls.extend((0..program.events).map(|e| event(event_name(e), pl.event(e))));
    decls.push(event(FORK_EVENT.into(), pl.stream(0)));
    decls.extend((1..program.streams.len()).map(|s| event(join_event(s), pl.stream(s))));
    for (i, kind) in program.buffers.iter().enumerate() {
        let (kind, later) = match kind {
            BufKind::Device => (MemKind::Device, false),
            BufKind::Pinned => (MemKind::Pinned, false),
            BufKind::Async => (MemKind::Device, true),
            // The probes' variable: no declaration, a call names it.
            BufKind::Symbol => continue,
        };
        let device = if kind == MemKind::Device { placed(pl.buffer(i)) } else { None };
        decls.push(Decl::Buffer { name: buffer_name(i), kind, bytes: program.buffer_bytes, device, later });
    }
    let update = match variant {
        Variant::Captured { .. } => program.update.as_ref(),
        Variant::Eager { .. } => None,
    };
    if let Variant::Captured { .. } = variant {
        decls.push(Decl::Graph { name: GRAPH.into() });
        if update.is_some_and(|u| u.add_node) {
            decls.push(Decl::Graph { name: CHANGED_GRAPH.into() });
        }
        decls.push(Decl::Exec { name: EXEC.into() });
    }

    let origin = || named(stream_name(0));
    let mut script = Script { ops: Vec::new(), placement: multi.then_some(pl), current: 0 };
    if multi {
        // Peer access both ways, from device 0 (current at the start) and from device 1.
        script.push(None, OpKind::PeerAccess { peer: 1, enable: true });
        script.push(None, OpKind::SetDevice { device: 1 });
        script.push(None, OpKind::PeerAccess { peer: 0, enable: true });
        script.push(None, OpKind::SetDevice { device: 0 });
    }
    let reps = match variant {
        Variant::Eager { reps } => reps,
        Variant::Captured { .. } => 1,
    };
    if let Variant::Captured { .. } = variant {
        script.push(None, OpKind::BeginCapture { stream: origin(), mode: CaptureMode::Global });
    }
    for rep in 0..reps {
        script.push(None, OpKind::Record { event: FORK_EVENT.into(), stream: origin(), external: false });
        for s in 1..program.streams.len() {
            script
                .push(None, OpKind::Wait { stream: named(stream_name(s)), event: FORK_EVENT.into(), external: false });
        }
        let body = if rep == 0 { &program.ops } else { &after.ops };
        for (i, o) in body.iter().enumerate() {
            script.push(o.is_work().then(|| rep_label(i, rep)), body_op(o));
        }
        for s in 1..program.streams.len() {
            script.push(None, OpKind::Record { event: join_event(s), stream: named(stream_name(s)), external: false });
            script.push(None, OpKind::Wait { stream: origin(), event: join_event(s), external: false });
        }
    }
    if let Variant::Captured { launches } = variant {
        script.push(None, OpKind::EndCapture { stream: origin(), graph: GRAPH.into() });
        script.push(
            None,
            OpKind::Instantiate {
                exec: EXEC.into(),
                graph: GRAPH.into(),
                flags: Vec::new(),
                upload: None,
                with_params: false,
            },
        );
        for launch in 0..launches {
            if launch == 1 {
                script.ops.extend(update.map(|u| update_ops(u, after.result)).unwrap_or_default());
            }
            script.push(None, OpKind::LaunchGraph { exec: EXEC.into(), stream: origin() });
        }
    }
    script.push(None, OpKind::Sync { target: ast::Target::Stream(origin()) });

    let how = match variant {
        Variant::Eager { reps: 1 } => "run eagerly".to_string(),
        Variant::Eager { reps } if program.update.is_some() => {
            format!("run eagerly {reps} times in a row, with new kernel parameters after the first")
        }
        Variant::Eager { reps } => format!("run eagerly {reps} times in a row"),
        Variant::Captured { launches } if update.is_some() => format!(
            "captured into a graph, launched once, updated in place and launched {} more times",
            launches.saturating_sub(1)
        ),
        Variant::Captured { launches } => format!("captured into a graph and launched {launches} times"),
    };
    let mut source = "CUDA Runtime API cudaEventRecord/cudaStreamWaitEvent; Programming Guide, stream capture \
                      (cross-stream dependencies)"
        .to_string();
    if program.ops.iter().any(|o| matches!(o, Op::Alloc { .. })) {
        source.push_str("; cudaMallocAsync/cudaFreeAsync (stream-ordered allocation, memory nodes in capture)");
    }
    if update.is_some() {
        source.push_str(
            "; cudaGraphExecUpdate, cudaGraphExecKernelNodeSetParams (\"only affect future launches\", \"All \
             nodeParams fields may change\")",
        );
    }
    if multi {
        source.push_str(
            "; Programming Guide, Multi-Device System (\"cudaStreamWaitEvent() will succeed even if the input stream \
             and input event are associated to different devices\"), cudaMemcpyPeerAsync",
        );
    }
    source.push_str("; generated by tests/random_programs");
    ast::Case {
        id: format!("random/{}-{}", program_id(program), variant.slug()),
        rule: format!(
            "A multi-stream program {how} orders its work as stream order and event records and waits say, and \
             leaves the buffers that running its operations one by one on the CPU leaves."
        ),
        source,
        requires: if multi { vec![Requirement::Devices(2), Requirement::PeerAccess] } else { vec![] },
        env: vec![],
        own_process: None,
        poisons: vec![],
        timing: None,
        samples: 1,
        decls,
        script: script.ops,
        expects: expectations(program, variant, &model, &expected, after.result),
        positions: ast::SourceMap::default(),
    }
}

fn expect(p: Predicate) -> Expectation {
    Expectation::Expect(p)
}

/// The pairs `(a, b)` of `ops` (indices into the program) that the model orders with none of `ops` between them:
/// stamps and host orders are transitive, so these imply every ordered pair.
fn direct_pairs(model: &HappensBefore, ops: &[usize]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for &a in ops {
        for &b in ops {
            if model.before(a, b) && !ops.iter().any(|&c| model.before(a, c) && model.before(c, b)) {
                out.push((a, b));
            }
        }
    }
    out
}

/// What the case asserts: the permanent buffers (and uniform snapshots) the interpreter computed; `before` for
/// kernels and `host-order` for host functions the model orders directly (in each eager repetition; for a graph
/// in the launches the stamps and the host log show); how often each host function ran; for a graph, its node
/// count, the kind of each node, a path for every direct edge of the model and no path for every unordered pair;
/// the update's result.
fn expectations(
    program: &Program,
    variant: Variant,
    model: &HappensBefore,
    expected: &Expected,
    result: Option<&str>,
) -> Vec<Expectation> {
    let mut out = Vec::new();
    for (i, words) in expected.buffers.iter().enumerate() {
        if program.buffers[i].is_permanent() {
            out.extend(buffer_expectations(&buffer_name(i), words));
        }
    }
    // Snapshots and runs, by the label each run carries.
    let runs = variant.runs();
    let host: Vec<usize> = program.work_ops().filter(|&i| matches!(program.ops[i], Op::HostFunc { .. })).collect();
    for &i in &host {
        let uniform = |w: &Vec<u32>| w.first().copied().filter(|&v| w.iter().all(|&x| x == v));
        let seen = expected.snapshots.get(&i);
        match variant {
            Variant::Captured { .. } => {
                out.push(expect(Predicate::HostRuns { label: label(i), count: runs }));
                let values: Option<Vec<u32>> = seen.map(|s| s.iter().map(uniform).collect()).unwrap_or_default();
                if let Some(&[v, ref rest @ ..]) = values.as_deref() {
                    if rest.iter().all(|&w| w == v) {
                        out.push(expect(Predicate::SnapshotEquals { label: label(i), value: v }));
                    }
                }
            }
            Variant::Eager { reps } => {
                for rep in 0..reps {
                    out.push(expect(Predicate::HostRuns { label: rep_label(i, rep), count: 1 }));
                    if let Some(v) = seen.and_then(|s| s.get(rep as usize)).and_then(uniform) {
                        out.push(expect(Predicate::SnapshotEquals { label: rep_label(i, rep), value: v }));
                    }
                }
            }
        }
    }
    // Stamps: in a graph, nodes whose parameters an update may have set carry no stamp slot after it (kernel
    // nodes set through the API have none), so their stamps are the first launch's; they are left out.
    let edited = |i: usize| {
        matches!(variant, Variant::Captured { .. }) && program.update.iter().any(|u| u.edits.iter().any(|e| e.op == i))
    };
    let kernels: Vec<usize> = program.work_ops().filter(|&i| program.ops[i].is_kernel() && !edited(i)).collect();
    let reps = if let Variant::Eager { reps } = variant { reps } else { 1 };
    for rep in 0..reps {
        // Stamps order kernels of one device: two GPUs' `%globaltimer` are different clocks.
        for device in 0..program.devices() {
            let on_device: Vec<usize> = kernels
                .iter()
                .copied()
                .filter(|&i| program.placement.stream(program.ops[i].stream()) == device)
                .collect();
            for (a, b) in direct_pairs(model, &on_device) {
                out.push(expect(Predicate::Before { first: rep_label(a, rep), second: rep_label(b, rep) }));
            }
        }
        for (a, b) in direct_pairs(model, &host) {
            out.push(expect(Predicate::HostOrder { labels: vec![rep_label(a, rep), rep_label(b, rep)] }));
        }
    }
    if let Variant::Captured { .. } = variant {
        let graph = || GRAPH.to_string();
        out.push(expect(Predicate::NodeCount { graph: graph(), count: model.nodes() as u32 }));
        for &i in &model.work {
            out.push(expect(Predicate::NodeKind { graph: graph(), node: label(i), kind: node_word(&program.ops[i]) }));
        }
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
        if let Some(result) = result {
            out.push(expect(Predicate::Result { label: UPDATE_LABEL.into(), result: result.into() }));
            if result == "topology-changed" {
                // "the count of nodes directly in hGraphExec and hGraph differ, in which case resultInfo->errorNode
                // is set to NULL".
                out.push(expect(Predicate::ErrorNode { label: UPDATE_LABEL.into(), from: false, node: None }));
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

/// Recovers the program from a case made by [`lower`]: the body of its first repetition, and the update of a
/// captured case (an eager case has none to give back). Checks that labels sit exactly on the work ops and name
/// their position, so a printer or parser that drops or moves one is caught.
pub fn raise(case: &ast::Case) -> Result<Program, String> {
    let index_of = |name: &str, prefix: char| -> Option<usize> { name.strip_prefix(prefix)?.parse().ok() };
    let mut streams = Vec::new();
    let mut events = 0;
    let mut buffers = Vec::new();
    let mut buffer_bytes = 0;
    let mut placement = Placement::default();
    let placed = case.decls.iter().any(|d| d.device().is_some());
    for d in &case.decls {
        let device = d.device().unwrap_or(0);
        match d {
            Decl::Stream { name, non_blocking, .. } if index_of(name, 's') == Some(streams.len()) => {
                streams.push(*non_blocking);
                placement.streams.push(device);
            }
            Decl::Event { name, .. } if index_of(name, 'e') == Some(events) => {
                events += 1;
                placement.events.push(device);
            }
            Decl::Event { name, .. } if name == FORK_EVENT || name.starts_with("join") => {}
            Decl::Buffer { name, kind, bytes, later, .. } if index_of(name, 'b') == Some(buffers.len()) => {
                buffer_bytes = *bytes;
                placement.buffers.push(device);
                buffers.push(match (kind, later) {
                    (MemKind::Device, false) => BufKind::Device,
                    (MemKind::Device, true) => BufKind::Async,
                    (MemKind::Pinned, false) => BufKind::Pinned,
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
    let mut ops: Vec<Op> = Vec::new();
    let mut forks = 0;
    let mut update = Update { edits: Vec::new(), whole: None, add_node: false };
    let mut body_done = false;
    for o in &case.script {
        let body = match &o.kind {
            OpKind::Launch { kernel: KernelCall::Fill { buf: b, value }, stream: s } => {
                Op::Fill { stream: stream(s)?, buf: buf(b)?, value: *value }
            }
            OpKind::Launch { kernel: KernelCall::Transform { buf: b, mul, add }, stream: s } => {
                Op::Transform { stream: stream(s)?, buf: buf(b)?, mul: *mul, add: *add }
            }
            OpKind::Launch { kernel: KernelCall::Compare { a, b, into }, stream: s } => {
                Op::Compare { stream: stream(s)?, a: buf(a)?, b: buf(b)?, into: buf(into)? }
            }
            OpKind::Memcpy { dst, src, bytes: None, inferred: false, stream: Some(s) } => {
                Op::Copy { stream: stream(s)?, dst: buf(dst)?, src: buf(src)? }
            }
            OpKind::MemcpyPeer { dst, src, bytes: None, stream: Some(s) } => {
                Op::PeerCopy { stream: stream(s)?, dst: buf(dst)?, src: buf(src)? }
            }
            OpKind::Memset { buf: b, byte, bytes: None, stream: Some(s) } => {
                Op::Memset { stream: stream(s)?, buf: buf(b)?, byte: *byte }
            }
            OpKind::HostFunc { stream: s, snapshot, hold: None } => {
                Op::HostFunc { stream: stream(s)?, snapshot: snapshot.as_ref().map(buf).transpose()? }
            }
            OpKind::MallocAsync { buf: b, stream: s, pool: None } => Op::Alloc { stream: stream(s)?, buf: buf(b)? },
            OpKind::FreeAsync { buf: b, stream: s } => Op::Free { stream: stream(s)?, buf: buf(b)? },
            OpKind::MemcpyBatch {
                copies,
                stream: s,
                order: SrcAccessOrder::Stream,
                attrs_at: None,
                three_d: false,
            } if copies.len() == 1 => {
                Op::BatchCopy { stream: stream(s)?, dst: buf(&copies[0].0)?, src: buf(&copies[0].1)? }
            }
            OpKind::Call(call) if call.function == COPY_2D => {
                let value = |name: &str| call.args.iter().find(|a| a.name == name).map(|a| &a.value);
                let (Some(ArgValue::Object(dst, _)), Some(ArgValue::Object(src, _)), Some(ArgValue::Stream(s))) =
                    (value("dst"), value("src"), value("stream"))
                else {
                    return Err(format!("a {COPY_2D} without a buffer or a stream: {}", call.text()));
                };
                let rows = match value("height") {
                    Some(ArgValue::Int(n)) => u64::try_from(*n).map_err(|_| format!("height {n}"))?,
                    other => return Err(format!("a {COPY_2D} height of {other:?}")),
                };
                let copy = Op::Copy2D { stream: stream(s)?, dst: buf(dst)?, src: buf(src)?, rows };
                if OpKind::Call(copy_2d(dst, src, rows, s.clone())) != o.kind {
                    return Err(format!("a {COPY_2D} other than a whole buffer's rows: {}", call.text()));
                }
                copy
            }
            OpKind::Call(call) if call.function == TO_SYMBOL || call.function == FROM_SYMBOL => {
                let value = |name: &str| call.args.iter().find(|a| a.name == name).map(|a| &a.value);
                let side = if call.function == TO_SYMBOL { "src" } else { "dst" };
                let (Some(ArgValue::Object(other, _)), Some(ArgValue::Stream(s))) = (value(side), value("stream"))
                else {
                    return Err(format!("a {} without a buffer or a stream: {}", call.function, call.text()));
                };
                let bytes = match value("count") {
                    Some(ArgValue::Int(n)) => u64::try_from(*n).map_err(|_| format!("count {n}"))?,
                    other => return Err(format!("a {} count of {other:?}", call.function)),
                };
                if OpKind::Call(symbol_copy(&call.function, side, other, bytes, s.clone())) != o.kind {
                    return Err(format!("a {} other than a whole buffer at offset 0: {}", call.function, call.text()));
                }
                // The symbol is the last buffer, after the declared ones.
                if buffers.last() != Some(&BufKind::Symbol) {
                    buffers.push(BufKind::Symbol);
                    placement.buffers.push(0);
                }
                let (stream, sym, other) = (stream(s)?, buffers.len() - 1, buf(other)?);
                if side == "src" {
                    Op::ToSymbol { stream, sym, src: other, bytes }
                } else {
                    Op::FromSymbol { stream, dst: other, sym, bytes }
                }
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
            OpKind::SetNode { exec, node, spec: NodeSpec::Kernel(kernel) } => {
                let i = crate::program::label_index(node).ok_or_else(|| format!("set-node of {node}"))?;
                let s = ops.get(i).ok_or_else(|| format!("set-node of {node}: no such op"))?.stream();
                let to = match kernel {
                    NodeKernel::Fill { buf: b, value } => Op::Fill { stream: s, buf: buf(b)?, value: *value },
                    NodeKernel::Transform { buf: b, mul, add } => {
                        Op::Transform { stream: s, buf: buf(b)?, mul: *mul, add: *add }
                    }
                    other => return Err(format!("set-node to {other:?}")),
                };
                update.edits.push(Edit { op: i, to, exec: exec.is_some() });
                continue;
            }
            OpKind::Update { .. } => {
                update.whole = Some(update.edits.len());
                continue;
            }
            OpKind::AddNode { graph, node: NodeSpec::Empty, .. } if graph == CHANGED_GRAPH => {
                update.add_node = true;
                continue;
            }
            OpKind::Clone { .. } => continue,
            OpKind::EndCapture { .. } => {
                body_done = true;
                continue;
            }
            // The wrapper, and the device switches and peer access of a program over two devices.
            OpKind::BeginCapture { .. }
            | OpKind::Instantiate { .. }
            | OpKind::LaunchGraph { .. }
            | OpKind::Sync { .. }
            | OpKind::SetDevice { .. }
            | OpKind::PeerAccess { .. } => continue,
            other => return Err(format!("unexpected operation {other:?}")),
        };
        if forks > 1 {
            break; // a later repetition: the first body is complete
        }
        if body_done {
            return Err(format!("body op {body} after the capture"));
        }
        let expected_label = body.is_work().then(|| label(ops.len()));
        if o.label != expected_label {
            return Err(format!("op {} ({body}) is labelled {:?}, expected {:?}", ops.len(), o.label, expected_label));
        }
        ops.push(body);
    }
    let update = (!update.edits.is_empty() || update.whole.is_some()).then_some(update);
    let placement = if placed { placement } else { Placement::default() };
    Ok(Program { streams, events, buffers, buffer_bytes, ops, update, placement })
}

pub mod tests {
    use super::*;

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
            update: None,
            placement: Default::default(),
        }
    }

    /// Over two devices: a fill on device 0, waited for across devices, copied to device 1's memory, transformed
    /// there, and copied back into pinned memory by device 0 after a second cross-device wait.
    pub fn two_device_sample() -> Program {
        Program {
            streams: vec![false, true, false],
            events: 2,
            buffers: vec![BufKind::Device, BufKind::Device, BufKind::Pinned],
            buffer_bytes: 16,
            ops: vec![
                Op::Fill { stream: 0, buf: 0, value: 5 },
                Op::Record { stream: 0, event: 0 },
                Op::Wait { stream: 1, event: 0 },
                Op::Copy { stream: 1, dst: 1, src: 0 },
                Op::Transform { stream: 1, buf: 1, mul: 3, add: 1 },
                Op::Record { stream: 1, event: 1 },
                Op::Wait { stream: 2, event: 1 },
                Op::Copy { stream: 2, dst: 2, src: 1 },
                Op::HostFunc { stream: 2, snapshot: Some(2) },
            ],
            update: None,
            placement: Placement { streams: vec![0, 1, 0], events: vec![0, 1], buffers: vec![0, 1, 0] },
        }
    }

    /// The two-device sample with a peer copy (`memcpy-peer-async`) for its first copy: eager only.
    pub fn two_device_eager_sample() -> Program {
        let mut p = two_device_sample();
        p.ops[3] = Op::PeerCopy { stream: 1, dst: 1, src: 0 };
        p
    }

    fn case(p: &Program, v: Variant) -> ast::Case {
        lower(p, v, ModelMode::Faithful)
    }

    /// Two devices: the requirements, peer access both ways, a device switch before each operation on another
    /// device's stream, declarations on their devices, no `before` across devices; raising gives it back.
    pub fn two_device_shape() {
        let p = two_device_sample();
        assert_eq!(p.check_well_formed(crate::program::Flavor::Capturable), Ok(()));
        let c = case(&p, Variant::Eager { reps: 1 });
        assert_eq!(c.requires, vec![Requirement::Devices(2), Requirement::PeerAccess]);
        let kinds: Vec<&OpKind> = c.script.iter().map(|o| &o.kind).collect();
        assert!(matches!(
            kinds[..4],
            [
                OpKind::PeerAccess { peer: 1, enable: true },
                OpKind::SetDevice { device: 1 },
                OpKind::PeerAccess { peer: 0, enable: true },
                OpKind::SetDevice { device: 0 }
            ]
        ));
        // Every operation on a stream runs with that stream's device current.
        let devices = harness::case::placement::current_devices(&c);
        for (i, o) in c.script.iter().enumerate() {
            if let Some(s) = stream_of(&o.kind) {
                assert_eq!(devices[i], p.placement.stream(s), "{}", harness::case::print_op(o));
            }
        }
        let stream1 = c.decls.iter().find(|d| d.name() == "s1").and_then(|d| d.device());
        assert_eq!(
            (stream1, c.decls.iter().find(|d| d.name() == "join1").and_then(|d| d.device())),
            (Some(1), Some(1))
        );
        assert!(c.expects.iter().all(|e| !matches!(e, Expectation::Expect(Predicate::Before { .. }))));
        assert!(c.expects.contains(&expect(Predicate::BufferEquals { buf: "b2".into(), index: None, value: 16 })));
        assert_eq!(raise(&c), Ok(p.clone()));
        assert_eq!(raise(&case(&p, Variant::Captured { launches: 2 })), Ok(p));
        let eager = two_device_eager_sample();
        assert_eq!(eager.check_well_formed(crate::program::Flavor::EagerOnly), Ok(()));
        assert!(eager.check_well_formed(crate::program::Flavor::Capturable).is_err());
        let c = case(&eager, Variant::Eager { reps: 1 });
        assert!(c.script.iter().any(|o| matches!(o.kind, OpKind::MemcpyPeer { stream: Some(_), .. })));
        assert_eq!(raise(&c), Ok(eager));
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
