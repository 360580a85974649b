#!/usr/bin/env bash
# Session 5, call P4 on one H100: both executors over the external-resource cases after their fix (the GetParams
# buffers' addresses and padding zeroed) and the mem-range-attributes case; the Vulkan cases under racecheck and synccheck.
set -u
root=$PWD; B=$root/bundle; C=$B/bin/cuda-conformance; R=/tmp/p4; mkdir -p $R
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
mkdir -p /tmp/vkdev && dpkg -x $root/gpu-work/libvulkan-dev_*.deb /tmp/vkdev && export NVCC_APPEND_FLAGS=-I/tmp/vkdev/usr/include
cd $B
NVCC=/usr/local/cuda/bin/nvcc CUDART=repro/lib/libcudart.so.13 REPRO_CACHE=/tmp/repro-cache timeout 200 bash build-reproducers.sh "$C" $R/repro 90 external-resources/ api/lifecycle/mem-range > $R/build.log 2>&1; echo "build rc=$?" | tee -a $R/times.txt
for f in external-resources/ api/lifecycle/mem-range; do
  n=$(echo $f | tr -c 'a-z\n' '-')
  timeout 120 $C run "$f" --no-figures --executor both --repro-dir $R/repro/bin --report $R/both-$n.json.gz > $R/both-$n.log 2>&1
  echo "both $f: rc=$? $(grep -a 'executors (rust' $R/both-$n.log | tail -1)" | tee -a $R/times.txt
done
for t in racecheck synccheck; do
  timeout 120 $C run external-resources/ --no-figures --sanitizer $t --report $R/$t.json.gz > $R/$t.log 2>&1; echo "$t external-resources/: rc=$?" | tee -a $R/times.txt
  python3 $root/scripts/sanitizer/totals.py $t $root/baselines $R/$t.json.gz | head -3 | cut -c1-300
done
cd /tmp && tar czf $OUT/p4.tar.gz --exclude=p4/repro p4
