#!/usr/bin/env bash
# Session 8, call F (2 GPUs): the peer atomic-capability query and the two-device rows, under both executors.
set -u
root=$PWD; B=$root/bundle; C=$B/bin/cuda-conformance; R=/tmp/f; mkdir -p $R
BL=$root/baselines/nvidia-h100-80gb-hbm3_driver-580.159.04.txt
nvidia-smi --query-gpu=name,uuid,driver_version --format=csv,noheader | tee $R/gpu.txt; nvidia-smi topo -m | head -4 >> $R/gpu.txt
cd $B
NVCC=/usr/local/cuda/bin/nvcc CUDART=repro/lib/libcudart.so.13 REPRO_CACHE=/tmp/repro-cache \
  timeout 150 bash build-reproducers.sh "$C" $R/repro 90 api/atomic-capabilities api/two-devices > $R/build.log 2>&1; echo "build rc=$?" | tee -a $R/times.txt
for f in api/atomic-capabilities api/two-devices/; do
  timeout 120 $C run $f --devices all --no-figures --baseline $BL --executor both --repro-dir $R/repro/bin --report $R/$(echo $f | tr / _).json.gz > $R/$(echo $f | tr / _).log 2>&1
  echo "$f rc=$?" | tee -a $R/times.txt
done
grep -h -B1 -A3 'atomic-capabilities-valid-query/peer\|two-devices' $R/*.log | head -40; grep -h 'executors (rust\|^total' $R/*.log
cd /tmp && tar czf $OUT/f.tar.gz --exclude=f/repro f
