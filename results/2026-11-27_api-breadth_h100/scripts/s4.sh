#!/usr/bin/env bash
# Session 5, call S4 on a 4-GPU host: the suite on 1, 4 and 2 GPUs of the same host, interleaved (issue 32).
set -u
root=$PWD; B=$root/bundle; C=$B/bin/cuda-conformance; R=/tmp/s4; mkdir -p $R; T0=$(date +%s)
for f in .gl/*.deb; do dpkg -x $f /; done; ldconfig
[ -f /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json ] && export VK_DRIVER_FILES=/usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json
{ nvidia-smi -L; nvidia-smi topo -m | head -8; } > $R/host.txt
cd $B
for d in 0 all 0,1 all; do
  [ $(( $(date +%s) - T0 )) -gt 440 ] && break
  case $d in 0) n=one ;; 0,1) n=two ;; *) n=all ;; esac; t0=$(date +%s)
  timeout 150 $C run --devices $d --report $R/run-$n-$t0.json.gz > $R/run-$n-$t0.log 2>&1
  echo "devices $d: rc=$? $(( $(date +%s) - t0 )) s" | tee -a $R/times.txt
done
$C compare $(ls $R/run-one-*.json.gz | head -1) $(ls $R/run-all-*.json.gz | head -1) > $R/compare-0-all.txt 2>&1; echo "compare 0 all: rc=$?" | tee -a $R/times.txt
tail -3 $R/compare-0-all.txt
python3 - $R/*.json.gz <<'PY'
import gzip, json, sys
for p in sys.argv[1:]:
    r = json.load(gzip.open(p)); print(p.split('/')[-1], r['wall_ms'], r['totals'], r['run'].get('phases'))
PY
cd /tmp && tar czf $OUT/s4.tar.gz s4
