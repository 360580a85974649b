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
//! copies; memsets (of device and pinned memory); host functions, some taking a snapshot of a pinned buffer.
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

use crate::model::{Builder, ModelMode};
use crate::program::{conflict, BufKind, Flavor, Op, Program};
use proptest::prelude::*;

/// Streams, buffers and events of a program.
#[derive(Debug, Clone)]
pub struct Shape {
    pub non_blocking: Vec<bool>,
    pub buffers: Vec<BufKind>,
    pub events: usize,
    pub buffer_bytes: u64,
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
}

#[derive(Debug, Clone)]
pub enum Work {
    Fill { buf: usize, value: u32 },
    Transform { buf: usize, mul: u32, add: u32 },
    Compare { a: usize, b: usize, into: usize },
    Copy { dst: usize, src: usize },
    Memset { buf: usize, byte: u8 },
    HostFunc { snapshot: Option<usize> },
}

const MAX_STREAMS: usize = 6;
const MAX_BUFFERS: usize = 4;
const MAX_EVENTS: usize = 3;
const MAX_INTENTS: usize = 20;

fn index(max: usize) -> impl Strategy<Value = usize> {
    0..max
}

fn shape() -> impl Strategy<Value = Shape> {
    let kind = prop_oneof![Just(BufKind::Device), Just(BufKind::Pinned)];
    (
        proptest::collection::vec(any::<bool>(), 2..=MAX_STREAMS),
        proptest::collection::vec(kind, 1..=MAX_BUFFERS),
        1..=MAX_EVENTS,
        prop_oneof![Just(1024u64), Just(4096), Just(16384)],
    )
        .prop_map(|(non_blocking, buffers, events, buffer_bytes)| Shape {
            non_blocking,
            buffers,
            events,
            buffer_bytes,
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
        1 => proptest::option::of(b()).prop_map(|snapshot| Work::HostFunc { snapshot }),
    ]
}

/// Nearly always `Some`, shrinking to `None`.
fn some<S: Strategy>(s: S) -> impl Strategy<Value = Option<S::Value>> {
    proptest::option::weighted(0.95, s)
}

fn intent() -> impl Strategy<Value = Intent> {
    let s = || index(MAX_STREAMS);
    let e = || index(MAX_EVENTS);
    prop_oneof![
        8 => (s(), work(), e()).prop_map(|(stream, work, sync_event)| Intent::Work { stream, work, sync_event }),
        2 => (s(), e()).prop_map(|(stream, event)| Intent::Record { stream, event }),
        2 => (s(), e()).prop_map(|(stream, event)| Intent::Wait { stream, event }),
        2 => (e(), s(), some(s()), some(work()), some(s())).prop_map(|(event, recorder, first, between, second)| {
            Intent::ReRecord { event, recorder, first, between, second }
        }),
    ]
}

/// Well-formed programs of the given flavor.
pub fn programs(flavor: Flavor) -> impl Strategy<Value = Program> {
    (shape(), proptest::collection::vec(intent(), 1..=MAX_INTENTS))
        .prop_map(move |(shape, intents)| build(&shape, &intents, flavor))
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
        },
        model: Builder::new(shape.non_blocking.len(), shape.events, ModelMode::Faithful),
        flavor,
        multipliers: Vec::new(),
    };
    for intent in intents {
        match intent {
            Intent::Work { stream, work, sync_event } => b.work(*stream, work, *sync_event),
            Intent::Record { stream, event } => b.record(*stream, *event),
            Intent::Wait { stream, event } => b.wait(*stream, *event),
            Intent::ReRecord { event, recorder, first, between, second } => {
                b.record(*recorder, *event);
                if let Some(first) = first {
                    b.wait(*first, *event);
                }
                if let Some(between) = between {
                    b.work(*recorder, between, *event);
                }
                b.record(*recorder, *event);
                if let Some(second) = second {
                    b.wait(*second, *event);
                }
            }
        }
    }
    // An empty capture makes an empty graph, a corner of its own that no property here is about.
    if b.program.work_ops().next().is_none() {
        b.push(Op::Fill { stream: 0, buf: 0, value: 1 });
    }
    b.program
}

/// Program-level shrinking, after proptest's: removes single ops, then streams, buffers and events no op uses,
/// as long as the program stays well-formed and `fails` still holds. Proptest shrinks intents, and an intent that
/// expands into several ops (a re-record pattern, or an ordering `build` inserted) cannot lose part of itself
/// there; here it can. The result is 1-minimal: no single op can be removed.
pub fn minimize(mut program: Program, flavor: Flavor, fails: impl Fn(&Program) -> bool) -> Program {
    let accept = |c: &Program| c.check_well_formed(flavor).is_ok() && fails(c);
    loop {
        let mut changed = false;
        for i in (0..program.ops.len()).rev() {
            let mut candidate = program.clone();
            candidate.ops.remove(i);
            if accept(&candidate) {
                program = candidate;
                changed = true;
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
    let streams = keep(p.streams.len(), |s| s == 0 || p.ops.iter().any(|o| o.stream() == s), 2);
    let buffers = keep(p.buffers.len(), |b| p.ops.iter().any(|o| o.accesses().iter().any(|a| a.buf == b)), 1);
    let event_of = |o: &Op| match *o {
        Op::Record { event, .. } | Op::Wait { event, .. } => Some(event),
        _ => None,
    };
    let events = keep(p.events, |e| p.ops.iter().any(|o| event_of(o) == Some(e)), 1);
    let at = |kept: &[usize], i: usize| kept.iter().position(|&k| k == i).unwrap_or(0);
    let (s, b, e) = (|i| at(&streams, i), |i| at(&buffers, i), |i| at(&events, i));
    let ops = p
        .ops
        .iter()
        .map(|o| match *o {
            Op::Fill { stream, buf, value } => Op::Fill { stream: s(stream), buf: b(buf), value },
            Op::Transform { stream, buf, mul, add } => Op::Transform { stream: s(stream), buf: b(buf), mul, add },
            Op::Compare { stream, a, b: bb, into } => {
                Op::Compare { stream: s(stream), a: b(a), b: b(bb), into: b(into) }
            }
            Op::Copy { stream, dst, src } => Op::Copy { stream: s(stream), dst: b(dst), src: b(src) },
            Op::Memset { stream, buf, byte } => Op::Memset { stream: s(stream), buf: b(buf), byte },
            Op::HostFunc { stream, snapshot } => Op::HostFunc { stream: s(stream), snapshot: snapshot.map(b) },
            Op::Record { stream, event } => Op::Record { stream: s(stream), event: e(event) },
            Op::Wait { stream, event } => Op::Wait { stream: s(stream), event: e(event) },
        })
        .collect();
    Program {
        streams: streams.iter().map(|&i| p.streams[i]).collect(),
        events: events.len(),
        buffers: buffers.iter().map(|&i| p.buffers[i]).collect(),
        buffer_bytes: p.buffer_bytes,
        ops,
    }
}

struct ProgramBuilder {
    program: Program,
    /// The faithful model of the ops pushed so far: tells which earlier ops are already ordered.
    model: Builder,
    flavor: Flavor,
    /// Transform multipliers used so far (kept distinct so that swapped transforms give different values).
    multipliers: Vec<u32>,
}

impl ProgramBuilder {
    fn push(&mut self, op: Op) {
        self.model.push(&op);
        self.program.ops.push(op);
    }

    fn stream(&self, s: usize) -> usize {
        s % self.program.streams.len()
    }

    fn record(&mut self, stream: usize, event: usize) {
        let (stream, event) = (self.stream(stream), event % self.program.events);
        self.push(Op::Record { stream, event });
    }

    fn wait(&mut self, stream: usize, event: usize) {
        let (stream, event) = (self.stream(stream), event % self.program.events);
        if self.flavor == Flavor::Capturable && !self.model.is_recorded(event) {
            return;
        }
        self.push(Op::Wait { stream, event });
    }

    fn work(&mut self, stream: usize, work: &Work, sync_event: usize) {
        let stream = self.stream(stream);
        let Some(op) = self.concretize(stream, work) else { return };
        // Order this op after every earlier op it conflicts with. Recording on the earlier op's stream *now*
        // captures everything issued there so far, the earlier op included.
        let event = sync_event % self.program.events;
        for earlier in 0..self.program.ops.len() {
            let prior = self.program.ops[earlier];
            if prior.is_work() && conflict(&prior, &op) && !self.model.ordered_before_next(earlier, stream) {
                self.push(Op::Record { stream: prior.stream(), event });
                self.push(Op::Wait { stream, event });
            }
        }
        self.push(op);
    }

    /// The op an intent asks for, adjusted to the shape and the restrictions; `None` if the shape cannot have it.
    fn concretize(&mut self, stream: usize, work: &Work) -> Option<Op> {
        let kinds = &self.program.buffers;
        let n = kinds.len();
        let other = |b: usize, not: usize| if b % n == not { (not + 1) % n } else { b % n };
        Some(match *work {
            Work::Fill { buf, value } => Op::Fill { stream, buf: buf % n, value },
            Work::Transform { buf, mul, add } => {
                let mut mul = mul | 1;
                while mul == 1 || self.multipliers.contains(&mul) {
                    mul = mul.wrapping_add(2);
                }
                self.multipliers.push(mul);
                Op::Transform { stream, buf: buf % n, mul, add }
            }
            Work::Compare { a, b, into } if n >= 2 => {
                let into = into % n;
                Op::Compare { stream, a: other(a, into), b: other(b, into), into }
            }
            Work::Copy { dst, src } if n >= 2 => {
                let src = src % n;
                let dst = other(dst, src);
                if kinds[src] == BufKind::Pinned && kinds[dst] == BufKind::Pinned {
                    return None;
                }
                Op::Copy { stream, dst, src }
            }
            Work::Memset { buf, byte } => Op::Memset { stream, buf: buf % n, byte },
            Work::HostFunc { snapshot } => {
                let snapshot = snapshot.map(|b| b % n).filter(|&b| kinds[b] == BufKind::Pinned);
                Op::HostFunc { stream, snapshot }
            }
            Work::Compare { .. } | Work::Copy { .. } => return None,
        })
    }
}

pub mod tests {
    use super::*;

    fn shape(streams: usize, buffers: Vec<BufKind>) -> Shape {
        Shape { non_blocking: vec![false; streams], buffers, events: 1, buffer_bytes: 64 }
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
                ops: vec![
                    Op::Fill { stream: 1, buf: 0, value: 1 },
                    Op::Record { stream: 1, event: 0 },
                    Op::Wait { stream: 2, event: 0 },
                    Op::Transform { stream: 2, buf: 0, mul: 3, add: 1 },
                ],
            }
        );
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
