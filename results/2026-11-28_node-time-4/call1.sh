#!/bin/bash
# Session 12, call 1 (a host of several GPUs): probe 12 (what a process start costs alone and beside others; whether
# starts or frees in one process slow frees in a process on another GPU), then the full suite at the session's first
# commit, --devices 0 and all, two rounds interleaved, and the newest host-memory case under synccheck.
set -u
source scripts/gpu-call-prelude.sh n1
P=$root/results/2026-11-28_node-time-4
nvcc -O2 -o $R/probe12 $P/probe12.cu -lcuda > $R/nvcc.log 2>&1 || { echo "nvcc failed"; cat $R/nvcc.log; }
G=$(nvidia-smi -L | wc -l)
uuid() { nvidia-smi --query-gpu=uuid --format=csv,noheader -i $1; }
timed() { local t=$(date +%s%N); "$@" 2>&1 | head -1 | tr '\n' ' '; echo " total_ms=$(( ($(date +%s%N)-t)/1000000 ))"; }
conf() { CUDA_VISIBLE_DEVICES=$1 CUDA_CONFORMANCE_CHILD_DEVICE=0 CUDA_CONFORMANCE_CHILD_WARM=1 $C </dev/null; }
p12() { local g=$1; shift; CUDA_VISIBLE_DEVICES=$(uuid $g) $R/probe12 "$@"; }
{
  for i in 1 2 3; do
    for m in init driver runtime; do echo "alone $m: $(timed p12 0 $m)"; done
    echo "alone conformance: $(timed conf $(uuid 0))"
  done
  for round in 1 2; do
    for m in driver runtime; do
      for g in $(seq 0 $((G-1))); do ( echo "$G at once, one per GPU, $m, GPU $g: $(timed p12 $g $m)" ) & done; wait
      for g in $(seq 0 $((G-1))); do ( echo "$G at once, all on GPU 0, $m, #$g: $(timed p12 0 $m)" ) & done; wait
    done
    for g in $(seq 0 $((G-1))); do ( echo "$G at once, one per GPU, conformance, GPU $g: $(timed conf $(uuid $g))" ) & done; wait
  done
  # Throughput: 16 starts at once spread over the GPUs.
  t=$(date +%s%N)
  for k in $(seq 0 15); do ( p12 $((k % G)) driver > /dev/null ) & done; wait
  echo "16 driver starts at once over $G GPUs: $(( ($(date +%s%N)-t)/1000000 )) ms"
  t=$(date +%s%N)
  for k in $(seq 0 15); do ( p12 0 driver > /dev/null ) & done; wait
  echo "16 driver starts at once on GPU 0: $(( ($(date +%s%N)-t)/1000000 )) ms"
} 2>&1 | tee $R/starts.txt
keep
{
  for b in 4194304 256; do
    echo "freeloop alone GPU 0, $b B: $(p12 0 freeloop 1000 $b)"
    if [ $G -gt 1 ]; then
      ( p12 1 freeloop 1000 $b | sed "s/^/  beside (GPU 1): /" ) &
      echo "freeloop GPU 0 beside a freeloop on GPU 1, $b B: $(p12 0 freeloop 1000 $b)"; wait
    fi
    # Starts, one after another, on the other GPUs (or on GPU 0 with one GPU) while GPU 0 allocates and frees.
    touch $R/starting; n=0
    ( k=0; while [ -f $R/starting ]; do p12 $(( G > 1 ? 1 + k % (G-1) : 0 )) driver >/dev/null; k=$((k+1)); done; echo "  starts beside: $k" ) &
    echo "freeloop GPU 0 beside starts on other GPUs, $b B: $(p12 0 freeloop 1000 $b)"; rm -f $R/starting; wait
  done
} 2>&1 | tee $R/freeloop.txt
keep
cd $root/bundle
for name_devices in d0-1:0 dall-1:all d0-2:0 dall-2:all; do
  name=${name_devices%%:*}; d=${name_devices#*:}
  t=$(date +%s.%N); timeout 150 bin/cuda-conformance run --devices $d --baseline $BL --report $R/$name.json.gz > $R/$name.log 2>&1; stamp $name $? $t; keep
done
for n in dall-1 d0-2 dall-2; do
  $C compare $R/d0-1.json.gz $R/$n.json.gz > $R/compare-$n.md 2>&1; echo "compare d0-1 $n rc=$? $(tail -n 1 $R/compare-$n.md)" | tee -a $R/times.txt
done
t=$(date +%s.%N); timeout 120 bin/cuda-conformance run host-memory/copy-from-inside --sanitizer synccheck --baseline $BL --report $R/sync.json.gz > $R/sync.log 2>&1; stamp synccheck $? $t
tail -n 5 $R/sync.log >> $R/times.txt
python3 - $R <<'PY' | tee -a $R/times.txt
import gzip,json,sys,glob,os
for p in sorted(glob.glob(f'{sys.argv[1]}/d*.json.gz')):
    r=json.load(gzip.open(p)); run=r['run']
    print(os.path.basename(p)[:-8], 'complete', r['complete'], 'wall %.1f s' % (r['wall_ms']/1000), 'processes', run['processes_started'], 'totals', r['totals'])
PY
keep
