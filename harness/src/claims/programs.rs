//! The seeds' programs as written (`seeds/*.cu`, built by nvcc with `scripts/build-seeds.sh`): which ones there are,
//! how each is run, and the figures its output prints. `cuda-conformance seeds` runs them beside the same programs
//! in the case language (`cases/performance.case`), so a claim's row shows both. A program is a plain executable
//! run in a process of its own; its output is kept whole in the report, and the figures are read from the lines the
//! seed prints (the seeds' own wording, e.g. `Pipelined execution time: 5.5 ms`).

use crate::record::claims::{ProgramFigure, ProgramRun};
use std::io::Read as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// One way of running one program.
#[derive(Debug, Clone, Copy)]
pub struct Program {
    /// The executable's name (the source's stem: `seeds/NAME.cu`).
    pub name: &'static str,
    /// How this run is told apart from another run of the same executable, e.g. `eager module loading`.
    pub variant: &'static str,
    /// Environment variables of this run.
    pub env: &'static [(&'static str, &'static str)],
    /// Figures from the output.
    pub parse: fn(&str) -> Vec<ProgramFigure>,
}

/// Every program run, in the order `seeds` runs them.
pub const PROGRAMS: [Program; 10] = [
    Program { name: "bandwidth", variant: "", env: &[], parse: parse_bandwidth },
    Program { name: "000_stream_pipeline", variant: "", env: &[], parse: parse_000 },
    // Explains the difference to the suite, which loads its kernels before a case's script: with lazy loading (the
    // default since CUDA 12.2) the seed's first vecAdd launch loads the module inside the timed region.
    Program { name: "000_stream_pipeline", variant: EAGER, env: &[EAGER_LOADING], parse: parse_000 },
    // The same for seed 002's and 003's first timed launches.
    Program { name: "002_sync_async", variant: "", env: &[], parse: parse_002_sync_async },
    Program { name: "002_sync_async", variant: EAGER, env: &[EAGER_LOADING], parse: parse_002_sync_async },
    Program { name: "002_multi_stream", variant: "", env: &[], parse: parse_002_multi_stream },
    Program { name: "002_multi_stream", variant: EAGER, env: &[EAGER_LOADING], parse: parse_002_multi_stream },
    Program { name: "003_sleep_streams", variant: "", env: &[], parse: parse_003 },
    Program { name: "003_sleep_streams", variant: EAGER, env: &[EAGER_LOADING], parse: parse_003 },
    Program { name: "004_dag_graph", variant: "", env: &[], parse: parse_004 },
];

/// Module loading at context creation: a program's first launch then loads nothing.
const EAGER_LOADING: (&str, &str) = ("CUDA_MODULE_LOADING", "EAGER");
/// The variant name of a run with [`EAGER_LOADING`].
pub const EAGER: &str = "CUDA_MODULE_LOADING=EAGER";

/// Runs `program` from `dir` with a deadline, with `env` added to its environment (e.g. `CUDA_VISIBLE_DEVICES`, so
/// it runs on the device the suite's cases ran on).
pub fn run(dir: &Path, program: &Program, deadline: Duration, env: &[(String, String)]) -> ProgramRun {
    let path = dir.join(program.name);
    let started = Instant::now();
    let mut result = ProgramRun {
        name: program.name.to_owned(),
        variant: program.variant.to_owned(),
        exit: None,
        output: String::new(),
        figures: Vec::new(),
        error: None,
        wall_ms: 0,
    };
    if !path.is_file() {
        result.error = Some(format!("{} is not built: run scripts/build-seeds.sh", path.display()));
        return result;
    }
    let mut command = Command::new(&path);
    command
        .envs(program.env.iter().copied())
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = match command.spawn() {
        Ok(c) => c,
        Err(e) => {
            result.error = Some(format!("cannot start {}: {e}", path.display()));
            return result;
        }
    };
    // Drain both pipes on threads of their own, so a chatty program cannot block on a full pipe.
    let pipes: [Option<Box<dyn std::io::Read + Send>>; 2] = [
        child.stdout.take().map(|p| Box::new(p) as Box<dyn std::io::Read + Send>),
        child.stderr.take().map(|p| Box::new(p) as Box<dyn std::io::Read + Send>),
    ];
    let readers: Vec<_> = pipes
        .into_iter()
        .flatten()
        .map(|mut pipe| {
            std::thread::spawn(move || {
                let mut bytes = Vec::new();
                let _ = pipe.read_to_end(&mut bytes);
                bytes
            })
        })
        .collect();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if started.elapsed() > deadline => {
                let _ = child.kill();
                let _ = child.wait();
                result.error = Some(format!("killed after {} s (the deadline)", deadline.as_secs()));
                break None;
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => {
                result.error = Some(format!("cannot wait for {}: {e}", path.display()));
                break None;
            }
        }
    };
    for reader in readers {
        result.output.push_str(&String::from_utf8_lossy(&reader.join().unwrap_or_default()));
    }
    result.exit = status.and_then(|s| s.code());
    result.wall_ms = started.elapsed().as_millis() as u64;
    result.figures = (program.parse)(&result.output);
    if result.error.is_none() && result.exit != Some(0) {
        result.error = Some(match result.exit {
            Some(code) => format!("exited with status {code}"),
            None => "died of a signal".to_owned(),
        });
    }
    result
}

/// The numbers in `text`, in order: words that start with a digit (`5.000320`, `1.37x` gives 1.37, `-1`); a word
/// that starts with a letter (`h2d`) holds none.
pub fn numbers(text: &str) -> Vec<f64> {
    text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '-'))
        .filter(|word| {
            let digits = word.strip_prefix('-').unwrap_or(word);
            digits.starts_with(|c: char| c.is_ascii_digit())
        })
        .filter_map(|word| {
            let end = word
                .char_indices()
                .skip(1)
                .find(|(_, c)| !(c.is_ascii_digit() || *c == '.'))
                .map_or(word.len(), |(i, _)| i);
            word[..end].trim_end_matches('.').parse().ok()
        })
        .collect()
}

/// The `n`-th number of the first line that starts with `prefix` (after leading spaces).
fn after(output: &str, prefix: &str, n: usize) -> Option<f64> {
    output.lines().find_map(|l| l.trim_start().strip_prefix(prefix)).and_then(|rest| numbers(rest).get(n).copied())
}

/// The figures of `out` that `lines` name, each (figure, the label its line starts with, which number after the
/// label, unit); one whose line is missing is left out.
fn figures(out: &str, lines: &[(&str, &str, usize, &str)]) -> Vec<ProgramFigure> {
    lines
        .iter()
        .filter_map(|&(name, label, n, unit)| {
            after(out, label, n).map(|value| ProgramFigure { name: name.to_owned(), value, unit: unit.to_owned() })
        })
        .collect()
}

fn parse_bandwidth(out: &str) -> Vec<ProgramFigure> {
    figures(
        out,
        &[
            ("pinned-h2d", "pinned h2d:", 0, "GB/s"),
            ("pinned-d2h", "pinned d2h:", 0, "GB/s"),
            ("bidirectional-h2d", "bidirectional h2d:", 0, "GB/s"),
            ("bidirectional-d2h", "bidirectional h2d:", 1, "GB/s"),
            ("bidirectional-both", "bidirectional h2d:", 2, "GB/s"),
            ("pageable-d2h", "pageable d2h:", 0, "GB/s"),
            ("pageable-h2d", "pageable d2h:", 1, "GB/s"),
        ],
    )
}

fn parse_000(out: &str) -> Vec<ProgramFigure> {
    figures(out, &[("pipeline", "Pipelined execution time:", 0, "ms"), ("wrong-elements", "Verification:", 0, "")])
}

fn parse_002_sync_async(out: &str) -> Vec<ProgramFigure> {
    figures(out, &[("synchronous", "同步版本:", 0, "ms"), ("asynchronous", "异步版本:", 0, "ms")])
}

fn parse_002_multi_stream(out: &str) -> Vec<ProgramFigure> {
    figures(out, &[("single", "单Stream:", 0, "ms"), ("multi", "多Stream:", 0, "ms"), ("speedup", "加速比:", 0, "x")])
}

/// `MAX_ITER = N` starts a section; in it, the seed's lines `sleep <<<...>>>, S stream, ... uses T ms`.
fn parse_003(out: &str) -> Vec<ProgramFigure> {
    let mut figures = Vec::new();
    if out.lines().any(|l| l.trim() == "device supports overlap") {
        figures.push(ProgramFigure { name: "device-overlap".into(), value: 1.0, unit: String::new() });
    } else if out.lines().any(|l| l.trim() == "device does not support overlap") {
        figures.push(ProgramFigure { name: "device-overlap".into(), value: 0.0, unit: String::new() });
    }
    let mut max_iter = None;
    for line in out.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("MAX_ITER =") {
            max_iter = numbers(rest).first().map(|v| *v as u64);
        } else if let (Some(cycles), Some(rest)) = (max_iter, line.strip_prefix("sleep <<<")) {
            // (64,64), (16,16)>>>, S stream, 1 memcpy, 4 kernel uses T ms: numbers 64 64 16 16 S 1 4 T.
            let n = numbers(rest);
            if let (Some(&streams), Some(&ms)) = (n.get(4), n.get(7)) {
                let which = if streams == 1.0 { "one-stream" } else { "four-streams" };
                figures.push(ProgramFigure { name: format!("{which}-{cycles}"), value: ms, unit: "ms".into() });
            }
        }
    }
    figures
}

fn parse_004(out: &str) -> Vec<ProgramFigure> {
    figures(
        out,
        &[
            ("eager-submit", "eager DAG:", 0, "us"),
            ("eager-iteration", "eager DAG:", 1, "us"),
            ("eager-spread", "eager DAG:", 2, "%"),
            ("graph-submit", "graph DAG (forked):", 0, "us"),
            ("graph-iteration", "graph DAG (forked):", 1, "us"),
            ("graph-spread", "graph DAG (forked):", 2, "%"),
            ("small-eager-per-kernel", "100 small kernels:", 0, "us"),
            ("small-graph-launch", "100 small kernels:", 1, "us"),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_in_a_line() {
        assert_eq!(numbers("uses 5.000320 ms"), vec![5.00032]);
        assert_eq!(numbers("加速比:   1.37x"), vec![1.37]);
        assert_eq!(numbers("(64,64), (16,16)>>>,  1 stream"), vec![64.0, 64.0, 16.0, 16.0, 1.0]);
        assert_eq!(numbers("no digits. here"), Vec::<f64>::new());
        assert_eq!(numbers("h2d: 50.0 GB/s, d2h: 49.5"), vec![50.0, 49.5], "words that start with a letter hold none");
        assert_eq!(numbers("spread 12.5% and -3"), vec![12.5, -3.0]);
    }

    /// The figures come from the seeds' own lines, as the programs print them.
    #[test]
    fn figures_from_the_seeds_lines() {
        let find = |figures: &[ProgramFigure], name: &str| figures.iter().find(|f| f.name == name).map(|f| f.value);
        let out = "Pipelined execution time: 6.25 ms\nVerification: 0 of 33554432 elements wrong\n";
        assert_eq!(find(&parse_000(out), "pipeline"), Some(6.25));
        assert_eq!(find(&parse_000(out), "wrong-elements"), Some(0.0));
        let out = "同步版本: 1.500 ms\n异步版本: 1.450 ms\n";
        assert_eq!(find(&parse_002_sync_async(out), "asynchronous"), Some(1.45));
        let out = "单Stream: 9.000 ms\n多Stream: 4.500 ms\n加速比:   2.00x\n";
        assert_eq!(find(&parse_002_multi_stream(out), "speedup"), Some(2.0));
        let out = "device supports overlap\nInput size is 1048576\nMAX_ITER = 100000\n\
                   sleep <<<(64,64), (16,16)>>>,  1 stream,  1 memcpy,  4 kernel uses 5.000320 ms\n\
                   sleep <<<(64,64), (16,16)>>>,  4 stream,  1 memcpy,  4 kernel uses 3.653024 ms\n";
        let f = parse_003(out);
        assert_eq!(find(&f, "one-stream-100000"), Some(5.00032));
        assert_eq!(find(&f, "four-streams-100000"), Some(3.653024));
        assert_eq!(find(&f, "device-overlap"), Some(1.0));
        let out = "pinned h2d: 55.100 GB/s (4 x 256 MiB, gated)\n\
                   bidirectional h2d: 50.000 GB/s, d2h: 49.000 GB/s, both: 98.000 GB/s (4 x 256 MiB each way, gated)\n\
                   pageable d2h: 20.000 GB/s, h2d: 18.000 GB/s (4 x 256 MiB cudaMemcpy)\n";
        let f = parse_bandwidth(out);
        assert_eq!(find(&f, "pinned-h2d"), Some(55.1));
        assert_eq!(find(&f, "bidirectional-both"), Some(98.0));
        assert_eq!(find(&f, "pageable-h2d"), Some(18.0));
        assert_eq!(find(&f, "pinned-d2h"), None, "a line it did not print gives no figure");
        let out = "eager DAG: 40.000 us submission per iteration, 90.000 us per iteration, spread 12.5% (median of 100)\n\
                   graph DAG (forked): 5.000 us submission per iteration, 60.000 us per iteration, spread 3.0% (median of 100)\n\
                   100 small kernels: eager 2.100 us per kernel, one graph launch 9.000 us (0.090 us per kernel), median of 5\n";
        let f = parse_004(out);
        assert_eq!(find(&f, "eager-spread"), Some(12.5));
        assert_eq!(find(&f, "graph-submit"), Some(5.0));
        assert_eq!(find(&f, "small-eager-per-kernel"), Some(2.1));
        assert_eq!(find(&f, "small-graph-launch"), Some(9.0));
    }

    #[test]
    fn a_missing_program_says_how_to_build_it() {
        let r = run(Path::new("/nonexistent"), &PROGRAMS[0], Duration::from_secs(1), &[]);
        assert!(r.error.as_deref().unwrap().contains("scripts/build-seeds.sh"), "{r:?}");
        assert_eq!(r.exit, None);
    }

    #[test]
    fn a_program_that_fails_is_recorded_with_its_output() {
        let dir = std::env::temp_dir().join(format!("cc-programs-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let script = dir.join("000_stream_pipeline");
        std::fs::write(&script, "#!/bin/sh\necho 'Pipelined execution time: 7.5 ms'\necho oops >&2\nexit 3\n").unwrap();
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        let r = run(&dir, &PROGRAMS[1], Duration::from_secs(10), &[]);
        std::fs::remove_dir_all(&dir).ok();
        assert_eq!(r.exit, Some(3));
        assert_eq!(r.error.as_deref(), Some("exited with status 3"));
        assert!(r.output.contains("oops"), "{r:?}");
        assert_eq!(r.figure("pipeline"), Some(7.5), "what it printed before failing is kept");
    }
}
