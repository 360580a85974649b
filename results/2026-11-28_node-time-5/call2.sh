#!/bin/bash
# Session 13, call 2 (a 2 x GPU host): ac7ef48 (the run's unshared time recorded) in bundle/: the full suite
# `--devices 0` twice and `all` once, compared with call 1's first `--devices 0` report of 5185ec8
# (bundle/ref-5185ec8-d0.json.gz) and with each other; each report's `summary` (its runner and unshared-time rows);
# `bench --devices all` (its per-lane lines and the unshared-time line).
set -u
source scripts/gpu-call-prelude.sh m2
for name in d0-1 dall-1 d0-2; do
  devs=0; [ ${name%-*} = dall ] && devs=all
  t=$(date +%s.%N); ( cd $root/bundle && timeout 150 bin/cuda-conformance run --devices $devs --baseline $BL --report $R/$name.json.gz > $R/$name.log 2>&1 ); stamp $name $? $t; keep
done
for n in d0-1 dall-1 d0-2; do
  $C compare $root/bundle/ref-5185ec8-d0.json.gz $R/$n.json.gz > $R/compare-$n.md 2>&1; echo "compare 5185ec8-d0 $n rc=$? $(tail -n 1 $R/compare-$n.md)" | tee -a $R/times.txt
  $C summary $R/$n.json.gz > $R/summary-$n.txt 2>&1; grep -E "^\| (runner|unshared time) " $R/summary-$n.txt | tee -a $R/times.txt
done
keep
t=$(date +%s.%N); ( cd $root/bundle && timeout 120 bin/cuda-conformance bench --devices all --modes workers-all-devices > $R/bench.txt 2>&1 ); stamp bench $? $t; tail -n 8 $R/bench.txt | tee -a $R/times.txt; keep
