//! One device's share of a run ([`DeviceRunner`]): its processes, and every run of a case the [`super::policy`]
//! asks for.

use super::cxx::{Placement, Reproducers};
use super::one_case::verdict_of;
use super::policy::{
    expected_runs, gets_own_process, has_delayed_open, make_flake, measures, must_reproduce, needs_all_devices,
    needs_stability_run, needs_written_delays, peers_ahead, short_delay_can_decide,
};
use super::schedule::LaneView;
use super::stats::{Disturbance, SuiteStats};
use super::worker::{ChildSpec, Worker};
use super::{Executors, HostWaits, RunOptions, WRITTEN_GATE_DELAY};
use crate::case::ast::Case;
use crate::device::gpu::DeviceInfo;
use crate::device::requirements::unmet_requirement;
use crate::readings::agreement;
use crate::record::executors::{Executor, SecondRun};
use crate::record::observations::Observations;
use crate::record::verdict::{Verdict, VerdictKind};
use crate::record::{Attempt, CaseResult};
use crate::report::baseline::{self, Key};
use crate::report::expectations::{self, Entry};
use std::collections::VecDeque;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Device memory a case may leave allocated before its worker counts as dirty: the driver grows its own pools on
/// first use (module loads, graph and stream resources), in 2 MiB pages; a case's own leak shows in the object
/// count first.
pub const MEMORY_SLACK_MIB: u64 = 64;

/// One device's share of a run: its batch worker, and the processes of its own that some cases get.
/// [`super::suite::run_suite`] has one per device; the `cargo test` front end holds one and hands it each case trial
/// in turn.
pub struct DeviceRunner<'a> {
    device: &'a DeviceInfo,
    opts: &'a RunOptions,
    batch: Worker,
    spec: ChildSpec,
    /// Processes started ahead for own-process cases (the lane's pool): (case id, process), in the order the
    /// cases will run.
    warm: VecDeque<(String, Worker)>,
    /// The own-process cases given to the pool and not run yet, in order: (the case's index in the run, its id).
    /// A batch case whose reruns were deferred ([`DeviceRunner::run_case_deferring`]) is among them.
    pooled: VecDeque<(usize, String)>,
    /// Batch cases whose first run killed the batch worker and whose reruns wait for processes of the pool.
    deferred: Vec<Deferred>,
    /// A batch worker started ahead, ready to take over when a case ends the batch worker ([`Self::keep_spare`]);
    /// kept, in a run on one GPU, once the lane has had to replace its batch worker.
    spare: Option<Worker>,
    spare_wanted: bool,
    /// The measurement's processes, started ahead ([`DeviceRunner::hold_for_measurement`]).
    measurement_workers: Vec<Option<Worker>>,
    /// The worker of the cases that need several devices (it sees them all).
    several: Worker,
    /// Where the host threads of the other workers block while they wait ([`HostWaits::Block`]): the worker of the
    /// cases that `measure`, with cudart's default waits. Their figures are what the seeds' programs get, which run
    /// with the default: blocking waits put a wake-up into every synchronous call, and on an H100 made seed 002's
    /// synchronous cell take 0.50–0.64 ms instead of 0.38–0.40 (its claim went from holds to holds partly or
    /// undecided). `None` when every worker waits the default way already.
    measuring: Option<Worker>,
    /// The run has cases that measure (then the measuring worker is started ahead with the batch worker).
    measuring_expected: bool,
    /// How many devices the run uses, and what tells this runner whether another could have touched its device.
    lanes: usize,
    disturbance: Option<&'a Disturbance>,
    /// Processes ending in the background; joined by [`DeviceRunner::finish`].
    exiting: Vec<std::thread::JoinHandle<()>>,
    stats: SuiteStats,
    /// This device's GPU, driver and runtime, for the expectation file's conditions (made at the first case).
    configuration: std::sync::OnceLock<Key>,
}

impl<'a> DeviceRunner<'a> {
    pub fn new(device: &'a DeviceInfo, opts: &'a RunOptions, exe: PathBuf) -> DeviceRunner<'a> {
        let visible = opts.restrict_visibility.then(|| device.uuid.clone());
        let spec = ChildSpec {
            exe,
            ordinal: if visible.is_some() { 0 } else { device.ordinal },
            visible,
            mock: opts.mock.clone(),
            all_devices: false,
            sanitizer: opts.sanitizer.clone(),
            host_waits: opts.host_waits,
            uuid: device.uuid.clone(),
        };
        let several_spec = ChildSpec { visible: None, ordinal: device.ordinal, all_devices: true, ..spec.clone() };
        let measuring_spec = ChildSpec { host_waits: HostWaits::Auto, ..spec.clone() };
        DeviceRunner {
            several: Worker::new(several_spec),
            measuring: (opts.host_waits != HostWaits::Auto).then(|| Worker::new(measuring_spec)),
            measuring_expected: false,
            lanes: 1,
            disturbance: None,
            device,
            opts,
            batch: Worker::new(spec.clone()),
            spec,
            warm: VecDeque::new(),
            pooled: VecDeque::new(),
            deferred: Vec::new(),
            spare: None,
            measurement_workers: Vec::new(),
            spare_wanted: false,
            exiting: Vec::new(),
            stats: SuiteStats::default(),
            configuration: std::sync::OnceLock::new(),
        }
    }

    /// Makes this runner one of `lanes` of a run, told by `disturbance` when another could touch its device.
    pub fn share_devices(&mut self, lanes: usize, disturbance: &'a Disturbance) {
        self.lanes = lanes;
        self.disturbance = Some(disturbance);
    }

    /// Tells the runner whether the batch cases include cases that measure (so that their worker is started ahead,
    /// with the batch worker).
    pub fn expect_measuring(&mut self, any: bool) {
        self.measuring_expected = any;
    }

    /// Starts the batch worker ahead (and the measuring worker, when this lane's cases measure), so that its context
    /// is created while nothing else waits for it.
    pub fn start_workers(&mut self) {
        if self.opts.process_per_case || !self.opts.executors.runs_workers() {
            return;
        }
        if !self.batch.is_running() {
            self.batch.start_warm(&[]);
        }
        if self.measuring_expected {
            if let Some(measuring) = self.measuring.as_mut().filter(|m| !m.is_running()) {
                measuring.start_warm(&[]);
            }
        }
    }

    /// Puts own-process unit `index` (`rows`: a case, or the cases that share its process, `suite::units_of`) in
    /// this lane's pool: a process started now for each run its first case is expected to take ([`expected_runs`]),
    /// creating its context (and starting the peers its rows need, which serve them one after another:
    /// [`peers_ahead`]) while other cases run. A case whose requirements this device does not meet, or a run without
    /// worker processes, gets none (it is ready at once).
    pub fn pool_own(&mut self, index: usize, rows: &[&Case]) {
        let case = rows[0];
        self.pooled.push_back((index, case.id.clone()));
        if self.opts.process_per_case
            || !self.opts.executors.runs_workers()
            || rows.iter().all(|row| unmet_requirement(row, self.device).is_some())
        {
            return;
        }
        let mut env = case.env.clone();
        // A peer serves one case after another (`exec::peer::keep_spare`): as many as the rows' case with most.
        let peers: usize = rows.iter().map(|row| peers_ahead(row)).max().unwrap_or(0);
        if peers > 0 {
            env.push((crate::exec::peer::PEER_SPARES_ENV.to_owned(), peers.to_string()));
        }
        for _ in 0..expected_runs(case, self.opts.baseline.as_ref()) {
            let mut worker = Worker::new(self.own_spec(case));
            worker.start_warm(&env);
            self.warm.push_back((case.id.clone(), worker));
        }
    }

    /// What this lane holds, for the schedule: the first pooled case whose processes are ready (or that needs none),
    /// how many processes its pool holds, and how many of its processes are still creating their contexts. Looks
    /// without waiting.
    pub fn view(&mut self) -> LaneView {
        let starting = self.starting();
        // A case is ready when every process started for it is (its second run, for variant stability, would
        // otherwise wait for its own inside the case).
        let ready = self.pooled.iter().find_map(|(index, id)| {
            let mut its = self.warm.iter().filter(|(warm_id, _)| warm_id == id);
            its.all(|(_, w)| w.said_ready()).then_some(*index)
        });
        LaneView { ready, pooled: self.warm.len(), starting }
    }

    /// True while this lane's batch worker is creating its context (at the start, and after a case ended it): the
    /// lane then starts no process ahead, since the host creates one process at a time and the batch worker's is
    /// the one the lane waits for (results/2026-11-27_node-time: four at once took 1.16 s, one 0.43 s).
    pub fn batch_is_starting(&mut self) -> bool {
        !self.batch.poll_ready(Duration::ZERO, self.opts.case_deadline)
    }

    /// Waits up to `at_most` for the first process of this lane still creating its context; returns how long it
    /// waited (none when nothing is starting).
    pub fn await_any_ready(&mut self, at_most: Duration) -> Duration {
        let start = Instant::now();
        let deadline = self.opts.case_deadline;
        let measurement = self.measurement_workers.iter_mut().flatten();
        let pending =
            self.warm.iter_mut().map(|(_, w)| w).chain(measurement).find(|w| !w.said_ready() && w.is_running());
        if let Some(worker) = pending {
            worker.poll_ready(at_most, deadline);
        }
        start.elapsed()
    }

    /// Runs the pooled own-process case `case` (its process ready), then ends the processes started for runs it did
    /// not need.
    pub fn run_pooled(&mut self, case: &Case) -> CaseResult {
        let result = self.run_case(case);
        self.pooled.retain(|(_, id)| *id != case.id);
        let (unused, kept): (VecDeque<_>, VecDeque<_>) =
            std::mem::take(&mut self.warm).into_iter().partition(|(id, _)| *id == case.id);
        self.warm = kept;
        for (_, mut worker) in unused {
            self.exiting.extend(worker.kill_in_background());
            self.count(&worker);
        }
        result
    }

    /// How many processes of this lane (pool, batch, measuring and spare workers, the measurement's) are still
    /// creating their contexts; looks at each without waiting.
    fn starting(&mut self) -> usize {
        let deadline = self.opts.case_deadline;
        let pool = self.warm.iter_mut().map(|(_, w)| w);
        let shared = [Some(&mut self.batch), self.measuring.as_mut(), self.spare.as_mut()].into_iter().flatten();
        let measurement = self.measurement_workers.iter_mut().flatten();
        pool.chain(shared).chain(measurement).map(|w| usize::from(!w.poll_ready(Duration::ZERO, deadline))).sum()
    }

    /// Keeps `workers`, the processes of the measurement started ahead (`suite::Measurement::start`), until it
    /// runs: they count among the lane's processes starting until they are ready.
    /// (Like the figures' processes before, they are not in the run's `processes_started`.)
    pub fn hold_for_measurement(&mut self, workers: Vec<Option<Worker>>) {
        self.measurement_workers = workers;
    }

    /// The measurement's processes, for it to run in.
    pub fn take_measurement_workers(&mut self) -> Vec<Option<Worker>> {
        std::mem::take(&mut self.measurement_workers)
    }

    /// True when no process of this lane is creating a context now: a device memory check of a case that begins
    /// now is then the case's alone, as far as this lane goes.
    fn quiet(&mut self) -> bool {
        self.starting() == 0
    }

    /// Kills the processes started for own-process runs that did not happen.
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
        let spec = if needs_all_devices(case) { self.several.spec().clone() } else { self.spec.clone() };
        // A case that measures waits the default way in a process of its own too (see `measuring`).
        if measures(case) {
            ChildSpec { host_waits: HostWaits::Auto, ..spec }
        } else {
            spec
        }
    }

    /// Runs `case` in a shared worker (the batch one, or the several-device one) and judges the device memory it
    /// reported (see the module documentation): a loss that is the case's ends the worker.
    fn run_shared(&mut self, case: &Case, scale: f64) -> CaseResult {
        let deadline = self.opts.case_deadline;
        let several = needs_all_devices(case);
        // The worker's own context first (it was started ahead): the case could not begin before it anyway.
        self.shared_worker(case).poll_ready(deadline, deadline);
        // A process of this lane creating its context during the case would take device memory from it.
        let quiet = self.quiet();
        let before = self.disturbance.map(Disturbance::snapshot);
        // The several-device worker's own device is this runner's alone; the others are shared with the other
        // runners. A batch worker's device is disturbed while several-device work goes on (and its check is trusted
        // only if none began during the case either: `before == after` below).
        let (own_trusted, others_trusted) = if several {
            (quiet, self.lanes == 1)
        } else {
            (quiet && before.is_none_or(|(active, _)| active == 0), false)
        };
        // A check that could not be trusted whatever happens during the case is not made: the child's
        // cudaMemGetInfo waits behind the driver's lock while another process creates its context (in the phases
        // of an H100 run, the stretches around the case took 2.9 ms each beside a start against 0.3 ms).
        let checked = own_trusted || others_trusted;
        let worker = self.shared_worker(case);
        let mut result = if checked {
            worker.run(case, scale, deadline)
        } else {
            worker.run_without_memory_check(case, scale, deadline)
        };
        let loss = worker.last_memory_loss;
        let after = self.disturbance.map(Disturbance::snapshot);
        let own_trusted = own_trusted && (several || before == after);
        let judged = [(own_trusted, loss.own_device_mib), (others_trusted, loss.other_devices_mib)];
        if !checked || judged.iter().any(|(trusted, mib)| !trusted && *mib > 0) {
            self.stats.memory_checks_skipped += 1;
        }
        let lost = judged.iter().filter(|(trusted, _)| *trusted).map(|(_, mib)| *mib).max().unwrap_or(0);
        if lost > MEMORY_SLACK_MIB && result.dirty.is_none() {
            result.dirty = Some(format!("device memory not released: {lost} MiB less free after the case"));
            let worker = self.shared_worker(case);
            let fresh = Worker::new(worker.spec().clone());
            let ended = std::mem::replace(worker, fresh);
            self.retire_worker(ended);
        }
        // The case ended the batch worker (a crash, a timeout, a sticky error, a dirty context or device memory it
        // kept): its successor is ready or starting before the next case asks.
        if !several && !measures(case) && !self.batch.is_running() {
            self.replace_batch_worker();
        }
        result
    }

    /// A batch worker the last case ended (a crash, a timeout, a sticky error, a dirty context) is replaced at once:
    /// by the spare when there is one (ready, so the next case does not wait), else by a process started now, which
    /// creates its context while the lane runs what is ready meanwhile (an own-process case, a deferred rerun). From
    /// the first replacement on, a lane of a one-GPU run keeps a spare ([`Self::keep_spare`]): a replacement started
    /// on demand waited about 1 s behind the processes the host was already creating (results/2026-11-27_node-time).
    fn replace_batch_worker(&mut self) {
        self.spare_wanted = true;
        match self.spare.take() {
            Some(spare) => {
                let ended = std::mem::replace(&mut self.batch, spare);
                self.retire_worker(ended);
            }
            None => self.batch.start_warm(&[]),
        }
    }

    /// Starts the spare batch worker when the lane wants one and has none (the lane calls this when its batch worker
    /// is not starting, so the spare never delays it). Only in a run on one GPU, where the lane is the critical
    /// path: there the cases after a crash took 3.8–4.1 s in all instead of 6.5 s. On several GPUs the host's one
    /// start queue is the bound, and a spare per lane is four more starts in it (the one 4-GPU run with spares took
    /// 49.6 s against 44.0 s without; results/2026-11-27_node-time).
    pub fn keep_spare(&mut self) {
        if self.spare_wanted
            && self.lanes == 1
            && self.spare.is_none()
            && self.opts.executors.runs_workers()
            && !self.opts.process_per_case
        {
            let mut spare = Worker::new(self.spec.clone());
            spare.start_warm(&[]);
            self.spare = Some(spare);
        }
    }

    /// The shared worker that runs `case`: the several-device one, the measuring one, or the batch one.
    fn shared_worker(&mut self, case: &Case) -> &mut Worker {
        if needs_all_devices(case) {
            return &mut self.several;
        }
        match &mut self.measuring {
            Some(measuring) if measures(case) => measuring,
            _ => &mut self.batch,
        }
    }

    /// Runs `rows`, the cases of one unit that share a process (`suite::units_of`: rows of a sweep that poison
    /// the context, or cases of one `env:`), in the process pooled for the first: one process for the unit, and
    /// one prelude when the rows poison the context ([`Worker::run_group`]). A row skipped by an expectation, or
    /// whose requirements this device does not meet, is decided without a run. Each row's result then gets the
    /// runs the runner's rules ask for, as [`DeviceRunner::run_case`] gives them (a rerun of a row, or its run at
    /// the written delays, runs it alone).
    pub fn run_pooled_group(&mut self, rows: &[&Case]) -> Vec<CaseResult> {
        let first = rows[0];
        // Each row's first run in the group, at its gate delay scale; none for a row decided without a run.
        let runs_here = |row: &Case| {
            self.expectation_for(row).is_none_or(|e| e.action != expectations::Action::Skip)
                && unmet_requirement(row, self.device).is_none()
        };
        let scales: Vec<Option<f64>> = rows.iter().map(|row| runs_here(row).then(|| self.first_scale(row))).collect();
        if !self.opts.executors.runs_workers() || self.opts.process_per_case || scales.iter().all(Option::is_none) {
            let mut results = vec![self.run_pooled(first)];
            results.extend(rows[1..].iter().map(|row| self.run_case(row)));
            return results;
        }
        let position = self.warm.iter().position(|(id, _)| *id == first.id);
        let mut own = match position.and_then(|p| self.warm.remove(p)) {
            Some((_, worker)) => worker,
            None => Worker::new(self.own_spec(first)),
        };
        let share_prelude = !first.poisons.is_empty();
        let in_group: Vec<(&Case, f64)> =
            rows.iter().zip(&scales).filter_map(|(row, scale)| scale.map(|s| (*row, s))).collect();
        let mut firsts = own.run_group(&in_group, self.opts.case_deadline, share_prelude).into_iter();
        self.retire_worker(own);
        self.pooled.retain(|(_, id)| *id != first.id);
        let (unused, kept): (VecDeque<_>, VecDeque<_>) =
            std::mem::take(&mut self.warm).into_iter().partition(|(id, _)| *id == first.id);
        self.warm = kept;
        for (_, mut worker) in unused {
            self.exiting.extend(worker.kill_in_background());
            self.count(&worker);
        }
        rows.iter()
            .zip(scales)
            .map(|(row, scale)| {
                let first_run = scale.and_then(|s| firsts.next().map(|r| (r, s)));
                self.run_case_after(row, first_run)
            })
            .collect()
    }

    /// Every run of `case` it needs (see the module documentation), and the result that counts.
    pub fn run_case(&mut self, case: &Case) -> CaseResult {
        self.run_case_after(case, None)
    }

    /// [`DeviceRunner::run_case`] for batch case `index` of a suite run (`case`), except that when its first run
    /// kills the batch worker (a crash or a timeout) and must be run again, the reruns wait for processes started
    /// now in this lane's pool, as an own-process case's runs do, and the lane goes on with other cases meanwhile:
    /// `None` then, and the result comes from [`DeviceRunner::run_pooled`] when the dispatcher hands `index` back
    /// as ready ([`LaneView::ready`]). Run inline, the reruns and the batch worker's replacement were three process
    /// starts one after another on the lane's path; a start waits behind every other process the host is creating
    /// (one at a time host-wide, about 280 ms each on a 4 x H100 host: results/2026-11-27_node-time).
    pub fn run_case_deferring(&mut self, index: usize, case: &Case) -> Option<CaseResult> {
        match self.first_runs(case, None) {
            Ok(runs) if self.may_defer(case, &runs.result) => {
                for _ in 0..self.opts.reruns {
                    let mut worker = Worker::new(self.own_spec(case));
                    worker.start_warm(&[]);
                    self.warm.push_back((case.id.clone(), worker));
                }
                self.pooled.push_back((index, case.id.clone()));
                self.deferred.push(Deferred { id: case.id.clone(), runs });
                None
            }
            Ok(runs) => Some(self.last_runs(case, runs)),
            Err(result) => Some(*result),
        }
    }

    /// Whether the reruns of batch case `case`, whose first run gave `result`, wait for processes of the pool: the
    /// first run ended the batch worker (so each rerun needs a fresh process anyway) and must be reproduced.
    fn may_defer(&self, case: &Case, result: &CaseResult) -> bool {
        self.opts.executors.runs_workers()
            && !self.opts.process_per_case
            && self.opts.reruns > 0
            && !gets_own_process(case, self.opts.baseline.as_ref())
            && !needs_all_devices(case)
            && !measures(case)
            && matches!(result.verdict.kind, VerdictKind::Crash | VerdictKind::Timeout)
            && must_reproduce(result, self.opts.baseline.as_ref())
    }

    /// [`DeviceRunner::run_case`], where `first` (when given) is the case's first run and its gate delay scale,
    /// made already by a group of rows.
    fn run_case_after(&mut self, case: &Case, first: Option<(CaseResult, f64)>) -> CaseResult {
        if let Some(at) = self.deferred.iter().position(|d| d.id == case.id) {
            let Deferred { runs, .. } = self.deferred.remove(at);
            return self.last_runs(case, runs);
        }
        match self.first_runs(case, first) {
            Ok(runs) => self.last_runs(case, runs),
            Err(result) => *result,
        }
    }

    /// The runs of `case` up to the reruns: its requirement and skip checks, its first run (or `first`), and its
    /// run at the written delays when the short delay may have decided it. `Err` is a result decided without a
    /// run (skipped, not supported).
    fn first_runs(&mut self, case: &Case, first: Option<(CaseResult, f64)>) -> Result<Going, Box<CaseResult>> {
        let started = Instant::now();
        // A row's time in its group counts as the case's own.
        let earlier_ms = first.as_ref().map_or(0, |(f, _)| f.wall_ms);
        // `suite::run_suite` never hands over a case a `skip` line names; a test binary's trial may.
        if let Some(entry) = self.expectation_for(case).filter(|e| e.action == expectations::Action::Skip) {
            let mut r = CaseResult::new(case, expectations::skipped_verdict(entry), None, started.elapsed());
            r.expectation = Some(entry.text());
            return Err(Box::new(r));
        }
        if let Some(reason) = unmet_requirement(case, self.device) {
            let mut r = CaseResult::new(case, verdict_of(VerdictKind::NotSupported, reason), None, started.elapsed());
            r.device = Some(self.device.ordinal);
            if self.opts.executors == Executors::Cxx {
                r.executor = Some(Executor::Cxx);
            }
            if self.opts.executors == Executors::Both {
                // The requirement check is the runner's, before either executor: the C++ one would not run it
                // either, so there is nothing to compare.
                let agreement = agreement::compare(&[], (&r.verdict, None), (&r.verdict, None));
                r.second = Some(SecondRun {
                    executor: Executor::Cxx,
                    verdict: r.verdict.clone(),
                    observations: None,
                    wall_ms: 0,
                    agreement,
                });
            }
            return Err(Box::new(r));
        }
        let mut attempts = Vec::new();
        let (mut result, mut scale) = match first {
            Some((first, scale)) => {
                record_attempt(&first, scale, "first", &mut attempts);
                (first, scale)
            }
            None => {
                let scale = self.first_scale(case);
                (self.attempt(case, scale, "first", &mut attempts), scale)
            }
        };
        if scale < 1.0 && needs_written_delays(case, &result.verdict) {
            scale = 1.0;
            result = self.attempt(case, scale, "written-delays", &mut attempts);
        }
        Ok(Going { result, attempts, scale, earlier_ms, spent: started.elapsed() })
    }

    /// The runs of `case` after its first ([`DeviceRunner::first_runs`]): variant stability, the reruns an
    /// unexpected result needs, the second executor's run, and the judgement against the expectations or the
    /// baseline.
    fn last_runs(&mut self, case: &Case, runs: Going) -> CaseResult {
        let started = Instant::now();
        let Going { mut result, mut attempts, scale, earlier_ms, spent } = runs;
        // The run that counts, as judged, before the runner's own kinds (flake, expected-fail) may relabel it: what
        // the second executor's run is compared with.
        let counted =
            (self.opts.executors == Executors::Both).then(|| (result.verdict.clone(), result.observations.clone()));
        if needs_stability_run(&result, self.opts.baseline.as_ref()) {
            let again = self.attempt(case, scale, "variant-stability", &mut attempts);
            if again.outcome() != result.outcome() {
                make_flake(&mut result, "a variant case showed two variants", &attempts);
            }
        }
        if must_reproduce(&result, self.opts.baseline.as_ref()) {
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
        if let Some((verdict, observations)) = counted {
            result.second = Some(self.second_run(case, &verdict, observations.as_ref()));
        }
        // An expectation line takes precedence over the baseline for the cases it names.
        match self.expectation_for(case) {
            Some(entry) => expectations::judge(entry, &mut result),
            None => {
                if let Some(section) = &self.opts.baseline {
                    baseline::judge(section, &mut result);
                }
            }
        }
        result.wall_ms = earlier_ms + (spent + started.elapsed()).as_millis() as u64;
        result.device = Some(self.device.ordinal);
        result
    }

    /// The expectation line that applies to `case` on this device, if any (a `skip` line is applied before the case
    /// is planned: `suite::run_suite`, or the test binary's trial).
    fn expectation_for(&self, case: &Case) -> Option<&'a Entry> {
        let expectations = self.opts.expectations.as_ref()?;
        let key = self.configuration.get_or_init(|| super::suite::configuration(self.device));
        expectations.entry_for(&case.id, key)
    }

    /// Ends the batch worker and returns what this runner did.
    pub fn finish(mut self) -> SuiteStats {
        self.end_own_phase();
        if let Some(mut spare) = self.spare.take() {
            self.exiting.extend(spare.kill_in_background());
            self.count(&spare);
        }
        // Every process ends at once: a context's teardown takes a while, and they need not queue.
        let batch = std::mem::replace(&mut self.batch, Worker::new(self.spec.clone()));
        self.retire_worker(batch);
        if let Some(measuring) = self.measuring.take() {
            self.retire_worker(measuring);
        }
        self.end_several_device_phase();
        for handle in self.exiting.drain(..) {
            let _ = handle.join();
        }
        self.stats.clone()
    }

    /// The gate delay scale of `case`'s first run: the run's, for a case with a delayed open, except that a case in
    /// a process of its own whose pick a short delay could decide would be confirmed at the written delays anyway:
    /// it starts there, which saves a process (a context creation) per run of the suite.
    fn first_scale(&self, case: &Case) -> f64 {
        let straight_to_written = case.needs_own_process() && short_delay_can_decide(case);
        if has_delayed_open(case) && !straight_to_written {
            self.opts.gate_delay_scale()
        } else {
            1.0
        }
    }

    fn attempt(&mut self, case: &Case, scale: f64, why: &str, attempts: &mut Vec<Attempt>) -> CaseResult {
        if !attempts.is_empty() {
            self.stats.extra_runs += 1;
        }
        let deadline = self.opts.case_deadline;
        let result = if self.opts.executors == Executors::Cxx {
            self.run_reproducer(case, scale)
        } else if self.opts.process_per_case
            || gets_own_process(case, self.opts.baseline.as_ref())
            || self.warm.iter().any(|(id, _)| *id == case.id)
        {
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
        record_attempt(&result, scale, why, attempts);
        result
    }
}

/// A case's runs so far, for [`DeviceRunner::last_runs`].
struct Going {
    result: CaseResult,
    attempts: Vec<Attempt>,
    /// The gate delay scale its runs use.
    scale: f64,
    /// Time its group spent on its first run (a row of a group), and time its first runs took here.
    earlier_ms: u64,
    spent: Duration,
}

/// A batch case whose reruns wait for processes of the lane's pool ([`DeviceRunner::run_case_deferring`]).
struct Deferred {
    id: String,
    runs: Going,
}

/// Notes the run `result` of a case (at gate delay `scale`, for the reason `why`) in its `attempts`.
fn record_attempt(result: &CaseResult, scale: f64, why: &str, attempts: &mut Vec<Attempt>) {
    attempts.push(Attempt {
        kind: result.verdict.kind,
        variant: result.verdict.variant.clone(),
        gate_delay_ms: (scale * WRITTEN_GATE_DELAY.as_secs_f64() * 1000.0 * 100.0).round() / 100.0,
        why: why.to_owned(),
        messages: match result.verdict.kind {
            VerdictKind::Pass | VerdictKind::Variant => Vec::new(),
            _ => result.verdict.messages.clone(),
        },
    });
}

impl DeviceRunner<'_> {
    /// Runs `case`'s compiled reproducer (the C++ executor), where the Rust executor's worker would run it, with
    /// its gate delays scaled as a worker's would be.
    fn run_reproducer(&self, case: &Case, scale: f64) -> CaseResult {
        let reproducers = Reproducers { dir: self.opts.repro_dir.clone().unwrap_or_default() };
        reproducers.run(case, &self.placement(case), scale, self.opts.case_deadline)
    }

    /// The GPUs a reproducer of `case` sees, as a worker for it would: its own device alone (restricted as the
    /// batch worker is), or every device for a case that needs several, its devices counted from this one.
    /// A case's own `CUDA_VISIBLE_DEVICES` wins over the runner's, as for a worker (`worker::with_uuid` fills its
    /// `{uuid}`).
    /// Its host threads wait as that worker's would: blocking under `--host-waits block`, except in a case that
    /// measures (see `measuring`).
    fn placement(&self, case: &Case) -> Placement {
        let uuid = self.spec.uuid.clone();
        let blocking_waits = self.opts.host_waits == HostWaits::Block && !measures(case);
        if super::worker::sets_visible_devices(&case.env) {
            Placement { visible: None, ordinals: vec![0], uuid, blocking_waits }
        } else if needs_all_devices(case) {
            let ordinals =
                (0..case.device_count()).map(|i| self.device.case_device(i).unwrap_or(self.device.ordinal)).collect();
            Placement { visible: None, ordinals, uuid, blocking_waits }
        } else {
            Placement { visible: self.spec.visible.clone(), ordinals: vec![self.spec.ordinal], uuid, blocking_waits }
        }
    }

    /// With `--executor both`: the C++ executor's run of `case` (at the written delays), compared with the Rust
    /// executor's run that counted.
    fn second_run(&self, case: &Case, verdict: &Verdict, observations: Option<&Observations>) -> SecondRun {
        let cxx = self.run_reproducer(case, 1.0);
        let identities = agreement::identity_ops(case);
        let agreement =
            agreement::compare(&identities, (verdict, observations), (&cxx.verdict, cxx.observations.as_ref()));
        SecondRun {
            executor: Executor::Cxx,
            verdict: cxx.verdict,
            observations: cxx.observations,
            wall_ms: cxx.wall_ms,
            agreement,
        }
    }

    fn retire_worker(&mut self, mut worker: Worker) {
        self.exiting.extend(worker.retire_in_background());
        self.count(&worker);
    }

    fn count(&mut self, worker: &Worker) {
        self.stats.processes_started += worker.started;
        self.stats.ready.extend(worker.ready.iter().copied());
        self.stats.starts.extend(worker.starts.iter().copied());
    }
}
