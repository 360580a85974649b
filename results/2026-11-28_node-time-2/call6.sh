#!/bin/bash
# Session 10, call 6 (2 GPUs): the several-device cases with literal device locations, counted from GPU 1 and from
# GPU 0, at the commit that maps a device location's id to the case's device.
set -u
root=$PWD; R=/tmp/c6; mkdir -p $R
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 | tr 'A-Z ' 'a-z-')
BL=$root/baselines/${gpu}_driver-580.159.04.txt
{ nvidia-smi --query-gpu=index,name,driver_version --format=csv,noheader; sed -n 2p bundle/MANIFEST; } | tee $R/gpu.txt
cd $root/bundle
for f in pools/ multi-gpu/ memory-2d/memcpy3d-peer device-management/p2p-attribute api/atomic-capabilities-valid-query; do
  for d in 1 0; do
    n=$(echo "$f-d$d" | tr '/' '_')
    timeout 120 bin/cuda-conformance run "$f" --devices $d --baseline $BL --report $R/$n.json.gz > $R/$n.log 2>&1
    echo "$f --devices $d rc=$? $(grep -h '^summary\|cases:' $R/$n.log | tail -1)"
    grep -h "FAIL\|fail " $R/$n.log | grep -v "expected" | head -5
  done
  echo "compare: $(bin/cuda-conformance compare $R/$(echo "$f-d0" | tr '/' '_').json.gz $R/$(echo "$f-d1" | tr '/' '_').json.gz | tail -1)"
done
cd /tmp && tar czf $OUT/c6.tar.gz c6
