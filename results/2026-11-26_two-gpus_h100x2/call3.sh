set -u
root=$PWD; C=$root/bundle/bin/cuda-conformance; W=$root/gpu-work; mkdir -p $W; cd bundle
B=$root/baselines/nvidia-h100-80gb-hbm3_driver-580.159.04.txt
st() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }
( t=$(date +%s.%N); NVCC=/usr/local/cuda/bin/nvcc CUDART=repro/lib/libcudart.so.13 REPRO_CACHE=$W/cache timeout 300 bash build-reproducers.sh $C $W/repro 90 > $W/build.log 2>&1; echo "build all rc=$? $(st $t) s: $(tail -n1 $W/build.log)" >> $OUT/walls.txt ) &
b=$!
t=$(date +%s.%N); timeout -k 10 170 $C run --devices all --no-figures --baseline $B --report $OUT/full2.json.gz > $OUT/full2.log 2>&1; echo "full2 rc=$? $(st $t) s" >> $OUT/walls.txt
t=$(date +%s.%N); CUDA_DEVICE_MAX_CONNECTIONS=1 timeout -k 10 170 $C run --devices all --no-figures --baseline $B --report $OUT/cdmc1.json.gz > $OUT/cdmc1.log 2>&1; echo "cdmc1 rc=$? $(st $t) s" >> $OUT/walls.txt
t=$(date +%s.%N); timeout -k 10 100 $C run device-graph-launch/ --trace all --report $OUT/dgl-trace.json.gz > $OUT/dgl-trace.log 2>&1; echo "dgl trace rc=$? $(st $t) s" >> $OUT/walls.txt
wait $b
t=$(date +%s.%N); timeout -k 10 280 $C run --devices all --no-figures --executor both --repro-dir $W/repro/bin --report $OUT/both.json.gz > $OUT/both.log 2>&1; echo "both full rc=$? $(st $t) s" >> $OUT/walls.txt
$C compare $root/.device-full1.json.gz $OUT/full2.json.gz > $OUT/compare-1-2.md 2>&1
$C compare $OUT/full2.json.gz $OUT/cdmc1.json.gz > $OUT/compare-2-cdmc1.md 2>&1
$C compare $OUT/full2.json.gz $OUT/both.json.gz > $OUT/compare-2-both.md 2>&1
cat $OUT/walls.txt; grep -E "^total" $OUT/full2.log $OUT/cdmc1.log $OUT/both.log; grep -E "^executors" $OUT/both.log; head -5 $OUT/compare-*.md
tar czf $OUT/logs.tgz -C $W build.log
