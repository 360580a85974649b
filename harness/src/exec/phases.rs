//! Where a case's time goes inside its worker, to find what to make faster: with `CUDA_CONFORMANCE_PHASES=FILE` in
//! the runner's environment (its workers inherit it), each case a worker runs on its main thread appends one line
//! to FILE: when it began (milliseconds since the Unix epoch), the case id, then `phase=milliseconds` for each stretch between two marks, in order. Unset, a mark is one
//! check of a value read once per process. A diagnostic, never read by a verdict.

use std::cell::RefCell;
use std::fs::File;
use std::io::Write;
use std::sync::{Mutex, OnceLock};
use std::time::Instant;

/// The variable that names the file.
pub const PHASES_ENV: &str = "CUDA_CONFORMANCE_PHASES";

fn sink() -> Option<&'static Mutex<File>> {
    static SINK: OnceLock<Option<Mutex<File>>> = OnceLock::new();
    SINK.get_or_init(|| {
        let path = std::env::var_os(PHASES_ENV)?;
        File::options().create(true).append(true).open(path).ok().map(Mutex::new)
    })
    .as_ref()
}

/// A case's marks so far: when it began, then each mark's name and time.
type Marks = (Instant, Vec<(&'static str, Instant)>);

thread_local! {
    /// The marks of the case running on this thread.
    static MARKS: RefCell<Option<Marks>> = const { RefCell::new(None) };
}

/// Milliseconds since the Unix epoch: the one clock the lines of several processes share.
fn unix_ms() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

/// Something other than a case happened (a process started): one line `UNIX_MS # what`.
pub fn event(what: &str) {
    if let Some(sink) = sink() {
        let _ = sink.lock().map(|mut f| f.write_all(format!("{} # {what}\n", unix_ms()).as_bytes()));
    }
}

/// A case begins on this thread.
pub fn begin() {
    if sink().is_some() {
        MARKS.with(|m| *m.borrow_mut() = Some((Instant::now(), Vec::new())));
    }
}

/// The stretch since the last mark (or the beginning) was `name`. Ignored on a thread where no case began.
pub fn mark(name: &'static str) {
    if sink().is_some() {
        MARKS.with(|m| {
            if let Some((_, marks)) = m.borrow_mut().as_mut() {
                marks.push((name, Instant::now()));
            }
        });
    }
}

/// The case `id` ends on this thread: its line is written.
pub fn end(id: &str) {
    let Some(sink) = sink() else { return };
    let Some((began, marks)) = MARKS.with(|m| m.borrow_mut().take()) else { return };
    let mut line = format!("{} {id}", unix_ms() - began.elapsed().as_secs_f64() * 1000.0);
    let mut last = began;
    for (name, at) in marks {
        line.push_str(&format!(" {name}={:.3}", at.duration_since(last).as_secs_f64() * 1000.0));
        last = at;
    }
    line.push('\n');
    // One write per line, so the lines of several workers appending to one file do not interleave.
    let _ = sink.lock().map(|mut f| f.write_all(line.as_bytes()));
}
