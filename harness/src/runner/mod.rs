//! Runs the suite: cases in worker processes (a batch per process, one CUDA context), spread over the devices, with
//! the checks that keep a fast run's verdicts those of a slow one. [`run_suite`] is the loop behind both front ends
//! (`cuda-conformance run` and the `cargo test` binary).
//!
//! - **Isolation.** A child process runs the cases ([`worker`]); a crash, a hang or a sticky error costs one case and
//!   never the results of the others: the parent records it and starts a fresh child at the next case. A case that
//!   leaves the context dirty ends its worker. A case with `env:` (process-wide runtime settings) or with
//!   `poisons-context:` (a sticky error on purpose) gets a process of its own.
//! - **Gate delays.** A case's `open G after 300ms` is scaled to [`RunOptions::gate_delay`] (other delays in
//!   proportion): the blocking oracle only needs the open to come well after an API call's latency. A short delay
//!   can only make a predicate that compares a return or a kernel start with the open (`waited-for`, `before`) hold
//!   when it should not, never the other way. So a result at a shortened delay that is not plain `pass` — a fail, a
//!   quality warning, or a variant or observation decided by such a predicate — is run again at the written delays,
//!   and that run counts.
//! - **Flakes.** An unexpected result (a failure, or with a baseline anything it does not expect) is run again
//!   [`RunOptions::reruns`] times: if any run differs it is a `flake`, so a fail must reproduce. A `variant` runs
//!   twice and must name the same variant both times, else it is a `flake`.
//! - **Devices.** One worker per device, each seeing only its GPU; cases go to whichever device is free next.
//! - **Warm processes.** A new process's CUDA context costs about 210 ms of a resource the driver serialises across
//!   the whole host (measured on the 2-GPU H200 host: 8 processes starting at once take 1.7 s, on one GPU or on
//!   two). So the cases that need a process of their own all go to the first device's runner, which runs them
//!   before its other cases, each in a process started ahead ([`WARM_AHEAD`] at a time) that created its context
//!   while the case before it ran; its batch worker warms up last. Such a case whose pick a short gate delay could
//!   decide starts at the written delays (it would be confirmed there anyway, in one more process). The other
//!   devices start on the shared queue of batch cases at once.
//! - **Measurements.** Cases that `measure` run one at a time across the devices (see `BatchQueue`).
//! - **Several devices.** Cases that need several devices share one worker of their own that sees every GPU
//!   (with a context on each from the start), on the first device's runner, after its own-process cases.
//! - **Device memory.** A worker reports how much less device memory was free after a case than before; only the
//!   parent knows whether another process of the run could have allocated on that device meanwhile (a
//!   several-device case touching it), so the parent judges: a loss of more than [`worker::MEMORY_SLACK_MIB`] on
//!   an undisturbed device ends the worker, like any other dirt (objects, limits, errors, captures, which the
//!   child checks itself); on a disturbed one the check is skipped and counted.

pub mod bench;
pub mod mock;
pub(crate) mod process;
pub mod select;
pub mod worker;

use crate::record::CaseResult;
pub use worker::serve_child_request;

use crate::case::ast::{Case, Expectation, OpKind, Predicate, Requirement};
use crate::device::gpu::DeviceInfo;
use crate::device::kernels::KernelTable;
use crate::device::requirements::unmet_requirement;
use crate::exec::{self, ExecOptions};
use crate::readings::{measure, timeline, verdict};
use crate::record::observations::Observations;
use crate::record::verdict::{Verdict, VerdictKind};
use crate::record::Attempt;
use crate::report::baseline;
use std::collections::{BTreeMap, VecDeque};
use std::io::Read;
use std::path::PathBuf;
use std::sync::{mpsc, Arc, Mutex};
use std::time::{Duration, Instant};
use worker::{ChildSpec, Worker};

/// The delay the cases are written with: `open G after 300ms` is the common gate open.
pub const WRITTEN_GATE_DELAY: Duration = Duration::from_millis(300);
/// The default gate delay of a run: an order of magnitude above an API call's latency, a tenth of the written one.
pub const DEFAULT_GATE_DELAY: Duration = Duration::from_millis(30);
/// How many processes a device's runner starts ahead for the cases that need their own: enough to hide a context
/// creation behind the case before, few enough not to make every creation contend with the others.
pub const WARM_AHEAD: usize = 2;

/// How a suite runs.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The `cases/` folder the children load the cases from.
    pub cases_dir: PathBuf,
    /// A case with no result after this is killed (with its worker) and is a timeout.
    pub case_deadline: Duration,
    /// What a case's `open G after 300ms` stands for; other delays scale in proportion. At most the written delay.
    pub gate_delay: Duration,
    /// How often an unexpected result is run again before it counts.
    pub reruns: u32,
    /// One process per case (the slow, old way; for comparison), instead of worker processes.
    pub process_per_case: bool,
    /// Restrict each worker to its device (`CUDA_VISIBLE_DEVICES=<uuid>`); off for a single device as given.
    pub restrict_visibility: bool,
    /// Play `CUDA_CONFORMANCE_MOCK` behaviours instead of running on a GPU (tests).
    pub mock: Option<String>,
    /// The executable to re-execute as the child (default: the current one).
    pub exe: Option<PathBuf>,
    /// Expectations to judge the results against (the section of this GPU, driver and runtime).
    pub baseline: Option<BTreeMap<String, String>>,
}

impl RunOptions {
    pub fn new(cases_dir: PathBuf) -> RunOptions {
        RunOptions {
            cases_dir,
            case_deadline: Duration::from_secs(60),
            gate_delay: DEFAULT_GATE_DELAY,
            reruns: 2,
            process_per_case: false,
            restrict_visibility: false,
            mock: None,
            exe: None,
            baseline: None,
        }
    }

    /// The factor applied to the cases' open delays (1 at the written delays).
    pub fn gate_delay_scale(&self) -> f64 {
        (self.gate_delay.as_secs_f64() / WRITTEN_GATE_DELAY.as_secs_f64()).min(1.0)
    }
}

/// What a suite run did, besides its results.
#[derive(Debug, Clone, Default)]
pub struct SuiteStats {
    /// Child processes started.
    pub processes_started: u64,
    /// Runs beyond one per case.
    pub extra_runs: u64,
    /// Where each device's time went (the benchmark prints it).
    pub lanes: Vec<LaneTimes>,
    /// What the warm processes that were waited for said about their start.
    pub ready: Vec<worker::Ready>,
    /// Cases whose device-memory check was skipped because another process of the run could have allocated on
    /// their device meanwhile.
    pub memory_checks_skipped: u64,
}

/// Work of the run that may allocate memory on every device (several-device cases): while it goes on, a worker's
/// device-memory check on any device means nothing.
#[derive(Debug, Default)]
pub struct Disturbance {
    active: std::sync::atomic::AtomicUsize,
    epoch: std::sync::atomic::AtomicU64,
}

impl Disturbance {
    fn begin(&self) {
        use std::sync::atomic::Ordering::SeqCst;
        self.active.fetch_add(1, SeqCst);
        self.epoch.fetch_add(1, SeqCst);
    }

    fn end(&self) {
        use std::sync::atomic::Ordering::SeqCst;
        self.epoch.fetch_add(1, SeqCst);
        self.active.fetch_sub(1, SeqCst);
    }

    /// (active, epoch): two equal snapshots with nothing active mean nothing disturbed the devices in between.
    fn snapshot(&self) -> (usize, u64) {
        use std::sync::atomic::Ordering::SeqCst;
        (self.active.load(SeqCst), self.epoch.load(SeqCst))
    }
}

/// One device's timeline in a run, in seconds from its start: when its own-process cases were done, when its batch
/// worker was ready, and when its last case ended.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct LaneTimes {
    pub device: i32,
    pub cases: usize,
    pub own_cases: usize,
    pub own_phase_end_s: f64,
    /// Time the own-process cases waited for their processes' contexts (not hidden by the warm pipeline).
    pub own_ready_wait_s: f64,
    pub batch_start_s: f64,
    pub end_s: f64,
}

/// Runs `cases` on `devices` (probed already), calling `on_result` with each result as it comes (in completion
/// order, with its index in `cases`), and returns every result in the order of `cases`. Requirements a device does
/// not meet are decided here without a child.
pub fn run_suite(
    cases: &[&Case],
    devices: &[DeviceInfo],
    opts: &RunOptions,
    mut on_result: impl FnMut(usize, &CaseResult),
) -> (Vec<CaseResult>, SuiteStats) {
    let exe = match opts.exe.clone().map_or_else(std::env::current_exe, Ok) {
        Ok(exe) => exe,
        Err(e) => {
            let results: Vec<CaseResult> = cases
                .iter()
                .map(|c| {
                    let why = format!("cannot find the current executable: {e}");
                    CaseResult::new(c, verdict_of(VerdictKind::Crash, why), None, Duration::ZERO)
                })
                .collect();
            for (i, r) in results.iter().enumerate() {
                on_result(i, r);
            }
            return (results, SuiteStats::default());
        }
    };
    let plan = Plan::new(cases, devices.len(), opts.process_per_case);
    let queue = Arc::new(BatchQueue::new(cases, &plan.shared));
    let disturbance = Disturbance::default();
    let (plan, disturbance) = (&plan, &disturbance);
    let run_start = Instant::now();
    let (sender, receiver) = mpsc::channel::<(usize, CaseResult)>();
    let mut slots: Vec<Option<CaseResult>> = vec![None; cases.len()];
    let mut stats = SuiteStats::default();
    std::thread::scope(|scope| {
        let handles: Vec<_> = devices
            .iter()
            .enumerate()
            .map(|(lane_index, device)| {
                let (queue, sender, exe) = (Arc::clone(&queue), sender.clone(), exe.clone());
                scope.spawn(move || {
                    let mut lane = DeviceRunner::new(device, opts, exe);
                    lane.share_devices(devices.len(), disturbance);
                    let own: Vec<&Case> = plan.own[lane_index].iter().map(|&i| cases[i]).collect();
                    let several: Vec<&Case> = plan.several[lane_index].iter().map(|&i| cases[i]).collect();
                    let touches_all = several.iter().chain(&own).any(|c| needs_all_devices(c));
                    if touches_all {
                        disturbance.begin();
                    }
                    lane.start_processes(&own, !several.is_empty());
                    let mut sent_all = true;
                    let mut ready_wait = Duration::ZERO;
                    for (&index, case) in plan.own[lane_index].iter().zip(&own) {
                        ready_wait += lane.await_own_ready(case);
                        let result = lane.run_case(case);
                        lane.start_processes(&own, !several.is_empty());
                        if sender.send((index, result)).is_err() {
                            sent_all = false;
                            break;
                        }
                    }
                    for (&index, case) in plan.several[lane_index].iter().zip(&several) {
                        if !sent_all {
                            break;
                        }
                        let result = lane.run_case(case);
                        sent_all = sender.send((index, result)).is_ok();
                    }
                    lane.end_several_device_phase();
                    if touches_all {
                        disturbance.end();
                    }
                    let mut times = LaneTimes {
                        device: device.ordinal,
                        own_cases: own.len() + several.len(),
                        ..LaneTimes::default()
                    };
                    times.own_phase_end_s = run_start.elapsed().as_secs_f64();
                    times.own_ready_wait_s = ready_wait.as_secs_f64();
                    lane.begin_batch_phase();
                    times.batch_start_s = run_start.elapsed().as_secs_f64();
                    let mut batch_cases = 0;
                    while sent_all {
                        let Some((index, measures)) = queue.next() else { break };
                        let result = lane.run_case(cases[index]);
                        if measures {
                            queue.measured();
                        }
                        batch_cases += 1;
                        sent_all = sender.send((index, result)).is_ok();
                    }
                    times.end_s = run_start.elapsed().as_secs_f64();
                    times.cases = own.len() + several.len() + batch_cases;
                    let mut stats = lane.finish();
                    stats.lanes.push(times);
                    stats
                })
            })
            .collect();
        drop(sender);
        for (index, result) in receiver {
            on_result(index, &result);
            slots[index] = Some(result);
        }
        for h in handles {
            if let Ok(s) = h.join() {
                stats.processes_started += s.processes_started;
                stats.extra_runs += s.extra_runs;
                stats.lanes.extend(s.lanes);
                stats.ready.extend(s.ready);
                stats.memory_checks_skipped += s.memory_checks_skipped;
            }
        }
    });
    let results = slots
        .into_iter()
        .zip(cases)
        .map(|(slot, case)| {
            slot.unwrap_or_else(|| {
                let why = "not run: no device took the case (its runner thread ended early)".to_owned();
                CaseResult::new(case, verdict_of(VerdictKind::Skipped, why), None, Duration::ZERO)
            })
        })
        .collect();
    (results, stats)
}

/// The shared queue of batch cases. Cases that `measure` (bandwidths, kernel and launch times: figures the seeds'
/// claims are judged on) run one at a time across the devices, so that no measurement shares the host's memory
/// bandwidth or PCIe links with another; they come first, while the first device's runner is busy with its
/// own-process cases, and the other runners take ordinary cases while one measures.
struct BatchQueue<'c> {
    cases: &'c [&'c Case],
    state: Mutex<(VecDeque<usize>, bool)>,
}

impl<'c> BatchQueue<'c> {
    fn new(cases: &'c [&'c Case], shared: &[usize]) -> Self {
        let (measuring, ordinary): (Vec<usize>, Vec<usize>) = shared.iter().copied().partition(|&i| measures(cases[i]));
        let order: VecDeque<usize> = measuring.into_iter().chain(ordinary).collect();
        BatchQueue { cases, state: Mutex::new((order, false)) }
    }

    /// The next case this runner may take, and whether it measures (then call [`BatchQueue::measured`] after it);
    /// none when the queue is empty. Waits while only measuring cases are left and another runner is measuring.
    fn next(&self) -> Option<(usize, bool)> {
        loop {
            {
                let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
                let busy = state.1;
                let pick = state.0.iter().position(|&i| !busy || !measures(self.cases[i]));
                match pick {
                    Some(at) => {
                        let index = state.0.remove(at)?;
                        let measuring = measures(self.cases[index]);
                        state.1 |= measuring;
                        return Some((index, measuring));
                    }
                    None if state.0.is_empty() => return None,
                    None => {}
                }
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }

    fn measured(&self) {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).1 = false;
    }
}

/// A case with `measure` figures.
fn measures(case: &Case) -> bool {
    case.expects.iter().any(|e| matches!(e, Expectation::Measure(_)))
}

/// Which runner takes which case: the cases that need a process of their own, and those that need several devices,
/// all go to the first device's runner (context creation is serialised across the host, so spread out they would
/// hold up every runner); the batch cases wait in one queue for whichever device is free next.
struct Plan {
    /// Per device: the indices of its own-process cases, in order.
    own: Vec<Vec<usize>>,
    /// Per device: the indices of the cases it runs in its several-device worker.
    several: Vec<Vec<usize>>,
    /// The batch cases (every case, with one process per case).
    shared: Vec<usize>,
}

impl Plan {
    fn new(cases: &[&Case], lanes: usize, process_per_case: bool) -> Plan {
        let lanes = lanes.max(1);
        let (mut own, mut several) = (vec![Vec::new(); lanes], vec![Vec::new(); lanes]);
        if process_per_case {
            return Plan { own, several, shared: (0..cases.len()).collect() };
        }
        let mut shared = Vec::new();
        for (i, case) in cases.iter().enumerate() {
            if needs_own_process(case) {
                own[0].push(i);
            } else if needs_all_devices(case) {
                several[0].push(i);
            } else {
                shared.push(i);
            }
        }
        Plan { own, several, shared }
    }
}

/// How many runs an own-process case will most likely take: one, and a second for variant stability when it can
/// pick a variant (one whose pick a short delay could decide starts at the written delays: see `run_case`).
fn expected_runs(case: &Case) -> usize {
    1 + usize::from(case.expects.iter().any(|e| matches!(e, Expectation::Variant(_))))
}

/// True when the case schedules a gate open and picks a variant or an observation by `waited-for` or `before`:
/// a result at a shortened delay may have to be confirmed at the written ones.
fn short_delay_can_decide(case: &Case) -> bool {
    has_delayed_open(case)
        && case.expects.iter().any(|e| match e {
            Expectation::Variant(alts) | Expectation::Observe(alts) => {
                alts.iter().any(|(_, p)| a_short_delay_can_make_hold(p))
            }
            _ => false,
        })
}

/// One device's share of a run: its batch worker, and the processes of its own that some cases get. [`run_suite`]
/// has one per device; the `cargo test` front end holds one and hands it each case trial in turn.
pub struct DeviceRunner<'a> {
    device: &'a DeviceInfo,
    opts: &'a RunOptions,
    batch: Worker,
    spec: ChildSpec,
    /// Processes started ahead for own-process cases: (case id, process), in the order the cases will run.
    warm: VecDeque<(String, Worker)>,
    /// How many of the planned own-process runs have a process started (the next one to start is this).
    warmed: usize,
    /// The batch worker has been started ahead.
    batch_started: bool,
    /// The worker of the cases that need several devices (it sees them all).
    several: Worker,
    /// How many devices the run uses, and what tells this runner whether another could have touched its device.
    lanes: usize,
    disturbance: Option<&'a Disturbance>,
    /// Processes ending in the background; joined by [`DeviceRunner::finish`].
    exiting: Vec<std::thread::JoinHandle<()>>,
    stats: SuiteStats,
}

impl<'a> DeviceRunner<'a> {
    pub fn new(device: &'a DeviceInfo, opts: &'a RunOptions, exe: PathBuf) -> DeviceRunner<'a> {
        let visible = opts.restrict_visibility.then(|| device.uuid.clone());
        let spec = ChildSpec {
            exe,
            cases_dir: opts.cases_dir.clone(),
            ordinal: if visible.is_some() { 0 } else { device.ordinal },
            visible,
            mock: opts.mock.clone(),
            all_devices: false,
        };
        let several_spec = ChildSpec { visible: None, ordinal: device.ordinal, all_devices: true, ..spec.clone() };
        DeviceRunner {
            several: Worker::new(several_spec),
            lanes: 1,
            disturbance: None,
            device,
            opts,
            batch: Worker::new(spec.clone()),
            spec,
            warm: VecDeque::new(),
            warmed: 0,
            batch_started: false,
            exiting: Vec::new(),
            stats: SuiteStats::default(),
        }
    }

    /// Makes this runner one of `lanes` of a run, told by `disturbance` when another could touch its device.
    pub fn share_devices(&mut self, lanes: usize, disturbance: &'a Disturbance) {
        self.lanes = lanes;
        self.disturbance = Some(disturbance);
    }

    /// Starts the processes this runner will need soon: the batch worker (and the several-device worker), and the
    /// next own-process
    /// runs of `own` (this runner's own-process cases, in order) up to [`WARM_AHEAD`] ahead. Call it before the
    /// first case and after each own-process case; not during batch cases (a context created on the device
    /// during a case would make it look dirty).
    pub fn start_processes(&mut self, own: &[&Case], several: bool) {
        if self.opts.process_per_case {
            return;
        }
        let runs: Vec<&Case> = own
            .iter()
            .filter(|c| unmet_requirement(c, self.device).is_none())
            .flat_map(|c| std::iter::repeat_n(*c, expected_runs(c)))
            .collect();
        while self.warm.len() < WARM_AHEAD && self.warmed < runs.len() {
            let case = runs[self.warmed];
            let mut worker = Worker::new(self.own_spec(case));
            worker.start_warm(&case.env);
            self.warm.push_back((case.id.clone(), worker));
            self.warmed += 1;
        }
        // The batch worker comes last in the pipeline: started with the last own-process ones, it does not compete
        // with the first cases' context creations.
        if self.warmed == runs.len() && !self.batch_started {
            self.batch_started = true;
            self.batch.start_warm(&[]);
            if several {
                self.several.start_warm(&[]);
            }
        }
    }

    /// Waits until the process started for `case`'s next run (if any) has its context, and returns how long that
    /// took: the part of a case's time that the warm pipeline did not hide (the benchmark reports it).
    pub fn await_own_ready(&mut self, case: &Case) -> Duration {
        let start = Instant::now();
        let deadline = self.opts.case_deadline;
        if let Some((_, worker)) = self.warm.iter_mut().find(|(id, _)| *id == case.id) {
            worker.await_ready(deadline);
        }
        start.elapsed()
    }

    /// Ends the processes started for own-process runs that did not happen, and waits until the batch worker has
    /// its context: from here on no context is created on this device while a case runs.
    pub fn begin_batch_phase(&mut self) {
        self.end_own_phase();
        let deadline = self.opts.case_deadline;
        if !self.batch_started {
            self.start_processes(&[], false);
        }
        if self.batch.is_running() {
            self.batch.await_ready(deadline);
        }
    }

    /// Kills the processes started for own-process runs that did not happen (they may still be creating their
    /// contexts, which must not go on while batch cases run).
    fn end_own_phase(&mut self) {
        for (_, mut worker) in std::mem::take(&mut self.warm) {
            self.exiting.extend(worker.kill_in_background());
            self.count(&worker);
        }
    }

    /// Ends the several-device worker (its contexts on every GPU go with it) before the batch cases.
    pub fn end_several_device_phase(&mut self) {
        let fresh = Worker::new(self.several.spec().clone());
        let several = std::mem::replace(&mut self.several, fresh);
        self.retire_worker(several);
    }

    /// The child an own-process case runs in: a case that needs several devices sees them all.
    fn own_spec(&self, case: &Case) -> ChildSpec {
        if needs_all_devices(case) {
            self.several.spec().clone()
        } else {
            self.spec.clone()
        }
    }

    /// Runs `case` in a shared worker (the batch one, or the several-device one) and judges the device memory it
    /// reported (see the module documentation): a loss that is the case's ends the worker.
    fn run_shared(&mut self, case: &Case, scale: f64) -> CaseResult {
        let deadline = self.opts.case_deadline;
        let several = needs_all_devices(case);
        let before = self.disturbance.map(Disturbance::snapshot);
        let worker = if several { &mut self.several } else { &mut self.batch };
        let mut result = worker.run(case, scale, deadline);
        let loss = worker.last_memory_loss;
        let after = self.disturbance.map(Disturbance::snapshot);
        // The several-device worker's own device is this runner's alone; the others are shared with the other
        // runners. A batch worker's device is disturbed while several-device work goes on.
        let (own_trusted, others_trusted) = if several {
            (true, self.lanes == 1)
        } else {
            (before == after && before.is_none_or(|(active, _)| active == 0), false)
        };
        let judged = [(own_trusted, loss.own_device_mib), (others_trusted, loss.other_devices_mib)];
        if judged.iter().any(|(trusted, mib)| !trusted && *mib > 0) {
            self.stats.memory_checks_skipped += 1;
        }
        let lost = judged.iter().filter(|(trusted, _)| *trusted).map(|(_, mib)| *mib).max().unwrap_or(0);
        if lost > worker::MEMORY_SLACK_MIB && result.dirty.is_none() {
            result.dirty = Some(format!("device memory not released: {lost} MiB less free after the case"));
            let worker = if several { &mut self.several } else { &mut self.batch };
            let fresh = Worker::new(worker.spec().clone());
            let ended = std::mem::replace(worker, fresh);
            self.retire_worker(ended);
        }
        result
    }

    /// Every run of `case` it needs (see the module documentation), and the result that counts.
    pub fn run_case(&mut self, case: &Case) -> CaseResult {
        let started = Instant::now();
        if let Some(reason) = unmet_requirement(case, self.device) {
            let mut r = CaseResult::new(case, verdict_of(VerdictKind::NotSupported, reason), None, started.elapsed());
            r.device = Some(self.device.ordinal);
            return r;
        }
        let timed = has_delayed_open(case);
        // A case in a process of its own whose pick a short delay could decide would be confirmed at the written
        // delays anyway: it starts there, which saves a process (a context creation) per run of the suite.
        let straight_to_written = needs_own_process(case) && short_delay_can_decide(case);
        let fast = if timed && !straight_to_written { self.opts.gate_delay_scale() } else { 1.0 };
        let mut scale = fast;
        let mut attempts = Vec::new();
        let mut result = self.attempt(case, scale, "first", &mut attempts);
        if scale < 1.0 && needs_written_delays(case, &result.verdict) {
            scale = 1.0;
            result = self.attempt(case, scale, "written-delays", &mut attempts);
        }
        if result.verdict.kind == VerdictKind::Variant {
            let again = self.attempt(case, scale, "variant-stability", &mut attempts);
            if again.outcome() != result.outcome() {
                make_flake(&mut result, "a variant case showed two variants", &attempts);
            }
        }
        let expectation =
            self.opts.baseline.as_ref().map(|b| b.get(&case.id).cloned().unwrap_or_else(|| "pass".into()));
        let unexpected = |r: &CaseResult| match &expectation {
            Some(expected) => r.outcome() != *expected,
            None => r.verdict.kind.is_failure(),
        };
        // A timeout already waited its whole deadline: it is not run again.
        if result.verdict.kind != VerdictKind::Flake
            && result.verdict.kind != VerdictKind::Timeout
            && unexpected(&result)
        {
            for _ in 0..self.opts.reruns {
                let again = self.attempt(case, scale, "rerun", &mut attempts);
                if again.outcome() != result.outcome() {
                    make_flake(&mut result, "an unexpected result did not reproduce", &attempts);
                    break;
                }
            }
        }
        if attempts.len() > 1 {
            result.attempts = attempts;
        }
        if let Some(section) = &self.opts.baseline {
            baseline::judge(section, &mut result);
        }
        result.wall_ms = started.elapsed().as_millis() as u64;
        result.device = Some(self.device.ordinal);
        result
    }

    /// Ends the batch worker and returns what this runner did.
    pub fn finish(mut self) -> SuiteStats {
        self.end_own_phase();
        // Every process ends at once: a context's teardown takes a while, and they need not queue.
        let batch = std::mem::replace(&mut self.batch, Worker::new(self.spec.clone()));
        self.retire_worker(batch);
        self.end_several_device_phase();
        for handle in self.exiting.drain(..) {
            let _ = handle.join();
        }
        self.stats.clone()
    }

    fn attempt(&mut self, case: &Case, scale: f64, why: &str, attempts: &mut Vec<Attempt>) -> CaseResult {
        if !attempts.is_empty() {
            self.stats.extra_runs += 1;
        }
        let deadline = self.opts.case_deadline;
        let result = if self.opts.process_per_case || needs_own_process(case) {
            let position = self.warm.iter().position(|(id, _)| *id == case.id);
            let mut own = match position.and_then(|p| self.warm.remove(p)) {
                Some((_, worker)) => worker,
                None => Worker::new(self.own_spec(case)),
            };
            let r = own.run(case, scale, deadline);
            self.retire_worker(own);
            r
        } else {
            self.run_shared(case, scale)
        };
        attempts.push(Attempt {
            kind: result.verdict.kind,
            variant: result.verdict.variant.clone(),
            gate_delay_ms: (scale * WRITTEN_GATE_DELAY.as_secs_f64() * 1000.0 * 100.0).round() / 100.0,
            why: why.to_owned(),
        });
        result
    }
}

impl DeviceRunner<'_> {
    fn retire_worker(&mut self, mut worker: Worker) {
        self.exiting.extend(worker.retire_in_background());
        self.count(&worker);
    }

    fn count(&mut self, worker: &Worker) {
        self.stats.processes_started += worker.started;
        self.stats.ready.extend(worker.ready.iter().copied());
    }
}

fn make_flake(result: &mut CaseResult, why: &str, attempts: &[Attempt]) {
    let runs: Vec<String> =
        attempts.iter().map(|a| crate::record::outcome_text(a.kind, a.variant.as_deref())).collect();
    result.verdict.messages.insert(0, format!("flake: {why} (runs: {})", runs.join(", ")));
    result.verdict.kind = VerdictKind::Flake;
}

/// A case that must not share its process: process-wide `env:` settings, or a sticky error on purpose.
pub fn needs_own_process(case: &Case) -> bool {
    !case.env.is_empty() || !case.poisons.is_empty()
}

/// A case that uses several devices: its process sees them all, and it may touch every GPU of the host.
pub fn needs_all_devices(case: &Case) -> bool {
    case.requires.iter().any(|r| matches!(r, Requirement::Devices(n) if *n > 1))
}

/// True when the case schedules a gate open (`open G after D`), so its timing depends on the gate delay.
pub fn has_delayed_open(case: &Case) -> bool {
    case.script.iter().any(|op| matches!(op.kind, OpKind::Open { after_ns: Some(_), .. }))
}

/// Whether a result at a shortened gate delay must be confirmed at the written delays: anything but a plain pass
/// or an unmet requirement, unless every alternative it picked is one a short delay cannot make hold.
fn needs_written_delays(case: &Case, verdict: &Verdict) -> bool {
    match verdict.kind {
        VerdictKind::Pass | VerdictKind::NotSupported | VerdictKind::Skipped => {
            verdict.observed.as_deref().is_some_and(|picked| !picks_are_trusted(case, picked))
        }
        VerdictKind::Variant => {
            !verdict.variant.as_deref().is_some_and(|picked| picks_are_trusted(case, picked))
                || verdict.observed.as_deref().is_some_and(|picked| !picks_are_trusted(case, picked))
        }
        // Crash and timeout do not come from gate timing; a flake is decided later.
        VerdictKind::Crash | VerdictKind::Timeout | VerdictKind::Flake => false,
        _ => true,
    }
}

/// True when every picked alternative (names joined with `,`) holds by predicates a short delay cannot make true:
/// `not-waited-for` can only be helped by an open that comes *later*, and non-timing predicates do not depend on it.
fn picks_are_trusted(case: &Case, picked: &str) -> bool {
    let alternatives: Vec<&(String, Predicate)> = case
        .expects
        .iter()
        .flat_map(|e| match e {
            Expectation::Variant(alts) | Expectation::Observe(alts) => alts.iter().collect::<Vec<_>>(),
            _ => Vec::new(),
        })
        .collect();
    picked.split(',').all(|name| {
        let preds: Vec<&Predicate> = alternatives.iter().filter(|(n, _)| n == name).map(|(_, p)| p).collect();
        !preds.is_empty() && preds.iter().all(|p| !a_short_delay_can_make_hold(p))
    })
}

/// A predicate that compares a return or a kernel start with a gate's open: a shortened open delay can make it hold
/// when it should not.
fn a_short_delay_can_make_hold(p: &Predicate) -> bool {
    matches!(p, Predicate::WaitedFor { .. } | Predicate::Before { .. })
}

/// Runs `case` in its own child process on `device` (the `cargo test` front end and tests use it). Requirements are
/// decided here, without a child.
pub fn run_isolated(case: &Case, device: &DeviceInfo, opts: &RunOptions) -> CaseResult {
    let single = RunOptions { process_per_case: true, ..opts.clone() };
    let (mut results, _) = run_suite(&[case], std::slice::from_ref(device), &single, |_, _| {});
    results.pop().unwrap_or_else(|| {
        CaseResult::new(case, verdict_of(VerdictKind::Skipped, "not run".into()), None, Duration::ZERO)
    })
}

/// Runs `case` in this process at the written delays: requirements, execution, verdict.
pub fn run_in_process(case: &Case, kernels: &KernelTable, device: &DeviceInfo) -> CaseResult {
    run_in_process_with(case, kernels, device, &ExecOptions::default())
}

/// Runs `case` in this process with `opts`: requirements, execution, then the three readings of what it observed
/// (verdict, measures, timeline).
pub fn run_in_process_with(case: &Case, kernels: &KernelTable, device: &DeviceInfo, opts: &ExecOptions) -> CaseResult {
    let start = Instant::now();
    if let Some(reason) = unmet_requirement(case, device) {
        return CaseResult::new(case, verdict_of(VerdictKind::NotSupported, reason), None, start.elapsed());
    }
    let observations = exec::run_case(case, kernels, device, opts);
    let verdict = verdict::judge(case, &observations);
    let measures = measure::compute(case, &observations);
    let timeline = timeline::build(case, &observations);
    CaseResult { measures, timeline, ..CaseResult::new(case, verdict, Some(observations), start.elapsed()) }
}

// The result of a case is recorded data (`record/`, which knows no case); it is made here, where cases are run.
impl CaseResult {
    /// The result of `case` with its verdict and trace, before any reading of the trace or any second run.
    pub fn new(case: &Case, verdict: Verdict, observations: Option<Observations>, wall: Duration) -> Self {
        CaseResult {
            id: case.id.clone(),
            area: case.area().to_owned(),
            rule: case.rule.clone(),
            source: case.source.clone(),
            location: format!("{}:{}", case.positions.file, case.positions.case_line),
            verdict,
            observations,
            measures: Vec::new(),
            timeline: None,
            wall_ms: wall.as_millis() as u64,
            device: None,
            attempts: Vec::new(),
            dirty: None,
            baseline: None,
        }
    }
}

pub(crate) fn drain<R: Read + Send + 'static>(pipe: Option<R>) -> std::thread::JoinHandle<String> {
    std::thread::spawn(move || {
        let mut text = String::new();
        if let Some(mut pipe) = pipe {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            text = String::from_utf8_lossy(&bytes).into_owned();
        }
        text
    })
}

pub(crate) fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.len().saturating_sub(20);
    let joined = lines[start..].join("\n");
    if joined.is_empty() {
        "(empty)".into()
    } else {
        joined
    }
}

pub fn verdict_of(kind: VerdictKind, message: String) -> Verdict {
    Verdict { kind, variant: None, observed: None, messages: vec![message] }
}

/// What a report records besides the results: where the run came from and how it was made.
#[derive(Debug, Clone)]
pub struct ReportHeader {
    pub commit: String,
    pub started_at: String,
    pub filter: String,
    pub shard: Option<String>,
    pub baseline: Option<String>,
    /// The probe kernels of the binary that runs the cases (the harness does not know how they were built).
    pub kernel_image: crate::record::KernelImage,
}

/// [`run_suite`], with the report rewritten (atomically) at `path` after every case so that a run killed half-way
/// keeps what it obtained. `on_result` sees each result and whether the rewrite failed. Returns the report
/// (`complete` is left for the caller, which may add figures first) and the run's statistics.
pub fn run_to_report(
    cases: &[&Case],
    devices: &[DeviceInfo],
    opts: &RunOptions,
    header: &ReportHeader,
    path: Option<&std::path::Path>,
    mut on_result: impl FnMut(&CaseResult, Option<std::io::Error>),
) -> crate::record::Report {
    let start = Instant::now();
    let mut provenance = match devices.first() {
        Some(d) => crate::record::Provenance::new(d, &header.commit, header.started_at.clone()),
        None => crate::record::Provenance::new(&mock_device(), &header.commit, header.started_at.clone()),
    };
    provenance.kernel_image = header.kernel_image.clone();
    let mut info = crate::record::RunInfo {
        gate_delay_ms: opts.gate_delay_scale() * WRITTEN_GATE_DELAY.as_secs_f64() * 1000.0,
        reruns: opts.reruns,
        process_per_case: opts.process_per_case,
        devices: devices.iter().map(|d| format!("{}: {} ({})", d.ordinal, d.name, d.uuid)).collect(),
        shard: header.shard.clone(),
        baseline: header.baseline.clone(),
        processes_started: 0,
        extra_runs: 0,
    };
    let mut done: Vec<(usize, CaseResult)> = Vec::new();
    let assemble = |done: &[(usize, CaseResult)], info: &crate::record::RunInfo| {
        let mut sorted: Vec<&(usize, CaseResult)> = done.iter().collect();
        sorted.sort_by_key(|(i, _)| *i);
        let results = sorted.into_iter().map(|(_, r)| r.clone()).collect();
        let mut report = crate::record::Report::new(
            provenance.clone(),
            header.filter.clone(),
            start.elapsed().as_millis() as u64,
            results,
        );
        report.run = Some(info.clone());
        report
    };
    let (results, stats) = run_suite(cases, devices, opts, |index, result| {
        done.push((index, result.clone()));
        let error = path.and_then(|p| assemble(&done, &info).write(p).err());
        on_result(result, error);
    });
    info.processes_started = stats.processes_started;
    info.extra_runs = stats.extra_runs;
    let results: Vec<(usize, CaseResult)> = results.into_iter().enumerate().collect();
    assemble(&results, &info)
}

/// The device a mock run reports (no GPU is touched).
pub fn mock_device() -> DeviceInfo {
    DeviceInfo {
        ordinal: 0,
        name: "mock".into(),
        uuid: "GPU-mock".into(),
        compute_capability: (9, 0),
        multiprocessors: 1,
        concurrent_kernels: true,
        async_engine_count: 2,
        can_map_host_memory: true,
        memory_pools: true,
        unified_addressing: true,
        stream_priority_range: (-1, 0),
        device_count: 1,
        driver_version: 13000,
        runtime_version: 13000,
        visible: Vec::new(),
        links: Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(id: &str, header: &str) -> Case {
        let text = format!(
            "case {id}\n  rule: r\n  source: s\n{header}\n  stream s blocking\n  k: sync s\n  expect k returned cudaSuccess\nend\n"
        );
        let file = crate::case::parse_file("t.case", &text).unwrap_or_else(|d| panic!("{d:?}"));
        file.cases.into_iter().next().unwrap_or_else(|| panic!("no case in {text}"))
    }

    #[test]
    fn own_process_and_several_device_cases_go_to_the_first_device() {
        let cases = [
            case("a/plain", ""),
            case("a/env", "  env: CUDA_MODULE_LOADING=EAGER"),
            case("a/two", "  requires: devices >= 2"),
            case("a/poison", "  poisons-context: cudaErrorIllegalAddress"),
            case("a/plain-2", ""),
        ];
        let refs: Vec<&Case> = cases.iter().collect();
        let plan = Plan::new(&refs, 2, false);
        assert_eq!(plan.own, vec![vec![1, 3], vec![]]);
        assert_eq!(plan.several, vec![vec![2], vec![]]);
        assert_eq!(plan.shared, vec![0, 4]);
        let isolated = Plan::new(&refs, 2, true);
        assert_eq!((isolated.own, isolated.several), (vec![vec![], vec![]], vec![vec![], vec![]]));
        assert_eq!(isolated.shared, vec![0, 1, 2, 3, 4]);
    }
}

#[cfg(test)]
mod queue_tests {
    use super::*;

    #[test]
    fn measuring_cases_come_first_and_one_at_a_time() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
        let all = crate::case::suite::load_dir(&dir).unwrap_or_else(|d| panic!("{d:?}"));
        let measuring: Vec<&Case> = all.iter().filter(|c| measures(c)).take(2).collect();
        let ordinary = all.iter().find(|c| !measures(c)).unwrap_or_else(|| panic!("no ordinary case"));
        assert_eq!(measuring.len(), 2, "the suite has measuring cases");
        let cases = [ordinary, measuring[0], measuring[1]];
        let queue = BatchQueue::new(&cases, &[0, 1, 2]);
        assert_eq!(queue.next(), Some((1, true)));
        // Another runner may not measure now: it gets the ordinary case, though it is queued last.
        assert_eq!(queue.next(), Some((0, false)));
        queue.measured();
        assert_eq!(queue.next(), Some((2, true)));
        queue.measured();
        assert_eq!(queue.next(), None);
    }
}
