//! The conformance engine. Data flows one way:
//! case file → [`case::parse`] → [`case::validate`] → [`exec`] (cuda-sys calls) → [`observations`] →
//! [`verdict`] → [`report`]. [`figures`] records what the docs leave open (measured with generated cases, never
//! asserted). The harness does not know how kernels were built: it receives a
//! [`kernels::KernelTable`] from the root package.

pub mod case;
pub mod exec;
pub mod figures;
pub mod gpu;
pub mod kernels;
pub mod observations;
pub mod report;
pub mod requirements;
pub mod runner;
pub mod suite;
pub mod verdict;
