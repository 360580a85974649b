//! Throwaway (not committed): the claims of saved `seeds` reports, recomputed by this commit's `claims::evaluate`.
use cuda_conformance_harness as harness;
#[test]
fn reclaim() {
    let Ok(dir) = std::env::var("RECLAIM") else { return };
    let mut rows: Vec<(String, Vec<String>)> = Vec::new();
    for i in 1..=10 {
        let mut r = harness::record::Report::read(&std::path::Path::new(&dir).join(format!("seeds-{i}.json.gz"))).unwrap();
        // The compact report drops a passing case's trace; the claims only ask that it had one.
        for c in &mut r.cases {
            if c.observations.is_none() && !c.measures.is_empty() { c.observations = Some(Default::default()); }
        }
        let c = harness::claims::evaluate(&r.cases, &[], &r.provenance);
        for (k, row) in c.claims.iter().enumerate() {
            let mut cell = row.verdict.to_string();
            if let Some(ratio) = row.ratio { cell += &format!(" {ratio:.2}"); }
            if let Some(s) = &row.samples {
                if let Some(sr) = s.ratio { cell += &format!(" [{:.2}–{:.2}, {}]", sr.min, sr.max, sr.n); }
                if s.straddles {
                    let h = s.verdicts.iter().filter(|v| v.to_string() == row.verdict.to_string()).count();
                    cell += &format!(" (straddles: {} of {} {})", h, s.verdicts.len(), row.verdict);
                }
            }
            if rows.len() <= k { rows.push((row.id.clone(), vec![])); }
            rows[k].1.push(cell);
        }
        if i == 1 { println!("{}", c.console()); }
    }
    println!("| claim | {} |", (1..=10).map(|i| format!("run {i}")).collect::<Vec<_>>().join(" | "));
    println!("|---|{}", "---|".repeat(10));
    for (id, cells) in rows { println!("| `{id}` | {} |", cells.join(" | ")); }
}
