#!/usr/bin/env bash
# Session 3, round 2, call A on one H100: the full suite twice (--trace all) and compared, both executors over the
# new and changed areas, memcheck over the whole suite (2 shards). Every step's limit shrinks to fit 570 s.
set -u
root=$PWD; B=$root/bundle; C=$B/bin/cuda-conformance; R=/tmp/t1; mkdir -p $R; T0=$(date +%s)
left() { local l=$(( 570 - ($(date +%s) - T0) )); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
secs() { echo $(( $(date +%s) - $1 )); }
{ nvidia-smi -L; sed -n 2,4p $B/MANIFEST; nproc; } > $R/host.txt
( cd $B && tar xJf tests.tar.xz ) &
AREAS="api/null-in api/null-address api/bad-enum api/lifecycle textures/ small-copy/ graph-accessors/ library/ symbols/"
( cd $B && NVCC=/usr/local/cuda/bin/nvcc CUDART=repro/lib/libcudart.so.13 REPRO_CACHE=/tmp/repro-cache timeout 250 bash build-reproducers.sh "$C" $R/repro 90 $AREAS > $R/build.log 2>&1; echo "build rc=$?" >> $R/build.log ) &
b=$!
cd $B
for n in 1 2; do
  t0=$(date +%s); timeout $(left 150) $C run --trace all --report $R/full$n.json.gz > $R/full$n.log 2>&1
  echo "full $n: rc=$? $(secs $t0) s" | tee -a $R/times.txt
done
$C compare $R/full1.json.gz $R/full2.json.gz > $R/compare-full.txt 2>&1; echo "compare full1 full2: rc=$?" | tee -a $R/times.txt
wait $b; tail -2 $R/build.log; echo "reproducers: $(ls $R/repro/bin 2>/dev/null | wc -l)" | tee -a $R/times.txt
for a in $AREAS; do
  n=$(echo $a | tr -d /); t0=$(date +%s)
  timeout $(left 40) $C run $a --no-figures --executor both --repro-dir $R/repro/bin --report $R/both-$n.json.gz > $R/both-$n.log 2>&1
  echo "both $a: rc=$? $(secs $t0) s $(grep -a 'executors (rust' $R/both-$n.log | tail -1)" | tee -a $R/times.txt
done
cd $root; SANITIZER_TIMEOUT=$(left 160) timeout $(left 170) bash scripts/sanitizer/suite-gpu.sh $B $R/san baselines memcheck:2 > $R/san.log 2>&1; echo "memcheck: rc=$?" | tee -a $R/times.txt
cat $R/san/walls.txt; grep -v "known finding:" $R/san/totals-*.txt | cut -c1-250 | head -30
gzip -f $R/san/report-*.json 2>/dev/null
cat $R/times.txt; grep -a -m2 "cases on\|^total" $R/full1.log $R/full2.log; head -40 $R/compare-full.txt
cd /tmp && tar czf $OUT/t1.tar.gz --exclude=t1/repro t1
