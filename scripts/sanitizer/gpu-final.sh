#!/usr/bin/env bash
# Issue 23, second round, the final device call (from the repository root, bundle in $1): a plain run alone
# (compared against the consolidation baseline), then the four tools over the whole suite at once on the one GPU,
# initcheck in 4 shards, as the first round did (results/2026-11-25_sanitizers_h100/README.md).
set -u
B=$(cd "$1" && pwd); C=$B/bin/cuda-conformance; RO="--no-figures --reruns 0"
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
timed() { # NAME ARGS...: a suite run, its wall time and its summary
  local name=$1; shift; local t0=$(date +%s.%N)
  $C run "$@" $RO --report $OUT/report-$name.json >$OUT/$name.log 2>&1; local rc=$?
  echo "$name rc=$rc wall=$(awk "BEGIN{print $(date +%s.%N) - $t0}")" >>$OUT/walls.txt
  $C summary $OUT/report-$name.json >$OUT/summary-$name.md 2>&1
}
timed plain
gunzip -c results/2026-11-25_consolidation_h100/report-83ca549.json.gz >/tmp/base.json
$C compare /tmp/base.json $OUT/report-plain.json >$OUT/compare.md 2>&1; echo "compare rc=$?" >>$OUT/walls.txt
timed memcheck --sanitizer memcheck &
timed racecheck --sanitizer racecheck &
timed synccheck --sanitizer synccheck &
for i in 1 2 3 4; do timed initcheck-$i --sanitizer initcheck --shard $i/4 & done
# The random programs under memcheck and initcheck, one test thread (each error falls under its test), 2 programs
# per property; every memcheck error attributed and judged by classify-random.sh.
CS=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
for tool in memcheck initcheck; do
  ( cd $B && t0=$(date +%s.%N) && CARGO_MANIFEST_DIR=$B CUDA_CONFORMANCE_REQUIRE_GPU=1 PROPTEST_CASES=2 timeout 300 \
      $CS --tool $tool ./tests/random_programs --test-threads 1 >$OUT/random-$tool.log 2>&1; rc=$?
    echo "random-$tool rc=$rc wall=$(awk "BEGIN{print $(date +%s.%N) - $t0}")" >>$OUT/walls.txt
    bash $B/classify-random.sh $OUT/random-$tool.log >$OUT/summary-random-$tool.md 2>&1
    echo "classify rc=$?" >>$OUT/summary-random-$tool.md ) &
done
wait
# The case that failed under initcheck beside the other runs, again alone on the GPU.
timed initcheck-reapplied-alone graph/conditional/while-default-reapplied-each-launch --sanitizer initcheck
cat $OUT/walls.txt; head -8 $OUT/compare.md
for f in $OUT/summary-*.md; do echo "== $f"; grep -i -m6 "pass\|sanitizer\|fail\|timeout\|crash" $f; done
# At most 8 files come back: three archives.
cd $OUT && gzip report-*.json && tar cf reports.tar report-*.json.gz && tar czf summaries.tar.gz summary-*.md \
  compare.md walls.txt && tar czf logs.tar.gz *.log && rm -f report-*.json.gz summary-*.md compare.md *.log
