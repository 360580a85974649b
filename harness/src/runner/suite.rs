//! A suite run: which device's runner takes which case ([`Plan`]), the shared queue of batch cases
//! ([`BatchQueue`]), and [`run_suite`], which runs one [`DeviceRunner`] per device on a thread and gathers the
//! results in the order of the cases.

use super::device_runner::DeviceRunner;
use super::one_case::verdict_of;
use super::policy::{expected_runs, measures, needs_all_devices, needs_own_process};
use super::stats::{Disturbance, LaneTimes, SuiteStats};
use super::{OwnProcessLanes, RunOptions};
use crate::case::ast::Case;
use crate::device::gpu::DeviceInfo;
use crate::record::verdict::VerdictKind;
use crate::record::CaseResult;
use crate::report::baseline::Key;
use crate::report::expectations::{skipped_verdict, Action};
use std::collections::VecDeque;
use std::sync::{mpsc, Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// Runs `cases` on `devices` (probed already), calling `on_result` with each result as it comes (in completion
/// order, with its index in `cases`), and returns every result in the order of `cases`. Requirements a device does
/// not meet are decided here without a child, and so are the cases an expectation file skips: they are never
/// planned, so no process is started ahead for them.
pub fn run_suite(
    cases: &[&Case],
    devices: &[DeviceInfo],
    opts: &RunOptions,
    mut on_result: impl FnMut(usize, &CaseResult),
) -> (Vec<CaseResult>, SuiteStats) {
    let configurations: Vec<Key> =
        if opts.expectations.is_some() { devices.iter().map(configuration).collect() } else { Vec::new() };
    let mut slots: Vec<Option<CaseResult>> =
        cases.iter().map(|case| skipped_by_expectation(case, &configurations, opts)).collect();
    if slots.iter().all(Option::is_none) {
        return run_cases(cases, devices, opts, on_result);
    }
    for (index, skipped) in slots.iter().enumerate() {
        if let Some(result) = skipped {
            on_result(index, result);
        }
    }
    let runnable: Vec<usize> = (0..cases.len()).filter(|&i| slots[i].is_none()).collect();
    let to_run: Vec<&Case> = runnable.iter().map(|&i| cases[i]).collect();
    let (ran, stats) = run_cases(&to_run, devices, opts, |j, result| on_result(runnable[j], result));
    for (j, result) in ran.into_iter().enumerate() {
        slots[runnable[j]] = Some(result);
    }
    (slots.into_iter().flatten().collect(), stats)
}

/// The *skipped* result of `case` when a `skip` line of the expectation file applies to it on a device of the run
/// (a case that hangs one of the GPUs is kept off all of them: the run has one case list).
fn skipped_by_expectation(case: &Case, configurations: &[Key], opts: &RunOptions) -> Option<CaseResult> {
    let expectations = opts.expectations.as_ref()?;
    let entry = configurations.iter().find_map(|key| {
        let entry = expectations.entry_for(&case.id, key)?;
        (entry.action == Action::Skip).then_some(entry)
    })?;
    let mut result = CaseResult::new(case, skipped_verdict(entry), None, Duration::ZERO);
    result.expectation = Some(entry.text());
    Some(result)
}

/// The GPU, driver and runtime an expectation's conditions are matched against (a baseline's section key).
pub fn configuration(device: &DeviceInfo) -> Key {
    Key::of(&crate::record::Provenance::new(device, "", String::new()))
}

fn run_cases(
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
    let plan = Plan::new(cases, devices.len(), opts.process_per_case, opts.own_processes);
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
                    lane.expect_measuring(plan.shared.iter().any(|&i| measures(cases[i])));
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
    /// The cases not taken yet, in the order they are handed out, and whether a runner is measuring now.
    state: Mutex<(VecDeque<usize>, bool)>,
    /// Signalled when a measurement ends or a case is taken: a runner waiting in [`BatchQueue::next`] sleeps on it
    /// (it used to wake every 2 ms to look, which on a busy host is a wake-up to schedule each time, and a
    /// measurement's end noticed only at the next one).
    changed: Condvar,
}

impl<'c> BatchQueue<'c> {
    fn new(cases: &'c [&'c Case], shared: &[usize]) -> Self {
        let (measuring, ordinary): (Vec<usize>, Vec<usize>) = shared.iter().copied().partition(|&i| measures(cases[i]));
        let order: VecDeque<usize> = measuring.into_iter().chain(ordinary).collect();
        BatchQueue { cases, state: Mutex::new((order, false)), changed: Condvar::new() }
    }

    /// The next case this runner may take, and whether it measures (then call [`BatchQueue::measured`] after it);
    /// none when the queue is empty. Waits while only measuring cases are left and another runner is measuring.
    fn next(&self) -> Option<(usize, bool)> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            let busy = state.1;
            let pick = state.0.iter().position(|&i| !busy || !measures(self.cases[i]));
            match pick {
                Some(at) => {
                    let index = state.0.remove(at)?;
                    let measuring = measures(self.cases[index]);
                    state.1 |= measuring;
                    // Whoever waits may now find the queue empty and be done.
                    self.changed.notify_all();
                    return Some((index, measuring));
                }
                None if state.0.is_empty() => return None,
                None => state = self.changed.wait(state).unwrap_or_else(|p| p.into_inner()),
            }
        }
    }

    fn measured(&self) {
        self.state.lock().unwrap_or_else(|p| p.into_inner()).1 = false;
        self.changed.notify_all();
    }
}

/// Which runner takes which case: the cases that need several devices go to the first device's runner, and so do
/// those that need a process of their own unless [`OwnProcessLanes::EveryDevice`] spreads them (see there for why
/// either); the batch cases wait in one queue for whichever device is free next.
struct Plan {
    /// Per device: the indices of its own-process cases, in order.
    own: Vec<Vec<usize>>,
    /// Per device: the indices of the cases it runs in its several-device worker.
    several: Vec<Vec<usize>>,
    /// The batch cases (every case, with one process per case).
    shared: Vec<usize>,
}

impl Plan {
    fn new(cases: &[&Case], lanes: usize, process_per_case: bool, own_lanes: OwnProcessLanes) -> Plan {
        let lanes = lanes.max(1);
        let (mut own, mut several) = (vec![Vec::new(); lanes], vec![Vec::new(); lanes]);
        if process_per_case {
            return Plan { own, several, shared: (0..cases.len()).collect() };
        }
        // Runs planned per lane (a case that can pick a variant is expected to run twice), to balance the spread.
        let mut planned_runs = vec![0usize; lanes];
        let mut shared = Vec::new();
        for (i, case) in cases.iter().enumerate() {
            if needs_own_process(case) {
                let lane = match own_lanes {
                    OwnProcessLanes::EveryDevice if !needs_all_devices(case) => {
                        (0..lanes).min_by_key(|&l| (planned_runs[l], l)).unwrap_or(0)
                    }
                    _ => 0,
                };
                planned_runs[lane] += expected_runs(case);
                own[lane].push(i);
            } else if needs_all_devices(case) {
                several[0].push(i);
            } else {
                shared.push(i);
            }
        }
        Plan { own, several, shared }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A case with `header` lines and the claim `claim` after a one-line script.
    fn case_claiming(id: &str, header: &str, claim: &str) -> Case {
        let text =
            format!("case {id}\n  rule: r\n  source: s\n{header}\n  stream s blocking\n  k: sync s\n  {claim}\nend\n");
        let file = crate::case::parse_file("t.case", &text).unwrap_or_else(|d| panic!("{d:?}"));
        file.cases.into_iter().next().unwrap_or_else(|| panic!("no case in {text}"))
    }

    fn case(id: &str, header: &str) -> Case {
        case_claiming(id, header, "expect k returned cudaSuccess")
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
        let plan = Plan::new(&refs, 2, false, OwnProcessLanes::FirstDevice);
        assert_eq!(plan.own, vec![vec![1, 3], vec![]]);
        assert_eq!(plan.several, vec![vec![2], vec![]]);
        assert_eq!(plan.shared, vec![0, 4]);
        let isolated = Plan::new(&refs, 2, true, OwnProcessLanes::EveryDevice);
        assert_eq!((isolated.own, isolated.several), (vec![vec![], vec![]], vec![vec![], vec![]]));
        assert_eq!(isolated.shared, vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn every_device_spreads_own_process_cases_by_planned_runs() {
        let cases = [
            // Picks a variant: expected to run twice.
            case_claiming(
                "a/env-variant",
                "  env: CUDA_MODULE_LOADING=EAGER",
                "variant x: k returned cudaSuccess | y: k returned cudaErrorInvalidValue",
            ),
            case("a/poison", "  poisons-context: cudaErrorIllegalAddress"),
            case("a/env", "  env: CUDA_MODULE_LOADING=LAZY"),
            case("a/two-own", "  requires: devices >= 2\n  poisons-context: cudaErrorIllegalAddress"),
            case("a/plain", ""),
        ];
        let refs: Vec<&Case> = cases.iter().collect();
        let plan = Plan::new(&refs, 2, false, OwnProcessLanes::EveryDevice);
        // The first (2 runs) to lane 0, the next two to lane 1 (0 then 1 run against 2), and the case that needs
        // every device to the first lane whatever its count.
        assert_eq!(plan.own, vec![vec![0, 3], vec![1, 2]]);
        assert_eq!(plan.shared, vec![4]);
        // One device: everything on it, as with the default.
        let one = Plan::new(&refs, 1, false, OwnProcessLanes::EveryDevice);
        assert_eq!(one.own, vec![vec![0, 1, 2, 3]]);
    }

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

    /// A runner left with only measuring cases while another measures sleeps until that measurement ends, and then
    /// takes the next one; with nothing left, a runner is told so at once, measurement or not.
    #[test]
    fn a_runner_waiting_to_measure_is_woken_when_the_measurement_ends() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
        let all = crate::case::suite::load_dir(&dir).unwrap_or_else(|d| panic!("{d:?}"));
        let measuring: Vec<&Case> = all.iter().filter(|c| measures(c)).take(2).collect();
        let queue = BatchQueue::new(&measuring, &[0, 1]);
        assert_eq!(queue.next(), Some((0, true)));
        let ended = std::sync::atomic::AtomicBool::new(false);
        std::thread::scope(|scope| {
            let waiter = scope.spawn(|| {
                let got = queue.next();
                (got, ended.load(std::sync::atomic::Ordering::SeqCst))
            });
            std::thread::sleep(Duration::from_millis(50));
            ended.store(true, std::sync::atomic::Ordering::SeqCst);
            queue.measured();
            let (got, after_the_end) = waiter.join().unwrap();
            assert_eq!(got, Some((1, true)));
            assert!(after_the_end, "it took the second measuring case only after the first measurement ended");
        });
        assert_eq!(queue.next(), None, "while the last measurement runs");
        queue.measured();
        assert_eq!(queue.next(), None);
    }
}
