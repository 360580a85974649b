#!/usr/bin/env bash
# Session 6, call N5 on a 4 x H100 host: the spare batch worker; GPU 0 twice and the whole host once, with the baseline.
set -u
root=$PWD; B=$root/bundle; C=$B/bin/cuda-conformance; R=/tmp/n5; mkdir -p $R
BL=$B/baselines/nvidia-h100-80gb-hbm3_driver-580.159.04.txt
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
{ nvidia-smi -L; sed -n 2,4p $B/MANIFEST; } > $R/host.txt
cd $B
for step in 0:1 all:1 0:2; do
  d=${step%%:*}; i=${step##*:}; t0=$(date +%s)
  timeout 120 $C run --devices $d --baseline $BL --report $R/full-$d-$i.json.gz > $R/full-$d-$i.log 2>&1
  echo "devices $d baseline (round $i): rc=$? $(( $(date +%s) - t0 )) s" | tee -a $R/times.txt
done
for f in full-all-1 full-0-2; do $C compare $R/full-0-1.json.gz $R/$f.json.gz 2>&1 | tail -1 | sed "s/^/$f: /" | tee -a $R/times.txt; done
python3 - $R/full-*.json.gz <<'PY'
import gzip, json, sys
for p in sys.argv[1:]:
    r = json.load(gzip.open(p)); ru = r['run']
    print(p.split('/')[-1], r['wall_ms'], r['totals'], ru.get('phases'), 'processes', ru.get('processes_started'), 'extra_runs', ru.get('extra_runs'))
PY
cd /tmp && tar czf $OUT/n5.tar.gz n5
