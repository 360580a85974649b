//! Claims from made-up results: each verdict from the figures that decide it, and a missing figure.

use super::*;
use crate::record::observations::MeasureRecord;
use crate::record::verdict::VerdictKind;
use crate::report::test_support::{report, result};

/// A passed performance case that measured `figures`.
fn measured(case: &str, figures: &[(&str, f64)]) -> CaseResult {
    let mut r = result(&format!("{AREA}{case}"), VerdictKind::Pass, None);
    let measures = figures
        .iter()
        .map(|(name, value)| MeasureRecord {
            name: (*name).into(),
            of: String::new(),
            value: Some(*value),
            unit: String::new(),
            why: None,
            samples: Vec::new(),
        })
        .collect();
    r.observations = Some(Observations::default());
    r.measures = measures;
    r
}

/// The serial version of seed 000 with stages H2D 1.2, vecAdd 0.05, D2H 0.6 ms (and a one-stream total of 7.4 ms):
/// its pipeline bound is 4 × 1.2 + 0.05 + 0.6 = 5.45 ms.
fn serial() -> CaseResult {
    let mut figures = vec![("serial", 7.4)];
    let names: Vec<(String, f64)> = (0..4)
        .flat_map(|i| [(format!("h2d-{i}"), 1.2), (format!("kernel-{i}"), 0.05), (format!("d2h-{i}"), 0.6)])
        .collect();
    figures.extend(names.iter().map(|(n, v)| (n.as_str(), *v)));
    measured("seed000-serial", &figures)
}

fn claims(cases: Vec<CaseResult>) -> SeedClaims {
    let r = report("GPU", 13000, cases);
    evaluate(&r.cases, &[], &r.provenance)
}

fn claim<'a>(c: &'a SeedClaims, id: &str) -> &'a ClaimRow {
    c.claims.iter().find(|r| r.id == id).unwrap()
}

#[test]
fn the_pipeline_bound_is_the_slowest_stage_plus_fill_and_drain() {
    assert!((pipeline_bound(&[1.2, 0.05, 0.6], 4) - 5.45).abs() < 1e-9);
    // A compute-bound pipeline: the kernel stage decides.
    assert!((pipeline_bound(&[0.1, 1.0, 0.1], 4) - 4.2).abs() < 1e-9);
    assert!((pipeline_bound(&[1.0, 1.0, 1.0], 4) - 6.0).abs() < 1e-9, "3 equal stages: (n + 2) t");
}

#[test]
fn the_pipeline_claim_against_its_bound_and_the_serial_time() {
    for (pipeline, verdict) in
        [(5.9, ClaimVerdict::Holds), (6.1, ClaimVerdict::HoldsPartly), (7.5, ClaimVerdict::DoesNotHold)]
    {
        let c = claims(vec![measured("seed000-pipeline-untimed", &[("pipeline", pipeline)]), serial()]);
        let row = claim(&c, "seed000/pipeline");
        assert_eq!(row.verdict, verdict, "{pipeline} ms: {row:?}");
        assert!((row.bound.as_ref().unwrap().value.unwrap() - 5.45).abs() < 1e-9);
        assert!((row.ratio.unwrap() - pipeline / 5.45).abs() < 1e-9);
    }
}

#[test]
fn a_claim_without_its_figures_is_not_measured_and_says_why() {
    let c = claims(vec![serial()]);
    let row = claim(&c, "seed000/pipeline");
    assert_eq!(row.verdict, ClaimVerdict::NotMeasured);
    assert!(row.why.contains("performance/seed000-pipeline-untimed did not run"), "{}", row.why);
    assert!(c
        .claims
        .iter()
        .all(|r| r.verdict == ClaimVerdict::NotMeasured || r.id == "seed003/device-overlap" || r.figure.is_some()));
}

#[test]
fn the_graph_submission_claim_compares_one_launch_with_a_hundred() {
    let figures = |graph: f64| -> Vec<(String, f64)> {
        (1..=5).flat_map(|i| [(format!("eager-host-{i}"), 2.0), (format!("graph-host-{i}"), graph)]).collect()
    };
    for (graph, verdict) in
        [(15.0, ClaimVerdict::Holds), (150.0, ClaimVerdict::HoldsPartly), (250.0, ClaimVerdict::DoesNotHold)]
    {
        let f = figures(graph);
        let refs: Vec<(&str, f64)> = f.iter().map(|(n, v)| (n.as_str(), *v)).collect();
        let c = claims(vec![measured("seed004-launch-cost", &refs)]);
        let row = claim(&c, "seed004/submission-cost");
        assert_eq!(row.verdict, verdict, "{graph} us against 200 us: {row:?}");
        assert_eq!(row.bound.as_ref().unwrap().value, Some(200.0));
    }
}

#[test]
fn priorities_read_the_observed_variant_and_the_overtaking_case() {
    let running = |seen: &str| {
        let mut r = result(OTHER_CASES[1], VerdictKind::Pass, None);
        r.verdict.observed = Some(seen.into());
        r
    };
    let pending = |kind| result(OTHER_CASES[0], kind, None);
    let verdict = |seen, kind| claim(&claims(vec![running(seen), pending(kind)]), "seed001/priority").verdict;
    assert_eq!(verdict("preempts", VerdictKind::Pass), ClaimVerdict::Holds);
    assert_eq!(verdict("waits", VerdictKind::Pass), ClaimVerdict::HoldsPartly);
    assert_eq!(verdict("waits", VerdictKind::QualityWarning), ClaimVerdict::DoesNotHold);
}

#[test]
fn bounds_put_the_suite_beside_the_program() {
    let program = ProgramRun {
        name: "bandwidth".into(),
        variant: String::new(),
        exit: Some(0),
        output: String::new(),
        figures: vec![crate::record::claims::ProgramFigure {
            name: "pinned-h2d".into(),
            value: 55.0,
            unit: "GB/s".into(),
        }],
        error: None,
        wall_ms: 1,
    };
    let r = report("GPU", 13000, vec![measured("bound-pinned-h2d", &[("h2d", 54.0)])]);
    let c = evaluate(&r.cases, &[program], &r.provenance);
    let row = &c.bounds[0];
    assert_eq!((row.suite, row.program), (Some(54.0), Some(55.0)));
    let md = c.markdown();
    assert!(md.contains("| pinned host→device, 4 × 256 MiB, gated | 54.0 GB/s | 55.0 GB/s | 0.982 |"), "{md}");
    assert!(md.contains("| **not measured** |"), "{md}");
}

/// A claim whose figure is an observation, not a number, survives the report's JSON (NaN would not: JSON has none).
#[test]
fn claims_round_trip_through_json() {
    let mut running = result(OTHER_CASES[1], VerdictKind::Pass, None);
    running.verdict.observed = Some("waits".into());
    let c = claims(vec![running, result(OTHER_CASES[0], VerdictKind::Pass, None), serial()]);
    assert_eq!(claim(&c, "seed001/priority").figure.as_ref().unwrap().value, None);
    let json = serde_json::to_string(&c).unwrap();
    assert_eq!(serde_json::from_str::<SeedClaims>(&json).unwrap(), c);
}

/// The claims name their cases and measures as strings; this holds them to the real `cases/` folder. Every case the
/// claims read gets a result with a value for each `measure` it declares (and an `observe` seen), so that a claim
/// or bound left unmeasured can only be one that names a case or measure that does not exist.
#[test]
fn every_case_and_measure_the_claims_name_exists() {
    use crate::case::ast::Expectation;
    use crate::record::verdict::Verdict;
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
    let cases = crate::case::suite::load_dir(&dir).unwrap_or_else(|d| panic!("{d:?}"));
    let ids: Vec<&str> = cases.iter().map(|c| c.id.as_str()).collect();
    let missing: Vec<&&str> = OTHER_CASES.iter().filter(|id| !ids.contains(id)).collect();
    assert!(missing.is_empty(), "OTHER_CASES naming no case (renamed?): {missing:?}");
    let results: Vec<CaseResult> = cases
        .iter()
        .filter(|c| reads_case(&c.id))
        .map(|case| {
            let verdict =
                Verdict { kind: VerdictKind::Pass, variant: None, observed: Some("seen".into()), messages: vec![] };
            let mut r = CaseResult::new(case, verdict, Some(Observations::default()), std::time::Duration::ZERO);
            r.measures = case
                .expects
                .iter()
                .filter_map(|e| match e {
                    Expectation::Measure(m) => Some(MeasureRecord {
                        name: m.name.clone(),
                        of: String::new(),
                        value: Some(1.0),
                        unit: m.of.unit().to_owned(),
                        why: None,
                        samples: Vec::new(),
                    }),
                    _ => None,
                })
                .collect();
            r
        })
        .collect();
    assert!(results.iter().any(|r| r.id.starts_with(AREA)), "no performance case found in {}", dir.display());
    let claims = evaluate(&results, &[], &report("GPU", 13000, vec![]).provenance);
    let unmeasured: Vec<String> = claims
        .claims
        .iter()
        .filter(|c| c.verdict == ClaimVerdict::NotMeasured)
        .map(|c| format!("{}: {}", c.id, c.why))
        .chain(claims.bounds.iter().filter(|b| b.suite.is_none()).map(|b| format!("bound {}: {}", b.what, b.source)))
        .collect();
    assert!(
        unmeasured.is_empty(),
        "claims or bounds naming a case or measure that does not exist:\n{}",
        unmeasured.join("\n")
    );
}

/// `measured`, with every run's values of each measure as its samples (the first is the recorded value).
fn sampled(case: &str, figures: &[(&str, &[f64])]) -> CaseResult {
    let firsts: Vec<(&str, f64)> = figures.iter().map(|(n, v)| (*n, v[0])).collect();
    let mut r = measured(case, &firsts);
    for (m, (_, values)) in r.measures.iter_mut().zip(figures) {
        m.samples = values.to_vec();
    }
    r
}

#[test]
fn the_middle_samples_decide_and_undecided_when_they_straddle() {
    use ClaimVerdict::*;
    // Too few samples to set any aside: every one decides.
    assert_eq!(distribution_verdict(&[]), NotMeasured);
    assert_eq!(distribution_verdict(&[NotMeasured, NotMeasured]), NotMeasured);
    assert_eq!(distribution_verdict(&[HoldsPartly]), HoldsPartly);
    assert_eq!(distribution_verdict(&[Holds, Holds]), Holds);
    assert_eq!(distribution_verdict(&[Holds, HoldsPartly]), Undecided, "two samples across a threshold");
    assert_eq!(distribution_verdict(&[NotMeasured, Holds]), Holds, "a sample without its figure does not count");
    // Three: the median decides; one sample across a threshold does not move it.
    assert_eq!(distribution_verdict(&[Holds, Holds, Holds]), Holds);
    assert_eq!(distribution_verdict(&[HoldsPartly, Holds, Holds]), Holds);
    assert_eq!(distribution_verdict(&[HoldsPartly, Holds, HoldsPartly]), HoldsPartly);
    assert_eq!(distribution_verdict(&[DoesNotHold, HoldsPartly, Holds]), HoldsPartly, "the median of three");
    // Five: the middle three must agree; straddling, the claim is undecided rather than the weaker or the stronger.
    assert_eq!(distribution_verdict(&[Holds, Holds, HoldsPartly, Holds, Holds]), Holds, "all inside but one end");
    assert_eq!(distribution_verdict(&[DoesNotHold, Holds, Holds, Holds, Holds]), Holds, "one far outlier");
    assert_eq!(distribution_verdict(&[HoldsPartly, Holds, Holds, Holds, DoesNotHold]), Undecided, "two outliers");
    assert_eq!(distribution_verdict(&[Holds, HoldsPartly, HoldsPartly, Holds, Holds]), Undecided, "2 of 5 across");
    assert_eq!(distribution_verdict(&[Holds, HoldsPartly, Holds, HoldsPartly, HoldsPartly]), Undecided);
    assert_eq!(distribution_verdict(&[DoesNotHold; 5]), DoesNotHold);
    // Eight: two set aside at each end, the middle four decide.
    assert_eq!(set_aside(8), 2);
    let eight = [Holds, Holds, Holds, Holds, Holds, Holds, HoldsPartly, HoldsPartly];
    assert_eq!(distribution_verdict(&eight), Holds);
    assert_eq!(distribution_verdict(&[&eight[..], &[HoldsPartly]].concat()), Undecided, "3 of 9 across");
    assert_eq!([0, 1, 2, 3, 4, 5, 8, 12].map(set_aside), [0, 0, 0, 1, 1, 1, 2, 3]);
}

#[test]
fn the_rule_is_said_in_words() {
    use ClaimVerdict::*;
    assert_eq!(rule_text(&[Holds], Holds), "one sample decides: holds");
    assert_eq!(
        rule_text(&[Holds, HoldsPartly], Undecided),
        "all 2 samples decide: 1 holds, 1 holds partly: they straddle a threshold"
    );
    assert_eq!(
        rule_text(&[HoldsPartly, Holds, Holds], Holds),
        "the median of 3 samples decides (1 set aside at each end): holds"
    );
    assert_eq!(
        rule_text(&[Holds, HoldsPartly, HoldsPartly, Holds, Holds], Undecided),
        "the middle 3 of 5 samples decide (1 set aside at each end): 2 holds, 1 holds partly: they straddle a threshold"
    );
    assert_eq!(rule_text(&[Holds; 5], Holds), "the middle 3 of 5 samples decide (1 set aside at each end): all holds");
}

/// Seed 000's pipeline over three samples against the bound 5.45 ms (the 1.10 threshold is at 5.995 ms): inside the
/// threshold throughout it holds; with one sample across it (the cold first run that ten H100 runs showed) it still
/// holds, and the row shows the distribution; with the median across it holds partly.
#[test]
fn a_pipeline_median_inside_the_threshold_holds_and_the_row_shows_the_distribution() {
    let serial = || {
        let mut r = serial();
        for m in &mut r.measures {
            m.samples = vec![m.value.unwrap(); 3];
        }
        r
    };
    // A case run 5 times beside them: samples 3 and 4 read the pipeline's runs 0 and 1 again, and count once.
    let launches = || sampled("seed004-launch-cost", &[("eager-host-1", &[2.0, 2.1, 2.2, 2.3, 2.4])]);
    let row = |times: &[f64]| {
        let c = claims(vec![sampled("seed000-pipeline-untimed", &[("pipeline", times)]), serial(), launches()]);
        claim(&c, "seed000/pipeline").clone()
    };
    let inside = row(&[5.9, 5.6, 5.95]);
    assert_eq!(inside.verdict, ClaimVerdict::Holds, "{inside:?}");
    let s = inside.samples.as_ref().unwrap();
    assert!(!s.straddles);
    assert_eq!(s.verdicts, vec![ClaimVerdict::Holds; 3]);
    assert!((inside.ratio.unwrap() - 5.9 / 5.45).abs() < 1e-9, "the median sample's ratio");
    assert!((inside.figure.as_ref().unwrap().value.unwrap() - 5.9).abs() < 1e-9);

    let outlier = row(&[6.3, 5.6, 5.9]);
    assert_eq!(outlier.verdict, ClaimVerdict::Holds, "{outlier:?}");
    let s = outlier.samples.as_ref().unwrap();
    assert!(s.straddles);
    assert_eq!(s.verdicts, vec![ClaimVerdict::HoldsPartly, ClaimVerdict::Holds, ClaimVerdict::Holds]);
    assert_eq!(s.ratios.len(), 3);
    assert!((s.ratios[0].unwrap() - 6.3 / 5.45).abs() < 1e-9, "each sample's ratio in run order: {s:?}");
    let (r, m) = (s.ratio.unwrap(), s.middle.unwrap());
    assert_eq!((r.n, m.n), (3, 1));
    assert!((r.min - 5.6 / 5.45).abs() < 1e-9 && (r.max - 6.3 / 5.45).abs() < 1e-9, "{r:?}");
    assert!((m.min - 5.9 / 5.45).abs() < 1e-9 && m.min == m.max, "the median alone: {m:?}");
    assert_eq!(s.rule, "the median of 3 samples decides (1 set aside at each end): holds");
    let c = SeedClaims { claims: vec![outlier], ..SeedClaims::default() };
    let md = c.markdown();
    assert!(md.contains("| 1.08× (1.03–1.16×, 3 samples) | **holds (samples: 2 holds, 1 holds partly)** |"), "{md}");
    assert!(md.contains("the middle ones decide"), "{md}");
    assert!(c.console().contains("holds (samples: 2 holds, 1 holds partly)"), "{}", c.console());
    let json = serde_json::to_string(&c).unwrap();
    assert!(json.contains("\"rule\":\"the median of 3 samples decides"), "the record says the rule: {json}");
    assert_eq!(serde_json::from_str::<SeedClaims>(&json).unwrap(), c);

    let across = row(&[6.1, 6.2, 5.6]);
    assert_eq!(across.verdict, ClaimVerdict::HoldsPartly, "the median is past 1.10: {across:?}");

    let beyond = row(&[6.1, 6.2, 6.05]);
    assert_eq!(beyond.verdict, ClaimVerdict::HoldsPartly);
    assert!(!beyond.samples.unwrap().straddles, "every sample past 1.10 and below the serial time");
}

/// Seed 004's determinism is judged once, on the median spreads of all samples (threshold 0.5): samples whose
/// ratios one by one straddle the threshold do not make it undecided, one slow batch in a sample does not decide it,
/// and a typical graph spread past half the eager one holds partly.
#[test]
fn determinism_is_judged_on_the_samples_median_spreads() {
    let row = |graph: &[f64], eager: &[f64]| {
        let c = claims(vec![sampled("seed004-launch-cost", &[("graph-spread", graph), ("eager-spread", eager)])]);
        claim(&c, "seed004/deterministic").clone()
    };
    // Sample by sample 0.08, 0.6, 0.1, 0.7, 0.2: the middle three would straddle 0.5.
    let across = row(&[0.8, 6.0, 1.0, 7.0, 2.0], &[10.0; 5]);
    assert_eq!(across.verdict, ClaimVerdict::Holds, "median 2.0 against 10.0: {across:?}");
    assert!((across.ratio.unwrap() - 0.2).abs() < 1e-9);
    assert!(across.samples.is_none(), "one judgement, not one per sample: {across:?}");
    let figure = across.figure.as_ref().unwrap();
    assert!((figure.value.unwrap() - 2.0).abs() < 1e-9);
    assert!(figure.what.contains("5 samples") && figure.what.contains("0.80–7.00"), "{figure:?}");

    let slow_eager_batch = row(&[0.5, 0.6, 0.7, 0.6, 0.5], &[1.0, 1.1, 20.0, 1.2, 1.0]);
    assert_eq!(slow_eager_batch.verdict, ClaimVerdict::HoldsPartly, "0.6 against 1.1: {slow_eager_batch:?}");
    let same = row(&[1.0; 5], &[0.9; 5]);
    assert_eq!(same.verdict, ClaimVerdict::DoesNotHold);
    assert!(SeedClaims { claims: vec![across], ..SeedClaims::default() }.markdown().contains("**holds**"));
}

/// A case run once beside one run several times gives its one value to every sample; a bound's suite figure is the
/// median of its samples, with their spread.
#[test]
fn samples_pair_by_run_and_bounds_show_their_median_and_spread() {
    let c = claims(vec![
        sampled("bound-pinned-h2d", &[("h2d", &[54.0, 50.0, 56.0])]),
        measured("bound-pinned-d2h", &[("d2h", 55.0)]),
    ]);
    let h2d = &c.bounds[0];
    assert_eq!(h2d.suite, Some(54.0));
    let s = h2d.spread.unwrap();
    assert_eq!((s.n, s.min, s.max), (3, 50.0, 56.0));
    assert_eq!((c.bounds[1].suite, c.bounds[1].spread), (Some(55.0), None), "measured once: no spread");
    assert!(c.markdown().contains("| 54.0 GB/s (50.0 GB/s–56.0 GB/s, 3 samples) |"), "{}", c.markdown());
    let json = serde_json::to_string(&c).unwrap();
    assert_eq!(serde_json::from_str::<SeedClaims>(&json).unwrap(), c);
}
