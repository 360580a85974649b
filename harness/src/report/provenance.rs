//! Where a report came from: the GPU, driver, runtime, build and environment of the run.

use super::task::{self, Task};
use crate::gpu::{self, DeviceInfo, PeerLink, VisibleDevice};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Where a report came from: enough to reproduce the run or to compare it with another host's.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Provenance {
    pub tool_version: String,
    /// `git rev-parse HEAD` of the tree the binary was built from (with `-dirty` if it had changes).
    pub commit: String,
    pub hostname: String,
    /// The scheduler's name of the node (see [`super::task::node_from_env`]); the hostname when run by hand. Several
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

impl Provenance {
    pub fn new(device: &DeviceInfo, commit: &str, started_at: String) -> Self {
        let hostname = hostname();
        Provenance {
            tool_version: env!("CARGO_PKG_VERSION").to_owned(),
            commit: commit.to_owned(),
            node: task::node_from_env(&hostname),
            task: Task::from_env(),
            hostname,
            gpu_name: device.name.clone(),
            gpu_uuid: device.uuid.clone(),
            compute_capability: format!("{}.{}", device.compute_capability.0, device.compute_capability.1),
            driver_version: gpu::version_string(device.driver_version),
            driver_release: driver_release(),
            runtime_version: gpu::version_string(device.runtime_version),
            bindings_cudart_version: gpu::version_string(cuda_sys::BUILD_CUDART_VERSION),
            cudart_link: cuda_sys::BUILD_LINK_MODE.to_owned(),
            concurrent_kernels: device.concurrent_kernels,
            async_engine_count: device.async_engine_count,
            multiprocessors: device.multiprocessors,
            device_count: device.device_count,
            stream_priority_range: device.stream_priority_range,
            cuda_environment: gpu::cuda_environment().into_iter().collect(),
            semantic_environment: gpu::semantic_environment().into_iter().collect(),
            started_at,
            driver_version_reported: gpu::reported_driver_version().map(gpu::version_string),
            call_forms: cuda_sys::compat::call_forms().to_owned(),
            kernel_image: KernelImage::default(),
            devices: device.visible.clone(),
            peer_links: device.links.clone(),
        }
    }
}

impl Provenance {
    /// The provenance of a run that found no device to run on (no driver, no GPU visible, a bad `--devices`):
    /// everything but the device, whose fields say `unknown`. The driver's CUDA version is recorded when a driver
    /// answers (an old driver, or a driver with no GPU visible), so a fleet merge can say which hosts need what.
    pub fn without_device(commit: &str, started_at: String) -> Self {
        let unknown = || "unknown".to_owned();
        let device = DeviceInfo {
            ordinal: -1,
            name: unknown(),
            uuid: unknown(),
            compute_capability: (0, 0),
            multiprocessors: 0,
            concurrent_kernels: false,
            async_engine_count: 0,
            can_map_host_memory: false,
            memory_pools: false,
            unified_addressing: false,
            stream_priority_range: (0, 0),
            device_count: 0,
            driver_version: gpu::driver_version().unwrap_or(0),
            runtime_version: gpu::runtime_version().unwrap_or(0),
            visible: Vec::new(),
            links: Vec::new(),
        };
        let mut p = Provenance::new(&device, commit, started_at);
        p.compute_capability = unknown();
        if device.driver_version == 0 {
            p.driver_version = unknown();
        }
        p
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

/// The driver release from /proc/driver/nvidia/version, `unknown` where there is none.
fn driver_release() -> String {
    std::fs::read_to_string("/proc/driver/nvidia/version")
        .ok()
        .and_then(|text| release_in(text.lines().next()?))
        .unwrap_or_else(|| "unknown".into())
}

/// The first word shaped like a release number (`580.159.04`) in an NVRM line. Its wording varies between the
/// proprietary and the open kernel module, e.g. `NVRM version: NVIDIA UNIX Open Kernel Module for x86_64
/// 580.159.04  Release Build ...`, so only the number's shape is relied on.
fn release_in(line: &str) -> Option<String> {
    line.split_whitespace()
        .find(|w| {
            w.split('.').count() >= 2 && w.split('.').all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        })
        .map(str::to_owned)
}

fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_else(|_| "unknown".into())
}

#[cfg(test)]
mod tests {
    #[test]
    fn release_numbers_are_found_in_both_module_wordings() {
        let open =
            "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (dvs-builder@U16)";
        let closed = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.54.03  Tue Jun  6 22:20:39 UTC 2023";
        assert_eq!(super::release_in(open).as_deref(), Some("580.159.04"));
        assert_eq!(super::release_in(closed).as_deref(), Some("535.54.03"));
        assert_eq!(super::release_in("NVRM version: unknown"), None);
    }
}
