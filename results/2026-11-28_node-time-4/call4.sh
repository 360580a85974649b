#!/bin/bash
# Session 12, call 4 (4 GPUs): 383526f, which records how long at least one process started ahead was making its
# context (run.phases.starting_s): --devices 0 once, all twice, 0,1 once; bench of the workers-all-devices mode.
set -u
source scripts/gpu-call-prelude.sh n4
cd $root/bundle
for name_devices in d0:0 dall-1:all d01:0,1 dall-2:all; do
  name=${name_devices%%:*}; d=${name_devices#*:}
  t=$(date +%s.%N); timeout 150 bin/cuda-conformance run --devices $d --baseline $BL --report $R/$name.json.gz > $R/$name.log 2>&1; stamp $name $? $t; keep
done
for n in dall-1 d01 dall-2; do
  $C compare $R/d0.json.gz $R/$n.json.gz > $R/compare-$n.md 2>&1; echo "compare d0 $n rc=$? $(tail -n 1 $R/compare-$n.md)" | tee -a $R/times.txt
done
python3 - $R <<'PY' | tee -a $R/times.txt
import gzip,json,sys,glob,os
for p in sorted(glob.glob(f'{sys.argv[1]}/d*.json.gz')):
    r=json.load(gzip.open(p)); run=r['run']; ph=run['phases']
    print(os.path.basename(p)[:-8], 'complete', r['complete'], 'wall %.1f s' % (r['wall_ms']/1000), 'processes', run['processes_started'], 'starting %.1f s' % ph.get('starting_s', -1), 'phases', ph, 'totals', r['totals'])
PY
keep
t=$(date +%s.%N); timeout 150 bin/cuda-conformance bench --devices all --modes workers-all-devices > $R/bench.txt 2>&1; stamp bench $? $t
tail -n 12 $R/bench.txt >> $R/times.txt
keep
