#!/usr/bin/env bash
# The timelines in a real browser: renders `cuda-conformance summary REPORT --format html` (every case's timeline,
# one lane per stream) in headless Chromium, and checks that the browser drew, for every case of the report's JSON,
# the lanes it should in order and every bar on its own lane, at the place its times give; that every standalone SVG
# (`cuda-conformance timeline`) parses and holds the same lanes and bars; then takes screenshots of the page and of
# the pipeline's timeline.
#
#   scripts/timeline-browser-test.sh OUT_DIR [REPORT]
#
# REPORT defaults to the committed H100 run of the seeds (results/2026-11-23_seeds-performance_h100/report.json.gz):
# real timelines need a GPU, and CI has none. A gzipped REPORT is read as it is. Writes OUT_DIR/timelines.html, OUT_DIR/dom.html (the page as rendered), OUT_DIR/svg/,
# OUT_DIR/page.png and OUT_DIR/pipeline.png. Needs chromium (Debian's package) and a built binary
# ($CUDA_CONFORMANCE_BIN, default target/debug/cuda-conformance).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
bin=${CUDA_CONFORMANCE_BIN:-$repo/target/debug/cuda-conformance}
out=${1:?usage: timeline-browser-test.sh OUT_DIR [REPORT]}
report=${2:-$repo/results/2026-11-23_seeds-performance_h100/report.json.gz}
mkdir -p "$out"
out=$(cd "$out" && pwd)
browser=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)
[ -n "$browser" ] || { echo "timeline-browser-test: no chromium on PATH (apt-get install chromium)" >&2; exit 1; }
[ -f "$report" ] || { echo "timeline-browser-test: no report at $report" >&2; exit 1; }

"$bin" summary "$report" --format html >"$out/timelines.html"
rm -rf "$out/svg"
"$bin" timeline "$report" --out "$out/svg" 2>/dev/null
flags=(--headless --no-sandbox --disable-gpu --disable-dev-shm-usage --no-first-run --hide-scrollbars
    --virtual-time-budget=5000)
timeout 120 "$browser" "${flags[@]}" --dump-dom "file://$out/timelines.html" >"$out/dom.html" 2>"$out/chromium.log"
timeout 120 "$browser" "${flags[@]}" --window-size=1200,1600 --screenshot="$out/page.png" \
    "file://$out/timelines.html" >>"$out/chromium.log" 2>&1
pipeline="$out/svg/performance_seed000-pipeline.svg"
if [ -f "$pipeline" ]; then
    size=$(python3 -c 'import re,sys; s=open(sys.argv[1]).read(); m=re.search(r"width=\"([0-9.]+)\" height=\"([0-9.]+)\"", s); print(f"{int(float(m[1]))},{int(float(m[2]))}")' "$pipeline")
    timeout 120 "$browser" "${flags[@]}" --window-size="$size" --screenshot="$out/pipeline.png" "file://$pipeline" \
        >>"$out/chromium.log" 2>&1
fi

python3 - "$report" "$out/dom.html" "$out/svg" "$out/page.png" "$out/pipeline.png" <<'PY'
import gzip, html.parser, json, os, sys, xml.etree.ElementTree as ET

report = json.load((gzip.open if sys.argv[1].endswith(".gz") else open)(sys.argv[1], "rt"))
dom = open(sys.argv[2], encoding="utf-8").read()
svg_dir, page_png, pipeline_png = sys.argv[3], sys.argv[4], sys.argv[5]
kinds = {"kernel", "gate", "copy-h2d", "copy-d2h", "copy-d2d", "copy-h2h", "memset", "graph"}
want = {}
for case in report["cases"]:
    # On the case since the readings left the observations; inside them in older reports.
    t = case.get("timeline") or (case.get("observations") or {}).get("timeline")
    if t:
        want[case["id"]] = t

class Drawn(html.parser.HTMLParser):
    """Per svg.timeline: its attributes, its lanes (name, background box) and bars (lane, kind, label, box)."""
    def __init__(self):
        super().__init__()
        self.svgs, self.svg, self.lane, self.body = {}, None, None, {}
    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "body":
            self.body = a
        elif tag == "svg" and "timeline" in (a.get("class") or ""):
            self.svg = {"attrs": a, "lanes": [], "bars": [], "marks": 0}
            self.svgs[a["data-case"]] = self.svg
        elif self.svg is None:
            return
        elif tag == "g" and a.get("class") == "lane":
            self.lane = {"name": a["data-name"], "index": int(a["data-lane"]), "box": None}
            self.svg["lanes"].append(self.lane)
        elif tag == "rect" and (a.get("class") or "").startswith("lane-bg") and self.lane is not None:
            self.lane["box"] = a.get("data-box")
        elif tag == "rect" and (a.get("class") or "").startswith("bar "):
            self.svg["bars"].append((int(a["data-lane"]), a["data-kind"], a["data-label"], a.get("data-box")))
        elif tag == "path" and (a.get("class") or "").startswith("mark "):
            self.svg["marks"] += 1
    def handle_endtag(self, tag):
        if tag == "svg":
            self.svg = None
        elif tag == "g":
            self.lane = None

def box(text):
    return [float(v) for v in text.split(",")] if text else None

p = Drawn()
p.feed(dom)
problems = []
if p.body.get("data-rendered") != "true":
    problems.append("the page's script did not run (no data-rendered on <body>)")
if set(p.svgs) != set(want):
    problems.append(f"timelines drawn for {sorted(set(p.svgs) ^ set(want))} differ from the report's")
bars_seen = 0
for case, t in want.items():
    s = p.svgs.get(case)
    if s is None:
        continue
    names = [l["name"] for l in s["lanes"]]
    if names != t["lanes"]:
        problems.append(f"{case}: lanes {names}, the report has {t['lanes']}")
    drawn = sorted((lane, kind, label) for lane, kind, label, _ in s["bars"])
    expected = sorted((b["lane"], b["kind"], b["label"]) for b in t["bars"])
    if drawn != expected:
        problems.append(f"{case}: bars {drawn[:6]}..., the report has {expected[:6]}...")
    if s["marks"] != len(t["marks"]):
        problems.append(f"{case}: {s['marks']} marks drawn, the report has {len(t['marks'])}")
    left, top, plot, height = (float(v) for v in s["attrs"]["data-plot"].split(","))
    span = max(t["span_ns"], 1)
    bars = sorted(t["bars"], key=lambda b: (b["lane"], b["kind"], b["label"]))
    for (lane, kind, label, b), want_bar in zip(sorted(s["bars"], key=lambda b: b[:3]), bars):
        bars_seen += 1
        b = box(b)
        lane_box = box(next((l["box"] for l in s["lanes"] if l["index"] == lane), None))
        if b is None or lane_box is None:
            problems.append(f"{case}: {label}: the browser reported no box")
            continue
        x, y, w, h = b
        if kind not in kinds:
            problems.append(f"{case}: {label}: unknown kind {kind}")
        if not (lane_box[1] <= y and y + h <= lane_box[1] + lane_box[3]):
            problems.append(f"{case}: {label} at y {y}..{y + h} is outside lane {lane} ({lane_box[1]}..{lane_box[1] + lane_box[3]})")
        if not (left - 0.5 <= x and x + w <= left + plot + 1.5 and w >= 0.99):
            problems.append(f"{case}: {label} at x {x}..{x + w} is outside the plot ({left}..{left + plot})")
        at = left + want_bar["start_ns"] / span * plot
        if abs(x - at) > 1.0:
            problems.append(f"{case}: {label} drawn at x {x}, its start gives {at:.2}")
    # The standalone file says the same.
    path = os.path.join(svg_dir, case.replace("/", "_") + ".svg")
    try:
        root = ET.parse(path).getroot()
        ns = "{http://www.w3.org/2000/svg}"
        lanes = [g.get("data-name") for g in root.iter(ns + "g") if g.get("class") == "lane"]
        nbars = sum(1 for r in root.iter(ns + "rect") if (r.get("class") or "").startswith("bar "))
        if lanes != t["lanes"] or nbars != len(t["bars"]):
            problems.append(f"{path}: lanes {lanes} and {nbars} bars, the report has {t['lanes']} and {len(t['bars'])}")
    except (OSError, ET.ParseError) as e:
        problems.append(f"{path}: {e}")
if p.body.get("data-boxes") != str(bars_seen + sum(len(s["lanes"]) for s in p.svgs.values())):
    problems.append(f"the script measured {p.body.get('data-boxes')} boxes")
if not os.path.getsize(page_png) > 1000:
    problems.append("no screenshot of the page")
if "performance/seed000-pipeline" in want and not (os.path.exists(pipeline_png) and os.path.getsize(pipeline_png) > 1000):
    problems.append("no screenshot of the pipeline's timeline")
if not want:
    problems.append("the report has no timeline to draw")
if problems:
    print("timeline-browser-test: FAILED\n  " + "\n  ".join(problems[:20]))
    sys.exit(1)
print(f"timeline-browser-test: ok: {len(want)} timelines, {bars_seen} bars on "
      f"{sum(len(t['lanes']) for t in want.values())} lanes drawn where their times put them; screenshots {page_png}"
      + (f", {pipeline_png}" if os.path.exists(pipeline_png) else ""))
PY
