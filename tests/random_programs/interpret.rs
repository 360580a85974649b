//! The CPU interpreter: what every buffer must hold after a program runs, computed without CUDA and without the
//! happens-before model.
//!
//! It applies the work ops one after another in issue order and ignores records and waits. That is the right
//! answer because (1) issue order is a valid execution order of any stream program (a wait can only refer to a
//! record issued before it) and (2) generated programs are race-free: every two ops that touch a buffer, one of
//! them writing, are ordered, so every valid execution order gives these same contents.
//!
//! A program with an update runs its body as captured the first time and, after that, the body the update model
//! (`model::after_update`) says the later launches run. An async buffer's words are undefined after its
//! allocation (generated programs write them whole before reading them), so any value does.

use crate::model::{after_update, ModelMode};
use crate::program::{Op, Program};
use harness::case::ast::INITIAL_WORD;
use std::collections::BTreeMap;

/// Expected contents after `reps` back-to-back runs of a program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expected {
    /// Words of each buffer, by buffer index (those of async buffers mean nothing: they are freed).
    pub buffers: Vec<Vec<u32>>,
    /// For each host function with a snapshot (by op index): what it saw in each run.
    pub snapshots: BTreeMap<usize, Vec<Vec<u32>>>,
}

/// What an allocation leaves in an async buffer, here: anything would do.
const UNDEFINED: u32 = 0xbaad_f00d;

pub fn run(program: &Program, reps: u32, mode: ModelMode) -> Expected {
    // Declared buffers start with the harness's pattern (async ones are overwritten by UNDEFINED when allocated).
    let mut buffers = vec![vec![INITIAL_WORD; program.words()]; program.buffers.len()];
    let mut snapshots: BTreeMap<usize, Vec<Vec<u32>>> = BTreeMap::new();
    let later = after_update(program, mode).ops;
    for rep in 0..reps {
        let body = if rep == 0 { &program.ops } else { &later };
        for (i, op) in body.iter().enumerate() {
            match *op {
                Op::Fill { buf, value, .. } => buffers[buf].fill(value),
                Op::Transform { buf, mul, add, .. } => {
                    for x in &mut buffers[buf] {
                        *x = x.wrapping_mul(mul).wrapping_add(add);
                    }
                }
                Op::Compare { a, b, into, .. } => {
                    let differ = buffers[a].iter().zip(&buffers[b]).filter(|(x, y)| x != y).count();
                    if let Some(first) = buffers[into].first_mut() {
                        *first = differ as u32;
                    }
                }
                Op::Copy { dst, src, .. }
                | Op::PeerCopy { dst, src, .. }
                | Op::BatchCopy { dst, src, .. }
                | Op::Copy2D { dst, src, .. }
                | Op::ToSymbol { sym: dst, src, .. }
                | Op::FromSymbol { dst, sym: src, .. } => {
                    let words = buffers[src].clone();
                    buffers[dst] = words;
                }
                Op::Memset { buf, byte, .. } => buffers[buf].fill(u32::from_ne_bytes([byte; 4])),
                Op::HostFunc { snapshot: Some(buf), .. } => {
                    snapshots.entry(i).or_default().push(buffers[buf].clone());
                }
                Op::Alloc { buf, .. } => buffers[buf].fill(UNDEFINED),
                Op::HostFunc { snapshot: None, .. } | Op::Record { .. } | Op::Wait { .. } | Op::Free { .. } => {}
            }
        }
    }
    Expected { buffers, snapshots }
}

pub mod tests {
    use super::*;
    use crate::program::BufKind;

    pub fn data_ops() {
        let p = Program {
            streams: vec![false, true],
            events: 1,
            buffers: vec![BufKind::Device, BufKind::Pinned, BufKind::Device],
            buffer_bytes: 16,
            update: None,
            placement: Default::default(),
            ops: vec![
                Op::Fill { stream: 0, buf: 0, value: 2 },
                Op::Transform { stream: 0, buf: 0, mul: 3, add: 1 }, // 7
                Op::Record { stream: 0, event: 0 },
                Op::Wait { stream: 1, event: 0 },
                Op::Copy { stream: 1, dst: 1, src: 0 },
                Op::HostFunc { stream: 1, snapshot: Some(1) },
                Op::Memset { stream: 0, buf: 2, byte: 0xab },
                Op::Compare { stream: 0, a: 0, b: 2, into: 1 },
            ],
        };
        let e = run(&p, 1, ModelMode::Faithful);
        assert_eq!(e.buffers[0], vec![7; 4]);
        assert_eq!(e.buffers[1], vec![4, 7, 7, 7]);
        assert_eq!(e.buffers[2], vec![0xabab_abab; 4]);
        assert_eq!(e.snapshots[&5], vec![vec![7; 4]]);
        // Twice: the second run starts from the first run's contents.
        let e2 = run(&p, 2, ModelMode::Faithful);
        assert_eq!(e2.buffers[0], vec![7; 4], "fill resets the transform");
    }

    pub fn repetitions_compose() {
        let p = Program {
            streams: vec![false, false],
            events: 1,
            buffers: vec![BufKind::Device],
            buffer_bytes: 8,
            ops: vec![Op::Transform { stream: 1, buf: 0, mul: 5, add: 3 }],
            update: None,
            placement: Default::default(),
        };
        // Three transforms of the harness's initial pattern (the buffer is never filled).
        let expected = (0..3).fold(INITIAL_WORD, |x, _| x.wrapping_mul(5).wrapping_add(3));
        assert_eq!(run(&p, 3, ModelMode::Faithful).buffers[0], vec![expected; 2]);
    }

    /// Runs after the first use the updated body: an exec edit, then a whole update from the template (which
    /// holds a function change and undoes the exec edit), or a forbidden one (which changes nothing).
    pub fn updates() {
        use crate::program::{Edit, Update};
        let fill = |value| Op::Fill { stream: 0, buf: 0, value };
        let mut p = Program {
            streams: vec![false, false],
            events: 1,
            buffers: vec![BufKind::Device],
            buffer_bytes: 8,
            ops: vec![fill(1), Op::Transform { stream: 0, buf: 0, mul: 3, add: 1 }],
            update: Some(Update {
                edits: vec![Edit { op: 0, to: fill(2), exec: true }, Edit { op: 1, to: fill(9), exec: false }],
                whole: None,
                add_node: false,
            }),
            placement: Default::default(),
        };
        let last = |p: &Program, mode| run(p, 2, mode).buffers[0][0];
        let set = |p: &mut Program, whole, add_node| {
            if let Some(u) = p.update.as_mut() {
                (u.whole, u.add_node) = (whole, add_node);
            }
        };
        assert_eq!(last(&p, ModelMode::Faithful), 7, "exec edit only: fill 2, transform");
        assert_eq!(last(&p, ModelMode::IgnoreUpdates), 4);
        set(&mut p, Some(2), false);
        assert_eq!(last(&p, ModelMode::Faithful), 9, "the whole update: fill 1, fill 9");
        set(&mut p, Some(0), false);
        assert_eq!(last(&p, ModelMode::Faithful), 7, "an update before the edits changes nothing");
        set(&mut p, Some(2), true);
        assert_eq!(last(&p, ModelMode::Faithful), 7, "rejected: the exec edit stays");
        assert_eq!(last(&p, ModelMode::ForbiddenUpdateSucceeds), 9);
        assert_eq!(after_update(&p, ModelMode::Faithful).result, Some("topology-changed"));
    }
}
