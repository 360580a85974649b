//! The CPU interpreter: what every buffer must hold after a program runs, computed without CUDA and without the
//! happens-before model.
//!
//! It applies the work ops one after another in issue order and ignores records and waits. That is the right
//! answer because (1) issue order is a valid execution order of any stream program (a wait can only refer to a
//! record issued before it) and (2) generated programs are race-free: every two ops that touch a buffer, one of
//! them writing, are ordered, so every valid execution order gives these same contents.

use crate::program::{Op, Program};
use std::collections::BTreeMap;

/// Expected contents after `reps` back-to-back runs of a program.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Expected {
    /// Words of each buffer, by buffer index.
    pub buffers: Vec<Vec<u32>>,
    /// For each host function with a snapshot (by op index): what it saw in its last run.
    pub snapshots: BTreeMap<usize, Vec<u32>>,
}

pub fn run(program: &Program, reps: u32) -> Expected {
    let mut buffers = vec![vec![0u32; program.words()]; program.buffers.len()];
    let mut snapshots = BTreeMap::new();
    for _ in 0..reps {
        for (i, op) in program.ops.iter().enumerate() {
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
                Op::Copy { dst, src, .. } => {
                    let words = buffers[src].clone();
                    buffers[dst] = words;
                }
                Op::Memset { buf, byte, .. } => buffers[buf].fill(u32::from_ne_bytes([byte; 4])),
                Op::HostFunc { snapshot: Some(buf), .. } => {
                    snapshots.insert(i, buffers[buf].clone());
                }
                Op::HostFunc { snapshot: None, .. } | Op::Record { .. } | Op::Wait { .. } => {}
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
        let e = run(&p, 1);
        assert_eq!(e.buffers[0], vec![7; 4]);
        assert_eq!(e.buffers[1], vec![4, 7, 7, 7]);
        assert_eq!(e.buffers[2], vec![0xabab_abab; 4]);
        assert_eq!(e.snapshots[&5], vec![7; 4]);
        // Twice: the second run starts from the first run's contents.
        let e2 = run(&p, 2);
        assert_eq!(e2.buffers[0], vec![7; 4], "fill resets the transform");
    }

    pub fn repetitions_compose() {
        let p = Program {
            streams: vec![false, false],
            events: 1,
            buffers: vec![BufKind::Device],
            buffer_bytes: 8,
            ops: vec![Op::Transform { stream: 1, buf: 0, mul: 5, add: 3 }],
        };
        assert_eq!(run(&p, 3).buffers[0], vec![((3 * 5) + 3) * 5 + 3; 2]);
    }
}
