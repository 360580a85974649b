#!/bin/bash
# Session 10, call 7 (one H100): the full suite at the last behaviour change (22e0624), compared with call 5's run
# at 4d797ee (bundle/ref-4d797ee.json.gz).
set -u
root=$PWD; R=/tmp/c7; mkdir -p $R
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 | tr 'A-Z ' 'a-z-')
BL=$root/baselines/${gpu}_driver-580.159.04.txt
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
{ nvidia-smi --query-gpu=name,driver_version,uuid --format=csv,noheader; sed -n 2p bundle/MANIFEST; } | tee $R/gpu.txt
cd $root/bundle
t=$(date +%s.%N); timeout 200 bin/cuda-conformance run --devices 0 --baseline $BL --report $R/full.json.gz > $R/full.log 2>&1; rc=$?
echo "full rc=$rc wall=$(awk -v a=$t -v b=$(date +%s.%N) 'BEGIN{printf "%.1f", b-a}') s" | tee $R/times.txt
grep -h "^report" $R/full.log
bin/cuda-conformance compare ref-4d797ee.json.gz $R/full.json.gz | tail -n 3 | tee -a $R/times.txt
python3 -c "import gzip,json; r=json.load(gzip.open('$R/full.json.gz')); print(r['totals'], r['run']['processes_started'])" | tee -a $R/times.txt
