#!/usr/bin/env bash
# Session 6, call N4 on a one-GPU H100 host: the final commit; the suite with the baseline and without; both
# executors again over the two rows whose outputs now vary.
set -u
root=$PWD; B=$root/bundle; C=$B/bin/cuda-conformance; R=/tmp/n4; mkdir -p $R
BL=$B/baselines/nvidia-h100-80gb-hbm3_driver-580.159.04.txt
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; sed -n 2,4p $B/MANIFEST; nproc; } > $R/host.txt
cd $B
( NVCC=/usr/local/cuda/bin/nvcc CUDART=repro/lib/libcudart.so.13 REPRO_CACHE=/tmp/repro-cache timeout 200 bash build-reproducers.sh "$C" $R/repro 90 api/open-conditions/cudaIpcGetMemHandle api/open-conditions/capture-info-lossy-query > $R/build.log 2>&1 ) &
bp=$!
for step in bl:1 -:1; do
  b=${step%%:*}; extra=""; [ "$b" = bl ] && extra="--baseline $BL"; t0=$(date +%s)
  timeout 150 $C run $extra --report $R/full-$b.json.gz > $R/full-$b.log 2>&1
  echo "one H100 ${extra:+baseline}: rc=$? $(( $(date +%s) - t0 )) s" | tee -a $R/times.txt
done
$C compare $R/full-bl.json.gz $R/full--.json.gz 2>&1 | tail -2 | tee -a $R/times.txt
wait $bp
for f in api/open-conditions/cudaIpcGetMemHandle api/open-conditions/capture-info-lossy-query; do
  timeout 60 $C run "$f" --no-figures --executor both --repro-dir $R/repro/bin > $R/both.log 2>&1
  echo "both $f: rc=$? $(grep -h 'executors (rust and cxx)' $R/both.log | head -1)" | tee -a $R/times.txt
done
python3 - $R/full-*.json.gz <<'PY'
import gzip, json, sys
for p in sys.argv[1:]:
    r = json.load(gzip.open(p)); ru = r['run']
    print(p.split('/')[-1], r['wall_ms'], r['totals'], ru.get('phases'), 'processes', ru.get('processes_started'), 'extra_runs', ru.get('extra_runs'))
PY
cd /tmp && tar czf $OUT/n4.tar.gz --exclude=n4/repro n4
