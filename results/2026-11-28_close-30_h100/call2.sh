#!/bin/bash
# Session 9, call 2 (a 2 x H100 host for its 32 cores): every api/ row's reproducer and the new pool-import case's,
# built with the host's nvcc (one per core; the 222 built on the CPU machine come from its cache, carried, whose keys
# name the repository's path: so the repository is reached as /work/main here too), then
# `run --executor both` over them on GPU 0: does every row's C++ program agree with the Rust executor?
set -u
root=$PWD; B=$root/bundle; C=$B/bin/cuda-conformance; R=/tmp/c2; mkdir -p $R
BL=$root/baselines/nvidia-h100-80gb-hbm3_driver-580.159.04.txt
stamp() { echo "$1 rc=$2 wall=$(awk -v a=$3 -v b=$(date +%s.%N) 'BEGIN{printf "%.1f", b-a}') s" | tee -a $R/times.txt; }
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
{ nvidia-smi --query-gpu=index,name,driver_version,uuid --format=csv,noheader; sed -n 1,3p $B/MANIFEST; nproc; } | tee $R/gpu.txt
mkdir -p /work; [ -e /work/main ] || ln -s $root /work/main; mkdir -p /work/main/target; tar -xJf $root/gpu-work/repro-cache.tar.xz -C /work/main/target; ls /work/main/target/repro-cache | wc -l
cd $B
t=$(date +%s.%N); NVCC=/usr/local/cuda/bin/nvcc CUDART=repro/lib/libcudart.so.13 REPRO_CACHE=/work/main/target/repro-cache \
    timeout 240 bash /work/main/scripts/build-reproducers.sh "$C" $R/repro 90 api/ ipc/pool-imported > $R/build.log 2>&1; stamp build $? $t
ls $R/repro/bin | wc -l | tee -a $R/times.txt
t=$(date +%s.%N); timeout 60 $C run ipc/pool-imported --devices 0 --no-figures --executor both --repro-dir $R/repro/bin --baseline $BL --report $R/both-pool.json.gz > $R/both-pool.log 2>&1; stamp both-pool $? $t
t=$(date +%s.%N); timeout 250 $C run api/ --devices 0 --no-figures --executor both --repro-dir $R/repro/bin --baseline $BL --report $R/both-api.json.gz > $R/both-api.log 2>&1; stamp both-api $? $t
cat $R/times.txt; tail -n 4 $R/build.log; for f in both-pool both-api; do grep -h '^total\|executors (rust\|disagree' $R/$f.log | head -8; done
grep -A30 "^both executors\|disagree" $R/both-api.log | head -40
cd /tmp && tar czf $OUT/c2.tar.gz --exclude=c2/repro c2
