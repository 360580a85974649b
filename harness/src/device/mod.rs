//! The machine a run uses: a GPU's facts ([`gpu`]), the probe kernels it launches ([`kernels`]), which cases it can
//! run ([`requirements`]), and the host's facts a report records ([`host`]).

pub mod gpu;
pub mod host;
pub mod kernels;
pub mod requirements;
pub mod serialising;
