#!/usr/bin/env bash
# Session 6, call N7: N6's own-process part, one filter per run (run takes one FILTER).
set -u
root=$PWD; B=$root/bundle; C=$B/bin/cuda-conformance; R=/tmp/n7; mkdir -p $R
BL=$B/baselines/nvidia-h100-80gb-hbm3_driver-580.159.04.txt
cd $B
i=0
for f in device-management/ execution/ pools/ versions-and-logs/ api/open-conditions/library-after-reset; do
  i=$((i+1)); t0=$(date +%s)
  timeout 40 $C run --no-figures --baseline $BL --report $R/own-$i.json.gz $f > $R/own-$i.log 2>&1
  echo "$f: rc=$? $(( $(date +%s) - t0 )) s" | tee -a $R/times.txt
done
python3 - $root/gpu-work/n5-full.json.gz $R/own-*.json.gz <<'PY' | tee -a $R/times.txt
import gzip, json, sys
old = {c['id']: c for c in json.load(gzip.open(sys.argv[1]))['cases']}
key = lambda c: (c['verdict']['kind'], c['verdict'].get('observed'))
n = 0; diff = []
for p in sys.argv[2:]:
    for c in json.load(gzip.open(p))['cases']:
        if c['id'] in old:
            n += 1
            if key(old[c['id']]) != key(c): diff.append((c['id'], key(old[c['id']]), key(c)))
print(n, 'cases compared with N5;', len(diff), 'differ in verdict or observation')
for d in diff: print('  ', d)
PY
cd /tmp && tar czf $OUT/n7.tar.gz n7
