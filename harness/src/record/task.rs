//! Which task of a fleet run a report belongs to: the scheduler's identity of the task (Slurm job, array job and
//! task ids; a Kubernetes Job's completion index) and the GPUs it was given. A fleet merge
//! ([`crate::report::fleet`]) keys reports on these, so that it can tell which expected tasks reported, which did
//! not, and which reported twice. Read from the environment by [`crate::device::host`].

use serde::{Deserialize, Serialize};

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
    /// The task's index within its fleet run: the array task id, the completion index, else the rank in a step.
    pub fn index(&self) -> Option<u32> {
        self.array_task_id.or(self.completion_index).or(self.proc_id)
    }

    /// The id of the whole fleet run: the array job id, else the job id.
    pub fn run_id(&self) -> Option<&str> {
        self.array_job_id.as_deref().or(self.job_id.as_deref())
    }
}
