#!/usr/bin/env bash
# Session 4, call A on one H100: `cargo test` on the GPU (the bundle's test binaries), the full suite as root and
# as an unprivileged user (two full runs, compared: identical verdicts, and non-root = root), both executors over
# api/no-device and symbols/, memcheck over the whole suite (2 shards). Every step's limit shrinks to fit 570 s.
set -u
root=$PWD; B=$root/bundle; C=$B/bin/cuda-conformance; R=/tmp/a; mkdir -p $R; T0=$(date +%s)
left() { local l=$(( 570 - ($(date +%s) - T0) )); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
secs() { echo $(( $(date +%s) - $1 )); }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; sed -n 2,4p $B/MANIFEST; nproc; id; } > $R/host.txt
( cd $B && tar xJf tests.tar.xz )
AREAS="api/no-device symbols/"
( cd $B && NVCC=/usr/local/cuda/bin/nvcc CUDART=repro/lib/libcudart.so.13 REPRO_CACHE=/tmp/repro-cache timeout 200 bash build-reproducers.sh "$C" $R/repro 90 $AREAS > $R/build.log 2>&1; echo "build rc=$?" >> $R/build.log ) &
b=$!
cd $B
t0=$(date +%s); timeout $(left 200) bash run-tests.sh > $R/cargo-test.log 2>&1; echo "cargo test (run-tests.sh): rc=$? $(secs $t0) s" | tee -a $R/times.txt
grep -a "test result" $R/cargo-test.log | tee -a $R/times.txt
t0=$(date +%s); timeout $(left 150) $C run --trace all --report $R/full1.json.gz > $R/full1.log 2>&1
echo "full 1 (root): rc=$? $(secs $t0) s" | tee -a $R/times.txt
user=ccverify
id $user >/dev/null 2>&1 || useradd --create-home --shell /bin/bash $user
copy=/tmp/cc-nonroot-bundle; rm -rf $copy && cp -r $B $copy && chmod -R a+rX $copy
out=/tmp/cc-nonroot-out; rm -rf $out && mkdir -p $out && chown $user $out
t0=$(date +%s); timeout $(left 150) su -s /bin/bash $user -c "umask 027; cd $copy && bin/cuda-conformance run --trace all --report $out/full2.json.gz" > $R/full2.log 2>&1
echo "full 2 (as $user: $(id $user)): rc=$? $(secs $t0) s" | tee -a $R/times.txt
cp $out/full2.json.gz $R/ 2>/dev/null
$C compare $R/full1.json.gz $R/full2.json.gz > $R/compare-full.txt 2>&1; echo "compare full1 (root) full2 (non-root): rc=$?" | tee -a $R/times.txt
wait $b; tail -2 $R/build.log; echo "reproducers: $(ls $R/repro/bin 2>/dev/null | wc -l)" | tee -a $R/times.txt
for a in $AREAS; do
  n=$(echo $a | tr -d /); t0=$(date +%s)
  timeout $(left 60) $C run $a --no-figures --executor both --repro-dir $R/repro/bin --report $R/both-$n.json.gz > $R/both-$n.log 2>&1
  echo "both $a: rc=$? $(secs $t0) s $(grep -a 'executors (rust' $R/both-$n.log | tail -1)" | tee -a $R/times.txt
done
cd $root; SANITIZER_TIMEOUT=$(left 160) timeout $(left 170) bash scripts/sanitizer/suite-gpu.sh $B $R/san baselines memcheck:2 > $R/san.log 2>&1; echo "memcheck: rc=$?" | tee -a $R/times.txt
cat $R/san/walls.txt; grep -v "known finding:" $R/san/totals-*.txt | cut -c1-250 | head -30
gzip -f $R/san/report-*.json 2>/dev/null
cat $R/times.txt; grep -a -m2 "cases on\|^total" $R/full1.log $R/full2.log; head -30 $R/compare-full.txt
grep -a -E "^test .* FAILED$" $R/cargo-test.log | head -40
cd /tmp && tar czf $OUT/a.tar.gz --exclude=a/repro a
