#!/usr/bin/env bash
# Node health check with the suite's smoke tier (a few seconds): every GPU of this node, inside a time limit that
# fits Slurm's 60 s limit on a HealthCheckProgram. On failure the node is drained with the reason; when it passes
# again, a drain this script set (reason starting "cuda-conformance") is lifted.
#
#   slurm.conf (as a periodic health check; slurmd runs it as root on every node):
#     HealthCheckProgram=/shared/cuda-conformance/bundle/deploy/slurm/healthcheck.sh
#     HealthCheckInterval=3600
#     HealthCheckNodeState=IDLE          # only when the node is idle: the GPUs are not shared with a job
#   or as a prolog, on the GPUs of the job that follows (a failing prolog drains the node and requeues the job;
#   Slurm does the draining):
#     Prolog=/shared/cuda-conformance/bundle/deploy/slurm/healthcheck.sh --prolog
#
# Options: --prolog (no scontrol: the exit status is the verdict), --dry-run (print the scontrol command instead of
# running it). Exit status: 0 healthy; else the suite's (1 a case failed, 2 could not run) or 124 (timed out).
# Environment: CUDA_CONFORMANCE_BUNDLE (default: the bundle this script is in), CUDA_CONFORMANCE_BIN,
# CUDA_CONFORMANCE_HEALTH_DIR (its report, health-<node>.json, and log; default /var/lib/cuda-conformance),
# CUDA_CONFORMANCE_HEALTH_TIMEOUT (seconds, default 50).
set -uo pipefail
# Reports, logs and folders readable by the job's user and group only (0640 files, 0750 folders): a report names
# the hosts, GPUs and driver of the fleet, and the reports folder may be on a filesystem other users see.
umask 027
mode=health-check
dry_run=""
for arg in "$@"; do
    case "$arg" in
        --prolog) mode=prolog ;;
        --dry-run) dry_run=1 ;;
        *) echo "healthcheck.sh: unknown option $arg (--prolog, --dry-run)" >&2; exit 2 ;;
    esac
done
here=$(cd "$(dirname "$0")" && pwd)
bundle=${CUDA_CONFORMANCE_BUNDLE:-$(cd "$here/../.." && pwd)}
bin=${CUDA_CONFORMANCE_BIN:-$bundle/bin/cuda-conformance}
dir=${CUDA_CONFORMANCE_HEALTH_DIR:-/var/lib/cuda-conformance}
limit=${CUDA_CONFORMANCE_HEALTH_TIMEOUT:-50}
node=${SLURMD_NODENAME:-$(hostname -s)}
report=$dir/health-$node.json
log=$dir/health-$node.log

scontrol_() {
    if [ -n "$dry_run" ]; then
        printf 'healthcheck.sh: would run: scontrol'
        printf ' %q' "$@"
        printf '\n'
    else
        scontrol "$@"
    fi
}

# A prolog checks the GPUs of the job it precedes (other jobs may hold the node's other GPUs); a health check checks
# every GPU of the node.
if [ "$mode" = prolog ] && [ -n "${SLURM_JOB_GPUS:-}" ]; then
    export CUDA_VISIBLE_DEVICES="$SLURM_JOB_GPUS"
fi
status=0
if ! mkdir -p "$dir"; then
    reason="cannot create $dir"
    status=2
elif [ ! -x "$bin" ]; then
    reason="no executable $bin"
    status=2
else
    # The smoke tier on every GPU visible; the report is rewritten atomically each time, so a reader never sees
    # half of one.
    timeout --kill-after=5 "$limit" "$bin" run --tier smoke --devices all --report "$report" >"$log" 2>&1 || status=$?
    case "$status" in
        0) reason="" ;;
        1) reason="a case failed (report $report)" ;;
        124 | 137) status=124; reason="the smoke tier did not finish in ${limit} s (report $report)" ;;
        *)
            # The report says why it could not run, e.g. "no CUDA device: cudaErrorInsufficientDriver". Reports are
            # compact JSON (one line) or pretty (one key a line); a node may have neither python nor jq, so sed
            # takes the string value, escapes included, wherever the key stands.
            why=$(sed -n 's/.*"could_not_run": *"\(\([^"\\]\|\\.\)*\)".*/\1/p' "$report" 2>/dev/null | head -n 1)
            reason="could not run (exit $status): ${why:-see $log}"
            ;;
    esac
fi

if [ "$status" = 0 ]; then
    echo "healthcheck.sh: $node healthy (smoke tier passed; report $report)"
    # Lift a drain this script set earlier; leave any other drain alone.
    if [ "$mode" = health-check ] && command -v scontrol >/dev/null; then
        current=$(scontrol show node "$node" 2>/dev/null | sed -n 's/^ *Reason=\(cuda-conformance[^[]*\).*/\1/p')
        [ -n "$current" ] && scontrol_ update NodeName="$node" State=RESUME
    fi
    exit 0
fi
reason="cuda-conformance smoke: $reason"
echo "healthcheck.sh: $node unhealthy: $reason" >&2
if [ "$mode" = health-check ]; then
    scontrol_ update NodeName="$node" State=DRAIN Reason="$reason"
fi
exit "$status"
