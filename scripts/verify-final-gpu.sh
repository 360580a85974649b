#!/usr/bin/env bash
# The final device call of a session (repository root; bundle in bundle/): the suite, compare against the
# consolidation report, the baseline, the cargo test binaries and the four sanitizers (results/2026-11-25_final_h100).
set -u
C=$PWD/bundle/bin/cuda-conformance; BL=$PWD/baselines/nvidia-h100-80gb-hbm3_driver-580.159.04.txt
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $OUT/gpu.txt
t0=$(date +%s.%N); $C run --report $OUT/report.json.gz > $OUT/run.log 2>&1; echo "plain rc=$? wall=$(awk "BEGIN{print $(date +%s.%N)-$t0}")" >> $OUT/walls.txt
$C compare results/2026-11-25_consolidation_h100/report-83ca549.json.gz $OUT/report.json.gz > $OUT/compare.md 2>&1; echo "compare rc=$?" >> $OUT/walls.txt
$C run --baseline $BL --no-figures --report /tmp/bl.json > /tmp/bl.log 2>&1; echo "baseline rc=$?" >> $OUT/walls.txt
(cd bundle && CUDA_CONFORMANCE_BASELINE=$BL ./run-tests.sh > $OUT/tests.log 2>&1; echo "run-tests rc=$?" >> $OUT/walls.txt)
mkdir -p /tmp/s
timed() { local n=$1; shift; local t=$(date +%s.%N); $C run "$@" --no-figures --reruns 0 --report /tmp/s/report-$n.json.gz > /tmp/s/$n.log 2>&1; echo "$n rc=$? wall=$(awk "BEGIN{print $(date +%s.%N)-$t}")" >> $OUT/walls.txt; $C summary /tmp/s/report-$n.json.gz > /tmp/s/summary-$n.md 2>&1; }
timed memcheck --sanitizer memcheck & timed racecheck --sanitizer racecheck & timed synccheck --sanitizer synccheck &
for i in 1 2 3 4; do timed initcheck-$i --sanitizer initcheck --shard $i/4 & done
wait
(cd /tmp/s && tar czf $OUT/sanitizers.tar.gz *)
cat $OUT/walls.txt; cat $OUT/compare.md; grep -E "^test result" $OUT/tests.log
for f in /tmp/s/summary-*.md; do echo "== $f"; grep -iE -m4 "sanitizer|^\| total|fail" $f; done
