#!/bin/bash
# Session 13, call 5 (a one-GPU host): 440ffdd in bundle/ under compute-sanitizer, the whole suite: memcheck (2
# shards) and initcheck (4 shards) at once on the one GPU (SANITIZER_TOGETHER=1: the walls are upper bounds). The
# first whole-suite sanitizer run since the executor keeps its gate words and stamp pools between cases (2050f80).
set -u
source scripts/gpu-call-prelude.sh m5
SANITIZER_TOGETHER=1 SANITIZER_TIMEOUT=420 bash scripts/sanitizer/suite-gpu.sh bundle $R/san baselines memcheck:2 initcheck:4
echo "suite-gpu rc=$?" | tee -a $R/times.txt
cat $R/san/walls.txt $R/san/totals-*.txt | tee -a $R/times.txt
gzip -f $R/san/report-*.json; keep
