#!/usr/bin/env bash
# Session 4, calls C and D on one H100 (issue 33): one run of the suite's test binaries by cargo-nextest from the
# bundle's archive with the shipped `ci` profile (call C: run 1, then the expectation-file phase against call A's
# full run, gpu-work/full1.json.gz; call D: run 2). Logs under /tmp/c, packed into $OUT.
set -u
root=$PWD; B=$root/bundle; C=$B/bin/cuda-conformance; R=/tmp/c; mkdir -p $R; T0=$(date +%s)
left() { local l=$(( 570 - ($(date +%s) - T0) )); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
secs() { echo $(( $(date +%s) - $1 )); }
run=${NEXTEST_RUN:-1}
[ -d $B/tests ] || ( cd $B && tar xJf tests.tar.xz )
cd $B
t0=$(date +%s)
CUDA_CONFORMANCE_REQUIRE_GPU=1 timeout $(left 560) nextest/run.sh --profile ci --status-level all --final-status-level none --no-input-handler > $R/nextest-$run.log 2>&1
echo "nextest --profile ci run $run: rc=$? $(secs $t0) s" | tee -a $R/times.txt
grep -a -E '^ *Summary' $R/nextest-$run.log | tee -a $R/times.txt
junit=$(find $B/target/nextest/ci -name junit.xml 2>/dev/null | head -n 1); [ -n "$junit" ] && cp "$junit" $R/nextest-$run-junit.xml && gzip -f $R/nextest-$run-junit.xml
if [ ! -s $R/expect-compare.txt ] && [ -f $root/gpu-work/full1.json.gz ] && [ "$(left 200)" -ge 150 ]; then
  skip=$($C list events/ | awk 'NR == 1 {print $1}')
  flake=managed-memory/zero-size-refused
  fail=graph/update/dependency-count-differs
  cat > $R/expectations.txt <<EOT
# issue 33's check on an H100: one line of each kind
skip  $skip  the H100 check's skip (a case that passes there)
flake $flake  fails on every H100 run (results/findings): declared a flake to see it tolerated and tracked
fail  $fail  the graph-update finding (results/findings): an expected failure
EOT
  t0=$(date +%s)
  timeout $(left 150) $C run --no-figures --expectations $R/expectations.txt --report $R/expect.json.gz > $R/expect.log 2>&1
  echo "run --expectations: rc=$? $(secs $t0) s (0 expected: the declared failure and flake do not fail it)" | tee -a $R/times.txt
  python3 verify-ci-gpu-compare.py --expectations $root/gpu-work/full1.json.gz $R/expect.json.gz "$skip" "$flake" "$fail" | tee $R/expect-compare.txt
  export CARGO_MANIFEST_DIR=$B
  for id in "$skip" "$flake" "$fail"; do
    area=${id%%/*}
    for with in without with; do
      if [ $with = with ]; then export CUDA_CONFORMANCE_EXPECTATIONS=$R/expectations.txt; else unset CUDA_CONFORMANCE_EXPECTATIONS; fi
      line=$(timeout 60 tests/conformance --exact "[$area] $id" 2>$R/trial-$with-${id//\//_}.err | grep -a "^test \[")
      echo "test binary $with expectations: $line" | tee -a $R/expect-trials.txt
    done
  done
  unset CARGO_MANIFEST_DIR
  export CUDA_CONFORMANCE_EXPECTATIONS=$R/expectations.txt
  filter="test(=[${skip%%/*}] $skip) | test(=[${flake%%/*}] $flake) | test(=[${fail%%/*}] $fail)"
  timeout $(left 60) nextest/run.sh --profile ci -E "$filter" --status-level all --final-status-level none --no-input-handler > $R/expect-nextest.log 2>&1
  echo "nextest with the expectations: rc=$?" | tee -a $R/expect-trials.txt
  grep -a -E '^ *(PASS|FAIL|SKIP|FLAKY)' $R/expect-nextest.log | tee -a $R/expect-trials.txt
  unset CUDA_CONFORMANCE_EXPECTATIONS
fi
cat $R/times.txt
gzip -f $R/nextest-$run.log
cd /tmp && tar czf $OUT/c$run.tar.gz c
