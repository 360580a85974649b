//! A suite run: one [`DeviceRunner`] per device on a thread (a lane), each asking the [`Dispatcher`] what to run
//! next (the schedule's rules are in [`super::schedule`]), and the results gathered in the order of the cases.

use super::device_runner::DeviceRunner;
use super::one_case::verdict_of;
use super::policy::{expected_runs, gets_own_process, measures, needs_all_devices, shared_process_env, shares_process};
use super::schedule::{Dispatcher, Need, Step, Task};
use super::stats::{Disturbance, LaneTimes, SuiteStats};
use super::worker::Worker;
use super::{OwnProcessLanes, RunOptions};
use crate::case::ast::{Case, Requirement};
use crate::device::gpu::DeviceInfo;
use crate::record::verdict::VerdictKind;
use crate::record::CaseResult;
use crate::report::baseline::Key;
use crate::report::expectations::{skipped_verdict, Action};
use std::collections::HashMap;
use std::sync::{mpsc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Starts a measurement's processes on a device (see [`Measurement::start`]).
pub type StartMeasurement<'f> = Box<dyn FnOnce(&DeviceInfo) -> Vec<Option<Worker>> + Send + 'f>;
/// Measures on a device, in the processes [`Measurement::start`] gave.
pub type RunMeasurement<'f> = Box<dyn FnOnce(&DeviceInfo, Vec<Option<Worker>>) + Send + 'f>;

/// Work of a run that is not a case but measures like one (the figures): the measuring lane runs it on its device,
/// with nothing else on that GPU and no other measurement anywhere.
pub struct Measurement<'f> {
    /// Starts the processes it will measure in (each creating its context), on the measuring lane's device: the
    /// lane starts them ahead, counts them among its processes starting (no measurement begins while one is), and
    /// hands them to `run` (`figures::staging::start_workers`).
    pub start: StartMeasurement<'f>,
    /// Measures, in the processes `start` gave.
    pub run: RunMeasurement<'f>,
}

/// A measurement's two halves, as the lanes share them: `start` is taken when the measuring lane starts its
/// processes, `run` when it measures.
struct MeasurementParts<'f> {
    start: Option<StartMeasurement<'f>>,
    run: Option<RunMeasurement<'f>>,
}

/// How long a lane with nothing to run looks again: a process of its own may become ready meanwhile (it is also
/// woken at once when another lane ends a measurement or the several-device block).
const IDLE_LOOK: Duration = Duration::from_millis(20);

/// Runs `cases` on `devices` (probed already), calling `on_result` with each result as it comes (in completion
/// order, with its index in `cases`), and returns every result in the order of `cases`. Requirements a device does
/// not meet are decided here without a child, and so are the cases an expectation file skips: they are never
/// planned, so no process is started ahead for them.
pub fn run_suite(
    cases: &[&Case],
    devices: &[DeviceInfo],
    opts: &RunOptions,
    on_result: impl FnMut(usize, &CaseResult),
) -> (Vec<CaseResult>, SuiteStats) {
    run_suite_measuring(cases, devices, opts, None, on_result)
}

/// What the schedule needs to know of each case of a run with `opts`.
pub fn needs_of(cases: &[&Case], opts: &RunOptions) -> Vec<Need> {
    cases
        .iter()
        .map(|c| {
            if opts.process_per_case {
                // Every case starts its own process when it runs: nothing to start ahead, no shared worker.
                Need { measures: measures(c), runs: 1, ..Need::default() }
            } else {
                Need {
                    own_process: gets_own_process(c, opts.baseline.as_ref()),
                    measures: measures(c),
                    several: needs_all_devices(c),
                    runs: expected_runs(c, opts.baseline.as_ref()),
                    poisons: !c.poisons.is_empty(),
                }
            }
        })
        .collect()
}

/// [`run_suite`], with `measurement` (the figures) run on the measuring lane as the schedule allows.
pub fn run_suite_measuring(
    cases: &[&Case],
    devices: &[DeviceInfo],
    opts: &RunOptions,
    measurement: Option<Measurement<'_>>,
    mut on_result: impl FnMut(usize, &CaseResult),
) -> (Vec<CaseResult>, SuiteStats) {
    let configurations: Vec<Key> =
        if opts.expectations.is_some() { devices.iter().map(configuration).collect() } else { Vec::new() };
    let mut slots: Vec<Option<CaseResult>> =
        cases.iter().map(|case| skipped_by_expectation(case, &configurations, opts)).collect();
    if slots.iter().all(Option::is_none) {
        return run_cases(cases, devices, opts, measurement, on_result);
    }
    for (index, skipped) in slots.iter().enumerate() {
        if let Some(result) = skipped {
            on_result(index, result);
        }
    }
    let runnable: Vec<usize> = (0..cases.len()).filter(|&i| slots[i].is_none()).collect();
    let to_run: Vec<&Case> = runnable.iter().map(|&i| cases[i]).collect();
    let (ran, stats) = run_cases(&to_run, devices, opts, measurement, |j, result| on_result(runnable[j], result));
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
    measurement: Option<Measurement<'_>>,
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
    // The schedule hands out units: a case, or the rows of a sweep that share one process (`units_of`).
    let units = units_of(cases, opts);
    let heads: Vec<&Case> = units.iter().map(|unit| cases[unit[0]]).collect();
    let needs = needs_of(&heads, opts);
    let (heads, units) = (&heads[..], &units[..]);
    let every_lane = opts.own_processes == OwnProcessLanes::EveryDevice;
    let dispatcher = Dispatcher::new(&needs, devices.len(), measurement.is_some(), every_lane);
    let measuring_lane = dispatcher.measuring_lane();
    let dispatcher = dispatcher.several_apart_from_measuring(several_apart(cases, devices, measuring_lane));
    let any_measuring = needs.iter().any(|n| n.measures && !n.several);
    let shared = Shared {
        dispatcher: Mutex::new(dispatcher),
        changed: Condvar::new(),
        measurement: Mutex::new(measurement.map(|m| MeasurementParts { start: Some(m.start), run: Some(m.run) })),
        disturbance: Disturbance::default(),
        run_start: Instant::now(),
    };
    let shared = &shared;
    let (sender, receiver) = mpsc::channel::<(usize, CaseResult)>();
    let mut slots: Vec<Option<CaseResult>> = vec![None; cases.len()];
    let mut stats = SuiteStats::default();
    std::thread::scope(|scope| {
        // Whether a Vulkan session can be made on a GPU is decided in this process, once per GPU, by making one
        // (`device::vulkan::unavailable`): 0.7 s on an H100, which the first external-resource case's lane waited
        // for. Decided here while the lanes start, a later look finds it made (or waits for the rest of it).
        if opts.mock.is_none() && cases.iter().any(|c| c.requires.contains(&Requirement::Vulkan)) {
            for device in devices {
                scope.spawn(move || crate::device::vulkan::unavailable(&device.uuid));
            }
        }
        let handles: Vec<_> = devices
            .iter()
            .enumerate()
            .map(|(lane_index, device)| {
                let (sender, exe) = (sender.clone(), exe.clone());
                scope.spawn(move || {
                    let mut lane = DeviceRunner::new(device, opts, exe);
                    lane.share_devices(devices.len(), &shared.disturbance);
                    lane.expect_measuring(lane_index == measuring_lane && any_measuring);
                    // A lane that begins with the several-device block starts its workers after it (see there).
                    if !shared.dispatcher().begins_with_several(lane_index) {
                        lane.start_workers();
                    }
                    let times = run_lane(lane_index, &mut lane, device, (heads, units), cases, shared, &sender);
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
                stats.starts.extend(s.starts);
                stats.memory_checks_skipped += s.memory_checks_skipped;
            }
        }
    });
    stats.lanes.sort_by_key(|l| l.device);
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

/// The units a run's schedule hands out, as indices into `cases`: each case alone, except
/// - the cases that may share a process under one `env:` ([`shared_process_env`]): one unit per environment, at
///   the place of its first case (the other cases of the `env:` need not follow it in `cases`);
/// - the rows of a sweep that poison the context and may share a process ([`shares_process`]), consecutive in
///   `cases`, which make one unit with one prelude (one trap) for the unit.
///
/// One process per unit rather than per case (issue 30: "an environment that needs its own process gets one
/// process per sweep"; issue 32: a node's time is its process starts).
pub fn units_of(cases: &[&Case], opts: &RunOptions) -> Vec<Vec<usize>> {
    if opts.process_per_case {
        return (0..cases.len()).map(|index| vec![index]).collect();
    }
    let mut units: Vec<Vec<usize>> = Vec::new();
    let mut by_env: HashMap<&[(String, String)], usize> = HashMap::new();
    for (index, case) in cases.iter().enumerate() {
        if let Some(env) = shared_process_env(case, opts.baseline.as_ref()) {
            match by_env.get(env) {
                Some(&unit) => units[unit].push(index),
                None => {
                    by_env.insert(env, units.len());
                    units.push(vec![index]);
                }
            }
            continue;
        }
        match units.last_mut() {
            Some(unit) if shares_process(cases[unit[0]], case) => unit.push(index),
            _ => units.push(vec![index]),
        }
    }
    units
}

/// Whether the several-device cases use none of the measuring lane's GPU: they count their devices from the first
/// lane's, wrapping over the host's GPUs (`DeviceInfo::case_device`).
fn several_apart(cases: &[&Case], devices: &[DeviceInfo], measuring_lane: usize) -> bool {
    let (Some(first), Some(measuring)) = (devices.first(), devices.get(measuring_lane)) else { return false };
    if measuring_lane == 0 {
        return false;
    }
    let reach = cases
        .iter()
        .filter(|c| needs_all_devices(c))
        .map(|c| c.device_count().max(c.devices_required()))
        .max()
        .unwrap_or(0);
    (0..reach).all(|i| first.case_device(i).is_some_and(|o| o != measuring.ordinal))
}

/// What the lanes of a run share.
struct Shared<'f> {
    dispatcher: Mutex<Dispatcher>,
    /// Signalled when a measurement or the several-device block ends (a lane may be waiting for it).
    changed: Condvar,
    measurement: Mutex<Option<MeasurementParts<'f>>>,
    disturbance: Disturbance,
    run_start: Instant,
}

impl Shared<'_> {
    fn dispatcher(&self) -> MutexGuard<'_, Dispatcher> {
        self.dispatcher.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// One lane's loop: asks the dispatcher for work until there is none, sends each result, and returns where its
/// time went.
fn run_lane(
    lane_index: usize,
    lane: &mut DeviceRunner<'_>,
    device: &DeviceInfo,
    (heads, units): (&[&Case], &[Vec<usize>]),
    cases: &[&Case],
    shared: &Shared<'_>,
    sender: &mpsc::Sender<(usize, CaseResult)>,
) -> LaneTimes {
    let mut times = LaneTimes { device: device.ordinal, ..LaneTimes::default() };
    let mut in_several = false;
    let since_start = || shared.run_start.elapsed().as_secs_f64();
    loop {
        // The measurement's processes, started ahead so that none is made while it measures and it waits for none
        // (`Dispatcher::measurement_processes_due`).
        if shared.dispatcher().measurement_processes_due(lane_index) {
            let start =
                shared.measurement.lock().unwrap_or_else(|p| p.into_inner()).as_mut().and_then(|m| m.start.take());
            if let Some(start) = start {
                lane.hold_for_measurement(start(device));
            }
        }
        let view = lane.view();
        if !lane.batch_is_starting() {
            lane.keep_spare();
            let starts = shared.dispatcher().to_start(lane_index, view);
            for unit in starts {
                let rows: Vec<&Case> = units[unit].iter().map(|&i| cases[i]).collect();
                lane.pool_own(unit, &rows);
            }
        }
        let view = lane.view();
        let step = shared.dispatcher().next(lane_index, view);
        let began = Instant::now();
        let task = match step {
            Step::Finish => break,
            Step::Run(task) => task,
            Step::Wait if view.starting > 0 => {
                if lane.await_any_ready(IDLE_LOOK).is_zero() {
                    std::thread::sleep(Duration::from_millis(2));
                }
                times.own_ready_wait_s += began.elapsed().as_secs_f64();
                continue;
            }
            Step::Wait => {
                let guard = shared.dispatcher();
                drop(shared.changed.wait_timeout(guard, IDLE_LOOK));
                times.other_wait_s += began.elapsed().as_secs_f64();
                continue;
            }
        };
        // The dispatcher's indices are units (`units_of`); the results go out by case index.
        let results: Vec<(usize, CaseResult)> = match task {
            Task::Own(u) if units[u].len() > 1 => {
                let rows: Vec<&Case> = units[u].iter().map(|&i| cases[i]).collect();
                units[u].iter().copied().zip(lane.run_pooled_group(&rows)).collect()
            }
            Task::Own(u) => vec![(units[u][0], lane.run_pooled(heads[u]))],
            Task::Batch(u) => {
                if times.batch_s == 0.0 {
                    times.batch_start_s = since_start();
                }
                // None: its reruns wait for processes of the lane's pool, and it comes back as a ready `Own(u)`.
                lane.run_case_deferring(u, heads[u]).map(|r| (units[u][0], r)).into_iter().collect()
            }
            Task::Measure(u) => vec![(units[u][0], lane.run_case(heads[u]))],
            Task::Several(u) => {
                if !in_several {
                    in_several = true;
                    shared.disturbance.begin();
                }
                let result = lane.run_case(heads[u]);
                shared.dispatcher().done(task);
                shared.changed.notify_all();
                vec![(units[u][0], result)]
            }
            Task::EndSeveral => {
                lane.end_several_device_phase();
                if std::mem::take(&mut in_several) {
                    shared.disturbance.end();
                }
                lane.start_workers();
                times.several_s += began.elapsed().as_secs_f64();
                shared.changed.notify_all();
                continue;
            }
            Task::Figures => {
                let run =
                    shared.measurement.lock().unwrap_or_else(|p| p.into_inner()).as_mut().and_then(|m| m.run.take());
                if let Some(measure) = run {
                    measure(device, lane.take_measurement_workers());
                }
                times.figures_s += began.elapsed().as_secs_f64();
                shared.dispatcher().done(task);
                shared.changed.notify_all();
                continue;
            }
        };
        let took = began.elapsed().as_secs_f64();
        times.cases += results.len();
        match task {
            Task::Own(_) | Task::Several(_) => {
                times.own_cases += 1;
                times.own_phase_end_s = since_start();
                if let Task::Own(u) = task {
                    times.own_s += took;
                    if !heads[u].poisons.is_empty() {
                        times.faulting_s += took;
                    }
                } else {
                    times.several_s += took;
                }
            }
            Task::Measure(_) => {
                times.measuring_s += took;
                shared.dispatcher().done(task);
                shared.changed.notify_all();
            }
            _ => times.batch_s += took,
        }
        if results.into_iter().any(|sent| sender.send(sent).is_err()) {
            break;
        }
    }
    if in_several {
        lane.end_several_device_phase();
        shared.disturbance.end();
    }
    shared.dispatcher().lane_gone(lane_index);
    shared.changed.notify_all();
    times.end_s = since_start();
    times
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
    fn the_schedule_is_told_what_each_case_needs() {
        let cases = [
            case("a/plain", ""),
            case("a/env", "  env: CUDA_MODULE_LOADING=EAGER"),
            case("a/two", "  requires: devices >= 2"),
            case_claiming(
                "a/poison-variant",
                "  poisons-context: cudaErrorIllegalAddress",
                "variant x: k returned cudaSuccess | y: k returned cudaErrorInvalidValue",
            ),
        ];
        let refs: Vec<&Case> = cases.iter().collect();
        let needs = needs_of(&refs, &RunOptions::default());
        assert_eq!(needs[0], Need { runs: 1, ..Need::default() });
        assert_eq!(needs[1], Need { own_process: true, runs: 1, ..Need::default() });
        assert_eq!(needs[2], Need { several: true, runs: 1, ..Need::default() });
        // A case that can pick a variant runs twice: two processes started ahead. It faults its context.
        assert_eq!(needs[3], Need { own_process: true, runs: 2, poisons: true, ..Need::default() });
        // One process per case: nothing started ahead, no several-device worker.
        let isolated = needs_of(&refs, &RunOptions { process_per_case: true, ..RunOptions::default() });
        assert!(isolated.iter().all(|n| !n.own_process && !n.several && n.runs == 1));
        // The suite's cases that measure are told apart.
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
        let all = crate::case::suite::load_dir(&dir).unwrap_or_else(|d| panic!("{d:?}"));
        let refs: Vec<&Case> = all.iter().collect();
        let needs = needs_of(&refs, &RunOptions::default());
        assert!(needs.iter().any(|n| n.measures), "the suite has measuring cases");
        assert!(needs.iter().any(|n| n.own_process) && needs.iter().any(|n| n.several));
    }
}

#[cfg(test)]
mod unit_tests {
    use super::*;

    #[test]
    fn cases_of_one_env_share_a_process_and_so_do_the_rows_of_a_sweep_that_poisons_its_context() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
        let all = crate::case::suite::load_dir(&dir).unwrap_or_else(|d| panic!("{d:?}"));
        let cases: Vec<&Case> = all.iter().collect();
        let units = units_of(&cases, &RunOptions::default());
        let unit_of = |id: &str| units.iter().position(|u| u.iter().any(|&i| cases[i].id == id)).unwrap();
        // Every case is in one unit.
        let mut seen: Vec<usize> = units.iter().flatten().copied().collect();
        seen.sort_unstable();
        assert_eq!(seen, (0..cases.len()).collect::<Vec<_>>());
        // The rows of a sweep that poisons its context: consecutive, one sweep, one unit per run of rows that
        // share a prelude; the rows that read the last error alone.
        let after_fault: Vec<usize> = (0..units.len())
            .filter(|&u| units[u].len() > 1 && cases[units[u][0]].id.starts_with("api/after-fault/"))
            .collect();
        assert!(!after_fault.is_empty() && after_fault.len() <= 3, "{after_fault:?}");
        for &u in &after_fault {
            assert!(units[u].windows(2).all(|w| w[1] == w[0] + 1), "consecutive: {:?}", units[u]);
            assert!(units[u].iter().all(|&i| !cases[i].poisons.is_empty()));
        }
        assert_eq!(units[unit_of("api/after-fault/cudaPeekAtLastError")].len(), 1);
        // Cases of one `env:` whose only reason for a process of their own is it: one unit, though apart in the
        // suite (an `api` sweep row and `library` cases), and the no-device rows of two sweeps together.
        let eager = unit_of("library/kernel-count-eager");
        assert_eq!(eager, unit_of("api/open-conditions/eager-library/cudaLibraryLoadData"));
        assert_eq!(
            unit_of("api/no-device/cudaRuntimeGetVersion"),
            unit_of("api/no-device/last-error/cudaGetLastError")
        );
        // ... but not a case whose first launch must load its kernel, nor one that changes process state.
        assert_eq!(units[unit_of("environment/lazy-loading-first-launch-may-synchronise")].len(), 1);
        assert_eq!(units[unit_of("execution/kernel-whose-ptx-does-not-compile")].len(), 1);
        assert_eq!(units[unit_of("device-management/set-device-flags-overwrites")].len(), 1);
        // The cases with peers share one process, which starts all their peers ahead.
        let ipc = unit_of("ipc/peer-opens-memory-and-writes-exporter-allocation");
        assert_eq!(ipc, unit_of("ipc/peer-stream-wait-orders-after-exporter"));
        // Every unit of several: one `env:` (the rows of a sweep, or cases that may share under it).
        for unit in units.iter().filter(|u| u.len() > 1) {
            let head = cases[unit[0]];
            assert!(unit.iter().all(|&i| cases[i].env == head.env && gets_own_process(cases[i], None)), "{unit:?}");
            let poisoning = !head.poisons.is_empty();
            assert!(
                unit.iter().all(|&i| if poisoning {
                    !cases[i].poisons.is_empty()
                } else {
                    shared_process_env(cases[i], None).is_some()
                }),
                "{unit:?}"
            );
        }
        let per_case = units_of(&cases, &RunOptions { process_per_case: true, ..RunOptions::default() });
        assert_eq!(per_case.len(), cases.len());
    }
}

#[cfg(test)]
mod apart_tests {
    use super::*;

    #[test]
    fn several_device_cases_are_apart_from_the_measuring_gpu_only_where_they_cannot_reach_it() {
        let text = "case a/two\n  rule: r\n  source: s\n  requires: devices >= 2\n  stream s blocking\n  \
                    k: sync s\n  expect k returned cudaSuccess\nend\n";
        let file = crate::case::parse_file("a.case", text).unwrap_or_else(|d| panic!("{d:?}"));
        let cases: Vec<&Case> = file.cases.iter().collect();
        let host = |ordinals: &[i32], count: u32| -> Vec<DeviceInfo> {
            ordinals
                .iter()
                .map(|&o| DeviceInfo { ordinal: o, device_count: count, ..crate::runner::mock::mock_device() })
                .collect()
        };
        // Four GPUs: the cases use 0 and 1, the measuring lane is GPU 3.
        assert!(several_apart(&cases, &host(&[0, 1, 2, 3], 4), 3));
        // Two: the measuring lane is the cases' second GPU.
        assert!(!several_apart(&cases, &host(&[0, 1], 2), 1));
        // `--devices 2,3` of four: counted from GPU 2, the second is GPU 3, the measuring one.
        assert!(!several_apart(&cases, &host(&[2, 3], 4), 1));
        // `--devices 0,3` of four: GPUs 0 and 1, not 3.
        assert!(several_apart(&cases, &host(&[0, 3], 4), 1));
        // One GPU: its lane measures and runs the block.
        assert!(!several_apart(&cases, &host(&[0], 1), 0));
    }
}
