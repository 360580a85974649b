#!/bin/bash
# Session 11, call 1 (one GPU): A/B of the cases of one env: sharing a process (and the cases with peers), interleaved
# old/new/old/new on one host (bundle-old/ = 44e9962, bundle/ = the commit under test), phases on every run; the
# grouped cases under compute-sanitizer; the full suite at a 15 ms gate delay (data for the next step, not a change).
set -u
source scripts/gpu-call-prelude.sh c1
for round in 1 2; do for b in old new; do
  d=$root/bundle; [ $b = old ] && d=$root/bundle-old
  t=$(date +%s.%N); ( cd $d && CUDA_CONFORMANCE_PHASES=$R/phases-$b-$round.txt timeout 150 bin/cuda-conformance run --devices 0 --baseline $BL --report $R/$b-$round.json.gz > $R/$b-$round.log 2>&1 ); stamp $b-$round $? $t; keep
done; done
for f in old-2 new-1 new-2; do $C compare $R/old-1.json.gz $R/$f.json.gz > $R/compare-old-1-$f.md 2>&1; echo "compare old-1 $f rc=$? $(tail -n 1 $R/compare-old-1-$f.md)" | tee -a $R/times.txt; done
keep
cd $root/bundle
for run in memcheck:ipc/peer memcheck:library/ memcheck:api/no-device memcheck:eager synccheck:ipc/peer racecheck:ipc/peer synccheck:library/; do
  tool=${run%%:*}; filter=${run#*:}; name=$tool-$(echo $filter | tr -c 'a-z0-9\n' '-')
  t=$(date +%s.%N); timeout 120 bin/cuda-conformance run $filter --sanitizer $tool --no-figures --reruns 0 --baseline $BL --report $R/$name.json.gz > $R/$name.log 2>&1; stamp $name $? $t
  tail -n 2 $R/$name.log; keep
done
t=$(date +%s.%N); timeout 150 bin/cuda-conformance run --devices 0 --gate-delay 15 --baseline $BL --report $R/gate15.json.gz > $R/gate15.log 2>&1; stamp gate15 $? $t
$C compare $R/new-1.json.gz $R/gate15.json.gz > $R/compare-new-1-gate15.md 2>&1; echo "compare new-1 gate15 rc=$? $(tail -n 1 $R/compare-new-1-gate15.md)" | tee -a $R/times.txt
python3 - $R <<'PY'
import gzip,json,sys,os
for f in ('old-1','new-1','old-2','new-2','gate15'):
    p=f'{sys.argv[1]}/{f}.json.gz'
    if not os.path.exists(p): continue
    r=json.load(gzip.open(p)); run=r['run']
    extra=sum(1 for c in r['cases'] for a in (c.get('attempts') or [])[1:] if a['why']=='written-delays')
    print(f, 'wall_ms', r['wall_ms'], 'processes', run['processes_started'], 'extra_runs', run.get('extra_runs'), 'written-delay runs', extra, 'totals', r['totals'], 'phases', run.get('phases'))
PY
for f in old-1 new-1; do echo "== $f"; python3 $root/scripts/phases-summary.py $R/phases-$f.txt --top 3 2>&1 | sed -n '1,22p'; done
keep
