//! The seeds' performance claims as recorded: the bounds measured, each claim's figure, bound, ratio and verdict,
//! and the seeds' own programs' runs. Judged by [`crate::claims`]; shown by [`crate::report::claims`].

use serde::{Deserialize, Serialize};

/// Everything `cuda-conformance seeds` found: the programs' runs, the bounds, the claims.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SeedClaims {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub programs: Vec<ProgramRun>,
    pub bounds: Vec<BoundRow>,
    pub claims: Vec<ClaimRow>,
}

/// A bound measured by the suite, beside the same measurement by a C++ program where there is one.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct BoundRow {
    pub what: String,
    pub unit: String,
    /// The median of the samples where the case ran more than once (`samples:`).
    pub suite: Option<f64>,
    /// Under `samples:`: how many, and their least and greatest value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spread: Option<Spread>,
    /// The C++ program's figure for the same work (`seeds/bandwidth.cu`, `seeds/004_dag_graph.cu`).
    pub program: Option<f64>,
    /// Where the suite's figure comes from: `performance/bound-pinned-h2d: h2d`.
    pub source: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimRow {
    /// `seed000/pipeline`: the seed and a name for the claim.
    pub id: String,
    /// The seed's words, as written.
    pub words: String,
    /// What they claim, in English.
    pub claim: String,
    pub figure: Option<Quantity>,
    pub bound: Option<Quantity>,
    /// figure / bound.
    pub ratio: Option<f64>,
    pub verdict: ClaimVerdict,
    /// How the verdict follows from the figures (the thresholds, stated before any run).
    pub why: String,
    /// What the seed's program as written printed, beside the suite's figure.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<String>,
    /// Where the cases it reads ran more than once (`samples:`): the claim judged on each sample, and how the
    /// verdict follows from them. `None`: one measurement.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub samples: Option<ClaimSamples>,
}

/// Least and greatest of `n` values.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Spread {
    pub n: u32,
    pub min: f64,
    pub max: f64,
}

/// A claim judged on every sample: sample k takes the k-th run of every case the claim reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ClaimSamples {
    /// The verdict of each sample, in run order (a sample missing a figure is `not-measured`).
    pub verdicts: Vec<ClaimVerdict>,
    /// The ratio of each sample, in run order (`None` where a sample has none): the distribution itself.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub ratios: Vec<Option<f64>>,
    /// The samples' ratios: how many, least, greatest (the row's `ratio` is their median).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ratio: Option<Spread>,
    /// The ratios of the middle samples, those that decide the verdict (see `rule`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub middle: Option<Spread>,
    /// The samples' verdicts differ (some sample lies across a threshold from another).
    pub straddles: bool,
    /// How the verdict follows from these samples, in words: `the middle 3 of 5 samples decide (1 set aside at
    /// each end): all hold`.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub rule: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Quantity {
    /// `None` for an observation that is not a number (then `what` says what was seen).
    #[serde(default)]
    pub value: Option<f64>,
    pub unit: String,
    /// What was measured: `pipeline time (seed000-pipeline: elapsed start..stop)`.
    pub what: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ClaimVerdict {
    Holds,
    HoldsPartly,
    DoesNotHold,
    /// A figure it needs was not measured (the case did not run or recorded nothing).
    NotMeasured,
    /// Judged on several samples, the middle ones disagree: the distribution's centre straddles a threshold
    /// (`crate::claims::distribution_verdict`). Never a single sample's verdict.
    Undecided,
}

impl std::fmt::Display for ClaimVerdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            ClaimVerdict::Holds => "holds",
            ClaimVerdict::HoldsPartly => "holds partly",
            ClaimVerdict::DoesNotHold => "does not hold",
            ClaimVerdict::NotMeasured => "not measured",
            ClaimVerdict::Undecided => "undecided",
        })
    }
}

impl ClaimVerdict {
    /// `2 holds, 1 holds partly`: how many of `verdicts` are each verdict, strongest first.
    pub fn counts_text(verdicts: &[ClaimVerdict]) -> String {
        let order = [
            ClaimVerdict::Holds,
            ClaimVerdict::HoldsPartly,
            ClaimVerdict::DoesNotHold,
            ClaimVerdict::NotMeasured,
            ClaimVerdict::Undecided,
        ];
        order
            .iter()
            .map(|v| (v, verdicts.iter().filter(|x| *x == v).count()))
            .filter(|(_, n)| *n > 0)
            .map(|(v, n)| format!("{n} {v}"))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// How much a verdict grants: does not hold < holds partly < holds (`None` for not measured and undecided,
    /// which no single sample gives).
    pub fn strength(self) -> Option<u8> {
        match self {
            ClaimVerdict::DoesNotHold => Some(0),
            ClaimVerdict::HoldsPartly => Some(1),
            ClaimVerdict::Holds => Some(2),
            ClaimVerdict::NotMeasured | ClaimVerdict::Undecided => None,
        }
    }
}

impl Quantity {
    pub fn new(value: f64, unit: &str, what: &str) -> Quantity {
        Quantity { value: Some(value), unit: unit.into(), what: what.into() }
    }

    /// An observation without a number.
    pub fn text(what: &str) -> Quantity {
        Quantity { value: None, unit: String::new(), what: what.into() }
    }
}

/// A number a program printed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProgramFigure {
    pub name: String,
    pub value: f64,
    pub unit: String,
}

/// One run of one program.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProgramRun {
    pub name: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub variant: String,
    /// Its exit status; `None` when it did not start, was killed at the deadline or died of a signal.
    pub exit: Option<i32>,
    /// Its standard output and error, as printed.
    pub output: String,
    pub figures: Vec<ProgramFigure>,
    /// Why it has no figures or did not finish.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub wall_ms: u64,
}

impl ProgramRun {
    /// The figure `name`, if the program printed it.
    pub fn figure(&self, name: &str) -> Option<f64> {
        self.figures.iter().find(|f| f.name == name).map(|f| f.value)
    }

    /// `NAME` or `NAME (VARIANT)`.
    pub fn title(&self) -> String {
        if self.variant.is_empty() {
            self.name.clone()
        } else {
            format!("{} ({})", self.name, self.variant)
        }
    }
}
