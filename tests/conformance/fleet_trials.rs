//! The fleet kit's trials on the `cuda-conformance` binary (`fleet/...`), with no GPU needed: a run that cannot
//! start still writes its report (with the task's scheduler identity), `--tier smoke` selects the smoke cases, and
//! `fleet` merges reports against the expected tasks with the exit statuses automation keys off.

use harness::record::Report;
use harness::runner::select::SMOKE;
use libtest_mimic::{Failed, Trial};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `cuda-conformance` binary: cargo's, or the bundle's `bin/` beside `tests/`.
fn binary() -> Option<PathBuf> {
    let built = PathBuf::from(env!("CARGO_BIN_EXE_cuda-conformance"));
    let bundled = std::env::var_os("CARGO_MANIFEST_DIR").map(|d| PathBuf::from(d).join("bin/cuda-conformance"));
    [Some(built), bundled].into_iter().flatten().find(|p| p.is_file())
}

/// The binary with `args`, in an environment cleared of scheduler and mock variables, plus `env`.
fn run(args: &[&str], env: &[(&str, &str)]) -> Result<Output, Failed> {
    let exe = binary().ok_or("no cuda-conformance binary")?;
    let mut cmd = Command::new(exe);
    for (k, _) in std::env::vars() {
        if k.starts_with("SLURM") || k == "JOB_COMPLETION_INDEX" || k.starts_with("CUDA_CONFORMANCE_") {
            cmd.env_remove(k);
        }
    }
    cmd.args(args).envs(env.iter().copied());
    Ok(cmd.output()?)
}

fn expect(cond: bool, what: impl FnOnce() -> String) -> Result<(), Failed> {
    if cond {
        Ok(())
    } else {
        Err(what().into())
    }
}

fn scratch(name: &str) -> Result<PathBuf, Failed> {
    let dir = std::env::temp_dir().join(format!("cuda-conformance-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir)?;
    Ok(dir)
}

fn s(p: &Path) -> String {
    p.display().to_string()
}

/// A Slurm array task's environment, with the GPU it was given.
fn slurm(index: &'static str, node: &'static str, visible: &'static str) -> Vec<(&'static str, &'static str)> {
    vec![
        ("SLURM_JOB_ID", "5000"),
        ("SLURM_ARRAY_JOB_ID", "4242"),
        ("SLURM_ARRAY_TASK_ID", index),
        ("SLURMD_NODENAME", node),
        ("CUDA_VISIBLE_DEVICES", visible),
    ]
}

pub fn trials(dir: &Path) -> Vec<Trial> {
    let dir = dir.to_path_buf();
    let d = dir.clone();
    vec![
        Trial::test("fleet/no-device-still-writes-a-report-with-the-task-identity", no_device),
        Trial::test("fleet/seeds-without-a-device-still-write-a-report", seeds_no_device),
        Trial::test("fleet/invalid-case-files-still-write-a-report", move || invalid_cases(&d)),
        Trial::test("fleet/smoke-tier-runs-the-smoke-cases", smoke_tier),
        Trial::test("fleet/merge-marks-missing-could-not-run-and-deviating-tasks", move || merge(&dir)),
    ]
}

/// A GPU the driver cannot find (also on a machine with GPUs): exit 2 and a report saying why, with the task's
/// Slurm identity, node and CUDA_VISIBLE_DEVICES.
fn no_device() -> Result<(), Failed> {
    let tmp = scratch("no-device")?;
    let (path, junit) = (tmp.join("task-3-n2.json"), tmp.join("junit.xml"));
    let args = ["run", "--tier", "smoke", "--report", &s(&path), "--junit", &s(&junit)];
    let out = run(&args, &slurm("3", "n2", "GPU-no-such-gpu-fleet-test"))?;
    let xml = std::fs::read_to_string(&junit).unwrap_or_default();
    let stderr = String::from_utf8_lossy(&out.stderr);
    expect(out.status.code() == Some(2), || format!("{:?}: {stderr}", out.status))?;
    let r = Report::read(&path)?;
    let t = &r.provenance.task;
    let _ = std::fs::remove_dir_all(&tmp);
    expect(!r.complete && r.cases.is_empty() && r.tier.as_deref() == Some("smoke"), || format!("{r:?}"))?;
    let reason = r.could_not_run.clone().unwrap_or_default();
    expect(reason.starts_with("cannot run the suite: no CUDA device"), || reason.clone())?;
    expect(stderr.contains(&reason), || format!("the reason is not printed: {stderr}"))?;
    expect(xml.contains(r#"errors="1""#) && xml.contains(r#"name="could-not-run""#), || xml.clone())?;
    expect(r.provenance.node == "n2" && r.provenance.gpu_uuid == "unknown", || format!("{:?}", r.provenance))?;
    expect(
        t.scheduler == "slurm"
            && t.array_job_id.as_deref() == Some("4242")
            && t.job_id.as_deref() == Some("5000")
            && t.index() == Some(3)
            && t.cuda_visible_devices.as_deref() == Some("GPU-no-such-gpu-fleet-test"),
        || format!("{t:?}"),
    )
}

/// `seeds` goes through the same run session as `run`: a GPU the driver cannot find is exit 2 and a report saying
/// why, named as the seeds' report is.
fn seeds_no_device() -> Result<(), Failed> {
    let tmp = scratch("seeds-no-device")?;
    let path = tmp.join("seeds.json");
    let out = run(&["seeds", "--no-programs", "--report", &s(&path)], &slurm("1", "n1", "GPU-no-such-gpu-fleet-test"))?;
    let stderr = String::from_utf8_lossy(&out.stderr);
    let r = Report::read(&path);
    let _ = std::fs::remove_dir_all(&tmp);
    let r = r.map_err(|e| format!("{e}\n{stderr}"))?;
    expect(out.status.code() == Some(2), || format!("{:?}: {stderr}", out.status))?;
    let reason = r.could_not_run.clone().unwrap_or_default();
    expect(!r.complete && r.cases.is_empty() && r.filter == "seeds" && r.tier.is_none(), || format!("{r:?}"))?;
    expect(reason.starts_with("cannot run the suite: no CUDA device") && stderr.contains(&reason), || reason.clone())
}

/// A case file that does not parse: exit 2 and a could-not-run report naming the file and line.
fn invalid_cases(dir: &Path) -> Result<(), Failed> {
    let tmp = scratch("invalid-cases")?;
    let cases = tmp.join("cases");
    std::fs::create_dir_all(&cases)?;
    std::fs::copy(dir.join("events.case"), cases.join("events.case"))?;
    std::fs::write(cases.join("broken.case"), "case broken/one\n  rule: r\n  source: s\n  launch nothing\nend\n")?;
    let path = tmp.join("r.json");
    let out = run(&["--cases", &s(&cases), "run", "--report", &s(&path)], &[("CUDA_CONFORMANCE_MOCK", "")])?;
    let r = Report::read(&path);
    let _ = std::fs::remove_dir_all(&tmp);
    let r = r?;
    let reason = r.could_not_run.clone().unwrap_or_default();
    expect(out.status.code() == Some(2) && !r.complete, || format!("{:?} {r:?}", out.status))?;
    expect(reason.contains("problem(s) in the case files") && reason.contains("broken.case:4"), || reason.clone())
}

/// `run --tier smoke` in mock child mode: exactly the smoke cases, the tier recorded, no figures.
fn smoke_tier() -> Result<(), Failed> {
    let tmp = scratch("smoke-tier")?;
    let path = tmp.join("smoke.json");
    let out = run(&["run", "--tier", "smoke", "--report", &s(&path)], &[("CUDA_CONFORMANCE_MOCK", "")])?;
    let r = Report::read(&path);
    let _ = std::fs::remove_dir_all(&tmp);
    let r = r?;
    expect(out.status.success(), || format!("{:?} {}", out.status, String::from_utf8_lossy(&out.stderr)))?;
    let mut ids: Vec<&str> = r.cases.iter().map(|c| c.id.as_str()).collect();
    ids.sort();
    let mut smoke = SMOKE.to_vec();
    smoke.sort();
    expect(ids == smoke, || format!("{ids:?}"))?;
    expect(r.complete && r.tier.as_deref() == Some("smoke") && r.figures.is_none(), || format!("{:?}", r.tier))?;
    let listed = run(&["list", "--tier", "smoke"], &[])?;
    let lines = String::from_utf8_lossy(&listed.stdout).lines().count();
    expect(lines == SMOKE.len(), || format!("`list --tier smoke` printed {lines} lines"))
}

/// Three tasks of an array ran (in mock mode, task 1 failing one case), task 2 could not run, task 3 never
/// reported: the merge says so, deviating first, with exit status 2; the ran tasks alone give 1, and 0 once they
/// agree.
fn merge(dir: &Path) -> Result<(), Failed> {
    let tmp = scratch("fleet-merge")?;
    let reports = tmp.join("4242");
    let cases = harness::case::suite::load_dir(dir).map_err(|_| "cases do not load")?;
    let failing = &cases.iter().find(|c| SMOKE.contains(&c.id.as_str())).ok_or("no smoke case")?.id;
    let mock_fail = format!("{failing}=fail");
    // Mock runs all report the mock GPU: one task per node keeps them from being one GPU tested twice.
    let no_gpu = "GPU-no-such-gpu-fleet-test";
    for (index, node, visible, mock) in [
        ("0", "n1", "0", Some("")),
        ("1", "n2", "0", Some(mock_fail.as_str())),
        ("4", "n3", "0", Some("")),
        ("2", "n2", no_gpu, None),
    ] {
        let path = reports.join(format!("task-{index}-{node}.json"));
        let mut env = slurm(index, node, visible);
        if let Some(mock) = mock {
            env.push(("CUDA_CONFORMANCE_MOCK", mock));
        }
        let out = run(&["run", "--tier", "smoke", "--reruns", "0", "--report", &s(&path)], &env)?;
        expect(out.status.code().is_some(), || format!("task {index}: {:?}", out.status))?;
    }
    std::fs::write(reports.join("notes.json"), "{}")?;
    let (md, json) = (tmp.join("fleet.md"), tmp.join("fleet.json"));
    let all = run(&["fleet", &s(&reports), "--tasks", "0-3", "--markdown", &s(&md), "--json", &s(&json)], &[])?;
    let text = std::fs::read_to_string(&md).unwrap_or_default();
    let merged: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap_or_default())?;
    let ran = run(&["fleet", &s(&reports), "--tasks", "0,1"], &[])?;
    let agree = run(&["fleet", &s(&reports.join("task-0-n1.json")), &s(&reports.join("task-4-n3.json"))], &[])?;
    let bad = run(&["fleet", &s(&reports), "--tasks", "3-1"], &[])?;
    let _ = std::fs::remove_dir_all(&tmp);
    expect(all.status.code() == Some(2), || format!("{:?}: {}", all.status, String::from_utf8_lossy(&all.stderr)))?;
    let rows: Vec<&str> = text.lines().filter(|l| l.starts_with("| task ") && !l.starts_with("| task |")).collect();
    expect(rows.len() == 4, || text.clone())?;
    // The task that differs from the majority first, then could-not-run, missing, as expected.
    let starts = [
        "| task 1 | **deviating** | n2 | 4242_1 |",
        "| task 2 | **could-not-run** | n2 | 4242_2 | GPU-no-such",
        "| task 3 | **missing** |",
        "| task 0 | as-expected | n1 |",
    ];
    expect(rows.iter().zip(starts).all(|(row, start)| row.starts_with(start)), || text.clone())?;
    expect(text.contains(&format!("| n2[1] | `{failing}` | fail | pass |")), || text.clone())?;
    expect(text.contains("## Reports outside the expected set") && text.contains("n3[4]"), || text.clone())?;
    expect(text.contains("## Files that are not reports") && text.contains("notes.json"), || text.clone())?;
    let summary = &merged["summary"];
    expect(
        summary["expected"] == 4
            && summary["deviating"] == 1
            && summary["could_not_run"] == 1
            && summary["missing"] == 1
            && summary["unexpected"] == 1
            && summary["unreadable"] == 1,
        || format!("{summary}"),
    )?;
    expect(ran.status.code() == Some(1), || format!("tasks 0,1 (one case differs): {:?}", ran.status))?;
    expect(agree.status.code() == Some(0), || format!("two agreeing tasks: {:?}", agree.status))?;
    let err = String::from_utf8_lossy(&bad.stderr);
    expect(bad.status.code() == Some(2) && err.contains("--tasks \"3-1\""), || err.to_string())
}
