//! Each lint rule on small cases: a weak one is flagged, the strong form of the same check is not.

use super::*;
use crate::case::{parse_file, validate};

/// Parses and validates `body` (the lines between `source:` and `end`) as case `lint/t` with rule `rule`, and lints
/// it.
fn lint_case(rule: &str, body: &str) -> Vec<Warning> {
    let text = format!("case lint/t\n  rule: {rule}\n  source: the test\n{body}\nend\n");
    let file = parse_file("lint.case", &text).unwrap_or_else(|e| panic!("{text}\n{e:?}"));
    let problems = validate(&file);
    assert!(problems.is_empty(), "{text}\n{problems:?}");
    lint(&file.cases[0])
}

fn rules(warnings: &[Warning]) -> Vec<LintRule> {
    warnings.iter().map(|w| w.rule).collect()
}

/// Asserts exactly one warning, of `rule`, whose message contains `words`.
fn flagged(warnings: &[Warning], rule: LintRule, words: &str) {
    assert_eq!(rules(warnings), vec![rule], "{warnings:#?}");
    assert!(warnings[0].message.contains(words), "{:?} lacks {words:?}", warnings[0].message);
}

fn clean(warnings: &[Warning]) {
    assert!(warnings.is_empty(), "{warnings:#?}");
}

/// A gate holding a stream, opened 300 ms after being scheduled just before the call `cp` under test.
const ORACLE: &str = "
  stream s blocking
  buffer src device 4KiB
  buffer dst device 4KiB
  gate g
  gate g2
  held: launch gate g on s
  held2: launch gate g2 on s
        open g after 300ms
        open g2 after 300ms
  cp:   memcpy-async dst src on s
        sync s
";

#[test]
fn the_warning_names_file_line_case_and_rule() {
    let w = lint_case("Copies.", &format!("{ORACLE}  expect held overlaps held"));
    assert_eq!(w.len(), 1, "{w:#?}");
    assert_eq!((w[0].file.as_str(), w[0].line, w[0].case_id.as_str()), ("lint.case", 16, "lint/t"));
    let text = w[0].to_string();
    assert!(text.starts_with("lint.case:16: case lint/t: warning: `expect held overlaps held`"), "{text}");
    assert!(text.ends_with("[vacuous-expectation]"), "{text}");
}

// ---------------------------------------------------------------------------------------------------------------
// exhaustive-variant

#[test]
fn waited_for_and_not_waited_for_cover_every_outcome() {
    let weak = lint_case("Copies.", &format!("{ORACLE}  variant sync: cp waited-for g | async: cp not-waited-for g"));
    flagged(&weak, LintRule::ExhaustiveVariant, "cover every outcome of the blocking oracle");
    // Different gates, or one answer only: the variant can fail.
    clean(&lint_case("Copies.", &format!("{ORACLE}  variant a: cp waited-for g | b: cp not-waited-for g2")));
    clean(&lint_case("Copies.", &format!("{ORACLE}  variant a: cp waited-for g | b: cp waited-for g2")));
}

#[test]
fn observe_may_cover_every_outcome_but_a_case_must_also_claim_something() {
    let observe = "  observe sync: cp waited-for g | async: cp not-waited-for g";
    flagged(&lint_case("Copies.", &format!("{ORACLE}{observe}")), LintRule::ObserveOnly, "only observes");
    clean(&lint_case("Copies.", &format!("{ORACLE}{observe}\n  expect held before held2")));
}

const CODES: &str = "
  stream s blocking
  event e
        record e on s
  w:    wait s for e external => cudaErrorIllegalState | cudaErrorInvalidValue | cudaErrorNotSupported
        sync s
";

#[test]
fn return_codes_covering_the_accepted_list_cannot_fail() {
    let weak = lint_case(
        "Rejected.",
        &format!(
            "{CODES}  variant a: w returned cudaErrorIllegalState | b: w returned cudaErrorInvalidValue | \
             c: w returned cudaErrorNotSupported"
        ),
    );
    flagged(&weak, LintRule::ExhaustiveVariant, "name every code `w` accepts");
    // A subset of the accepted codes leaves cudaErrorNotSupported to fail on.
    clean(&lint_case(
        "Rejected.",
        &format!("{CODES}  variant a: w returned cudaErrorIllegalState | b: w returned cudaErrorInvalidValue"),
    ));
}

const GRAPH: &str = "
  stream s1 blocking
  stream s2 blocking
  event fork
  event join
  graph gr
  buffer x device 4KiB
  buffer y device 4KiB
        begin-capture s1
  a:    launch fill x 1 on s1
        record fork on s1
        wait s2 for fork
  b:    launch fill y 2 on s2
        record join on s2
        wait s1 for join
  c:    launch transform x mul 2 add 1 on s1
        end-capture s1 into gr
";

#[test]
fn an_edge_and_its_absence_cover_every_graph() {
    let weak = lint_case("Captures.", &format!("{GRAPH}  variant joined: edge gr a -> c | apart: no-edge gr a -> c"));
    flagged(&weak, LintRule::ExhaustiveVariant, "cover every graph");
    let weak = lint_case("Captures.", &format!("{GRAPH}  variant p: path gr a -> c | e: no-edge gr a -> c"));
    flagged(&weak, LintRule::ExhaustiveVariant, "cover every graph");
    // An edge or no path at all: a path without a direct edge fails both.
    clean(&lint_case("Captures.", &format!("{GRAPH}  variant e: edge gr a -> c | n: no-path gr a -> c")));
}

const KERNELS: &str = "
  stream s1 blocking
  stream s2 blocking
  k1: launch spin 1ms on s1
  k2: launch spin 1ms on s2
      device-sync
";

#[test]
fn before_both_ways_does_not_cover_overlap_but_with_overlap_it_does() {
    clean(&lint_case("Runs.", &format!("{KERNELS}  variant ab: k1 before k2 | ba: k2 before k1")));
    let weak =
        lint_case("Runs.", &format!("{KERNELS}  variant ab: k1 before k2 | ba: k2 before k1 | both: k2 overlaps k1"));
    flagged(&weak, LintRule::ExhaustiveVariant, "cover every pair of stamp intervals");
}

#[test]
fn an_alternative_that_always_holds_makes_the_variant_unable_to_fail() {
    // Asserted by an expect elsewhere in the case.
    let weak = lint_case(
        "Copies.",
        &format!("{ORACLE}  expect cp not-waited-for g\n  variant a: cp not-waited-for g | b: held before held2"),
    );
    flagged(&weak, LintRule::ExhaustiveVariant, "`expect` on line 16 asserts it");
    // The only code the operation accepts.
    let weak = lint_case("Copies.", &format!("{ORACLE}  variant a: cp returned cudaSuccess | b: held before held2"));
    flagged(&weak, LintRule::ExhaustiveVariant, "accepts only cudaSuccess");
}

#[test]
fn a_variant_that_can_fail_is_clean() {
    clean(&lint_case("Copies.", &format!("{ORACLE}  variant first: held before held2 | other: dst == 7")));
}

// ---------------------------------------------------------------------------------------------------------------
// duplicate-alternative, single-alternative

#[test]
fn repeated_and_lonely_alternatives() {
    let w = lint_case("Copies.", &format!("{ORACLE}  variant a: dst == 7 | b: dst == 7"));
    flagged(&w, LintRule::DuplicateAlternative, "repeats `a`");
    let w = lint_case("Copies.", &format!("{ORACLE}  variant a: dst == 7"));
    flagged(&w, LintRule::SingleAlternative, "write `expect dst == 7` instead");
}

// ---------------------------------------------------------------------------------------------------------------
// vacuous-expectation, never-holds

#[test]
fn the_oracle_after_an_immediate_open_always_says_waited() {
    let body = "
  stream s blocking
  gate g
  held: launch gate g on s
        open g
  ks:   sync s
";
    let w = lint_case("Syncs.", &format!("{body}  expect ks waited-for g"));
    flagged(&w, LintRule::VacuousExpectation, "always returns after `g` opened");
    let w = lint_case("Syncs.", &format!("{body}  expect ks not-waited-for g"));
    flagged(&w, LintRule::NeverHolds, "the case fails on every GPU");
}

#[test]
fn the_oracle_before_any_opening_always_says_not_waited() {
    let body = "
  stream s blocking
  gate g
  held: launch gate g on s
  q:    query s => cudaErrorNotReady
        open g after 300ms
        sync s
";
    let w = lint_case("Queries.", &format!("{body}  expect q not-waited-for g"));
    flagged(&w, LintRule::VacuousExpectation, "every `open g` comes after `q`");
}

#[test]
fn the_oracle_with_nothing_held_behind_the_gate_measures_only_time() {
    let body = "
  stream s blocking
  buffer src device 4KiB
  buffer dst device 4KiB
  gate g
        open g after 300ms
  cp:   memcpy-async dst src on s
  held: launch gate g on s
        open g
        sync s
";
    let w = lint_case("Copies.", &format!("{body}  expect cp not-waited-for g"));
    flagged(&w, LintRule::VacuousExpectation, "nothing before `cp` is held behind `g`");
}

#[test]
fn the_oracle_set_up_properly_is_clean() {
    clean(&lint_case("Copies.", &format!("{ORACLE}  expect cp not-waited-for g\n  quality cp not-waited-for g2")));
}

#[test]
fn self_comparisons() {
    let w = lint_case("Runs.", &format!("{KERNELS}  expect k1 overlaps k1"));
    flagged(&w, LintRule::VacuousExpectation, "intersects itself");
    let w = lint_case("Runs.", &format!("{KERNELS}  quality k1 before k1"));
    flagged(&w, LintRule::NeverHolds, "quality warning on every GPU");
    let w = lint_case("Captures.", &format!("{GRAPH}  expect no-path gr a -> a"));
    flagged(&w, LintRule::VacuousExpectation, "acyclic");
    let w = lint_case("Captures.", &format!("{GRAPH}  expect no-edge gr b -> b"));
    flagged(&w, LintRule::VacuousExpectation, "acyclic");
    let w = lint_case("Captures.", &format!("{GRAPH}  expect path gr c -> c"));
    flagged(&w, LintRule::NeverHolds, "acyclic");
    clean(&lint_case("Captures.", &format!("{GRAPH}  expect no-path gr a -> b\n  expect path gr a -> c")));
    clean(&lint_case("Runs.", &format!("{KERNELS}  quality k1 overlaps k2")));
}

#[test]
fn graph_predicates_on_a_capture_that_must_fail() {
    let body = "
  stream s blocking
  graph gr
  buffer b device 4KiB
        begin-capture s
  k:    launch fill b 1 on s
        sync s => cudaErrorStreamCaptureUnsupported
        end-capture s into gr => cudaErrorStreamCaptureInvalidated
";
    let w = lint_case("Fails.", &format!("{body}  expect nodes gr == 0"));
    flagged(&w, LintRule::NeverHolds, "no graph `gr` to inspect");
    clean(&lint_case("Fails.", &format!("{body}  expect b == 0")));
}

#[test]
fn return_codes() {
    let body = "
  stream s blocking
  gate g
  held: launch gate g on s
  q:    query s => cudaErrorNotReady
  q2:   query s => cudaErrorNotReady | cudaSuccess
        open g
        sync s
";
    // Restating the `=>` list is redundant, not weak: not flagged.
    clean(&lint_case("Queries.", &format!("{body}  expect q returned cudaErrorNotReady")));
    clean(&lint_case("Queries.", &format!("{body}  expect q2 returned cudaErrorNotReady")));
    let w = lint_case("Queries.", &format!("{body}  expect q returned cudaSuccess"));
    flagged(&w, LintRule::NeverHolds, "accepts only cudaErrorNotReady");
    let w = lint_case(
        "Queries.",
        &format!("{body}  variant ready: q returned cudaSuccess | busy: q2 returned cudaSuccess"),
    );
    flagged(&w, LintRule::NeverHolds, "variant alternative `ready: q returned cudaSuccess` can never hold");
}

#[test]
fn host_order_with_a_repeated_call() {
    let body = "
  stream s blocking
  h1: host-func on s
  h2: host-func on s
      sync s
";
    flagged(&lint_case("Runs.", &format!("{body}  expect host-order h1 h2 h1")), LintRule::NeverHolds, "listed twice");
    clean(&lint_case("Runs.", &format!("{body}  expect host-order h1 h2")));
}

#[test]
fn a_buffer_nothing_touches() {
    let body = "
  stream s blocking
  buffer b device 4KiB
  buffer c device 4KiB
      launch fill c 3 on s
      sync s
";
    // Zero is no longer what an untouched buffer holds: a zero check on it can never pass.
    flagged(&lint_case("Fills.", &format!("{body}  expect b == 0")), LintRule::NeverHolds, "start as 0xcdcdcdcd");
    flagged(&lint_case("Fills.", &format!("{body}  expect b[2] == 1")), LintRule::NeverHolds, "start as 0xcdcdcdcd");
    clean(&lint_case("Fills.", &format!("{body}  expect c == 3")));
    // The pattern itself is never worth expecting, touched or not (a partly written buffer still holds it).
    let pattern = INITIAL_WORD;
    flagged(&lint_case("Fills.", &format!("{body}  expect b == {pattern}")), LintRule::VacuousExpectation, "pattern");
    flagged(
        &lint_case("Fills.", &format!("{body}  expect c[1] == {pattern}")),
        LintRule::VacuousExpectation,
        "pattern",
    );
}

const TIMED: &str = "
  stream s1 blocking
  stream s2 blocking
  event a
  event b
      record a on s1
  k:  launch spin 1ms on s1
      record b on s1
      sync b
  t:  elapsed a b
  t0: elapsed a a
";

#[test]
fn elapsed_bounds() {
    let w = lint_case("Times.", &format!("{TIMED}  expect elapsed t > -1"));
    flagged(&w, LintRule::VacuousExpectation, "negative lower bound");
    let w = lint_case("Times.", &format!("{TIMED}  expect elapsed t0 >= 0"));
    flagged(&w, LintRule::VacuousExpectation, "always 0 ms");
    let w = lint_case("Times.", &format!("{TIMED}  expect elapsed t0 > 0"));
    flagged(&w, LintRule::NeverHolds, "always 0 ms");
    // Non-negative between two events is stream order (or its absence), a real check; so is a positive time.
    clean(&lint_case("Times.", &format!("{TIMED}  expect elapsed t >= 0\n  expect elapsed t > 0.5")));
}

// ---------------------------------------------------------------------------------------------------------------
// unasserted-wait

#[test]
fn a_rule_that_says_waits_needs_an_expected_waited_for() {
    let weak = "Synchronizing the stream waits for the copy.";
    flagged(&lint_case(weak, &format!("{ORACLE}  expect dst == 0")), LintRule::UnassertedWait, "\"waits for\"");
    let w = lint_case(weak, &format!("{ORACLE}  variant a: cp waited-for g | b: dst == 0"));
    flagged(&w, LintRule::UnassertedWait, "a `waited-for` in a variant alternative asserts nothing");
    let w = lint_case(weak, &format!("{ORACLE}  quality cp waited-for g"));
    flagged(&w, LintRule::UnassertedWait, "no `expect OP waited-for GATE`");
    clean(&lint_case(weak, &format!("{ORACLE}  expect cp waited-for g")));
}

#[test]
fn wait_claims_in_rule_text() {
    let claims = [
        ("A cudaMemcpy waits for earlier work.", "waits for"),
        (
            "It is synchronous with respect to the host, so it returns only after the copy.",
            "synchronous with respect to the host",
        ),
        ("cudaMemcpy returns only once the copy has completed.", "returns only once"),
        ("The call blocks until the event completes.", "blocks until"),
        ("Recording does not block the host, and synchronizing it waits for the work.", "waits for"),
        ("A stream that waits for an event stays not-ready.", "waits for"),
        ("It returns after the recorded work.", "returns after"),
        ("cudaEventSynchronize BLOCKS THE HOST.", "blocks the host"),
        ("If the event was recorded, it is ready; the call waits.", "waits"),
        ("It succeeds and waits for that stream's work, and the capture stays valid.", "waits for"),
    ];
    for (rule, phrase) in claims {
        assert_eq!(wait_claim(rule).as_deref(), Some(phrase), "{rule}");
    }
    let not_claims = [
        "Work on the legacy stream does not wait for earlier work on a non-blocking stream.",
        "The per-thread default streams of two threads do not wait for each other.",
        "A launch returns to the host without waiting for earlier work.",
        "A small copy may or may not wait for earlier work.",
        "cudaMemcpyAsync might be synchronous with respect to the host.",
        "cudaMemset of device memory is asynchronous with respect to the host.",
        "cudaStreamWaitEvent on a never-recorded event adds no dependency: the waiting stream runs.",
        "Waiting on an uncaptured event is invalid: the wait fails and the capture is invalidated.",
        "It is either a no-op or rejected like a wait on any other event.",
        "The capturing stream's waits on their uncaptured events invalidate the capture.",
        "Capture creates an event-wait node.",
        "The wait call itself returns at once.",
        "It never waits for the gate.",
        "It doesn't wait for the gate.",
        "cudaFree may synchronize: the case records whether it waits for unrelated work.",
        "Whether the call waits for unrelated work is not stated, and the case records it.",
        "The case records whether this driver serialises them, makes the host call wait, or runs them concurrently.",
        "If the driver stages the copy, it returns only after the staging.",
    ];
    for rule in not_claims {
        assert_eq!(wait_claim(rule), None, "{rule}");
    }
}

// ---------------------------------------------------------------------------------------------------------------
// Non-zero checks on counts and sizes the script determines

/// A pool that allocates and frees 64 MiB, then reads its attributes: `CHECKS` are the expectations.
fn pool_case(checks: &str) -> Vec<Warning> {
    lint_case(
        "The pool keeps what it reserved.",
        &format!(
            "
  stream s non-blocking
  pool p
  buffer a device 64MiB later
        pool-set p release-threshold max
        malloc-async a on s from p
        launch fill a 1 on s
        free-async a on s
        sync s
  rc:   pool-get p reserved-mem-current
  fe:   pool-get p reuse-follow-event-dependencies
{checks}"
        ),
    )
}

#[test]
fn a_nonzero_check_on_a_size_the_script_allocated_is_weak() {
    for check in ["rc value > 0", "rc value >= 1", "rc value != 0"] {
        let w = pool_case(&format!("  expect {check}"));
        flagged(&w, LintRule::VacuousExpectation, "non-zero check accepts nearly every wrong count");
    }
    // The bound the allocation implies, and an exact value, are real checks.
    clean(&pool_case("  expect rc value >= 64MiB"));
    clean(&pool_case("  expect rc value == 64MiB"));
    // A flag's `> 0` is its `== 1`: not weaker.
    clean(&pool_case("  expect rc value >= 64MiB\n  expect fe value > 0"));
}

#[test]
fn a_nonzero_check_on_a_node_count_is_weak() {
    let w = lint_case(
        "cudaGraphGetNodes returns the graph's nodes.",
        "
  graph g
  buffer x device 4KiB
        create g
  a:    add-node g kernel fill x 1
  b:    add-node g kernel transform x mul 2 add 0 after a
  ln:   list nodes g
  expect ln value > 0
",
    );
    flagged(&w, LintRule::VacuousExpectation, "`ln value == N`");
}

// ---------------------------------------------------------------------------------------------------------------
// A strong case

#[test]
fn the_readme_example_is_clean() {
    let w = lint_case(
        "Work on the legacy stream waits for all earlier work on every blocking stream.",
        "
  stream s blocking
  gate g
  held: launch gate g on s
  k:    launch spin on legacy
  q:    query legacy => cudaErrorNotReady
        open g after 300ms
  ks:   sync legacy
  expect held before k
  expect q returned cudaErrorNotReady
  expect ks waited-for g
",
    );
    clean(&w);
}

// ---------------------------------------------------------------------------------------------------------------
// Dependency sets counted but not named

/// A capture of two kernels; `CHECK` is the `capture-deps` line after the first.
fn capture_case(check: &str) -> Vec<Warning> {
    lint_case(
        "The next captured node depends on the last one.",
        &format!(
            "
  stream s blocking
  graph gr
  buffer x device 4KiB
        begin-capture s
        capture-deps s is 0
  a:    launch fill x 1 on s
{check}
  b:    launch transform x mul 2 add 1 on s
        end-capture s into gr
  expect edge gr a -> b
"
        ),
    )
}

#[test]
fn a_dependency_count_without_the_nodes_is_flagged() {
    flagged(&capture_case("        capture-deps s is 1"), LintRule::CountOnlyDependencies, "name them with `on L ...`");
    clean(&capture_case("        capture-deps s is 1 on a"));
    // An empty set has nothing to name, and a call that must fail returns no set.
    clean(&capture_case("        capture-deps legacy is 0 => cudaErrorStreamCaptureImplicit"));
}

// ---------------------------------------------------------------------------------------------------------------
// Return codes compared

/// A failed launch and the last error after it; `CHECK` is the expectation.
fn last_error_case(check: &str) -> Vec<Warning> {
    lint_case(
        "cudaPeekAtLastError returns the launch's error.",
        &format!(
            "
  stream s blocking
        get-last-error
  bad:  launch spin on s block 2048 => cudaErrorInvalidConfiguration | cudaErrorInvalidValue
  p:    peek-last-error => cudaErrorInvalidConfiguration | cudaErrorInvalidValue
  ok:   get-device
  {check}
"
        ),
    )
}

#[test]
fn same_code() {
    clean(&last_error_case("expect p same-code bad"));
    flagged(&last_error_case("expect p same-code p"), LintRule::VacuousExpectation, "compare it with another");
    flagged(&last_error_case("expect ok same-code bad"), LintRule::NeverHolds, "no code is accepted by both");
    // `=> any` accepts every code: compared with a row that accepts only one, the comparison can go either way.
    let any = lint_case(
        "cudaGetLastError returns the failed call's code.",
        "
  stream s blocking
  bad:  launch spin on s block 2048 => cudaErrorInvalidConfiguration
  last: get-last-error => any
  expect bad same-code last
",
    );
    assert!(any.iter().all(|w| w.rule != LintRule::NeverHolds), "{any:?}");
    // Nor is `L returned CODE` of such an operation decided by its list.
    let any = lint_case(
        "cudaGetLastError returns the failed call's code.",
        "
  stream s blocking
  bad:  launch spin on s block 2048 => any
  variant config: bad returned cudaErrorInvalidConfiguration | value: bad returned cudaErrorInvalidValue
",
    );
    assert!(any.iter().all(|w| w.rule != LintRule::NeverHolds), "{any:?}");
}
