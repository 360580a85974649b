#!/bin/bash
# Session 13, call 7 (a one-GPU host): 440ffdd in bundle/ under compute-sanitizer, the whole suite: synccheck (2
# shards) and racecheck (4 shards) at once on the one GPU (SANITIZER_TOGETHER=1: the walls are upper bounds), the
# two tools call 5 did not run.
set -u
source scripts/gpu-call-prelude.sh m7
SANITIZER_TOGETHER=1 SANITIZER_TIMEOUT=330 bash scripts/sanitizer/suite-gpu.sh bundle $R/san baselines synccheck:2 racecheck:4 > $R/suite-gpu.log 2>&1
echo "suite-gpu rc=$?" | tee -a $R/times.txt
cat $R/san/walls.txt | tee -a $R/times.txt
grep -h -v "^  known finding" $R/san/totals-*.txt | tee -a $R/times.txt
gzip -f $R/san/report-*.json; keep
