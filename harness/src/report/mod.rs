//! Saved reports ([`crate::record::Report`]) as text for people and tools: summaries ([`table`], [`markdown`]), CI
//! dashboards ([`junit`]), failure traces ([`trace`]), pictures ([`timeline`]), the seeds' claims and the figures
//! ([`claims`], [`figures`]), comparisons against an earlier run or a blessed baseline ([`compare`], [`baseline`]),
//! and views across hosts, GPUs and drivers ([`matrix`], [`fleet`]). Everything here works from a report read back
//! from JSON, on a machine without a GPU.

pub mod baseline;
pub mod claims;
pub mod compare;
pub mod coverage;
pub mod escape;
pub mod expectations;
pub mod figures;
pub mod findings;
pub mod fleet;
pub mod junit;
mod markdown;
pub mod matrix;
pub mod reference;
mod table;
#[cfg(test)]
pub(crate) mod test_support;
pub mod timeline;
pub mod trace;
