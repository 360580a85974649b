#!/usr/bin/env bash
# Session 4, call F on one H100 (issue 33): after the list-time requirement check (6fff1cf), nextest from the bundle's
# archive over (1) the 73 cases `run` reported not-supported on this H100 (they must be skipped, not passed) and (2)
# the events/ and streams/ areas (unchanged verdicts); `--list --ignored` of the conformance binary.
set -u
root=$PWD; B=$root/bundle; R=/tmp/v; mkdir -p $R; T0=$(date +%s)
secs() { echo $(( $(date +%s) - $1 )); }
{ nvidia-smi -L; sed -n 2,4p $B/MANIFEST; } > $R/host.txt
( cd $B && tar xJf tests.tar.xz )
cd $B
t0=$(date +%s)
CUDA_CONFORMANCE_REQUIRE_GPU=1 timeout 200 nextest/run.sh --profile ci --status-level all --final-status-level none --no-input-handler -E "$(cat $root/gpu-work/ns.txt)" > $R/nextest-not-supported.log 2>&1
echo "nextest over the 73 not-supported cases: rc=$? $(secs $t0) s" | tee -a $R/times.txt
grep -a -E '^ *Summary' $R/nextest-not-supported.log | tee -a $R/times.txt
echo "of the 73: SKIP $(grep -a -c -E '^ *SKIP .*::conformance \[' $R/nextest-not-supported.log), PASS $(grep -a -c -E '^ *PASS' $R/nextest-not-supported.log)" | tee -a $R/times.txt
t0=$(date +%s)
CUDA_CONFORMANCE_REQUIRE_GPU=1 timeout 200 nextest/run.sh --profile ci --status-level all --final-status-level none --no-input-handler -E 'binary(=conformance) & (test(/^\[events\] /) | test(/^\[streams\] /))' > $R/nextest-sample.log 2>&1
echo "nextest over events/ and streams/: rc=$? $(secs $t0) s" | tee -a $R/times.txt
grep -a -E '^ *Summary' $R/nextest-sample.log | tee -a $R/times.txt
CARGO_MANIFEST_DIR=$B CUDA_CONFORMANCE_REQUIRE_GPU=1 tests/conformance --list --ignored --format terse > $R/list-ignored.txt 2>$R/list-ignored.err
echo "conformance --list --ignored: $(grep -c ': test' $R/list-ignored.txt) trials" | tee -a $R/times.txt
cd /tmp && tar czf $OUT/v.tar.gz v
