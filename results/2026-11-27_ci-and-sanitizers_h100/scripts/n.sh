#!/usr/bin/env bash
# Session 4, calls D and E on one H100 (issue 33, issue 34): parts of cargo-nextest runs from the bundle's archive
# with the shipped `ci` profile, each `LABEL=ARGS` of NEXTEST_PARTS a run of its own (e.g. `2a=--partition count:1/2`,
# `1rest=-E @gpu-work/rest1.txt`: a filterset read from the file); then, when DO_EXPECT=1, the expectation-file
# phase against call A's full run (gpu-work/full1.json.gz); then, when DO_MEMCHECK=1, memcheck over the whole suite
# (2 shards). Every step shrinks to fit 570 s. Logs under /tmp/n, packed into $OUT/n.tar.gz.
set -u
root=$PWD; B=$root/bundle; C=$B/bin/cuda-conformance; R=/tmp/n; mkdir -p $R; T0=$(date +%s)
left() { local l=$(( 570 - ($(date +%s) - T0) )); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
secs() { echo $(( $(date +%s) - $1 )); }
{ nvidia-smi -L; sed -n 2,4p $B/MANIFEST; } >> $R/host.txt
[ -d $B/tests ] || ( cd $B && tar xJf tests.tar.xz )
cd $B
IFS=';' read -ra parts <<< "${NEXTEST_PARTS:-}"
for part in "${parts[@]}"; do
  label=${part%%=*}; args=${part#*=}
  if [[ "$args" == "-E @"* ]]; then args=(-E "$(cat $root/${args#-E @})"); else read -ra args <<< "$args"; fi
  t0=$(date +%s)
  CUDA_CONFORMANCE_REQUIRE_GPU=1 timeout $(left 560) nextest/run.sh --profile ci --status-level all --final-status-level none --no-input-handler "${args[@]}" > $R/nextest-$label.log 2>&1
  echo "nextest --profile ci $label: rc=$? $(secs $t0) s" | tee -a $R/times.txt
  grep -a -E '^ *Summary' $R/nextest-$label.log | tee -a $R/times.txt
  gzip -f $R/nextest-$label.log
done
if [ "${DO_EXPECT:-0}" = 1 ] && [ "$(left 200)" -ge 150 ]; then
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
cd $root
if [ "${DO_MEMCHECK:-0}" = 1 ]; then
  SANITIZER_TIMEOUT=$(left 160) timeout $(left 170) bash scripts/sanitizer/suite-gpu.sh $B $R/san baselines memcheck:2 > $R/san.log 2>&1; echo "memcheck: rc=$?" | tee -a $R/times.txt
  cat $R/san/walls.txt; grep -v "known finding:" $R/san/totals-*.txt | cut -c1-300 | head -10
  gzip -f $R/san/report-*.json 2>/dev/null
fi
cat $R/times.txt
cd /tmp && tar czf $OUT/n.tar.gz n
