#!/usr/bin/env python3
"""Compares the outcomes of one GPU host's runs for issue 33 (scripts/verify-ci-gpu.sh).

--libtest LOG --nextest LOG [--nextest LOG] [--report REPORT.json[.gz]]
    Every trial's outcome under libtest (`run-tests.sh`, what `cargo test` prints: `test NAME ... ok|FAILED|ignored`)
    and under each nextest log (`--status-level all`: `PASS [..] (n/N) crate::binary NAME`), keyed by binary and name;
    prints the counts and every trial whose outcome differs. With a report of `cuda-conformance run`, each case
    trial's outcome against its verdict (pass, variant, quality-warning, expected-fail: passed; not-supported,
    skipped: ignored; anything else: failed). Exit 1 on any difference.
--expectations PLAIN EXPECT SKIP FLAKE FAIL
    Two reports of the same suite, without and with the expectation file: SKIP is skipped with its line and never ran,
    FLAKE ran and carries its line (a flake, or a pass), FAIL is expected-fail with its line; every other case has the
    same outcome in both (a flake of the GPU aside, which is listed). Exit 1 otherwise.
"""
import gzip
import json
import re
import sys

PASSING = {"pass", "variant", "quality-warning", "expected-fail"}
IGNORED = {"not-supported", "skipped"}


def read_report(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return {c["id"]: c for c in json.load(f)["cases"]}


def libtest_outcomes(path):
    """{(binary, name): outcome} from the output of run-tests.sh (binaries announced as `===== tests/NAME`)."""
    out, binary = {}, None
    for line in open(path, errors="replace"):
        m = re.match(r"===== tests/(\S+)", line)
        if m:
            binary = m.group(1)
            continue
        m = re.match(r"test (.+?) \.\.\. (ok|FAILED|ignored)", line)
        if m and binary:
            word = {"ok": "passed", "FAILED": "failed", "ignored": "ignored"}[m.group(2)]
            # libtest-mimic pads the kind for alignment: `test [area]      area/case ... ok`.
            out[(binary, re.sub(r"^(\[[^\]]*\])\s+", r"\1 ", m.group(1).strip()))] = word
    return out


def nextest_outcomes(path):
    out = {}
    for line in open(path, errors="replace"):
        m = re.match(r"\s*(PASS|FAIL|SKIP|FLAKY|TIMEOUT|SIGSEGV|SIGABRT|SIGKILL|ABORT|LEAK|LEAK-FAIL)\s+(?:\[[^\]]*\]\s+)?(?:\([^)]*\)\s+)?(\S+)\s+(.+?)\s*$", line)
        if not m:
            continue
        status, binary_id, name = m.groups()
        binary = binary_id.split("::", 1)[1] if "::" in binary_id else binary_id
        word = {"PASS": "passed", "SKIP": "ignored", "FLAKY": "passed"}.get(status, "failed")
        out[(binary, name)] = word
    return out


def trial_of_verdict(kind):
    return "passed" if kind in PASSING else "ignored" if kind in IGNORED else "failed"


def compare_ways(argv):
    libtest, nextests, report = None, [], None
    it = iter(argv)
    for a in it:
        if a == "--libtest":
            libtest = next(it)
        elif a == "--nextest":
            nextests.append(next(it))
        elif a == "--report":
            report = next(it)
    ways = [("cargo test", libtest_outcomes(libtest))] + [(f"nextest {i + 1}", nextest_outcomes(p)) for i, p in enumerate(nextests)]
    bad = 0
    for name, outcomes in ways:
        counts = {}
        for word in outcomes.values():
            counts[word] = counts.get(word, 0) + 1
        print(f"{name}: {len(outcomes)} trials {dict(sorted(counts.items()))}")
    base_name, base = ways[0]
    for name, other in ways[1:]:
        common = set(base) & set(other)
        differ = sorted(k for k in common if base[k] != other[k])
        missing = sorted(k for k in base if k not in other)
        print(f"{base_name} vs {name}: {len(common)} trials in both, {len(differ)} differ, {len(missing)} only in {base_name}")
        for k in differ[:40]:
            print(f"  {k[0]} {k[1]}: {base[k]} vs {other[k]}")
        for k in missing[:10]:
            print(f"  only in {base_name}: {k[0]} {k[1]}")
        bad += len(differ) + len(missing)
    if report:
        cases = read_report(report)
        for name, outcomes in ways:
            differ = []
            for cid, c in cases.items():
                key = ("conformance", f"[{c['area']}] {cid}")
                if key in outcomes and outcomes[key] != trial_of_verdict(c["verdict"]["kind"]):
                    differ.append((cid, c["verdict"]["kind"], outcomes[key]))
            found = sum(1 for c in cases.values() if ("conformance", f"[{c['area']}] {c['id']}") in outcomes)
            print(f"run vs {name}: {found} of {len(cases)} cases are trials there, {len(differ)} differ")
            for d in differ[:40]:
                print(f"  {d[0]}: run {d[1]}, {name} {d[2]}")
            bad += len(differ)
    print("SAME" if bad == 0 else f"DIFFERENT ({bad})")
    return 1 if bad else 0


def compare_expectations(plain_path, expect_path, skip, flake, fail):
    plain, expect = read_report(plain_path), read_report(expect_path)
    problems = []
    s, fl, f = expect.get(skip), expect.get(flake), expect.get(fail)
    if not s or s["verdict"]["kind"] != "skipped" or not s.get("expectation", "").startswith("skip (") or s.get("observations"):
        problems.append(f"skip {skip}: {s and s['verdict']}")
    if not fl or fl["verdict"]["kind"] not in ("flake", "pass") or not fl.get("expectation", "").startswith("flake (") or not (fl.get("wall_ms", 0) > 0 or fl.get("attempts")):
        problems.append(f"flake {flake}: {fl and fl['verdict']}")
    if not f or f["verdict"]["kind"] != "expected-fail" or not f.get("expectation", "").startswith("fail ("):
        problems.append(f"fail {fail}: {f and f['verdict']}")
    print(f"plain run: {skip} {plain.get(skip, {}).get('verdict', {}).get('kind')}, {flake} {plain.get(flake, {}).get('verdict', {}).get('kind')}, {fail} {plain.get(fail, {}).get('verdict', {}).get('kind')}")
    for cid, c in ((skip, s), (flake, fl), (fail, f)):
        if c:
            print(f"with expectations: {cid}: {c['verdict']['kind']}: {c['verdict']['messages'][:1]} (attempts {len(c.get('attempts', []))})")
    others = [cid for cid in plain if cid not in (skip, flake, fail)]
    differ = [(cid, plain[cid]["verdict"]["kind"], expect.get(cid, {}).get("verdict", {}).get("kind")) for cid in others
              if plain[cid]["verdict"]["kind"] != expect.get(cid, {}).get("verdict", {}).get("kind")]
    print(f"other cases: {len(others)}, {len(differ)} differ between the two runs")
    for d in differ[:20]:
        print(f"  {d[0]}: {d[1]} vs {d[2]}")
    for p in problems:
        print(f"PROBLEM: {p}")
    print("AS DECLARED" if not problems and not differ else "NOT AS DECLARED")
    return 1 if problems or differ else 0


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--expectations":
        sys.exit(compare_expectations(*sys.argv[2:7]))
    sys.exit(compare_ways(sys.argv[1:]))
