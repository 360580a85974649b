#!/bin/bash
# Session 11, call 6 (several GPUs, else one): A/B of the figures' processes started ahead on the measuring lane,
# interleaved old/new/old/new (bundle-old/ = c6eb690, bundle/ = the commit under test), --devices all; then the
# new commit's full suite on --devices 0 once, compared with an `all` run.
set -u
source scripts/gpu-call-prelude.sh c6
for round in 1 2; do for b in old new; do
  d=$root/bundle; [ $b = old ] && d=$root/bundle-old
  t=$(date +%s.%N); ( cd $d && timeout 150 bin/cuda-conformance run --devices all --baseline $BL --report $R/$b-$round.json.gz > $R/$b-$round.log 2>&1 ); stamp $b-$round $? $t; keep
done; done
cd $root/bundle
t=$(date +%s.%N); timeout 150 bin/cuda-conformance run --devices 0 --baseline $BL --report $R/new-d0.json.gz > $R/new-d0.log 2>&1; stamp new-d0 $? $t
for f in old-2 new-1 new-2 new-d0; do $C compare $R/old-1.json.gz $R/$f.json.gz > $R/compare-old-1-$f.md 2>&1; echo "compare old-1 $f rc=$? $(tail -n 1 $R/compare-old-1-$f.md)" | tee -a $R/times.txt; done
python3 - $R <<'PY'
import gzip,json,sys,os
for f in ('old-1','new-1','old-2','new-2','new-d0'):
    p=f'{sys.argv[1]}/{f}.json.gz'
    if not os.path.exists(p): continue
    r=json.load(gzip.open(p)); run=r['run']
    print(f, 'wall_ms', r['wall_ms'], 'processes', run['processes_started'], 'totals', r['totals'], 'phases', run.get('phases'))
PY
keep
