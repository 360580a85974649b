#!/bin/bash
# Session 10, call 8 (one H100): the full suite at 9259c60 (a changed device limit set back instead of ending the
# worker), compared with call 5's run at 4d797ee (bundle/ref-4d797ee.json.gz).
set -u
root=$PWD; R=/tmp/c8; mkdir -p $R
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 | tr 'A-Z ' 'a-z-')
BL=$root/baselines/${gpu}_driver-580.159.04.txt
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
{ nvidia-smi --query-gpu=name,driver_version,uuid --format=csv,noheader; sed -n 2p bundle/MANIFEST; } | tee $R/gpu.txt
cd $root/bundle
t=$(date +%s.%N); timeout 200 bin/cuda-conformance run --devices 0 --baseline $BL --report $R/full.json.gz > $R/full.log 2>&1; rc=$?
echo "full rc=$rc wall=$(awk -v a=$t -v b=$(date +%s.%N) 'BEGIN{printf "%.1f", b-a}') s" | tee $R/times.txt
grep -h "^report" $R/full.log | tee -a $R/times.txt
bin/cuda-conformance compare ref-4d797ee.json.gz $R/full.json.gz | grep -v "uuid\|devices:" | tail -n 4 | tee -a $R/times.txt
python3 - $R <<'PY' | tee -a $R/times.txt
import gzip,json,sys
for name in ('ref-4d797ee.json.gz', sys.argv[1]+'/full.json.gz'):
    r=json.load(gzip.open(name))
    d=[c for c in r['cases'] if c.get('dirty') and 'limit' in c['dirty']]
    print(name.split('/')[-1], r['totals'], 'processes', r['run']['processes_started'], 'limit-dirty', [(c['id'], c['dirty'][:90]) for c in d])
PY
cd /tmp && tar czf $OUT/c8.tar.gz c8
