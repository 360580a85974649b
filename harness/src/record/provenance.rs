//! Where a report came from: the GPU, driver, runtime, build and environment of the run.

use super::task::Task;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Where a report came from: enough to reproduce the run or to compare it with another host's.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Provenance {
    pub tool_version: String,
    /// `git rev-parse HEAD` of the tree the binary was built from (with `-dirty` if it had changes).
    pub commit: String,
    pub hostname: String,
    /// The scheduler's name of the node (see [`crate::device::host::node_from_env`]); the hostname when run by hand. Several
    /// simulated nodes can share one hostname, so fleet merges key on this.
    #[serde(default)]
    pub node: String,
    /// The scheduler's identity of the task that made the report, and the GPUs it was given (fleet merges).
    #[serde(default)]
    pub task: Task,
    pub gpu_name: String,
    pub gpu_uuid: String,
    pub compute_capability: String,
    pub driver_version: String,
    /// The kernel module's release (e.g. `580.159.04`, from /proc/driver/nvidia/version), as nvidia-smi shows it.
    #[serde(default)]
    pub driver_release: String,
    /// The runtime actually linked (cudaRuntimeGetVersion).
    pub runtime_version: String,
    /// The headers the bindings were generated from.
    pub bindings_cudart_version: String,
    /// `static` (libcudart_static.a) or `dynamic`.
    pub cudart_link: String,
    pub concurrent_kernels: bool,
    pub async_engine_count: u32,
    pub multiprocessors: u32,
    pub device_count: u32,
    pub stream_priority_range: (i32, i32),
    /// Every CUDA_* variable of the run's environment (CUDA_LAUNCH_BLOCKING, CUDA_MODULE_LOADING,
    /// CUDA_DEVICE_MAX_CONNECTIONS, CUDA_VISIBLE_DEVICES change what cases can observe).
    pub cuda_environment: BTreeMap<String, String>,
    /// CUDA_DEVICE_MAX_CONNECTIONS, CUDA_LAUNCH_BLOCKING and CUDA_MODULE_LOADING as in effect, set or not.
    #[serde(default)]
    pub semantic_environment: BTreeMap<String, String>,
    /// UTC, RFC 3339.
    pub started_at: String,
    /// What cudaDriverGetVersion reported when `CUDA_CONFORMANCE_ASSUME_DRIVER` made the run act on the lower
    /// `driver_version` (a test of the fallbacks for old drivers); absent otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub driver_version_reported: Option<String>,
    /// The runtime calls whose form depends on the runtime and driver, as this run made them (cuda-sys `compat`).
    #[serde(default)]
    pub call_forms: String,
    /// The probe kernels as registered with cudart (set by the binary that embeds them; empty in older reports).
    #[serde(default)]
    pub kernel_image: KernelImage,
    /// Every device the run could see (name, UUID, PCI bus id), by ordinal: cases that need several devices use
    /// the ones after their own. Empty in older reports.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub devices: Vec<VisibleDevice>,
    /// The link between each ordered pair of those devices: peer access possible, access supported, performance
    /// rank, native atomics, CUDA array access (cudaDeviceCanAccessPeer, cudaDeviceGetP2PAttribute).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub peer_links: Vec<PeerLink>,
    /// The tool that serialised the run's device work, as the process saw it (compute-sanitizer, Nsight Compute,
    /// `CUDA_LAUNCH_BLOCKING=1`; see `device::serialising`): the cases that need asynchrony were not-supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub serialising: Option<String>,
}

/// What the probe kernels were built into: which driver can load them depends on the PTX ISA and the cubins'.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct KernelImage {
    /// e.g. `NVRTC 12.0 (nvFatbin 12.4, uncompressed)`.
    pub compiler: String,
    /// The PTX `.version` of the image's PTX, e.g. `8.0` (a driver JIT-compiles PTX up to its own CUDA version).
    pub ptx_isa: String,
    /// Cubins and PTX by architecture, with the cubins' ELF ABI, e.g. `sm_90 (ELF OS/ABI 0x33, ABI 7) + compute_90 PTX`.
    pub architectures: String,
}

/// The variables that change what cases can observe, with the driver's default of each (see
/// `device::gpu::semantic_environment`).
pub const SEMANTIC_DEFAULTS: [(&str, &str); 3] =
    [("CUDA_DEVICE_MAX_CONNECTIONS", "8"), ("CUDA_LAUNCH_BLOCKING", "0"), ("CUDA_MODULE_LOADING", "LAZY")];

impl Provenance {
    /// The semantic settings of the run that differ from the driver's defaults, as `NAME=value` joined by `, `;
    /// empty when the run had the defaults (unset, or set to the default value). Runs that differ here are never
    /// merged into one matrix column or one fleet majority: `CUDA_DEVICE_MAX_CONNECTIONS=1` alone turns some
    /// variants into others.
    pub fn semantic_difference(&self) -> String {
        let mut differ = Vec::new();
        for (name, value) in &self.semantic_environment {
            // "8 (unset: the default)" is how a report says the variable was not set.
            let value = value.split(" (unset").next().unwrap_or(value).trim();
            let default = SEMANTIC_DEFAULTS.iter().find(|(n, _)| n == name).map(|(_, d)| *d);
            if default.is_none_or(|d| !d.eq_ignore_ascii_case(value)) {
                differ.push(format!("{name}={value}"));
            }
        }
        differ.join(", ")
    }

    /// How a person finds the report's host in a fleet: the node, and the task's index when it has one (`n3[5]`).
    pub fn site(&self) -> String {
        let node = if self.node.is_empty() { &self.hostname } else { &self.node };
        match self.task.index() {
            Some(i) => format!("{node}[{i}]"),
            None => node.clone(),
        }
    }
}

/// One device of the host, as a report lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VisibleDevice {
    pub ordinal: i32,
    pub name: String,
    pub uuid: String,
    /// cudaDeviceGetPCIBusId, e.g. `0000:19:00.0` (empty if the call failed).
    pub pci_bus_id: String,
}

/// What the runtime says about the link from one device to another (cudaDeviceCanAccessPeer and
/// cudaDeviceGetP2PAttribute). A value the runtime refused to give is `None`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PeerLink {
    pub from: i32,
    pub to: i32,
    /// cudaDeviceCanAccessPeer(from, to): `from` may map `to`'s memory (cudaDeviceEnablePeerAccess).
    pub can_access_peer: Option<bool>,
    /// cudaDevP2PAttrAccessSupported.
    pub access_supported: Option<bool>,
    /// cudaDevP2PAttrPerformanceRank: lower is faster, 0 the best link of the host.
    pub performance_rank: Option<i32>,
    /// cudaDevP2PAttrNativeAtomicSupported.
    pub native_atomics: Option<bool>,
    /// cudaDevP2PAttrCudaArrayAccessSupported.
    pub cuda_array_access: Option<bool>,
}
