//! Which cases a run takes and where: a tier (`--tier smoke|full`), a filter, a shard of several hosts' run
//! (`--shard I/N`), and the devices of this host (`--devices all|0,2`).

use crate::case::ast::Case;

/// How much of the suite a run takes: `full` for exclusive validation runs, `smoke` for a node health check or a
/// scheduler prolog, which must finish well inside Slurm's 60 s `HealthCheckProgram` limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tier {
    Smoke,
    Full,
}

impl Tier {
    pub const ALL: [Tier; 2] = [Tier::Smoke, Tier::Full];

    pub fn word(self) -> &'static str {
        match self {
            Tier::Smoke => "smoke",
            Tier::Full => "full",
        }
    }

    pub fn from_word(word: &str) -> Option<Tier> {
        Tier::ALL.into_iter().find(|t| t.word() == word)
    }

    /// Whether the tier takes the case `id`.
    pub fn takes(self, id: &str) -> bool {
        match self {
            Tier::Full => true,
            Tier::Smoke => SMOKE.contains(&id),
        }
    }
}

/// The smoke tier: a node health check, not a conformance verdict. Cases are chosen to
/// - touch every area and every part of the driver a fleet job relies on: streams of each kind and the legacy
///   stream's implicit synchronisation, events and host functions, pinned and device copies and memsets, stream
///   capture, graphs built through the API with update, exec-set, memory and conditional nodes, the stream-ordered
///   allocator, priorities, and one kernel fault (a driver that does not report a sticky error is unfit for jobs);
/// - state what the documentation requires (*must* rules that passed on every GPU measured), never a *may* whose
///   variant differs between drivers (`implicit-sync/host-call/*`, `lazy-loading`), never a known finding (the
///   `graph/update/dependency-count-differs` failure), so that a healthy node passes whatever its driver;
/// - be short: on the H100 (driver 580.159.04, commit 53f5ede) the cases' own wall time sums to 1.0 s (the fault
///   case 0.3 s, the eager-loading case 0.2 s in a process of its own, the rest 46 ms or less each), so the tier
///   with process start and context creation stays a few seconds, far from the 20 s budget. No figures.
///
/// A test checks that every id here names a case and that every area is present but those not yet run on a GPU
/// ([`NOT_YET_MEASURED_AREAS`]).
pub const SMOKE: &[&str] = &[
    "async-copy/memcpy-h2d-pinned-small-waits",
    "async-copy/memcpy-async-d2h-pinned-returns-at-once",
    "async-copy/memset-device-ordered-after-blocking-stream",
    "capture/fork-join-diamond",
    "capture/relaunch-matches-eager",
    "capture/sync-capturing-stream-invalidates",
    "capture/host-func-becomes-host-node",
    "default-stream/legacy-orders-blocking-stream-both-ways",
    "default-stream/legacy-does-not-wait-for-nonblocking",
    "default-stream/per-thread-independent-of-blocking-stream",
    "default-stream/launch-returns-before-kernel-ends",
    "environment/eager-loading-first-launch-does-not-synchronise",
    "errors/peek-keeps-get-clears",
    "errors/block-too-large-is-not-sticky",
    "errors/illegal-address-is-sticky",
    "events/cross-stream-wait",
    "events/pending-event-not-ready-until-gate",
    "events/elapsed-covers-device-spin",
    "events/host-funcs-and-callbacks-run-in-stream-order",
    "graph/api/kernel-chain-order",
    "graph/api/child-graph-node",
    "graph/update/kernel-values-relaunch-equals-eager",
    "graph/exec-set/memset-and-memcpy",
    "graph/memnode/auto-free-on-launch-relaunch",
    "graph/conditional/while-countdown-runs-n-times",
    // Not supported on a one-GPU node; on a multi-GPU one they check cross-device events and peer-access state.
    "multi-gpu/event-query-and-synchronize-from-another-device",
    "multi-gpu/peer-access/enabling-twice-fails",
    "implicit-sync/between-kernels/null-stream-kernel/blocking-streams",
    "implicit-sync/between-kernels/legacy-stream-wait-event/non-blocking-streams",
    // 5 ms on the H100 (commit 9c19e1d): 100 launches and their captured graph (the measures are figures only).
    "performance/seed004-launch-cost",
    "priorities/range-ends-read-back-exactly",
    "priorities/greatest-priority-keeps-non-blocking-flag",
    "seeds/seed000-triple-stream-pipeline",
    "seeds/seed003-event-makes-kernel2-wait-for-kernel1",
    "stream-memory/malloc-async/stream-order-data",
    "stream-memory/free-async/gated-kernel-still-uses",
    "stream-memory/pool/default-pool-serves-malloc-async",
    "stream-memory/graph/auto-free-on-launch",
    "streams/held-host-func-holds-back-later-work",
    "streams/destroy-with-pending-work-completes",
    // One must-rule of each new area, each passed on the H100 (driver 580.159.04, commit
    // 2f8f778); the host-function case faults in a process of its own (about 0.3 s, as the errors case).
    "batched-copies/per-thread-stream-accepted",
    "host-functions/host-func-not-called-after-fault",
    "graph-priorities/captured-kernel-node-takes-greatest-stream-priority",
    "stream-identity/created-streams-have-distinct-ids",
    "graph-lifetimes/release-of-last-reference-destroys",
    "ipc/interprocess-event-tracks-completion",
    "launch-queue/captured-launches-never-block",
    "managed-memory/kernel-writes-host-reads",
    // Passed on both H100s of a 2-GPU host (driver 580.159.04, commit 3190754), 45-62 ms: a graph launched from the
    // device as a tail launch runs after the launching graph.
    "device-graph-launch/tail/runs-after-the-launching-graph",
];

/// Areas with no case in the smoke tier because none has run on a GPU yet: a smoke case must be a rule that passed on
/// every GPU measured. An area leaves this list when one of its must-rules joins [`SMOKE`].
/// The API areas of issues 30 and 31 ran on one H100 once (results/2026-11-27_api_h100): their smoke cases wait for
/// a second GPU; `small-copy` (the narrowed finding) and `symbols` (the probes' `cc_symbol`) have not run on a GPU yet,
/// nor has `external-resources` (Vulkan imports, issue 31 family 10).
pub const NOT_YET_MEASURED_AREAS: &[&str] = &[
    "api",
    "device-management",
    "execution",
    "external-resources",
    "graph-accessors",
    "host-memory",
    "library",
    "memory-2d",
    "pools",
    "small-copy",
    "symbols",
    "streams-events-create",
    "textures",
    "versions-and-logs",
];

/// [`select`] within a tier: the tier's cases, then the filter and the shard as there.
pub fn select_tier<'a>(
    cases: &'a [Case],
    tier: Tier,
    filter: Option<&str>,
    shard: Option<(usize, usize)>,
) -> Vec<&'a Case> {
    let chosen = cases.iter().filter(|c| tier.takes(&c.id) && filter.is_none_or(|f| c.id.contains(f)));
    match shard {
        Some((i, n)) => chosen.enumerate().filter(|(k, _)| k % n == i - 1).map(|(_, c)| c).collect(),
        None => chosen.collect(),
    }
}

/// The cases whose id contains `filter` (all without one), then every N-th of them from the I-th (1-based) when
/// `shard` is `(I, N)`: shards of one selection are disjoint and together cover it.
pub fn select<'a>(cases: &'a [Case], filter: Option<&str>, shard: Option<(usize, usize)>) -> Vec<&'a Case> {
    select_tier(cases, Tier::Full, filter, shard)
}

/// `I/N` with 1 <= I <= N.
pub fn parse_shard(text: &str) -> Result<(usize, usize), String> {
    let bad = || format!("--shard {text:?}: expected I/N with 1 <= I <= N, e.g. 2/4");
    let (i, n) = text.split_once('/').ok_or_else(bad)?;
    let (i, n): (usize, usize) = (i.trim().parse().map_err(|_| bad())?, n.trim().parse().map_err(|_| bad())?);
    if i == 0 || n == 0 || i > n {
        return Err(bad());
    }
    Ok((i, n))
}

/// `all` (every one of `count` devices) or a comma-separated list of ordinals, each below `count`, no repeats.
pub fn parse_devices(text: &str, count: usize) -> Result<Vec<i32>, String> {
    if text.trim() == "all" {
        if count == 0 {
            return Err("--devices all: no CUDA device is visible".into());
        }
        return Ok((0..count as i32).collect());
    }
    let mut list = Vec::new();
    for part in text.split(',') {
        let ordinal: i32 = part.trim().parse().map_err(|_| {
            format!("--devices {text:?}: `{}` is not a device ordinal (expected `all` or a list like 0,2)", part.trim())
        })?;
        if ordinal < 0 || ordinal as usize >= count {
            return Err(format!("--devices {text:?}: there is no device {ordinal} ({count} visible)"));
        }
        if list.contains(&ordinal) {
            return Err(format!("--devices {text:?}: device {ordinal} is listed twice"));
        }
        list.push(ordinal);
    }
    Ok(list)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_and_devices_parse_or_say_why() {
        assert_eq!(parse_shard("2/4"), Ok((2, 4)));
        for bad in ["0/4", "5/4", "1", "a/b", "1/0"] {
            assert!(parse_shard(bad).unwrap_err().contains("expected I/N"), "{bad}");
        }
        assert_eq!(parse_devices("all", 2), Ok(vec![0, 1]));
        assert_eq!(parse_devices("1, 0", 2), Ok(vec![1, 0]));
        assert!(parse_devices("2", 2).unwrap_err().contains("no device 2"));
        assert!(parse_devices("0,0", 2).unwrap_err().contains("twice"));
        assert!(parse_devices("x", 2).unwrap_err().contains("not a device ordinal"));
        assert!(parse_devices("all", 0).is_err());
    }

    #[test]
    fn shards_cover_the_selection_once() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
        let cases = crate::case::suite::load_dir(&dir).unwrap();
        let all = select(&cases, None, None);
        let mut seen: Vec<&str> =
            (1..=3).flat_map(|i| select(&cases, None, Some((i, 3)))).map(|c| c.id.as_str()).collect();
        seen.sort();
        let mut ids: Vec<&str> = all.iter().map(|c| c.id.as_str()).collect();
        ids.sort();
        assert_eq!(seen, ids);
        assert!(select(&cases, Some("events/"), None).iter().all(|c| c.id.contains("events/")));
    }

    #[test]
    fn the_smoke_tier_names_real_cases_in_every_area() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../cases");
        let cases = crate::case::suite::load_dir(&dir).unwrap();
        let smoke = select_tier(&cases, Tier::Smoke, None, None);
        let mut listed: Vec<&str> = SMOKE.to_vec();
        listed.sort();
        listed.dedup();
        assert_eq!(listed.len(), SMOKE.len(), "an id is listed twice");
        let found: Vec<&str> = smoke.iter().map(|c| c.id.as_str()).collect();
        let unknown: Vec<&&str> = SMOKE.iter().filter(|id| !found.contains(id)).collect();
        assert!(unknown.is_empty(), "smoke ids naming no case (renamed?): {unknown:?}");
        let areas =
            |list: &[&Case]| list.iter().map(|c| c.area().to_owned()).collect::<std::collections::BTreeSet<_>>();
        let mut measured = areas(&select(&cases, None, None));
        for area in NOT_YET_MEASURED_AREAS {
            assert!(measured.remove(*area), "{area} is listed as not yet measured but has no cases");
            assert!(!areas(&smoke).contains(*area), "{area} has a smoke case: take it off NOT_YET_MEASURED_AREAS");
        }
        assert_eq!(areas(&smoke), measured, "the smoke tier must touch every measured area");
        assert!(smoke.iter().all(|c| !c.id.contains("host-call/") && c.id != "graph/update/dependency-count-differs"));
        assert_eq!(select_tier(&cases, Tier::Full, None, None).len(), cases.len());
        assert_eq!(select_tier(&cases, Tier::Smoke, Some("errors/"), None).len(), 3);
        assert_eq!(Tier::from_word("smoke"), Some(Tier::Smoke));
        assert_eq!(Tier::from_word("fast"), None);
    }
}
