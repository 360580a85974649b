#!/usr/bin/env python3
"""Summary of scripts/load-claims-gpu.sh's reports (results/2026-11-25_load-claims_h100/): walls and phases of the
idle and loaded full suites, their verdict differences, the cases and areas that grew, and the seeds' claims per
run. Usage: load-claims-summary.py OUT_DIR SEEDS_DIR [REFERENCE_REPORT]. Reads gzipped reports; prints Markdown."""
import collections, glob, gzip, json, os, re, sys

out, seeds_dir = sys.argv[1], sys.argv[2]
reference = sys.argv[3] if len(sys.argv) > 3 else None


def read(path):
    return json.load(gzip.open(path, "rt"))


def outcome(c):
    v = c["verdict"]
    return (v["kind"], v.get("variant"), v.get("observed"))


runs = {n: read(f"{out}/{n}.json.gz") for n in ["idle", "load2x", "load4x"] if os.path.exists(f"{out}/{n}.json.gz")}
print("| run | wall (report: cases, then figures) | vs idle | cases end | vs idle | own-process phase (context waits) | figures | totals | processes |")
print("|---|---|---|---|---|---|---|---|---|")
idle = runs.get("idle")
phases = lambda r: (r.get("run") or {}).get("phases") or {}
for n, r in runs.items():
    p, q = phases(r), phases(idle) if idle else {}
    ratio = "%.2f×" % (r["wall_ms"] / idle["wall_ms"]) if idle else "—"
    cases_ratio = "%.2f×" % (p["cases_end_s"] / q["cases_end_s"]) if p.get("cases_end_s") and q.get("cases_end_s") else "—"
    print("| %s | %.1f s | %s | %.1f s | %s | %.1f s (%.1f s) | %.1f s | %s | %s |" % (
        n, r["wall_ms"] / 1000, ratio, p.get("cases_end_s", 0), cases_ratio, p.get("own_phase_end_s", 0),
        p.get("own_ready_wait_s", 0), p.get("figures_s") or 0, r["totals"], (r.get("run") or {}).get("processes_started")))
print("\nhost waits:", {n: (r.get("run") or {}).get("host_waits") for n, r in runs.items()})

if idle:
    base = {c["id"]: c for c in idle["cases"]}
    others = [(n, r) for n, r in runs.items() if n != "idle"]
    if reference and os.path.exists(reference):
        others.append(("reference " + os.path.basename(reference), read(reference)))
    for n, r in others:
        diff = [(c["id"], outcome(base[c["id"]]), outcome(c)) for c in r["cases"]
                if c["id"] in base and outcome(base[c["id"]]) != outcome(c)]
        missing = set(base) ^ {c["id"] for c in r["cases"]}
        print(f"\nverdicts, {n} against idle: {len(diff)} of {len(r['cases'])} differ; ids in one only: {sorted(missing)[:5]}")
        for d in diff[:10]:
            print("  ", d)
    for n, r in runs.items():
        if n == "idle":
            continue
        areas = collections.defaultdict(lambda: [0, 0])
        for c in r["cases"]:
            if c["id"] in base:
                a = c["id"].split("/")[0]
                areas[a][0] += base[c["id"]]["wall_ms"]
                areas[a][1] += c["wall_ms"]
        print(f"\n{n}: case-ms by area (idle → {n}):", ", ".join(
            "%s %d→%d" % (a, v[0], v[1]) for a, v in sorted(areas.items(), key=lambda x: -x[1][1])[:8]))
        grown = sorted(((c["wall_ms"] - base[c["id"]]["wall_ms"], c["id"], base[c["id"]]["wall_ms"], c["wall_ms"])
                        for c in r["cases"] if c["id"] in base), reverse=True)[:8]
        print(f"{n}: grown most:", "; ".join("%s %d→%d ms" % (i, a, b) for _, i, a, b in grown))

paths = sorted(glob.glob(f"{seeds_dir}/seeds-*.json.gz"), key=lambda p: int(re.findall(r"(\d+)", p)[-1]))
rows, walls = {}, []
for p in paths:
    try:
        r = read(p)
    except Exception as e:  # a run cut off mid-write
        print("unreadable", p, e)
        continue
    walls.append(r["wall_ms"])
    for c in (r.get("seeds") or {}).get("claims", []):
        s = c.get("samples") or {}
        cell = c["verdict"]
        if c.get("ratio") is not None:
            cell += " %.2f" % c["ratio"]
            m = s.get("middle")
            if s.get("ratio"):
                cell += " [%.2f–%.2f" % (s["ratio"]["min"], s["ratio"]["max"])
                cell += "; middle %.2f–%.2f]" % (m["min"], m["max"]) if m else "]"
        if s.get("straddles"):
            counts = collections.Counter(s["verdicts"])
            cell += " (" + ", ".join("%d %s" % (v, k) for k, v in counts.items()) + ")"
        rows.setdefault(c["id"], []).append(cell)
print(f"\nclaims: {len(walls)} runs of seeds --no-programs; report wall ms: {walls}")
print("| claim | " + " | ".join("run %d" % (i + 1) for i in range(len(walls))) + " | same verdict in all |")
print("|---|" + "---|" * len(walls) + "---|")
for k, v in rows.items():
    verdicts = {x.split(" ")[0] for x in v}
    print("| %s | %s | %s |" % (k, " | ".join(v), "yes" if len(verdicts) == 1 else "**no**"))
if paths:
    r = read(paths[0])
    for c in (r.get("seeds") or {}).get("claims", []):
        if c.get("samples"):
            print(f"rule, run 1, {c['id']}: {c['samples'].get('rule')}; ratios {c['samples'].get('ratios')}")
    print("first run, per case ms:", ", ".join("%s %d" % (c["id"].split("/")[-1], c["wall_ms"]) for c in r["cases"]))
    bad = [(p, c["id"], c["verdict"]["kind"]) for p in paths for c in read(p)["cases"]
           if c["verdict"]["kind"] not in ("pass", "variant", "not-supported")]
    print("cases not pass/variant/not-supported in the claims runs:", bad)
for n, r in runs.items():
    for c in (r.get("seeds") or {}).get("claims", []):
        pass
    claims = [(c["id"], c["verdict"]) for c in (r.get("seeds") or {}).get("claims", [])]
    print(f"claims in the {n} full suite: {claims}")
