#!/bin/bash
# Session 10, call 5 (one H100): the IPC cases with peers started ahead under compute-sanitizer (memcheck,
# synccheck, racecheck), and the full suite once more at the commit under test.
set -u
root=$PWD; R=/tmp/c5; mkdir -p $R
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 | tr 'A-Z ' 'a-z-')
BL=$root/baselines/${gpu}_driver-580.159.04.txt
stamp() { echo "$1 rc=$2 wall=$(awk -v a=$3 -v b=$(date +%s.%N) 'BEGIN{printf "%.1f", b-a}') s" | tee -a $R/times.txt; }
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
{ nvidia-smi --query-gpu=name,driver_version,uuid --format=csv,noheader; sed -n 2p bundle/MANIFEST; } | tee $R/gpu.txt
cd $root/bundle
for tool in memcheck synccheck racecheck; do
  t=$(date +%s.%N); timeout 150 bin/cuda-conformance run ipc/ --sanitizer $tool --no-figures --reruns 0 --baseline $BL --report $R/ipc-$tool.json.gz > $R/ipc-$tool.log 2>&1; stamp ipc-$tool $? $t
  grep -h "sanitizer\|^summary\|pass," $R/ipc-$tool.log | tail -3
done
t=$(date +%s.%N); CUDA_CONFORMANCE_PHASES=$R/phases-full.txt timeout 200 bin/cuda-conformance run --devices 0 --baseline $BL --report $R/full.json.gz > $R/full.log 2>&1; stamp full $? $t
tail -n 4 $R/full.log
python3 $root/scripts/phases-summary.py $R/phases-full.txt --top 3 | sed -n '1,6p'
cd /tmp && tar czf $OUT/c5.tar.gz c5
