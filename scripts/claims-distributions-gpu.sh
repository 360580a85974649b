#!/usr/bin/env bash
# The GPU half of results/2026-11-25_claims-distributions_h100/, exactly as it ran (from the bundle, as
# bundle-claims-dist/claims-distributions-gpu.sh): `seeds --no-programs` ten times in a row (the cases the claims
# read, with their `samples:`), then each claim's verdict and ratio interval per run. It starts no run that would
# end past 215 s (it says so), and rewrites the table and the reports' tarball after every run, so that what ran
# comes back even if the call is cut off. Reports go to $OUT.
set -u
B=${B:-bundle-claims-dist/bin/cuda-conformance}
nvidia-smi -L
mkdir -p /tmp/r
cat > /tmp/table.py <<'PY'
import gzip, json, sys, glob, re
def rd(p): return json.load(gzip.open(p, 'rt'))
paths = sorted(glob.glob("/tmp/r/seeds-*.json.gz"), key=lambda p: int(re.findall(r"(\d+)", p)[-1]))
rows, walls = {}, []
for p in paths:
    r = rd(p)
    walls.append(r["wall_ms"])
    for c in (r.get("seeds") or {}).get("claims", []):
        s = c.get("samples") or {}
        sr = s.get("ratio")
        cell = c["verdict"]
        if c.get("ratio") is not None:
            cell += " %.2f" % c["ratio"]
            if sr: cell += " [%.2f–%.2f]" % (sr["min"], sr["max"])
        if s.get("straddles"): cell += " (straddles)"
        rows.setdefault(c["id"], []).append(cell)
print("runs:", len(paths), "report wall ms:", walls)
print("| claim | " + " | ".join("run %d" % (i + 1) for i in range(len(paths))) + " |")
print("|---|" + "---|" * len(paths))
for k, v in rows.items(): print("| %s | %s |" % (k, " | ".join(v)))
r = rd(paths[0])
print("first run, per case: " + ", ".join("%s %d ms" % (c["id"], c["wall_ms"]) for c in r["cases"]))
bad = [(p, c["id"], c["verdict"]["kind"]) for p in paths for c in rd(p)["cases"] if c["verdict"]["kind"] not in ("pass", "variant", "not-supported")]
print("cases not pass/variant/not-supported:", bad)
PY
summarise() { tar czf "$OUT/seeds10.tar.gz" -C /tmp r; python3 /tmp/table.py > "$OUT/table.md" 2>&1; }
start=$(date +%s); last=0
for i in $(seq 1 10); do
  used=$(( $(date +%s) - start ))
  if [ $(( used + last * 13 / 10 )) -gt 215 ]; then echo "stopped before run $i: $used s used, the last run took $last s"; break; fi
  t0=$(date +%s)
  timeout 100 $B seeds --no-programs --report /tmp/r/seeds-$i.json.gz > /tmp/r/out-$i.txt 2> /tmp/r/err-$i.txt
  rc=$?
  last=$(( $(date +%s) - t0 ))
  echo "run $i rc=$rc wall=$last s"
  summarise
done
grep -A14 "seed claims" /tmp/r/out-1.txt
cat "$OUT/table.md"
