#!/usr/bin/env bash
# Session 6, call N3 (N2's reproducers again, built for sm_90 with compute_90 PTX): both executors over the new rows.
set -u
root=$PWD; B=$root/bundle; C=$B/bin/cuda-conformance; R=/tmp/n3; mkdir -p $R; T0=$(date +%s)
left() { local l=$(( 400 - ($(date +%s) - T0) )); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
FILTERS=$(cat $root/gpu-work/n2-filters.txt)
cd $B
NVCC=/usr/local/cuda/bin/nvcc CUDART=repro/lib/libcudart.so.13 REPRO_CACHE=/tmp/repro-cache timeout 250 bash build-reproducers.sh "$C" $R/repro 90 $FILTERS > $R/build.log 2>&1; echo "build rc=$?" | tee -a $R/times.txt
echo "reproducers: $(ls $R/repro/bin 2>/dev/null | wc -l)" | tee -a $R/times.txt
i=0
for f in $FILTERS; do
  i=$((i+1)); [ "$(left 30)" -lt 20 ] && break
  timeout $(left 60) $C run "$f" --devices all --no-figures --executor both --repro-dir $R/repro/bin --report $R/both-$i.json.gz > $R/both-$i.log 2>&1
  echo "both $f: rc=$? $(grep -h 'executors (rust and cxx)' $R/both-$i.log | head -1)" | tee -a $R/times.txt
done
cd /tmp && tar czf $OUT/n3.tar.gz --exclude=n3/repro n3
