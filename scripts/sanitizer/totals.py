#!/usr/bin/env python3
"""One compute-sanitizer tool's totals over the reports of its run (every shard of it), for the GPU check (issue 34).

usage: totals.py TOOL BASELINE REPORT [REPORT ...]

Prints one line: the cases, their verdicts, the errors the tool printed (intended and not), the timeouts and crashes,
and the fails that are not known findings: a case the BASELINE file (or any *.txt file of the BASELINE folder) lists as
`fail` or `crash` for the report's GPU, driver and runtime (its section `[GPU | driver D | runtime R]`, as `cuda-conformance
baseline bless` writes it) is a known finding when the case ends that way again; any other fail or crash is not. Then one line per case that is not clean. Exit 0 only when the tool is clean: every
shard's report is complete, no unintended error, no timeout, no crash, no flake, no fail besides the known findings.
An API error (`Program hit cudaError...`) in a case that ends as its known finding says what the verdict says (the
driver returned a code the case does not expect) and counts as intended; any other error in it does not.
Reports may be gzipped. Standard library only: it runs on the GPU host, which has no Rust.
"""
import glob
import gzip
import json
import os
import sys
from collections import Counter

FAILURES = {"fail", "timeout", "crash", "flake"}


def read(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt") as f:
        return json.load(f)


def known_fails(baseline_path, provenance):
    """The ids the baseline lists as `fail` or `crash` in the section of this GPU, driver and runtime (id -> that
    verdict), and the section's key."""
    driver = provenance.get("driver_release") or ""
    if driver in ("", "unknown"):
        driver = provenance.get("driver_version", "")
    key = f"{provenance.get('gpu_name', '')} | driver {driver} | runtime {provenance.get('runtime_version', '')}"
    files = sorted(glob.glob(os.path.join(baseline_path, "*.txt"))) if os.path.isdir(baseline_path) else [baseline_path]
    section, fails = None, {}
    for line in (line for path in files for line in open(path)):
        line = line.strip()
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
        elif line and not line.startswith("#") and section == key:
            words = line.split()
            if len(words) >= 2 and words[1] in ("fail", "crash"):
                fails[words[0]] = words[1]
    return key, fails


def main(argv):
    if len(argv) < 4:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    tool, baseline, paths = argv[1], argv[2], argv[3:]
    reports = []
    for p in paths:
        try:
            reports.append(read(p))
        except (OSError, ValueError) as e:
            print(f"{tool}: NOT CLEAN: cannot read {p}: {e}")
            return 1
    key, known = known_fails(baseline, reports[0]["provenance"])
    kinds, problems = Counter(), []
    intended = unintended = 0
    incomplete = [p for p, r in zip(paths, reports) if not r.get("complete", False)]
    for r in reports:
        san = (r.get("run") or {}).get("sanitizer") or {}
        if san.get("tool") not in (None, tool):
            problems.append(f"{san.get('tool')}: a report of another tool")
        for c in r["cases"]:
            kind = c["verdict"]["kind"]
            kinds[kind] += 1
            errors = c.get("sanitizer") or []
            # A known finding's wrong return code is also an API error the case did not expect: the tool reports
            # the same fact as the verdict, so it counts with the finding. Any other kind of error still counts.
            finding = known.get(c["id"]) == kind
            attributed = [e for e in errors if not e.get("intended") and finding and e["headline"].startswith("Program hit ")]
            intended += sum(1 for e in errors if e.get("intended")) + len(attributed)
            bad = [e for e in errors if not e.get("intended") and e not in attributed]
            unintended += len(bad)
            if bad:
                problems.append(f"{c['id']}: {len(bad)} unintended error(s), the first: {bad[0]['headline']}")
            elif kind in FAILURES and known.get(c["id"]) != kind:
                message = (c["verdict"].get("messages") or [""])[0]
                problems.append(f"{c['id']}: {kind}: {message[:200]}")
    known_seen = sorted(c["id"] for r in reports for c in r["cases"] if known.get(c["id"]) == c["verdict"]["kind"])
    unknown_fails = sum(1 for p in problems if ": fail:" in p)
    wall = max((r.get("wall_ms") or 0) for r in reports) / 1000
    clean = not problems and not incomplete
    print(
        f"{tool}: {'clean' if clean else 'NOT CLEAN'}: {sum(kinds.values())} cases in {len(reports)} report(s) "
        f"(longest {wall:.1f} s): {kinds['pass']} pass, {kinds['variant']} variant, "
        f"{kinds['not-supported']} not-supported, {kinds['fail']} fail, "
        f"{kinds['timeout']} timeout, {kinds['crash']} crash, {kinds['flake']} flake ({len(known_seen)} known finding(s) among the fails and crashes); errors printed by the tool: "
        f"{intended + unintended} ({intended} intended, {unintended} unintended); fails besides known findings: "
        f"{unknown_fails}"
    )
    for p in incomplete:
        print(f"  {p}: the report is not complete (the run was cut short)")
    for k in known_seen:
        print(f"  known finding: {k} ([{key}])")
    for p in problems:
        print(f"  {p}")
    return 0 if clean else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
