#!/usr/bin/env bash
# Session 4, call B on one H100: synccheck (2 shards), racecheck and initcheck (4 shards each) over the whole suite;
# then a measurement for issue 32: the after-fault sweep (25 own-process cases, each ~1 s waiting for its trap) run
# alone, and as 2 and 4 concurrent shards on the one GPU (wall time and verdicts). Every step shrinks to fit 570 s.
set -u
root=$PWD; B=$root/bundle; C=$B/bin/cuda-conformance; R=/tmp/b; mkdir -p $R; T0=$(date +%s)
left() { local l=$(( 570 - ($(date +%s) - T0) )); [ "$l" -lt "$1" ] && echo "$l" || echo "$1"; }
secs() { echo $(( $(date +%s) - $1 )); }
for spec in synccheck:2 racecheck:4 initcheck:4; do
  tool=${spec%%:*}
  SANITIZER_TIMEOUT=$(left 170) timeout $(left 180) bash scripts/sanitizer/suite-gpu.sh $B $R/san-$tool baselines $spec > $R/san-$tool.log 2>&1; echo "$tool: rc=$?" | tee -a $R/times.txt
  cat $R/san-$tool/walls.txt; grep -v "known finding:" $R/san-$tool/totals-*.txt | cut -c1-250 | head -20
  gzip -f $R/san-$tool/report-*.json 2>/dev/null
done
cd $B
for n in 1 2 4; do
  [ "$(left 100)" -lt 60 ] && break
  t0=$(date +%s.%N); pids=()
  for i in $(seq 1 $n); do
    if [ $n = 1 ]; then sh=(); else sh=(--shard $i/$n); fi
    timeout $(left 90) $C run api/after-fault --no-figures --reruns 0 "${sh[@]}" --report $R/af-$n-$i.json.gz > $R/af-$n-$i.log 2>&1 &
    pids+=($!)
  done
  wait "${pids[@]}"
  echo "after-fault in $n concurrent shard(s): $(python3 -c "print(round($(date +%s.%N)-$t0,1))") s; $(cat $R/af-$n-*.log | grep -a -h -m1 -o '[0-9]* pass' | paste -sd+)" | tee -a $R/times.txt
done
cat $R/times.txt
cd /tmp && tar czf $OUT/b.tar.gz b
