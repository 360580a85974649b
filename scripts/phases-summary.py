#!/usr/bin/env python3
"""Where a run's time went inside its workers, from a CUDA_CONFORMANCE_PHASES file (harness/src/exec/phases.rs).

Usage: scripts/phases-summary.py PHASES.txt [--top N] [--start-window MS]

Prints, over every case line: the milliseconds per phase (sum, median, the case at the 90th percentile), the cases
that took longest with their largest phase, and how the cases that overlapped a process start compare with the
cases that did not, per phase: the share of a case's cost the host's process starts may explain. A start lasts from
the runner's `process start pid N` line to the child's `process ready pid N` line; a start with no ready line (a
process killed before it was ready, a sanitizer's child, a file written before the ready lines) lasts
--start-window milliseconds (default 400: a start alone took 0.29-0.38 s on an H100 host). The runner writes its
start lines between cases, so a start's instant alone never falls inside one. Reads what the file holds; judges
nothing.
"""
import argparse
import re
import statistics
import sys

EVENT = re.compile(r"process (start|ready)(?: pid (\d+))?")


def parse(path):
    cases, starts = [], []
    try:
        f = open(path)
    except OSError as e:
        sys.exit(f"{path}: {e.strerror}")
    with f:
        for number, line in enumerate(f, 1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) < 2:
                sys.exit(f"{path}:{number}: expected TIME ID PHASE=MS ... or TIME # EVENT, found {line.strip()!r}")
            try:
                at = float(parts[0])
            except ValueError:
                sys.exit(f"{path}:{number}: expected a time in milliseconds first, found {parts[0]!r}")
            if parts[1] == "#":
                event = EVENT.match(" ".join(parts[2:]))
                if event:
                    starts.append((event.group(1), event.group(2), at))
                continue
            if len(parts) < 3:
                sys.exit(f"{path}:{number}: expected TIME ID PHASE=MS ..., found no phase in {line.strip()!r}")
            phases = {}
            for item in parts[2:]:
                name, sep, value = item.partition("=")
                if not sep:
                    sys.exit(f"{path}:{number}: expected PHASE=MS, found {item!r}")
                phases[name] = phases.get(name, 0.0) + float(value)
            cases.append({"at": at, "id": parts[1], "phases": phases, "total": sum(phases.values())})
    return cases, starts


def start_intervals(events, window):
    """(from, to) in milliseconds for each process start: to its ready line, else `window` long."""
    ready = {pid: at for kind, pid, at in events if kind == "ready" and pid}
    return sorted((at, ready.get(pid, at + window) if pid else at + window)
                  for kind, pid, at in events if kind == "start")


def main():
    args = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    args.add_argument("phases")
    args.add_argument("--top", type=int, default=15)
    args.add_argument("--start-window", type=float, default=400.0)
    a = args.parse_args()
    cases, events = parse(a.phases)
    starts = start_intervals(events, a.start_window)
    if not cases:
        sys.exit(f"{a.phases}: no case lines")
    total = sum(c["total"] for c in cases)
    print(f"{len(cases)} case runs, {total / 1000:.1f} s in all; {len(starts)} process starts")
    names = []
    for c in cases:
        names.extend(n for n in c["phases"] if n not in names)
    print(f"{'phase':<14} {'sum s':>8} {'share':>6} {'median ms':>10} {'p90 ms':>8}")
    for name in names:
        values = sorted(c["phases"].get(name, 0.0) for c in cases)
        s = sum(values)
        p90 = values[min(len(values) - 1, int(0.9 * len(values)))]
        print(f"{name:<14} {s / 1000:>8.2f} {s / total:>6.1%} {statistics.median(values):>10.2f} {p90:>8.2f}")
    print(f"\nthe {a.top} longest case runs:")
    for c in sorted(cases, key=lambda c: -c["total"])[: a.top]:
        phase, ms = max(c["phases"].items(), key=lambda kv: kv[1])
        print(f"  {c['total']:>8.1f} ms  {c['id']}  (most: {phase} {ms:.1f} ms)")
    overlapped = [c for c in cases if any(f < c["at"] + c["total"] and c["at"] < t for f, t in starts)]
    alone = [c for c in cases if c not in overlapped]
    for label, group in (("overlapping a process start", overlapped), ("with no start during them", alone)):
        if group:
            times = [c["total"] for c in group]
            print(f"{len(group):>5} case runs {label}: median {statistics.median(times):.2f} ms, "
                  f"sum {sum(times) / 1000:.1f} s")
    if overlapped and alone:
        print(f"{'phase':<14} {'beside a start':>15} {'alone':>8}   (mean ms per case run)")
        for name in names:
            means = [sum(c["phases"].get(name, 0.0) for c in g) / len(g) for g in (overlapped, alone)]
            print(f"{name:<14} {means[0]:>15.2f} {means[1]:>8.2f}")


if __name__ == "__main__":
    main()
