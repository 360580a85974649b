#!/bin/bash
# Session 13, call 3 (a one-GPU host): 440ffdd in bundle/: the `cargo test` binaries on the GPU (bundle/run-tests.sh),
# then the full suite twice with the baseline, compared, with each report's runner and unshared-time rows.
set -u
source scripts/gpu-call-prelude.sh m3
t=$(date +%s.%N); ( cd $root/bundle && timeout 330 bash run-tests.sh > $R/tests.log 2>&1 ); stamp run-tests $? $t
grep -a -E "^test result|^===== |FAILED|^failures:" $R/tests.log | head -40 | tee -a $R/times.txt
grep -a -E "^    [a-z-]+/[^ ]+$" $R/tests.log | sort -u > $R/tests-failed.txt; echo "failed trials: $(wc -l < $R/tests-failed.txt)" | tee -a $R/times.txt
keep
for name in full-1 full-2; do
  t=$(date +%s.%N); ( cd $root/bundle && timeout 120 bin/cuda-conformance run --baseline $BL --report $R/$name.json.gz > $R/$name.log 2>&1 ); stamp $name $? $t; keep
done
$C compare $R/full-1.json.gz $R/full-2.json.gz > $R/compare.md 2>&1; echo "compare full-1 full-2 rc=$? $(tail -n 1 $R/compare.md)" | tee -a $R/times.txt
for n in full-1 full-2; do $C summary $R/$n.json.gz > $R/summary-$n.txt 2>&1; grep -E "^\| (runner|unshared time) " $R/summary-$n.txt | tee -a $R/times.txt; done
keep
