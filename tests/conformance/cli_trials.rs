//! The command line's trials (`cli/...`), on the `cuda-conformance` binary: reports made in mock child mode (no GPU)
//! are compared, blessed, summarised and merged, and the exit statuses and messages are checked.

use crate::runner_trials::{expect, report_header, Fixture, LazyFixture};
use harness::runner::mock::mock_device;
use harness::runner::session;
use libtest_mimic::{Failed, Trial};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub fn trials(fx: &Arc<LazyFixture>) -> Vec<Trial> {
    type Body = fn(&Fixture) -> Result<(), Failed>;
    let bodies: Vec<(&str, Body)> = vec![
        ("cli/list-into-a-closed-pipe-exits-quietly", cli_list_head),
        ("cli/compare-bless-baseline-matrix-junit", cli_reports),
    ];
    let mut trials: Vec<Trial> = bodies
        .into_iter()
        .map(|(name, body)| {
            let fx = Arc::clone(fx);
            Trial::test(name, move || body(fx.get()?))
        })
        .collect();
    let data_fx = Arc::clone(fx);
    // A bundle carries no results/: there the findings' data cannot be checked.
    let no_results = !repo().join("results/findings").is_dir();
    trials.push(
        Trial::test("cli/findings-data-names-cases-and-reports-that-show-them", move || findings_data(data_fx.get()?))
            .with_ignored_flag(no_results),
    );
    // The pages embed each case's reproducer, which only a binary with the `repro` subcommand (issue 19's emitter)
    // can write: without it the check cannot run, and says so instead of passing.
    let has_repro = cli().is_some_and(|exe| {
        std::process::Command::new(exe).args(["repro", "--help"]).output().is_ok_and(|o| o.status.success())
    });
    // The committed pages are what a build against the pinned 13.x header writes; a 12.x build writes other
    // reproducers (its calls of 13.0-only functions are unresolved), so it cannot check them.
    let other_header = harness::api::header_version().is_some_and(|v| v / 1000 != 13);
    trials.push(
        Trial::test("cli/findings-pages-are-current", findings_pages_current)
            .with_ignored_flag(!has_repro || no_results || other_header),
    );
    trials
}

/// The repository root (the bundle's folder when run from a bundle).
fn repo() -> PathBuf {
    PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into()))
}

/// Every finding's data file parses, names cases of the suite, and at least one report it names ran one of them.
fn findings_data(fx: &Fixture) -> Result<(), Failed> {
    use harness::report::findings::{seen_configurations, Finding};
    let dir = repo().join("results/findings");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)?.filter_map(|e| e.ok().map(|e| e.path())).collect();
    files.retain(|p| p.extension().is_some_and(|e| e == "json"));
    expect(files.len() >= 3, || format!("{}: {} data files", dir.display(), files.len()))?;
    for file in files {
        let finding: Finding =
            serde_json::from_str(&std::fs::read_to_string(&file)?).map_err(|e| format!("{}: {e}", file.display()))?;
        for id in &finding.cases {
            expect(fx.cases.iter().any(|c| &c.id == id), || format!("{}: no case {id}", file.display()))?;
        }
        let reports: Vec<(String, harness::record::Report)> = finding
            .reports
            .iter()
            .map(|p| Ok((p.clone(), harness::record::Report::read(&repo().join(p))?)))
            .collect::<Result<_, String>>()?;
        expect(!seen_configurations(&finding, &reports).is_empty(), || {
            format!("{}: no report ran its cases", file.display())
        })?;
        expect(finding.documentation.iter().all(|q| q.url.starts_with("https://docs.nvidia.com/")), || {
            format!("{}: every quote links NVIDIA's documentation", file.display())
        })?;
    }
    Ok(())
}

/// `findings` writes exactly the committed pages (as `coverage` does docs/coverage.md): after changing a data file, a
/// case or its reproducer, run `cuda-conformance findings --out results/findings` and commit the pages.
fn findings_pages_current() -> Result<(), Failed> {
    let exe = cli().ok_or("no cuda-conformance binary")?;
    let tmp = std::env::temp_dir().join(format!("cuda-conformance-findings-{}", std::process::id()));
    let root = repo();
    let out = std::process::Command::new(exe)
        .arg("--cases")
        .arg(root.join("cases"))
        .args(["findings", "--data"])
        .arg(root.join("results/findings"))
        .arg("--out")
        .arg(&tmp)
        .arg("--root")
        .arg(&root)
        .output()?;
    expect(out.status.success(), || format!("findings: {}", String::from_utf8_lossy(&out.stderr)))?;
    for entry in std::fs::read_dir(&tmp)? {
        let written = entry?.path();
        let name = written.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let committed = std::fs::read_to_string(root.join("results/findings").join(&name)).unwrap_or_default();
        expect(committed == std::fs::read_to_string(&written)?, || {
            format!("results/findings/{name} is not what `cuda-conformance findings --out results/findings` writes")
        })?;
    }
    let _ = std::fs::remove_dir_all(&tmp);
    Ok(())
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
