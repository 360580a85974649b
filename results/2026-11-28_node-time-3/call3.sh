#!/bin/bash
# Session 11, call 3 (one GPU): the registration leak, reproduced and fixed: the experiment's cases in one worker
# with the bundle before the fix (bundle-old/ = 44e9962) and after it (bundle/ = the commit under test); then the
# full suite once at the commit under test.
set -u
source scripts/gpu-call-prelude.sh c3
for b in old new; do
  d=$root/bundle; [ $b = old ] && d=$root/bundle-old
  for run in 1 2; do
    t=$(date +%s.%N); ( cd $d && timeout 60 bin/cuda-conformance run --cases $root/results/2026-11-28_node-time-3/leak-cases --no-figures --reruns 0 --report $R/leak-$b-$run.json.gz > $R/leak-$b-$run.log 2>&1 ); stamp leak-$b-$run $? $t
    grep -h "^fail\|^pass\|line .*expect\|could not be read\|total" $R/leak-$b-$run.log | head -8
  done
  # The cases after the registration alone: they pass without it.
  t=$(date +%s.%N); ( cd $d && timeout 60 bin/cuda-conformance run leak/b --cases $root/results/2026-11-28_node-time-3/leak-cases --no-figures --reruns 0 --report $R/leak-$b-b-alone.json.gz > $R/leak-$b-b-alone.log 2>&1 ); stamp leak-$b-b-alone $? $t
  keep
done
cd $root/bundle
t=$(date +%s.%N); timeout 150 bin/cuda-conformance run --devices 0 --baseline $BL --report $R/full.json.gz > $R/full.log 2>&1; stamp full $? $t
tail -n 3 $R/full.log
python3 - $R <<'PY'
import gzip,json,sys
r=json.load(gzip.open(f'{sys.argv[1]}/full.json.gz')); run=r['run']
print('full wall_ms', r['wall_ms'], 'processes', run['processes_started'], 'totals', r['totals'], 'phases', run.get('phases'))
PY
keep
