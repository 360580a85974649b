//! Baselines: what a GPU, driver and runtime are known to do, so that a run can be judged against it
//! (`run --baseline FILE`) instead of against the documentation alone. `baseline bless REPORT` writes one from a
//! report. The file is small and reviewable, one section per (GPU, driver, runtime), listing only the cases whose
//! verdict is not `pass`:
//!
//! ```text
//! # cuda-conformance baseline ...
//! [NVIDIA H100 80GB HBM3 | driver 580.159.04 | runtime 13.0]
//! errors/some-case                                   fail
//! implicit-sync/between-kernels/device-alloc/...     variant concurrent
//! events/query-after-record                          flake passes 9 runs in 10 on this driver (bug 34)
//! ```
//!
//! Judging: a failure (fail, crash, timeout) the baseline lists as a failure is `expected-fail`; a case the
//! baseline lists as failing that does not fail is `unexpected-pass` (which fails the run, so the baseline gets
//! updated); a case listed as `flake` (with a reason: the rest of its line) that fails is a `flake`, which does not
//! fail the run and keeps the line in the report, and one that passes is a pass; any other difference from the
//! baseline is noted in the case's messages.

use crate::record::verdict::VerdictKind;
use crate::record::{outcome_text, CaseResult, Provenance, Report};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

/// (GPU name, driver release, runtime version).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Key {
    pub gpu: String,
    pub driver: String,
    pub runtime: String,
}

impl Key {
    pub fn of(p: &Provenance) -> Key {
        let driver = if p.driver_release.is_empty() || p.driver_release == "unknown" {
            p.driver_version.clone()
        } else {
            p.driver_release.clone()
        };
        Key { gpu: p.gpu_name.clone(), driver, runtime: p.runtime_version.clone() }
    }
}

impl std::fmt::Display for Key {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} | driver {} | runtime {}", self.gpu, self.driver, self.runtime)
    }
}

/// The expected outcome of each listed case (`fail`, `variant concurrent`, ...), per key.
#[derive(Debug, Clone, Default)]
pub struct Baseline {
    pub sections: BTreeMap<Key, BTreeMap<String, String>>,
    /// Comment lines at the top of the file, kept when a section is re-blessed.
    pub header: Vec<String>,
}

impl Baseline {
    pub fn read(path: &Path) -> Result<Baseline, String> {
        let text =
            std::fs::read_to_string(path).map_err(|e| format!("{}: cannot read the baseline: {e}", path.display()))?;
        Baseline::parse(&path.display().to_string(), &text)
    }

    /// Parses a baseline; errors name `file:line`.
    pub fn parse(file: &str, text: &str) -> Result<Baseline, String> {
        let mut b = Baseline::default();
        let mut current: Option<Key> = None;
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            let at = |why: String| format!("{file}:{}: {why}", i + 1);
            if line.is_empty() {
                continue;
            }
            if line.starts_with('#') {
                if current.is_none() && b.sections.is_empty() {
                    b.header.push(raw.to_owned());
                }
                continue;
            }
            if let Some(inner) = line.strip_prefix('[') {
                let inner = inner.strip_suffix(']').ok_or_else(|| at("a section line must end with `]`".into()))?;
                let parts: Vec<&str> = inner.split('|').map(str::trim).collect();
                let key = match parts.as_slice() {
                    [gpu, driver, runtime] => {
                        match (driver.strip_prefix("driver "), runtime.strip_prefix("runtime ")) {
                            (Some(d), Some(r)) if !gpu.is_empty() => {
                                Key { gpu: gpu.to_string(), driver: d.trim().into(), runtime: r.trim().into() }
                            }
                            _ => return Err(at(format!("expected `[GPU | driver D | runtime R]`, found `{line}`"))),
                        }
                    }
                    _ => return Err(at(format!("expected `[GPU | driver D | runtime R]`, found `{line}`"))),
                };
                if b.sections.contains_key(&key) {
                    return Err(at(format!("a second section for {key}")));
                }
                b.sections.insert(key.clone(), BTreeMap::new());
                current = Some(key);
                continue;
            }
            let Some(key) = &current else {
                return Err(at("a case line before any `[GPU | driver D | runtime R]` section".into()));
            };
            let mut words = line.split_whitespace();
            let (Some(id), Some(kind)) = (words.next(), words.next()) else {
                return Err(at(format!("expected `CASE-ID VERDICT [VARIANT]`, found `{line}`")));
            };
            let kind = VerdictKind::from_word(kind).ok_or_else(|| {
                let known: Vec<&str> = VerdictKind::ALL.iter().map(|k| k.as_str()).collect();
                at(format!("unknown verdict `{kind}` (one of {})", known.join(", ")))
            })?;
            let outcome = if kind == VerdictKind::Flake {
                // A known flake, with why: `events/x flake passes 9 runs in 10 on this driver (bug 34)`.
                let reason = words.collect::<Vec<_>>().join(" ");
                if reason.is_empty() {
                    return Err(at(format!("`{line}`: a `flake` line says why (e.g. a bug link) after `flake`")));
                }
                format!("flake {reason}")
            } else {
                let variant = words.next();
                if let Some(extra) = words.next() {
                    return Err(at(format!("unexpected `{extra}` after the variant")));
                }
                outcome_text(kind, variant)
            };
            let section = b.sections.get_mut(key).expect("the current section exists");
            if section.insert(id.to_owned(), outcome).is_some() {
                return Err(at(format!("case {id} is listed twice in this section")));
            }
        }
        Ok(b)
    }

    /// The file's text: the header, then each section's cases in id order, aligned.
    pub fn text(&self) -> String {
        let mut out = String::new();
        if self.header.is_empty() {
            out.push_str(
                "# cuda-conformance baseline: per GPU, driver and runtime, the cases whose verdict is not `pass`.\n\
                 # A case not listed is expected to pass. Written by `cuda-conformance baseline bless REPORT`.\n",
            );
        }
        for h in &self.header {
            let _ = writeln!(out, "{h}");
        }
        for (key, cases) in &self.sections {
            let _ = writeln!(out, "\n[{key}]");
            let width = cases.keys().map(|k| k.len()).max().unwrap_or(0);
            for (id, outcome) in cases {
                let _ = writeln!(out, "{id:<width$} {outcome}");
            }
        }
        out
    }

    /// Replaces (or adds) the section of the report's GPU, driver and runtime with its non-pass cases.
    pub fn bless(&mut self, report: &Report) -> Key {
        let key = Key::of(&report.provenance);
        let cases = report
            .cases
            .iter()
            .filter(|c| c.verdict.kind != VerdictKind::Pass)
            // A judged report: bless what the case did, not the judgement. A flake is blessed with why it is one
            // (a `flake` line needs a reason): edit the reason into a bug link.
            .map(|c| (c.id.clone(), with_flake_reason(c)))
            .filter(|(_, outcome)| outcome != "pass")
            .collect();
        self.sections.insert(key.clone(), cases);
        key
    }

    /// The section for `key`, or why there is none.
    pub fn section(&self, key: &Key) -> Result<&BTreeMap<String, String>, String> {
        self.sections.get(key).ok_or_else(|| {
            let known: Vec<String> = self.sections.keys().map(|k| format!("[{k}]")).collect();
            format!(
                "the baseline has no section [{key}] (it has {})",
                if known.is_empty() { "none".into() } else { known.join(", ") }
            )
        })
    }
}

/// What `bless` writes for a case: its observed outcome, and for a flake the runner's account of its runs.
fn with_flake_reason(c: &CaseResult) -> String {
    if c.verdict.kind != VerdictKind::Flake {
        return c.observed_outcome();
    }
    // A known flake keeps the line a person wrote.
    if let Some(line) = c.baseline.as_ref().filter(|b| b.starts_with("flake ")) {
        return line.clone();
    }
    let why = c.verdict.messages.first().map_or("runs disagreed", String::as_str);
    format!("flake seen in the blessed run: {}", why.split_whitespace().collect::<Vec<_>>().join(" "))
}

/// Judges `result` against the baseline's expectation for it (`pass` when the section does not list it).
pub fn judge(section: &BTreeMap<String, String>, result: &mut CaseResult) {
    let expected = section.get(&result.id).cloned();
    let expected_text = expected.clone().unwrap_or_else(|| "pass".into());
    let expected_kind = expected_text.split_whitespace().next().and_then(VerdictKind::from_word);
    let expected_failure = expected_kind.is_some_and(VerdictKind::is_failure);
    let got = result.outcome();
    let kind = result.verdict.kind;
    if expected_kind == Some(VerdictKind::Flake) {
        // A known flake: a failure is tolerated as a flake (the report keeps the line, so it stays tracked); a pass
        // is a pass, never an unexpected one.
        if kind.is_failure() || kind == VerdictKind::Flake {
            result.verdict.kind = VerdictKind::Flake;
            result
                .verdict
                .messages
                .insert(0, format!("the baseline declares a known {expected_text}; this run: {got}"));
        }
    } else if kind.is_failure() && expected_failure {
        result.verdict.kind = VerdictKind::ExpectedFail;
        result.verdict.messages.insert(0, format!("the baseline expects {expected_text}; this run: {got}"));
    } else if expected_failure && !kind.is_failure() && kind != VerdictKind::Flake {
        result.verdict.kind = VerdictKind::UnexpectedPass;
        result.verdict.messages.insert(0, format!("the baseline expects {expected_text}; this run: {got}"));
    } else if got != expected_text {
        result.verdict.messages.push(format!("the baseline expects {expected_text}; this run: {got}"));
    }
    result.baseline = expected;
}

#[cfg(test)]
mod tests {
    /// The baselines shipped under `baselines/` read, and name only cases that exist, with outcomes a case can have.
    #[test]
    fn shipped_baselines_read_and_name_existing_cases() {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
        let cases = crate::case::suite::load_dir(&root.join("cases")).unwrap_or_else(|e| panic!("{e:?}"));
        let mut files = 0;
        for entry in std::fs::read_dir(root.join("baselines")).unwrap() {
            let path = entry.unwrap().path();
            let baseline = super::Baseline::read(&path).unwrap_or_else(|e| panic!("{e}"));
            for (key, section) in &baseline.sections {
                for (id, outcome) in section {
                    assert!(cases.iter().any(|c| &c.id == id), "{}: [{key}] names no case {id}", path.display());
                    let kind = outcome.split_whitespace().next().unwrap_or_default();
                    assert!(crate::record::verdict::VerdictKind::from_word(kind).is_some(), "{id}: `{outcome}`");
                }
            }
            files += 1;
        }
        assert!(files >= 2, "{files} baselines");
    }

    use super::super::test_support::{report, result};
    use super::*;
    use VerdictKind::*;

    #[test]
    fn bless_then_judge_round_trips() {
        let r = report(
            "H100",
            13000,
            vec![result("a/pass", Pass, None), result("a/fail", Fail, None), result("a/v", Variant, Some("sync"))],
        );
        let mut b = Baseline::default();
        let key = b.bless(&r);
        let text = b.text();
        assert!(text.contains(&format!("[{key}]\na/fail fail\na/v    variant sync\n")), "{text}");
        let back = Baseline::parse("b.txt", &text).unwrap();
        let section = back.section(&key).unwrap();
        let mut judged = [
            result("a/fail", Fail, None),
            result("a/pass", Fail, None),
            result("a/fail", Pass, None),
            result("a/v", Variant, Some("async")),
        ];
        for j in &mut judged {
            judge(section, j);
        }
        assert_eq!(judged[0].verdict.kind, ExpectedFail);
        assert_eq!(judged[1].verdict.kind, Fail);
        assert_eq!(judged[2].verdict.kind, UnexpectedPass);
        assert_eq!(judged[3].verdict.kind, Variant);
        assert!(judged[3].verdict.messages.iter().any(|m| m.contains("expects variant sync")));
        // Re-blessing a judged report writes what the cases did.
        let mut again = Baseline::default();
        again.bless(&report("H100", 13000, judged.to_vec()));
        assert_eq!(again.sections[&key]["a/fail"], "fail");
        assert_eq!(again.sections[&key]["a/v"], "variant async");
    }

    #[test]
    fn bad_lines_are_reported_with_file_and_line() {
        let e = Baseline::parse("b.txt", "# c\na/b fail\n").unwrap_err();
        assert!(e.starts_with("b.txt:2: a case line before"), "{e}");
        let e = Baseline::parse("b.txt", "[G | driver 1 | runtime 2]\na/b failed\n").unwrap_err();
        assert!(e.starts_with("b.txt:2: unknown verdict `failed`"), "{e}");
        let e = Baseline::parse("b.txt", "[G | 1 | 2]\n").unwrap_err();
        assert!(e.starts_with("b.txt:1: expected `[GPU"), "{e}");
        let b = Baseline::parse("b.txt", "[G | driver 1 | runtime 2]\n").unwrap();
        let missing = Key { gpu: "H".into(), driver: "1".into(), runtime: "2".into() };
        assert!(b.section(&missing).unwrap_err().contains("[G | driver 1 | runtime 2]"));
    }
}
