#!/bin/bash
# Session 13, call 1 (a 2 x GPU host): the session's starting commit (5185ec8, in bundle/) on the GPU: the full suite
# `--devices 0` and `all`, twice interleaved, each compared with the first; the `summary` of each; `bench` over
# every device (per-lane times, the critical path, the starting time).
set -u
source scripts/gpu-call-prelude.sh m1
for name in d0-1 dall-1 d0-2 dall-2; do
  devs=0; [ ${name%-*} = dall ] && devs=all
  t=$(date +%s.%N); ( cd $root/bundle && timeout 150 bin/cuda-conformance run --devices $devs --baseline $BL --report $R/$name.json.gz > $R/$name.log 2>&1 ); stamp $name $? $t; keep
done
for n in dall-1 d0-2 dall-2; do
  $C compare $R/d0-1.json.gz $R/$n.json.gz > $R/compare-$n.md 2>&1; echo "compare d0-1 $n rc=$? $(tail -n 1 $R/compare-$n.md)" | tee -a $R/times.txt
done
for n in d0-1 dall-1 d0-2 dall-2; do $C summary $R/$n.json.gz > $R/summary-$n.txt 2>&1; done
python3 - $R <<'PY' | tee -a $R/times.txt
import gzip,json,sys,glob,os
for p in sorted(glob.glob(f'{sys.argv[1]}/*-[12].json.gz')):
    r=json.load(gzip.open(p)); run=r['run']
    print(os.path.basename(p)[:-8], 'complete', r['complete'], 'wall %.1f s' % (r['wall_ms']/1000), 'processes', run['processes_started'], 'phases', run['phases'])
PY
keep
t=$(date +%s.%N); ( cd $root/bundle && timeout 120 bin/cuda-conformance bench --devices all --modes workers-all-devices > $R/bench.txt 2>&1 ); stamp bench $? $t; keep
