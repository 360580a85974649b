#!/usr/bin/env bash
# Session 5, call P2 on one H100: main with the new cases (kernel images, open-code rows, Vulkan external resources)
# and the runner changes. Two full runs (compared), both executors over every new case, memcheck over the new cases.
set -u
root=$PWD; B=$root/bundle; C=$B/bin/cuda-conformance; R=/tmp/p3; mkdir -p $R; T0=$(date +%s)
left() { local l=$(( 570 - ($(date +%s) - T0) )); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
secs() { echo $(( $(date +%s) - $1 )); }
# The Vulkan loader (the device README's recipe): the external-memory cases need it, else they are not-supported.
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; sed -n 2,4p $B/MANIFEST; nproc; ldconfig -p | grep -c libvulkan; ls /usr/local/nvidia/share/vulkan/icd.d/ /usr/share/vulkan/icd.d/ 2>&1; } > $R/host.txt
FILTERS=$(cat $root/gpu-work/new-filters.txt)
# The Vulkan headers for the external-resource reproducers (unpacked apart from /, as the README advises).
mkdir -p /tmp/vkdev && dpkg -x $root/gpu-work/libvulkan-dev_*.deb /tmp/vkdev && export NVCC_APPEND_FLAGS=-I/tmp/vkdev/usr/include
# The Vulkan cases first, alone, with the loader's own diagnostics.
( cd $B && VK_LOADER_DEBUG=error,warn timeout 120 $C run external-resources/ --no-figures --report $R/vk.json.gz > $R/vk.log 2>&1; echo "vulkan cases: rc=$?" >> $R/times.txt )
tail -25 $R/vk.log
( cd $B && NVCC=/usr/local/cuda/bin/nvcc CUDART=repro/lib/libcudart.so.13 REPRO_CACHE=/tmp/repro-cache timeout 250 bash build-reproducers.sh "$C" $R/repro 90 $FILTERS > $R/build.log 2>&1; echo "build rc=$?" >> $R/build.log ) &
b=$!
cd $B
for n in 1 2; do
  t0=$(date +%s); timeout $(left 150) $C run --trace all --report $R/full$n.json.gz > $R/full$n.log 2>&1
  echo "full $n: rc=$? $(secs $t0) s" | tee -a $R/times.txt
done
$C compare $R/full1.json.gz $R/full2.json.gz > $R/compare-12.txt 2>&1; echo "compare full1 full2: rc=$?" | tee -a $R/times.txt
wait $b; tail -2 $R/build.log; echo "reproducers: $(ls $R/repro/bin 2>/dev/null | wc -l)" | tee -a $R/times.txt
i=0
for f in $FILTERS; do
  i=$((i+1)); t0=$(date +%s)
  timeout $(left 60) $C run "$f" --no-figures --executor both --repro-dir $R/repro/bin --report $R/both-$i.json.gz > $R/both-$i.log 2>&1
  echo "both $f: rc=$? $(secs $t0) s $(grep -a 'executors (rust' $R/both-$i.log | tail -1)" | tee -a $R/times.txt
done
for f in api/out-of-range/ execution/ library/ api/after-fault/events/ api/oversize/extent/ symbols/ external-resources/ graph-lifetimes/user-object-call versions-and-logs/logs-register device-management/; do
  [ $(left 60) -lt 40 ] && break
  i=$((i+1)); t0=$(date +%s)
  timeout $(left 60) $C run "$f" --no-figures --sanitizer memcheck --report $R/memcheck-$i.json.gz > $R/memcheck-$i.log 2>&1
  echo "memcheck $f: rc=$? $(secs $t0) s" | tee -a $R/times.txt
done
python3 $root/scripts/sanitizer/totals.py memcheck $root/baselines $R/memcheck-*.json.gz > $R/memcheck-totals.txt 2>&1; echo "memcheck totals: rc=$?" | tee -a $R/times.txt; tail -15 $R/memcheck-totals.txt
cat $R/times.txt; grep -a -m3 "cases on\|^total" $R/full1.log; head -40 $R/compare-12.txt
grep -a -h -A30 '^still failing\|^failing' $R/full1.log | head -60
cd /tmp && tar czf $OUT/p3.tar.gz --exclude=p3/repro p3
