#!/usr/bin/env bash
# The Slurm path, for real, on one machine without a GPU (CI's): a single-node Slurm on localhost simulating a
# fleet of 4 nodes × 2 GPUs (4 slurmd's, fake GPU device files), then the kit's own job scripts with the real
# binary:
#   1. deploy/slurm/per-gpu.sbatch as a 9-task array (one GPU each), its task 8 cancelled before it ever starts
#      (the injected missing task), and deploy/slurm/merge.sbatch chained with afterany expecting tasks 0-8. With
#      no GPU every task that runs writes its could-not-run report, so the merge must list tasks 0-7 as
#      could-not-run — each with its Slurm identity, node and CUDA_VISIBLE_DEVICES — task 8 as missing, and exit 2;
#   2. deploy/slurm/per-node.sbatch over the 4 nodes (--exclusive, srun, --devices all) and its merge by node list,
#      both submitted by deploy/slurm/submit.sh;
#   3. deploy/slurm/healthcheck.sh on node n1: it must fail and drain n1 with its reason.
# Slurm comes from Debian's packages (installed here when missing; see shared/FLEET.md for what was measured).
# Every wait is bounded; the daemons are stopped by PID on exit. Usage: scripts/ci-slurm-fleet.sh [BINARY]
# (default target/debug/cuda-conformance). CI_SLURM_KEEP=1 keeps the work folder.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cd "$repo"
bin=$(realpath "${1:-target/debug/cuda-conformance}")
started=$(date +%s%N)
say() { printf 'ci-slurm-fleet: %s\n' "$*"; }
die() {
    printf 'ci-slurm-fleet: FAILED: %s\n' "$*" >&2
    exit 1
}
[ -x "$bin" ] || die "no binary $bin (build it first: cargo build)"
export PATH="$PATH:/usr/sbin:/sbin"

# --- Slurm and munge from Debian's packages (the `slurm-wlm` metapackage would pull 43 packages; these 4 do).
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v sbatch >/dev/null ||
    ! command -v munged >/dev/null || ! command -v mungekey >/dev/null; then
    sudo_=""
    [ "$(id -u)" = 0 ] || sudo_="sudo"
    say "installing slurmctld slurmd slurm-client munge"
    timeout 300 $sudo_ apt-get update -qq
    DEBIAN_FRONTEND=noninteractive timeout 300 $sudo_ apt-get install -y -qq --no-install-recommends \
        slurmctld slurmd slurm-client munge >/dev/null
fi
[ "$(id -u)" = 0 ] || die "the daemons run as root here (slurmd launches jobs); run as root"

w=$(mktemp -d "${TMPDIR:-/tmp}/ci-slurm.XXXXXX")
chmod 755 "$w"
pids=()
stop_daemons() {
    # Last started first: the slurmd's, slurmctld, munged. TERM, up to 5 s, then KILL (a slurmd with a step launch
    # in flight was once seen ignoring TERM for over a minute).
    local i pid t
    for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
        pid=${pids[i]}
        kill -TERM "$pid" 2>/dev/null || continue
        for ((t = 0; t < 50; t++)); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
    done
    pids=()
}
finish() {
    local status=$?
    stop_daemons
    if [ "$status" != 0 ]; then
        for log in "$w"/slurmctld.log "$w"/slurmd-*.log "$w"/out/*.out "$w"/munge/munged.log; do
            [ -f "$log" ] && { echo "--- $log (last 25 lines)"; tail -n 25 "$log"; }
        done
    fi
    if [ -n "${CI_SLURM_KEEP:-}" ]; then say "kept $w"; else rm -rf "$w"; fi
    return "$status"
}
trap finish EXIT

# --- munge: its own key and socket (the socket's folder must be 0711: munged checks that others can reach it).
mkdir -p "$w/munge/sock" "$w/state" "$w/spool" "$w/dev" "$w/out" "$w/reports" "$w/health"
chmod 711 "$w/munge/sock"
mungekey --create --keyfile="$w/munge/munge.key" >/dev/null
chmod 600 "$w/munge/munge.key"
munged -F --force --socket="$w/munge/sock/munge.socket" --key-file="$w/munge/munge.key" \
    --log-file="$w/munge/munged.log" --pid-file="$w/munge/munged.pid" --seed-file="$w/munge/munged.seed" \
    >"$w/munge/munged.stdout" 2>&1 &
pids+=($!)
for ((t = 0; t < 100; t++)); do
    [ -S "$w/munge/sock/munge.socket" ] && break
    sleep 0.05
done
[ -S "$w/munge/sock/munge.socket" ] || die "munged did not open its socket"

# --- A fleet on localhost: nodes n1..n4, one slurmd each on its own port, each with 2 fake GPUs (device files
# Slurm accepts: links to /dev/null), the machine's real CPU topology (declaring more makes a node INVAL).
host=$(hostname -s)
topology=$(slurmd -C | head -n 1 | tr ' ' '\n' | grep -E '^(CPUs|Boards|SocketsPerBoard|CoresPerSocket|ThreadsPerCore)=' |
    tr '\n' ' ')
ln -s /dev/null "$w/dev/nvidia0"
ln -s /dev/null "$w/dev/nvidia1"
port=${CI_SLURM_PORT:-17817}
export SLURM_CONF="$w/slurm.conf"
cat >"$SLURM_CONF" <<CONF
ClusterName=ci
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$w/munge/sock/munge.socket
StateSaveLocation=$w/state
SlurmdSpoolDir=$w/spool/%n
SlurmctldPidFile=$w/slurmctld.pid
SlurmdPidFile=$w/slurmd-%n.pid
SlurmctldLogFile=$w/slurmctld.log
SlurmdLogFile=$w/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SchedulerParameters=batch_sched_delay=0
MinJobAge=5
CommunicationParameters=NoInAddrAny,NoCtldInAddrAny
MailProg=/bin/true
ReturnToService=2
GresTypes=gpu
NodeName=n[1-4] NodeHostname=$host NodeAddr=127.0.0.1 Port=[$((port + 1))-$((port + 4))] $topology RealMemory=1000 Gres=gpu:2 State=UNKNOWN
PartitionName=ci Nodes=n[1-4] Default=YES MaxTime=10 State=UP
CONF
cat >"$w/gres.conf" <<CONF
AutoDetect=off
NodeName=n[1-4] Name=gpu File=$w/dev/nvidia[0-1]
CONF
slurmctld -D -i -f "$SLURM_CONF" >"$w/slurmctld.stdout" 2>&1 &
pids+=($!)
for n in 1 2 3 4; do
    slurmd -D -N "n$n" -f "$SLURM_CONF" >"$w/slurmd-n$n.stdout" 2>&1 &
    pids+=($!)
done
idle=0
for ((t = 0; t < 200; t++)); do
    idle=$(timeout 5 sinfo -h -N -o '%N %T' 2>/dev/null | grep -c ' idle$' || true)
    [ "$idle" = 4 ] && break
    sleep 0.1
done
[ "$idle" = 4 ] || die "the 4 nodes did not come up idle: $(timeout 5 sinfo -N 2>&1 || true)"
say "4 nodes × 2 GPUs idle after $(((($(date +%s%N) - started) / 1000000))) ms"

# --- The kit, as a user runs it: the bundle is this tree (deploy/slurm) with the binary just built.
export CUDA_CONFORMANCE_BUNDLE="$repo" CUDA_CONFORMANCE_BIN="$bin" CUDA_CONFORMANCE_REPORTS="$w/reports"
opts=(--chdir="$w/out" --time=2)

# 1. One task per GPU, by hand as deploy/README.md shows: 9 tasks held, task 8 cancelled before it starts (never ran), then released; the merge
#    (afterany) expects tasks 0-8.
array=$(sbatch --parsable --hold --array=0-8 "${opts[@]}" deploy/slurm/per-gpu.sbatch)
array=${array%%;*}
scancel "${array}_8"
scontrol release "$array"
merge_status=0
timeout --kill-after=5 60 sbatch --wait --parsable --dependency="afterany:$array" --kill-on-invalid-dep=yes \
    "${opts[@]}" deploy/slurm/merge.sbatch "$array" --tasks 0-8 >/dev/null || merge_status=$?
say "per-GPU array $array: merge exit status $merge_status after $(((($(date +%s%N) - started) / 1000000))) ms"
[ "$merge_status" = 2 ] || die "the merge exited $merge_status, expected 2 (could-not-run and missing tasks)"
python3 - "$w/reports/fleet-$array.json" "$array" <<'PY' || die "the merged result of the array is not as expected"
import json, sys
fleet, array = json.load(open(sys.argv[1])), sys.argv[2]
s = fleet["summary"]
assert (s["expected"], s["could_not_run"], s["missing"], s["duplicates"]) == (9, 8, 1, 0), s
assert fleet["exit_status"] == 2, fleet["exit_status"]
by_slot = {slot["slot"]: slot for slot in fleet["slots"]}
assert by_slot["task 8"]["status"] == "missing" and not by_slot["task 8"]["entries"], by_slot["task 8"]
entries = [e for i in range(8) for e in by_slot[f"task {i}"]["entries"]]
assert len(entries) == 8 and all(by_slot[f"task {i}"]["status"] == "could-not-run" for i in range(8))
for e in entries:
    t = e["task"]
    assert t["scheduler"] == "slurm" and t["array_job_id"] == array and t["job_id"], t
    assert e["reason"].startswith("cannot run the suite"), e["reason"]
assert sorted(e["task"]["array_task_id"] for e in entries) == list(range(8))
# Spread over the fleet, each task given one fake GPU (which one depends on what ran beside it) and told so.
assert set(e["node"] for e in entries) == {"n1", "n2", "n3", "n4"}, [e["node"] for e in entries]
for e in entries:
    t = e["task"]
    assert t["cuda_visible_devices"] in ("0", "1") and t["scheduler_gpus"] == t["cuda_visible_devices"], t
print("ci-slurm-fleet: array: tasks 0-7 could not run (each with its node, GPU and Slurm ids), task 8 missing")
PY
grep -q '| task 8 | \*\*missing\*\* |' "$w/reports/fleet-$array.md" || die "the Markdown result lacks the missing task"

# 2. One task per node: exclusive, all GPUs of each node, one srun task per node; merged by node list. Submitted
#    with deploy/slurm/submit.sh, which chains the merge and (with --wait) exits with its status.
merge_status=0
timeout --kill-after=10 90 deploy/slurm/submit.sh --wait 60 per-node 'n[1-4]' 2 "${opts[@]}" >"$w/submit.txt" ||
    merge_status=$?
node_job=$(sed -n 's/^run job \([0-9]*\);.*/\1/p' "$w/submit.txt")
[ -n "$node_job" ] || die "submit.sh did not say which job it submitted: $(cat "$w/submit.txt")"
say "per-node job $node_job: merge exit status $merge_status after $(((($(date +%s%N) - started) / 1000000))) ms"
[ "$merge_status" = 2 ] || die "the per-node merge exited $merge_status, expected 2"
python3 - "$w/reports/fleet-$node_job.json" <<'PY' || die "the merged result of the per-node job is not as expected"
import json, sys
fleet = json.load(open(sys.argv[1]))
s = fleet["summary"]
assert (s["expected"], s["could_not_run"], s["missing"]) == (4, 4, 0), s
entries = [e for slot in fleet["slots"] for e in slot["entries"]]
assert sorted(e["node"] for e in entries) == ["n1", "n2", "n3", "n4"]
assert sorted(e["task"]["proc_id"] for e in entries) == [0, 1, 2, 3]
assert all(e["task"]["cuda_visible_devices"] == "0,1" for e in entries), [e["task"] for e in entries]
print("ci-slurm-fleet: per node: n1-n4 could not run, each with both GPUs visible")
PY

# 3. The health check on n1: the smoke tier cannot run here, so it must drain n1 with its reason.
health_status=0
SLURMD_NODENAME=n1 CUDA_CONFORMANCE_HEALTH_DIR="$w/health" CUDA_CONFORMANCE_HEALTH_TIMEOUT=30 \
    timeout 60 deploy/slurm/healthcheck.sh >"$w/health/out.txt" 2>&1 || health_status=$?
[ "$health_status" = 2 ] || die "healthcheck.sh exited $health_status, expected 2: $(cat "$w/health/out.txt")"
state=$(timeout 5 sinfo -h -n n1 -o '%T %E')
case "$state" in
    drain*"cuda-conformance smoke: could not run"*) ;;
    *) die "n1 is not drained by the health check: $state" ;;
esac
grep -q '"tier": *"smoke"' "$w/health/health-n1.json" || die "the health check's report is not a smoke-tier report"
say "health check: n1 $state"

# 4. Least privilege (deploy/README.md): every report, merged result and folder the scripts made is closed to other
#    users (umask 027 in task.sh, merge.sbatch and healthcheck.sh: 0640 files, 0750 folders).
#    (health/out.txt is this script's own redirect of the check's output, not the kit's.)
open_to_others=$(find "$w/reports" "$w/health" -mindepth 1 -not -path "$w/health/out.txt" -perm /o=rwx -printf '%m %p\n')
[ -z "$open_to_others" ] || die "reports readable by other users: $open_to_others"
made=$(find "$w/reports" "$w/health" -mindepth 1 | wc -l)
[ "$made" -gt 0 ] || die "no report was written"
say "reports: $made files and folders, none readable by other users ($(find "$w/reports" -name 'task-*.json' -printf '%m' -quit))"

stop_daemons
say "passed in $(((($(date +%s%N) - started) / 1000000))) ms"
