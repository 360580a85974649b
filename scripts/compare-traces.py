#!/usr/bin/env python3
"""Compares cuda-conformance JSON reports case by case against the first (the reference).

    scripts/compare-traces.py REFERENCE.json OTHER.json [OTHER.json ...]   (Markdown on stdout; exit 1 on a verdict
    difference; a report may be gzipped, as the committed ones under results/ are)

Same verdict: the same kind and variant (what the suite judges). Same observation: the same `observe`
alternatives (behaviour the docs leave open, recorded, never judged). Same trace: the same return code for every
declaration and operation and the same non-timing observations (graph nodes and edges, buffers, gates, host calls,
kernel launches, notes); fields that are times (`*_ns`, stamps, elapsed) are left out, they differ on every run.
"""
import gzip
import json
import sys

TIMEY = {"stamps", "start_ns", "end_ns", "wall_ns", "stamp_origin_ns", "watchdog_fired_ns"}


def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if k not in TIMEY and not k.endswith("_ns") and "elapsed" not in k}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x


def verdict(case):
    v = case["verdict"]
    return (v["kind"], v.get("variant"))


def observed(case):
    return case["verdict"].get("observed")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    reports = [(p, json.load((gzip.open if p.endswith(".gz") else open)(p, "rt"))) for p in sys.argv[1:]]
    ref_path, ref = reports[0]
    ref_cases = {c["id"]: c for c in ref["cases"]}
    print("| report | runtime | driver (reported) | cudart | call forms | kernels | totals |")
    print("|---|---|---|---|---|---|---|")
    for path, r in reports:
        p = r["provenance"]
        k = p.get("kernel_image", {})
        totals = ", ".join(f"{n} {kind}" for kind, n in sorted(r["totals"].items()))
        driver = p["driver_version"] + (f" ({p['driver_version_reported']})" if p.get("driver_version_reported") else "")
        print(f"| `{path.split('/')[-1]}` | {p['runtime_version']} | {driver} | {p['cudart_link']} | "
              f"{p.get('call_forms', '?')} | {k.get('compiler', '?')}, PTX {k.get('ptx_isa', '?')}, "
              f"{k.get('architectures', '?')} | {totals} |")
    status = 0
    for path, r in reports[1:]:
        cases = {c["id"]: c for c in r["cases"]}
        missing = sorted(set(ref_cases) ^ set(cases))
        verdict_diff = [i for i in ref_cases if i in cases and verdict(cases[i]) != verdict(ref_cases[i])]
        observed_diff = [i for i in ref_cases if i in cases and i not in verdict_diff
                         and observed(cases[i]) != observed(ref_cases[i])]
        trace_diff = [i for i in ref_cases if i in cases and i not in verdict_diff
                      and strip(cases[i].get("observations")) != strip(ref_cases[i].get("observations"))]
        same = len(ref_cases) - len(verdict_diff) - len(missing)
        print(f"\n## `{path.split('/')[-1]}` against `{ref_path.split('/')[-1]}`\n")
        print(f"- {len(cases)} cases; the same verdict (kind and variant) on {same} of {len(ref_cases)}")
        print(f"- verdicts differ: {len(verdict_diff)}; cases in only one report: {len(missing)}")
        for i in verdict_diff:
            print(f"  - `{i}`: {verdict(ref_cases[i])} → {verdict(cases[i])}: {cases[i]['verdict']['messages'][:1]}")
        for i in missing:
            print(f"  - `{i}`: only in {'the reference' if i in ref_cases else 'this report'}")
        print(f"- same verdict, another `observe` alternative recorded: {len(observed_diff)}")
        for i in observed_diff:
            why = [m for m in cases[i]["verdict"]["messages"] if "observed" in m][:1]
            print(f"  - `{i}`: {observed(ref_cases[i])} → {observed(cases[i])} ({'; '.join(why)})")
        print(f"- same verdict, another non-timing trace (return codes, graphs, buffers, notes): {len(trace_diff)}")
        for i in trace_diff[:20]:
            print(f"  - `{i}`")
        unsupported = [c for c in r["cases"] if c["verdict"]["kind"] == "not-supported"]
        print(f"- not-supported here: {len(unsupported)}")
        for c in unsupported:
            print(f"  - `{c['id']}`: {c['verdict']['messages'][:1]}")
        if verdict_diff or missing:
            status = 1
    sys.exit(status)


if __name__ == "__main__":
    main()
