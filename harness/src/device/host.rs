//! The host's facts a report records, collected from this process's surroundings: the hostname and the driver
//! release from /proc, the CUDA variables of the environment, and the scheduler's identity of the task (Slurm and
//! Kubernetes variables). The records themselves are plain data in [`crate::record`].

use super::gpu::{self, DeviceInfo};
use crate::record::{KernelImage, Provenance, Task};

/// The node name a report records: set by the Kubernetes manifests (from `spec.nodeName`) and usable by any
/// launcher that knows better than the hostname.
pub const NODE_VAR: &str = "CUDA_CONFORMANCE_NODE";
/// The Kubernetes Job's name (the manifests set it from the pod's `batch.kubernetes.io/job-name` label).
pub const K8S_JOB_VAR: &str = "CUDA_CONFORMANCE_JOB";

// The constructors live with the facts they collect, apart from the plain record in `record/provenance.rs`.
impl Provenance {
    /// Where a run on `device` comes from: this host, this build, this environment and scheduler task.
    pub fn new(device: &DeviceInfo, commit: &str, started_at: String) -> Self {
        let hostname = hostname();
        Provenance {
            tool_version: env!("CARGO_PKG_VERSION").to_owned(),
            commit: commit.to_owned(),
            node: node_from_env(&hostname),
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
            serialising: crate::device::serialising::detect(),
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
            concurrent_managed_access: false,
            pageable_memory_access: false,
            total_memory: 0,
            unified_addressing: false,
            stream_priority_range: (0, 0),
            priorities_read: false,
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
}

impl Task {
    /// The identity in this process's environment.
    pub fn from_env() -> Task {
        Task::from_vars(|name| std::env::var(name).ok())
    }

    /// The identity in an environment given as a lookup (tests pass a map).
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Task {
        let number = |name: &str| var(name).and_then(|v| v.trim().parse::<u32>().ok());
        let slurm = var("SLURM_JOB_ID").is_some();
        let completion_index = number("JOB_COMPLETION_INDEX");
        // Every container Kubernetes starts has KUBERNETES_SERVICE_HOST; an Indexed Job's also has the index.
        let kubernetes = !slurm && (completion_index.is_some() || var("KUBERNETES_SERVICE_HOST").is_some());
        Task {
            scheduler: if slurm {
                "slurm"
            } else if kubernetes {
                "kubernetes"
            } else {
                "none"
            }
            .into(),
            job_id: if slurm { var("SLURM_JOB_ID") } else { var(K8S_JOB_VAR).filter(|_| kubernetes) },
            array_job_id: var("SLURM_ARRAY_JOB_ID"),
            array_task_id: number("SLURM_ARRAY_TASK_ID"),
            completion_index,
            proc_id: number("SLURM_PROCID"),
            scheduler_gpus: var("SLURM_STEP_GPUS").or_else(|| var("SLURM_JOB_GPUS")).filter(|g| !g.is_empty()),
            cuda_visible_devices: var("CUDA_VISIBLE_DEVICES"),
        }
    }
}

/// The node a report was made on: [`NODE_VAR`], else Slurm's `SLURMD_NODENAME` (several simulated nodes on one
/// machine share a hostname, and a cluster's node names need not be hostnames), else `hostname`.
pub fn node_from_env(hostname: &str) -> String {
    node_from_vars(|name| std::env::var(name).ok(), hostname)
}

pub fn node_from_vars(var: impl Fn(&str) -> Option<String>, hostname: &str) -> String {
    [NODE_VAR, "SLURMD_NODENAME"]
        .iter()
        .find_map(|name| var(name).filter(|v| !v.trim().is_empty()))
        .unwrap_or_else(|| hostname.to_owned())
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
    use super::*;
    use std::collections::HashMap;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let map: HashMap<String, String> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        move |name| map.get(name).cloned()
    }

    #[test]
    fn a_slurm_array_task_is_named_by_its_array_job_and_task_id() {
        let vars = env(&[
            ("SLURM_JOB_ID", "1043"),
            ("SLURM_ARRAY_JOB_ID", "1040"),
            ("SLURM_ARRAY_TASK_ID", "3"),
            ("SLURM_PROCID", "0"),
            ("SLURM_JOB_GPUS", "1"),
            ("SLURMD_NODENAME", "n2"),
            ("CUDA_VISIBLE_DEVICES", "1"),
        ]);
        let t = Task::from_vars(&vars);
        assert_eq!(t.scheduler, "slurm");
        assert_eq!((t.job_id.as_deref(), t.run_id()), (Some("1043"), Some("1040")));
        assert_eq!((t.array_task_id, t.index()), (Some(3), Some(3)));
        assert_eq!(t.scheduler_gpus.as_deref(), Some("1"));
        assert_eq!(t.cuda_visible_devices.as_deref(), Some("1"));
        assert_eq!(node_from_vars(&vars, "login7"), "n2");
    }

    #[test]
    fn a_kubernetes_pod_is_named_by_its_completion_index_and_node() {
        let vars = env(&[
            ("JOB_COMPLETION_INDEX", "5"),
            ("KUBERNETES_SERVICE_HOST", "10.0.0.1"),
            (K8S_JOB_VAR, "cuda-conformance"),
            (NODE_VAR, "gpu-node-17"),
        ]);
        let t = Task::from_vars(&vars);
        assert_eq!(t.scheduler, "kubernetes");
        assert_eq!((t.index(), t.run_id()), (Some(5), Some("cuda-conformance")));
        assert_eq!(t.cuda_visible_devices, None);
        assert_eq!(node_from_vars(&vars, "pod-abc"), "gpu-node-17");
    }

    #[test]
    fn by_hand_there_is_no_index_and_an_empty_visible_list_is_kept() {
        let vars = env(&[("CUDA_VISIBLE_DEVICES", ""), (K8S_JOB_VAR, "ignored outside kubernetes")]);
        let t = Task::from_vars(&vars);
        assert_eq!(t.scheduler, "none");
        assert_eq!((t.index(), t.job_id.as_deref()), (None, None));
        assert_eq!(t.cuda_visible_devices.as_deref(), Some(""));
        assert_eq!(node_from_vars(&vars, "host1"), "host1");
    }

    #[test]
    fn release_numbers_are_found_in_both_module_wordings() {
        let open =
            "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  580.159.04  Release Build  (dvs-builder@U16)";
        let closed = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  535.54.03  Tue Jun  6 22:20:39 UTC 2023";
        assert_eq!(release_in(open).as_deref(), Some("580.159.04"));
        assert_eq!(release_in(closed).as_deref(), Some("535.54.03"));
        assert_eq!(release_in("NVRM version: unknown"), None);
    }
}
