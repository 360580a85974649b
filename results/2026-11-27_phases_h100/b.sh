#!/usr/bin/env bash
# Session 8, call B: the memory check skipped beside process starts (phases, two full runs, compare with call A's
# run of a07e8ce); then one GPU shared by two concurrent shards (--no-figures) against one run (--no-figures).
set -u
root=$PWD; B=$root/bundle; C=$B/bin/cuda-conformance; R=/tmp/b; mkdir -p $R
BL=$root/baselines/nvidia-h100-80gb-hbm3_driver-580.159.04.txt
stamp() { echo "$1 rc=$2 wall=$(awk -v a=$3 -v b=$(date +%s.%N) 'BEGIN{printf "%.1f", b-a}') s" | tee -a $R/times.txt; }
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; sed -n 1,3p $B/MANIFEST; } | tee $R/gpu.txt
cd $B
t=$(date +%s.%N); CUDA_CONFORMANCE_PHASES=$R/phases.txt timeout 240 $C run --devices 0 --baseline $BL --report $R/b1.json.gz > $R/b1.log 2>&1; stamp b1-phases $? $t
t=$(date +%s.%N); timeout 240 $C run --devices 0 --baseline $BL --report $R/b2.json.gz > $R/b2.log 2>&1; stamp b2 $? $t
$C compare $R/b1.json.gz $R/b2.json.gz > $R/compare-b1-b2.md 2>&1; echo "compare b1 b2 rc=$?" >> $R/times.txt
$C compare $root/gpu-work/a-p2.json.gz $R/b2.json.gz > $R/compare-a-b2.md 2>&1; echo "compare a-p2 b2 rc=$?" >> $R/times.txt
t=$(date +%s.%N); timeout 200 $C run --devices 0 --baseline $BL --no-figures --report $R/nf.json.gz > $R/nf.log 2>&1; stamp one-no-figures $? $t
t=$(date +%s.%N)
for i in 1 2; do timeout 200 $C run --devices 0 --baseline $BL --no-figures --shard $i/2 --report $R/sh$i.json.gz > $R/sh$i.log 2>&1 & done; wait
stamp two-shards-at-once $? $t
cat $R/times.txt; for f in b1 b2 nf sh1 sh2; do grep -h '^total\|^report' $R/$f.log; done; tail -3 $R/compare-*.md
cd /tmp && tar czf $OUT/b.tar.gz b
