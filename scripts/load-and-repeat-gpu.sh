#!/usr/bin/env bash
# The GPU half of results/2026-11-25_scale_h100/, exactly as it ran (from the bundle, as bundle-scale/gpu-scale.sh):
# the full suite idle, `run performance/` ten times in a row (the seeds' claims), the full suite with 2x and then 4x
# as many busy loops as cores, the full suite idle again; then a summary of sizes, verdict differences against the
# idle run, the cases that slowed most, and each claim's verdict and ratio over the ten runs. Reports go to $OUT.
# A benchmark, not a test: nothing here decides a verdict. Busy loops are this script's children, stopped by PID.
set -u
B=bundle-scale/bin/cuda-conformance
nvidia-smi -L; nproc
N=$(nproc)
source "$(dirname "$0")/busy-loops.sh"
run() { # label report-path filter...
  local label=$1 rep=$2; shift 2
  local t0=$(date +%s%N)
  timeout 200 $B run "$@" --report "$rep" > "/tmp/$label.out" 2> "/tmp/$label.err"; local rc=$?
  local t1=$(date +%s%N)
  echo "$label rc=$rc wall=$(( (t1 - t0) / 1000000 )) ms; $(tail -1 /tmp/$label.err)"
}
run idle $OUT/idle.json.gz
mkdir -p /tmp/perf
for i in $(seq 0 9); do run perf$i /tmp/perf/perf$i.json.gz performance/; done
spin $((2*N)); run load2x $OUT/load2x.json.gz; unspin
spin $((4*N)); run load4x $OUT/load4x.json.gz; unspin
run idle2 /tmp/idle2.json.gz
tar czf $OUT/perf10.tar.gz -C /tmp perf
python3 - "$OUT" <<'PY'
import gzip, json, sys, glob, os
out = sys.argv[1]
def rd(p): return json.load(gzip.open(p, 'rt'))
for n in ["idle", "load2x", "load4x"]:
    p = f"{out}/{n}.json.gz"
    if not os.path.exists(p): print(n, "missing"); continue
    r = rd(p); cs = r["cases"]
    pas = [c for c in cs if c["verdict"]["kind"] == "pass"]
    print(n, "cases", len(cs), r["totals"], "wall_ms", r["wall_ms"], "run", {k: r["run"][k] for k in ("processes_started", "extra_runs", "traces")},
          "bytes", os.path.getsize(p), "plain", len(json.dumps(r, separators=(",", ":"))), "pass obs", sum(c.get("observations") is not None for c in pas))
base = {c["id"]: c for c in rd(f"{out}/idle.json.gz")["cases"]}
for n in ["load2x", "load4x"]:
    p = f"{out}/{n}.json.gz"
    if not os.path.exists(p): continue
    cs = rd(p)["cases"]
    diff = [(c["id"], base[c["id"]]["verdict"]["kind"], c["verdict"]["kind"]) for c in cs if c["id"] in base and (base[c["id"]]["verdict"]["kind"], base[c["id"]]["verdict"].get("variant")) != (c["verdict"]["kind"], c["verdict"].get("variant"))]
    print(n, "verdict differences vs idle:", diff[:10], len(diff))
    slow = sorted(((c["wall_ms"] - base[c["id"]]["wall_ms"], c["id"], base[c["id"]]["wall_ms"], c["wall_ms"], len(c.get("attempts", []))) for c in cs if c["id"] in base), reverse=True)[:8]
    for s in slow: print("  +%d ms %s (%d -> %d ms, attempts %d)" % s)
rows = {}
for p in sorted(glob.glob("/tmp/perf/perf*.json.gz")):
    r = rd(p)
    for c in (r.get("seeds") or {}).get("claims", []):
        rows.setdefault(c["id"], []).append("%s %.2f" % (c["verdict"], c["ratio"]) if c.get("ratio") else c["verdict"])
for k, v in rows.items(): print(k, " | ".join(v))
PY
