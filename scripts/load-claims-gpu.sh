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
source "$(dirname "$0")/busy-loops.sh"
TIMEFORMAT="%R s wall, %U s user, %S s sys (parent and workers)"
suite() { # label
  { time timeout 150 $B run --report "$OUT/$1.json.gz" > "/tmp/$1.out" 2> "/tmp/$1.err"; } 2> "/tmp/$1.time"
  echo "$1: $(tail -1 /tmp/$1.time); $(grep -a 'cases on' /tmp/$1.err | head -1)"
}
summarise() {
  python3 "$(dirname "$0")/load-claims-summary.py" "$OUT" /tmp/r "$(dirname "$0")/reference.json.gz" > "$OUT/summary.md" 2>&1
  tar czf "$OUT/seeds10.tar.gz" -C /tmp r 2>/dev/null
  cp /tmp/idle.* /tmp/load2x.* /tmp/load4x.* /tmp/logs/ 2>/dev/null; tar czf "$OUT/logs.tar.gz" -C /tmp logs 2>/dev/null
}
mkdir -p /tmp/r /tmp/logs
suite idle; summarise
spin $((2*N)); suite load2x; unspin; summarise
spin $((4*N)); suite load4x
# The same area at 4x load with cudart's spinning waits and with blocking ones (no figures): what the waits cost.
for w in auto block; do
  t0=$(date +%s%N); $B run async-copy/ --no-figures --host-waits $w --report "/tmp/logs/ab-$w.json.gz" > /dev/null 2>&1
  echo "4x load, async-copy/, host waits $w: $(( ($(date +%s%N) - t0) / 1000000 )) ms"
done
unspin; summarise
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
