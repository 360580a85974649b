//! The proptest strategy for well-formed programs.
//!
//! Proptest draws a *shape* (streams and their flags, buffers and their kinds, events, buffer size) and a list of
//! *intents*; [`build`] turns them into a program that is well-formed by construction. Races are never filtered
//! out: before a work op that touches memory an earlier, still unordered op touched (one of the two writing),
//! `build` inserts `record E on <earlier op's stream>; wait <this stream> for E`, with E drawn by the intent. So
//! shrinking the intents always yields another well-formed program, and a shrunk failure keeps the
//! synchronisation that makes it meaningful.
//!
//! What programs contain: 2–6 created streams with mixed blocking/non-blocking flags; kernels (fill, transform with
//! distinct odd multipliers, compare) on shared and on disjoint buffers; records; cross-stream waits, including an
//! event re-recorded between two waits (a dedicated intent makes this common); device↔device and device↔pinned
//! copies; memsets (of device and pinned memory); host functions, some taking a snapshot of a pinned buffer;
//! stream-ordered allocations: async buffers allocated (`malloc-async`) on one stream, written whole before any
//! read, used on others behind the events `build` inserts (an allocation and a free conflict with every use), and
//! freed (`free-async`) on any stream, after a copy into a permanent buffer so what they held is read back;
//! whole-buffer 2D copies (`cudaMemcpy2DAsync`); copies into and out of the probes' device variable
//! (`cudaMemcpyToSymbolAsync`, `cudaMemcpyFromSymbolAsync`: the symbol is a buffer of its own kind, the last one,
//! written whole before it is read since it keeps what an earlier program left, and on one device only).
//! Capturable programs mostly carry an [`Update`] (see `model::after_update`): `exec-set-node` and `set-node` of
//! fills and transforms (new values, another permanent buffer when no race follows, a fill↔transform function
//! change), a whole `update` placed anywhere among them (not for graphs with memory nodes), and sometimes the
//! forbidden form (a clone of the template with one more node).
//!
//! Restrictions, so that eager execution and capture mean the same thing (SEMANTICS.md §0.4):
//! - Only created streams: the legacy stream synchronises with blocking streams (extra edges capture would not
//!   have, and using it during a capture is invalid); per-thread and null are default streams too.
//! - [`Flavor::Capturable`]: a wait only follows a record of its event in the same body. The docs make a wait
//!   inside a capture on an event not recorded in it invalid (without `external`). (Observed on the H100 with
//!   driver 580.159.04: a wait on a *never-recorded* event inside a global capture returns cudaSuccess and adds
//!   nothing; that is documented nowhere, so generated programs do not rely on it.) [`Flavor::EagerOnly`]
//!   programs, run eagerly only, also wait on events before any record of them: a no-op.
//! - No pinned-to-pinned copies: a host-to-host copy is "fully synchronous with respect to the host" (§0.1) in
//!   eager execution, a different contract from a graph node's (capture accepts it: seen on the H100).
//! - At least one work op: an empty capture gives an empty graph (it instantiates and launches on the H100), which
//!   checks nothing here.
//! - Snapshots only of pinned buffers (the host reads them while the function runs).
//! - Compare never writes one of its inputs; a copy never copies a buffer onto itself.
//! - Events are only those of the program; the wrapper's fork/join events (see lower.rs) are separate.
//!
//! [`two_device_programs`] draws the same intents over a shape whose streams, events and device buffers sit on
//! device 0 or 1 (see `program::Placement`), with peer copies besides: `build` records an event only on a stream
//! of its device, and gives a kernel or memset a buffer its stream's device reaches (its own or pinned memory),
//! so cross-device order comes from waits and cross-device data from copies. With an empty placement every rule
//! of that kind holds for every choice, so one-device programs are built exactly as before.

use crate::model::{Builder, ModelMode};
use crate::program::{conflict, BufKind, Edit, Flavor, Op, Placement, Program, Update, SYMBOL_BYTES};
use proptest::prelude::*;

/// Streams, buffers and events of a program, and their devices.
#[derive(Debug, Clone)]
pub struct Shape {
    pub non_blocking: Vec<bool>,
    pub buffers: Vec<BufKind>,
    pub events: usize,
    pub buffer_bytes: u64,
    pub placement: Placement,
}

/// One step the program should take. Stream, buffer and event numbers are taken modulo the shape's counts, so
/// shrinking the shape never makes an intent invalid.
#[derive(Debug, Clone)]
pub enum Intent {
    /// A work op on `stream`; `sync_event` is the event used for any ordering `build` must insert before it.
    Work {
        stream: usize,
        work: Work,
        sync_event: usize,
    },
    Record {
        stream: usize,
        event: usize,
    },
    Wait {
        stream: usize,
        event: usize,
    },
    /// `record e on r; wait a for e; <work on r>; record e on r; wait b for e`: the second record replaces what
    /// the event stands for between the two waits, so `a` and `b` wait for different sets of work. The optional
    /// parts are always generated (almost) and let shrinking take the pattern apart.
    ReRecord {
        event: usize,
        recorder: usize,
        first: Option<usize>,
        between: Option<Work>,
        second: Option<usize>,
    },
    /// `malloc-async b on stream` of an async buffer not allocated now (nothing otherwise).
    Alloc {
        stream: usize,
        buf: usize,
        sync_event: usize,
    },
    /// `free-async b on stream` of an allocated async buffer, after copying it into permanent buffer `drain` (so
    /// what it held is read back).
    Free {
        stream: usize,
        buf: usize,
        drain: Option<usize>,
        sync_event: usize,
    },
}

#[derive(Debug, Clone)]
pub enum Work {
    Fill { buf: usize, value: u32 },
    Transform { buf: usize, mul: u32, add: u32 },
    Compare { a: usize, b: usize, into: usize },
    Copy { dst: usize, src: usize },
    PeerCopy { dst: usize, src: usize },
    Memset { buf: usize, byte: u8 },
    HostFunc { snapshot: Option<usize> },
    BatchCopy { dst: usize, src: usize },
    Copy2D { dst: usize, src: usize },
    ToSymbol { src: usize },
    FromSymbol { dst: usize },
}

/// What the update of a captured program should do; op and buffer numbers are taken modulo what the program has.
#[derive(Debug, Clone)]
pub struct UpdateIntent {
    pub edits: Vec<EditIntent>,
    /// Where the whole update goes among the edits (modulo their count + 1).
    pub whole: Option<usize>,
    pub add_node: bool,
}

#[derive(Debug, Clone)]
pub struct EditIntent {
    /// Which fill or transform (modulo their count).
    pub target: usize,
    /// The new kernel is a transform (else a fill).
    pub transform: bool,
    /// Another buffer (a permanent one, where the op's is permanent and no race follows).
    pub buf: Option<usize>,
    pub value: u32,
    pub mul: u32,
    pub exec: bool,
}

const MAX_STREAMS: usize = 6;
const MAX_BUFFERS: usize = 4;
const MAX_EVENTS: usize = 3;
const MAX_INTENTS: usize = 20;
const MAX_EDITS: usize = 4;

fn index(max: usize) -> impl Strategy<Value = usize> {
    0..max
}

fn shape() -> impl Strategy<Value = Shape> {
    let permanent = || prop_oneof![Just(BufKind::Device), Just(BufKind::Pinned)];
    let kind = prop_oneof![2 => Just(BufKind::Device), 1 => Just(BufKind::Pinned), 2 => Just(BufKind::Async)];
    (
        proptest::collection::vec(any::<bool>(), 2..=MAX_STREAMS),
        // Buffer 0 is permanent: something is always read back.
        (permanent(), proptest::collection::vec(kind, 0..MAX_BUFFERS)),
        1..=MAX_EVENTS,
        prop_oneof![Just(1024u64), Just(4096), Just(16384)],
        // The device variable as the last buffer, where the buffers fit in it.
        proptest::bool::weighted(0.7),
    )
        .prop_map(|(non_blocking, (first, rest), events, buffer_bytes, symbol)| {
            let symbol = (symbol && buffer_bytes <= SYMBOL_BYTES).then_some(BufKind::Symbol);
            Shape {
                non_blocking,
                buffers: std::iter::once(first).chain(rest).chain(symbol).collect(),
                events,
                buffer_bytes,
                placement: Placement::default(),
            }
        })
}

/// A shape over two devices: streams, events and (device or pinned) buffers each on device 0 or 1, with the origin
/// stream and buffer 0 on device 0 (the filler op of an empty body fills buffer 0 from stream 0), and at least one
/// stream and one event on each device.
fn two_device_shape() -> impl Strategy<Value = Shape> {
    let device = || 0..2u32;
    let kind = prop_oneof![3 => Just(BufKind::Device), 1 => Just(BufKind::Pinned)];
    (
        proptest::collection::vec((any::<bool>(), device()), 2..=MAX_STREAMS),
        proptest::collection::vec((kind, device()), 1..=MAX_BUFFERS),
        proptest::collection::vec(device(), 2..=MAX_EVENTS + 1),
        prop_oneof![Just(1024u64), Just(4096), Just(16384)],
    )
        .prop_map(|(streams, buffers, events, buffer_bytes)| {
            let (non_blocking, mut stream_devices): (Vec<bool>, Vec<u32>) = streams.into_iter().unzip();
            let (kinds, mut buffer_devices): (Vec<BufKind>, Vec<u32>) = buffers.into_iter().unzip();
            let mut event_devices = events;
            stream_devices[0] = 0;
            buffer_devices[0] = 0;
            // Pinned memory is host memory: its entry means nothing, and is 0.
            for (device, kind) in buffer_devices.iter_mut().zip(&kinds) {
                if *kind == BufKind::Pinned {
                    *device = 0;
                }
            }
            for devices in [&mut stream_devices, &mut event_devices] {
                let last = devices.len() - 1;
                if !devices.contains(&1) {
                    devices[last] = 1;
                }
                if !devices.contains(&0) {
                    devices[0] = 0;
                }
            }
            Shape {
                non_blocking,
                events: event_devices.len(),
                buffers: kinds,
                buffer_bytes,
                placement: Placement { streams: stream_devices, events: event_devices, buffers: buffer_devices },
            }
        })
}

fn work() -> impl Strategy<Value = Work> {
    let b = || index(MAX_BUFFERS);
    // Simplest first: proptest shrinks a union towards its first alternative.
    prop_oneof![
        3 => (b(), 1..1000u32).prop_map(|(buf, value)| Work::Fill { buf, value }),
        4 => (b(), 1..500u32, 1..1000u32).prop_map(|(buf, k, add)| Work::Transform { buf, mul: 2 * k + 1, add }),
        1 => (b(), b(), b()).prop_map(|(a, b, into)| Work::Compare { a, b, into }),
        2 => (b(), b()).prop_map(|(dst, src)| Work::Copy { dst, src }),
        1 => (b(), 1..=255u8).prop_map(|(buf, byte)| Work::Memset { buf, byte }),
        2 => proptest::option::of(b()).prop_map(|snapshot| Work::HostFunc { snapshot }),
        1 => (b(), b()).prop_map(|(dst, src)| Work::BatchCopy { dst, src }),
        1 => (b(), b()).prop_map(|(dst, src)| Work::Copy2D { dst, src }),
        1 => b().prop_map(|src| Work::ToSymbol { src }),
        1 => b().prop_map(|dst| Work::FromSymbol { dst }),
    ]
}

/// Nearly always `Some`, shrinking to `None`.
fn some<S: Strategy>(s: S) -> impl Strategy<Value = Option<S::Value>> {
    proptest::option::weighted(0.95, s)
}

/// The work of programs over two devices: that of one device, and peer copies.
fn two_device_work() -> impl Strategy<Value = Work> {
    let b = || index(MAX_BUFFERS);
    prop_oneof![
        9 => work(),
        2 => (b(), b()).prop_map(|(dst, src)| Work::PeerCopy { dst, src }),
    ]
}

fn intent() -> impl Strategy<Value = Intent> {
    intent_with(work().boxed())
}

fn intent_with(work: BoxedStrategy<Work>) -> impl Strategy<Value = Intent> {
    let s = || index(MAX_STREAMS);
    let e = || index(MAX_EVENTS);
    let b = || index(MAX_BUFFERS);
    prop_oneof![
        8 => (s(), work.clone(), e()).prop_map(|(stream, work, sync_event)| Intent::Work { stream, work, sync_event }),
        2 => (s(), e()).prop_map(|(stream, event)| Intent::Record { stream, event }),
        2 => (s(), e()).prop_map(|(stream, event)| Intent::Wait { stream, event }),
        2 => (e(), s(), some(s()), some(work), some(s())).prop_map(|(event, recorder, first, between, second)| {
            Intent::ReRecord { event, recorder, first, between, second }
        }),
        5 => (s(), b(), e()).prop_map(|(stream, buf, sync_event)| Intent::Alloc { stream, buf, sync_event }),
        2 => (s(), b(), some(b()), e())
            .prop_map(|(stream, buf, drain, sync_event)| Intent::Free { stream, buf, drain, sync_event }),
    ]
}

fn update_intent() -> impl Strategy<Value = UpdateIntent> {
    let edit =
        (any::<usize>(), any::<bool>(), proptest::option::of(index(MAX_BUFFERS)), 1..1000u32, 1..500u32, any::<bool>())
            .prop_map(|(target, transform, buf, value, k, exec)| EditIntent {
                target,
                transform,
                buf,
                value,
                mul: 2 * k + 1,
                exec,
            });
    (
        proptest::collection::vec(edit, 0..=MAX_EDITS),
        proptest::option::weighted(0.8, 0..=MAX_EDITS),
        proptest::bool::weighted(0.3),
    )
        .prop_map(|(edits, whole, add_node)| UpdateIntent { edits, whole, add_node })
}

/// Well-formed programs of the given flavor. Capturable ones mostly carry an update (run only by the captured
/// variant and the eager repetitions after the first).
pub fn programs(flavor: Flavor) -> impl Strategy<Value = Program> {
    let update = match flavor {
        Flavor::Capturable => proptest::option::weighted(0.7, update_intent()).boxed(),
        Flavor::EagerOnly => Just(None).boxed(),
    };
    (shape(), proptest::collection::vec(intent(), 1..=MAX_INTENTS), update).prop_map(move |(shape, intents, update)| {
        let mut p = build(&shape, &intents, flavor);
        p.update = update.and_then(|u| build_update(&p, &u));
        p
    })
}

/// Well-formed programs over two devices (see the module docs): no update, no stream-ordered allocation. Eager-only
/// ones also make peer copies (`memcpy-peer-async`), which a capture refuses (seen on the H200 pair with driver
/// 580.159.04: cudaErrorStreamCaptureUnsupported, and the capture is invalidated); capturable ones copy between
/// the devices with `memcpy-async`.
pub fn two_device_programs(flavor: Flavor) -> impl Strategy<Value = Program> {
    let work = match flavor {
        Flavor::Capturable => work().boxed(),
        Flavor::EagerOnly => two_device_work().boxed(),
    };
    let intents = proptest::collection::vec(intent_with(work), 1..=MAX_INTENTS);
    (two_device_shape(), intents).prop_map(move |(shape, intents)| build(&shape, &intents, flavor))
}

/// The programs a property draws.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Programs {
    /// On one device, of a flavor.
    OneDevice(Flavor),
    /// Over two devices, of a flavor.
    TwoDevices(Flavor),
}

impl From<Flavor> for Programs {
    fn from(flavor: Flavor) -> Self {
        Programs::OneDevice(flavor)
    }
}

impl Programs {
    pub fn strategy(self) -> BoxedStrategy<Program> {
        match self {
            Programs::OneDevice(flavor) => programs(flavor).boxed(),
            Programs::TwoDevices(flavor) => two_device_programs(flavor).boxed(),
        }
    }

    pub fn flavor(self) -> Flavor {
        match self {
            Programs::OneDevice(flavor) | Programs::TwoDevices(flavor) => flavor,
        }
    }
}

/// Turns intents into a well-formed program (see the module docs).
pub fn build(shape: &Shape, intents: &[Intent], flavor: Flavor) -> Program {
    let mut b = ProgramBuilder {
        program: Program {
            streams: shape.non_blocking.clone(),
            events: shape.events,
            buffers: shape.buffers.clone(),
            buffer_bytes: shape.buffer_bytes,
            ops: Vec::new(),
            update: None,
            placement: shape.placement.clone(),
        },
        model: Builder::new(shape.non_blocking.len(), shape.events, ModelMode::Faithful),
        flavor,
        multipliers: Vec::new(),
        // The symbol holds what an earlier program left: only a whole write may touch it first.
        state: shape
            .buffers
            .iter()
            .map(|&k| if k == BufKind::Symbol { Alloc::Unwritten } else { Alloc::Free })
            .collect(),
    };
    for intent in intents {
        match intent {
            Intent::Work { stream, work, sync_event } => b.work(*stream, work, *sync_event),
            Intent::Record { stream, event } => {
                b.record(*stream, *event);
            }
            Intent::Wait { stream, event } => b.wait(*stream, *event),
            Intent::ReRecord { event, recorder, first, between, second } => {
                // The event the recorder's device can record (the one asked for, on one device).
                let event = b.record(*recorder, *event);
                if let Some(first) = first {
                    b.wait(*first, event);
                }
                if let Some(between) = between {
                    b.work(*recorder, between, event);
                }
                b.record(*recorder, event);
                if let Some(second) = second {
                    b.wait(*second, event);
                }
            }
            Intent::Alloc { stream, buf, sync_event } => {
                let buf = buf % b.program.buffers.len();
                if b.state[buf] == Alloc::Free && b.program.buffers[buf] == BufKind::Async {
                    let stream = b.stream(*stream);
                    b.ordered(Op::Alloc { stream, buf }, *sync_event);
                }
            }
            Intent::Free { stream, buf, drain, sync_event } => b.free(*stream, *buf, *drain, *sync_event),
        }
    }
    // An empty capture makes an empty graph, a corner of its own that no property here is about.
    if b.program.work_ops().next().is_none() {
        b.push(Op::Fill { stream: 0, buf: 0, value: 1 });
    }
    // A symbol no op reached is dropped: a case names the symbol only in its copies (the last buffer, so the others
    // keep their numbers).
    let symbol_used = |p: &Program| p.ops.iter().any(|o| matches!(o, Op::ToSymbol { .. } | Op::FromSymbol { .. }));
    if b.program.buffers.last() == Some(&BufKind::Symbol) && !symbol_used(&b.program) {
        b.program.buffers.pop();
        b.state.pop();
    }
    // Every allocation is freed in the body, on the stream of the buffer's last use, after a copy of what it
    // holds into buffer 0 (permanent by construction), so that it is read back.
    for buf in 0..b.program.buffers.len() {
        if b.state[buf] != Alloc::Free {
            let last = b.program.ops.iter().rev().find(|o| o.accesses().iter().any(|a| a.buf == buf));
            let stream = last.map_or(0, Op::stream);
            b.free(stream, buf, Some(0), 0);
        }
    }
    b.program
}

/// The update an intent asks for, made valid for `p`: edits of its fills and transforms that keep it race-free
/// (a buffer change that would race is dropped), no whole update for graphs with memory nodes (see
/// `Program::check_update`). `None` when nothing is left.
pub fn build_update(p: &Program, intent: &UpdateIntent) -> Option<Update> {
    let settable: Vec<usize> = p.work_ops().filter(|&i| p.ops[i].is_settable()).collect();
    let mut program = p.clone();
    let mut update = Update { edits: Vec::new(), whole: None, add_node: false };
    if !settable.is_empty() {
        for e in &intent.edits {
            let op = settable[e.target % settable.len()];
            let old = p.ops[op];
            let old_buf = old.accesses()[0].buf;
            let permanent = |b: usize| p.buffers[b].is_permanent();
            let new_buf = e.buf.map(|b| b % p.buffers.len()).filter(|&b| permanent(b) && permanent(old_buf));
            let transform = if permanent(old_buf) { e.transform } else { matches!(old, Op::Transform { .. }) };
            let make = |buf: usize| {
                let stream = old.stream();
                if transform {
                    Op::Transform { stream, buf, mul: if e.mul == 1 { 3 } else { e.mul }, add: e.value }
                } else {
                    Op::Fill { stream, buf, value: e.value }
                }
            };
            for buf in new_buf.into_iter().chain([old_buf]) {
                let mut more = update.clone();
                more.edits.push(Edit { op, to: make(buf), exec: e.exec });
                let candidate = Program { update: Some(more.clone()), ..program.clone() };
                if candidate.check_race_free().is_ok() {
                    update = more;
                    program = candidate;
                    break;
                }
            }
        }
    }
    let has_memory_nodes = p.ops.iter().any(|o| matches!(o, Op::Alloc { .. }));
    if !has_memory_nodes {
        update.whole = intent.whole.map(|w| w % (update.edits.len() + 1));
        update.add_node = intent.add_node && update.whole.is_some();
    }
    (!update.edits.is_empty() || update.whole.is_some()).then_some(update)
}

/// `p` without op `i`: edits of it go, later edits' op numbers move down.
pub fn without_op(p: &Program, i: usize) -> Program {
    let mut c = p.clone();
    c.ops.remove(i);
    if let Some(u) = &mut c.update {
        let before = u.edits.iter().take(u.whole.unwrap_or(0)).filter(|e| e.op == i).count();
        u.edits.retain(|e| e.op != i);
        for e in &mut u.edits {
            if e.op > i {
                e.op -= 1;
            }
        }
        u.whole = u.whole.map(|w| w - before);
        if u.edits.is_empty() && u.whole.is_none() {
            c.update = None;
        }
    }
    c
}

/// Smaller updates of `p`: without it, without the added node, without the whole update, without one edit.
fn smaller_updates(p: &Program) -> Vec<Program> {
    let Some(u) = &p.update else { return Vec::new() };
    let with =
        |u: Option<Update>| Program { update: u.filter(|u| !u.edits.is_empty() || u.whole.is_some()), ..p.clone() };
    let mut out = vec![with(None)];
    if u.add_node {
        out.push(with(Some(Update { add_node: false, ..u.clone() })));
    }
    if u.whole.is_some() {
        out.push(with(Some(Update { whole: None, add_node: false, ..u.clone() })));
    }
    for k in (0..u.edits.len()).rev() {
        let mut v = u.clone();
        v.edits.remove(k);
        v.whole = v.whole.map(|w| if w > k { w - 1 } else { w });
        out.push(with(Some(v)));
    }
    out
}

/// Program-level shrinking, after proptest's: removes single ops, then parts of the update, then streams,
/// buffers and events no op uses, as long as the program stays well-formed and `fails` still holds. Proptest
/// shrinks intents, and an intent that expands into several ops (a re-record pattern, or an ordering `build`
/// inserted) cannot lose part of itself there; here it can. The result is 1-minimal: no single op can be removed.
pub fn minimize(mut program: Program, flavor: Flavor, fails: impl Fn(&Program) -> bool) -> Program {
    let accept = |c: &Program| c.check_well_formed(flavor).is_ok() && fails(c);
    loop {
        let mut changed = false;
        for i in (0..program.ops.len()).rev() {
            let candidate = without_op(&program, i);
            if accept(&candidate) {
                program = candidate;
                changed = true;
            }
        }
        for candidate in smaller_updates(&program) {
            if accept(&candidate) {
                program = candidate;
                changed = true;
                break;
            }
        }
        let candidate = compact(&program);
        if candidate != program && accept(&candidate) {
            program = candidate;
            changed = true;
        }
        if !changed {
            return program;
        }
    }
}

/// The program without the streams (but the origin and one more), buffers and events that no op uses.
pub fn compact(p: &Program) -> Program {
    fn keep(n: usize, used: impl Fn(usize) -> bool, min: usize) -> Vec<usize> {
        let mut kept: Vec<usize> = (0..n).filter(|&i| used(i)).collect();
        for i in 0..n {
            if kept.len() >= min {
                break;
            }
            if !kept.contains(&i) {
                kept.push(i);
            }
        }
        kept.sort_unstable();
        kept
    }
    let edits: Vec<Op> = p.update.iter().flat_map(|u| u.edits.iter().map(|e| e.to)).collect();
    let all: Vec<&Op> = p.ops.iter().chain(&edits).collect();
    let streams = keep(p.streams.len(), |s| s == 0 || all.iter().any(|o| o.stream() == s), 2);
    let buffers = keep(p.buffers.len(), |b| all.iter().any(|o| o.accesses().iter().any(|a| a.buf == b)), 1);
    let event_of = |o: &Op| match *o {
        Op::Record { event, .. } | Op::Wait { event, .. } => Some(event),
        _ => None,
    };
    let events = keep(p.events, |e| p.ops.iter().any(|o| event_of(o) == Some(e)), 1);
    let at = |kept: &[usize], i: usize| kept.iter().position(|&k| k == i).unwrap_or(0);
    let (s, b, e) = (|i| at(&streams, i), |i| at(&buffers, i), |i| at(&events, i));
    let map = |o: &Op| match *o {
        Op::Fill { stream, buf, value } => Op::Fill { stream: s(stream), buf: b(buf), value },
        Op::Transform { stream, buf, mul, add } => Op::Transform { stream: s(stream), buf: b(buf), mul, add },
        Op::Compare { stream, a, b: bb, into } => Op::Compare { stream: s(stream), a: b(a), b: b(bb), into: b(into) },
        Op::Copy { stream, dst, src } => Op::Copy { stream: s(stream), dst: b(dst), src: b(src) },
        Op::PeerCopy { stream, dst, src } => Op::PeerCopy { stream: s(stream), dst: b(dst), src: b(src) },
        Op::Memset { stream, buf, byte } => Op::Memset { stream: s(stream), buf: b(buf), byte },
        Op::HostFunc { stream, snapshot } => Op::HostFunc { stream: s(stream), snapshot: snapshot.map(b) },
        Op::Record { stream, event } => Op::Record { stream: s(stream), event: e(event) },
        Op::Wait { stream, event } => Op::Wait { stream: s(stream), event: e(event) },
        Op::Alloc { stream, buf } => Op::Alloc { stream: s(stream), buf: b(buf) },
        Op::Free { stream, buf } => Op::Free { stream: s(stream), buf: b(buf) },
        Op::BatchCopy { stream, dst, src } => Op::BatchCopy { stream: s(stream), dst: b(dst), src: b(src) },
        Op::Copy2D { stream, dst, src, rows } => Op::Copy2D { stream: s(stream), dst: b(dst), src: b(src), rows },
        Op::ToSymbol { stream, sym, src, bytes } => Op::ToSymbol { stream: s(stream), sym: b(sym), src: b(src), bytes },
        Op::FromSymbol { stream, dst, sym, bytes } => {
            Op::FromSymbol { stream: s(stream), dst: b(dst), sym: b(sym), bytes }
        }
    };
    let placed = |list: &[u32], kept: &[usize]| -> Vec<u32> {
        if list.is_empty() {
            Vec::new()
        } else {
            kept.iter().map(|&i| list[i]).collect()
        }
    };
    let placement = Placement {
        streams: placed(&p.placement.streams, &streams),
        events: placed(&p.placement.events, &events),
        buffers: placed(&p.placement.buffers, &buffers),
    };
    Program {
        placement,
        streams: streams.iter().map(|&i| p.streams[i]).collect(),
        events: events.len(),
        buffers: buffers.iter().map(|&i| p.buffers[i]).collect(),
        buffer_bytes: p.buffer_bytes,
        ops: p.ops.iter().map(map).collect(),
        update: p
            .update
            .as_ref()
            .map(|u| Update { edits: u.edits.iter().map(|ed| Edit { to: map(&ed.to), ..*ed }).collect(), ..u.clone() }),
    }
}

/// Where an async buffer is in its life while the body is built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Alloc {
    Free,
    /// Allocated, not yet written whole: only a whole write may touch it.
    Unwritten,
    Live,
}

struct ProgramBuilder {
    program: Program,
    /// The faithful model of the ops pushed so far: tells which earlier ops are already ordered.
    model: Builder,
    flavor: Flavor,
    /// Transform multipliers used so far (kept distinct so that swapped transforms give different values).
    multipliers: Vec<u32>,
    /// Of each buffer (permanent ones stay `Free` and are never looked at).
    state: Vec<Alloc>,
}

impl ProgramBuilder {
    fn push(&mut self, op: Op) {
        self.model.push(&op);
        for a in op.accesses() {
            if !self.program.buffers[a.buf].is_permanent() {
                self.state[a.buf] = match op {
                    Op::Alloc { .. } => Alloc::Unwritten,
                    Op::Free { .. } => Alloc::Free,
                    _ => Alloc::Live,
                };
            }
        }
        self.program.ops.push(op);
    }

    fn stream(&self, s: usize) -> usize {
        s % self.program.streams.len()
    }

    /// Records on `stream` the event `event` stands for there (one of the stream's device); returns it.
    fn record(&mut self, stream: usize, event: usize) -> usize {
        let stream = self.stream(stream);
        let event = self.event_on(self.program.placement.stream(stream), event);
        self.push(Op::Record { stream, event });
        event
    }

    /// The event `pick` stands for among those of `device` (modulo their count): an event is recorded only on a
    /// stream of its device. On one device, `pick` modulo the event count.
    fn event_on(&self, device: u32, pick: usize) -> usize {
        let pl = &self.program.placement;
        let of: Vec<usize> = (0..self.program.events).filter(|&e| pl.event(e) == device).collect();
        if of.is_empty() {
            pick % self.program.events
        } else {
            of[pick % of.len()]
        }
    }

    fn wait(&mut self, stream: usize, event: usize) {
        let (stream, event) = (self.stream(stream), event % self.program.events);
        if self.flavor == Flavor::Capturable && !self.model.is_recorded(event) {
            return;
        }
        self.push(Op::Wait { stream, event });
    }

    fn work(&mut self, stream: usize, work: &Work, sync_event: usize) {
        // A read of the symbol before anything wrote it would read an earlier program's data: fill it first, from
        // the next buffer.
        if let Work::FromSymbol { dst } = *work {
            let symbol = self.program.buffers.iter().position(|&k| k == BufKind::Symbol);
            if symbol.is_some_and(|sym| self.state[sym] == Alloc::Unwritten) {
                self.work(stream, &Work::ToSymbol { src: dst + 1 }, sync_event);
            }
        }
        let stream = self.stream(stream);
        let Some(op) = self.concretize(stream, work) else { return };
        if !self.async_use_ok(&op) {
            return;
        }
        self.ordered(op, sync_event);
    }

    /// Async buffers only between allocation and free, and written whole before anything else touches them.
    fn async_use_ok(&self, op: &Op) -> bool {
        op.accesses().iter().all(|a| match (self.program.buffers[a.buf].is_permanent(), self.state[a.buf]) {
            (true, _) | (false, Alloc::Live) => true,
            (false, Alloc::Unwritten) => op.writes_whole(a.buf),
            (false, Alloc::Free) => false,
        })
    }

    fn free(&mut self, stream: usize, buf: usize, drain: Option<usize>, sync_event: usize) {
        let (stream, buf) = (self.stream(stream), buf % self.program.buffers.len());
        if self.state[buf] == Alloc::Free || self.program.buffers[buf] != BufKind::Async {
            return;
        }
        let drain = drain.map(|d| d % self.program.buffers.len()).filter(|&d| self.program.buffers[d].is_permanent());
        if let (Some(dst), Alloc::Live) = (drain, self.state[buf]) {
            self.ordered(Op::Copy { stream, dst, src: buf }, sync_event);
        }
        self.ordered(Op::Free { stream, buf }, sync_event);
    }

    /// Pushes `op` after ordering it behind every earlier op it conflicts with. Recording on the earlier op's
    /// stream *now* captures everything issued there so far, the earlier op included.
    fn ordered(&mut self, op: Op, sync_event: usize) {
        let stream = op.stream();
        for earlier in 0..self.program.ops.len() {
            let prior = self.program.ops[earlier];
            if prior.is_work() && conflict(&prior, &op) && !self.model.ordered_before_next(earlier, stream) {
                let event = self.event_on(self.program.placement.stream(prior.stream()), sync_event);
                self.push(Op::Record { stream: prior.stream(), event });
                self.push(Op::Wait { stream, event });
            }
        }
        self.push(op);
    }

    /// The op an intent asks for, adjusted to the shape and the restrictions; `None` if the shape cannot have it.
    /// A kernel or memset gets the first buffer from the one asked for (modulo, wrapping) that its stream's device
    /// reaches, all of them on one device.
    fn concretize(&mut self, stream: usize, work: &Work) -> Option<Op> {
        let kinds = &self.program.buffers;
        let pl = &self.program.placement;
        let n = kinds.len();
        let device = pl.stream(stream);
        // The symbol is reached by the symbol copies alone.
        let symbol = kinds.iter().position(|&k| k == BufKind::Symbol);
        let reachable = |b: usize| Some(b) != symbol && (kinds[b] == BufKind::Pinned || pl.buffer(b) == device);
        let first = |b: usize, ok: &dyn Fn(usize) -> bool| (0..n).map(|k| (b + k) % n).find(|&c| ok(c));
        let near = |b: usize| first(b, &reachable);
        Some(match *work {
            Work::Fill { buf, value } => Op::Fill { stream, buf: near(buf)?, value },
            Work::Transform { buf, mul, add } => {
                let mut mul = mul | 1;
                while mul == 1 || self.multipliers.contains(&mul) {
                    mul = mul.wrapping_add(2);
                }
                let buf = near(buf)?;
                self.multipliers.push(mul);
                Op::Transform { stream, buf, mul, add }
            }
            Work::Compare { a, b, into } if n >= 2 => {
                let into = near(into)?;
                let input = |x: usize| first(x, &|c| c != into && reachable(c));
                Op::Compare { stream, a: input(a)?, b: input(b)?, into }
            }
            Work::Copy { dst, src } if n >= 2 => {
                let src = first(src, &|c| Some(c) != symbol)?;
                let dst = first(dst, &|c| c != src && Some(c) != symbol)?;
                if kinds[src] == BufKind::Pinned && kinds[dst] == BufKind::Pinned {
                    return None;
                }
                Op::Copy { stream, dst, src }
            }
            // A capture refuses cudaMemcpyPeerAsync (see `two_device_programs`).
            Work::PeerCopy { .. } if self.flavor == Flavor::Capturable => return None,
            Work::PeerCopy { dst, src } if n >= 2 => {
                let device_memory = |c: usize| kinds[c] == BufKind::Device;
                let src = first(src, &device_memory)?;
                Op::PeerCopy { stream, dst: first(dst, &|c| c != src && device_memory(c))?, src }
            }
            Work::Memset { buf, byte } => Op::Memset { stream, buf: near(buf)?, byte },
            Work::HostFunc { snapshot } => {
                let snapshot = snapshot.map(|b| b % n).filter(|&b| kinds[b] == BufKind::Pinned);
                Op::HostFunc { stream, snapshot }
            }
            // A capture refuses cudaMemcpyBatchAsync with cudaErrorStreamCaptureUnsupported (H100, driver 580.159.04:
            // batched-copies/batch-on-capturing-stream-is-recorded), as cuda.core says ("no graph-node form").
            Work::BatchCopy { .. } if self.flavor == Flavor::Capturable => return None,
            // A batch copies between memories its stream's device reaches (its own, or pinned host memory).
            Work::BatchCopy { dst, src } if n >= 2 => {
                let src = near(src)?;
                Op::BatchCopy { stream, dst: first(dst, &|c| c != src && reachable(c))?, src }
            }
            // A 2D copy of the whole buffer, between memories its stream's device reaches; never pinned to pinned
            // (host-synchronous, as for `memcpy-async`).
            Work::Copy2D { dst, src } if n >= 2 => {
                let src = near(src)?;
                let dst = first(dst, &|c| c != src && reachable(c))?;
                if kinds[src] == BufKind::Pinned && kinds[dst] == BufKind::Pinned {
                    return None;
                }
                Op::Copy2D { stream, dst, src, rows: self.program.buffer_bytes / crate::program::ROW_BYTES }
            }
            // A whole buffer into the symbol or out of it (a buffer its stream's device reaches: on one device,
            // any).
            Work::ToSymbol { src } => {
                let sym = symbol?;
                Op::ToSymbol { stream, sym, src: near(src)?, bytes: self.program.buffer_bytes }
            }
            Work::FromSymbol { dst } => {
                let sym = symbol?;
                Op::FromSymbol { stream, dst: near(dst)?, sym, bytes: self.program.buffer_bytes }
            }
            Work::Compare { .. }
            | Work::Copy { .. }
            | Work::PeerCopy { .. }
            | Work::BatchCopy { .. }
            | Work::Copy2D { .. } => return None,
        })
    }
}

pub mod tests {
    use super::*;

    fn shape(streams: usize, buffers: Vec<BufKind>) -> Shape {
        Shape {
            non_blocking: vec![false; streams],
            buffers,
            events: 1,
            buffer_bytes: 64,
            placement: Placement::default(),
        }
    }

    /// Two writers of one buffer on two streams get a record/wait between them.
    pub fn conflicting_writers_are_ordered() {
        let intents = vec![
            Intent::Work { stream: 0, work: Work::Fill { buf: 0, value: 1 }, sync_event: 0 },
            Intent::Work { stream: 1, work: Work::Fill { buf: 0, value: 2 }, sync_event: 0 },
        ];
        let p = build(&shape(2, vec![BufKind::Device]), &intents, Flavor::Capturable);
        assert_eq!(
            p.ops,
            vec![
                Op::Fill { stream: 0, buf: 0, value: 1 },
                Op::Record { stream: 0, event: 0 },
                Op::Wait { stream: 1, event: 0 },
                Op::Fill { stream: 1, buf: 0, value: 2 },
            ]
        );
    }

    /// Readers of one buffer need no ordering among themselves, only against writers.
    pub fn readers_are_not_ordered() {
        let k = vec![BufKind::Device, BufKind::Device, BufKind::Device];
        let intents = vec![
            Intent::Work { stream: 0, work: Work::Fill { buf: 0, value: 1 }, sync_event: 0 },
            Intent::Work { stream: 1, work: Work::Copy { dst: 1, src: 0 }, sync_event: 0 },
            Intent::Work { stream: 2, work: Work::Copy { dst: 2, src: 0 }, sync_event: 0 },
        ];
        let p = build(&shape(3, k), &intents, Flavor::Capturable);
        let waits = p.ops.iter().filter(|o| matches!(o, Op::Wait { .. })).count();
        assert_eq!(waits, 2, "each copy waits for the fill, neither for the other copy: {:?}", p.ops);
    }

    /// Capturable programs drop waits on events not yet recorded; eager-only ones keep them.
    pub fn unrecorded_waits_by_flavor() {
        let intents = vec![Intent::Wait { stream: 1, event: 0 }];
        let s = shape(2, vec![BufKind::Device]);
        let filler = Op::Fill { stream: 0, buf: 0, value: 1 };
        assert_eq!(build(&s, &intents, Flavor::Capturable).ops, vec![filler]);
        assert_eq!(build(&s, &intents, Flavor::EagerOnly).ops, vec![Op::Wait { stream: 1, event: 0 }, filler]);
    }

    /// Restrictions: no pinned-to-pinned copy, snapshots only of pinned memory, at least one work op.
    pub fn restrictions() {
        let pinned = shape(2, vec![BufKind::Pinned, BufKind::Pinned]);
        let filler = vec![Op::Fill { stream: 0, buf: 0, value: 1 }];
        let copy = [Intent::Work { stream: 0, work: Work::Copy { dst: 0, src: 1 }, sync_event: 0 }];
        assert_eq!(build(&pinned, &copy, Flavor::Capturable).ops, filler);
        let memset = [Intent::Work { stream: 0, work: Work::Memset { buf: 1, byte: 1 }, sync_event: 0 }];
        assert_eq!(build(&pinned, &memset, Flavor::Capturable).ops, vec![Op::Memset { stream: 0, buf: 1, byte: 1 }]);
        let mixed = shape(2, vec![BufKind::Pinned, BufKind::Device]);
        let snap = [Intent::Work { stream: 0, work: Work::HostFunc { snapshot: Some(1) }, sync_event: 0 }];
        assert_eq!(build(&mixed, &snap, Flavor::Capturable).ops, vec![Op::HostFunc { stream: 0, snapshot: None }]);
    }

    /// Minimizing drops what the failure does not need and renumbers what is left.
    pub fn minimize_and_compact() {
        let p = Program {
            streams: vec![false, true, false, true],
            events: 3,
            buffers: vec![BufKind::Device, BufKind::Pinned, BufKind::Device],
            buffer_bytes: 64,
            update: None,
            placement: Default::default(),
            ops: vec![
                Op::Fill { stream: 2, buf: 2, value: 1 },
                Op::Record { stream: 1, event: 0 },
                Op::Record { stream: 2, event: 2 },
                Op::Wait { stream: 3, event: 2 },
                Op::Transform { stream: 3, buf: 2, mul: 3, add: 1 },
                Op::Fill { stream: 1, buf: 0, value: 7 },
            ],
        };
        assert_eq!(p.check_well_formed(Flavor::Capturable), Ok(()));
        // "Fails" while some transform runs after a fill of its buffer on another stream.
        let fails = |p: &Program| {
            p.ops.iter().enumerate().any(|(i, t)| {
                matches!(t, Op::Transform { .. })
                    && p.ops[..i]
                        .iter()
                        .any(|f| matches!(f, Op::Fill { .. }) && conflict(f, t) && f.stream() != t.stream())
            })
        };
        let m = minimize(p, Flavor::Capturable, fails);
        assert_eq!(
            m,
            Program {
                streams: vec![false, false, true],
                events: 1,
                buffers: vec![BufKind::Device],
                buffer_bytes: 64,
                update: None,
                placement: Default::default(),
                ops: vec![
                    Op::Fill { stream: 1, buf: 0, value: 1 },
                    Op::Record { stream: 1, event: 0 },
                    Op::Wait { stream: 2, event: 0 },
                    Op::Transform { stream: 2, buf: 0, mul: 3, add: 1 },
                ],
            }
        );
    }

    /// Over two devices a kernel gets a buffer of its stream's device, the event an ordering inserts is one of the
    /// recording stream's device, and a peer copy is between device buffers.
    pub fn two_device_rules() {
        let shape = Shape {
            non_blocking: vec![false, false],
            buffers: vec![BufKind::Device, BufKind::Device],
            events: 2,
            buffer_bytes: 64,
            placement: Placement { streams: vec![0, 1], events: vec![0, 1], buffers: vec![0, 1] },
        };
        let intents = vec![
            Intent::Work { stream: 1, work: Work::Fill { buf: 0, value: 1 }, sync_event: 0 },
            Intent::Work { stream: 0, work: Work::Copy { dst: 0, src: 1 }, sync_event: 0 },
            Intent::Work { stream: 0, work: Work::PeerCopy { dst: 1, src: 0 }, sync_event: 0 },
            Intent::Record { stream: 0, event: 1 },
        ];
        let p = build(&shape, &intents, Flavor::EagerOnly);
        assert_eq!(
            p.ops,
            vec![
                Op::Fill { stream: 1, buf: 1, value: 1 },
                Op::Record { stream: 1, event: 1 },
                Op::Wait { stream: 0, event: 1 },
                Op::Copy { stream: 0, dst: 0, src: 1 },
                Op::PeerCopy { stream: 0, dst: 1, src: 0 },
                Op::Record { stream: 0, event: 0 },
            ]
        );
        assert_eq!(p.check_well_formed(Flavor::EagerOnly), Ok(()));
        let captured = build(&shape, &intents, Flavor::Capturable);
        assert!(!captured.ops.iter().any(|o| matches!(o, Op::PeerCopy { .. })), "{:?}", captured.ops);
        assert_eq!(captured.check_well_formed(Flavor::Capturable), Ok(()));
        let mut wrong = p.clone();
        wrong.ops[0] = Op::Fill { stream: 1, buf: 0, value: 1 };
        assert!(wrong.check_well_formed(Flavor::EagerOnly).is_err_and(|e| e.contains("touches b0 of device 0")));
    }

    /// Transform multipliers are odd, not 1, and distinct within a program.
    pub fn distinct_odd_multipliers() {
        let t = |mul| Intent::Work { stream: 0, work: Work::Transform { buf: 0, mul, add: 1 }, sync_event: 0 };
        let p = build(&shape(2, vec![BufKind::Device]), &[t(1), t(3), t(3), t(4)], Flavor::Capturable);
        let muls: Vec<u32> =
            p.ops.iter().filter_map(|o| if let Op::Transform { mul, .. } = o { Some(*mul) } else { None }).collect();
        assert_eq!(muls, vec![3, 5, 7, 9]);
    }
}
