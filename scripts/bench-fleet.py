#!/usr/bin/env python3
"""The fleet merge at scale: makes N synthetic host reports of the full suite and merges them with `cuda-conformance
fleet`, printing the merge's wall time and peak memory (a benchmark, not a test: nothing here decides a verdict).

    scripts/bench-fleet.py [--hosts 10000] [--dir DIR] [--bin target/release/cuda-conformance] [--keep]

Every host is the committed full H100 run (results/2026-11-25_consolidation_h100/report-83ca549.json.gz, 386 cases),
written compact (passing cases without their trace, as `run` writes it) and gzipped, one file per Slurm array task,
with a node name and GPU UUID of its own, and realistic deviations:
  - a fifth of the hosts are another GPU model (H200), so the majority is voted per model;
  - 1 host in 97 shows another variant of one case, 1 in 499 fails a case (with its trace kept);
  - 1 in 211 ran with CUDA_DEVICE_MAX_CONNECTIONS=1 (a matrix column and a majority of its own);
  - 1 in 1009 could not run (no GPU), 1 in 1499 is incomplete (killed mid-run), 1 in 2003 never reported, and one
    task reported twice.
The merge is `fleet DIR --tasks N --json --markdown --html`, timed with its peak resident memory (ru_maxrss of the
child). Generation is not timed.
"""

import argparse
import copy
import gzip
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BASE = os.path.join(REPO, "results/2026-11-25_consolidation_h100/report-83ca549.json.gz")


def dumps(value):
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hosts", type=int, default=10000)
    ap.add_argument("--dir", help="where the reports go (default: a temporary folder, removed after)")
    ap.add_argument("--bin", default=os.path.join(REPO, "target/release/cuda-conformance"))
    ap.add_argument("--keep", action="store_true", help="keep the generated reports")
    args = ap.parse_args()
    if not os.access(args.bin, os.X_OK):
        sys.exit(f"bench-fleet: no binary at {args.bin} (cargo build --release, or --bin)")

    base = json.load(gzip.open(BASE, "rt"))
    for c in base["cases"]:
        if c["verdict"]["kind"] == "pass":
            c["observations"] = None
    base["run"]["traces"] = "non-pass"
    cases = base.pop("cases")
    case_json = [dumps(c) for c in cases]
    variant_at = next(i for i, c in enumerate(cases) if c["verdict"]["kind"] == "variant")
    pass_at = next(i for i, c in enumerate(cases) if c["verdict"]["kind"] == "pass" and c["id"].startswith("events/"))

    out = args.dir or tempfile.mkdtemp(prefix="bench-fleet-")
    os.makedirs(out, exist_ok=True)
    started = time.monotonic()
    written = 0
    for i in range(args.hosts):
        if i % 2003 == 5:
            continue  # never reported
        top = copy.deepcopy(base)
        p = top["provenance"]
        p["node"] = p["hostname"] = f"gpu{i:05d}"
        p["gpu_uuid"] = f"GPU-{i:08x}-0000-0000-0000-000000000000"
        p["task"] = {"scheduler": "slurm", "job_id": "9000", "array_job_id": "9000", "array_task_id": i}
        if i % 5 == 4:
            p["gpu_name"] = "NVIDIA H200"
        if i % 211 == 7:
            p["semantic_environment"]["CUDA_DEVICE_MAX_CONNECTIONS"] = "1"
        body = case_json
        if i % 97 == 3 or i % 499 == 11:
            body = list(case_json)
            if i % 97 == 3:
                c = copy.deepcopy(cases[variant_at])
                c["verdict"]["variant"] = "other-" + str(c["verdict"]["variant"])
                body[variant_at] = dumps(c)
            if i % 499 == 11:
                c = copy.deepcopy(cases[pass_at])
                c["verdict"]["kind"] = "fail"
                c["verdict"]["messages"] = ["line 9: a synthetic failure"]
                body[pass_at] = dumps(c)
        if i % 1009 == 9:
            top["complete"] = False
            top["could_not_run"] = "cannot run the suite: no CUDA-capable device is detected"
            body = []
        elif i % 1499 == 13:
            top["complete"] = False
            body = body[: len(body) // 3]
        text = dumps(top)[:-1] + ',"cases":[' + ",".join(body) + "]}"
        data = gzip.compress(text.encode(), compresslevel=1, mtime=0)
        names = [f"task-{i:05d}.json.gz"] + ([f"task-{i:05d}-again.json.gz"] if i == 42 else [])
        for name in names:
            with open(os.path.join(out, name), "wb") as f:
                f.write(data)
            written += 1
    gen = time.monotonic() - started
    size = sum(os.path.getsize(os.path.join(out, n)) for n in os.listdir(out))
    print(f"generated {written} reports ({size / 1e6:.0f} MB gzipped) in {gen:.1f} s under {out}", flush=True)

    merged = out.rstrip("/") + "-merged"
    os.makedirs(merged, exist_ok=True)
    cmd = [args.bin, "fleet", out, "--tasks", str(args.hosts), "--json", os.path.join(merged, "fleet.json"),
           "--markdown", os.path.join(merged, "fleet.md"), "--html", os.path.join(merged, "matrix.html")]
    t0 = time.monotonic()
    run = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.monotonic() - t0
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(run.stderr.strip().splitlines()[-1] if run.stderr.strip() else "(no headline)")
    print(f"fleet merge of {written} reports: {wall:.1f} s wall, peak memory {peak_kib / 1024:.0f} MiB, "
          f"exit status {run.returncode}, {os.cpu_count()} cores")
    if not (args.keep or args.dir):
        shutil.rmtree(out)
    shutil.rmtree(merged)
    # Exit 2 (missing, could-not-run and incomplete tasks) is what this synthetic fleet must give.
    sys.exit(0 if run.returncode == 2 else 1)


if __name__ == "__main__":
    main()
