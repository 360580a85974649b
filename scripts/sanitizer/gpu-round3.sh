#!/usr/bin/env bash
# Issue 34, a device call (from the folder that holds the bundle, bundle in $1): the device-launch graphs of
# suite_image (devhost, devtail; with the suite's kernel image, nvcc copies without and with the transform's
# barrier) alone and under synccheck, then the whole suite under the four tools at once on the one GPU
# (suite-gpu.sh: memcheck, synccheck, racecheck in 4 shards, initcheck in 4 shards). Everything comes back as
# $OUT/round3.tar.gz; the console gets the repro's verdicts, the walls and each tool's totals.
set -u
B=$(cd "$1" && pwd)
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
W=/tmp/round3; mkdir -p "$W"
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; $CS --version | tail -1; sed -n 2p "$B/MANIFEST"; } \
  | tee "$W/host.txt"
(
  for g in devhost devtail; do
    for k in suite nvcc nvcc-barrier; do
      for tool in none synccheck; do
        [ $tool = none ] && pre="" || pre="$CS --tool $tool"
        echo "--- $g $k under $tool"
        timeout 30 $pre "$B/sanitizer/suite_image" $g $k 2>&1 | grep -v "^=========     \|Host Frame\|Device Frame" | sort | uniq -c | sort -rn | head -8
        echo "rc=${PIPESTATUS[0]}"
      done
    done
  done
) >"$W/repro.log" 2>&1
cat "$W/repro.log"
SANITIZER_TOGETHER=1 SANITIZER_TIMEOUT=${SANITIZER_TIMEOUT:-400} bash "$B/sanitizer/suite-gpu.sh" "$B" "$W/suite" \
  "$B/baselines" memcheck synccheck racecheck:4 initcheck:4
echo "suite-gpu rc=$?"
gzip -f "$W"/suite/report-*.json "$W"/suite/*.log
tar czf "$OUT/round3.tar.gz" -C "$W" .
