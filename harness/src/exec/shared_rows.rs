//! The rows of a sweep that poisons its context, run in one process on one prelude ([`SharedRows`]).
//!
//! Each row of `api/after-fault` is the sweep's prelude (a stream, a buffer, a kernel that traps, the synchronize
//! that returns the sticky error) and then the row's call. Run as cases of their own, every row paid a process and a
//! trap: the synchronize after a trap took 387 ms on an H100, and traps in concurrent processes did not overlap
//! (one shard of the sweep 21.7 s, two 30.4 s: results/2026-11-27_ci-and-sanitizers_h100). A sticky error is, by
//! the documentation's own sentence, permanent for the process ("any further CUDA work will return the same
//! error"), so the rows after the first run only their own operations on the first row's objects, in the faulted
//! context it left: one trap for the sweep. What a row records for the prelude is the first row's record of it.

use super::clock::CaseClock;
use super::{start_run, BufferReads, Held};
use crate::case::ast::{Case, Decl, Op};
use crate::device::gpu::DeviceInfo;
use crate::device::kernels::KernelTable;
use crate::exec::ExecOptions;
use crate::record::observations::{DeclRecord, Observations, OpRecord};

/// The label of a sweep row's call (`case::sweep`): the operations before it are the sweep's prelude.
const ROW_LABEL: &str = "row";

/// Where a sweep row's own operations begin: the index of its call, labelled `row`. `None` for a case that is no
/// sweep row.
pub fn row_index(case: &Case) -> Option<usize> {
    case.script.iter().position(|op| op.label.as_deref() == Some(ROW_LABEL))
}

/// The objects and the prelude of a sweep's first row, kept so that the next rows of the same prelude run on them.
pub struct SharedRows {
    held: Held,
    /// The first row's declarations and prelude, which a later row must repeat exactly to share them.
    decls: Vec<Decl>,
    prelude: Vec<Op>,
    /// What the first row recorded of them.
    decl_records: Vec<DeclRecord>,
    prelude_records: Vec<OpRecord>,
    first_id: String,
}

impl SharedRows {
    /// Runs `case`, a sweep row, from nothing as [`super::run_case`] does, and keeps its objects for the next rows
    /// instead of releasing them. A case with `process` declarations (peers) or `samples:` is run and released as
    /// usual (`None`): its objects are not only its own.
    pub fn first(
        case: &Case,
        kernels: &KernelTable,
        device: &DeviceInfo,
        opts: &ExecOptions,
    ) -> (Observations, Option<SharedRows>) {
        let (mut obs, held, clock) = start_run(case, kernels, device, opts, BufferReads::All);
        let shareable = case.samples <= 1 && !case.decls.iter().any(|d| matches!(d, Decl::Process { .. }));
        let Some(k) = row_index(case).filter(|_| shareable) else {
            return (held.release_into(obs, clock), None);
        };
        obs.wall_ns = clock.now_ns();
        let kept = SharedRows {
            held,
            decls: case.decls.clone(),
            prelude: case.script[..k].to_vec(),
            decl_records: obs.decls.clone(),
            prelude_records: obs.ops.iter().filter(|r| r.index < k).cloned().collect(),
            first_id: case.id.clone(),
        };
        (obs, Some(kept))
    }

    /// Whether `case` is a row of the same prelude: the same declarations and the same operations before its call.
    pub fn fits(&self, case: &Case) -> bool {
        row_index(case) == Some(self.prelude.len())
            && case.decls == self.decls
            && case.script[..self.prelude.len()] == self.prelude[..]
    }

    /// Runs the operations of `case` from its call on (it [`SharedRows::fits`]), on the kept objects: the prelude's
    /// records are the first row's, the rest this run's, on a clock of its own.
    pub fn run_row(
        &mut self,
        case: &Case,
        kernels: &KernelTable,
        device: &DeviceInfo,
        opts: &ExecOptions,
    ) -> Observations {
        let clock = CaseClock::start();
        let mut obs = Observations {
            case_id: case.id.clone(),
            decls: self.decl_records.clone(),
            ops: self.prelude_records.clone(),
            devices: self.held.devices.ordinals().to_vec(),
            ..Observations::default()
        };
        obs.notes.push(format!(
            "the declarations and the operations before the row's call are those of {} (the same sweep's row run \
             before this one in the same process, on the same objects): their records are that run's",
            self.first_id
        ));
        // No `process` declarations (see `first`).
        let from = self.prelude.len();
        self.held.run_again(case, from, kernels, device, opts, clock, obs, BufferReads::All)
    }

    /// Releases the kept objects (after the sweep's last row in this process); returns the notes of what failed.
    pub fn release(self) -> Vec<String> {
        let mut obs = Observations::default();
        self.held.release(&mut obs);
        obs.notes
    }
}
