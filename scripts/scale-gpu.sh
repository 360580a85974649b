#!/usr/bin/env bash
# Issue 32's measurement: how the full suite scales with the GPUs of one host, in one device call (at most 9 minutes).
# Run from the repository root with the bundle in $BUNDLE (default bundle/; `scripts/bundle.sh`, carried to the
# device): `OUT=$OUT bash scripts/scale-gpu.sh`.
#   1. `run --devices 0`, `--devices 0,1` and `--devices all` (only those the host has: one GPU runs `--devices 0`
#      alone), three rounds interleaved (0, 0-1, all, 0, 0-1, all, ...), each the full suite with its figures and a
#      report, against the committed baseline of this GPU and driver when there is one;
#   2. `compare` of every report (run-<devices>-r<round>) with the first `--devices 0` one (run-0-r1): the verdicts must be the same (the report lists
#      any regression, fix or variant change);
#   3. one `bench --devices all --modes workers,workers-all-devices`, which prints where each GPU lane's time went
#      and which lane was the critical path (skipped when the runs left too little time).
# Prints the walls, their means and the speed-ups over `--devices 0`, the compares' totals and the bench's lanes;
# everything (reports, logs, summary) goes into $OUT/scale.tar.gz. Each run has a wall-clock limit of its own, and
# the rounds stop early rather than overrun the call.
set -u
root=$PWD
bundle=${BUNDLE:-$root/bundle}
C=$bundle/bin/cuda-conformance
W=${TMPDIR:-/tmp}/scale-work
rm -rf "$W"
R=$W/out
mkdir -p "$W" "$R" "${OUT:=$root/scale-out}"
cd "$bundle" || exit 2
begun=$(date +%s)
elapsed() { echo $(($(date +%s) - begun)); }
stamp() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
log() { echo "$*" | tee -a "$R/walls.txt"; }

{ nvidia-smi --query-gpu=index,name,uuid,driver_version --format=csv,noheader; nvidia-smi topo -m; sed -n 2p MANIFEST; nproc; } >"$R/gpus.txt" 2>&1
cat "$R/gpus.txt"
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 | tr 'A-Z ' 'a-z-')
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader -i 0)
baseline=${BASELINE:-$root/baselines/${gpu}_driver-$driver.txt}
with_baseline=()
if [ -f "$baseline" ]; then with_baseline=(--baseline "$baseline"); fi
log "GPUs: $gpus; baseline: ${with_baseline[*]:-none}"
sets=(0)
[ "$gpus" -ge 2 ] && sets+=(0,1)
[ "$gpus" -ge 3 ] && sets+=(all)

# A run's limit: --devices 0 took 47.5 s on the 4 x H100 host at d228590 (560 cases) and 99 s on one H100 at 1121 cases; more GPUs less.
limit() { case $1 in 0) echo 160 ;; *) echo 130 ;; esac; }
for round in 1 2 3; do
    for d in "${sets[@]}"; do
        if [ "$(elapsed)" -gt $((500 - $(limit "$d"))) ]; then
            log "round $round --devices $d: skipped (the call's time is nearly spent: $(elapsed) s)"
            continue
        fi
        name=run-$(echo "$d" | tr ',' '_')-r$round
        t=$(date +%s.%N)
        timeout --kill-after=10 "$(limit "$d")" "$C" run --devices "$d" "${with_baseline[@]}" \
            --report "$R/$name.json.gz" >"$R/$name.log" 2>&1
        log "$name rc=$? wall=$(stamp "$t") s"
    done
done

first=$R/run-0-r1.json.gz
for report in "$R"/run-*.json.gz; do
    [ "$report" = "$first" ] && continue
    "$C" compare "$first" "$report" >"$R/compare-$(basename "$report" .json.gz).md" 2>&1
    log "compare run-0-r1 $(basename "$report" .json.gz) rc=$?"
done

if [ "$(elapsed)" -lt 400 ]; then
    modes=workers
    [ "$gpus" -ge 2 ] && modes=workers,workers-all-devices
    t=$(date +%s.%N)
    timeout --kill-after=10 $((520 - $(elapsed))) "$C" bench --devices all --modes "$modes" --json "$R/bench.json" \
        >"$R/bench.log" 2>&1
    log "bench --devices all --modes $modes rc=$? wall=$(stamp "$t") s"
else
    log "bench skipped (the call's time is nearly spent: $(elapsed) s)"
fi

{
    echo "== walls (s)"
    cat "$R/walls.txt"
    echo "== mean wall per --devices, and the speed-up over --devices 0"
    awk '/^run-.* wall=/ {
            split($1, p, "-"); d = p[2]; gsub("_", ",", d);
            sub("wall=", "", $3); sum[d] += $3; n[d]++; all[d] = all[d] " " $3
         }
         END {
            base = ("0" in n) ? sum["0"] / n["0"] : 0;
            for (d in n) printf "--devices %-5s mean %.1f s over %d (%s ) speed-up %.2fx\n", d, sum[d] / n[d], n[d], all[d], (base > 0 ? base / (sum[d] / n[d]) : 0)
         }' "$R/walls.txt" | sort
    echo "== the reports' totals and critical-lane phases"
    for log in "$R"/run-*.log; do echo "$(basename "$log" .log): $(grep -hE '^total' "$log" | head -1)"; done
    for report in "$R"/run-*.json.gz; do
        python3 -c 'import gzip,json,sys; r=json.load(gzip.open(sys.argv[1])); print(sys.argv[1].split("/")[-1], r["wall_ms"], "ms", (r.get("run") or {}).get("phases"), "processes", (r.get("run") or {}).get("processes_started"))' "$report" 2>/dev/null
    done
    echo "== compare with run-0-r1 (the verdicts must not differ)"
    for f in "$R"/compare-*.md; do echo "$(basename "$f" .md): $(grep -hiE 'regression|unchanged' "$f" | head -2 | tr '\n' ' ')"; done
    echo "== bench: where each lane's time went"
    grep -hE '^\| workers|on GPU|critical path|warm processes|throughput' "$R/bench.log" 2>/dev/null
} >"$R/summary.txt" 2>&1
cat "$R/summary.txt"
cp "$R/summary.txt" "$OUT/summary.txt"
tar czf "$OUT/scale.tar.gz" -C "$W" out
