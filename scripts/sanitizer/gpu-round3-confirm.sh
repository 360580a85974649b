#!/usr/bin/env bash
# Issue 34, the second device call (from the folder that holds the bundle, bundle in $1), within what was left of
# the session's device time: the fixes the first call (gpu-round3.sh) called for, each confirmed alone on the GPU:
# performance/seed004-launch-cost under racecheck (one sample under a tool), then the whole suite under synccheck
# (suite-gpu.sh; the device-launched graphs with a block barrier and the gate case held behind a serialised kernel
# not-supported), cut at 90 s. Everything comes back as $OUT/confirm.tar.gz.
set -u
B=$(cd "$1" && pwd); C=$B/bin/cuda-conformance; W=/tmp/confirm; mkdir -p "$W"
sed -n 2p "$B/MANIFEST" | tee "$W/host.txt"
one() { # NAME TOOL LIMIT FILTER: the cases whose id contains FILTER under TOOL, and their totals
  local t0; t0=$(date +%s.%N)
  timeout "$3" "$C" --cases "$B/cases" run "$4" --sanitizer "$2" --no-figures --reruns 0 --report "$W/report-$1.json" \
    >"$W/$1.log" 2>&1
  echo "$1: rc $?, wall $(awk "BEGIN{printf \"%.1f\", $(date +%s.%N) - $t0}") s" | tee -a "$W/walls.txt"
  python3 "$B/sanitizer/totals.py" "$2" "$B/baselines" "$W/report-$1.json" | tee "$W/totals-$1.txt"
}
one racecheck-seed004 racecheck 15 performance/seed004-launch-cost
SANITIZER_TIMEOUT=90 bash "$B/sanitizer/suite-gpu.sh" "$B" "$W/suite" "$B/baselines" synccheck
echo "suite-gpu rc=$?"
gzip -f "$W"/report-*.json "$W"/*.log "$W"/suite/report-*.json "$W"/suite/*.log
tar czf "$OUT/confirm.tar.gz" -C "$W" .
