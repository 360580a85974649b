//! Writing what a command prints or saves: stdout that tolerates a closed pipe, and the `--markdown`, `--json`,
//! `--html` files of `matrix` and `fleet`.

use super::status::Status;
use std::io::Write as _;
use std::path::Path;

/// Prints `text` on stdout; a closed pipe (`... | head`) is not an error. Any other write error is printed, and the
/// status is `Unable`.
pub fn emit(text: &str) -> Status {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Status::Ok,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Status::Ok,
        Err(e) => {
            eprintln!("cannot write to stdout: {e}");
            Status::Unable
        }
    }
}

/// A text output of a merge: the path it goes to (if asked for) and how to make the text.
pub type TextOutput<'a> = (Option<&'a Path>, &'a dyn Fn() -> String);

/// Writes each of `[markdown, json, html]` whose path was given, naming it on stderr; with none given, the Markdown
/// goes to stdout instead and the status is [`emit`]'s.
pub fn write_outputs(outputs: [TextOutput; 3]) -> Result<Status, String> {
    if outputs.iter().all(|(p, _)| p.is_none()) {
        let (_, markdown) = outputs[0];
        return Ok(emit(&markdown()));
    }
    for (path, text) in outputs {
        if let Some(p) = path {
            harness::record::write_atomic(p, text().as_bytes())
                .map_err(|e| format!("{}: cannot write: {e}", p.display()))?;
            eprintln!("wrote {}", p.display());
        }
    }
    Ok(Status::Ok)
}
