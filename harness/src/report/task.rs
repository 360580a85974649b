//! Which task of a fleet run a report belongs to: the scheduler's identity of the task (Slurm job, array job and
//! task ids; a Kubernetes Job's completion index), the node it ran on and the GPUs it was given. A fleet merge
//! ([`super::fleet`]) keys reports on these, so that it can tell which expected tasks reported, which did not, and
//! which reported twice. Read from the environment the scheduler sets; nothing here touches a GPU.

use serde::{Deserialize, Serialize};

/// The node name a report records: set by the Kubernetes manifests (from `spec.nodeName`) and usable by any
/// launcher that knows better than the hostname.
pub const NODE_VAR: &str = "CUDA_CONFORMANCE_NODE";
/// The Kubernetes Job's name (the manifests set it from the pod's `batch.kubernetes.io/job-name` label).
pub const K8S_JOB_VAR: &str = "CUDA_CONFORMANCE_JOB";

/// The scheduler's identity of the task that made a report. Every field is what the scheduler set, or absent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Task {
    /// `slurm`, `kubernetes`, or `none` (run by hand or by another launcher).
    pub scheduler: String,
    /// Slurm: `SLURM_JOB_ID` (each array task has its own); Kubernetes: the Job's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub job_id: Option<String>,
    /// Slurm: `SLURM_ARRAY_JOB_ID`, the id shared by all tasks of a job array.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub array_job_id: Option<String>,
    /// Slurm: `SLURM_ARRAY_TASK_ID`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub array_task_id: Option<u32>,
    /// Kubernetes: `JOB_COMPLETION_INDEX` of an Indexed Job's pod.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completion_index: Option<u32>,
    /// Slurm: `SLURM_PROCID`, the task's rank within a job step (`srun --ntasks-per-node=1` over several nodes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proc_id: Option<u32>,
    /// Slurm: the node-local GPU indices allotted to the step or job (`SLURM_STEP_GPUS`, else `SLURM_JOB_GPUS`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scheduler_gpus: Option<String>,
    /// `CUDA_VISIBLE_DEVICES` as the task saw it: `None` when unset, `Some("")` when set empty (no GPU visible).
    #[serde(default)]
    pub cuda_visible_devices: Option<String>,
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

    /// The task's index within its fleet run: the array task id, the completion index, else the rank in a step.
    pub fn index(&self) -> Option<u32> {
        self.array_task_id.or(self.completion_index).or(self.proc_id)
    }

    /// The id of the whole fleet run: the array job id, else the job id.
    pub fn run_id(&self) -> Option<&str> {
        self.array_job_id.as_deref().or(self.job_id.as_deref())
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
}
