#!/usr/bin/env bash
# Session 6, call N1 on a 4 x H100 host (issues 30 and 32): the suite with the runner's deferred crash reruns and the
# small page-locked cache; with and without the H100 baseline; 1, 4 and 2 GPUs of one host, interleaved.
set -u
root=$PWD; B=$root/bundle; C=$B/bin/cuda-conformance; R=/tmp/n1; mkdir -p $R; T0=$(date +%s)
BL=$B/baselines/nvidia-h100-80gb-hbm3_driver-580.159.04.txt
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; sed -n 2,4p $B/MANIFEST; nproc; } > $R/host.txt
cd $B
for step in 0:b all:b 0:- all:b 0:b 0,1:b; do
  [ $(( $(date +%s) - T0 )) -gt 470 ] && break
  d=${step%%:*}; b=${step##*:}; case $d in 0) n=one ;; 0,1) n=two ;; *) n=all ;; esac
  extra=""; [ "$b" = b ] && extra="--baseline $BL" && n=$n-bl; t0=$(date +%s)
  timeout 150 $C run --devices $d $extra --report $R/run-$n-$t0.json.gz > $R/run-$n-$t0.log 2>&1
  echo "devices $d ${extra:+baseline}: rc=$? $(( $(date +%s) - t0 )) s" | tee -a $R/times.txt
done
first=$(ls $R/run-one-bl-*.json.gz | head -1)
for f in $R/run-*.json.gz; do [ $f = $first ] && continue; echo "== compare $(basename $first) $(basename $f)"; $C compare $first $f 2>&1 | tail -4; done > $R/compares.txt
cat $R/compares.txt
python3 - $R/*.json.gz <<'PY'
import gzip, json, sys
for p in sys.argv[1:]:
    r = json.load(gzip.open(p)); ru = r['run']
    print(p.split('/')[-1], r['wall_ms'], r['totals'], ru.get('phases'), 'processes', ru.get('processes_started'), 'extra_runs', ru.get('extra_runs'))
PY
cd /tmp && tar czf $OUT/n1.tar.gz n1
