//! Timelines as pictures: a case's [`Timeline`] as one self-contained SVG (one lane per stream, kernels and copies
//! as bars, gate openings and host functions as marks; styles inline, so the file stands alone), and a report as
//! one self-contained HTML page holding the seed claims and every case's timeline (`summary --format html`).
//!
//! Every element a test or a reader may want to find carries its data: `g.lane[data-lane][data-name]`,
//! `rect.bar[data-lane][data-kind][data-label]`, `path.mark[data-lane][data-kind]`. The page's script writes the box
//! the browser drew for each bar and lane into `data-box` (x,y,width,height), so a headless browser's DOM says what
//! was drawn where (`scripts/timeline-browser-test.sh`).

use super::escape::xml;
use crate::record::timeline::{BarKind, MarkKind, Timeline};
use crate::record::Report;
use std::fmt::Write as _;

const WIDTH: f64 = 1100.0;
const LEFT: f64 = 130.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 46.0;
const LANE: f64 = 28.0;
const BAR: f64 = 18.0;

/// Colours of the bar kinds (copies by direction), shared by the legend.
fn colour(kind: BarKind) -> &'static str {
    match kind {
        BarKind::Kernel => "#4c72b0",
        BarKind::Gate => "#bbbbbb",
        BarKind::CopyH2d => "#55a868",
        BarKind::CopyD2h => "#dd8452",
        BarKind::CopyD2d => "#8172b3",
        BarKind::CopyH2h => "#937860",
        BarKind::Memset => "#da8bc3",
        BarKind::Graph => "#64b5cd",
    }
}

/// The tick step for a span: 1, 2 or 5 times a power of ten, about eight ticks.
fn tick_step(span_ns: f64) -> f64 {
    let raw = span_ns / 8.0;
    let power = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0].into_iter().map(|m| m * power).find(|s| *s >= raw).unwrap_or(10.0 * power)
}

/// `1.5 ms`, `250 us`.
fn time_text(ns: f64) -> String {
    if ns >= 1e6 {
        format!("{} ms", trim(ns / 1e6))
    } else {
        format!("{} us", trim(ns / 1e3))
    }
}

fn trim(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// The timeline of case `id` as a standalone SVG document.
pub fn svg(id: &str, timeline: &Timeline) -> String {
    let plot = WIDTH - LEFT - RIGHT;
    let span = timeline.span_ns.max(1) as f64;
    let x = |ns: u64| LEFT + ns as f64 / span * plot;
    let lanes_bottom = TOP + LANE * timeline.lanes.len() as f64;
    let legend_y = lanes_bottom + 24.0;
    let height = legend_y + 16.0 + 16.0 * timeline.notes.len() as f64 + 8.0;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"timeline\" width=\"{WIDTH}\" height=\"{height}\" \
         viewBox=\"0 0 {WIDTH} {height}\" data-case=\"{}\" data-clock=\"{}\" data-lanes=\"{}\" data-bars=\"{}\" \
         data-marks=\"{}\" data-plot=\"{LEFT},{TOP},{plot},{}\" font-family=\"DejaVu Sans, sans-serif\" font-size=\"11\">",
        xml(id),
        xml(&timeline.clock),
        timeline.lanes.len(),
        timeline.bars.len(),
        timeline.marks.len(),
        lanes_bottom - TOP
    );
    out.push_str("<style>.lane-bg{fill:#f6f6f6}.lane-bg.odd{fill:#ececec}.bar{stroke:#333;stroke-width:0.5}\
        .bar.gate{fill-opacity:0.6;stroke-dasharray:3 2}.mark{stroke:#222;stroke-width:0.8}.mark.gate-open{fill:#d62728}\
        .mark.host-call{fill:#ffbf00}.tick{stroke:#ccc}.axis text,.lane text{fill:#333}.note{fill:#555}</style>\n");
    let clock = if timeline.clock == "events" {
        "device times from events recorded around each operation (cudaEventElapsedTime)"
    } else {
        "device times from the kernels' %globaltimer stamps"
    };
    let _ = writeln!(out, "<text x=\"4\" y=\"16\" font-size=\"13\" font-weight=\"bold\">{}</text>", xml(id));
    let _ = writeln!(out, "<text x=\"4\" y=\"30\" class=\"note\">{} — {}</text>", time_text(span), clock);
    // Time axis: ticks through every lane.
    out.push_str("<g class=\"axis\">\n");
    let step = tick_step(span);
    let mut t = 0.0;
    while t <= span + 1e-9 {
        let tx = LEFT + t / span * plot;
        let _ = writeln!(
            out,
            "<line class=\"tick\" x1=\"{tx:.1}\" y1=\"{:.1}\" x2=\"{tx:.1}\" y2=\"{lanes_bottom:.1}\"/>",
            TOP - 4.0
        );
        let _ =
            writeln!(out, "<text x=\"{tx:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{}</text>", TOP - 7.0, time_text(t));
        t += step;
    }
    out.push_str("</g>\n");
    for (i, name) in timeline.lanes.iter().enumerate() {
        let y = TOP + LANE * i as f64;
        let _ = writeln!(out, "<g class=\"lane\" data-lane=\"{i}\" data-name=\"{}\">", xml(name));
        let odd = if i % 2 == 1 { " odd" } else { "" };
        let _ =
            writeln!(out, "<rect class=\"lane-bg{odd}\" x=\"0\" y=\"{y:.1}\" width=\"{WIDTH}\" height=\"{LANE}\"/>");
        let _ = writeln!(out, "<text x=\"6\" y=\"{:.1}\">{}</text>", y + LANE / 2.0 + 4.0, xml(name));
        for bar in timeline.bars.iter().filter(|b| b.lane == i) {
            let (x0, x1) = (x(bar.start_ns), x(bar.end_ns));
            // At least a pixel, so that the shortest operation is still seen.
            let w = (x1 - x0).max(1.0);
            let by = y + (LANE - BAR) / 2.0;
            let _ = writeln!(
                out,
                "<rect class=\"bar {kind}\" data-lane=\"{i}\" data-kind=\"{kind}\" data-label=\"{label}\" x=\"{x0:.2}\" \
                 y=\"{by:.1}\" width=\"{w:.2}\" height=\"{BAR}\" fill=\"{fill}\"><title>{label}: {text} — {dur} ({start} → {end})</title></rect>",
                kind = bar.kind.word(),
                label = xml(&bar.label),
                fill = colour(bar.kind),
                text = xml(&bar.text),
                dur = time_text((bar.end_ns - bar.start_ns) as f64),
                start = time_text(bar.start_ns as f64),
                end = time_text(bar.end_ns as f64),
            );
            if w > 7.0 * bar.label.chars().count() as f64 + 6.0 {
                let _ = writeln!(
                    out,
                    "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"#fff\" pointer-events=\"none\">{}</text>",
                    x0 + 3.0,
                    by + BAR / 2.0 + 4.0,
                    xml(&bar.label)
                );
            }
        }
        for mark in timeline.marks.iter().filter(|m| m.lane == i) {
            let mx = x(mark.at_ns);
            let path = match mark.kind {
                // A triangle pointing down onto the lane: the moment the host let the stream go.
                MarkKind::GateOpen => format!("M{:.1},{:.1} l-5,-7 h10 z", mx, y + 8.0),
                // A diamond: a host function ran.
                MarkKind::HostCall => format!("M{mx:.1},{:.1} l5,6 l-5,6 l-5,-6 z", y + LANE - 13.0),
            };
            let kind = match mark.kind {
                MarkKind::GateOpen => "gate-open",
                MarkKind::HostCall => "host-call",
            };
            let _ = writeln!(
                out,
                "<path class=\"mark {kind}\" data-lane=\"{i}\" data-kind=\"{kind}\" d=\"{path}\"><title>{}: {}</title></path>",
                xml(&mark.label),
                time_text(mark.at_ns as f64)
            );
        }
        out.push_str("</g>\n");
    }
    // Legend: the kinds that appear.
    let _ = writeln!(out, "<g class=\"legend\">");
    let mut lx = LEFT;
    for kind in BarKind::ALL.iter().filter(|k| timeline.bars.iter().any(|b| b.kind == **k)) {
        let _ = writeln!(
            out,
            "<rect x=\"{lx:.1}\" y=\"{:.1}\" width=\"12\" height=\"12\" fill=\"{}\"/><text x=\"{:.1}\" y=\"{legend_y:.1}\">{}</text>",
            legend_y - 10.0,
            colour(*kind),
            lx + 16.0,
            kind.word()
        );
        lx += 30.0 + 7.0 * kind.word().len() as f64;
    }
    for (kind, shape) in [(MarkKind::GateOpen, "▼ gate opened"), (MarkKind::HostCall, "◆ host function")] {
        if timeline.marks.iter().any(|m| m.kind == kind) {
            let _ = writeln!(out, "<text x=\"{lx:.1}\" y=\"{legend_y:.1}\">{shape}</text>");
            lx += 110.0;
        }
    }
    out.push_str("</g>\n");
    for (i, note) in timeline.notes.iter().enumerate() {
        let _ = writeln!(
            out,
            "<text class=\"note\" x=\"4\" y=\"{:.1}\">{}</text>",
            legend_y + 18.0 + 16.0 * i as f64,
            xml(note)
        );
    }
    out.push_str("</svg>\n");
    out
}

/// A file name for case `id`'s picture: `performance/seed000-pipeline` → `performance_seed000-pipeline.svg`.
pub fn file_name(id: &str) -> String {
    format!("{}.svg", id.replace('/', "_"))
}

impl Report {
    /// Every case that has a timeline, with it, in report order.
    pub fn timelines(&self) -> impl Iterator<Item = (&str, &Timeline)> {
        self.cases.iter().filter_map(|c| Some((c.id.as_str(), c.timeline.as_ref()?)))
    }

    /// One self-contained HTML page: provenance, the seed claims (when the run has them) and every case's timeline
    /// with its measures. No network needed to view it.
    pub fn html(&self) -> String {
        let p = &self.provenance;
        let mut out = String::from("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">");
        let _ =
            write!(out, "<title>cuda-conformance: {} — driver {}</title>", xml(&p.gpu_name), xml(&p.driver_release));
        out.push_str("<style>body{font-family:'DejaVu Sans',sans-serif;margin:16px;color:#222}table{border-collapse:collapse;margin:8px 0}\
            td,th{border:1px solid #ccc;padding:3px 6px;font-size:12px;vertical-align:top}th{background:#eee}\
            .verdict-holds{background:#d8f0d8}.verdict-holds-partly{background:#fff3c4}.verdict-does-not-hold{background:#f8d0d0}\
            section.case{margin:18px 0;border-top:1px solid #ddd;padding-top:8px}.rule{font-size:12px;color:#555}</style></head>\n<body>\n");
        let _ = writeln!(
            out,
            "<h1>{} — driver {} (CUDA {}), runtime {}</h1>\n<p>commit <code>{}</code>, {} on <code>{}</code>, {} cases</p>",
            xml(&p.gpu_name),
            xml(&p.driver_release),
            xml(&p.driver_version),
            xml(&p.runtime_version),
            xml(&p.commit),
            xml(&p.started_at),
            xml(&p.hostname),
            self.cases.len()
        );
        if let Some(seeds) = &self.seeds {
            out.push_str("<h2>The seeds' performance claims</h2>\n<p>Figures judged against the bound measured in the same run: quality verdicts, never pass or fail.</p>\n");
            out.push_str("<table class=\"claims\"><tr><th>claim</th><th>seed's words</th><th>figure</th><th>bound</th><th>ratio</th><th>verdict</th><th>seed's program as written</th></tr>\n");
            for c in &seeds.claims {
                let shown =
                    |q: &Option<crate::record::claims::Quantity>| q.as_ref().map_or("—".to_owned(), |q| q.shown());
                let verdict = c.verdict.to_string();
                let _ = writeln!(
                    out,
                    "<tr data-claim=\"{}\" class=\"verdict-{}\"><td><code>{}</code><br>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td><b>{}</b></td><td>{}</td></tr>",
                    xml(&c.id),
                    verdict.replace(' ', "-"),
                    xml(&c.id),
                    xml(&c.claim),
                    xml(&c.words),
                    xml(&shown(&c.figure)),
                    xml(&shown(&c.bound)),
                    xml(&super::claims::claim_ratio_text(c)),
                    xml(&super::claims::verdict_text(c)),
                    xml(c.program.as_deref().unwrap_or("—"))
                );
            }
            out.push_str("</table>\n<h3>Bounds</h3>\n<table class=\"bounds\"><tr><th>bound</th><th>suite</th><th>C++ program</th><th>measured by</th></tr>\n");
            for b in &seeds.bounds {
                let shown = |v: Option<f64>| v.map_or("—".to_owned(), |v| format!("{v:.3} {}", b.unit));
                let _ = writeln!(
                    out,
                    "<tr><td>{}</td><td>{}</td><td>{}</td><td><code>{}</code></td></tr>",
                    xml(&b.what),
                    xml(&shown(b.suite)),
                    xml(&shown(b.program)),
                    xml(&b.source)
                );
            }
            out.push_str("</table>\n");
        }
        out.push_str("<h2>Timelines</h2>\n");
        for case in &self.cases {
            let Some(timeline) = &case.timeline else { continue };
            let _ = writeln!(
                out,
                "<section class=\"case\" data-case=\"{}\"><h3><code>{}</code> — {}</h3><p class=\"rule\">{}</p>",
                xml(&case.id),
                xml(&case.id),
                xml(&case.outcome()),
                xml(&case.rule)
            );
            if !case.measures.is_empty() {
                out.push_str("<table class=\"measures\"><tr><th>measure</th><th>of</th><th>value</th></tr>");
                for m in &case.measures {
                    let value =
                        m.value.map_or_else(|| m.why.clone().unwrap_or_default(), |v| format!("{v:.3} {}", m.unit));
                    let _ = write!(
                        out,
                        "<tr><td>{}</td><td><code>{}</code></td><td>{}</td></tr>",
                        xml(&m.name),
                        xml(&m.of),
                        xml(&value)
                    );
                }
                out.push_str("</table>\n");
            }
            out.push_str(&svg(&case.id, timeline));
            out.push_str("</section>\n");
        }
        // After layout, record what the browser drew where: the box of every lane background and bar.
        out.push_str(
            "<script>\nwindow.addEventListener('load', function () {\n  var n = 0;\n  \
             document.querySelectorAll('svg.timeline rect.bar, svg.timeline rect.lane-bg').forEach(function (r) {\n    \
             var b = r.getBBox();\n    r.setAttribute('data-box', [b.x, b.y, b.width, b.height].map(function (v) { return v.toFixed(2); }).join(','));\n    \
             n++;\n  });\n  document.body.setAttribute('data-boxes', String(n));\n  document.body.setAttribute('data-rendered', 'true');\n});\n</script>\n",
        );
        out.push_str("</body></html>\n");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::timeline::{Bar, Mark};

    fn timeline() -> Timeline {
        let bar = |lane, start_ns, end_ns, kind, label: &str| Bar {
            lane,
            start_ns,
            end_ns,
            kind,
            label: label.into(),
            text: format!("op {label} <&>"),
        };
        Timeline {
            clock: "events".into(),
            lanes: vec!["sh".into(), "sc".into()],
            bars: vec![
                bar(0, 0, 1_000_000, BarKind::CopyH2d, "a0"),
                bar(1, 1_000_000, 1_050_000, BarKind::Kernel, "k0"),
                bar(0, 1_000_000, 2_000_000, BarKind::Gate, "held"),
            ],
            marks: vec![Mark { lane: 0, at_ns: 2_000_000, kind: MarkKind::GateOpen, label: "held opened".into() }],
            span_ns: 2_000_000,
            notes: vec!["a note".into()],
        }
    }

    #[test]
    fn the_svg_has_a_lane_per_stream_and_a_bar_per_operation() {
        let s = svg("perf/one", &timeline());
        assert!(s.starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\""), "standalone: {s}");
        assert_eq!(s.matches("<g class=\"lane\"").count(), 2);
        assert_eq!(s.matches("<rect class=\"bar ").count(), 3);
        assert_eq!(s.matches("<path class=\"mark gate-open\"").count(), 1);
        assert!(s.contains("data-lanes=\"2\" data-bars=\"3\" data-marks=\"1\""));
        assert!(s.contains("op a0 &lt;&amp;&gt;"), "operation text is escaped");
        // a0 spans the first half of the plot: x from LEFT, width half the plot.
        let half = (WIDTH - LEFT - RIGHT) / 2.0;
        assert!(
            s.contains(&format!(
                "data-label=\"a0\" x=\"{LEFT:.2}\" y=\"{:.1}\" width=\"{half:.2}\"",
                TOP + (LANE - BAR) / 2.0
            )),
            "{s}"
        );
        assert!(s.contains(">a note</text>"));
        assert!(s.contains(">2 ms</text>"), "the axis ends at the span: {s}");
    }

    #[test]
    fn ticks_are_round_steps() {
        assert_eq!(tick_step(8e6), 1e6);
        assert_eq!(tick_step(9e6), 2e6);
        assert_eq!(tick_step(30e3), 5e3);
        assert_eq!(time_text(1_500_000.0), "1.5 ms");
        assert_eq!(time_text(250_000.0), "250 us");
        assert_eq!(file_name("performance/seed000-pipeline"), "performance_seed000-pipeline.svg");
    }

    #[test]
    fn the_page_holds_every_timeline_and_the_script_that_measures_it() {
        use crate::report::test_support::{report, result};
        let mut with = result("perf/one", crate::record::verdict::VerdictKind::Pass, None);
        with.timeline = Some(timeline());
        let without = result("perf/two", crate::record::verdict::VerdictKind::Pass, None);
        let r = report("GPU", 13000, vec![with, without]);
        assert_eq!(r.timelines().count(), 1);
        let page = r.html();
        assert_eq!(page.matches("<section class=\"case\"").count(), 1);
        assert!(page.contains("data-case=\"perf/one\""));
        assert!(page.contains("data-rendered"), "the script marks the page once it ran");
        assert!(
            !page.contains("http://")
                || page.matches("http://").count() == page.matches("xmlns=\"http://www.w3.org/2000/svg\"").count(),
            "no network"
        );
    }
}
