#!/usr/bin/env bash
# One GPU host's check of a commit, from the bundle's parent folder (the repository root on the device machine):
# the `cargo test` binaries on the GPU (bundle/run-tests.sh: the smoke test, every case as a trial, the random
# programs), and the areas in $BOTH_AREAS (default host-functions/) by both executors, their reproducers compiled
# here with the host's nvcc while the tests run; with FULL=1 also the full suite (`run`, a report; FULL=2 twice and
# compared); then the whole suite under compute-sanitizer (scripts/sanitizer/suite-gpu.sh, the tools one after
# another, each tool's totals printed): memcheck and synccheck (2 shards each) by default, all four with SANITIZERS=all
# (racecheck and initcheck in 4 shards each), none with SANITIZERS=none (on an H100 at 1299 cases: memcheck 100 s,
# synccheck 102 s, racecheck 147 s, initcheck 80 s; the device's 10-minute command limit calls for the sanitizers in
# a command of their own: docs/running.md). Logs and reports go to
# $OUT/verify.tar.gz.
set -u
root=$(pwd); C=$root/bundle/bin/cuda-conformance; W=/tmp/verify; R=$W/out
mkdir -p "$R"; cd bundle
{ nvidia-smi -L; sed -n 2p MANIFEST; nproc; } | tee "$R/host.txt"
areas=${BOTH_AREAS:-host-functions/}
# shellcheck disable=SC2086 # one filter per area
NVCC=/usr/local/cuda/bin/nvcc CUDART=repro/lib/libcudart.so.13 REPRO_CACHE="$W/cache" \
  timeout 600 bash build-reproducers.sh "$C" "$W/repro" 90 $areas >>"$R/build.log" 2>&1 || echo "build $areas failed" >>"$R/build.log" &
builder=$!
t0=$(date +%s); timeout 400 bash run-tests.sh > "$R/tests.log" 2>&1
echo "run-tests rc=$? $(( $(date +%s) - t0 )) s"; grep -a "test result" "$R/tests.log"
wait "$builder"; tail -2 "$R/build.log"
for a in $areas; do
  n=$(echo "$a" | tr '/' '_'); t0=$(date +%s)
  timeout 200 "$C" run "$a" --no-figures --executor both --repro-dir "$W/repro/bin" --report "$R/both-$n.json.gz" > "$R/both-$n.log" 2>&1
  echo "both $a rc=$? $(( $(date +%s) - t0 )) s"; grep -a -i "agree" "$R/both-$n.log" | tail -3
done
# FULL=1: the full suite once; FULL=2: twice, and `compare` of the two (identical verdicts is what the issues ask).
# Every case keeps its trace (`--trace all`), so `rejudge` can later judge a case fix against this run.
full=${FULL:-0}
for n in $(seq 1 "$full"); do
  t0=$(date +%s); timeout 170 "$C" run --trace all --report "$R/full$n.json.gz" > "$R/full$n.log" 2>&1
  echo "full run $n rc=$? $(( $(date +%s) - t0 )) s: $(grep -a 'cases on' "$R/full$n.log" | head -1 | cut -c1-40)"
done
if [ "$full" -ge 2 ]; then
  "$C" compare "$R/full1.json.gz" "$R/full2.json.gz" > "$R/compare-full.txt" 2>&1
  echo "compare full1 full2 rc=$?"; head -20 "$R/compare-full.txt"
fi
case "${SANITIZERS:-default}" in
  default) tools="memcheck:2 synccheck:2" ;;
  all) tools="memcheck:2 synccheck:2 racecheck:4 initcheck:4" ;;
  none) tools="" ;;
  *) tools=$SANITIZERS ;; # e.g. SANITIZERS="racecheck:4"
esac
if [ -n "$tools" ]; then
  # shellcheck disable=SC2086 # one argument per tool
  bash "$root/scripts/sanitizer/suite-gpu.sh" "$root/bundle" "$R/sanitizers" \
    "$root/baselines" $tools
  echo "sanitizers rc=$?"
  gzip -f "$R"/sanitizers/report-*.json
fi
tar czf "$OUT/verify.tar.gz" -C "$W" out
