#!/usr/bin/env bash
# Session 8, call A: where one H100's time goes (phases), a second identical run, the register-file case under both
# executors and the sanitizers, synccheck over the helper rows.
set -u
root=$PWD; B=$root/bundle; C=$B/bin/cuda-conformance; R=/tmp/a; mkdir -p $R; T0=$(date +%s)
BL=$root/baselines/nvidia-h100-80gb-hbm3_driver-580.159.04.txt
stamp() { echo "$1 rc=$2 wall=$(( $(date +%s) - $3 )) s" | tee -a $R/times.txt; }
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; sed -n 1,3p $B/MANIFEST; nproc; } | tee $R/gpu.txt
cd $B
NEW=execution/launch-beyond-the-register-file
( NVCC=/usr/local/cuda/bin/nvcc CUDART=repro/lib/libcudart.so.13 REPRO_CACHE=/tmp/repro-cache \
    timeout 200 bash build-reproducers.sh "$C" $R/repro 90 $NEW > $R/build.log 2>&1; echo "build rc=$?" >> $R/times.txt ) &
t=$(date +%s); CUDA_CONFORMANCE_PHASES=$R/phases.txt timeout 240 $C run --devices 0 --baseline $BL --report $R/p1.json.gz > $R/p1.log 2>&1; stamp p1-phases $? $t
wait
t=$(date +%s); timeout 240 $C run --devices 0 --baseline $BL --report $R/p2.json.gz > $R/p2.log 2>&1; stamp p2 $? $t
$C compare $R/p1.json.gz $R/p2.json.gz > $R/compare-p1-p2.md 2>&1; echo "compare rc=$?" >> $R/times.txt
t=$(date +%s); timeout 60 $C run $NEW --no-figures --executor both --repro-dir $R/repro/bin --report $R/both.json.gz > $R/both.log 2>&1; stamp both $? $t
for tool in memcheck synccheck; do
  t=$(date +%s); timeout 60 $C run $NEW --sanitizer $tool --no-figures --reruns 0 --report $R/new-$tool.json > $R/new-$tool.log 2>&1; stamp new-$tool $? $t
done
i=0
for f in api/open-conditions/ async-notification api/two-devices/ ipc-event driver-entry-point; do
  i=$((i+1)); [ $(( $(date +%s) - T0 )) -gt 500 ] && break
  t=$(date +%s); timeout 90 $C run $f --sanitizer synccheck --no-figures --reruns 0 --report $R/sync-$i.json > $R/sync-$i.log 2>&1; stamp "sync $f" $? $t
done
python3 $B/../scripts/sanitizer/totals.py synccheck $root/baselines $R/sync-*.json $R/new-synccheck.json > $R/totals-sync.txt 2>&1
python3 $B/../scripts/sanitizer/totals.py memcheck $root/baselines $R/new-memcheck.json > $R/totals-mem.txt 2>&1
cat $R/times.txt; head -5 $R/totals-*.txt; tail -5 $R/p1.log; tail -4 $R/p2.log; head -20 $R/compare-p1-p2.md; grep -h -A3 'launch-beyond' $R/p1.log | head
cd /tmp && tar czf $OUT/a.tar.gz --exclude=a/repro a
