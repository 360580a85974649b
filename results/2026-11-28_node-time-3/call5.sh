#!/bin/bash
# Session 11, call 5 (a host of 4 GPUs): verdicts on 1, 2 and 4 GPUs at c6eb690 (the registration cleanup and the
# new host-memory case): --devices all three times, 0,1 once, 0 once, each compared with the --devices 0 run.
set -u
source scripts/gpu-call-prelude.sh c5
cd $root/bundle
for name_devices in d0:0 dall-1:all d01:0,1 dall-2:all dall-3:all; do
  name=${name_devices%%:*}; d=${name_devices#*:}
  t=$(date +%s.%N); timeout 150 bin/cuda-conformance run --devices $d --baseline $BL --report $R/$name.json.gz > $R/$name.log 2>&1; stamp $name $? $t; keep
done
for n in dall-1 d01 dall-2 dall-3; do
  $C compare $R/d0.json.gz $R/$n.json.gz > $R/compare-$n.md 2>&1; echo "compare d0 $n rc=$? $(tail -n 1 $R/compare-$n.md)" | tee -a $R/times.txt
done
python3 - $R <<'PY'
import gzip,json,sys,glob,os
for p in sorted(glob.glob(f'{sys.argv[1]}/d*.json.gz')):
    r=json.load(gzip.open(p)); run=r['run']
    print(os.path.basename(p)[:-8], 'complete', r['complete'], 'wall %.1f s' % (r['wall_ms']/1000), 'processes', run['processes_started'], 'totals', r['totals'])
PY
keep
