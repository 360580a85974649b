#!/usr/bin/env bash
# One task of a fleet run, as every job script here runs it: the suite on the GPU(s) the scheduler gave this task,
# its report written (atomically) to $CUDA_CONFORMANCE_REPORTS/<run>/task-<index>-<node>.json, where <run> is the
# array job id (else the job id) and <index> the array task id (else the task's rank in the step). The report
# carries the task's identity (job, array job and task ids, node, CUDA_VISIBLE_DEVICES, GPU UUID); a task that
# cannot run (no driver, no GPU, invalid case files) still writes one, saying why.
#
# Exit status, the suite's: 0 ran and nothing failed, 1 a case failed, 2 could not run.
#
# Environment (sbatch passes the submitter's environment on):
#   CUDA_CONFORMANCE_BUNDLE   the bundle folder (scripts/bundle.sh), on a filesystem every node sees
#                             (default: the folder sbatch was called from, $SLURM_SUBMIT_DIR)
#   CUDA_CONFORMANCE_BIN      the binary (default: $CUDA_CONFORMANCE_BUNDLE/bin/cuda-conformance)
#   CUDA_CONFORMANCE_REPORTS  where reports go, shared by all nodes (default: $CUDA_CONFORMANCE_BUNDLE/reports)
#   CUDA_CONFORMANCE_TIER     full (default) or smoke
# Arguments go to `cuda-conformance run` (e.g. `--devices all` for every GPU the task was given).
set -uo pipefail
# Reports, logs and folders readable by the job's user and group only (0640 files, 0750 folders): a report names
# the hosts, GPUs and driver of the fleet, and the reports folder may be on a filesystem other users see.
umask 027
bundle=${CUDA_CONFORMANCE_BUNDLE:-${SLURM_SUBMIT_DIR:-$PWD}}
bin=${CUDA_CONFORMANCE_BIN:-$bundle/bin/cuda-conformance}
reports=${CUDA_CONFORMANCE_REPORTS:-$bundle/reports}
tier=${CUDA_CONFORMANCE_TIER:-full}
run=${SLURM_ARRAY_JOB_ID:-${SLURM_JOB_ID:-${CUDA_CONFORMANCE_JOB:-local}}}
index=${SLURM_ARRAY_TASK_ID:-${SLURM_PROCID:-${JOB_COMPLETION_INDEX:-0}}}
node=${SLURMD_NODENAME:-${CUDA_CONFORMANCE_NODE:-$(hostname -s)}}
dir=$reports/$run
report=$dir/task-$index-$node.json
printf 'cuda-conformance: task %s[%s] on %s, CUDA_VISIBLE_DEVICES=%s, tier %s -> %s\n' \
    "$run" "$index" "$node" "${CUDA_VISIBLE_DEVICES-(unset)}" "$tier" "$report" >&2
if ! mkdir -p "$dir"; then
    printf 'cuda-conformance: cannot create %s: no report from this task\n' "$dir" >&2
    exit 2
fi
if [ ! -x "$bin" ]; then
    # Without the binary no report can be written: the merge lists this task as missing, and this line in the
    # task's output file says why.
    printf 'cuda-conformance: no executable %s (set CUDA_CONFORMANCE_BUNDLE or CUDA_CONFORMANCE_BIN)\n' "$bin" >&2
    exit 2
fi
exec "$bin" run --tier "$tier" --report "$report" "$@"
