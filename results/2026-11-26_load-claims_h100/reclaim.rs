//! Throwaway (not committed): the claims of saved `seeds` reports, recomputed by this commit's `claims::evaluate`.
use cuda_conformance_harness as harness;
#[test]
fn reclaim() {
    let Ok(dir) = std::env::var("RECLAIM") else { return };
    let mut rows: Vec<(String, Vec<String>)> = Vec::new();
    let n = 10;
    for i in 1..=n {
        let mut r = harness::record::Report::read(&std::path::Path::new(&dir).join(format!("seeds-{i}.json.gz"))).unwrap();
        for c in &mut r.cases {
            if c.observations.is_none() && !c.measures.is_empty() { c.observations = Some(Default::default()); }
        }
        let c = harness::claims::evaluate(&r.cases, &[], &r.provenance);
        for (k, row) in c.claims.iter().enumerate() {
            let mut cell = row.verdict.to_string();
            if let Some(ratio) = row.ratio { cell += &format!(" {ratio:.2}"); }
            if let Some(s) = &row.samples {
                if let Some(sr) = s.ratio { cell += &format!(" [{:.2}–{:.2}", sr.min, sr.max); }
                if let Some(m) = s.middle { cell += &format!("; middle {:.2}–{:.2}", m.min, m.max); }
                cell += &format!(", {}]", s.verdicts.len());
                if s.straddles { cell += &format!(" ({})", harness::record::claims::ClaimVerdict::counts_text(&s.verdicts)); }
            }
            if rows.len() <= k { rows.push((row.id.clone(), vec![])); }
            rows[k].1.push(cell);
        }
        if i == 1 { println!("{}", c.console()); for row in &c.claims { if let Some(s) = &row.samples { println!("{}: {}", row.id, s.rule); } } }
    }
    println!("| claim | {} | same verdict in all |", (1..=n).map(|i| format!("run {i}")).collect::<Vec<_>>().join(" | "));
    println!("|---|{}---|", "---|".repeat(n));
    for (id, cells) in rows {
        let first: Vec<&str> = cells.iter().map(|c| c.split(|ch: char| ch.is_ascii_digit()).next().unwrap_or("").trim()).collect();
        let same = first.iter().all(|f| *f == first[0]);
        println!("| `{id}` | {} | {} |", cells.join(" | "), if same { "yes" } else { "**no**" });
    }
}
