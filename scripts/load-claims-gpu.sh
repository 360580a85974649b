#!/usr/bin/env bash
# The GPU half of results/2026-11-25_load-claims_h100/, exactly as it ran (from the bundle, as
# bundle-claims-load/load-claims-gpu.sh): the full suite idle, with 2x and with 4x as many busy loops as cores (each
# under /usr/bin/time: wall, and the CPU time of the parent and its workers), then `seeds --no-programs` (the cases
# the claims read, with their samples) as many times as fit, up to 10, starting no run that would end past
# $LIMIT s. Then a summary: walls, phases, verdict differences between the runs, the cases that grew most, and the
# claims' verdicts per run. Reports go to $OUT, rewritten after every run so that what ran comes back even if the
# call is cut off. A benchmark, not a test: nothing here decides a verdict. Busy loops are this script's children,
# stopped by PID.
set -u
B=${B:-bundle-claims-load/bin/cuda-conformance}
LIMIT=${LIMIT:-280}
START=$(date +%s)
nvidia-smi -L; nproc
N=$(nproc)
PIDS=""
spin() { for i in $(seq "$1"); do ( while :; do :; done ) & PIDS="$PIDS $!"; done; }
unspin() { for p in $PIDS; do kill "$p" 2>/dev/null; done; wait 2>/dev/null; PIDS=""; }
suite() { # label
  /usr/bin/time -f "$1 time: %e s wall, %U s user, %S s sys (parent and workers)" -o "/tmp/$1.time" \
    timeout 150 $B run --report "$OUT/$1.json.gz" > "/tmp/$1.out" 2> "/tmp/$1.err"
  echo "$1 rc=$? $(cat /tmp/$1.time | tail -1); $(grep -a 'cases on' /tmp/$1.err | head -1)"
}
summarise() { python3 "$(dirname "$0")/load-claims-summary.py" "$OUT" /tmp/r > "$OUT/summary.md" 2>&1; tar czf "$OUT/seeds10.tar.gz" -C /tmp r 2>/dev/null; }
mkdir -p /tmp/r
suite idle; summarise
spin $((2*N)); sleep 1; suite load2x; unspin; summarise
spin $((4*N)); sleep 1; suite load4x; unspin; summarise
last=0
for i in $(seq 1 10); do
  used=$(( $(date +%s) - START ))
  if [ $(( used + last * 12 / 10 )) -gt "$LIMIT" ]; then echo "stopped before claims run $i: $used s used, the last took $last s"; break; fi
  t0=$(date +%s)
  timeout 100 $B seeds --no-programs --report /tmp/r/seeds-$i.json.gz > /tmp/r/out-$i.txt 2> /tmp/r/err-$i.txt
  rc=$?; last=$(( $(date +%s) - t0 ))
  echo "claims run $i rc=$rc wall=$last s"
done
summarise
cat "$OUT/summary.md"
