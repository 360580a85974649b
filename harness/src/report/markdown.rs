//! The Markdown summary of a report (`cuda-conformance summary REPORT`).

use crate::record::verdict::VerdictKind;
use crate::record::{CaseResult, Report};
use std::fmt::Write as _;

/// `0→1 peer access, rank 0, native atomics`: what the runtime says about one link (`?` for a refused query).
fn link_text(l: &crate::record::PeerLink) -> String {
    let yes_no = |v: Option<bool>, what: &str| match v {
        Some(true) => what.to_owned(),
        Some(false) => format!("no {what}"),
        None => format!("{what} ?"),
    };
    let rank = l.performance_rank.map_or("?".to_owned(), |r| r.to_string());
    format!(
        "{}→{} {}, rank {rank}, {}",
        l.from,
        l.to,
        yes_no(l.can_access_peer, "peer access"),
        yes_no(l.native_atomics, "native atomics")
    )
}

impl Report {
    /// A short Markdown summary for people: provenance, verdicts by area, and every case that did not simply pass
    /// (variants with the behaviour this driver showed, quality warnings, failures, unsupported cases).
    pub fn markdown(&self) -> String {
        let p = &self.provenance;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "# {} — driver {} (CUDA {}), runtime {}\n",
            p.gpu_name, p.driver_release, p.driver_version, p.runtime_version
        );
        if let Some(reason) = &self.could_not_run {
            let _ = writeln!(out, "**The suite could not run on this host**: {reason}\n");
        }
        let _ = writeln!(out, "| | |\n|---|---|");
        let _ = writeln!(
            out,
            "| GPU | {} (`{}`), compute capability {}, {} SMs |",
            p.gpu_name, p.gpu_uuid, p.compute_capability, p.multiprocessors
        );
        let _ = writeln!(
            out,
            "| concurrency | concurrentKernels {}, asyncEngineCount {}, stream priorities {:?} |",
            p.concurrent_kernels, p.async_engine_count, p.stream_priority_range
        );
        let _ = writeln!(
            out,
            "| build | commit `{}`, bindings from CUDA {}, cudart linked {} |",
            p.commit, p.bindings_cudart_version, p.cudart_link
        );
        if p.devices.len() > 1 {
            let devices: Vec<String> =
                p.devices.iter().map(|d| format!("{} {} (`{}`)", d.ordinal, d.name, d.uuid)).collect();
            let _ = writeln!(out, "| devices | {} |", devices.join(", "));
            let links: Vec<String> = p.peer_links.iter().map(link_text).collect();
            let _ = writeln!(out, "| links | {} |", links.join("; "));
        }
        if !p.kernel_image.compiler.is_empty() {
            let k = &p.kernel_image;
            let _ = writeln!(out, "| kernels | {}, PTX ISA {}, {} |", k.compiler, k.ptx_isa, k.architectures);
        }
        if let Some(reported) = &p.driver_version_reported {
            let _ = writeln!(
                out,
                "| driver assumed | CUDA {} (the driver reports {reported}: CUDA_CONFORMANCE_ASSUME_DRIVER); calls: {} |",
                p.driver_version, p.call_forms
            );
        }
        let env: Vec<String> = p.cuda_environment.iter().map(|(k, v)| format!("`{k}={v}`")).collect();
        let _ = writeln!(
            out,
            "| environment | {} |",
            if env.is_empty() { "(no CUDA_* variables)".to_owned() } else { env.join(", ") }
        );
        let settings: Vec<String> = p.semantic_environment.iter().map(|(k, v)| format!("{k} = {v}")).collect();
        if !settings.is_empty() {
            let _ = writeln!(out, "| in effect | {} |", settings.join("; "));
        }
        let _ = writeln!(
            out,
            "| run | {} on `{}`, {} cases, {:.1} s{} |",
            p.started_at,
            p.hostname,
            self.cases.len(),
            self.wall_ms as f64 / 1000.0,
            if self.complete { "" } else { ", INCOMPLETE" }
        );
        let t = &p.task;
        if t.scheduler != "none" || (!p.node.is_empty() && p.node != p.hostname) {
            let ids = [("job", t.job_id.clone()), ("array job", t.array_job_id.clone())]
                .into_iter()
                .chain(
                    [("array task", t.array_task_id), ("completion index", t.completion_index), ("rank", t.proc_id)]
                        .map(|(k, v)| (k, v.map(|v| v.to_string()))),
                )
                .filter_map(|(k, v)| Some(format!("{k} {}", v?)))
                .collect::<Vec<_>>()
                .join(", ");
            let _ = writeln!(
                out,
                "| task | {} {ids} on node `{}`; CUDA_VISIBLE_DEVICES {} |",
                t.scheduler,
                p.node,
                t.cuda_visible_devices.as_deref().map_or("unset".into(), |v| format!("`{v}`"))
            );
        }
        if let Some(tool) = &p.serialising {
            let _ = writeln!(out, "| serialised by | {tool}: the cases that need asynchrony are not-supported |");
        }
        if let Some(s) = self.run.as_ref().and_then(|r| r.sanitizer.as_ref()) {
            let _ = writeln!(out, "| sanitizer | {} |", s.line());
        }
        if let Some(run) = &self.run {
            let wall_s = self.wall_ms as f64 / 1000.0;
            let _ = writeln!(
                out,
                "| runner | {}; gate delay {} ms (confirmed at 300 ms where it may decide); {} re-run(s); {} process(es) \
                 started{}, {} extra run(s); devices: {}{}{} |",
                if run.process_per_case { "one process per case" } else { "worker processes" },
                run.gate_delay_ms,
                run.reruns,
                run.processes_started,
                // The host makes one context at a time: close to the wall, the process count bounded the run.
                run.phases
                    .as_ref()
                    .and_then(|p| p.starting_s)
                    .map(|s| format!(" (at least one starting during {s:.1} s of the {wall_s:.1} s run)"))
                    .unwrap_or_default(),
                run.extra_runs,
                run.devices.join("; "),
                run.shard.as_deref().map(|s| format!("; shard {s}")).unwrap_or_default(),
                run.baseline.as_deref().map(|b| format!("; baseline `{b}`")).unwrap_or_default(),
            );
            if let Some(line) = run.phases.as_ref().and_then(|p| p.unshared_time(run.devices.len(), wall_s)) {
                let _ = writeln!(out, "| unshared time | {line} |");
            }
        }
        out.push('\n');
        let kinds = &self.columns()[..];
        let _ = write!(out, "| area |");
        for k in kinds {
            let _ = write!(out, " {k} |");
        }
        let _ = write!(out, "\n|---|");
        for _ in kinds {
            let _ = write!(out, "---|");
        }
        out.push('\n');
        for (area, counts) in self.by_area.iter().chain([(&"**total**".to_owned(), &self.totals)]) {
            let _ = write!(out, "| {area} |");
            for k in kinds {
                let _ = write!(out, " {} |", counts.get(&k.to_string()).copied().unwrap_or(0));
            }
            out.push('\n');
        }
        if let Some(figures) = &self.figures {
            out.push_str(&figures.markdown());
        }
        if let Some(seeds) = &self.seeds {
            out.push_str(&seeds.markdown());
        }
        for kind in kinds.iter().filter(|k| **k != VerdictKind::Pass) {
            let cases: Vec<&CaseResult> = self.cases.iter().filter(|c| c.verdict.kind == *kind).collect();
            if cases.is_empty() {
                continue;
            }
            let _ = writeln!(out, "\n## {kind} ({})\n", cases.len());
            for c in cases {
                let variant = c.verdict.variant.as_deref().map(|v| format!(" — **{v}**")).unwrap_or_default();
                let _ = writeln!(out, "- `{}`{variant}: {}", c.id, c.rule);
                for m in &c.verdict.messages {
                    let _ = writeln!(out, "  - {m}");
                }
                if let Some(line) = c.reproduce_line_if_failed() {
                    let _ = writeln!(out, "  - `{line}`");
                }
            }
        }
        if let Some(totals) = self.agreement_totals() {
            let _ = writeln!(out, "\n## executors\n\n{}\n", totals.line());
            for c in self.cases.iter().filter(|c| c.executors_disagree()) {
                let _ = writeln!(out, "- `{}`: {}", c.id, c.rule);
                for line in c.disagreement_lines() {
                    let _ = writeln!(out, "  - {}", line.trim_start());
                }
                if let Some(line) = c.reproduce_line_if_failed() {
                    let _ = writeln!(out, "  - `{line}`");
                }
            }
        }
        let observed: Vec<&CaseResult> = self.cases.iter().filter(|c| c.verdict.observed.is_some()).collect();
        if !observed.is_empty() {
            let _ = writeln!(out, "\n## observed ({}): what the docs leave open, recorded\n", observed.len());
            for c in observed {
                let _ = writeln!(
                    out,
                    "- `{}` — **{}**: {}",
                    c.id,
                    c.verdict.observed.as_deref().unwrap_or_default(),
                    c.rule
                );
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use crate::record::{Provenance, Report};

    /// A run on a host with several GPUs lists them and their links; a saved report from before has neither and
    /// still reads.
    #[test]
    fn devices_and_links_are_summarised_and_optional() {
        let provenance = Provenance::new(&crate::exec::test_support::h200_pair(0), "c", "t".into());
        let report = Report::new(provenance, String::new(), 1, Vec::new());
        let text = report.markdown();
        assert!(text.contains("| devices | 0 NVIDIA H200"), "{text}");
        assert!(text.contains("0→1 peer access, rank 0, native atomics; 1→0 peer access"), "{text}");
        let mut json = serde_json::to_value(&report).unwrap();
        let fields = json["provenance"].as_object_mut().unwrap();
        assert!(fields.remove("devices").is_some() && fields.remove("peer_links").is_some());
        let old: Report = serde_json::from_value(json).unwrap();
        assert!(old.provenance.devices.is_empty() && !old.markdown().contains("| devices |"));
    }
}
