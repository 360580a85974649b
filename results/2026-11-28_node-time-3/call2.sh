#!/bin/bash
# Session 11, call 2 (a host of 4 GPUs): the full suite at the commit under test with --devices 0, 0,1 and all,
# three rounds interleaved (the issue's measurement), phases in the first round; every report compared with the
# first --devices 0 run.
set -u
source scripts/gpu-call-prelude.sh c2
cd $root/bundle
# A worker's start on this host: alone with one GPU visible and with every GPU visible, then four at once (one per
# GPU): the READY line's init_ms and context_ms, and the whole life of the process (it exits at once).
{ nvidia-smi -q | grep -i -m1 persistence; nvidia-smi topo -m; } >> $R/gpu.txt 2>&1
start1() { t=$(date +%s%N); "$@" bin/cuda-conformance </dev/null | head -1 | tr '\n' ' '; echo " total $(( ($(date +%s%N)-t)/1000000 )) ms"; }
uuid() { nvidia-smi --query-gpu=uuid --format=csv,noheader -i $1; }
for i in 1 2 3; do
  echo -n "one visible: "; start1 env CUDA_VISIBLE_DEVICES=$(uuid 0) CUDA_CONFORMANCE_CHILD_DEVICE=0 CUDA_CONFORMANCE_CHILD_WARM=1
  echo -n "all visible: "; start1 env CUDA_CONFORMANCE_CHILD_DEVICE=0 CUDA_CONFORMANCE_CHILD_WARM=1
done 2>&1 | tee $R/starts.txt
for g in 0 1 2 3; do ( echo "4 at once, GPU $g: $(start1 env CUDA_VISIBLE_DEVICES=$(uuid $g) CUDA_CONFORMANCE_CHILD_DEVICE=0 CUDA_CONFORMANCE_CHILD_WARM=1)" ) & done 2>&1 | tee -a $R/starts.txt; wait
keep
for round in 1 2 3; do for d in 0 0,1 all; do
  name=d$(echo $d | tr -d ,)-r$round
  phases=/dev/null; [ $round = 1 ] && phases=$R/phases-$name.txt
  t=$(date +%s.%N); CUDA_CONFORMANCE_PHASES=$phases timeout 150 bin/cuda-conformance run --devices $d --baseline $BL --report $R/$name.json.gz > $R/$name.log 2>&1; stamp $name $? $t; keep
done; done
for f in $R/d*.json.gz; do n=$(basename $f .json.gz); [ $n = d0-r1 ] && continue
  $C compare $R/d0-r1.json.gz $f > $R/compare-$n.md 2>&1; echo "compare d0-r1 $n rc=$? $(tail -n 1 $R/compare-$n.md)" | tee -a $R/times.txt; done
python3 - $R <<'PY'
import gzip,json,sys,glob,os,statistics
rows={}
for p in sorted(glob.glob(f'{sys.argv[1]}/d*.json.gz')):
    n=os.path.basename(p)[:-8]; r=json.load(gzip.open(p)); run=r['run']
    rows.setdefault(n.split('-')[0],[]).append(r['wall_ms']/1000)
    print(n, 'complete', r['complete'], 'wall %.1f s' % (r['wall_ms']/1000), 'processes', run['processes_started'], 'totals', r['totals'])
base=statistics.median(rows.get('d0',[0]))
for k,v in rows.items(): print(k, 'walls', v, 'median %.1f' % statistics.median(v), 'speed-up against d0 median %.2fx' % (base/statistics.median(v)))
PY
for f in d0-r1 dall-r1; do echo "== $f"; python3 $root/scripts/phases-summary.py $R/phases-$f.txt --top 3 2>&1 | sed -n '1,22p'; done
keep
