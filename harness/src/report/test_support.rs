//! Results and reports without a GPU or a case file, for the tests of every format.

use crate::device::gpu::DeviceInfo;
use crate::record::verdict::{Verdict, VerdictKind};
use crate::record::{CaseResult, Provenance, Report, Task};

pub fn device(name: &str, driver: u32) -> DeviceInfo {
    DeviceInfo {
        name: name.into(),
        uuid: format!("GPU-{name}"),
        driver_version: driver,
        ..crate::exec::test_support::h100()
    }
}

/// A result without a case file: `kind` with `variant`, in the area of `id`.
pub fn result(id: &str, kind: VerdictKind, variant: Option<&str>) -> CaseResult {
    CaseResult {
        id: id.into(),
        area: id.split('/').next().unwrap_or(id).into(),
        rule: format!("the rule of {id}"),
        source: "a test".into(),
        location: "cases/test.case:1".into(),
        verdict: Verdict {
            kind,
            variant: variant.map(str::to_owned),
            observed: None,
            messages: if kind == VerdictKind::Pass { vec![] } else { vec![format!("line 9: why {id} is {kind}")] },
        },
        observations: None,
        measures: Vec::new(),
        timeline: None,
        wall_ms: 5,
        device: Some(0),
        attempts: Vec::new(),
        dirty: None,
        baseline: None,
        expectation: None,
        sanitizer: Vec::new(),
        executor: None,
        second: None,
    }
}

pub fn report(gpu: &str, driver: u32, cases: Vec<CaseResult>) -> Report {
    let mut p = Provenance::new(&device(gpu, driver), "abc1234", "2026-01-01T00:00:00Z".into());
    p.hostname = format!("host-{gpu}");
    // Not this test process's node and scheduler identity: reports from before fleets had neither.
    p.node = String::new();
    p.task = Task::default();
    p.driver_release = format!("{}.00", driver / 1000 * 10 + 500);
    let mut r = Report::new(p, String::new(), 1000, cases);
    r.complete = true;
    r
}
