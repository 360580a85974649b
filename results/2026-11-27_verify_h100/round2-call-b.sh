#!/usr/bin/env bash
# Session 3, round 2, call B on one H100: `cargo test` on the GPU (the bundle's test binaries), then synccheck (2
# shards), racecheck and initcheck (4 shards each) over the whole suite. Every step's limit shrinks to fit 570 s.
set -u
root=$PWD; B=$root/bundle; R=/tmp/t2; mkdir -p $R; T0=$(date +%s)
left() { local l=$(( 570 - ($(date +%s) - T0) )); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
secs() { echo $(( $(date +%s) - $1 )); }
[ -d $B/tests ] || ( cd $B && tar xJf tests.tar.xz )
t0=$(date +%s); timeout $(left 150) bash $B/run-tests.sh > $R/tests.log 2>&1; echo "run-tests: rc=$? $(secs $t0) s" | tee -a $R/times.txt
grep -a "test result" $R/tests.log | tee -a $R/times.txt
grep -a -E "^test .*FAILED|^    " $R/tests.log | grep -a FAILED | head -40 > $R/tests-failed.txt
cd $root
for spec in synccheck:2 racecheck:4 initcheck:4; do
  tool=${spec%%:*}
  SANITIZER_TIMEOUT=$(left 150) timeout $(left 160) bash scripts/sanitizer/suite-gpu.sh $B $R/san-$tool baselines $spec > $R/san-$tool.log 2>&1; echo "$tool: rc=$?" | tee -a $R/times.txt
  cat $R/san-$tool/walls.txt; grep -v "known finding:" $R/san-$tool/totals-*.txt | cut -c1-250 | head -20
  gzip -f $R/san-$tool/report-*.json 2>/dev/null
done
cat $R/times.txt
cd /tmp && tar czf $OUT/t2.tar.gz t2
