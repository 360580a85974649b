#!/bin/bash
# Session 12, call 2 (2 GPUs): A/B of 2050f80 (one peer serves the IPC cases; the executor's gate words and stamps
# kept between cases) against 2a31db5 (bundle-old), --devices 0 and all, two rounds interleaved, with phases; then
# the new build's ipc/ and gate-heavy areas under the sanitizers.
set -u
source scripts/gpu-call-prelude.sh n2
for round in 1 2; do
  for dv in 0 all; do
    for b in old new; do
      d=bundle; [ $b = old ] && d=bundle-old; name=$b-d$dv-$round
      t=$(date +%s.%N); ( cd $root/$d && CUDA_CONFORMANCE_PHASES=$R/phases-$name.txt timeout 150 bin/cuda-conformance run --devices $dv --baseline $BL --report $R/$name.json.gz > $R/$name.log 2>&1 ); stamp $name $? $t; keep
    done
  done
done
for n in new-d0-1 old-dall-1 new-dall-1 old-d0-2 new-d0-2 old-dall-2 new-dall-2; do
  $C compare $R/old-d0-1.json.gz $R/$n.json.gz > $R/compare-$n.md 2>&1; echo "compare old-d0-1 $n rc=$? $(tail -n 1 $R/compare-$n.md)" | tee -a $R/times.txt
done
for f in $R/phases-*.txt; do echo "$(basename $f): peers started $(grep -c 'peer started' $f), processes ready $(grep -c 'process ready' $f)"; done | tee -a $R/times.txt
python3 - $R <<'PY' | tee -a $R/times.txt
import gzip,json,sys,glob,os
for p in sorted(glob.glob(f'{sys.argv[1]}/*-d*.json.gz')):
    r=json.load(gzip.open(p)); run=r['run']
    print(os.path.basename(p)[:-8], 'complete', r['complete'], 'wall %.1f s' % (r['wall_ms']/1000), 'processes', run['processes_started'], 'phases', run['phases'], 'totals', r['totals'])
PY
keep
cd $root/bundle
for tool_filter in memcheck:ipc/ synccheck:ipc/peer racecheck:ipc/peer memcheck:events/ memcheck:streams/; do
  tool=${tool_filter%%:*}; f=${tool_filter#*:}; name=san-$tool-$(echo $f | tr '/' '_')
  t=$(date +%s.%N); timeout 200 bin/cuda-conformance run $f --sanitizer $tool --baseline $BL --report $R/$name.json.gz > $R/$name.log 2>&1; stamp $name $? $t
  grep -E "unintended|^report" $R/$name.log | tail -n 2 | tee -a $R/times.txt; keep
done
