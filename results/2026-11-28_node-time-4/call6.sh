#!/bin/bash
# Session 12, call 6 (one GPU): the session's last code, 3c3baf0: the full suite once (compared with the baseline),
# its summary's runner line, and ipc/ under memcheck (the peer's start was factored into Peer::run).
set -u
source scripts/gpu-call-prelude.sh n6
cd $root/bundle
t=$(date +%s.%N); timeout 150 bin/cuda-conformance run --baseline $BL --report $R/full.json.gz > $R/full.log 2>&1; stamp full $? $t
tail -n 4 $R/full.log >> $R/times.txt
$C summary $R/full.json.gz 2>&1 | grep '^| runner' | tee -a $R/times.txt
keep
t=$(date +%s.%N); timeout 150 bin/cuda-conformance run ipc/ --sanitizer memcheck --baseline $BL --report $R/ipc.json.gz > $R/ipc.log 2>&1; stamp ipc-memcheck $? $t
grep -E "unintended" $R/ipc.log | tail -n 1 | tee -a $R/times.txt
keep
