//! Pure reads of one run of a case (the case and its [`crate::record::observations::Observations`]), taken
//! together by the runner: the [`verdict`], the `measure` figures ([`measure`]) and the [`timeline`].

pub mod agreement;
pub mod measure;
pub mod timeline;
pub mod verdict;
