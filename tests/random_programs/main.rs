//! Random multi-stream programs whose captured CUDA graphs must behave exactly like eager execution.
//!
//! proptest generates well-formed programs (generate.rs) over the IR of program.rs: multi-stream bodies with
//! stream-ordered allocations, and an update of the instantiated graph after its first launch. Each is lowered
//! (lower.rs) into cases that carry the expectations of an independent happens-before and update model (model.rs)
//! and CPU interpreter (interpret.rs); an executor runs them eagerly and as a captured graph, and the harness's own
//! verdict judges them (checks.rs, with the few checks the case language cannot express). A failing program
//! shrinks to a minimal one and is printed as a case (the harness printer), ready for `cases/`, where the same
//! verdict judges it.
//!
//! Programs over two devices (`generate::two_device_programs`: streams, events and buffers on two GPUs, cross-device
//! waits, copies between the devices' memory; peer copies in eager-only ones) go through the same model, lowering
//! and checks.
//!
//! Trials (libtest-mimic, so GPU properties can be ignored with a reason):
//! - `cpu::*`: properties that need no GPU, always run; `unit::*`: unit tests of each module;
//! - `gpu::*`: the properties on the GPU, ignored with the reason when there is no device or no executor (the
//!   two-device property also where fewer than two devices with peer access are visible).
//!
//! `PROPTEST_CASES` sets the number of programs per property. Failures are saved under
//! `tests/random_programs/regressions/` and replayed first. `RANDOM_PROGRAMS_BROKEN_MODEL=ignore-waits` (or
//! `ignore-updates`, `forbidden-update-succeeds`) makes the checks use a deliberately wrong model, to show that
//! they catch it (saving no regressions then).

mod checks;
mod generate;
mod interpret;
mod lower;
mod model;
mod program;
mod sim;

use checks::{check_eager_program, check_program, Check, Failure};
use generate::Programs;
use harness::case::ast::Case;
use harness::record::observations::Observations;
use libtest_mimic::{Arguments, Completion, Failed, Trial};
use model::{Closure, HappensBefore, ModelMode};
use program::{Flavor, Op, Program};
use proptest::strategy::{Strategy, ValueTree};
use proptest::test_runner::{
    Config, FailurePersistence, FileFailurePersistence, RngAlgorithm, TestCaseError, TestError, TestRng, TestRunner,
};
use sim::Sim;
use std::sync::Mutex;

fn main() {
    let args = Arguments::from_args();
    let mut trials = cpu_properties();
    trials.extend(gpu_properties());
    trials.extend(unit_tests());
    libtest_mimic::run(&args, trials).exit();
}

// ---------------------------------------------------------------------------------------------------------------
// Runner configuration

/// Where a property's failures are saved and replayed from: `tests/random_programs/regressions/NAME.txt`.
fn regressions(name: &str) -> &'static str {
    let path = format!("{}/tests/random_programs/regressions/{name}.txt", env!("CARGO_MANIFEST_DIR"));
    // proptest wants a &'static str; a few short strings per test run.
    Box::leak(path.into_boxed_str())
}

/// Programs per CPU property and per GPU property under plain `cargo test`.
const CPU_CASES: u32 = 256;
const GPU_CASES: u32 = 32;

/// A runner for `default_cases` programs (PROPTEST_CASES overrides), replaying and saving regressions in
/// `regressions` (none when `None`).
fn runner(default_cases: u32, regressions: Option<&'static str>) -> TestRunner {
    let cases = std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(default_cases);
    let failure_persistence =
        regressions.map(|path| Box::new(FileFailurePersistence::Direct(path)) as Box<dyn FailurePersistence>);
    TestRunner::new(Config { cases, failure_persistence, ..Config::default() })
}

/// Regressions are saved only with the faithful model: a failure of the deliberately broken one is expected.
fn regressions_for(mode: ModelMode, name: &str) -> Option<&'static str> {
    (mode == ModelMode::Faithful).then(|| regressions(name))
}

/// Runs `check` over `programs`; on failure, re-runs the shrunk program to report it as a case.
fn property(
    mut runner: TestRunner,
    programs: impl Into<Programs>,
    check: impl Fn(&Program) -> Result<(), Failure>,
) -> Result<(), Failed> {
    let programs = programs.into();
    let flavor = programs.flavor();
    let cases = runner.config().cases;
    let checked = std::sync::atomic::AtomicUsize::new(0);
    let result = runner.run(&programs.strategy(), |p| {
        checked.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        check(&p).map_err(|f| TestCaseError::fail(f.to_string()))
    });
    match result {
        Ok(()) => {
            // Printed so that a run's log shows how many programs a pass stands for (PROPTEST_CASES).
            eprintln!("{programs:?}: {cases} programs passed ({} checked, regressions included)", checked.into_inner());
            Ok(())
        }
        Err(TestError::Abort(why)) => Err(format!("proptest aborted: {why}").into()),
        Err(TestError::Fail(why, shrunk)) => {
            let flaky = |p: &Program| format!("{why}\n(the program passed when re-run: a flaky failure)\n{p:?}");
            if check(&shrunk).is_ok() {
                return Err(flaky(&shrunk).into());
            }
            let minimal = generate::minimize(shrunk.clone(), flavor, |p| check(p).is_err());
            let failure = check(&minimal).err().ok_or_else(|| flaky(&minimal))?;
            Err(format!(
                "proptest shrank the failure to {} ops, removing single ops then left {}; {}",
                shrunk.ops.len(),
                minimal.ops.len(),
                report(&minimal, &failure)
            )
            .into())
        }
    }
}

/// Where a shrunk failure is to be saved as a case (the report says so, and its reproduce command reads it there).
const SAVE_AS: &str = "cases/random.case";

/// A failure as the developer needs it: what failed, the minimal program as a case to save under `cases/`, and the
/// command that turns the saved case into a standalone C++ reproducer.
fn report(program: &Program, failure: &Failure) -> String {
    let ops = program.ops.len();
    format!(
        "{failure}\n\nminimal program: {ops} ops ({} work); as a case for {SAVE_AS}:\n\n{}\n{}",
        program.work_ops().count(),
        harness::case::print_case(&failure.case),
        harness::record::executors::reproduce_line(&failure.case.id, Some(SAVE_AS))
    )
}

// ---------------------------------------------------------------------------------------------------------------
// CPU properties

fn cpu_properties() -> Vec<Trial> {
    vec![
        Trial::test("cpu::generated_programs_are_well_formed", || {
            for (programs, name) in [
                (Programs::OneDevice(Flavor::Capturable), "cpu_well_formed"),
                (Programs::OneDevice(Flavor::EagerOnly), "cpu_well_formed_eager"),
                (Programs::TwoDevices(Flavor::Capturable), "cpu_well_formed_two_devices"),
                (Programs::TwoDevices(Flavor::EagerOnly), "cpu_well_formed_two_devices_eager"),
            ] {
                property(runner(CPU_CASES, Some(regressions(name))), programs, |p| {
                    p.check_well_formed(programs.flavor()).map_err(|message| cpu_failure(p, message))
                })?;
            }
            Ok(())
        }),
        Trial::test("cpu::model_is_acyclic_and_contains_stream_order", || {
            property(runner(CPU_CASES, Some(regressions("cpu_model"))), Flavor::EagerOnly, |p| {
                model_invariants(p).map_err(|m| cpu_failure(p, m))
            })?;
            property(
                runner(CPU_CASES, Some(regressions("cpu_model_two_devices"))),
                Programs::TwoDevices(Flavor::EagerOnly),
                |p| model_invariants(p).map_err(|m| cpu_failure(p, m)),
            )
        }),
        Trial::test("cpu::lowering_then_raising_gives_the_program_back", || {
            property(runner(CPU_CASES, Some(regressions("cpu_lower_raise"))), Flavor::Capturable, |p| {
                round_trip(p, false).map_err(|m| cpu_failure(p, m))
            })?;
            property(
                runner(CPU_CASES, Some(regressions("cpu_lower_raise_two_devices"))),
                Programs::TwoDevices(Flavor::Capturable),
                |p| round_trip(p, false).map_err(|m| cpu_failure(p, m)),
            )
        }),
        Trial::test("cpu::printing_then_parsing_gives_the_program_back", || {
            property(runner(CPU_CASES, Some(regressions("cpu_print_parse"))), Flavor::Capturable, |p| {
                round_trip(p, true).map_err(|m| cpu_failure(p, m))
            })?;
            property(
                runner(CPU_CASES, Some(regressions("cpu_print_parse_two_devices"))),
                Programs::TwoDevices(Flavor::Capturable),
                |p| round_trip(p, true).map_err(|m| cpu_failure(p, m)),
            )
        }),
        Trial::test("cpu::generator_covers_the_issue", generator_coverage),
        Trial::test("cpu::simulated_device_passes_all_checks", || {
            let mode = ModelMode::from_env()?;
            let saved = regressions_for(mode, "cpu_simulated_device");
            let sim = |c: &Case| Sim::default().run(c);
            property(runner(CPU_CASES, saved), Flavor::Capturable, |p| check_program(p, &mut { sim }, mode))?;
            let saved = regressions_for(mode, "cpu_simulated_device_eager");
            property(runner(CPU_CASES, saved), Flavor::EagerOnly, |p| check_eager_program(p, &mut { sim }, mode))?;
            let saved = regressions_for(mode, "cpu_simulated_device_two_devices");
            property(runner(CPU_CASES, saved), Programs::TwoDevices(Flavor::Capturable), |p| {
                check_program(p, &mut { sim }, mode)
            })?;
            let saved = regressions_for(mode, "cpu_simulated_device_two_devices_eager");
            property(runner(CPU_CASES, saved), Programs::TwoDevices(Flavor::EagerOnly), |p| {
                check_eager_program(p, &mut { sim }, mode)
            })
        }),
        Trial::test("cpu::broken_model_is_caught_and_shrunk_on_the_simulator", || {
            broken_model_demo(ModelMode::IgnoreWaits, 4)
        }),
        Trial::test("cpu::wrong_update_model_is_caught_and_shrunk_on_the_simulator", || {
            broken_model_demo(ModelMode::IgnoreUpdates, 3)?;
            broken_model_demo(ModelMode::ForbiddenUpdateSucceeds, 3)
        }),
    ]
}

fn cpu_failure(program: &Program, message: String) -> Failure {
    let variant = lower::Variant::Eager { reps: 1 };
    let case = lower::lower(program, variant, ModelMode::Faithful);
    Failure { check: Check::Program, variant, message, case: Box::new(case) }
}

/// The model's edges run forward in issue order (so it is acyclic), its closure equals the closure of its edges
/// computed from scratch, and it contains the order of each stream.
fn model_invariants(p: &Program) -> Result<(), String> {
    let hb = HappensBefore::build(p, ModelMode::Faithful);
    if let Some(&(a, b)) = hb.edges.iter().find(|(a, b)| a >= b) {
        return Err(format!("edge {a} -> {b} does not run forward"));
    }
    let from_scratch = Closure::of(hb.nodes(), &hb.edges).map_err(|n| format!("cycle through node {n}"))?;
    if from_scratch != hb.closure() {
        return Err("incremental closure differs from the closure of the edges".into());
    }
    if (0..hb.nodes()).any(|n| from_scratch.reaches(n, n)) {
        return Err("a node reaches itself".into());
    }
    let work: Vec<usize> = p.work_ops().collect();
    for (x, &a) in work.iter().enumerate() {
        for &b in &work[x + 1..] {
            if p.ops[a].stream() == p.ops[b].stream() && !hb.before(a, b) {
                return Err(format!(
                    "{} and {} share a stream but are unordered",
                    program::label(a),
                    program::label(b)
                ));
            }
            if hb.before(b, a) {
                return Err(format!("{} is ordered before the earlier {}", program::label(b), program::label(a)));
            }
        }
    }
    Ok(())
}

/// lower → (print → parse, when `through_text`) → raise gives the program back, for every variant (the update only
/// from the captured one: eager runs show only its effect). The text goes through the harness's own printer and
/// parser, as a saved regression case would. A case over two devices must also pass the harness's validation (its
/// device indices, its requirements, no `before` across devices); a one-device case may declare an async buffer
/// that no operation uses, which validation refuses (`later` but never created) and the lowering keeps so that
/// raising gives the program back.
fn round_trip(p: &Program, through_text: bool) -> Result<(), String> {
    for variant in
        [lower::Variant::Eager { reps: 1 }, lower::Variant::Eager { reps: 3 }, lower::Variant::Captured { launches: 3 }]
    {
        let case = lower::lower(p, variant, ModelMode::Faithful);
        if through_text {
            let text = harness::case::print_case(&case);
            let file = harness::case::parse_file("random.case", &text)
                .map_err(|e| format!("{variant:?}: the printed case does not parse: {e:?}\n{text}"))?;
            if file.cases.first() != Some(&case) {
                return Err(format!("{variant:?}: parse(print(case)) differs from the case\n{text}"));
            }
            let problems = if p.devices() > 1 { harness::case::validate(&file) } else { Vec::new() };
            if !problems.is_empty() {
                let problems: Vec<String> = problems.iter().map(|d| d.to_string()).collect();
                return Err(format!("{variant:?}: the case is not valid: {}\n{text}", problems.join("; ")));
            }
        }
        let back = lower::raise(&case).map_err(|e| format!("{variant:?}: {e}"))?;
        let want = match variant {
            lower::Variant::Captured { .. } => p.clone(),
            lower::Variant::Eager { .. } => Program { update: None, ..p.clone() },
        };
        if back != want {
            return Err(format!("{variant:?}: raised program differs:\n{back:?}"));
        }
    }
    Ok(())
}

/// What the issue asks programs to contain, each in a fair share of 256 programs (deterministic seed).
fn generator_coverage() -> Result<(), Failed> {
    let mut counts: Vec<(&str, usize)> = Vec::new();
    let mut count = |name, hit: bool| match counts.iter_mut().find(|(n, _)| *n == name) {
        Some((_, c)) => *c += usize::from(hit),
        None => counts.push((name, usize::from(hit))),
    };
    let mut rng_runner = TestRunner::new_with_rng(Config::default(), TestRng::deterministic_rng(RngAlgorithm::ChaCha));
    for flavor in [Flavor::Capturable, Flavor::EagerOnly] {
        let strategy = generate::programs(flavor);
        for _ in 0..256 {
            let p = strategy.new_tree(&mut rng_runner).map_err(|e| format!("{e}"))?.current();
            let hb = HappensBefore::build(&p, ModelMode::Faithful);
            let has = |f: &dyn Fn(&Op) -> bool| p.ops.iter().any(f);
            if flavor == Flavor::EagerOnly {
                count("wait on a never-recorded event", waits_on_unrecorded(&p));
                count("eager: batched copy", has(&|o| matches!(o, Op::BatchCopy { .. })));
                continue;
            }
            count("6 streams", p.streams.len() == 6);
            count("2 streams", p.streams.len() == 2);
            count("blocking and non-blocking streams", p.streams.contains(&true) && p.streams.contains(&false));
            count("fill", has(&|o| matches!(o, Op::Fill { .. })));
            count("transform", has(&|o| matches!(o, Op::Transform { .. })));
            count("compare", has(&|o| matches!(o, Op::Compare { .. })));
            count("memset", has(&|o| matches!(o, Op::Memset { .. })));
            count(
                "memset of pinned memory",
                has(&|o| matches!(*o, Op::Memset { buf, .. } if p.buffers[buf] == program::BufKind::Pinned)),
            );
            count("host function", has(&|o| matches!(o, Op::HostFunc { .. })));
            count("2D copy (cudaMemcpy2DAsync)", has(&|o| matches!(o, Op::Copy2D { .. })));
            count("copy into the symbol (cudaMemcpyToSymbolAsync)", has(&|o| matches!(o, Op::ToSymbol { .. })));
            count("copy out of the symbol (cudaMemcpyFromSymbolAsync)", has(&|o| matches!(o, Op::FromSymbol { .. })));
            count("host snapshot", has(&|o| matches!(o, Op::HostFunc { snapshot: Some(_), .. })));
            count("device-to-device copy", has(&|o| copy_kinds(&p, o) == Some((false, false))));
            count("pinned-host copy", has(&|o| matches!(copy_kinds(&p, o), Some((a, b)) if a != b)));
            count("cross-stream edge", cross_stream_edge(&p, &hb));
            count("event re-recorded between two waits", re_record_between_waits(&p));
            count("shared buffer across streams", shared_across_streams(&p));
            count("disjoint buffers across streams", disjoint_across_streams(&p, &hb));
            let alloc = |o: &Op| matches!(o, Op::Alloc { .. });
            count("stream-ordered allocation", has(&alloc));
            count("async buffer used on another stream than its allocation", async_used_elsewhere(&p));
            count("async buffer freed on another stream than its allocation", async_freed_elsewhere(&p));
            count("async buffer drained into a permanent one", async_drained(&p));
            let update = p.update.as_ref();
            let edits = || update.into_iter().flat_map(|u| u.edits.iter());
            count("exec-set-node", edits().any(|e| e.exec));
            count("set-node of the template", edits().any(|e| !e.exec));
            count("kernel function change", edits().any(|e| e.to.word() != p.ops[e.op].word()));
            count("buffer change", edits().any(|e| e.to.accesses()[0].buf != p.ops[e.op].accesses()[0].buf));
            count("whole update", update.is_some_and(|u| u.whole.is_some() && !u.add_node));
            count("forbidden update (topology changed)", update.is_some_and(|u| u.add_node));
            count(
                "exec edit undone by a whole update",
                update.is_some_and(|u| u.whole.is_some_and(|w| u.edits[..w].iter().any(|e| e.exec)) && !u.add_node),
            );
        }
    }
    let eager = generate::two_device_programs(Flavor::EagerOnly);
    for _ in 0..256 {
        let p = eager.new_tree(&mut rng_runner).map_err(|e| format!("{e}"))?.current();
        count("two devices, eager: peer copy", p.ops.iter().any(|o| matches!(o, Op::PeerCopy { .. })));
    }
    let strategy = generate::two_device_programs(Flavor::Capturable);
    for _ in 0..256 {
        let p = strategy.new_tree(&mut rng_runner).map_err(|e| format!("{e}"))?.current();
        let hb = HappensBefore::build(&p, ModelMode::Faithful);
        let pl = &p.placement;
        let has = |f: &dyn Fn(&Op) -> bool| p.ops.iter().any(f);
        let on = |o: &Op| pl.stream(o.stream());
        let device_memory = |b: usize| p.buffers[b] == program::BufKind::Device;
        count("two devices: a kernel on device 1", has(&|o| o.is_kernel() && on(o) == 1));
        count(
            "two devices: a wait on another device's event",
            has(&|o| matches!(*o, Op::Wait { event, .. } if pl.event(event) != on(o))),
        );
        count(
            "two devices: memcpy-async between the devices' memory",
            has(
                &|o| matches!(*o, Op::Copy { dst, src, .. } if device_memory(dst) && device_memory(src) && pl.buffer(dst) != pl.buffer(src)),
            ),
        );
        count(
            "two devices: a model edge between the devices",
            hb.edges.iter().any(|&(a, b)| on(&p.ops[hb.work[a]]) != on(&p.ops[hb.work[b]])),
        );
        count(
            "two devices: pinned memory touched from device 1",
            has(&|o| {
                on(o) == 1 && o.is_kernel() && o.accesses().iter().any(|a| p.buffers[a.buf] == program::BufKind::Pinned)
            }),
        );
    }
    let thin: Vec<String> = counts.iter().filter(|(_, c)| *c < 16).map(|(n, c)| format!("{n}: {c}/256")).collect();
    if thin.is_empty() {
        Ok(())
    } else {
        Err(format!("features too rare in generated programs: {}", thin.join(", ")).into())
    }
}

/// `(dst pinned, src pinned)` of a copy.
fn copy_kinds(p: &Program, o: &Op) -> Option<(bool, bool)> {
    let pinned = |b: usize| p.buffers[b] == program::BufKind::Pinned;
    match *o {
        Op::Copy { dst, src, .. } => Some((pinned(dst), pinned(src))),
        _ => None,
    }
}

fn waits_on_unrecorded(p: &Program) -> bool {
    let mut recorded = vec![false; p.events];
    p.ops.iter().any(|o| match *o {
        Op::Record { event, .. } => {
            recorded[event] = true;
            false
        }
        Op::Wait { event, .. } => !recorded[event],
        _ => false,
    })
}

fn cross_stream_edge(p: &Program, hb: &HappensBefore) -> bool {
    hb.edges.iter().any(|&(a, b)| p.ops[hb.work[a]].stream() != p.ops[hb.work[b]].stream())
}

/// Some event is waited on, re-recorded, and waited on again: the two waits see different records.
fn re_record_between_waits(p: &Program) -> bool {
    (0..p.events).any(|e| {
        let mut state = 0; // 0: nothing, 1: waited once, 2: re-recorded after that wait
        for o in &p.ops {
            match *o {
                Op::Wait { event, .. } if event == e && state == 2 => return true,
                Op::Wait { event, .. } if event == e => state = 1,
                Op::Record { event, .. } if event == e && state == 1 => state = 2,
                _ => {}
            }
        }
        false
    })
}

fn shared_across_streams(p: &Program) -> bool {
    let work: Vec<&Op> = p.ops.iter().filter(|o| o.is_work()).collect();
    work.iter().any(|a| work.iter().any(|b| a.stream() != b.stream() && program::conflict(a, b)))
}

/// The allocation of each async buffer use, by op index.
fn allocation_of(p: &Program, i: usize, buf: usize) -> Option<usize> {
    p.ops[..i].iter().rposition(|o| matches!(*o, Op::Alloc { buf: b, .. } if b == buf))
}

fn async_used_elsewhere(p: &Program) -> bool {
    p.ops.iter().enumerate().any(|(i, o)| {
        !matches!(o, Op::Alloc { .. } | Op::Free { .. })
            && o.accesses()
                .iter()
                .filter(|a| !p.buffers[a.buf].is_permanent())
                .any(|a| allocation_of(p, i, a.buf).is_some_and(|k| p.ops[k].stream() != o.stream()))
    })
}

fn async_freed_elsewhere(p: &Program) -> bool {
    p.ops.iter().enumerate().any(|(i, o)| match *o {
        Op::Free { buf, stream } => allocation_of(p, i, buf).is_some_and(|k| p.ops[k].stream() != stream),
        _ => false,
    })
}

fn async_drained(p: &Program) -> bool {
    p.ops.iter().any(
        |o| matches!(*o, Op::Copy { dst, src, .. } if p.buffers[dst].is_permanent() && !p.buffers[src].is_permanent()),
    )
}

/// Two unordered work ops on different streams writing different buffers.
fn disjoint_across_streams(p: &Program, hb: &HappensBefore) -> bool {
    let work: Vec<usize> = p.work_ops().collect();
    let writes = |i: usize| p.ops[i].accesses().into_iter().filter(|a| a.write).map(|a| a.buf).collect::<Vec<_>>();
    work.iter().any(|&a| {
        work.iter().any(|&b| {
            a < b
                && p.ops[a].stream() != p.ops[b].stream()
                && !hb.before(a, b)
                && !writes(a).is_empty()
                && !writes(b).is_empty()
                && writes(a).iter().all(|x| !writes(b).contains(x))
        })
    })
}

/// The checks with a deliberately wrong model, against a simulated device that follows the real semantics: the
/// failure must be found by the verdict in the captured run, shrink to at most `max_ops` ops, and print as a case.
/// (On the GPU the same thing happens with `RANDOM_PROGRAMS_BROKEN_MODEL=...`; this shows the shrinking without
/// one.) `ignore-waits` loses cross-stream order; `ignore-updates` thinks an update changes no parameters;
/// `forbidden-update-succeeds` thinks a topology change is accepted.
fn broken_model_demo(mode: ModelMode, max_ops: usize) -> Result<(), Failed> {
    let config = Config { cases: 256, failure_persistence: None, ..Config::default() };
    let mut runner = TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha));
    let check = |p: &Program| check_program(p, &mut |c: &Case| Sim::default().run(c), mode);
    let result = runner
        .run(&generate::programs(Flavor::Capturable), |p| check(&p).map_err(|f| TestCaseError::fail(f.to_string())));
    let shrunk = match result {
        Ok(()) => {
            return Err(format!("{mode:?}: the broken model passed 256 programs: the checks do not catch it").into())
        }
        Err(TestError::Abort(why)) => return Err(format!("proptest aborted: {why}").into()),
        Err(TestError::Fail(_, program)) => program,
    };
    let program = generate::minimize(shrunk.clone(), Flavor::Capturable, |p| check(p).is_err());
    let failure = match check(&program) {
        Err(f) => f,
        Ok(()) => return Err(format!("the shrunk program passes when re-run: {program:?}").into()),
    };
    let captured = lower::Variant::Captured { launches: checks::RELAUNCHES };
    if (failure.check, failure.variant) != (Check::Verdict, captured) {
        return Err(format!("{mode:?}: expected the verdict on the captured run to catch it; got: {failure}").into());
    }
    if program.ops.len() > max_ops {
        return Err(format!(
            "{mode:?}: shrunk to {} ops, expected at most {max_ops}:\n{}",
            program.ops.len(),
            report(&program, &failure)
        )
        .into());
    }
    let text = report(&program, &failure);
    // The saved case's reproducer: the command reads the file the report says to save the case in.
    let reproduce = format!("reproduce: cuda-conformance --cases {SAVE_AS} repro {} --out repro/", failure.case.id);
    if !text.contains(&reproduce) {
        return Err(format!("{mode:?}: the report does not name `{reproduce}`:\n{text}").into());
    }
    println!(
        "\n[broken model {mode:?} caught on the simulator; proptest shrank it to {} ops] {text}\n",
        shrunk.ops.len()
    );
    Ok(())
}

// ---------------------------------------------------------------------------------------------------------------
// GPU properties

/// GPU properties run one at a time whatever `--test-threads` says: the device and its legacy stream are shared.
static GPU: Mutex<()> = Mutex::new(());

/// The GPU executor (the harness's, in this process), or the reason to ignore GPU properties.
fn gpu() -> Result<impl FnMut(&Case) -> Observations, String> {
    let device = harness::device::gpu::probe(0).map_err(|e| e.to_string())?;
    let kernels = cuda_conformance::kernel_table();
    let opts = harness::exec::ExecOptions::default();
    Ok(move |case: &Case| harness::exec::run_case(case, &kernels, &device, &opts))
}

/// The GPU executor for programs over two devices, or why this host cannot run them: the requirements a lowered
/// two-device case states (`devices >= 2`, `peer-access`), judged as the runner judges them.
fn two_device_gpu() -> Result<impl FnMut(&Case) -> Observations, String> {
    let device = harness::device::gpu::probe(0).map_err(|e| e.to_string())?;
    let sample =
        lower::lower(&lower::tests::two_device_sample(), lower::Variant::Eager { reps: 1 }, ModelMode::Faithful);
    if let Some(reason) = harness::device::requirements::unmet_requirement(&sample, &device) {
        return Err(reason);
    }
    gpu()
}

/// The GPU properties, ignored at list time when this host has too few devices for them (asked once, through
/// `cudaGetDeviceCount`: no context is made): `--list --ignored` names them and cargo-nextest reports them
/// skipped, where a trial that ignores itself only when run counts there as passed.
fn gpu_properties() -> Vec<Trial> {
    let devices = harness::device::gpu::device_count().unwrap_or(0);
    let trials = gpu_property_trials();
    trials
        .into_iter()
        .map(|trial| {
            let needs = if trial.name().contains("two_device") { 2 } else { 1 };
            trial.with_ignored_flag(devices < needs)
        })
        .collect()
}

fn gpu_property_trials() -> Vec<Trial> {
    vec![
        Trial::ignorable_test("gpu::captured_graphs_match_eager_execution", || {
            let _gpu = GPU.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let exec = match gpu() {
                Ok(exec) => Mutex::new(exec),
                Err(why) => return Ok(Completion::ignored_with(why)),
            };
            let mode = ModelMode::from_env()?;
            let saved = regressions_for(mode, "gpu_captured_matches_eager");
            property(runner(GPU_CASES, saved), Flavor::Capturable, |p| {
                check_program(p, &mut *exec.lock().unwrap_or_else(|e| e.into_inner()), mode)
            })?;
            Ok(Completion::Completed)
        }),
        Trial::ignorable_test("gpu::two_device_graphs_match_eager_execution", || {
            let _gpu = GPU.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let exec = match two_device_gpu() {
                Ok(exec) => Mutex::new(exec),
                Err(why) => return Ok(Completion::ignored_with(why)),
            };
            let mode = ModelMode::from_env()?;
            let saved = regressions_for(mode, "gpu_two_devices");
            property(runner(GPU_CASES, saved), Programs::TwoDevices(Flavor::Capturable), |p| {
                check_program(p, &mut *exec.lock().unwrap_or_else(|e| e.into_inner()), mode)
            })?;
            Ok(Completion::Completed)
        }),
        Trial::ignorable_test("gpu::two_device_eager_programs_with_peer_copies", || {
            let _gpu = GPU.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let exec = match two_device_gpu() {
                Ok(exec) => Mutex::new(exec),
                Err(why) => return Ok(Completion::ignored_with(why)),
            };
            let mode = ModelMode::from_env()?;
            let saved = regressions_for(mode, "gpu_two_devices_eager");
            property(runner(GPU_CASES, saved), Programs::TwoDevices(Flavor::EagerOnly), |p| {
                check_eager_program(p, &mut *exec.lock().unwrap_or_else(|e| e.into_inner()), mode)
            })?;
            Ok(Completion::Completed)
        }),
        Trial::ignorable_test("gpu::eager_programs_with_unrecorded_waits", || {
            let _gpu = GPU.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let exec = match gpu() {
                Ok(exec) => Mutex::new(exec),
                Err(why) => return Ok(Completion::ignored_with(why)),
            };
            let mode = ModelMode::from_env()?;
            let saved = regressions_for(mode, "gpu_eager_unrecorded_waits");
            property(runner(GPU_CASES, saved), Flavor::EagerOnly, |p| {
                check_eager_program(p, &mut *exec.lock().unwrap_or_else(|e| e.into_inner()), mode)
            })?;
            Ok(Completion::Completed)
        }),
    ]
}

// ---------------------------------------------------------------------------------------------------------------
// Unit tests (a `harness = false` target does not collect #[test] functions, so each is listed here)

macro_rules! units {
    ($($module:ident :: [$($f:ident),* $(,)?]),* $(,)?) => {
        vec![$($(Trial::test(concat!("unit::", stringify!($module), "::", stringify!($f)), || {
            $module::tests::$f();
            Ok(())
        })),*),*]
    };
}

fn unit_tests() -> Vec<Trial> {
    units![
        model::[
            stream_order_only,
            wait_uses_record_current_at_wait_time,
            never_recorded_wait_is_a_no_op,
            transitive_and_broken_mode,
            closure_of_graphs,
            bits_beyond_one_word,
        ],
        interpret::[data_ops, repetitions_compose, updates],
        generate::[
            conflicting_writers_are_ordered,
            readers_are_not_ordered,
            unrecorded_waits_by_flavor,
            restrictions,
            distinct_odd_multipliers,
            minimize_and_compact,
            two_device_rules,
        ],
        lower::[captured_shape, eager_repetitions_and_raise, raise_catches_moved_label, buffer_runs, two_device_shape],
        checks::[good_execution_passes, verdict_violations, host_run_violations, label_violations, relaunch_violation],
        sim::[
            faithful_device_passes,
            device_ignoring_waits_is_caught,
            capture_rules,
            updates,
            stream_ordered_allocation,
            two_devices,
        ],
    ]
}
