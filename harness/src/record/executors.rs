//! Which executor produced a result, and with `run --executor both` what the other one produced and whether the two
//! agree. Two executors run every case: the Rust one (`exec/`, in worker processes) and the C++ one (each case's
//! compiled reproducer, a standalone `.cu` program written by `cuda-conformance repro`). Both print the same
//! [`Observations`], judged by the same verdict code, so a disagreement is a bug in one of them or a real
//! non-determinism of the driver, never a difference of judging.
//!
//! Also here, because every output that names a failing case must spell it the same way: the command that writes
//! and builds a case's reproducer ([`reproduce_line`]) and the reproducer's file name ([`file_stem`]).

use super::observations::Observations;
use super::verdict::Verdict;
use serde::{Deserialize, Serialize};

/// What ran a case.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Executor {
    /// The Rust executor (`harness::exec`) in a worker process: the only one before reproducers existed.
    #[default]
    Rust,
    /// The case's compiled C++ reproducer, one process per case.
    Cxx,
}

impl Executor {
    pub fn as_str(self) -> &'static str {
        match self {
            Executor::Rust => "rust",
            Executor::Cxx => "cxx",
        }
    }
}

impl std::fmt::Display for Executor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// With `--executor both`: the second executor's run of the case and how it compares with the first (whose result
/// is the case's own verdict and observations).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SecondRun {
    pub executor: Executor,
    /// Its verdict, judged by the same code from its own observations.
    pub verdict: Verdict,
    /// Its trace: kept when the two disagree or the case did not pass (like the first's, see `Traces`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observations: Option<Observations>,
    pub wall_ms: u64,
    pub agreement: Agreement,
}

/// Whether two executors' runs of one case agree.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Agreement {
    pub kind: AgreementKind,
    /// Each thing that differs (disagree), or why they cannot be compared (not comparable), one line each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub differences: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AgreementKind {
    /// Same verdict and pick, and where both have a trace the same codes, data, graphs, host-call order and final
    /// synchronize.
    Agree,
    Disagree,
    /// Neither ran the case (not supported on this device, or skipped): there is nothing to compare.
    NotComparable,
}

impl AgreementKind {
    pub fn as_str(self) -> &'static str {
        match self {
            AgreementKind::Agree => "agree",
            AgreementKind::Disagree => "disagree",
            AgreementKind::NotComparable => "not-comparable",
        }
    }
}

impl std::fmt::Display for AgreementKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The reproducer's file name (without `.cu`) for a case id: each `/` becomes `__`, so `graph/update/x` is
/// `graph__update__x`. The emitter (`cuda-conformance repro`) and the C++ executor must agree on it.
pub fn file_stem(case_id: &str) -> String {
    case_id.replace('/', "__")
}

/// The one spelling of the command that writes, builds and runs a case's reproducer, printed under every failing
/// case (console, Markdown, JUnit) and under a shrunk random program. `cases` is the case file or folder when the
/// case is not one of the suite's (`--cases FILE`).
pub fn reproduce_line(case_id: &str, cases: Option<&str>) -> String {
    let stem = file_stem(case_id);
    let from = cases.map(|c| format!("--cases {c} ")).unwrap_or_default();
    format!(
        "reproduce: cuda-conformance {from}repro {case_id} --out repro/ && nvcc -std=c++17 repro/{stem}.cu -o {stem} \
         && ./{stem}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reproduce_line_names_the_case_and_its_file_stem() {
        assert_eq!(file_stem("graph/update/dependency-count-differs"), "graph__update__dependency-count-differs");
        assert_eq!(
            reproduce_line("graph/update/dependency-count-differs", None),
            "reproduce: cuda-conformance repro graph/update/dependency-count-differs --out repro/ && nvcc -std=c++17 \
             repro/graph__update__dependency-count-differs.cu -o graph__update__dependency-count-differs && \
             ./graph__update__dependency-count-differs"
        );
        let saved = reproduce_line("random/p1", Some("cases/random.case"));
        assert!(
            saved.starts_with("reproduce: cuda-conformance --cases cases/random.case repro random/p1 --out"),
            "{saved}"
        );
    }
}
