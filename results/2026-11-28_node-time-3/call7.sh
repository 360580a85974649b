#!/bin/bash
# Session 11, call 7 (one GPU): the full suite once at the commit under test (the figures' processes started ahead),
# with phases; compared here with call 4's run of c6eb690.
set -u
source scripts/gpu-call-prelude.sh c7
cd $root/bundle
t=$(date +%s.%N); CUDA_CONFORMANCE_PHASES=$R/phases.txt timeout 150 bin/cuda-conformance run --devices 0 --baseline $BL --report $R/full.json.gz > $R/full.log 2>&1; stamp full $? $t
python3 - $R <<'PY'
import gzip,json,sys
r=json.load(gzip.open(f'{sys.argv[1]}/full.json.gz')); run=r['run']
print('full wall_ms', r['wall_ms'], 'processes', run['processes_started'], 'totals', r['totals'], 'phases', run.get('phases'))
PY
keep
