#!/usr/bin/env bash
# Session 8, call C: the commit under test twice over the full suite (phases on the first), compared with each other and
# with call B's run; the new cases under both executors; memcheck and synccheck over the whole suite.
set -u
root=$PWD; B=$root/bundle; C=$B/bin/cuda-conformance; R=/tmp/c; mkdir -p $R; T0=$(date +%s)
BL=$root/baselines/nvidia-h100-80gb-hbm3_driver-580.159.04.txt
stamp() { echo "$1 rc=$2 wall=$(awk -v a=$3 -v b=$(date +%s.%N) 'BEGIN{printf "%.1f", b-a}') s" | tee -a $R/times.txt; }
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; sed -n 1,3p $B/MANIFEST; } | tee $R/gpu.txt
cd $B
NEW="api/open-conditions/second-free api/null-out/array-info api/open-conditions/stack-beyond-memory api/atomic-capabilities-valid-query api/open-conditions/alloc-node-params execution/launch-beyond-the-register-file"
( NVCC=/usr/local/cuda/bin/nvcc CUDART=repro/lib/libcudart.so.13 REPRO_CACHE=/tmp/repro-cache \
    timeout 200 bash build-reproducers.sh "$C" $R/repro 90 $NEW > $R/build.log 2>&1; echo "build rc=$?" >> $R/times.txt ) &
t=$(date +%s.%N); CUDA_CONFORMANCE_PHASES=$R/phases.txt timeout 200 $C run --devices 0 --baseline $BL --report $R/c1.json.gz > $R/c1.log 2>&1; stamp c1-phases $? $t
wait
t=$(date +%s.%N); timeout 200 $C run --devices 0 --baseline $BL --report $R/c2.json.gz > $R/c2.log 2>&1; stamp c2 $? $t
$C compare $R/c1.json.gz $R/c2.json.gz > $R/compare-c1-c2.md 2>&1; echo "compare c1 c2 rc=$?" >> $R/times.txt
$C compare $root/gpu-work/b-b2.json.gz $R/c2.json.gz > $R/compare-b2-c2.md 2>&1; echo "compare b2 c2 rc=$?" >> $R/times.txt
i=0; for f in $NEW; do i=$((i+1))
  t=$(date +%s.%N); timeout 60 $C run $f --no-figures --executor both --repro-dir $R/repro/bin --report $R/both-$i.json.gz > $R/both-$i.log 2>&1; stamp "both $f" $? $t
done
left=$(( 560 - ($(date +%s) - T0) ))
t=$(date +%s.%N); SANITIZER_TIMEOUT=$(( left > 230 ? 115 : left / 2 - 5 )) bash $root/scripts/sanitizer/suite-gpu.sh $B $R/san $root/baselines memcheck:2 synccheck:2 > $R/san.log 2>&1; stamp sanitizers $? $t
cat $R/times.txt; for f in c1 c2; do grep -h '^total\|^report' $R/$f.log; done; tail -n 2 $R/compare-*.md; grep -h 'executors (rust' $R/both-*.log; head -n 12 $R/san.log
python3 $root/scripts/phases-summary.py $R/phases.txt --top 5 > $R/phases-summary.txt 2>&1
cd /tmp && tar czf $OUT/c.tar.gz --exclude=c/repro c
