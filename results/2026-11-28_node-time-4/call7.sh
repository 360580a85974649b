#!/bin/bash
# Session 12, call 7 (a one-GPU host): A/B of 3c3baf0 (new: one peer for the IPC cases, the executor's gate words and
# stamps kept, the starting time recorded) against 2a31db5 (old, bundle-old), the full suite, old/new/old/new.
set -u
source scripts/gpu-call-prelude.sh n7
for name in old-1 new-1 old-2 new-2; do
  d=bundle; [ ${name%-*} = old ] && d=bundle-old
  t=$(date +%s.%N); ( cd $root/$d && timeout 150 bin/cuda-conformance run --baseline $BL --report $R/$name.json.gz > $R/$name.log 2>&1 ); stamp $name $? $t; keep
done
for n in new-1 old-2 new-2; do
  $C compare $R/old-1.json.gz $R/$n.json.gz > $R/compare-$n.md 2>&1; echo "compare old-1 $n rc=$? $(tail -n 1 $R/compare-$n.md)" | tee -a $R/times.txt
done
python3 - $R <<'PY' | tee -a $R/times.txt
import gzip,json,sys,glob,os
for p in sorted(glob.glob(f'{sys.argv[1]}/*-[12].json.gz')):
    r=json.load(gzip.open(p)); run=r['run']
    print(os.path.basename(p)[:-8], 'complete', r['complete'], 'wall %.1f s' % (r['wall_ms']/1000), 'processes', run['processes_started'], 'phases', run['phases'])
PY
keep
