#!/bin/bash
# Session 13, call 6 (a one-GPU host): the three cases that timed out in call 5 (each calls cudaDeviceReset; call 5
# ran six sanitized suites at once on one GPU and 16 cores), run alone under the tool that timed them out and under
# the other one: memcheck and initcheck on `device-management/reset-` (6 cases) and
# `api/open-conditions/library-after-reset`.
set -u
source scripts/gpu-call-prelude.sh m6
for tool in memcheck initcheck; do
  for f in device-management/reset- api/open-conditions/library-after-reset; do
    n=$tool-$(echo $f | tr '/' '_')
    t=$(date +%s.%N); ( cd $root/bundle && timeout 120 bin/cuda-conformance run $f --sanitizer $tool --no-figures --reruns 0 --report $R/$n.json > $R/$n.log 2>&1 ); stamp $n $? $t
    python3 scripts/sanitizer/totals.py $tool baselines $R/$n.json 2>&1 | head -5 | tee -a $R/times.txt
  done
done
keep
