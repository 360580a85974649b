#!/usr/bin/env bash
# Session 5, call P1 on one H100: the runner's sweep groups (one process for api/no-device, one prelude for
# api/after-fault). Two full runs (compared with each other), the after-fault and no-device rows compared with the
# last session's report (each row as a case of its own), and the times.
set -u
root=$PWD; B=$root/bundle; C=$B/bin/cuda-conformance; R=/tmp/p1; mkdir -p $R; T0=$(date +%s)
left() { local l=$(( 560 - ($(date +%s) - T0) )); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
secs() { echo $(( $(date +%s) - $1 )); }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; sed -n 2,4p $B/MANIFEST; nproc; } > $R/host.txt
cd $B
for n in 1 2; do
  t0=$(date +%s); timeout $(left 200) $C run --trace all --report $R/full$n.json.gz > $R/full$n.log 2>&1
  echo "full $n: rc=$? $(secs $t0) s" | tee -a $R/times.txt
done
$C compare $R/full1.json.gz $R/full2.json.gz > $R/compare-12.txt 2>&1; echo "compare full1 full2: rc=$?" | tee -a $R/times.txt
$C compare $root/gpu-work/prev.json.gz $R/full1.json.gz > $R/compare-prev.txt 2>&1; echo "compare prev full1: rc=$?" | tee -a $R/times.txt
python3 - $root/gpu-work/prev.json.gz $R/full1.json.gz $R/full2.json.gz <<'PY' | tee $R/rows.txt
import gzip, json, sys
def load(p):
    r = json.load(gzip.open(p)); return r, {c['id']: c for c in r['cases']}
prev, P = load(sys.argv[1])
for path in sys.argv[2:]:
    r, N = load(path)
    print(path, 'wall_ms', r['wall_ms'], 'processes', r['run']['processes_started'], 'extra', r['run']['extra_runs'], r['totals'])
    for sweep in ('api/after-fault/', 'api/no-device/'):
        ids = [i for i in N if i.startswith(sweep)]
        same = 0
        for i in ids:
            a = P.get(i); b = N[i]
            ca = [o.get('code') for o in (a.get('observations') or {}).get('ops', [])] if a else None
            cb = [o.get('code') for o in (b.get('observations') or {}).get('ops', [])]
            if a and a['verdict']['kind'] == b['verdict']['kind'] and ca == cb: same += 1
            else: print('  DIFF', i, a and a['verdict']['kind'], ca, b['verdict']['kind'], cb)
        print(' ', sweep, len(ids), 'rows,', same, 'with the same verdict and codes as before;', sum(N[i]['wall_ms'] for i in ids), 'ms (before', sum(P[i]['wall_ms'] for i in ids if i in P), 'ms)')
PY
cat $R/times.txt; grep -a -m3 "cases on\|^total" $R/full1.log; head -20 $R/compare-12.txt; head -30 $R/compare-prev.txt
cd /tmp && tar czf $OUT/p1.tar.gz p1
