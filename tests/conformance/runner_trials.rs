//! The runner's trials, in mock child mode (`harness::runner::mock`): the workers are this test binary re-executed
//! with `CUDA_CONFORMANCE_MOCK`, playing a crash, a hang, a dirty context, a flake ... for chosen cases. No GPU is
//! touched, so these run in CI.

use harness::case::ast::Case;
use harness::record::verdict::VerdictKind;
use harness::record::{CaseResult, Report};
use harness::runner::mock::mock_device;
use harness::runner::policy::{has_delayed_open, measures, needs_all_devices};
use harness::runner::session::{self, ReportHeader};
use harness::runner::stats::SuiteStats;
use harness::runner::suite::run_suite;
use harness::runner::{self, RunOptions};
use libtest_mimic::{Failed, Trial};
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// The process id a mock answer names (`mock run N in process PID (...)`).
fn pid(r: &CaseResult) -> Option<u32> {
    let m = r.verdict.messages.iter().find(|m| m.contains("in process"))?;
    m.split("in process ").nth(1)?.split_whitespace().next()?.parse().ok()
}

pub struct Fixture {
    pub cases: Vec<Case>,
}

/// The suite's cases as a [`Fixture`], loaded when a trial first needs them: a process started for one other trial
/// (cargo-nextest starts one per trial) does not parse and validate every case file for nothing.
pub struct LazyFixture {
    dir: PathBuf,
    loaded: OnceLock<Result<Fixture, String>>,
}

impl LazyFixture {
    pub fn get(&self) -> Result<&Fixture, Failed> {
        let loaded = self.loaded.get_or_init(|| {
            let cases = harness::case::suite::load_dir(&self.dir)
                .map_err(|d| format!("the cases under {} do not load ({} problem(s))", self.dir.display(), d.len()))?;
            Ok(Fixture { cases })
        });
        loaded.as_ref().map_err(|e| e.as_str().into())
    }
}

impl Fixture {
    pub fn lazy(dir: &Path) -> LazyFixture {
        LazyFixture { dir: dir.to_path_buf(), loaded: OnceLock::new() }
    }

    /// Plain cases (no `env:`, no `poisons-context:`, no scheduled gate open) to use as neighbours.
    pub fn plain(&self, n: usize) -> Vec<&Case> {
        self.cases
            .iter()
            .filter(|c| !c.needs_own_process() && !needs_all_devices(c) && !has_delayed_open(c))
            .take(n)
            .collect()
    }

    pub fn opts(&self, mock: &[(&Case, &str)]) -> RunOptions {
        RunOptions {
            mock: Some(mock.iter().map(|(c, b)| format!("{}={b}", c.id)).collect::<Vec<_>>().join(";")),
            case_deadline: Duration::from_secs(20),
            ..RunOptions::default()
        }
    }

    fn run(&self, cases: &[&Case], opts: &RunOptions) -> (Vec<CaseResult>, SuiteStats) {
        run_suite(cases, &[mock_device()], opts, |_, _| {})
    }
}

/// The header of the reports the mock runs write (no commit, a fixed start time, no filter, shard or baseline).
pub fn report_header() -> ReportHeader {
    ReportHeader {
        commit: "test".into(),
        started_at: "2026-01-01T00:00:00Z".into(),
        filter: String::new(),
        shard: None,
        baseline: None,
        kernel_image: Default::default(),
    }
}

pub fn expect(cond: bool, what: impl FnOnce() -> String) -> Result<(), Failed> {
    if cond {
        Ok(())
    } else {
        Err(what().into())
    }
}

fn kinds(results: &[CaseResult]) -> Vec<VerdictKind> {
    results.iter().map(|r| r.verdict.kind).collect()
}

pub fn trials(fx: &Arc<LazyFixture>) -> Vec<Trial> {
    type Body = fn(&Fixture) -> Result<(), Failed>;
    let bodies: Vec<(&str, Body)> = vec![
        ("runner/a-worker-runs-the-case-text-it-is-sent-with-its-file-and-lines", sent_text),
        ("runner/a-crash-costs-one-case-and-a-fresh-worker-takes-the-next", crash),
        ("runner/a-crash-s-reruns-wait-for-pooled-processes-while-the-lane-goes-on", deferred_reruns),
        ("runner/after-a-replacement-the-lane-keeps-a-spare-batch-worker", spare),
        ("runner/a-case-the-baseline-expects-to-crash-gets-a-process-of-its-own", known_crash),
        ("runner/a-hang-is-a-timeout-and-a-fresh-worker-takes-the-next", hang),
        ("runner/unreadable-output-is-a-crash", garbage),
        ("runner/a-dirty-context-ends-its-worker", dirty),
        ("runner/a-sweep-s-own-process-rows-share-one-process", sweep_rows),
        ("runner/cases-of-one-env-and-cases-with-peers-share-a-process", env_groups),
        ("runner/device-memory-a-case-keeps-ends-its-worker", leak),
        ("runner/a-case-whose-memory-check-is-skipped-reads-no-free-memory", unchecked_leak),
        ("runner/several-device-cases-share-a-worker-of-their-own", several),
        ("runner/cases-share-a-worker-and-own-process-cases-do-not", sharing),
        ("runner/measuring-cases-run-in-a-worker-with-the-default-host-waits", measuring),
        ("runner/a-fail-must-reproduce-else-flake", flake),
        ("runner/a-variant-must-repeat-else-flake", variant),
        ("runner/a-variant-the-baseline-expects-runs-once", known_variant),
        ("runner/a-short-gate-delay-cannot-decide-a-fail", gates),
        ("runner/baseline-expected-fail-and-unexpected-pass", baseline),
        ("runner/baseline-flake-with-a-reason-is-tolerated-and-tracked", baseline_flake),
        ("runner/expectations-skip-flake-and-expected-fail", expectations),
        ("runner/devices-share-the-cases-and-each-result-names-its-device", devices),
        ("runner/own-processes-every-device-runs-own-process-cases-on-each-gpu", own_everywhere),
        ("runner/the-schedule-gives-the-same-verdicts-on-1-2-and-4-gpus-and-spreads-the-work", scaling),
        ("runner/the-report-is-rewritten-after-each-case", rewrites),
        ("runner/process-per-case-gives-each-case-a-process", per_case),
        ("runner/executor-cxx-runs-each-case-s-reproducer-and-both-compares", executors),
    ];
    bodies
        .into_iter()
        .map(|(name, body)| {
            let fx = Arc::clone(fx);
            Trial::test(name, move || body(fx.get()?))
        })
        .collect()
}

/// A worker is sent each case's text, not its id: cases from a file that is not under `cases/` (as a figure's
/// generated points are) run in the same worker as the suite's, and the child parses them with their file's lines.
fn sent_text(fx: &Fixture) -> Result<(), Failed> {
    let case = |id: &str| {
        format!("case unlisted/{id}\n  rule: r\n  source: s\n  stream s blocking\n  k: sync s\n  expect k returned cudaSuccess\nend\n")
    };
    let file = "nowhere/unlisted.case";
    let text = format!("# not a file on disk\n\n{}\n{}", case("one"), case("two"));
    let unlisted = harness::case::parse_file(file, &text).map_err(|d| format!("{d:?}"))?.cases;
    let c = [fx.plain(1)[0], &unlisted[0], &unlisted[1]];
    let mut o = fx.opts(&[(c[2], "fail")]);
    o.reruns = 0;
    let (r, stats) = fx.run(&c, &o);
    expect(kinds(&r) == [VerdictKind::Pass, VerdictKind::Pass, VerdictKind::Fail], || format!("{:?}", r))?;
    let locations: Vec<&str> = r[1..].iter().map(|r| r.location.as_str()).collect();
    expect(locations == [format!("{file}:3"), format!("{file}:11")], || format!("{locations:?}"))?;
    expect(pid(&r[0]) == pid(&r[2]) && stats.processes_started == 1, || format!("{stats:?}"))
}

fn crash(fx: &Fixture) -> Result<(), Failed> {
    let c = fx.plain(3);
    let mut o = fx.opts(&[(c[0], "crash")]);
    o.reruns = 0;
    let (r, stats) = fx.run(&c, &o);
    expect(kinds(&r) == [VerdictKind::Crash, VerdictKind::Pass, VerdictKind::Pass], || format!("{:?}", kinds(&r)))?;
    expect(r[0].verdict.messages[0].contains("exited with") && r[0].verdict.messages[0].contains("no result"), || {
        format!("{:?}", r[0].verdict.messages)
    })?;
    // The next cases share the replacement; the lane keeps a spare from its first replacement on (started, unused).
    expect(pid(&r[1]) == pid(&r[2]) && stats.processes_started == 3, || format!("{stats:?}"))
}

/// From its first replacement on, a lane keeps a spare batch worker started ahead: after a second crash the next
/// case runs in it (a process started warm, not the first replacement), and a new spare is started behind it.
fn spare(fx: &Fixture) -> Result<(), Failed> {
    let c = fx.plain(4);
    let mut o = fx.opts(&[(c[0], "crash"), (c[2], "crash")]);
    o.reruns = 0;
    let (r, stats) = fx.run(&c, &o);
    let want = [VerdictKind::Crash, VerdictKind::Pass, VerdictKind::Crash, VerdictKind::Pass];
    expect(kinds(&r) == want, || format!("{:?}", kinds(&r)))?;
    let warm = |i: usize| r[i].verdict.messages.first().is_some_and(|m| m.contains("warm"));
    expect(pid(&r[3]) != pid(&r[1]) && warm(1) && warm(3), || format!("{:?} {:?}", r[1].verdict, r[3].verdict))?;
    expect(stats.processes_started == 4, || format!("{stats:?}"))
}

/// A batch case the baseline expects to crash runs in a process started for it, not in the batch worker: the cases
/// around it share one batch worker, which it never ends, and it runs once (expected-fail). Without the baseline
/// the same crash ends the batch worker, and the next case runs in another.
fn known_crash(fx: &Fixture) -> Result<(), Failed> {
    let c = fx.plain(3);
    let mut o = fx.opts(&[(c[1], "crash")]);
    o.baseline = Some([(c[1].id.clone(), "crash".to_owned())].into_iter().collect());
    let (r, stats) = fx.run(&c, &o);
    let want = [VerdictKind::Pass, VerdictKind::ExpectedFail, VerdictKind::Pass];
    expect(kinds(&r) == want, || format!("{:?}", kinds(&r)))?;
    expect(pid(&r[0]) == pid(&r[2]) && r[1].attempts.is_empty(), || format!("{:?} {:?}", r[0].verdict, r[2].verdict))?;
    expect(stats.processes_started == 2, || format!("{stats:?}"))?;
    o.baseline = None;
    o.reruns = 0;
    let (r, _) = fx.run(&c, &o);
    expect(kinds(&r) == [VerdictKind::Pass, VerdictKind::Crash, VerdictKind::Pass], || format!("{:?}", kinds(&r)))?;
    expect(pid(&r[0]) != pid(&r[2]), || format!("{:?} {:?}", r[0].verdict, r[2].verdict))
}

/// A batch case that crashes is run again in processes started for it in the lane's pool (a task of the lane's own,
/// as an own-process case's runs are), not inline in the batch worker; the next case runs in a batch worker started
/// at once after the crash. (Which comes first, the reruns or the next case, depends on when the pool's processes
/// are ready: either is right.)
fn deferred_reruns(fx: &Fixture) -> Result<(), Failed> {
    let c = fx.plain(3);
    let (r, stats) = fx.run(&c, &fx.opts(&[(c[0], "crash")]));
    let crash = &r[0];
    let all_crashed = crash.attempts.len() == 3 && crash.attempts.iter().all(|a| a.kind == VerdictKind::Crash);
    expect(all_crashed && crash.verdict.kind == VerdictKind::Crash, || format!("{:?}", crash.attempts))?;
    expect(stats.lanes.iter().map(|l| l.own_cases).sum::<usize>() == 1, || format!("{stats:?}"))?;
    expect(r[1].verdict.kind == VerdictKind::Pass && r[1].verdict.messages[0].contains("warm"), || {
        format!("{:?}", r[1].verdict)
    })
}

fn hang(fx: &Fixture) -> Result<(), Failed> {
    let c = fx.plain(2);
    let mut o = fx.opts(&[(c[0], "hang")]);
    o.case_deadline = Duration::from_millis(1500);
    let started = std::time::Instant::now();
    let (r, stats) = fx.run(&c, &o);
    expect(kinds(&r) == [VerdictKind::Timeout, VerdictKind::Pass], || format!("{:?}", kinds(&r)))?;
    // A timeout is not run again: it already waited its whole deadline. (Three processes: the worker, its
    // replacement, and the spare the lane keeps from then on.)
    expect(r[0].attempts.is_empty() && stats.processes_started == 3, || format!("{:?} {stats:?}", r[0].attempts))?;
    expect(started.elapsed() < Duration::from_secs(10), || format!("took {:?}", started.elapsed()))
}

fn garbage(fx: &Fixture) -> Result<(), Failed> {
    let c = fx.plain(2);
    let mut o = fx.opts(&[(c[0], "garbage")]);
    o.reruns = 0;
    let (r, _) = fx.run(&c, &o);
    expect(kinds(&r) == [VerdictKind::Crash, VerdictKind::Pass], || format!("{:?}", kinds(&r)))?;
    expect(r[0].verdict.messages[0].contains("unreadable result"), || format!("{:?}", r[0].verdict.messages))
}

fn dirty(fx: &Fixture) -> Result<(), Failed> {
    let c = fx.plain(3);
    let (r, stats) = fx.run(&c, &fx.opts(&[(c[1], "dirty")]));
    expect(kinds(&r) == [VerdictKind::Pass; 3], || format!("{:?}", kinds(&r)))?;
    expect(r[1].dirty.as_deref().is_some_and(|d| d.contains("dirty")) && r[0].dirty.is_none(), || {
        format!("{:?}", r[1].dirty)
    })?;
    // The dirty case shares the first case's worker; the next case gets a fresh one (and the lane a spare).
    expect(pid(&r[0]) == pid(&r[1]) && pid(&r[1]) != pid(&r[2]) && stats.processes_started == 3, || {
        format!("{:?} {:?} {:?} {stats:?}", pid(&r[0]), pid(&r[1]), pid(&r[2]))
    })
}

/// The rows of a sweep that need a process of their own run in one (`suite::units_of`): the after-fault rows on
/// one prelude, so a row's sticky error (a dirty context) does not end it; a crash costs its row alone and the next
/// row gets a fresh process; the no-device rows (an `env:` sweep) share one process of their own.
fn sweep_rows(fx: &Fixture) -> Result<(), Failed> {
    let rows =
        |sweep: &str, n: usize| -> Vec<&Case> { fx.cases.iter().filter(|c| c.id.starts_with(sweep)).take(n).collect() };
    let mut c = rows("api/after-fault/", 5);
    c.extend(rows("api/no-device/", 3));
    expect(c.len() == 8, || format!("{} rows", c.len()))?;
    let mut o = fx.opts(&[(c[0], "dirty"), (c[2], "crash")]);
    o.reruns = 0;
    let (r, stats) = fx.run(&c, &o);
    let want = [VerdictKind::Pass, VerdictKind::Pass, VerdictKind::Crash];
    expect(kinds(&r)[..3] == want && kinds(&r)[3..].iter().all(|k| *k == VerdictKind::Pass), || {
        format!("{:?}", kinds(&r))
    })?;
    let pids: Vec<Option<u32>> = r.iter().map(pid).collect();
    expect(pids[0] == pids[1] && pids[3] == pids[4] && pids[3] != pids[0], || format!("{pids:?}"))?;
    expect(pids[5] == pids[6] && pids[6] == pids[7] && pids[5] != pids[3], || format!("{pids:?}"))?;
    // The after-fault group's process, the one after its crash, the no-device group's, and the batch worker
    // (started ahead, unused).
    expect(stats.processes_started == 4, || format!("{pids:?} {stats:?}"))
}

/// Cases whose only reason for a process of their own is their `env:` share one process per environment, though
/// apart in the suite (`policy::shared_process_env`), and so do the cases with peers; each row's first run is at
/// the delays it would have alone: a row with a delayed open runs at the short delay in the group, and its run at
/// the written delays (a fail at the short one) gets a process of its own.
fn env_groups(fx: &Fixture) -> Result<(), Failed> {
    let case = |id: &str| fx.cases.iter().find(|c| c.id == id).ok_or_else(|| Failed::from(format!("no case {id}")));
    let c = [
        case("api/open-conditions/eager-library/cudaLibraryLoadData")?,
        fx.plain(1)[0],
        case("library/kernel-count-eager")?,
        case("ipc/peer-opens-memory-and-writes-exporter-allocation")?,
        case("ipc/peer-sync-waits-for-exporter-work")?,
    ];
    let (r, stats) = fx.run(&c, &fx.opts(&[(c[4], "slow-gates")]));
    expect(kinds(&r).iter().all(|k| *k == VerdictKind::Pass), || format!("{:?}", kinds(&r)))?;
    let pids: Vec<Option<u32>> = r.iter().map(pid).collect();
    expect(pids[0] == pids[2] && pids[0] != pids[1] && pids[3] != pids[0], || format!("{pids:?}"))?;
    let delays: Vec<f64> = r[4].attempts.iter().map(|a| a.gate_delay_ms).collect();
    expect(delays == [30.0, 300.0] && pids[4] != pids[3], || format!("{delays:?} {pids:?}"))?;
    // The EAGER group's process, the peer group's, the written-delays run's, and the batch worker.
    expect(stats.processes_started == 4, || format!("{pids:?} {stats:?}"))
}

fn leak(fx: &Fixture) -> Result<(), Failed> {
    let c = fx.plain(3);
    let (r, stats) = fx.run(&c, &fx.opts(&[(c[1], "leak")]));
    expect(kinds(&r) == [VerdictKind::Pass; 3], || format!("{:?}", kinds(&r)))?;
    // The child reports the loss; the parent, knowing nothing else ran on the device, judges it the case's.
    let judged = r[1].dirty.as_deref().is_some_and(|d| d.contains("device memory not released: 100 MiB"));
    expect(judged && r[0].dirty.is_none() && r[2].dirty.is_none(), || format!("{:?}", r[1].dirty))?;
    expect(pid(&r[0]) == pid(&r[1]) && pid(&r[1]) != pid(&r[2]) && stats.memory_checks_skipped == 0, || {
        format!("{:?} {:?} {:?} {stats:?}", pid(&r[0]), pid(&r[1]), pid(&r[2]))
    })
}

/// A batch case that begins while a process of its lane starts has its memory check skipped, and the parent asks the
/// child not to read the free memory at all (`Request::skip_memory_check`): the same leaking case reports its loss
/// when asked and nothing when not, in the same worker process.
fn unchecked_leak(fx: &Fixture) -> Result<(), Failed> {
    use harness::runner::worker::{ChildSpec, Worker};
    let c = fx.plain(1);
    let opts = fx.opts(&[(c[0], "leak")]);
    let exe = std::env::current_exe().map_err(|e| format!("no test executable: {e}"))?;
    let mut worker = Worker::new(ChildSpec {
        exe,
        ordinal: 0,
        visible: None,
        mock: opts.mock.clone(),
        all_devices: false,
        sanitizer: None,
        host_waits: runner::HostWaits::default(),
        uuid: String::new(),
    });
    let deadline = Duration::from_secs(20);
    let skipped = worker.run_without_memory_check(c[0], 1.0, deadline);
    let loss_skipped = worker.last_memory_loss.own_device_mib;
    let checked = worker.run(c[0], 1.0, deadline);
    let loss_checked = worker.last_memory_loss.own_device_mib;
    expect(kinds(&[skipped.clone(), checked.clone()]) == [VerdictKind::Pass; 2], || {
        format!("{:?} {:?}", skipped.verdict, checked.verdict)
    })?;
    expect(pid(&skipped) == pid(&checked), || "the two runs were not in one process".into())?;
    expect(loss_skipped == 0 && loss_checked == 100, || format!("loss skipped {loss_skipped}, checked {loss_checked}"))
}

fn several(fx: &Fixture) -> Result<(), Failed> {
    let two: Vec<&Case> = fx.cases.iter().filter(|c| needs_all_devices(c) && !c.needs_own_process()).take(3).collect();
    expect(two.len() == 3, || "fewer than 3 several-device cases".into())?;
    let mut c = fx.plain(2);
    c.extend(&two);
    let mut second = mock_device();
    second.ordinal = 1;
    second.uuid = "GPU-mock-1".into();
    let mut first = mock_device();
    (first.device_count, second.device_count) = (2, 2);
    // The several-device case leaks on the first GPU, and the plain ones are slow enough to overlap it.
    let mut behaviours: Vec<(&Case, &str)> = c[..2].iter().map(|c| (*c, "slow")).collect();
    behaviours.push((two[0], "leak"));
    let mut o = fx.opts(&behaviours);
    o.restrict_visibility = true;
    let (r, _) = run_suite(&c, &[first, second], &o, |_, _| {});
    expect(kinds(&r).iter().all(|k| *k == VerdictKind::Pass), || format!("{:?}", kinds(&r)))?;
    let pids: Vec<Option<u32>> = r.iter().map(pid).collect();
    // The first leaks, so its worker ends; the other two share the next one, which is neither plain case's.
    expect(pids[3] == pids[4] && pids[2] != pids[3] && !pids[..2].contains(&pids[3]), || format!("{pids:?}"))?;
    // They all ran on the first device's runner, and the leak was judged the case's (nothing else could touch GPU 0).
    let on_first = r[2..].iter().all(|r| r.device == Some(0));
    let judged = r[2].dirty.as_deref().is_some_and(|d| d.contains("100 MiB"));
    expect(on_first && judged, || format!("{:?} {:?}", r.iter().map(|r| r.device).collect::<Vec<_>>(), r[2].dirty))
}

/// Where workers block while they wait for the device (the default), the cases that measure run in a worker of
/// their own with cudart's default waits (their figures are the seeds' programs'), started ahead like the batch
/// worker; with `auto` waits everywhere one worker runs them all.
fn measuring(fx: &Fixture) -> Result<(), Failed> {
    let plain = fx.plain(2);
    let measuring = fx.cases.iter().find(|c| measures(c) && !c.needs_own_process()).ok_or("no case that measures")?;
    let c = [plain[0], measuring, plain[1]];
    let (r, stats) = fx.run(&c, &fx.opts(&[]));
    let pids: Vec<Option<u32>> = r.iter().map(pid).collect();
    expect(kinds(&r) == [VerdictKind::Pass; 3], || format!("{r:?}"))?;
    expect(pids[0] == pids[2] && pids[1] != pids[0] && stats.processes_started == 2, || format!("{pids:?} {stats:?}"))?;
    let warm: Vec<bool> = r.iter().map(|r| r.verdict.messages[0].contains(", warm)")).collect();
    expect(warm == [true, true, true], || format!("warm: {warm:?}"))?;
    let auto = RunOptions { host_waits: runner::HostWaits::Auto, ..fx.opts(&[]) };
    let (r, stats) = fx.run(&c, &auto);
    let pids: Vec<Option<u32>> = r.iter().map(pid).collect();
    expect(pids[0] == pids[1] && pids[1] == pids[2] && stats.processes_started == 1, || format!("{pids:?} {stats:?}"))
}

fn sharing(fx: &Fixture) -> Result<(), Failed> {
    let mut c = fx.plain(2);
    let own = fx.cases.iter().find(|c| !c.env.is_empty()).ok_or("no case with env:")?;
    let poisons = fx.cases.iter().find(|c| !c.poisons.is_empty()).ok_or("no case with poisons-context:")?;
    c.insert(1, own);
    c.push(poisons);
    // The case that faults its context takes 100 ms (the mock's `slow`): its lane counts it as faulting time.
    let (r, stats) = fx.run(&c, &fx.opts(&[(poisons, "slow")]));
    let lane = &stats.lanes[0];
    let faulting = lane.faulting_s >= 0.1 && lane.own_s > lane.faulting_s;
    let phases = stats.phases().ok_or("no phases")?;
    expect(faulting && phases.faulting_s == Some(lane.faulting_s), || format!("{lane:?} {phases:?}"))?;
    let pids: Vec<Option<u32>> = r.iter().map(pid).collect();
    let distinct = pids[1] != pids[0] && pids[3] != pids[0] && pids[1] != pids[3];
    // Processes: the batch worker, and at least one each for the two own-process cases.
    expect(pids[0] == pids[2] && distinct && stats.processes_started >= 3, || format!("{pids:?} {stats:?}"))?;
    // Both own-process cases ran in processes started ahead (warm), as did the batch worker.
    let warm: Vec<bool> = r.iter().map(|r| r.verdict.messages[0].contains(", warm)")).collect();
    expect(warm == [true, true, true, true], || format!("warm: {warm:?}"))
}

fn flake(fx: &Fixture) -> Result<(), Failed> {
    let c = fx.plain(2);
    let (r, stats) = fx.run(&c, &fx.opts(&[(c[0], "flake"), (c[1], "fail")]));
    expect(kinds(&r) == [VerdictKind::Flake, VerdictKind::Fail], || format!("{:?}", kinds(&r)))?;
    let runs = |r: &CaseResult| r.attempts.iter().map(|a| a.kind.to_string()).collect::<Vec<_>>().join(",");
    expect(runs(&r[0]) == "fail,pass" && r[0].verdict.messages[0].starts_with("flake: "), || runs(&r[0]))?;
    // The run that failed says why in its attempt; the one that passed has nothing to say.
    let said = |a: &harness::record::Attempt| !a.messages.is_empty();
    expect(said(&r[0].attempts[0]) && !said(&r[0].attempts[1]), || format!("{:?}", r[0].attempts))?;
    // The fail reproduced on both re-runs, so it counts as a fail.
    expect(runs(&r[1]) == "fail,fail,fail" && stats.extra_runs == 3, || format!("{} {stats:?}", runs(&r[1])))
}

fn variant(fx: &Fixture) -> Result<(), Failed> {
    let c = fx.plain(1);
    let (r, _) = fx.run(&c, &fx.opts(&[(c[0], "variant-flip")]));
    expect(r[0].verdict.kind == VerdictKind::Flake, || format!("{:?}", r[0].verdict))?;
    expect(r[0].attempts.iter().map(|a| a.why.as_str()).collect::<Vec<_>>() == ["first", "variant-stability"], || {
        format!("{:?}", r[0].attempts)
    })
}

/// With a baseline that expects the variant a case shows, the case runs once (its stability was shown when the
/// baseline was made); a variant the baseline does not expect still runs twice, and flips to a flake.
fn known_variant(fx: &Fixture) -> Result<(), Failed> {
    let c = fx.plain(2);
    let mut o = fx.opts(&[(c[0], "variant-flip"), (c[1], "variant-flip")]);
    let variant = |i: usize, v: &str| (c[i].id.clone(), format!("variant {v}"));
    o.baseline = Some([variant(0, "a"), variant(1, "b")].into_iter().collect());
    let (r, _) = fx.run(&c, &o);
    expect(r[0].verdict.kind == VerdictKind::Variant && r[0].attempts.is_empty(), || format!("{:?}", r[0]))?;
    expect(r[1].verdict.kind == VerdictKind::Flake && r[1].attempts.len() >= 2, || format!("{:?}", r[1]))
}

fn gates(fx: &Fixture) -> Result<(), Failed> {
    let timed = fx.cases.iter().find(|c| has_delayed_open(c) && !c.needs_own_process()).ok_or("none")?;
    let (r, _) = fx.run(&[timed], &fx.opts(&[(timed, "slow-gates")]));
    let a = &r[0].attempts;
    expect(r[0].verdict.kind == VerdictKind::Pass && a.len() == 2, || format!("{:?} {a:?}", r[0].verdict))?;
    expect(a[0].kind == VerdictKind::Fail && a[0].gate_delay_ms == 30.0 && a[1].gate_delay_ms == 300.0, || {
        format!("{a:?}")
    })?;
    // At the written delays from the start, there is nothing to confirm.
    let mut o = fx.opts(&[(timed, "slow-gates")]);
    o.gate_delay = runner::WRITTEN_GATE_DELAY;
    let (r, _) = fx.run(&[timed], &o);
    expect(r[0].verdict.kind == VerdictKind::Pass && r[0].attempts.is_empty(), || format!("{:?}", r[0].attempts))
}

fn baseline(fx: &Fixture) -> Result<(), Failed> {
    let c = fx.plain(3);
    let mut o = fx.opts(&[(c[0], "fail"), (c[2], "fail")]);
    o.baseline = Some([(c[0].id.clone(), "fail".into()), (c[1].id.clone(), "fail".into())].into_iter().collect());
    let (r, _) = fx.run(&c, &o);
    let want = [VerdictKind::ExpectedFail, VerdictKind::UnexpectedPass, VerdictKind::Fail];
    expect(kinds(&r) == want, || format!("{:?}", kinds(&r)))?;
    expect(r[0].baseline.as_deref() == Some("fail") && r[2].baseline.is_none(), || format!("{:?}", r[0].baseline))
}

/// A baseline's `flake REASON` line: a failure that does not reproduce is a flake, known (tolerated, the line kept
/// in the result); a failure that reproduces is a known flake too; a pass stays a pass (not an unexpected one).
fn baseline_flake(fx: &Fixture) -> Result<(), Failed> {
    let c = fx.plain(3);
    let o = {
        let mut o = fx.opts(&[(c[0], "flake"), (c[1], "fail")]);
        let flake = |i: usize| (c[i].id.clone(), "flake fails now and then (bug 7)".to_owned());
        o.baseline = Some([flake(0), flake(1), flake(2)].into_iter().collect());
        o
    };
    let (r, _) = fx.run(&c, &o);
    let want = [VerdictKind::Flake, VerdictKind::Flake, VerdictKind::Pass];
    expect(kinds(&r) == want, || format!("{:?}", kinds(&r)))?;
    expect(r[0].is_known_flake() && r[1].is_known_flake() && !r[2].is_known_flake(), || format!("{r:?}"))?;
    expect(r[1].verdict.messages[0].contains("known flake fails now and then (bug 7); this run: fail"), || {
        format!("{:?}", r[1].verdict.messages)
    })?;
    // The first run failed and the reruns passed: the flake ran, and its runs are in the result.
    expect(r[0].attempts.len() >= 2 && r[2].attempts.is_empty(), || format!("{:?}", r[0].attempts))
}

/// An expectation file with a skip, a flake, an expected failure, a skip whose GPU glob does not match this GPU and
/// an expected failure that passes: the skipped case never reaches a worker and says why; the flake runs (its
/// first run fails) and is a known flake with its line; the expected failure is expected-fail; the conditional
/// skip runs; the expected failure that passed is an unexpected pass. The report passes but for that last case.
fn expectations(fx: &Fixture) -> Result<(), Failed> {
    use harness::report::expectations::Expectations;
    let c = fx.plain(5);
    let text = format!(
        "# test\nskip {} hangs this driver (bug 1)\nflake {} fails now and then (bug 2)\nfail {} known driver bug (bug 3)\n\
         skip {} gpu=*A100* only on A100s\nfail {} fixed since? (bug 4)\n",
        c[0].id, c[1].id, c[2].id, c[3].id, c[4].id
    );
    let mut o = fx.opts(&[(c[0], "crash"), (c[1], "flake"), (c[2], "fail")]);
    o.expectations = Some(Expectations::parse("exp.txt", &text)?);
    let (r, stats) = fx.run(&c, &o);
    use VerdictKind::*;
    expect(kinds(&r) == [Skipped, Flake, ExpectedFail, Pass, UnexpectedPass], || format!("{:?}", kinds(&r)))?;
    expect(
        r[0].verdict.messages == ["skipped by the expectation skip (exp.txt:2): hangs this driver (bug 1)"],
        || format!("{:?}", r[0].verdict.messages),
    )?;
    // Not run: no worker answered for it (its mock would have crashed).
    expect(pid(&r[0]).is_none() && r[0].observations.is_none() && stats.processes_started == 1, || {
        format!("{:?} {stats:?}", r[0])
    })?;
    expect(r[1].is_known_flake() && r[1].attempts.len() >= 2 && pid(&r[1]).is_some(), || format!("{:?}", r[1]))?;
    expect(r[1].expectation.as_deref() == Some("flake (exp.txt:3): fails now and then (bug 2)"), || {
        format!("{:?}", r[1].expectation)
    })?;
    expect(r[2].verdict.messages[0].starts_with("the expectation fail (exp.txt:4): known driver bug (bug 3)"), || {
        format!("{:?}", r[2].verdict.messages)
    })?;
    expect(r[3].expectation.is_none(), || format!("{:?}", r[3].expectation))?;
    let report = session::report_of(&report_header(), &[mock_device()], &o, &stats, Duration::ZERO, r.clone());
    let without_last =
        session::report_of(&report_header(), &[mock_device()], &o, &stats, Duration::ZERO, r[..4].to_vec());
    expect(!report.passed() && without_last.passed(), || "the unexpected pass alone fails the run".into())
}

fn devices(fx: &Fixture) -> Result<(), Failed> {
    let c = fx.plain(8);
    let mut second = mock_device();
    second.ordinal = 1;
    second.uuid = "GPU-mock-1".into();
    // Cases as long as real ones, so that the second device's worker is up before the first device is done.
    let slow: Vec<(&Case, &str)> = c.iter().map(|c| (*c, "slow")).collect();
    let mut o = fx.opts(&slow);
    o.restrict_visibility = true;
    let (r, stats) = run_suite(&c, &[mock_device(), second], &o, |_, _| {});
    let on: Vec<Option<i32>> = r.iter().map(|r| r.device).collect();
    expect(on.contains(&Some(0)) && on.contains(&Some(1)) && on.iter().all(Option::is_some), || format!("{on:?}"))?;
    let ids: Vec<&str> = r.iter().map(|r| r.id.as_str()).collect();
    let want: Vec<&str> = c.iter().map(|c| c.id.as_str()).collect();
    // One worker per device.
    expect(ids == want && stats.processes_started == 2, || format!("{ids:?} {stats:?}"))
}

/// `--own-processes every-device` (the default): the cases that need a process of their own run on both devices,
/// each in a process of its own started ahead, and every case still has its result; with `first-device` they all
/// run on the first.
fn own_everywhere(fx: &Fixture) -> Result<(), Failed> {
    let own: Vec<&Case> = fx
        .cases
        .iter()
        .filter(|c| c.needs_own_process() && !needs_all_devices(c) && c.poisons.is_empty() && !measures(c))
        // Cases of their own, not sweep rows: consecutive rows share one process (`sweep_rows`), on one lane.
        .filter(|c| harness::exec::row_index(c).is_none())
        .take(10)
        .collect();
    expect(own.len() == 10, || "fewer than 10 own-process cases".into())?;
    let mut c = fx.plain(2);
    c.extend(&own);
    let mut second = mock_device();
    second.ordinal = 1;
    second.uuid = "GPU-mock-1".into();
    // As long as real ones, so that neither lane can take every case before the other starts.
    let slow: Vec<(&Case, &str)> = c.iter().map(|c| (*c, "slow")).collect();
    let mut o = fx.opts(&slow);
    o.restrict_visibility = true;
    let own_devices = |o: &RunOptions| {
        let (r, _) = run_suite(&c, &[mock_device(), second.clone()], o, |_, _| {});
        let ids: Vec<&str> = r.iter().map(|r| r.id.as_str()).collect();
        let want: Vec<&str> = c.iter().map(|c| c.id.as_str()).collect();
        let warm = r[2..].iter().all(|r| r.verdict.messages[0].contains(", warm)"));
        (ids == want && warm, r[2..].iter().map(|r| r.device).collect::<Vec<_>>())
    };
    o.own_processes = harness::runner::OwnProcessLanes::FirstDevice;
    let (complete, first) = own_devices(&o);
    expect(complete && first.iter().all(|d| *d == Some(0)), || format!("first-device: {first:?}"))?;
    o.own_processes = harness::runner::OwnProcessLanes::EveryDevice;
    let (complete, every) = own_devices(&o);
    expect(complete && every.contains(&Some(0)) && every.contains(&Some(1)), || format!("every-device: {every:?}"))
}

/// The schedule end to end, in mock child mode on 1, 2 and 4 simulated GPUs: plain, own-process, measuring and
/// several-device cases (each taking 100 ms, as real ones do), one failing. Every case gets the same verdict on
/// each, measurements run on the last GPU, the several-device cases on the first, and every GPU runs cases. No
/// wall-clock bound: one failed the fresh-clone CI at `6a5aa0a` (8.9 s against 7.5 s on 2 GPUs, the 2-core machine
/// busy with a build beside it), and how long processes take to start on a loaded machine says nothing about the
/// schedule. The makespan is checked on the schedule's simulated clock (`runner::schedule`'s tests: within 15 % of
/// the least any schedule could reach, for 1, 2, 4 and 8 GPUs).
fn scaling(fx: &Fixture) -> Result<(), Failed> {
    let plain = fx.plain(24);
    let own: Vec<&Case> = fx
        .cases
        .iter()
        .filter(|c| c.needs_own_process() && !needs_all_devices(c) && !measures(c) && c.env.is_empty())
        .take(6)
        .collect();
    let measuring: Vec<&Case> =
        fx.cases.iter().filter(|c| measures(c) && !c.needs_own_process() && !needs_all_devices(c)).take(3).collect();
    let several: Vec<&Case> =
        fx.cases.iter().filter(|c| needs_all_devices(c) && !c.needs_own_process()).take(3).collect();
    expect(own.len() == 6 && measuring.len() == 3 && several.len() == 3, || "too few cases of a kind".into())?;
    let mut c: Vec<&Case> = Vec::new();
    for (i, p) in plain.iter().enumerate() {
        c.push(p);
        if i % 4 == 0 {
            c.push(own[i / 4]);
        }
    }
    c.extend(&measuring);
    c.extend(&several);
    let mut behaviours: Vec<(&Case, &str)> = c.iter().map(|c| (*c, "slow")).collect();
    behaviours[3].1 = "fail";
    let mut verdicts = Vec::new();
    for n in [1usize, 2, 4] {
        let devices: Vec<_> = (0..n)
            .map(|o| harness::device::gpu::DeviceInfo {
                ordinal: o as i32,
                uuid: format!("GPU-mock-{o}"),
                device_count: n as u32,
                ..mock_device()
            })
            .collect();
        let mut o = fx.opts(&behaviours);
        o.restrict_visibility = n > 1;
        let (r, stats) = run_suite(&c, &devices, &o, |_, _| {});
        let on = |r: &CaseResult| r.device.unwrap_or(-1);
        let is = |r: &CaseResult, of: &[&Case]| of.iter().any(|x| x.id == r.id);
        expect(r.iter().filter(|r| is(r, &measuring)).all(|r| on(r) == n as i32 - 1), || format!("{n}: measuring"))?;
        expect(r.iter().filter(|r| is(r, &several)).all(|r| on(r) == 0), || format!("{n}: several"))?;
        let used: std::collections::BTreeSet<i32> = r.iter().map(on).collect();
        expect(used.len() == n, || format!("{n} GPUs, cases ran on {used:?}"))?;
        expect(stats.lanes.len() == n, || format!("{:?}", stats.lanes))?;
        verdicts.push(r.iter().map(|r| (r.id.clone(), r.outcome())).collect::<Vec<_>>());
    }
    // Apart from the several-device cases, not-supported on one GPU, with the reason.
    let one_gpu: Vec<&(String, String)> =
        verdicts[0].iter().filter(|(id, _)| several.iter().any(|c| c.id == *id)).collect();
    expect(one_gpu.iter().all(|(_, o)| o == "not-supported"), || format!("{one_gpu:?}"))?;
    let others = |v: &[(String, String)]| -> Vec<(String, String)> {
        v.iter().filter(|(id, _)| !several.iter().any(|c| c.id == *id)).cloned().collect()
    };
    expect(others(&verdicts[0]) == others(&verdicts[1]) && verdicts[1] == verdicts[2], || format!("{verdicts:?}"))?;
    expect(verdicts[0].iter().filter(|(_, o)| o == "fail").count() == 1, || format!("{:?}", verdicts[0]))
}

fn rewrites(fx: &Fixture) -> Result<(), Failed> {
    let c = fx.plain(3);
    let path = std::env::temp_dir().join(format!("cuda-conformance-rewrite-{}.json", std::process::id()));
    let header = report_header();
    let mut seen = Vec::new();
    let report =
        session::run_to_report(&c, &[mock_device()], &fx.opts(&[(c[2], "crash")]), &header, Some(&path), |_, e| {
            seen.push(Report::read(&path).map(|r| (r.cases.len(), r.complete)).map_err(|x| format!("{x} {e:?}")));
        });
    let _ = std::fs::remove_file(&path);
    expect(seen == [Ok((1, false)), Ok((2, false)), Ok((3, false))], || format!("{seen:?}"))?;
    let run = report.run.ok_or("no run info")?;
    expect(run.gate_delay_ms == 30.0 && run.processes_started >= 2, || format!("{run:?}"))?;
    // The crash ran three times: its first run in the batch worker, its reruns in processes of the lane's pool
    // (deferred), so they are the own-process phase, which ends after the batch began.
    let crash = report.cases.iter().find(|r| r.id == c[2].id).ok_or("no crash result")?;
    expect(crash.attempts.len() == 3 && run.extra_runs == 2, || format!("{:?} {run:?}", crash.attempts))?;
    // How the workers waited, and where the time went: the batch began before the reruns ended, and everything
    // ended before the report's wall time (no figures in a suite run).
    let p = run.phases.clone().ok_or("no phases")?;
    let ordered = p.batch_start_s <= p.own_phase_end_s
        && p.own_phase_end_s <= p.cases_end_s
        && p.cases_end_s * 1000.0 <= report.wall_ms as f64 + 1.0;
    // The processes started ahead for the reruns were starting for a while, within the run.
    let starting = p.starting_s.is_some_and(|s| s > 0.0 && s * 1000.0 <= report.wall_ms as f64 + 1.0);
    expect(run.host_waits.as_deref() == Some("block") && ordered && starting && p.figures_s.is_none(), || {
        format!("{run:?}")
    })
}

fn per_case(fx: &Fixture) -> Result<(), Failed> {
    let c = fx.plain(3);
    let mut o = fx.opts(&[]);
    o.process_per_case = true;
    let (r, stats) = fx.run(&c, &o);
    let pids: std::collections::BTreeSet<Option<u32>> = r.iter().map(pid).collect();
    expect(pids.len() == 3 && stats.processes_started == 3, || format!("{pids:?} {stats:?}"))
}

/// A folder of fake reproducers: each `(case, shell script)` as the program `cuda-conformance repro` would name.
fn fake_reproducers(name: &str, programs: &[(&Case, &str)]) -> Result<std::path::PathBuf, Failed> {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("fake-reproducers-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    for (case, script) in programs {
        let path = dir.join(harness::record::executors::file_stem(&case.id));
        std::fs::write(&path, format!("#!/bin/sh\n{script}\n")).map_err(|e| e.to_string())?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).map_err(|e| e.to_string())?;
    }
    Ok(dir)
}

/// `--executor cxx` runs every case as its reproducer (no worker starts) and `--executor both` records each case's
/// second run and the agreement: two crashes agree, a pass against a missing program or a fail against a crash
/// disagree, a case the device cannot run is not comparable; the summaries list the disagreements with the
/// reproduce line. (The comparison itself is unit-tested on hand-made traces in `readings::agreement`.)
fn executors(fx: &Fixture) -> Result<(), Failed> {
    use harness::record::executors::{AgreementKind, Executor};
    let plain = fx.plain(3);
    let unsupported = fx.cases.iter().find(|c| needs_all_devices(c)).ok_or("no several-device case")?;
    let c = [plain[0], plain[1], plain[2], unsupported];
    let dir = fake_reproducers("both", &[(c[0], "echo '{not json'"), (c[2], "kill -SEGV $$")])?;
    let mut o = fx.opts(&[(c[0], "crash"), (c[2], "fail")]);
    o.reruns = 0;
    o.repro_dir = Some(dir.clone());
    o.executors = runner::Executors::Cxx;
    let (r, stats) = fx.run(&c, &o);
    let want = [VerdictKind::Crash, VerdictKind::Crash, VerdictKind::Crash, VerdictKind::NotSupported];
    expect(kinds(&r) == want, || format!("cxx: {:?}", kinds(&r)))?;
    expect(stats.processes_started == 0 && r.iter().all(|r| r.executor == Some(Executor::Cxx)), || {
        format!("cxx: {stats:?} {:?}", r.iter().map(|r| r.executor).collect::<Vec<_>>())
    })?;
    expect(r[1].verdict.messages[0].contains(&format!("cuda-conformance repro {} --out", c[1].id)), || {
        format!("a missing program names the command that builds it: {:?}", r[1].verdict.messages)
    })?;
    o.executors = runner::Executors::Both;
    let (r, _) = fx.run(&c, &o);
    let _ = std::fs::remove_dir_all(&dir);
    let agreement: Vec<Option<AgreementKind>> = r.iter().map(|r| r.second.as_ref().map(|s| s.agreement.kind)).collect();
    let want = [AgreementKind::Agree, AgreementKind::Disagree, AgreementKind::Disagree, AgreementKind::NotComparable];
    expect(agreement == want.map(Some), || format!("both: {agreement:?} {r:#?}"))?;
    expect(kinds(&r) == [VerdictKind::Crash, VerdictKind::Pass, VerdictKind::Fail, VerdictKind::NotSupported], || {
        format!("both: the Rust executor's verdicts count: {:?}", kinds(&r))
    })?;
    let report = session::report_of(&report_header(), &[mock_device()], &o, &SuiteStats::default(), Duration::ZERO, r);
    let totals = report.agreement_totals().ok_or("no agreement totals")?;
    expect(
        totals.agree == 1 && totals.disagree == [c[1].id.clone(), c[2].id.clone()] && totals.not_comparable == 1,
        || format!("{totals:?}"),
    )?;
    let table = report.summary_table();
    let reproduce = harness::record::executors::reproduce_line(&c[1].id, None);
    expect(
        table.contains(&totals.line())
            && table.contains(&reproduce)
            && table.contains("executors disagree: rust gave pass, cxx gave crash"),
        || table.clone(),
    )?;
    let junit = report.junit();
    expect(junit.contains("type=\"executors-disagree\"") && junit.contains("failures=\"3\""), || junit.clone())?;
    let markdown = report.markdown();
    expect(markdown.contains("## executors") && markdown.contains(&format!("`{reproduce}`")), || markdown.clone())?;
    expect(report.run.as_ref().and_then(|r| r.executor.as_deref()) == Some("both"), || format!("{:?}", report.run))
}
