//! The machine a run uses: a GPU's facts ([`gpu`]), the probe kernels it launches ([`kernels`]), which cases it can
//! run ([`requirements`]), the host's facts a report records ([`host`]), and the Vulkan objects the external-resource
//! cases import ([`vulkan`]).

pub mod gpu;
pub mod host;
pub mod kernels;
pub mod requirements;
pub mod serialising;
pub mod vulkan;
