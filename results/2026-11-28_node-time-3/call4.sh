#!/bin/bash
# Session 11, call 4 (one GPU): the new case host-memory/copy-from-inside-a-registered-range-past-its-end through
# the Rust executor and as its C++ reproducer (compiled here with the host's nvcc), then under memcheck with the
# rest of host-memory/, and the full suite once at the commit under test.
set -u
source scripts/gpu-call-prelude.sh c4
id=host-memory/copy-from-inside-a-registered-range-past-its-end
cd $root/bundle
t=$(date +%s.%N); timeout 60 bin/cuda-conformance run $id --no-figures --trace all --report $R/case.json.gz > $R/case.log 2>&1; stamp case $? $t
grep -A4 "observed\|^pass\|^fail" $R/case.log | head -12
bin/cuda-conformance repro $id --out $R/repro > /dev/null 2>&1
( cd $R/repro && nvcc -std=c++17 -o case *.cu 2>&1 | tail -3 && ./case > $R/repro-run.txt 2>&1; echo "reproducer rc=$?" | tee -a $R/times.txt; tail -c 1500 $R/repro-run.txt )
t=$(date +%s.%N); timeout 120 bin/cuda-conformance run host-memory/ --sanitizer memcheck --no-figures --reruns 0 --baseline $BL --report $R/memcheck-host-memory.json.gz > $R/memcheck-host-memory.log 2>&1; stamp memcheck-host-memory $? $t
grep -h "unintended\|^total" $R/memcheck-host-memory.log
keep
t=$(date +%s.%N); timeout 150 bin/cuda-conformance run --devices 0 --baseline $BL --report $R/full.json.gz > $R/full.log 2>&1; stamp full $? $t
tail -n 3 $R/full.log
python3 - $R <<'PY'
import gzip,json,sys
r=json.load(gzip.open(f'{sys.argv[1]}/full.json.gz')); run=r['run']
print('full wall_ms', r['wall_ms'], 'processes', run['processes_started'], 'totals', r['totals'], 'phases', run.get('phases'))
for c in r['cases']:
    if c['id'].startswith('host-memory/copy-from-inside'): print(c['id'], c['verdict'])
PY
keep
