//! The executor: runs one parsed case through cuda-sys on a real GPU and records what happened, as
//! [`Observations`]. It never judges (that is [`crate::readings`]) and never panics on a CUDA failure: every code is
//! recorded, and an operation whose objects do not exist is recorded as not run.
//!
//! A run, in order:
//! 1. Create every declared object (streams, events, buffers filled with the
//!    `INITIAL_BYTE` pattern, closed gates), a stamp slot per kernel
//!    launch; load the probe kernels; synchronize the device; clear the last error.
//! 2. Start the case threads and the gate keeper (scheduled opens and the watchdog, which opens every gate at the
//!    case deadline whatever the GPU does). Run the script in order, each operation on its thread, the script's
//!    thread waiting for each.
//! 3. Open every gate; stop the keeper; end captures the script left open and restore capture modes; stop the
//!    threads.
//! 4. Synchronize the device (its code is recorded: a sticky error shows here), read stamps, gates, host calls and
//!    buffers, then release everything in reverse order, noting any release that failed, and give the devices'
//!    graph memory back (trimmed, high-water marks reset), so the next case in this process starts as in its own.
//!
//! Under `samples: N` ([`Kept`]), a case whose script leaves nothing behind but buffer contents runs its other
//! samples on the objects of its first run, and step 4's release waits for the last of them: before each sample,
//! step 1's buffers get their initial contents back on the device ([`samples`]), then steps 2 to 4 run as above.
//!
//! A case with `process NAME` declarations also has peers ([`peer`]): started before its objects are created,
//! sent each `@NAME` operation with the IPC handles this process holds, and finished (gates opened, device
//! synchronized, mappings closed) after step 3's gates open and before anything of this process is released.
//!
//! Gates come first in every cleanup path (cudaFree waits for all work on the device), including the unwinding one:
//! [`Resources`] opens them when dropped, before anything is freed.

mod buffers;
mod capture;
mod clock;
mod devices;
mod gates;
mod graph_api;
mod handles;
mod harness_memory;
mod host_calls;
mod interpret;
/// A generic call with no case around it: the `no-driver` sweep on a host without a driver (tests/no_driver.rs).
pub use interpret::call_bare;
pub use shared_rows::{row_index, SharedRows};

/// Runs a case that declares nothing and only `call`s, in a process that sees no device (`env:
/// CUDA_VISIBLE_DEVICES=-1`: the `no-device` sweep): each call through [`call_bare`] (which may name the probe
/// kernels of `kernels`, registered without a device as in the reproducer), its code and host times recorded as any
/// operation's. An operation that is not such a call is recorded as not run, with the reason.
pub fn run_bare(case: &Case, kernels: &KernelTable) -> Observations {
    let clock = CaseClock::start();
    let mut ops = Vec::new();
    for (index, op) in case.script.iter().enumerate() {
        let mut record = interpret::new_record(case, index);
        match &op.kind {
            OpKind::Call(call) if case.decls.is_empty() => {
                record.start_ns = clock.now_ns();
                match call_bare(call, kernels) {
                    Ok((code, values)) => {
                        record.code = Some(code.to_string());
                        if !values.is_empty() {
                            record.value = Some(crate::record::observations::OpValue::Outputs(values));
                        }
                    }
                    Err(why) => record.not_run = Some(why),
                }
                record.end_ns = clock.now_ns();
            }
            _ => record.not_run = Some("no device is visible: only calls with no declared objects can run".into()),
        }
        ops.push(record);
    }
    // No final synchronize: with no device visible there is nothing to synchronize and the call could only fail.
    // The reproducer skips it alike (`repro::decls`), so the two executors record the same.
    Observations { case_id: case.id.clone(), ops, final_sync: None, ..Observations::default() }
}
mod objects;
// The second process of a case
pub mod peer;
pub mod phases;
mod pinned_cache;
mod pools;
mod probe_callbacks;
mod resources;
mod samples;
mod shared_rows;
mod stamps;
mod sys_words;
mod teardown;
#[cfg(test)]
pub(crate) mod test_support;
#[cfg(test)]
mod tests;
mod threads;
mod timing;

use crate::case::ast::{Case, Decl, OpKind};
use crate::case::words::Word;
use crate::device::gpu::DeviceInfo;
use crate::device::kernels::KernelTable;
use crate::record::observations::{DeclRecord, GateOpener, Observations};
use clock::CaseClock;
use cuda_sys as sys;
use devices::CaseDevices;
use gates::{GateKeeper, GateSet};
use host_calls::HostLog;
use objects::Objects;
use stamps::StampPool;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;
use threads::CaseThreads;

/// How the executor runs a case.
#[derive(Debug, Clone)]
pub struct ExecOptions {
    /// The gate kernel gives up after this long (and records that it timed out), so a lost open cannot hang the
    /// GPU.
    pub gate_timeout_ns: u64,
    /// The watchdog opens every gate this long after the case started, whatever the script is doing.
    pub case_deadline: Duration,
    /// `open G after D` opens after D times this (1: as written). The runner shortens the written delays, and runs
    /// a case again at 1 when a short delay may have decided its verdict (see [`crate::runner`]).
    pub gate_delay_scale: f64,
}

impl Default for ExecOptions {
    fn default() -> Self {
        ExecOptions { gate_timeout_ns: 10_000_000_000, case_deadline: Duration::from_secs(20), gate_delay_scale: 1.0 }
    }
}

/// CUDA objects and allocations the executor holds right now, in this process (streams, events, graphs, device and
/// pinned memory): zero between cases, or a case left something behind.
pub fn live_objects() -> usize {
    resources::live_objects()
}

/// The GPU-side objects of a run. Dropping it opens every gate before anything is freed, so even an unwinding
/// executor cannot block in cudaFree behind a closed gate. Fields drop in order: gate memory last.
struct Resources {
    state: Mutex<Objects>,
    stamps: StampPool,
    gates: GateSet,
}

impl Drop for Resources {
    fn drop(&mut self) {
        self.gates.open_all(GateOpener::Cleanup);
    }
}

/// Runs `case` on the current device and returns everything it observed. Requirements are not checked here (see
/// [`crate::device::requirements::unmet_requirement`]).
pub fn run_case(case: &Case, kernels: &KernelTable, device: &DeviceInfo, opts: &ExecOptions) -> Observations {
    let (obs, held, clock) = start_run(case, kernels, device, opts, BufferReads::All);
    held.release_into(obs, clock)
}

/// One more run of `case` for its figures (`samples: N`) when it cannot run on the objects of its first run (see
/// [`Kept`]): as [`run_case`], except that only the buffers an expectation names are read back, since the run's
/// buffers serve only to judge it (the verdict reads no other buffer, and no measure reads any).
pub fn run_sample(case: &Case, kernels: &KernelTable, device: &DeviceInfo, opts: &ExecOptions) -> Observations {
    let (obs, held, clock) = start_run(case, kernels, device, opts, BufferReads::Named);
    held.release_into(obs, clock)
}

/// Which buffers a run reads back after its script.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BufferReads {
    /// Every declared buffer, and the slices an expectation names: the run whose observations are the case's.
    All,
    /// Only those an expectation names: a sample's (see [`run_sample`]).
    Named,
}

/// The case's objects after a run, until they are released: released at once ([`run_case`]), or after the case's
/// other samples ran on them ([`Kept`]).
struct Held {
    devices: CaseDevices,
    resources: Resources,
    /// The final synchronize succeeded (else host memory a late host function might touch is leaked, not freed).
    healthy: bool,
    ordinal: i32,
}

impl Held {
    /// Runs the script of `case` again from operation `from` on these objects (a sample of [`Kept`], a row of
    /// [`SharedRows`]), into `obs`, which the caller made with what the run carries over, on `clock`: the run's own.
    /// A case whose objects are kept has no `process` declarations, so no peers start.
    #[allow(clippy::too_many_arguments)]
    fn run_again(
        &mut self,
        case: &Case,
        from: usize,
        kernels: &KernelTable,
        device: &DeviceInfo,
        opts: &ExecOptions,
        clock: CaseClock,
        mut obs: Observations,
        reads: BufferReads,
    ) -> Observations {
        let (mut peers, notes) = peer::Peers::start(case, device, self.devices.ordinals(), opts, clock);
        obs.notes.extend(notes);
        let healthy = run_script(
            case,
            from,
            kernels,
            device,
            opts,
            clock,
            &self.devices,
            &mut peers,
            &self.resources,
            &mut obs,
            reads,
        );
        self.healthy &= healthy;
        obs.wall_ns = clock.now_ns();
        obs
    }

    /// Releases everything (see [`Held::release`]) into the run's observations `obs` and stamps its wall time on
    /// `clock`: the end of a run whose objects are not kept.
    fn release_into(self, mut obs: Observations, clock: CaseClock) -> Observations {
        self.release(&mut obs);
        obs.wall_ns = clock.now_ns();
        obs
    }

    /// Releases everything in reverse order, noting any release that failed, and leaves the thread ready for the
    /// next case.
    fn release(mut self, obs: &mut Observations) {
        {
            let mut st = self.resources.state.lock().unwrap_or_else(PoisonError::into_inner);
            obs.notes.extend(st.release(!self.healthy));
        }
        // A healthy case's stamps and gate words are kept for the next case (`harness_memory`).
        if let Some(code) = self.resources.stamps.release(self.healthy) {
            obs.notes.push(format!("cleanup: releasing the stamp pool returned {}", code));
        }
        for (gate, code) in self.resources.gates.release(self.healthy) {
            obs.notes.push(format!("cleanup: releasing gate {gate} returned {}", code));
        }
        phases::mark("release");
        // The next case on these devices starts with no graph memory reserved, as in a process of its own.
        if self.healthy {
            obs.notes.extend(teardown::reset_graph_memory(&self.devices));
        }
        phases::mark("graph-memory");
        // The next case on this thread must not see this case's last error, nor a device the script made current.
        if !self.devices.is_single() {
            obs.notes.extend(prepare_host_thread(self.ordinal));
        }
        // SAFETY: no arguments.
        let _ = unsafe { sys::cudaGetLastError() };
    }
}

/// A run of `case` from nothing: its objects are created, the script runs, what it observed is read back (the
/// buffers `reads` says); what it created is still held, to release.
fn start_run(
    case: &Case,
    kernels: &KernelTable,
    device: &DeviceInfo,
    opts: &ExecOptions,
    reads: BufferReads,
) -> (Observations, Held, CaseClock) {
    let clock = CaseClock::start();
    let mut obs = Observations { case_id: case.id.clone(), ..Observations::default() };
    let (devices, note) = CaseDevices::of(case, device);
    obs.notes.extend(note);
    obs.devices = devices.ordinals().to_vec();
    obs.notes.extend(prepare_host_thread(device.ordinal));
    for &ordinal in devices.ordinals() {
        obs.notes.extend(devices.on(ordinal, || load_kernels(kernels)));
    }
    phases::mark("load-kernels");

    // The case's other processes start first, so their contexts are made while ours is.
    let (mut peers, notes) = peer::Peers::start(case, device, devices.ordinals(), opts, clock);
    obs.notes.extend(notes);
    phases::mark("peers");
    let (state, gates, decls) = objects::create(case, device, &devices, clock);
    obs.decls = decls;
    phases::mark("objects");
    let (stamps, note) = StampPool::create(case, !devices.is_single());
    obs.notes.extend(note);
    phases::mark("stamps");
    let resources = Resources { state: Mutex::new(state), stamps, gates };
    let healthy = run_script(case, 0, kernels, device, opts, clock, &devices, &mut peers, &resources, &mut obs, reads);
    (obs, Held { devices, resources, healthy, ordinal: device.ordinal }, clock)
}

/// Runs the script of `case` once on `resources` (created, or restored to their initial state) and reads back what
/// it observed into `obs`: event timing, the script on its threads, the end of captures, the final synchronize,
/// stamps, gates, host calls, buffers and graphs. Releases nothing of `resources`. Returns whether the final
/// synchronize succeeded. The script runs from operation `from` (0: all of it; a sweep row that shares its
/// prelude with an earlier row runs only its own operations, [`SharedRows`]).
#[allow(clippy::too_many_arguments)]
fn run_script(
    case: &Case,
    from: usize,
    kernels: &KernelTable,
    device: &DeviceInfo,
    opts: &ExecOptions,
    clock: CaseClock,
    devices: &CaseDevices,
    peers: &mut peer::Peers,
    resources: &Resources,
    obs: &mut Observations,
    reads: BufferReads,
) -> bool {
    let (timing, notes) = timing::EventTiming::create(case);
    obs.notes.extend(notes);
    // Buffers (the pattern) and stamps (zero) were written with cudaMemset on the legacy streams: finish that
    // before the script, so no case's first operation can see that work.
    let (code, _) = devices.synchronize_all();
    if code != sys::cudaError::cudaSuccess {
        obs.notes.push(format!("the cudaDeviceSynchronize before the script returned {}", code));
    }
    obs.notes.extend(prepare_host_thread(device.ordinal));
    phases::mark("sync-before");

    let log = HostLog::new(clock);
    let (keeper, keeper_thread) = gates::gate_keeper();
    let ctx = interpret::Ctx {
        case,
        kernels,
        device,
        devices,
        opts,
        clock,
        gates: &resources.gates,
        stamps: &resources.stamps,
        log: &log,
        state: &resources.state,
        keeper: &keeper,
        timing: &timing,
    };
    let deadline = clock.instant_after_start(opts.case_deadline);
    let thread_names: Vec<&str> =
        case.decls.iter().filter(|d| matches!(d, Decl::Thread { .. })).map(|d| d.name()).collect();

    obs.watchdog_fired_ns = std::thread::scope(|scope| {
        // Stops the keeper however this closure ends; the scope joins it before returning.
        let _stop_keeper = StopKeeper(&keeper);
        let gates = ctx.gates;
        let keeper_handle = scope.spawn(move || keeper_thread.run(gates, deadline));
        let threads = CaseThreads::start(scope, &thread_names);
        obs.notes.extend(threads.start_failures());
        for name in threads.names() {
            match threads.run(Some(name), || prepare_host_thread(device.ordinal)) {
                Ok(notes) => obs.notes.extend(notes),
                Err(why) => obs.notes.push(why),
            }
        }
        obs.notes.extend(ctx.timing.start());
        for index in from..case.script.len() {
            let thread = case.script[index].thread.as_deref();
            let ctx = &ctx;
            let outcome = match thread.filter(|t| peer::Peers::is_process(case, t)) {
                // An operation of another process, with the IPC handles this one holds.
                Some(process) => {
                    let wire = ctx.state.lock().unwrap_or_else(PoisonError::into_inner).handles.to_wire();
                    peers.run(process, index, wire).map(|(record, back)| {
                        ctx.state.lock().unwrap_or_else(PoisonError::into_inner).handles.merge_wire(back);
                        record
                    })
                }
                None => threads.run(thread, move || interpret::run_op(ctx, index)),
            };
            let record = outcome.unwrap_or_else(|why| {
                let mut record = interpret::new_record(case, index);
                record.not_run = Some(why);
                record
            });
            obs.ops.push(record);
        }
        ctx.gates.open_all(GateOpener::Cleanup);
        // Before this process frees anything: a peer closes its mappings of our memory first.
        obs.notes.extend(peers.finish());
        keeper.finish();
        let fired = keeper_handle.join().unwrap_or(None);
        obs.notes.extend(teardown::end_open_captures(&ctx, &threads));
        obs.notes.extend(teardown::restore_capture_modes(&ctx, &threads));
        obs.notes.extend(threads.stop());
        fired
    });
    phases::mark("script");
    if let Some(t) = obs.watchdog_fired_ns {
        obs.notes.push(format!("the watchdog opened every gate at {} ms (the case deadline)", t / 1_000_000));
    }

    // Every gate is open and no case thread runs: this waits only for finite work, on each device of the case.
    let (sync, notes) = devices.synchronize_all();
    obs.notes.extend(notes);
    obs.final_sync = Some(sync.to_string());
    let healthy = sync == sys::cudaError::cudaSuccess;
    if !healthy {
        let (again, _) = devices.synchronize_all();
        obs.notes.push(if again == sync {
            format!(
                "the final cudaDeviceSynchronize returned {}, and so did a second one: the error persists (a sticky \
                 error, or no usable device), so this process cannot run CUDA work any more",
                sync
            )
        } else {
            format!("the final cudaDeviceSynchronize returned {}, a second one {}", sync, again)
        });
        // Every callback CUDA accepted is called, with the error as its status; the failed synchronize did not
        // wait for them.
        let owed: Vec<usize> = obs
            .ops
            .iter()
            .filter(|r| {
                matches!(case.script.get(r.index).map(|op| &op.kind), Some(crate::case::ast::OpKind::Callback { .. }))
            })
            .filter(|r| r.code.as_deref() == Some("cudaSuccess"))
            .map(|r| r.index)
            .collect();
        obs.notes.extend(log.wait_for(&owed, deadline));
    }
    phases::mark("final-sync");
    let (kernel_records, origin, error) = resources.stamps.read(case);
    (obs.kernels, obs.stamp_origin_ns) = (kernel_records, origin);
    obs.notes.extend(error);
    obs.gates = resources.gates.records();
    obs.host_calls = log.records(case);
    let (timed, notes) = timing.read(case);
    obs.timed = timed;
    obs.notes.extend(notes);
    obs.notes.extend(timing.release());
    let mut st = resources.state.lock().unwrap_or_else(PoisonError::into_inner);
    let (buffers, note) = teardown::read_buffers(case, &st, reads);
    obs.buffers = buffers;
    obs.notes.extend(note);
    teardown::record_graphs(case, &mut st);
    obs.graphs = std::mem::take(&mut st.graph_records);
    obs.notes.append(&mut st.notes);
    phases::mark("readback");
    healthy
}

/// The objects of a case's first run, kept for its other samples (`samples: N`; see [`samples`] for which cases
/// may): each sample restores their initial state and runs the script on them, and they are released once, after
/// the last sample, as the first run would have released them.
pub struct Kept {
    held: Held,
    /// The first run's creation records: a sample's objects are those.
    decls: Vec<DeclRecord>,
    /// Where host-visible buffers are refilled from, made by the first sample that needs it.
    pattern: Option<samples::Pattern>,
    /// The first run's time (on its clock) when it had read everything back, before it would have released.
    first_end_ns: u64,
}

/// How many times `case`'s script runs: its `samples:` (1 without), or once in a process whose device work a tool
/// serialises (compute-sanitizer, Nsight Compute, CUDA_LAUNCH_BLOCKING=1; [`crate::device::serialising::detect`]).
/// The extra samples are for the figures only, which such a tool makes its own; the first run alone decides the
/// verdict. Measured (issue 34): `performance/seed004-launch-cost` (9 samples of about 1,000 kernels each) ran into
/// the 60 s deadline under racecheck, beside other sanitizer runs on the same GPU.
pub fn samples_to_run(case: &Case) -> u32 {
    if crate::device::serialising::detect().is_some() {
        1
    } else {
        case.samples.max(1)
    }
}

/// Runs `case` as [`run_case`] does; when the case has more samples to run and they may run on these objects
/// ([`samples::why_not_shared`]), and the run ended well (no watchdog, a clean final synchronize), keeps its objects
/// for them instead of releasing them: the caller runs the samples with [`Kept::sample`] and then calls
/// [`Kept::release`] with the first run's observations, which then are what [`run_case`] would have returned.
pub fn run_case_keeping(
    case: &Case,
    kernels: &KernelTable,
    device: &DeviceInfo,
    opts: &ExecOptions,
) -> (Observations, Option<Kept>) {
    if samples_to_run(case) <= 1 || samples::why_not_shared(case).is_some() {
        return (run_case(case, kernels, device, opts), None);
    }
    let (obs, held, clock) = start_run(case, kernels, device, opts, BufferReads::All);
    if !held.healthy || obs.watchdog_fired_ns.is_some() {
        return (held.release_into(obs, clock), None);
    }
    let first_end_ns = clock.now_ns();
    let decls = obs.decls.clone();
    (obs, Some(Kept { held, decls, pattern: None, first_end_ns }))
}

impl Kept {
    /// One more sample of `case` on the kept objects: every buffer refilled with its initial contents and every
    /// `later` slot emptied (on the device's legacy stream, finished by the synchronize before the script), a new
    /// stamp pool's worth of zeros, then the script as in the first run, on a clock of its own. Reads back only
    /// the buffers an expectation names (see [`run_sample`]).
    pub fn sample(
        &mut self,
        case: &Case,
        kernels: &KernelTable,
        device: &DeviceInfo,
        opts: &ExecOptions,
    ) -> Observations {
        let clock = CaseClock::start();
        let mut obs = Observations {
            case_id: case.id.clone(),
            decls: self.decls.clone(),
            devices: self.held.devices.ordinals().to_vec(),
            ..Observations::default()
        };
        obs.notes.extend(prepare_host_thread(device.ordinal));
        {
            let mut st = self.held.resources.state.lock().unwrap_or_else(PoisonError::into_inner);
            obs.notes.extend(samples::restore(case, &mut st, &mut self.pattern));
        }
        obs.notes.extend(self.held.resources.stamps.clear());
        // No `process` declarations (see `samples::why_not_shared`).
        self.held.run_again(case, 0, kernels, device, opts, clock, obs, BufferReads::Named)
    }

    /// Releases the kept objects after the last sample, with the notes and time of the release going to the first
    /// run's observations `first`, as if it had released them itself: its `wall_ns` is its own time up to its
    /// reads plus the release's, not the samples'.
    pub fn release(self, first: &mut Observations) {
        let Kept { held, pattern, first_end_ns, .. } = self;
        let started = std::time::Instant::now();
        if let Some(pattern) = pattern {
            let code = pattern.release();
            if code != sys::cudaError::cudaSuccess {
                first.notes.push(format!("cleanup: releasing the samples' pattern buffer returned {}", code));
            }
        }
        held.release(first);
        first.wall_ns = first_end_ns + u64::try_from(started.elapsed().as_nanos()).unwrap_or(u64::MAX);
    }
}

/// Stops the gate keeper when dropped.
struct StopKeeper<'a>(&'a GateKeeper);

impl Drop for StopKeeper<'_> {
    fn drop(&mut self) {
        self.0.finish();
    }
}

/// Makes the case's device current on the calling thread and clears its last error, so `get-last-error` sees only
/// the case's own errors.
fn prepare_host_thread(ordinal: i32) -> Vec<String> {
    let mut notes = Vec::new();
    // SAFETY: plain calls without pointers.
    let code = unsafe { sys::cudaSetDevice(ordinal) };
    if code != sys::cudaError::cudaSuccess {
        notes.push(format!("cudaSetDevice({ordinal}) returned {}", code));
    }
    // SAFETY: no arguments.
    let _ = unsafe { sys::cudaGetLastError() };
    notes
}

/// Loads every probe kernel now. With lazy module loading the first launch would load it, and a load inside a
/// global-mode capture can fail for reasons that have nothing to do with the rule under test.
/// Loads the probe kernels' module in the current context, as the executor does before each case's script: for a
/// process started ahead of its case ([`crate::runner::worker`]), so that its case does not wait for it.
pub fn preload_kernels(kernels: &KernelTable) -> Vec<String> {
    load_kernels(kernels)
}

fn load_kernels(kernels: &KernelTable) -> Vec<String> {
    let mut notes = Vec::new();
    // Not lazy-spin (its first launch in a case must be the one that loads it), nor the kernels of other images.
    let words = kernels.all().filter(|(k, _)| k.preloaded()).map(|(k, f)| (k.word(), f));
    // The trigger variant of spin has no word of its own (`launch spin … trigger`).
    for (name, func) in words.chain([("spin … trigger", kernels.spin_trigger)]) {
        let mut attributes = sys::cudaFuncAttributes::default();
        // SAFETY: func is a kernel handle from the table; attributes is a valid out-pointer.
        let code = unsafe { sys::cudaFuncGetAttributes(&mut attributes, func) };
        if code != sys::cudaError::cudaSuccess {
            notes.push(format!("loading the {name} kernel (cudaFuncGetAttributes) returned {}", code));
        }
    }
    // A failed load leaves a last error; the script must not see it.
    // SAFETY: no arguments.
    let _ = unsafe { sys::cudaGetLastError() };
    notes
}
