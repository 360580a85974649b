#!/usr/bin/env bash
# Two builds of the suite against each other under CPU load, on one GPU host (hosts differ by up to ~0.25x of idle,
# so only runs on one host compare): the full suite by A (before) and B (after), idle and with 4 busy loops per
# core, interleaved A B B A at 4x; with PHASE=claims instead B at 2x and `seeds --no-programs` by B as many times as
# fit, up to 10, starting no run that would end past $LIMIT s; with PHASE=claims-ab ten claims runs each by A
# and B, interleaved. Reports go to $OUT (B's as idle, load2x, load4x for
# scripts/load-claims-summary.py; A's prefixed a-), packed after every run so that what ran comes back even if the
# call is cut off. A benchmark, not a test: nothing here decides a verdict. Busy loops are this script's children,
# stopped by PID.
set -u
A=${A:-bundle/old/cuda-conformance}
B=${B:-bundle/bin/cuda-conformance}
export CUDA_CONFORMANCE_CASES=${CUDA_CONFORMANCE_CASES:-$(cd "$(dirname "$B")/../cases" && pwd)}
PHASE=${PHASE:-load}
LIMIT=${LIMIT:-400}
START=$(date +%s)
nvidia-smi -L; N=$(nproc); echo "cores $N"
source "$(dirname "$0")/busy-loops.sh"
R=/tmp/ab; mkdir -p $R/r
pack() { tar czf "$OUT/ab-$PHASE.tar.gz" -C /tmp ab; }
suite() { # label binary
  local t0; t0=$(date +%s%N)
  timeout 170 "$2" run --report "$R/$1.json.gz" > "$R/$1.out" 2> "$R/$1.err"
  echo "$1 rc=$? $(( ($(date +%s%N) - t0) / 1000000 )) ms: $(grep -a 'cases on' "$R/$1.err" | head -1 | cut -c1-60)"
  pack
}
if [ "$PHASE" = claims-ab ]; then
  # A and B's claims runs interleaved on one idle host: whether a claim's spread comes from the build or the host.
  mkdir -p $R/ra
  for i in $(seq 1 10); do
    [ $(( $(date +%s) - START )) -gt "$LIMIT" ] && { echo "stopped before pair $i"; break; }
    timeout 100 "$A" seeds --no-programs --report $R/ra/seeds-$i.json.gz > $R/ra/out-$i.txt 2> $R/ra/err-$i.txt; a=$?
    timeout 100 "$B" seeds --no-programs --report $R/r/seeds-$i.json.gz > $R/r/out-$i.txt 2> $R/r/err-$i.txt
    echo "pair $i: A rc=$a, B rc=$?"
  done
  pack
elif [ "$PHASE" = load ]; then
  suite a-idle "$A"; suite idle "$B"
  spin $((4*N)); suite a-load4x "$A"; suite load4x "$B"; suite load4x-2 "$B"; suite a-load4x-2 "$A"; unspin
else
  spin $((2*N)); suite load2x "$B"; unspin
  last=0
  for i in $(seq 1 10); do
    used=$(( $(date +%s) - START ))
    if [ $(( used + last * 12 / 10 )) -gt "$LIMIT" ]; then echo "stopped before claims run $i: $used s used"; break; fi
    t0=$(date +%s)
    timeout 100 "$B" seeds --no-programs --report $R/r/seeds-$i.json.gz > $R/r/out-$i.txt 2> $R/r/err-$i.txt
    rc=$?; last=$(( $(date +%s) - t0 )); echo "claims run $i rc=$rc wall=$last s"
  done
  pack
fi
