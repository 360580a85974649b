//! The command line's trials (`cli/...`), on the `cuda-conformance` binary: reports made in mock child mode (no GPU)
//! are compared, blessed, summarised and merged, and the exit statuses and messages are checked.

use crate::runner_trials::{expect, report_header, Fixture};
use harness::runner::mock::mock_device;
use harness::runner::session;
use libtest_mimic::{Failed, Trial};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub fn trials(dir: &Path) -> Vec<Trial> {
    let Ok(cases) = harness::case::suite::load_dir(dir) else { return Vec::new() };
    let fx = Arc::new(Fixture { cases });
    type Body = fn(&Fixture) -> Result<(), Failed>;
    let bodies: Vec<(&str, Body)> = vec![
        ("cli/list-into-a-closed-pipe-exits-quietly", cli_list_head),
        ("cli/compare-bless-baseline-matrix-junit", cli_reports),
    ];
    bodies
        .into_iter()
        .map(|(name, body)| {
            let fx = Arc::clone(&fx);
            Trial::test(name, move || body(&fx))
        })
        .collect()
}

/// The `cuda-conformance` binary: cargo's, or the bundle's `bin/` beside `tests/`.
fn cli() -> Option<PathBuf> {
    let built = PathBuf::from(env!("CARGO_BIN_EXE_cuda-conformance"));
    let bundled = std::env::var_os("CARGO_MANIFEST_DIR").map(|d| PathBuf::from(d).join("bin/cuda-conformance"));
    [Some(built), bundled].into_iter().flatten().find(|p| p.is_file())
}

fn cli_list_head(_: &Fixture) -> Result<(), Failed> {
    let exe = cli().ok_or("no cuda-conformance binary")?;
    let out = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!("'{}' list | head -n 2; echo \"status ${{PIPESTATUS:-}}\"", exe.display()))
        .output()?;
    let mut child = std::process::Command::new(&exe)
        .arg("list")
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()?;
    // Close the read end at once: every write fails with a broken pipe.
    drop(child.stdout.take());
    let result = child.wait_with_output()?;
    let stderr = String::from_utf8_lossy(&result.stderr);
    expect(result.status.success() && stderr.is_empty(), || format!("{:?}: {stderr}", result.status))?;
    expect(String::from_utf8_lossy(&out.stdout).lines().count() >= 2, || format!("{out:?}"))
}

fn cli_reports(fx: &Fixture) -> Result<(), Failed> {
    let exe = cli().ok_or("no cuda-conformance binary")?;
    let tmp = std::env::temp_dir().join(format!("cuda-conformance-cli-{}", std::process::id()));
    std::fs::create_dir_all(&tmp)?;
    let c = fx.plain(3);
    let header = report_header();
    let (base, new) = (tmp.join("base.json"), tmp.join("new.json"));
    let mut o = fx.opts(&[(c[0], "fail")]);
    o.reruns = 0;
    session::run_to_report(&c, &[mock_device()], &o, &header, Some(&base), |_, _| {});
    session::run_to_report(&c, &[mock_device()], &fx.opts(&[(c[1], "fail")]), &header, Some(&new), |_, _| {});
    let run = |args: &[&str]| std::process::Command::new(&exe).args(args).output();
    let s = |p: &Path| p.display().to_string();
    let compare = run(&["compare", &s(&base), &s(&new)])?;
    let text = String::from_utf8_lossy(&compare.stdout);
    expect(compare.status.code() == Some(1) && text.contains("regressions (1)") && text.contains("fixes (1)"), || {
        format!("{:?}\n{text}", compare.status)
    })?;
    let bl = tmp.join("baseline.txt");
    let bless = run(&["baseline", "bless", &s(&base), "--output", &s(&bl)])?;
    let blessed = std::fs::read_to_string(&bl).unwrap_or_default();
    expect(bless.status.success() && blessed.contains(&format!("{} fail", c[0].id)), || blessed.clone())?;
    let junit = run(&["summary", "--format", "junit", &s(&base)])?;
    let xml = String::from_utf8_lossy(&junit.stdout);
    expect(xml.contains("<failure type=\"fail\"") && xml.contains(&format!("fail {}\n  rule:", c[0].id)), || {
        xml.to_string()
    })?;
    let html = tmp.join("m.html");
    let matrix = run(&["matrix", &s(&base), &s(&new), "--html", &s(&html)])?;
    expect(matrix.status.success() && std::fs::read_to_string(&html).is_ok_and(|h| h.contains("matrix-data")), || {
        String::from_utf8_lossy(&matrix.stderr).into_owned()
    })?;
    std::fs::write(tmp.join("bad.json"), "{\n  \"provenance\": 3\n}")?;
    let bad = run(&["summary", &s(&tmp.join("bad.json"))])?;
    let err = String::from_utf8_lossy(&bad.stderr);
    let _ = std::fs::remove_dir_all(&tmp);
    expect(bad.status.code() == Some(2) && err.contains("bad.json:2:"), || format!("{:?} {err}", bad.status))
}
