#!/usr/bin/env bash
# Issue 23, second round, first device call (from the repository root, bundle in $1): a plain run of the suite with
# buffers starting as the 0xCD pattern (compared against the consolidation baseline), the suite_image repro of the
# three open graphs under each tool, and the random programs under memcheck (one thread, so a hang names its test).
set -u
B=$(cd "$1" && pwd); C=$B/bin/cuda-conformance; RO="--no-figures --reruns 0"
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; $CS --version | tail -1
t0=$(date +%s.%N)
$C run $RO --report $OUT/plain.json >$OUT/plain.log 2>&1; echo "plain rc=$? wall=$(awk "BEGIN{print $(date +%s.%N) - $t0}")"
gunzip -c results/2026-11-25_consolidation_h100/report-83ca549.json.gz >/tmp/base.json
$C compare /tmp/base.json $OUT/plain.json >$OUT/compare.md 2>&1; echo "compare rc=$?"; head -12 $OUT/compare.md
(
  for g in countdown reapplied devlaunch; do
    for k in "suite_image suite" "suite_image nvcc" "suite_image_ptx nvcc"; do
      set -- $k
      for tool in none racecheck initcheck memcheck; do
        [ $tool = none ] && pre="" || pre="$CS --tool $tool"
        echo "--- $g $2 ($1) under $tool"
        timeout 40 $pre $B/repro/$1 $g $2 2>&1 | grep -v "^=========     \|Host Frame\|Device Frame" | tail -8
        echo "rc=${PIPESTATUS[0]}"
      done
    done
  done
) >$OUT/repro.log 2>&1 &
rp=$!
( cd $B && CARGO_MANIFEST_DIR=$B CUDA_CONFORMANCE_REQUIRE_GPU=1 PROPTEST_CASES=2 timeout 75 $CS --tool memcheck \
    ./tests/random_programs --test-threads 1 ) >$OUT/proptest-memcheck.log 2>&1
echo "proptest rc=$?"
wait $rp
grep -c "^--- " $OUT/repro.log; grep -B1 -A0 "^rc=[^0]" $OUT/repro.log | head -40
grep "Program hit\|Invalid\|^test \|test result\|ERROR SUMMARY" $OUT/proptest-memcheck.log | sort | uniq -c | sort -rn | head -40
tail -3 $OUT/proptest-memcheck.log
gzip $OUT/plain.json $OUT/proptest-memcheck.log $OUT/plain.log
