#!/usr/bin/env bash
# Where the suite's time goes under CPU load, area by area (issue 22): the full suite idle (the commit's verdicts),
# then the areas that grew most under 4x load (performance/, ipc/) with every trace kept, idle and with 4 busy
# loops per core, and one flaky case ten times at 4x. A benchmark, not a test. Busy loops are this script's
# children, stopped by PID. Everything lands in $OUT/areas.tar.gz (a device call returns few files).
set -u
B=${B:-bundle/bin/cuda-conformance}
N=$(nproc)
R=/tmp/areas; mkdir -p $R
nvidia-smi -L; echo "cores $N"; which perf strace 2>&1 | head -2
source "$(dirname "$0")/busy-loops.sh"
pack() { tar czf "$OUT/areas.tar.gz" -C /tmp areas; }
timed() { # label args...
  local l=$1; shift
  local t0; t0=$(date +%s%N)
  timeout 200 $B run "$@" --report "$R/$l.json.gz" > "$R/$l.out" 2> "$R/$l.err"
  echo "$l rc=$? $(( ($(date +%s%N) - t0) / 1000000 )) ms: $(grep -a 'cases on' "$R/$l.err" | head -1)"
}
timed idle
pack
for a in performance ipc; do timed "$a-idle" $a/ --no-figures --trace all; done
timed figures-idle performance/seed004 --trace all
spin $((4*N))
for a in performance ipc; do timed "$a-4x" $a/ --no-figures --trace all; done
timed figures-4x performance/seed004 --trace all
for i in $(seq 10); do timed "flake-$i" host-functions/callback-on-waiting-stream-gets-error --no-figures --trace all; done
unspin
pack
