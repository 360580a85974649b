#!/usr/bin/env bash
# Session 4, calls G and H on one H100 (issue 33) at 61453dd: one whole run of the suite's test binaries by
# cargo-nextest from the bundle's archive with the shipped `ci` profile (NEXTEST_RUN names it), in one piece.
set -u
root=$PWD; B=$root/bundle; R=/tmp/g; mkdir -p $R; T0=$(date +%s)
secs() { echo $(( $(date +%s) - $1 )); }
run=${NEXTEST_RUN:-3}
{ nvidia-smi -L; sed -n 2,4p $B/MANIFEST; } > $R/host-$run.txt
[ -d $B/tests ] || ( cd $B && tar xJf tests.tar.xz )
cd $B
t0=$(date +%s)
CUDA_CONFORMANCE_REQUIRE_GPU=1 timeout 575 nextest/run.sh --profile ci --status-level all --final-status-level none --no-input-handler > $R/nextest-$run.log 2>&1
echo "nextest --profile ci run $run: rc=$? $(secs $t0) s" | tee -a $R/times.txt
grep -a -E '^ *Summary' $R/nextest-$run.log | tee -a $R/times.txt
echo "stream-priority cases passed: $(grep -a -c -E '^ *PASS .*\[(priorities|graph-priorities|stream-identity)\]' $R/nextest-$run.log)" | tee -a $R/times.txt
gzip -f $R/nextest-$run.log
cd /tmp && tar czf $OUT/g$run.tar.gz g
