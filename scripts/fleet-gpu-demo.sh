#!/usr/bin/env bash
# The Slurm kit on a GPU host without Slurm, as a fleet of one host: runs exactly what the job scripts run, with the
# scheduler's identity faked through the variables Slurm sets (SLURM_ARRAY_JOB_ID, SLURM_ARRAY_TASK_ID,
# SLURM_JOB_ID, SLURMD_NODENAME, CUDA_VISIBLE_DEVICES ...):
#   1. deploy/slurm/healthcheck.sh --dry-run: the smoke tier on every GPU of the host, timed (it must fit a Slurm
#      health check's 60 s; the target is well under 20 s on an H100);
#   2. deploy/slurm/per-gpu.sbatch as array task --task N (default 0), given GPU 0: the full suite;
#   3. deploy/slurm/per-gpu.sbatch as array task --could-not-run-task M (default N+1; `none` for no such task),
#      given a GPU UUID no GPU has: it must write its could-not-run report and exit 2;
#   4. deploy/slurm/merge.sbatch over those tasks.
# Everything goes to OUT_DIR: smoke/ (health-<node>.json and log), reports/<job>/task-<i>-<node>.json, the merge
# reports/fleet-<job>.{md,json,html}, logs/, and summary.txt (timings and exit statuses).
#
# Usage, from the repository root, with a bundle (scripts/bundle.sh or scripts/bundle.sh --fleet):
#   scripts/fleet-gpu-demo.sh BUNDLE_DIR OUT_DIR [--task N] [--could-not-run-task M|none] [--job ID]
# Exit status: 0 when every step ended as designed (the could-not-run task and the merge with 2; the smoke tier
# and the full run with the suite's 0, 1 or 2: on a host without a GPU they are could-not-run too), else 1.
#
# A fleet of two GPU hosts and a could-not-run one, merged afterwards anywhere (the merge needs no GPU):
#   host A (H100):  scripts/fleet-gpu-demo.sh bundle-fleet "$OUT/h100" --task 0 --could-not-run-task 2
#   host B (H200):  scripts/fleet-gpu-demo.sh bundle-fleet "$OUT/h200" --task 1 --could-not-run-task none
#   then:           cuda-conformance fleet h100/reports/4242 h200/reports/4242 --job 4242 --tasks 0-2 \
#                       --markdown fleet.md --json fleet.json --html fleet.html    # exit 2: task 2 could not run
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
usage() {
    sed -n '15,16p' "$0" >&2
    exit 2
}
[ $# -ge 2 ] || usage
bundle=$(realpath "$1") || usage
out=$2
shift 2
task=0
cnr=""
job=4242
while [ $# -gt 0 ]; do
    case "$1" in
        --task) task=${2:?}; shift 2 ;;
        --could-not-run-task) cnr=${2:?}; shift 2 ;;
        --job) job=${2:?}; shift 2 ;;
        *) usage ;;
    esac
done
[ -n "$cnr" ] || cnr=$((task + 1))
[ -x "$bundle/bin/cuda-conformance" ] || { echo "no $bundle/bin/cuda-conformance: build a bundle first" >&2; exit 2; }
mkdir -p "$out" || exit 2
out=$(realpath "$out")
rm -rf "$out/kit" "$out/smoke" "$out/reports" "$out/logs"
mkdir -p "$out/kit" "$out/logs"
# The bundle as the job scripts expect it, with this tree's deploy/ (the kit under test; bundles built before the
# kit have none). The binary finds its cases beside itself, in the bundle.
ln -s "$bundle/bin" "$out/kit/bin"
ln -s "$bundle/cases" "$out/kit/cases"
ln -s "$repo/deploy" "$out/kit/deploy"
node=$(hostname -s)
summary="$out/summary.txt"
: >"$summary"
note() { printf '%s\n' "$*" | tee -a "$summary"; }
ms_since() { echo $((($(date +%s%N) - $1) / 1000000)); }
# What sbatch gives every task of `sbatch --array` (the submitting environment is passed on, plus these).
export CUDA_CONFORMANCE_BUNDLE="$out/kit" CUDA_CONFORMANCE_REPORTS="$out/reports" SLURM_SUBMIT_DIR="$out/kit"
export SLURMD_NODENAME="$node" SLURM_ARRAY_JOB_ID="$job" SLURM_PROCID=0 SLURM_CLUSTER_NAME=fleet-demo
unset CUDA_CONFORMANCE_MOCK CUDA_CONFORMANCE_TIER
cd "$out"
note "fleet-gpu-demo on $node at $(date -u +%Y-%m-%dT%H:%M:%SZ); bundle $bundle$(sed -n "s/^commit: */, commit /p" "$bundle/MANIFEST" 2>/dev/null)"
command -v nvidia-smi >/dev/null && nvidia-smi -L 2>/dev/null | sed 's/^/  /' | tee -a "$summary"

# 1. The health check (no Slurm here: --dry-run prints the scontrol drain it would run).
t0=$(date +%s%N)
smoke_status=0
CUDA_CONFORMANCE_HEALTH_DIR="$out/smoke" SLURM_JOB_ID="$job" \
    "$repo/deploy/slurm/healthcheck.sh" --dry-run >"$out/logs/healthcheck.txt" 2>&1 || smoke_status=$?
smoke_ms=$(ms_since "$t0")
smoke_report="$out/smoke/health-$node.json"
smoke_own=$(sed -n 's/^  "wall_ms": \([0-9]*\),*$/\1/p' "$smoke_report" 2>/dev/null | head -n 1)
smoke_cases=$(grep -c '"location":' "$smoke_report" 2>/dev/null)
note "smoke tier (healthcheck.sh): exit $smoke_status, ${smoke_ms} ms wall for the script (process start, GPU probe, workers, ${smoke_cases:-0} cases), ${smoke_own:-?} ms in the report; $(tail -n 1 "$out/logs/healthcheck.txt")"

# 2. One array task given GPU 0: the full suite, as per-gpu.sbatch runs it.
t0=$(date +%s%N)
full_status=0
SLURM_JOB_ID=$((job + 1 + task)) SLURM_ARRAY_TASK_ID="$task" SLURM_JOB_GPUS=0 CUDA_VISIBLE_DEVICES=0 \
    bash "$repo/deploy/slurm/per-gpu.sbatch" >"$out/logs/task-$task.txt" 2>&1 || full_status=$?
note "task $task (full tier, CUDA_VISIBLE_DEVICES=0): exit $full_status after $(ms_since "$t0") ms; $(grep -m1 '^report' "$out/logs/task-$task.txt")"

# 3. One array task given a GPU that is not there: it cannot run, and says so in its report.
cnr_status=""
tasks="$task,"
if [ "$cnr" != none ]; then
    cnr_status=0
    SLURM_JOB_ID=$((job + 1 + cnr)) SLURM_ARRAY_TASK_ID="$cnr" SLURM_JOB_GPUS=7 \
        CUDA_VISIBLE_DEVICES=GPU-00000000-0000-0000-0000-000000000000 \
        bash "$repo/deploy/slurm/per-gpu.sbatch" >"$out/logs/task-$cnr.txt" 2>&1 || cnr_status=$?
    note "task $cnr (a GPU UUID no GPU has): exit $cnr_status; $(grep -m1 'cannot run' "$out/logs/task-$cnr.txt")"
    tasks="$task,$cnr"
fi

# 4. The merge, as merge.sbatch runs it after the array.
merge_status=0
SLURM_JOB_ID=$((job + 100)) bash "$repo/deploy/slurm/merge.sbatch" "$job" --tasks "$tasks" \
    >"$out/logs/merge.txt" 2>&1 || merge_status=$?
note "merge of tasks $tasks: exit $merge_status; $(tail -n 1 "$out/logs/merge.txt")"

ok=1
case "$smoke_status $full_status" in [012]\ [012]) ;; *) ok=0 ;; esac
if [ -n "$cnr_status" ]; then
    [ "$cnr_status" = 2 ] && [ "$merge_status" = 2 ] || ok=0
else
    case "$merge_status" in [012]) ;; *) ok=0 ;; esac
fi
if [ "$ok" = 1 ]; then
    note "fleet-gpu-demo: every step ended as designed; results in $out"
    exit 0
fi
note "fleet-gpu-demo: a step did not end as designed (see $out/logs)"
exit 1
