//! `cuda-conformance compare BASE NEW`: what changed between two reports. Regressions (a case that did not fail
//! in BASE fails in NEW, or a new case that fails), fixes, variant changes (any other change of verdict or
//! variant: pass → variant, one variant → another, pass → not-supported), new and removed cases, and the
//! differences of environment (GPU, driver, runtime, build, CUDA_* variables, gate delay). CI uses the exit status:
//! regressions fail it.

use crate::record::{CaseResult, Report};
use std::collections::BTreeMap;
use std::fmt::Write as _;

#[derive(Debug, Default)]
pub struct Comparison {
    /// (id, BASE outcome or `new`, NEW outcome).
    pub regressions: Vec<(String, String, String)>,
    pub fixes: Vec<(String, String, String)>,
    pub variant_changes: Vec<(String, String, String)>,
    /// Failing in both (with the outcome in NEW), listed so a known failure stays visible.
    pub still_failing: Vec<(String, String)>,
    pub new_cases: Vec<(String, String)>,
    pub removed_cases: Vec<(String, String)>,
    /// (field, BASE value, NEW value).
    pub environment: Vec<(String, String, String)>,
    pub unchanged: usize,
}

impl Comparison {
    pub fn new(base: &Report, new: &Report) -> Comparison {
        let mut c = Comparison::default();
        let base_cases: BTreeMap<&str, &CaseResult> = base.cases.iter().map(|r| (r.id.as_str(), r)).collect();
        let new_cases: BTreeMap<&str, &CaseResult> = new.cases.iter().map(|r| (r.id.as_str(), r)).collect();
        for (id, n) in &new_cases {
            let failing = n.verdict.kind.is_failure();
            let Some(b) = base_cases.get(id) else {
                if failing {
                    c.regressions.push((id.to_string(), "new".into(), n.outcome()));
                }
                c.new_cases.push((id.to_string(), n.outcome()));
                continue;
            };
            let entry = (id.to_string(), b.outcome(), n.outcome());
            match (b.verdict.kind.is_failure(), failing) {
                (false, true) => c.regressions.push(entry),
                (true, false) => c.fixes.push(entry),
                (true, true) => c.still_failing.push((id.to_string(), n.outcome())),
                (false, false) if entry.1 != entry.2 => c.variant_changes.push(entry),
                (false, false) => c.unchanged += 1,
            }
        }
        for (id, b) in &base_cases {
            if !new_cases.contains_key(id) {
                c.removed_cases.push((id.to_string(), b.outcome()));
            }
        }
        c.environment = environment_differences(base, new);
        c
    }

    /// Regressions fail CI.
    pub fn ok(&self) -> bool {
        self.regressions.is_empty()
    }

    pub fn text(&self) -> String {
        let mut out = String::new();
        let three = |out: &mut String, title: &str, list: &[(String, String, String)]| {
            if !list.is_empty() {
                let _ = writeln!(out, "{title} ({}):", list.len());
                for (id, b, n) in list {
                    let _ = writeln!(out, "  {id}: {b} -> {n}");
                }
            }
        };
        let two = |out: &mut String, title: &str, list: &[(String, String)]| {
            if !list.is_empty() {
                let _ = writeln!(out, "{title} ({}):", list.len());
                for (id, o) in list {
                    let _ = writeln!(out, "  {id}: {o}");
                }
            }
        };
        three(&mut out, "environment differences", &self.environment);
        three(&mut out, "regressions", &self.regressions);
        three(&mut out, "fixes", &self.fixes);
        three(&mut out, "variant changes", &self.variant_changes);
        two(&mut out, "still failing", &self.still_failing);
        two(&mut out, "new cases", &self.new_cases);
        two(&mut out, "removed cases", &self.removed_cases);
        let _ = writeln!(
            out,
            "{} regression(s), {} fix(es), {} variant change(s), {} new, {} removed, {} unchanged",
            self.regressions.len(),
            self.fixes.len(),
            self.variant_changes.len(),
            self.new_cases.len(),
            self.removed_cases.len(),
            self.unchanged
        );
        out
    }
}

/// Provenance fields (all but the start time) and run options that differ, flattened to `field` or
/// `field.KEY` for the environment maps.
fn environment_differences(base: &Report, new: &Report) -> Vec<(String, String, String)> {
    let flat = |r: &Report| -> BTreeMap<String, String> {
        let mut map = BTreeMap::new();
        if let Ok(serde_json::Value::Object(fields)) = serde_json::to_value(&r.provenance) {
            for (k, v) in fields {
                match v {
                    serde_json::Value::Object(inner) => {
                        for (ik, iv) in inner {
                            map.insert(format!("{k}.{ik}"), plain(&iv));
                        }
                    }
                    v => {
                        map.insert(k, plain(&v));
                    }
                }
            }
        }
        map.remove("started_at");
        if let Some(run) = &r.run {
            map.insert("gate_delay_ms".into(), run.gate_delay_ms.to_string());
        }
        map
    };
    let (b, n) = (flat(base), flat(new));
    let keys: std::collections::BTreeSet<&String> = b.keys().chain(n.keys()).collect();
    let absent = || "(unset)".to_owned();
    keys.into_iter()
        .filter(|k| b.get(*k) != n.get(*k))
        .map(|k| (k.clone(), b.get(k).cloned().unwrap_or_else(absent), n.get(k).cloned().unwrap_or_else(absent)))
        .collect()
}

fn plain(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{report, result};
    use super::Comparison;
    use crate::record::verdict::VerdictKind::*;

    #[test]
    fn regressions_fixes_variants_new_removed_and_environment() {
        let base = report(
            "H100",
            13000,
            vec![
                result("a/regresses", Pass, None),
                result("a/fixed", Fail, None),
                result("a/flips", Variant, Some("sync")),
                result("a/same", Pass, None),
                result("a/removed", Pass, None),
                result("a/still", Crash, None),
            ],
        );
        let mut new = report(
            "H100",
            13010,
            vec![
                result("a/regresses", Fail, None),
                result("a/fixed", Pass, None),
                result("a/flips", Variant, Some("async")),
                result("a/same", Pass, None),
                result("a/new", Pass, None),
                result("a/new-failing", Timeout, None),
                result("a/still", Fail, None),
            ],
        );
        new.provenance.cuda_environment.insert("CUDA_LAUNCH_BLOCKING".into(), "1".into());
        let c = Comparison::new(&base, &new);
        assert_eq!(
            c.regressions,
            vec![
                ("a/new-failing".into(), "new".into(), "timeout".into()),
                ("a/regresses".into(), "pass".into(), "fail".into())
            ]
        );
        assert_eq!(c.fixes, vec![("a/fixed".into(), "fail".into(), "pass".into())]);
        assert_eq!(c.variant_changes, vec![("a/flips".into(), "variant sync".into(), "variant async".into())]);
        assert_eq!(c.still_failing, vec![("a/still".into(), "fail".into())]);
        assert_eq!(c.removed_cases, vec![("a/removed".into(), "pass".into())]);
        assert_eq!(c.new_cases.len(), 2);
        assert_eq!(c.unchanged, 1);
        let fields: Vec<&str> = c.environment.iter().map(|e| e.0.as_str()).collect();
        assert!(fields.contains(&"driver_version") && fields.contains(&"cuda_environment.CUDA_LAUNCH_BLOCKING"));
        assert!(!c.ok());
        assert!(c.text().contains("  a/regresses: pass -> fail\n"), "{}", c.text());
        assert!(Comparison::new(&base, &base).ok());
    }
}
