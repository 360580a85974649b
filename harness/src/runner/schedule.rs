//! Which device's lane runs what next: the schedule of a suite run over N GPUs, as pure code ([`Dispatcher`]), so
//! that it can be tested on a simulated clock ([`simulate`]) without a GPU, and [`super::suite::run_suite`] drives
//! the same code with real processes.
//!
//! What the schedule must respect, and why it is shaped as it is:
//!
//! - **One case at a time per GPU.** Two CUDA contexts on one GPU time-slice: two shards of the suite on one H100
//!   took as long as one (39.1 s against 39 s) and four longer. So a lane runs one case at a time. That holds for
//!   the cases that fault their context too, though most of their time is the driver's recovery: run beside the
//!   batch work, one at a time per lane, they slowed the batch cases beside them (the cases' time 36.8 s → 51.9 s,
//!   frees and allocations most) and the run did not gain (42.3 / 43.3 s against 46.1 / 43.9 s, interleaved on one
//!   H100; results/2026-11-28_node-time-2).
//! - **Process starts are the scarce resource.** A case that needs a process of its own (`env:`, `own-process:`,
//!   `poisons-context:`) pays a process start and a context creation (≈190 ms driver initialisation + ≈110 ms
//!   context on a 4 × H100 host), and the host creates them one at a time whatever the device: four started at once
//!   on four GPUs took longer than four on one (results/2026-11-27_node-time). So each lane keeps a small pool of
//!   processes started ahead for its next own-process cases ([`POOL_PER_LANE`]) and runs an own-process case only
//!   once its process is ready, batch cases meanwhile: the GPU never waits for a context while there is batch work.
//! - **A measurement runs with nothing else on its GPU**, and one at a time host-wide (bandwidths and launch times
//!   that the seeds' claims are judged on, and the figures): on several GPUs one lane (the last) takes them first
//!   and starts no processes ahead until they are done, while the others run cases; on one GPU they come when no
//!   process is starting, that is after the last own-process case.
//! - **A case that faults its context waits for its lane's process starts to end**, the lane running batch cases
//!   meanwhile and starting no process ahead of it: the driver's recovery from a fault and other processes' context
//!   creation slow each other down ([`Need::poisons`]).
//! - **Several-device cases** (`requires: devices >= 2`) run in one worker that sees every GPU, on the first lane,
//!   as one block before anything else there (their worker's contexts on every GPU disturb the other lanes'
//!   device-memory checks while it lives); never while a measurement runs, since they touch the measuring GPU too.
//!
//! The lanes ask for work when free; nothing is planned ahead but the order of the queues, so a case that takes
//! longer than expected costs only itself.

use std::collections::VecDeque;

/// Processes a lane keeps started ahead for its next own-process cases. Four, as the earlier runner started ahead on
/// its first GPU: on one H100 with 4 busy loops per core, four creators got twice the CPU share of two (89.9 s
/// against 105.6 s, context waits 6.6 s against 18.4 s; results/2026-11-26_load-claims_h100/README.md).
pub const POOL_PER_LANE: usize = 4;

/// What the schedule needs to know of a case.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Need {
    /// It runs in a process of its own (started ahead in a lane's pool).
    pub own_process: bool,
    /// It measures: nothing else on its GPU, one measurement at a time host-wide.
    pub measures: bool,
    /// It needs several devices: the several-device block of the first lane.
    pub several: bool,
    /// Processes it is expected to use when it runs in its own (2 for a case that can pick a variant).
    pub runs: usize,
    /// It faults its context on purpose (`poisons-context:`). While batch work is left, it begins only once no
    /// process of its lane is making its context, and the lane starts none ahead while it waits: on an H100 a
    /// trap's synchronize took 1.1–1.3 s while three contexts were being made beside it, which themselves took
    /// over 2 s, against 0.34 s for a trap alone (results/2026-11-28_close-30_h100).
    pub poisons: bool,
}

/// One piece of work a lane is told to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Task {
    /// An own-process case whose process (started ahead on this lane) is ready.
    Own(usize),
    /// A batch case in the lane's batch worker.
    Batch(usize),
    /// A case that measures (in the lane's measuring worker, or its own process).
    Measure(usize),
    /// A case of the several-device block.
    Several(usize),
    /// The several-device block is over: end its worker (its contexts on every GPU).
    EndSeveral,
    /// The figures (measured after the cases when there is one GPU): a measurement like the others.
    Figures,
}

/// What a lane does next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Run(Task),
    /// Nothing it may run now, but something may come: wait for a process of its pool or another lane.
    Wait,
    /// Nothing left for this lane.
    Finish,
}

/// What a lane tells the dispatcher of its processes when it asks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LaneView {
    /// An own-process case whose processes are all ready (the first such in the pool's order).
    pub ready: Option<usize>,
    /// Processes in its pool (started ahead, not yet used), ready or not.
    pub pooled: usize,
    /// Processes of this lane still creating their contexts (pool, batch or measuring worker).
    pub starting: usize,
}

/// Hands out the cases of a run to the lanes (see the module documentation).
#[derive(Debug)]
pub struct Dispatcher {
    needs: Vec<Need>,
    lanes: usize,
    /// Own-process cases not yet given to a pool, in order.
    own: VecDeque<usize>,
    several: VecDeque<usize>,
    measuring: VecDeque<usize>,
    ordinary: VecDeque<usize>,
    figures: bool,
    /// A measurement (or the figures) is running.
    exclusive: bool,
    /// The lane running the several-device block.
    several_on: Option<usize>,
    /// The several-device block's worker is starting (creating a context on every GPU): until its first case ends.
    several_starting: bool,
    /// The several-device cases use GPUs other than the measuring lane's: a measurement may run beside them, once
    /// their worker has its contexts.
    several_apart: bool,
    /// Lanes that may keep a pool (`--own-processes`): all, or the first only.
    pooling: Vec<bool>,
}

impl Dispatcher {
    /// A dispatcher of the cases `needs` (indices into it) over `lanes` lanes, with the figures to measure when
    /// `figures`; with `every_lane` false only the first lane starts processes for own-process cases.
    pub fn new(needs: &[Need], lanes: usize, figures: bool, every_lane: bool) -> Dispatcher {
        let lanes = lanes.max(1);
        let mut d = Dispatcher {
            needs: needs.to_vec(),
            lanes,
            own: VecDeque::new(),
            several: VecDeque::new(),
            measuring: VecDeque::new(),
            ordinary: VecDeque::new(),
            figures,
            exclusive: false,
            several_on: None,
            several_starting: false,
            several_apart: false,
            pooling: (0..lanes).map(|l| every_lane || l == 0).collect(),
        };
        for (i, n) in needs.iter().enumerate() {
            if n.several {
                d.several.push_back(i);
            } else if n.measures {
                d.measuring.push_back(i);
            } else if n.own_process {
                d.own.push_back(i);
            } else {
                d.ordinary.push_back(i);
            }
        }
        d
    }

    /// Tells the dispatcher that the several-device cases use none of the measuring lane's GPU (on a host with more
    /// GPUs than they need): a measurement may then run while they do, though not while their worker starts.
    pub fn several_apart_from_measuring(mut self, apart: bool) -> Dispatcher {
        self.several_apart = apart && self.lanes > 1;
        self
    }

    /// The lane that measures: the last (on one GPU, the only one).
    pub fn measuring_lane(&self) -> usize {
        self.lanes - 1
    }

    /// The lane of the several-device block: the first.
    pub const SEVERAL_LANE: usize = 0;

    fn measurements_left(&self) -> bool {
        !self.measuring.is_empty() || self.figures
    }

    /// Whether `lane` should start the processes of the measurement (the figures) now: the measuring lane, while
    /// measurements are left; on several GPUs at once (it runs batch cases while they start, and measures once they
    /// are ready), on one once no own-process case is left to start a process for (before, they would only queue
    /// behind the pool's).
    pub fn measurement_processes_due(&self, lane: usize) -> bool {
        lane == self.measuring_lane() && self.figures && (self.lanes > 1 || self.own.is_empty())
    }

    /// Whether `lane` may start processes ahead now: not the measuring lane of a run over several GPUs while
    /// measurements are left (a process creating its context would share the measuring GPU).
    fn may_pool(&self, lane: usize) -> bool {
        self.pooling[lane]
            && !(self.lanes > 1 && lane == self.measuring_lane() && self.measurements_left())
            && !(lane == Self::SEVERAL_LANE && self.several_left())
    }

    /// Whether the several-device block has not ended yet. The first lane runs it before anything else and starts
    /// no process ahead until it is over: a context created on its GPU meanwhile would look like memory a
    /// several-device case did not give back.
    fn several_left(&self) -> bool {
        !self.several.is_empty() || self.several_on.is_some()
    }

    /// Whether the lane's ready own-process case faults its context ([`Need::poisons`]).
    fn poisoning_ready(&self, view: LaneView) -> bool {
        view.ready.is_some_and(|i| self.needs[i].poisons)
    }

    /// Whether `lane` begins with the several-device block (then it starts no batch worker ahead either).
    pub fn begins_with_several(&self, lane: usize) -> bool {
        lane == Self::SEVERAL_LANE && self.several_left()
    }

    /// The own-process cases `lane` should start processes for now (in the order it will run them), given what it
    /// holds (`view`).
    pub fn to_start(&mut self, lane: usize, view: LaneView) -> Vec<usize> {
        let mut out = Vec::new();
        // A ready case that faults its context runs next, with no context being made beside it.
        if !self.may_pool(lane) || self.poisoning_ready(view) {
            return out;
        }
        let mut pooled = view.pooled;
        while pooled < POOL_PER_LANE {
            let Some(i) = self.own.pop_front() else { break };
            let runs = self.needs[i].runs.max(1);
            pooled += runs;
            out.push(i);
        }
        out
    }

    /// What `lane` does next, given what it holds (`view`). A task that measures or belongs to the several-device
    /// block must be reported [`Dispatcher::done`] when it ends.
    pub fn next(&mut self, lane: usize, view: LaneView) -> Step {
        if self.several_on == Some(lane) {
            return Step::Run(match self.several.pop_front() {
                Some(i) => Task::Several(i),
                None => {
                    self.several_on = None;
                    self.several_starting = false;
                    Task::EndSeveral
                }
            });
        }
        if let Some(i) = view.ready {
            let waits_for_starts = self.poisoning_ready(view) && view.starting > 0 && !self.ordinary.is_empty();
            if !waits_for_starts {
                return Step::Run(Task::Own(i));
            }
        }
        if lane == Self::SEVERAL_LANE && !self.several.is_empty() && !self.exclusive {
            self.several_on = Some(lane);
            self.several_starting = true;
            return self.next(lane, view);
        }
        let measures_here = lane == self.measuring_lane();
        // On one GPU, measurements wait until no own-process case is left to start a process for.
        let quiet = view.starting == 0 && (self.lanes > 1 || (self.own.is_empty() && view.pooled == 0));
        let several_clear = self.several_on.is_none() || (self.several_apart && !self.several_starting);
        let may_measure = !self.exclusive && several_clear && quiet;
        if measures_here && self.measurements_left() && may_measure {
            self.exclusive = true;
            return Step::Run(match self.measuring.pop_front() {
                Some(i) => Task::Measure(i),
                None => {
                    self.figures = false;
                    Task::Figures
                }
            });
        }
        // The measuring lane of several GPUs keeps to its measurements while they last (a batch case would only
        // delay them: they are the longest chain of such a run), unless another measurement or the several-device
        // block keeps it from them, or its processes are starting: then it runs batch cases meanwhile.
        let blocked = self.exclusive || !several_clear;
        // While processes of the lane are starting (its workers, the figures'), it runs batch cases: it could not
        // measure before they are ready.
        let holds_for_measuring =
            self.lanes > 1 && measures_here && self.measurements_left() && !blocked && view.starting == 0;
        if !holds_for_measuring {
            if let Some(i) = self.ordinary.pop_front() {
                return Step::Run(Task::Batch(i));
            }
        }
        let more_own = view.pooled > 0 || (self.may_pool(lane) && !self.own.is_empty());
        let more_measuring = measures_here && self.measurements_left();
        let more_several = lane == Self::SEVERAL_LANE && !self.several.is_empty();
        // A lane that may not pool now may later (the measuring lane once its measurements are done).
        let pool_later = self.pooling[lane] && !self.own.is_empty();
        if more_own || more_measuring || more_several || pool_later {
            Step::Wait
        } else {
            Step::Finish
        }
    }

    /// A measurement (or the figures) has ended: the next may start; or a case of the several-device block (its
    /// worker has its contexts now).
    pub fn done(&mut self, task: Task) {
        match task {
            Task::Measure(_) | Task::Figures => self.exclusive = false,
            Task::Several(_) => self.several_starting = false,
            _ => {}
        }
    }

    /// A lane that ended early (its thread could not go on): the cases it would have taken go to no one else,
    /// and what it held must not block the others.
    pub fn lane_gone(&mut self, lane: usize) {
        self.pooling[lane] = false;
        if self.several_on == Some(lane) {
            self.several_on = None;
            self.several_starting = false;
        }
    }
}

/// A simulated run's timings: what each case costs, and what a process start costs.
#[derive(Debug, Clone)]
pub struct SimCosts {
    /// Each case's time on its lane once it runs, in milliseconds.
    pub case_ms: Vec<u64>,
    /// A process start and context creation, in milliseconds; the host creates one at a time.
    pub start_ms: u64,
    /// The figures, in milliseconds.
    pub figures_ms: u64,
}

/// What a simulated run gave: when each lane ended and what it did.
#[derive(Debug, Clone, Default)]
pub struct SimRun {
    pub makespan_ms: u64,
    /// Per lane: (busy ms, ms waiting, end ms, tasks run).
    pub lanes: Vec<(u64, u64, u64, usize)>,
    /// Every task in the order it started: (lane, start ms, task).
    pub log: Vec<(usize, u64, Task)>,
}

/// Runs the [`Dispatcher`] on a simulated clock: `lanes` lanes, process starts queued host-wide one at a time
/// (each lane's batch worker first, then the pools' processes in the order asked), cases taking `costs`.
/// Deterministic: ties go to the lower lane.
/// The several-device cases are taken to use the first two GPUs (as the suite's do).
pub fn simulate(needs: &[Need], costs: &SimCosts, lanes: usize, figures: bool, every_lane: bool) -> SimRun {
    #[derive(Clone)]
    struct Pooled {
        case: usize,
        ready_at: u64,
    }
    let lanes = lanes.max(1);
    let mut d = Dispatcher::new(needs, lanes, figures, every_lane).several_apart_from_measuring(lanes > 2);
    // The host's context creator: when it is free next.
    let mut creator_free = 0u64;
    let mut create = |now: u64| {
        let at = creator_free.max(now) + costs.start_ms;
        creator_free = at;
        at
    };
    // Each lane's batch worker is started at once (the measuring lane's measuring worker with it).
    let mut free_at: Vec<u64> = (0..lanes).map(|_| create(0)).collect();
    let mut pools: Vec<VecDeque<Pooled>> = vec![VecDeque::new(); lanes];
    let mut finished = vec![false; lanes];
    let mut waited = vec![0u64; lanes];
    let mut busy = vec![0u64; lanes];
    let mut count = vec![0usize; lanes];
    // A task that ends at a time: (end, lane, task) — its `done` is reported then.
    let mut running: Vec<(u64, usize, Task)> = Vec::new();
    let mut log = Vec::new();
    let mut guard = 0usize;
    while finished.iter().any(|f| !f) {
        guard += 1;
        assert!(guard < 1_000_000, "the simulation does not end");
        // The next lane to act: the earliest free one (ties to the lower lane).
        let Some(lane) = (0..lanes).filter(|&l| !finished[l]).min_by_key(|&l| (free_at[l], l)) else { break };
        let now = free_at[lane];
        // Tasks of other lanes that ended by now release what they held.
        running.retain(|&(end, _, task)| {
            if end <= now {
                d.done(task);
                false
            } else {
                true
            }
        });
        let view = |pool: &VecDeque<Pooled>| LaneView {
            // A case whose every process is ready (a second run waits for none).
            ready: pool
                .iter()
                .find(|p| pool.iter().filter(|q| q.case == p.case).all(|q| q.ready_at <= now))
                .map(|p| p.case),
            pooled: pool.len(),
            starting: pool.iter().filter(|p| p.ready_at > now).count(),
        };
        for case in d.to_start(lane, view(&pools[lane])) {
            for _ in 0..needs[case].runs.max(1) {
                let ready_at = create(now);
                pools[lane].push_back(Pooled { case, ready_at });
            }
        }
        match d.next(lane, view(&pools[lane])) {
            Step::Run(task) => {
                let ms = match task {
                    // Each run in its own process: a second run (variant stability) waits for its process too.
                    Task::Own(i) => {
                        let end = pools[lane]
                            .iter()
                            .filter(|p| p.case == i)
                            .fold(now, |t, p| t.max(p.ready_at) + costs.case_ms[i]);
                        pools[lane].retain(|p| p.case != i);
                        end - now
                    }
                    Task::Batch(i) | Task::Several(i) => costs.case_ms[i],
                    // A measuring own-process case starts its process cold, inside its measurement.
                    Task::Measure(i) => costs.case_ms[i] + if needs[i].own_process { costs.start_ms } else { 0 },
                    Task::EndSeveral => 0,
                    Task::Figures => costs.figures_ms,
                };
                log.push((lane, now, task));
                busy[lane] += ms;
                count[lane] += 1;
                free_at[lane] = now + ms;
                if matches!(task, Task::Measure(_) | Task::Figures | Task::Several(_)) {
                    running.push((now + ms, lane, task));
                }
            }
            Step::Wait => {
                // Until the next event: a process of its pool ready, or another lane's task ending.
                let next_ready = pools[lane].iter().map(|p| p.ready_at).filter(|&t| t > now).min();
                let next_end = running.iter().map(|r| r.0).filter(|&t| t > now).min();
                let others = (0..lanes).filter(|&l| l != lane && !finished[l]).map(|l| free_at[l]).filter(|&t| t > now);
                let until = [next_ready, next_end, others.min()].into_iter().flatten().min().unwrap_or(now + 1);
                waited[lane] += until - now;
                free_at[lane] = until;
            }
            Step::Finish => {
                finished[lane] = true;
                d.lane_gone(lane);
            }
        }
    }
    let lanes_out: Vec<(u64, u64, u64, usize)> =
        (0..lanes).map(|l| (busy[l], waited[l], free_at[l], count[l])).collect();
    SimRun { makespan_ms: free_at.iter().copied().max().unwrap_or(0), lanes: lanes_out, log }
}

/// The least makespan any schedule could reach under the rules (milliseconds): the work spread evenly over the
/// lanes, the measurements one after another, the several-device block, the host's process starts one after
/// another (the batch workers' and every own-process run's) followed by the shortest own-process run, and the
/// longest single case.
pub fn lower_bound(needs: &[Need], costs: &SimCosts, lanes: usize, figures: bool) -> u64 {
    let lanes = lanes.max(1) as u64;
    let run_ms = |i: usize| costs.case_ms[i] * if needs[i].own_process { needs[i].runs.max(1) as u64 } else { 1 };
    let total: u64 = (0..needs.len()).map(run_ms).sum::<u64>() + if figures { costs.figures_ms } else { 0 };
    let measuring: u64 = (0..needs.len()).filter(|&i| needs[i].measures).map(run_ms).sum::<u64>()
        + if figures { costs.figures_ms } else { 0 };
    let several: u64 = (0..needs.len()).filter(|&i| needs[i].several).map(run_ms).sum();
    // Own-process cases started ahead (one that measures starts its process cold, inside its measurement).
    let own: Vec<usize> =
        (0..needs.len()).filter(|&i| needs[i].own_process && !needs[i].several && !needs[i].measures).collect();
    let starts: u64 = own.iter().map(|&i| needs[i].runs.max(1) as u64).sum::<u64>() + lanes;
    let shortest_own = own.iter().map(|&i| run_ms(i)).min().unwrap_or(0);
    let longest = (0..needs.len()).map(run_ms).max().unwrap_or(0);
    [total.div_ceil(lanes), measuring, several, starts * costs.start_ms + shortest_own, longest]
        .into_iter()
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A deterministic stand-in for the suite as it stands (d228590, one H100: 560 cases, 26.6 s of cases' own
    /// time): 41 own-process cases (5 of them picking a variant, so two processes each) of 120–370 ms in a fresh
    /// process, 33 several-device cases of 40–160 ms, 13 measuring ones of 200–460 ms, the figures 5.4 s, and
    /// ordinary cases of 5–95 ms with one of 1.2 s; a process start 250 ms.
    fn suite_like() -> (Vec<Need>, SimCosts) {
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = |span: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % span
        };
        let mut needs = Vec::new();
        let mut case_ms = Vec::new();
        for i in 0..560 {
            let (need, ms) = match i % 14 {
                // Spread through the suite's order as the areas are.
                0 if i / 14 < 41 => {
                    let runs = if i % 8 == 0 { 2 } else { 1 };
                    (Need { own_process: true, runs, ..Need::default() }, 120 + next(250))
                }
                3 if i / 14 < 33 => (Need { several: true, runs: 1, ..Need::default() }, 40 + next(120)),
                7 if i / 14 < 13 => (Need { measures: true, runs: 1, ..Need::default() }, 200 + next(260)),
                _ if i == 301 => (Need { runs: 1, ..Need::default() }, 1200),
                _ => (Need { runs: 1, ..Need::default() }, 5 + next(90)),
            };
            needs.push(need);
            case_ms.push(ms);
        }
        (needs, SimCosts { case_ms, start_ms: 250, figures_ms: 5400 })
    }

    /// Every case runs exactly once, each in the kind of task its needs call for, and the rules hold: one
    /// measurement at a time host-wide and never during the several-device block, which runs on the first lane.
    fn check_rules(needs: &[Need], costs: &SimCosts, run: &SimRun, lanes: usize) {
        let mut seen = vec![0; needs.len()];
        let mut figures = 0;
        for &(lane, _, task) in &run.log {
            match task {
                Task::Own(i) => {
                    assert!(needs[i].own_process && !needs[i].measures && !needs[i].several, "{i}");
                    seen[i] += 1;
                }
                Task::Batch(i) => {
                    assert!(!needs[i].own_process && !needs[i].measures && !needs[i].several, "{i}");
                    seen[i] += 1;
                }
                Task::Measure(i) => {
                    assert!(needs[i].measures, "{i}");
                    assert_eq!(lane, lanes - 1, "measurements on the measuring lane");
                    seen[i] += 1;
                }
                Task::Several(i) => {
                    assert!(needs[i].several, "{i}");
                    assert_eq!(lane, 0, "the several-device block is the first lane's");
                    seen[i] += 1;
                }
                Task::Figures => figures += 1,
                Task::EndSeveral => {}
            }
        }
        assert!(seen.iter().all(|&n| n == 1), "every case once: {seen:?}");
        assert_eq!(figures, 1);
        // Exclusive intervals: measurements and the several-device block (from its first case to its end).
        let span = |task: &Task, start: u64| {
            let ms = match *task {
                Task::Measure(i) => costs.case_ms[i] + if needs[i].own_process { costs.start_ms } else { 0 },
                Task::Figures => costs.figures_ms,
                _ => 0,
            };
            (start, start + ms)
        };
        let mut exclusive: Vec<(u64, u64)> = run
            .log
            .iter()
            .filter(|(_, _, t)| matches!(t, Task::Measure(_) | Task::Figures))
            .map(|(_, s, t)| span(t, *s))
            .collect();
        let several: Vec<(u64, Task)> = run
            .log
            .iter()
            .filter(|(_, _, t)| matches!(t, Task::Several(_) | Task::EndSeveral))
            .map(|(_, s, t)| (*s, *t))
            .collect();
        if let (Some((first, task)), Some((last, _))) = (several.first(), several.last()) {
            // With more GPUs than the several-device cases use, only their worker's start (their first case)
            // excludes a measurement; else the whole block.
            let first_case = match task {
                Task::Several(i) => costs.case_ms[*i],
                _ => 0,
            };
            exclusive.push((*first, if lanes > 2 { first + first_case } else { *last }));
        }
        exclusive.sort();
        for pair in exclusive.windows(2) {
            assert!(pair[0].1 <= pair[1].0, "exclusive work overlaps: {pair:?}");
        }
    }

    #[test]
    fn the_makespan_is_within_15_percent_of_the_least_possible_on_1_2_4_and_8_gpus() {
        let (needs, costs) = suite_like();
        for lanes in [1, 2, 4, 8] {
            let run = simulate(&needs, &costs, lanes, true, true);
            check_rules(&needs, &costs, &run, lanes);
            let ideal = lower_bound(&needs, &costs, lanes, true);
            // The batch workers' starts before any case can run.
            let startup = lanes as u64 * costs.start_ms;
            let bound = ideal * 115 / 100 + startup;
            assert!(
                run.makespan_ms <= bound,
                "{lanes} lanes: makespan {} ms, least possible {ideal} ms, bound {bound} ms; lanes {:?}",
                run.makespan_ms,
                run.lanes
            );
        }
    }

    /// The old schedule's critical path, the first GPU running every own-process case (and waiting for their
    /// processes) before any batch case, is gone: on one GPU the own-process cases' starts are hidden behind batch
    /// work, so the lane waits for no process while batch cases are left.
    #[test]
    fn one_gpu_never_waits_for_a_process_while_batch_cases_are_left() {
        let (needs, costs) = suite_like();
        let run = simulate(&needs, &costs, 1, true, true);
        let last_batch = run.log.iter().filter(|(_, _, t)| matches!(t, Task::Batch(_))).map(|(_, s, _)| *s).max();
        let (busy, waited, end, _) = run.lanes[0];
        assert_eq!(busy + waited + costs.start_ms, end, "a lane's time is its work, its waits and its worker's start");
        // The only waits: none before the last batch case started (the pool kept ahead).
        let mut t = costs.start_ms;
        for &(_, start, task) in &run.log {
            if Some(start) <= last_batch {
                assert_eq!(start, t, "the lane idled before {task:?}");
            }
            t = start
                + match task {
                    Task::Own(i) => costs.case_ms[i] * needs[i].runs.max(1) as u64,
                    Task::Batch(i) | Task::Several(i) | Task::Measure(i) => costs.case_ms[i],
                    Task::Figures => costs.figures_ms,
                    Task::EndSeveral => 0,
                };
        }
    }

    /// More GPUs never make the simulated suite slower, but for the batch workers of the added lanes: each is one
    /// more process start on the host's one-at-a-time creator, which bounds 4 and 8 GPUs alike (the own-process
    /// cases' starts), so 8 are planned and tested but gain nothing over 4 with the suite as it stands.
    #[test]
    fn more_gpus_are_never_slower_but_for_their_workers_starts() {
        let (needs, costs) = suite_like();
        let lanes = [1u64, 2, 4, 8];
        let spans: Vec<u64> =
            lanes.iter().map(|&l| simulate(&needs, &costs, l as usize, true, true).makespan_ms).collect();
        for (pair, l) in spans.windows(2).zip(lanes.windows(2)) {
            assert!(pair[1] <= pair[0] + (l[1] - l[0]) * costs.start_ms, "{spans:?}");
        }
        assert!(spans[1] * 100 <= spans[0] * 55, "two GPUs at least 1.8x one: {spans:?}");
    }

    /// With `--own-processes first-device` only the first lane starts processes ahead and runs own-process cases.
    #[test]
    fn first_device_keeps_own_process_cases_on_the_first_lane() {
        let (needs, costs) = suite_like();
        let run = simulate(&needs, &costs, 4, true, false);
        check_rules(&needs, &costs, &run, 4);
        assert!(run.log.iter().filter(|(_, _, t)| matches!(t, Task::Own(_))).all(|(lane, _, _)| *lane == 0));
    }

    /// The measurement's processes are started ahead on the measuring lane (on several GPUs at once, on one once no
    /// own-process case is left to pool), and while they start the measuring lane of several GPUs runs batch cases.
    #[test]
    fn the_measuring_lane_runs_batch_cases_while_the_measurements_processes_start() {
        let measure = Need { measures: true, runs: 1, ..Need::default() };
        let batch = Need { runs: 1, ..Need::default() };
        let mut d = Dispatcher::new(&[measure, batch, batch], 2, true, true);
        assert!(d.measurement_processes_due(1) && !d.measurement_processes_due(0));
        let starting = LaneView { ready: None, pooled: 0, starting: 4 };
        assert_eq!(d.next(1, starting), Step::Run(Task::Batch(1)));
        assert_eq!(d.next(1, LaneView::default()), Step::Run(Task::Measure(0)));
        let own = Need { own_process: true, runs: 1, ..Need::default() };
        let mut one = Dispatcher::new(&[own, batch], 1, true, true);
        assert!(!one.measurement_processes_due(0));
        assert_eq!(one.to_start(0, LaneView::default()), vec![0]);
        assert!(one.measurement_processes_due(0));
        // Without figures there is nothing to start.
        assert!(!Dispatcher::new(&[batch], 2, false, true).measurement_processes_due(1));
    }

    /// On several GPUs the measuring lane starts no process ahead while measurements are left, and on one GPU no
    /// measurement starts while an own-process case is left.
    #[test]
    fn measurements_wait_for_no_process_starting_on_their_gpu() {
        let (needs, costs) = suite_like();
        let one = simulate(&needs, &costs, 1, true, true);
        let first_measure = one.log.iter().position(|(_, _, t)| matches!(t, Task::Measure(_) | Task::Figures));
        let last_own = one.log.iter().rposition(|(_, _, t)| matches!(t, Task::Own(_)));
        assert!(first_measure > last_own, "{first_measure:?} {last_own:?}");
        let four = simulate(&needs, &costs, 4, true, true);
        let last_measure = four
            .log
            .iter()
            .filter(|(_, _, t)| matches!(t, Task::Measure(_) | Task::Figures))
            .map(|(_, s, _)| *s)
            .max()
            .unwrap_or(0);
        assert!(four.log.iter().all(|(lane, s, t)| !(matches!(t, Task::Own(_)) && *lane == 3 && *s <= last_measure)));
    }
}

/// The schedule of the suite as a report recorded it, predicted on the simulated clock (a tool, not a check:
/// `SCHEDULE_REPORT=full.json.gz cargo test -p cuda-conformance-harness --lib predict -- --ignored --nocapture`).
/// Each case takes its recorded `wall_ms` (for an own-process case that includes its process's first-use costs,
/// not its start); a process start takes `SCHEDULE_START_MS` (default 250) and the figures the report's
/// `figures_s`.
#[cfg(test)]
mod predict {
    use super::*;
    use crate::runner::suite::needs_of;
    use crate::runner::RunOptions;
    use std::collections::BTreeMap;

    #[test]
    #[ignore = "a tool: needs SCHEDULE_REPORT"]
    fn predict() {
        let Ok(path) = std::env::var("SCHEDULE_REPORT") else { return };
        let report = crate::record::Report::read(std::path::Path::new(&path)).unwrap_or_else(|e| panic!("{e}"));
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
        let all = crate::case::suite::load_dir(&dir).unwrap_or_else(|d| panic!("{d:?}"));
        let cases: Vec<&crate::case::ast::Case> =
            report.cases.iter().filter_map(|r| all.iter().find(|c| c.id == r.id)).collect();
        let walls: Vec<u64> = report
            .cases
            .iter()
            .filter(|r| all.iter().any(|c| c.id == r.id))
            .map(|r| r.wall_ms / r.attempts.len().max(1) as u64)
            .collect();
        // With `SCHEDULE_BASELINE=FILE`, the cases judged against its section for the report's GPU, driver and
        // runtime, as `run --baseline` would (a row it expects to crash gets a process of its own).
        let baseline = std::env::var("SCHEDULE_BASELINE").ok().map(|file| {
            let baseline =
                crate::report::baseline::Baseline::read(std::path::Path::new(&file)).unwrap_or_else(|e| panic!("{e}"));
            let key = crate::report::baseline::Key::of(&report.provenance);
            baseline.section(&key).unwrap_or_else(|e| panic!("{e}")).clone()
        });
        let opts = RunOptions { baseline, ..RunOptions::default() };
        // The processes a run plans for its own-process units (`units_of`), by why they need one: what bounds a
        // node (results/2026-11-28_node-time-2). Reruns, replacements after a dirty case, and the workers come on
        // top.
        let units = crate::runner::suite::units_of(&cases, &opts);
        let mut needs = needs_of(&cases, &opts);
        let mut planned: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
        for unit in &units {
            let head = cases[unit[0]];
            let need = needs[unit[0]];
            if !need.own_process || need.several || need.measures {
                continue;
            }
            let why = if !head.poisons.is_empty() {
                "faults its context"
            } else if head.own_process.is_some() {
                "own-process"
            } else if !head.env.is_empty() {
                "env"
            } else if crate::runner::policy::peers_ahead(head) > 0 {
                "peers (one more process per peer)"
            } else {
                "the baseline expects a crash or a timeout"
            };
            if std::env::var_os("SCHEDULE_LIST").is_some() {
                println!("own-process unit: {why}: {} ({} rows) env {:?}", head.id, unit.len(), head.env);
            }
            let entry = planned.entry(why).or_default();
            *entry = (entry.0 + 1, entry.1 + need.runs.max(1));
        }
        println!("planned own-process (units, processes) by why: {planned:?}");
        // Where the recorded time went, by what each case needs (a case's wall includes its reruns).
        let mut by_kind: BTreeMap<&str, (usize, u64)> = BTreeMap::new();
        for (r, n) in report.cases.iter().filter(|r| all.iter().any(|c| c.id == r.id)).zip(&needs) {
            let kind = match (n.several, n.measures, n.own_process) {
                (true, _, _) => "several-device",
                (_, true, _) => "measuring",
                (_, _, true) => "own-process",
                _ => "batch",
            };
            if std::env::var_os("SCHEDULE_LIST").is_some() {
                println!("{kind} {} {}", r.wall_ms, r.id);
            }
            let entry = by_kind.entry(kind).or_default();
            *entry = (entry.0 + 1, entry.1 + r.wall_ms);
        }
        println!("recorded (cases, ms) by kind: {by_kind:?}");
        let start_ms = std::env::var("SCHEDULE_START_MS").ok().and_then(|v| v.parse().ok()).unwrap_or(250);
        let figures_ms = report.run.as_ref().and_then(|r| r.phases.as_ref()).and_then(|p| p.figures_s).unwrap_or(0.0);
        let costs = SimCosts { case_ms: walls, start_ms, figures_ms: (figures_ms * 1000.0) as u64 };
        for lanes in [1, 2, 4, 8] {
            // On one GPU the several-device cases are not-supported: no time.
            let mut costs = costs.clone();
            if lanes == 1 {
                for (i, n) in needs.iter_mut().enumerate() {
                    if n.several {
                        costs.case_ms[i] = 0;
                    }
                }
            }
            let run = simulate(&needs, &costs, lanes, costs.figures_ms > 0, true);
            let ideal = lower_bound(&needs, &costs, lanes, costs.figures_ms > 0);
            println!(
                "{lanes} GPUs: {:.1} s (least possible {:.1} s); lanes (busy, waiting, end ms, tasks): {:?}",
                run.makespan_ms as f64 / 1000.0,
                ideal as f64 / 1000.0,
                run.lanes
            );
        }
    }

    #[test]
    fn a_case_that_faults_its_context_waits_for_the_lanes_starts_while_batch_work_is_left() {
        let poisons = Need { own_process: true, poisons: true, runs: 1, ..Need::default() };
        let batch = Need { runs: 1, ..Need::default() };
        let mut d = Dispatcher::new(&[poisons, batch, batch], 1, false, true);
        let starting = LaneView { ready: Some(0), pooled: 2, starting: 1 };
        assert_eq!(d.to_start(0, starting), Vec::<usize>::new(), "no process is started ahead of it");
        assert_eq!(d.next(0, starting), Step::Run(Task::Batch(1)));
        let quiet = LaneView { ready: Some(0), pooled: 1, starting: 0 };
        assert_eq!(d.next(0, quiet), Step::Run(Task::Own(0)));
        // With no batch work left it does not wait.
        let mut d = Dispatcher::new(&[poisons], 1, false, true);
        assert_eq!(d.next(0, starting), Step::Run(Task::Own(0)));
    }
}
