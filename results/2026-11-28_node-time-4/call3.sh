#!/bin/bash
# Session 12, call 3 (4 GPUs): probe 12's starts on a host of four GPUs (alone, four at once one per GPU, 16 at
# once), then the full suite: 2050f80 (new) --devices 0 and all, 2a31db5 (old) all, new all again.
set -u
source scripts/gpu-call-prelude.sh n3
P=$root/results/2026-11-28_node-time-4
nvcc -O2 -o $R/probe12 $P/probe12.cu -lcuda > $R/nvcc.log 2>&1 || { echo "nvcc failed"; cat $R/nvcc.log; }
G=$(nvidia-smi -L | wc -l)
uuid() { nvidia-smi --query-gpu=uuid --format=csv,noheader -i $1; }
timed() { local t=$(date +%s%N); "$@" 2>&1 | head -1 | tr '\n' ' '; echo " total_ms=$(( ($(date +%s%N)-t)/1000000 ))"; }
p12() { local g=$1; shift; CUDA_VISIBLE_DEVICES=$(uuid $g) $R/probe12 "$@"; }
{
  for i in 1 2 3; do echo "alone driver: $(timed p12 0 driver)"; done
  for round in 1 2; do
    for g in $(seq 0 $((G-1))); do ( echo "$G at once, one per GPU, driver, GPU $g: $(timed p12 $g driver)" ) & done; wait
  done
  for n in 16 32; do
    t=$(date +%s%N); for k in $(seq 1 $n); do ( p12 $((k % G)) driver > /dev/null ) & done; wait
    echo "$n driver starts at once over $G GPUs: $(( ($(date +%s%N)-t)/1000000 )) ms"
    t=$(date +%s%N); for k in $(seq 1 $n); do ( p12 0 driver > /dev/null ) & done; wait
    echo "$n driver starts at once on GPU 0: $(( ($(date +%s%N)-t)/1000000 )) ms"
  done
} 2>&1 | tee $R/starts.txt
keep
for name_dir_devices in new-d0:bundle:0 new-dall-1:bundle:all old-dall:bundle-old:all new-dall-2:bundle:all; do
  IFS=: read name d dv <<< "$name_dir_devices"
  t=$(date +%s.%N); ( cd $root/$d && CUDA_CONFORMANCE_PHASES=$R/phases-$name.txt timeout 150 bin/cuda-conformance run --devices $dv --baseline $BL --report $R/$name.json.gz > $R/$name.log 2>&1 ); stamp $name $? $t; keep
done
for n in new-dall-1 old-dall new-dall-2; do
  $C compare $R/new-d0.json.gz $R/$n.json.gz > $R/compare-$n.md 2>&1; echo "compare new-d0 $n rc=$? $(tail -n 1 $R/compare-$n.md)" | tee -a $R/times.txt
done
python3 - $R <<'PY' | tee -a $R/times.txt
import gzip,json,sys,glob,os
for p in sorted(glob.glob(f'{sys.argv[1]}/*-d*.json.gz')):
    r=json.load(gzip.open(p)); run=r['run']
    print(os.path.basename(p)[:-8], 'complete', r['complete'], 'wall %.1f s' % (r['wall_ms']/1000), 'processes', run['processes_started'], 'phases', run['phases'], 'totals', r['totals'])
PY
keep
