//! Expectation files: what a CI owner declares about cases on their GPUs, drivers and runtimes, as deqp-runner's
//! skip, flake and fails lists do for Mesa's drivers, in one file, with a reason on every line
//! (`run --expectations FILE`, or `CUDA_CONFORMANCE_EXPECTATIONS=FILE` for the test binaries):
//!
//! ```text
//! # ACTION  CASE (glob)               [gpu=GLOB] [driver=GLOB] [runtime=GLOB]  REASON
//! skip      ipc/*                     gpu=*A100*                  the IPC cases hang driver 535 on our A100s (bug 12)
//! flake     events/query-after-record driver=580.*                passes 9 runs in 10 on 580 (bug 34)
//! fail      errors/some-case                                      NVBUG 4567, fixed in 590
//! ```
//!
//! - `skip`: the case is not run; its verdict is *skipped*, with the line and its reason (a case that hangs one
//!   driver no longer costs its deadline on every run).
//! - `flake`: the case runs; a failure (or a flake the runner saw) is a *flake* with the line's reason, which does
//!   not fail the run, and the report keeps the line (`expectation`), so how often it flakes stays tracked; a pass
//!   is a pass.
//! - `fail`: an expected failure: a fail, crash or timeout is *expected-fail*; anything that does not fail is
//!   *unexpected-pass* (the run fails, so the line gets removed), as with a baseline.
//!
//! The case pattern is a case id, or a glob (`*` any characters, `?` one); the conditions are globs over the GPU's
//! name, the driver (its release, e.g. `580.159.04`, else the CUDA version the driver reports, e.g. `13.0`) and the
//! runtime (`13.0`). A line applies to a run when each of its conditions matches. The first line that applies to a
//! case decides; a line takes precedence over the baseline for its cases. A line without a reason is an error, and
//! so is a pattern that names no case of the suite (a stale or mistyped line would otherwise hide nothing silently):
//! wildcards hide too much too easily (chipStar's `.*[Gg]raph.*` once hid a real capture bug), so prefer ids.

use super::baseline::Key;
use crate::record::verdict::VerdictKind;
use crate::record::CaseResult;
use std::path::Path;

/// What a line declares.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    Skip,
    Flake,
    Fail,
}

impl Action {
    fn word(self) -> &'static str {
        match self {
            Action::Skip => "skip",
            Action::Flake => "flake",
            Action::Fail => "fail",
        }
    }
}

/// One line of an expectation file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub action: Action,
    /// A case id or a glob over case ids.
    pub cases: String,
    pub gpu: Option<String>,
    pub driver: Option<String>,
    pub runtime: Option<String>,
    pub reason: String,
    /// `FILE:LINE`, for every message that quotes the line.
    pub at: String,
}

impl Entry {
    /// Whether the line's conditions hold for this GPU, driver and runtime.
    pub fn applies_to(&self, key: &Key) -> bool {
        let holds = |glob: &Option<String>, value: &str| glob.as_deref().is_none_or(|g| glob_matches(g, value));
        holds(&self.gpu, &key.gpu) && holds(&self.driver, &key.driver) && holds(&self.runtime, &key.runtime)
    }

    /// Whether the line names a GPU, driver or runtime (then it can only be decided with a device's provenance).
    pub fn has_conditions(&self) -> bool {
        self.gpu.is_some() || self.driver.is_some() || self.runtime.is_some()
    }

    /// How a result quotes the line: `skip (expectations.txt:3): the IPC cases hang ...`.
    pub fn text(&self) -> String {
        format!("{} ({}): {}", self.action.word(), self.at, self.reason)
    }
}

/// The lines of one expectation file, in file order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Expectations {
    pub entries: Vec<Entry>,
}

impl Expectations {
    pub fn read(path: &Path) -> Result<Expectations, String> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| format!("{}: cannot read the expectation file: {e}", path.display()))?;
        Expectations::parse(&path.display().to_string(), &text)
    }

    /// Parses a file; an error names `file:line` and what was expected.
    pub fn parse(file: &str, text: &str) -> Result<Expectations, String> {
        let mut entries = Vec::new();
        for (i, raw) in text.lines().enumerate() {
            let line = raw.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let at = format!("{file}:{}", i + 1);
            let fail = |why: String| format!("{at}: {why}");
            let mut words = line.split_whitespace().peekable();
            let action = match words.next() {
                Some("skip") => Action::Skip,
                Some("flake") => Action::Flake,
                Some("fail") => Action::Fail,
                Some(other) => return Err(fail(format!("expected `skip`, `flake` or `fail`, found `{other}`"))),
                None => continue,
            };
            let cases = words.next().ok_or_else(|| fail("expected a case id or glob after the action".into()))?;
            let (mut gpu, mut driver, mut runtime) = (None, None, None);
            while let Some(word) = words.peek() {
                let Some((name, glob)) = word.split_once('=') else { break };
                let slot = match name {
                    "gpu" => &mut gpu,
                    "driver" => &mut driver,
                    "runtime" => &mut runtime,
                    _ => break,
                };
                if glob.is_empty() || slot.is_some() {
                    return Err(fail(format!("`{word}`: each of gpu=, driver=, runtime= at most once, with a glob")));
                }
                *slot = Some(glob.to_owned());
                words.next();
            }
            let reason = words.collect::<Vec<_>>().join(" ");
            if reason.is_empty() {
                return Err(fail(format!(
                    "`{line}` gives no reason: every line says why (a bug link, the driver that hangs, ...)"
                )));
            }
            entries.push(Entry { action, cases: cases.to_owned(), gpu, driver, runtime, reason, at });
        }
        Ok(Expectations { entries })
    }

    /// Every line whose case pattern names none of `ids` (the suite's case ids), as errors naming the line.
    pub fn unmatched<'a>(&self, ids: impl Iterator<Item = &'a str> + Clone) -> Vec<String> {
        self.entries
            .iter()
            .filter(|e| !ids.clone().any(|id| glob_matches(&e.cases, id)))
            .map(|e| format!("{}: `{}` names no case of the suite", e.at, e.cases))
            .collect()
    }

    /// The first line that names case `id` and applies to `key`.
    pub fn entry_for(&self, id: &str, key: &Key) -> Option<&Entry> {
        self.entries.iter().find(|e| glob_matches(&e.cases, id) && e.applies_to(key))
    }

    /// The `skip` line for `id` that holds whatever the GPU, driver and runtime (no conditions), if the first line
    /// naming `id` is one: what a test binary can decide while listing, before any device is probed.
    pub fn unconditional_skip(&self, id: &str) -> Option<&Entry> {
        let first = self.entries.iter().find(|e| glob_matches(&e.cases, id) && !e.has_conditions())?;
        (first.action == Action::Skip).then_some(first)
    }
}

/// The verdict of a case that an expectation skips: *skipped*, with the line and its reason.
pub fn skipped_verdict(entry: &Entry) -> crate::record::verdict::Verdict {
    crate::record::verdict::Verdict {
        kind: VerdictKind::Skipped,
        variant: None,
        observed: None,
        messages: vec![format!("skipped by the expectation {}", entry.text())],
    }
}

/// Judges a result of a case that ran against its `flake` or `fail` line (see the module documentation).
pub fn judge(entry: &Entry, result: &mut CaseResult) {
    let got = result.outcome();
    let kind = result.verdict.kind;
    let note = format!("the expectation {}; this run: {got}", entry.text());
    match entry.action {
        Action::Skip => {}
        Action::Flake if kind.is_failure() || kind == VerdictKind::Flake => {
            result.verdict.kind = VerdictKind::Flake;
            result.verdict.messages.insert(0, note);
        }
        Action::Fail if kind.is_failure() => {
            result.verdict.kind = VerdictKind::ExpectedFail;
            result.verdict.messages.insert(0, note);
        }
        Action::Fail if kind != VerdictKind::Flake && kind != VerdictKind::NotSupported => {
            result.verdict.kind = VerdictKind::UnexpectedPass;
            result.verdict.messages.insert(0, note);
        }
        Action::Flake | Action::Fail => result.verdict.messages.push(note),
    }
    result.expectation = Some(entry.text());
}

/// `*` matches any characters (`/` too), `?` one; everything else itself.
pub fn glob_matches(glob: &str, text: &str) -> bool {
    let (g, t): (Vec<char>, Vec<char>) = (glob.chars().collect(), text.chars().collect());
    // The classic two-pointer match with backtracking to the last `*`.
    let (mut gi, mut ti, mut star, mut mark) = (0, 0, None, 0);
    while ti < t.len() {
        if gi < g.len() && (g[gi] == '?' || g[gi] == t[ti]) {
            gi += 1;
            ti += 1;
        } else if gi < g.len() && g[gi] == '*' {
            star = Some(gi);
            mark = ti;
            gi += 1;
        } else if let Some(s) = star {
            gi = s + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    g[gi..].iter().all(|&c| c == '*')
}

#[cfg(test)]
mod tests {
    use super::super::test_support::result;
    use super::*;
    use VerdictKind::*;

    fn key(gpu: &str, driver: &str) -> Key {
        Key { gpu: gpu.into(), driver: driver.into(), runtime: "13.0".into() }
    }

    #[test]
    fn globs() {
        assert!(glob_matches("ipc/*", "ipc/a/b"));
        assert!(glob_matches("*A100*", "NVIDIA A100-SXM4-80GB"));
        assert!(glob_matches("580.*", "580.159.04"));
        assert!(glob_matches("a?c", "abc"));
        assert!(!glob_matches("a?c", "ac"));
        assert!(!glob_matches("ipc/*", "graph/ipc/x"));
        assert!(glob_matches("events/query", "events/query"));
        assert!(!glob_matches("events/query", "events/query-after"));
    }

    #[test]
    fn lines_parse_with_conditions_and_reasons() {
        let text = "# c\nskip ipc/* gpu=*A100* hangs driver 535 (bug 12)\n\nflake e/q driver=580.* runtime=13.? 9 in 10\nfail x/y NVBUG 4567\n";
        let e = Expectations::parse("exp.txt", text).unwrap();
        assert_eq!(e.entries.len(), 3);
        assert_eq!(e.entries[0].gpu.as_deref(), Some("*A100*"));
        assert_eq!(e.entries[0].reason, "hangs driver 535 (bug 12)");
        assert_eq!(e.entries[0].at, "exp.txt:2");
        assert_eq!(e.entries[1].driver.as_deref(), Some("580.*"));
        assert_eq!(e.entries[1].runtime.as_deref(), Some("13.?"));
        assert_eq!(e.entries[2].action, Action::Fail);
        // Conditions decide which configurations a line applies to.
        assert!(e.entry_for("ipc/a", &key("NVIDIA A100-SXM4-80GB", "535.1")).is_some());
        assert!(e.entry_for("ipc/a", &key("NVIDIA H100 80GB HBM3", "535.1")).is_none());
        assert!(e.entry_for("e/q", &key("H100", "580.159.04")).is_some());
        assert!(e.entry_for("e/q", &key("H100", "575.1")).is_none());
        // Only a line without conditions is decided before a device is known.
        assert!(e.unconditional_skip("ipc/a").is_none());
        let plain = Expectations::parse("p", "skip a/b hangs\nfail a/* known\n").unwrap();
        assert_eq!(plain.unconditional_skip("a/b").map(|e| e.at.as_str()), Some("p:1"));
        assert!(plain.unconditional_skip("a/c").is_none());
    }

    #[test]
    fn bad_lines_name_file_and_line() {
        let e = Expectations::parse("exp.txt", "skip a/b\n").unwrap_err();
        assert!(e.starts_with("exp.txt:1: `skip a/b` gives no reason"), "{e}");
        let e = Expectations::parse("exp.txt", "\nignore a/b why\n").unwrap_err();
        assert!(e.starts_with("exp.txt:2: expected `skip`, `flake` or `fail`, found `ignore`"), "{e}");
        let e = Expectations::parse("exp.txt", "skip a/b gpu=x gpu=y why\n").unwrap_err();
        assert!(e.starts_with("exp.txt:1: `gpu=y`: each of"), "{e}");
        let e = Expectations::parse("exp.txt", "fail\n").unwrap_err();
        assert!(e.starts_with("exp.txt:1: expected a case id"), "{e}");
        let e = Expectations::parse("exp.txt", "fail a/b* why\nskip c/d why\n").unwrap();
        assert_eq!(e.unmatched(["a/bc", "x/y"].into_iter()), vec!["exp.txt:2: `c/d` names no case of the suite"]);
    }

    #[test]
    fn judging_flake_and_fail_lines() {
        let e = Expectations::parse("x", "flake a/flaky sometimes\nfail a/broken bug 1\n").unwrap();
        let k = key("G", "1");
        let judged = |id: &str, kind: VerdictKind| {
            let mut r = result(id, kind, None);
            judge(e.entry_for(id, &k).unwrap(), &mut r);
            r
        };
        let f = judged("a/flaky", Fail);
        assert_eq!(f.verdict.kind, Flake);
        assert!(f.verdict.messages[0].contains("flake (x:1): sometimes; this run: fail"), "{:?}", f.verdict);
        assert_eq!(f.expectation.as_deref(), Some("flake (x:1): sometimes"));
        assert_eq!(judged("a/flaky", Pass).verdict.kind, Pass);
        assert_eq!(judged("a/flaky", Flake).verdict.kind, Flake);
        assert_eq!(judged("a/broken", Crash).verdict.kind, ExpectedFail);
        assert_eq!(judged("a/broken", Pass).verdict.kind, UnexpectedPass);
        assert_eq!(judged("a/broken", Variant).verdict.kind, UnexpectedPass);
        assert_eq!(judged("a/broken", NotSupported).verdict.kind, NotSupported);
    }
}
