#!/bin/bash
# Session 9, call 1 (one H100): probe9 (unified functions, pool import, traps beside context starts); the full suite
# twice at the working tree (figures' gates at 10 ms), phases on the first.
set -u
root=$PWD; B=$root/bundle; C=$B/bin/cuda-conformance; R=/tmp/c1; mkdir -p $R
BL=$root/baselines/nvidia-h100-80gb-hbm3_driver-580.159.04.txt
stamp() { echo "$1 rc=$2 wall=$(awk -v a=$3 -v b=$(date +%s.%N) 'BEGIN{printf "%.1f", b-a}') s" | tee -a $R/times.txt; }
{ nvidia-smi --query-gpu=name,driver_version,uuid --format=csv,noheader; sed -n 1,3p $B/MANIFEST; } | tee $R/gpu.txt
timeout 150 bash gpu-work/p9/run.sh > $R/probe.log 2>&1; echo "probe rc=$?" >> $R/times.txt
cd $B
t=$(date +%s.%N); CUDA_CONFORMANCE_PHASES=$R/phases.txt timeout 200 $C run --devices 0 --baseline $BL --report $R/r1.json.gz > $R/r1.log 2>&1; stamp r1-phases $? $t
t=$(date +%s.%N); timeout 200 $C run --devices 0 --baseline $BL --report $R/r2.json.gz > $R/r2.log 2>&1; stamp r2 $? $t
$C compare $R/r1.json.gz $R/r2.json.gz > $R/compare-r1-r2.md 2>&1; echo "compare r1 r2 rc=$?" >> $R/times.txt
python3 $root/scripts/phases-summary.py $R/phases.txt --top 12 > $R/phases-summary.txt 2>&1
cat $R/probe.log; cat $R/times.txt; for f in r1 r2; do grep -h '^total\|^report\|figure\|staging' $R/$f.log | head -8; done; tail -n 3 $R/compare-r1-r2.md; head -40 $R/phases-summary.txt
cd /tmp && tar czf $OUT/c1.tar.gz c1
