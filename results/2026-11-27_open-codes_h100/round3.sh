#!/usr/bin/env bash
# Session 3, round 3 on one H100 (bundle of the commit that added the sweeps for open codes): the full suite once
# (--trace all), both executors over the changed sweeps, the four sanitizers over cases/api.case. Limits fit 570 s.
set -u
root=$PWD; B=$root/bundle; C=$B/bin/cuda-conformance; R=/tmp/t3; mkdir -p $R; T0=$(date +%s)
left() { local l=$(( 570 - ($(date +%s) - T0) )); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
secs() { echo $(( $(date +%s) - $1 )); }
{ nvidia-smi -L; sed -n 2,4p $B/MANIFEST; nproc; } > $R/host.txt
AREAS="api/bad-pitch api/bad-location api/no-device api/bad-copy-kind api/device-ordinal"
( cd $B && NVCC=/usr/local/cuda/bin/nvcc CUDART=repro/lib/libcudart.so.13 REPRO_CACHE=/tmp/repro-cache timeout 250 bash build-reproducers.sh "$C" $R/repro 90 $AREAS > $R/build.log 2>&1; echo "build rc=$?" >> $R/build.log ) &
b=$!
cd $B
t0=$(date +%s); timeout $(left 150) $C run --trace all --report $R/full.json.gz > $R/full.log 2>&1
echo "full: rc=$? $(secs $t0) s" | tee -a $R/times.txt
wait $b; tail -2 $R/build.log; echo "reproducers: $(ls $R/repro/bin 2>/dev/null | wc -l)" | tee -a $R/times.txt
for a in $AREAS; do
  n=$(echo $a | tr -d /); t0=$(date +%s)
  timeout $(left 40) $C run $a --no-figures --executor both --repro-dir $R/repro/bin --report $R/both-$n.json.gz > $R/both-$n.log 2>&1
  echo "both $a: rc=$? $(secs $t0) s $(grep -a 'executors (rust' $R/both-$n.log | tail -1)" | tee -a $R/times.txt
done
mkdir -p /tmp/sanb/cases; ln -sfn $B/bin /tmp/sanb/bin; cp $B/cases/api.case /tmp/sanb/cases/
cd $root
for spec in memcheck:2 synccheck:2 racecheck:4 initcheck:4; do
  tool=${spec%%:*}
  SANITIZER_TIMEOUT=$(left 100) timeout $(left 110) bash scripts/sanitizer/suite-gpu.sh /tmp/sanb $R/san-$tool baselines $spec > $R/san-$tool.log 2>&1; echo "$tool (api.case): rc=$?" | tee -a $R/times.txt
  cat $R/san-$tool/walls.txt; grep -v "known finding:" $R/san-$tool/totals-*.txt | cut -c1-250 | head -12
  gzip -f $R/san-$tool/report-*.json 2>/dev/null
done
cat $R/times.txt; grep -a -m2 "cases on\|^total" $R/full.log
grep -a "^fail\|^crash\|^timeout" $R/full.log | head -40
cd /tmp && tar czf $OUT/t3.tar.gz --exclude=t3/repro t3
