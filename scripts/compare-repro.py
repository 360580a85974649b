#!/usr/bin/env python3
"""Compares what the reproducers observed with what the Rust executor observed, case by case.

usage: compare-repro.py RUST_REPORT.json[.gz] OBS_DIR JUDGED_RUST JUDGED_REPRO [--out FILE.md]

RUST_REPORT: a `run --trace all` report (every case keeps its observations). OBS_DIR: `<stem>.json` per case, each
a reproducer's stdout (its last line is the observations). JUDGED_*: the output of `cuda-conformance repro ""
--judge DIR` over the Rust observations (written out by this script with --write-rust DIR first) and over OBS_DIR:
one JSON line per case with the verdict the suite's own code gives.

What must agree (issue 19): the verdict and the variant/observe picks, every operation's code (and whether it ran),
every creation's code, buffer contents, graph topology, the order of host calls, the final synchronize. Host times,
stamps and wall times are compared only through the verdict; addresses and elapsed milliseconds not at all.
"""
import gzip
import json
import os
import sys


def load_report(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def stem(case_id):
    return case_id.replace("/", "__")


def last_json_line(path):
    with open(path, errors="replace") as f:
        lines = [l for l in f.read().splitlines() if l.strip()]
    for l in reversed(lines):
        if l.startswith("{"):
            return json.loads(l)
    raise ValueError("no JSON line")


# Values that differ between runs by nature: where memory lands, how long something took.
VOLATILE_VALUES = {"address", "elapsed-ms"}


def op_key(op):
    value = op.get("value")
    if isinstance(value, dict) and set(value) & VOLATILE_VALUES:
        value = "(volatile)"
    if isinstance(value, dict) and "snapshot" in value:
        value = {"snapshot": value["snapshot"].get("summary")}
    return (op["index"], op.get("code"), op.get("not_run") is None, json.dumps(value, sort_keys=True))


def contents_key(c):
    if c is None:
        return None
    return (c.get("words"), c.get("summary"), json.dumps(c.get("runs")), json.dumps(c.get("probes")))


def graph_key(g):
    nodes = [(n["kind"], n.get("label")) for n in g.get("nodes", [])]
    edges = sorted((nodes[a], nodes[b]) for a, b in g.get("edges", []) if a < len(nodes) and b < len(nodes))
    return (g["name"], g.get("null"), sorted(nodes, key=json.dumps), edges, g.get("error"))


def differences(rust, repro):
    out = []
    if len(rust["ops"]) != len(repro["ops"]):
        out.append(f"ops: {len(rust['ops'])} vs {len(repro['ops'])}")
    for a, b in zip(rust["ops"], repro["ops"]):
        ka, kb = op_key(a), op_key(b)
        if ka != kb:
            out.append(f"op {a['index']} `{a['text']}`: rust {ka[1:]} / repro {kb[1:]}"
                       + (f" (not run: {b.get('not_run')})" if b.get("not_run") else ""))
    da = [(d["name"], d.get("code")) for d in rust["decls"]]
    db = [(d["name"], d.get("code")) for d in repro["decls"]]
    if da != db:
        out.append(f"decls: rust {da} / repro {db}")
    ba = {b["name"]: (contents_key(b.get("contents")), b.get("read_error") is None) for b in rust["buffers"]}
    bb = {b["name"]: (contents_key(b.get("contents")), b.get("read_error") is None) for b in repro["buffers"]}
    for name in sorted(set(ba) | set(bb)):
        if ba.get(name) != bb.get(name):
            sa = ba.get(name, (None,))[0]
            sb = bb.get(name, (None,))[0]
            out.append(f"buffer {name}: rust {sa[1] if sa else sa} / repro {sb[1] if sb else sb}")
    ga = sorted(graph_key(g) for g in rust["graphs"])
    gb = sorted(graph_key(g) for g in repro["graphs"])
    if ga != gb:
        out.append(f"graphs: rust {ga} / repro {gb}")
    ha = [(h["op_index"], h["kind"], h.get("status")) for h in rust["host_calls"]]
    hb = [(h["op_index"], h["kind"], h.get("status")) for h in repro["host_calls"]]
    if ha != hb:
        out.append(f"host calls: rust {ha} / repro {hb}")
    if rust.get("final_sync") != repro.get("final_sync"):
        out.append(f"final sync: rust {rust.get('final_sync')} / repro {repro.get('final_sync')}")
    gates_a = [(g["name"], g.get("opened_by"), g.get("timed_out")) for g in rust["gates"]]
    gates_b = [(g["name"], g.get("opened_by"), g.get("timed_out")) for g in repro["gates"]]
    if gates_a != gates_b:
        out.append(f"gates: rust {gates_a} / repro {gates_b}")
    return out


def verdict_key(v):
    return (v.get("kind"), v.get("variant"), json.dumps(v.get("observed"), sort_keys=True))


def read_judged(path):
    judged = {}
    with open(path) as f:
        for line in f:
            line = line.strip()
            if line.startswith("{"):
                j = json.loads(line)
                judged[j["id"]] = j.get("verdict") or {"error": j.get("error")}
    return judged


def main(argv):
    if len(argv) >= 3 and argv[1] == "--write-rust":
        # compare-repro.py --write-rust DIR REPORT: the Rust observations as `<stem>.json`, for `repro --judge`.
        report = load_report(argv[3])
        os.makedirs(argv[2], exist_ok=True)
        n = 0
        for c in report["cases"]:
            if c.get("observations"):
                with open(os.path.join(argv[2], stem(c["id"]) + ".json"), "w") as f:
                    json.dump(c["observations"], f)
                n += 1
        print(f"wrote {n} observation files")
        return 0
    report_path, obs_dir, judged_rust, judged_repro = argv[1:5]
    out_path = argv[argv.index("--out") + 1] if "--out" in argv else None
    report = load_report(report_path)
    jr, jc = read_judged(judged_rust), read_judged(judged_repro)
    rows, agree, disagree, missing, not_run_by_rust = [], 0, 0, 0, 0
    for c in report["cases"]:
        cid = c["id"]
        rust = c.get("observations")
        if rust is None:
            not_run_by_rust += 1
            continue
        path = os.path.join(obs_dir, stem(cid) + ".json")
        try:
            repro = last_json_line(path)
        except (OSError, ValueError) as e:
            missing += 1
            rows.append((cid, [f"no observations from the reproducer: {e}"]))
            continue
        diffs = differences(rust, repro)
        va, vb = jr.get(cid), jc.get(cid)
        if va is None or vb is None or verdict_key(va) != verdict_key(vb):
            diffs.insert(0, f"verdict: rust {va and verdict_key(va)} / repro {vb and verdict_key(vb)}")
        if diffs:
            disagree += 1
            rows.append((cid, diffs))
        else:
            agree += 1
    lines = [
        f"cases in the report: {len(report['cases'])}; not run by the Rust executor (not supported): {not_run_by_rust}",
        f"compared: {agree + disagree + missing}; agree: {agree}; disagree: {disagree}; no reproducer output: {missing}",
        "",
    ]
    for cid, diffs in rows:
        lines.append(f"- `{cid}`")
        lines.extend(f"  - {d}" for d in diffs)
    text = "\n".join(lines) + "\n"
    print(text)
    if out_path:
        with open(out_path, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
