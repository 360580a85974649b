#!/usr/bin/env bash
# The whole suite under compute-sanitizer tools, on a GPU host (issue 34): for each TOOL, `run --sanitizer TOOL
# --no-figures --reruns 0` over every case the bundle's cases/ holds (so cases added later are covered with no change
# here), split into SHARDS shards that run at once on the one GPU (TOOL:SHARDS; initcheck is slow, and each device
# command must end within 10 minutes), then totals.py prints the tool's totals: cases, verdicts, the errors the tool
# printed (intended and not), timeouts, crashes, fails besides the known findings of BASELINE (a baseline file, or the
# baselines/ folder: the section of the report's GPU, driver and runtime).
#
#   scripts/sanitizer/suite-gpu.sh BUNDLE OUTDIR BASELINE TOOL[:SHARDS] ...
#   e.g. scripts/sanitizer/suite-gpu.sh bundle /tmp/san baselines memcheck synccheck racecheck:4 initcheck:4
#
# The tools run one after another (each tool's wall time is its own), or all at once with SANITIZER_TOGETHER=1 (one
# GPU shared: the walls are upper bounds). SANITIZER_TIMEOUT (default 540) bounds each shard's run, in seconds.
# OUTDIR gets report-TOOL[-I].json, TOOL[-I].log (the runner's console), totals-TOOL.txt and walls.txt. Exit 0 only
# when every tool is clean (totals.py).
set -u
[ $# -ge 4 ] || { sed -n 2,15p "$0" >&2; exit 2; }
bundle=$(cd "$1" && pwd); out=$2; baseline=$3; shift 3
mkdir -p "$out"; out=$(cd "$out" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
C=$bundle/bin/cuda-conformance
limit=${SANITIZER_TIMEOUT:-540}

one_tool() { # TOOL SHARDS: every shard at once, then the totals
  local tool=$1 n=$2 t0 i name pids=() reports=()
  t0=$(date +%s.%N)
  for i in $(seq 1 "$n"); do
    if [ "$n" = 1 ]; then name=$tool; shard=(); else name=$tool-$i; shard=(--shard "$i/$n"); fi
    reports+=("$out/report-$name.json")
    timeout "$limit" "$C" --cases "$bundle/cases" run --sanitizer "$tool" --no-figures --reruns 0 "${shard[@]}" \
      --report "$out/report-$name.json" >"$out/$name.log" 2>&1 &
    pids+=($!)
  done
  local rcs=""
  for p in "${pids[@]}"; do wait "$p"; rcs="$rcs $?"; done
  echo "$tool: $n shard(s), rc$rcs, wall $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}") s" >>"$out/walls.txt"
  python3 "$here/totals.py" "$tool" "$baseline" "${reports[@]}" >"$out/totals-$tool.txt" 2>&1
}

pids=()
for spec in "$@"; do
  tool=${spec%%:*}; shards=1
  [ "$spec" != "$tool" ] && shards=${spec#*:}
  if [ "${SANITIZER_TOGETHER:-0}" = 1 ]; then one_tool "$tool" "$shards" & pids+=($!); else one_tool "$tool" "$shards"; fi
done
for p in "${pids[@]}"; do wait "$p"; done

status=0
cat "$out/walls.txt"
for spec in "$@"; do
  tool=${spec%%:*}
  # The first line is the tool's totals; the lines after it name each case that is not clean.
  head -n 30 "$out/totals-$tool.txt"
  head -n 1 "$out/totals-$tool.txt" | grep -q ": clean:" || status=1
done
exit "$status"
