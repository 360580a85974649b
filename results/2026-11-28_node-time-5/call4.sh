#!/bin/bash
# Session 13, call 4 (a 4 x H200 host): 440ffdd in bundle/: the full suite with the baseline, `--devices 0`, `0,1`
# and `all`, three rounds interleaved, each compared with the first; each report's runner and unshared-time rows.
set -u
source scripts/gpu-call-prelude.sh m4
for round in 1 2 3; do
  for devs in 0 0,1 all; do
    name=d$(echo $devs | tr -d ,)-$round
    t=$(date +%s.%N); ( cd $root/bundle && timeout 100 bin/cuda-conformance run --devices $devs --baseline $BL --report $R/$name.json.gz > $R/$name.log 2>&1 ); stamp $name $? $t
    [ $name = d0-1 ] || { $C compare $R/d0-1.json.gz $R/$name.json.gz > $R/compare-$name.md 2>&1; echo "compare d0-1 $name rc=$? $(tail -n 1 $R/compare-$name.md)" | tee -a $R/times.txt; }
    $C summary $R/$name.json.gz > $R/summary-$name.txt 2>&1; grep -E "^\| (runner|unshared time) " $R/summary-$name.txt | sed 's/; devices: .*baseline/; baseline/' | tee -a $R/times.txt
    keep
  done
done
