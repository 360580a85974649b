//! A case's verdict as recorded: the kind, the variant seen, what `observe` recorded and why. Judged by
//! [`crate::readings::verdict`]; the runner adds its own kinds (flake, expected-fail, unexpected-pass).

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum VerdictKind {
    Pass,
    Fail,
    /// A requirement of the case is not met by this device or environment.
    NotSupported,
    /// The documentation allows several behaviours; the verdict names the one seen.
    Variant,
    /// Correct, but something the documentation does not promise (such as overlap) was not seen.
    QualityWarning,
    /// The case did not finish within its deadline.
    Timeout,
    /// The process running the case died.
    Crash,
    /// Not run (no device).
    Skipped,
    /// The runner's, not the judge's: runs of the case disagreed (an unexpected result that did not reproduce, or a
    /// variant case that showed two variants). The attempts are in the case's result.
    Flake,
    /// The runner's, with a baseline: a failure the baseline expects on this GPU, driver and runtime.
    ExpectedFail,
    /// The runner's, with a baseline: the baseline expects a failure and the case passed (update the baseline).
    UnexpectedPass,
}

impl VerdictKind {
    pub const ALL: [VerdictKind; 11] = [
        VerdictKind::Pass,
        VerdictKind::Fail,
        VerdictKind::NotSupported,
        VerdictKind::Variant,
        VerdictKind::QualityWarning,
        VerdictKind::Timeout,
        VerdictKind::Crash,
        VerdictKind::Skipped,
        VerdictKind::Flake,
        VerdictKind::ExpectedFail,
        VerdictKind::UnexpectedPass,
    ];

    /// Fail, timeout, crash and unexpected pass: the verdicts that fail a run.
    pub fn is_failure(self) -> bool {
        matches!(self, VerdictKind::Fail | VerdictKind::Timeout | VerdictKind::Crash | VerdictKind::UnexpectedPass)
    }

    /// The verdict called `word` (`pass`, `not-supported`, ...).
    pub fn from_word(word: &str) -> Option<VerdictKind> {
        VerdictKind::ALL.into_iter().find(|k| k.as_str() == word)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            VerdictKind::Pass => "pass",
            VerdictKind::Fail => "fail",
            VerdictKind::NotSupported => "not-supported",
            VerdictKind::Variant => "variant",
            VerdictKind::QualityWarning => "quality-warning",
            VerdictKind::Timeout => "timeout",
            VerdictKind::Crash => "crash",
            VerdictKind::Skipped => "skipped",
            VerdictKind::Flake => "flake",
            VerdictKind::ExpectedFail => "expected-fail",
            VerdictKind::UnexpectedPass => "unexpected-pass",
        }
    }
}

impl std::fmt::Display for VerdictKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    pub kind: VerdictKind,
    /// The alternatives the `variant` expectations picked, joined with `,` (e.g. `sync` or `sync,staged`).
    pub variant: Option<String>,
    /// What the `observe` statements recorded, joined with `,` (behaviour the docs leave open; never judged).
    #[serde(default)]
    pub observed: Option<String>,
    /// Why: every failure, then quality warnings, then the variants picked and operations that were not run.
    pub messages: Vec<String>,
}
