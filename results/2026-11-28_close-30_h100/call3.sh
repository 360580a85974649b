#!/bin/bash
# Session 9, call 3 (one H100): the full suite twice at the commit (phases on the first), compared; the two new
# cases' sweeps under both executors; memcheck and synccheck over the whole suite, racecheck and initcheck over the
# new cases.
set -u
root=$PWD; B=$root/bundle; C=$B/bin/cuda-conformance; R=/tmp/c3; mkdir -p $R; T0=$(date +%s)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader -i 0 | tr 'A-Z ' 'a-z-')
BL=$root/baselines/${gpu}_driver-580.159.04.txt
stamp() { echo "$1 rc=$2 wall=$(awk -v a=$3 -v b=$(date +%s.%N) 'BEGIN{printf "%.1f", b-a}') s" | tee -a $R/times.txt; }
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
{ nvidia-smi --query-gpu=name,driver_version,uuid --format=csv,noheader; sed -n 1,3p $B/MANIFEST; echo "baseline $BL"; } | tee $R/gpu.txt
cd $B
NEW="ipc/pool-imported api/oversize/extent-2d"
( NVCC=/usr/local/cuda/bin/nvcc CUDART=repro/lib/libcudart.so.13 REPRO_CACHE=/tmp/repro-cache \
    timeout 200 bash $root/scripts/build-reproducers.sh "$C" $R/repro 90 $NEW > $R/build.log 2>&1; echo "build rc=$?" >> $R/times.txt ) &
t=$(date +%s.%N); CUDA_CONFORMANCE_PHASES=$R/phases.txt timeout 200 $C run --devices 0 --baseline $BL --report $R/r1.json.gz > $R/r1.log 2>&1; stamp r1-phases $? $t
wait
t=$(date +%s.%N); timeout 200 $C run --devices 0 --baseline $BL --report $R/r2.json.gz > $R/r2.log 2>&1; stamp r2 $? $t
$C compare $R/r1.json.gz $R/r2.json.gz > $R/compare-r1-r2.md 2>&1; echo "compare r1 r2 rc=$?" >> $R/times.txt
i=0; for f in $NEW; do i=$((i+1))
  t=$(date +%s.%N); timeout 60 $C run $f --no-figures --executor both --repro-dir $R/repro/bin --baseline $BL --report $R/both-$i.json.gz > $R/both-$i.log 2>&1; stamp "both $f" $? $t
  for tool in racecheck initcheck; do
    t=$(date +%s.%N); timeout 60 $C run $f --sanitizer $tool --no-figures --reruns 0 --report $R/san-$tool-$i.json > $R/san-$tool-$i.log 2>&1; stamp "$tool $f" $? $t
  done
done
left=$(( 570 - ($(date +%s) - T0) ))
t=$(date +%s.%N); SANITIZER_TIMEOUT=$(( left > 230 ? 115 : left / 2 - 5 )) bash $root/scripts/sanitizer/suite-gpu.sh $B $R/san $BL memcheck:2 synccheck:2 > $R/san.log 2>&1; stamp sanitizers $? $t
cat $R/times.txt; for f in r1 r2; do grep -h '^total\|^report\|staging' $R/$f.log | head -4; done; tail -n 2 $R/compare-r1-r2.md; grep -h 'executors (rust\|^total' $R/both-*.log; grep -h "^total\|sanitizer" $R/san-*.log | head; head -n 12 $R/san.log
python3 $root/scripts/phases-summary.py $R/phases.txt --top 8 > $R/phases-summary.txt 2>&1; head -24 $R/phases-summary.txt
cd /tmp && tar czf $OUT/c3.tar.gz --exclude=c3/repro c3
