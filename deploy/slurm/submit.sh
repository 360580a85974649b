#!/usr/bin/env bash
# Submits a fleet run and its merge, chained with afterany, and prints the job ids and where the result will be:
#
#   deploy/slurm/submit.sh per-gpu 32 [SBATCH OPTION...]            # job array 0-31, one GPU each
#   deploy/slurm/submit.sh per-node 'gpu[01-04]' 8 [SBATCH OPTION...] # one task per node, its 8 GPUs, exclusive
#
# The sbatch options (e.g. --partition=gpu, --chdir=DIR) go to both jobs. With --wait SECONDS first, it waits
# (at most that long) for the merge and exits with the merge's status: 0 all as expected, 1 deviations, 2 missing
# or could-not-run tasks (124 when the wait timed out). Environment: CUDA_CONFORMANCE_BUNDLE (required: the bundle
# on a shared filesystem), CUDA_CONFORMANCE_REPORTS, CUDA_CONFORMANCE_TIER (see task.sh).
set -euo pipefail
usage() {
    sed -n '2,12p' "$0" >&2
    exit 2
}
wait_s=""
if [ "${1:-}" = --wait ]; then
    wait_s=${2:?--wait needs SECONDS}
    shift 2
fi
shape=${1:-}
[ -n "$shape" ] || usage
shift
: "${CUDA_CONFORMANCE_BUNDLE:?set CUDA_CONFORMANCE_BUNDLE to the bundle folder every node sees}"
export CUDA_CONFORMANCE_BUNDLE
kit="$CUDA_CONFORMANCE_BUNDLE/deploy/slurm"
reports=${CUDA_CONFORMANCE_REPORTS:-$CUDA_CONFORMANCE_BUNDLE/reports}
case "$shape" in
    per-gpu)
        tasks=${1:?per-gpu needs the number of tasks (GPUs)}
        shift
        run_cmd=(sbatch --parsable --array="0-$((tasks - 1))" "$@" "$kit/per-gpu.sbatch")
        expect=(--tasks "$tasks")
        ;;
    per-node)
        nodes=${1:?per-node needs the node list}
        gpus=${2:?per-node needs the GPUs per node}
        shift 2
        count=$(scontrol show hostnames "$nodes" | wc -l)
        run_cmd=(sbatch --parsable --nodelist="$nodes" --nodes="$count" --gres="gpu:$gpus" "$@" "$kit/per-node.sbatch")
        expect=(--nodes "$nodes")
        ;;
    *) usage ;;
esac
echo "+ ${run_cmd[*]}" >&2
run=$("${run_cmd[@]}")
run=${run%%;*}
# Submitted at once: a dependency on a job whose record was already purged (a small MinJobAge) would count as
# satisfied too early.
merge_cmd=(sbatch --parsable --dependency="afterany:$run" --kill-on-invalid-dep=yes "$@" "$kit/merge.sbatch" "$run"
    "${expect[@]}")
if [ -n "$wait_s" ]; then
    merge_cmd=(timeout --kill-after=5 "$wait_s" sbatch --wait "${merge_cmd[@]:1}")
fi
echo "+ ${merge_cmd[*]}" >&2
echo "run job $run; reports in $reports/$run/; merged result: $reports/fleet-$run.{md,json,html}"
if [ -z "$wait_s" ]; then
    merge=$("${merge_cmd[@]}")
    echo "merge job ${merge%%;*} (after the run, whatever its tasks' exit status)"
    exit 0
fi
status=0
"${merge_cmd[@]}" >/dev/null || status=$?
echo "merge finished with exit status $status"
exit "$status"
