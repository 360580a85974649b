#!/usr/bin/env bash
# Session 6, call N2 on a 4 x H100 host: main with the open-code rows; two full runs on GPU 0 with the H100 baseline
# (compared), the whole host once, both executors and memcheck over the new rows.
set -u
root=$PWD; B=$root/bundle; C=$B/bin/cuda-conformance; R=/tmp/n2; mkdir -p $R; T0=$(date +%s)
left() { local l=$(( 560 - ($(date +%s) - T0) )); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
BL=$B/baselines/nvidia-h100-80gb-hbm3_driver-580.159.04.txt
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; sed -n 2,4p $B/MANIFEST; } > $R/host.txt
FILTERS=$(cat $root/gpu-work/n2-filters.txt)
mkdir -p /tmp/vkdev && dpkg -x $root/gpu-work/libvulkan-dev_*.deb /tmp/vkdev && export NVCC_APPEND_FLAGS=-I/tmp/vkdev/usr/include
( cd $B && NVCC=/usr/local/cuda/bin/nvcc CUDART=repro/lib/libcudart.so.13 REPRO_CACHE=/tmp/repro-cache timeout 200 bash build-reproducers.sh "$C" $R/repro 60 $FILTERS > $R/build.log 2>&1; echo "build rc=$?" >> $R/build.log ) &
bp=$!
cd $B
for step in 0:1 all:1 0:2; do
  d=${step%%:*}; i=${step##*:}; t0=$(date +%s)
  timeout $(left 150) $C run --devices $d --baseline $BL --report $R/full-$d-$i.json.gz > $R/full-$d-$i.log 2>&1
  echo "devices $d baseline (round $i): rc=$? $(( $(date +%s) - t0 )) s" | tee -a $R/times.txt
done
$C compare $R/full-0-1.json.gz $R/full-0-2.json.gz > $R/compare-0.txt 2>&1; echo "compare 0 r1 r2: rc=$?" | tee -a $R/times.txt; tail -3 $R/compare-0.txt
$C compare $R/full-0-1.json.gz $R/full-all-1.json.gz > $R/compare-all.txt 2>&1; echo "compare 0 all: rc=$?" | tee -a $R/times.txt; tail -8 $R/compare-all.txt
wait $bp; tail -2 $R/build.log; echo "reproducers: $(ls $R/repro/bin 2>/dev/null | wc -l)" | tee -a $R/times.txt
i=0
for f in $FILTERS; do
  i=$((i+1)); [ "$(left 30)" -lt 20 ] && break
  timeout $(left 60) $C run "$f" --devices all --no-figures --executor both --repro-dir $R/repro/bin --report $R/both-$i.json.gz > $R/both-$i.log 2>&1
  echo "both $f: rc=$? $(grep -h 'executors (rust and cxx)' $R/both-$i.log | head -1)" | tee -a $R/times.txt
done
[ "$(left 60)" -gt 40 ] && { timeout $(left 60) $C run api/open-conditions/ --no-figures --sanitizer memcheck --report $R/memcheck.json.gz > $R/memcheck.log 2>&1; echo "memcheck open-conditions: rc=$?" | tee -a $R/times.txt; }
python3 - $R/full-*.json.gz <<'PY'
import gzip, json, sys
for p in sys.argv[1:]:
    r = json.load(gzip.open(p)); ru = r['run']
    print(p.split('/')[-1], r['wall_ms'], r['totals'], ru.get('phases'), 'processes', ru.get('processes_started'), 'extra_runs', ru.get('extra_runs'))
PY
grep -h -A3 "^fail\|FAIL\|fail " $R/full-all-1.log | head -40
cd /tmp && tar czf $OUT/n2.tar.gz n2 --exclude=n2/repro
