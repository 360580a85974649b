//! Case files to [`ast::CaseFile`]. Line-based: one statement per line, `#` comments, free indentation.
//!
//! Decisions the language reference leaves open:
//! - `rule:` and `source:` take the rest of the line verbatim (a `#` there is text, not a comment).
//! - The parts of a case come in order: header, declarations, script, expectations; a line out of order is an error
//!   that names the part it belongs to.
//! - `query X` / `sync X` are resolved here, from the declarations above them: built-in names are streams.
//! - Names and labels are `[a-z_][a-z0-9_-]*` and may not be a keyword or a built-in stream.
//! - Parsing stops at the first error of a case and resumes at its `end`, so one typo gives one message.

use super::ast::*;
use super::diagnostic::{did_you_mean, Diagnostic};
use super::tokens::{strip_comment, tokenize, Token};
use std::collections::HashMap;

pub const DECL_WORDS: [&str; 7] = ["stream", "event", "buffer", "gate", "thread", "graph", "exec"];
pub const EXPECT_WORDS: [&str; 4] = ["expect", "quality", "variant", "observe"];
/// The words that start an operation.
pub const OP_WORDS: &[&str] = &[
    "launch",
    "memcpy",
    "memcpy-async",
    "memset",
    "memset-async",
    "record",
    "wait",
    "query",
    "sync",
    "device-sync",
    "elapsed",
    "host-func",
    "callback",
    "begin-capture",
    "end-capture",
    "capture-status",
    "capture-deps",
    "exchange-capture-mode",
    "pointer-type",
    "instantiate",
    "launch-graph",
    "upload",
    "create",
    "destroy",
    "malloc",
    "malloc-async",
    "free-async",
    "register",
    "unregister",
    "set-device",
    "get-device",
    "set-limit",
    "set-cache-config",
    "stream-priority",
    "read",
    "get-last-error",
    "peek-last-error",
    "open",
    "sleep",
];
/// Words of the case structure, reserved like the others.
const STRUCTURE_WORDS: [&str; 7] = ["case", "end", "rule", "source", "requires", "env", "poisons-context"];
pub const BUILTIN_STREAMS: [&str; 3] = ["legacy", "per-thread", "null"];
const LAUNCH_KINDS: [&str; 7] = ["gate", "spin", "lazy-spin", "fault", "fill", "transform", "compare"];
const REQUIREMENTS: [&str; 9] = [
    "concurrent-kernels",
    "async-engines",
    "devices",
    "runtime",
    "driver",
    "compute",
    "stream-priorities",
    "mapped-memory",
    "connections",
];
const PREDICATE_WORDS: [&str; 12] = [
    "timed-out",
    "host-order",
    "host-runs",
    "snapshot",
    "callback",
    "elapsed",
    "nodes",
    "edges",
    "edge",
    "no-edge",
    "path",
    "no-path",
];

/// Parses one case file. Never panics; returns every problem found (at most one per case).
pub fn parse_file(path: &str, text: &str) -> Result<CaseFile, Vec<Diagnostic>> {
    let mut cases = Vec::new();
    let mut errors = Vec::new();
    let mut lines = text.lines().enumerate().map(|(i, l)| (i as u32 + 1, l)).peekable();
    while let Some((number, line)) = lines.next() {
        let code = strip_comment(line);
        if code.trim().is_empty() {
            continue;
        }
        let tokens = match tokenize(code) {
            Ok(t) => t,
            Err((col, c)) => {
                errors.push(diag(path, number, col, format!("unexpected character `{c}`")));
                continue;
            }
        };
        if tokens[0].text != "case" {
            errors.push(diag(path, number, tokens[0].col, format!("expected `case ID`, found `{}`", tokens[0].text)));
            continue;
        }
        let mut parser = CaseParser::new(path, number, &tokens);
        let mut closed = false;
        let mut failed = parser.error.take();
        for (number, line) in lines.by_ref() {
            let is_end = strip_comment(line).trim() == "end";
            if failed.is_none() {
                if let Err(e) = parser.line(number, line) {
                    failed = Some(e);
                }
            }
            if is_end {
                closed = true;
                break;
            }
        }
        if !closed && failed.is_none() {
            failed = Some(diag(path, number, 1, format!("case `{}` has no `end`", parser.case.id)));
        }
        match failed {
            Some(e) => errors.push(e),
            None => match parser.finish() {
                Ok(case) => cases.push(case),
                Err(e) => errors.push(e),
            },
        }
    }
    if errors.is_empty() {
        Ok(CaseFile { path: path.to_owned(), cases })
    } else {
        Err(errors)
    }
}

fn diag(file: &str, line: u32, col: u32, message: String) -> Diagnostic {
    Diagnostic { file: file.to_owned(), line, col, message }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Part {
    Header,
    Decls,
    Script,
    Expects,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum NameKind {
    Stream,
    Event,
    Other,
}

struct CaseParser<'f> {
    file: &'f str,
    case: Case,
    part: Part,
    rule_seen: bool,
    source_seen: bool,
    names: HashMap<String, NameKind>,
    /// An error found in the `case` line itself.
    error: Option<Diagnostic>,
}

/// A cursor over one line's tokens.
struct Cursor<'t, 'a> {
    tokens: &'t [Token<'a>],
    pos: usize,
    file: &'t str,
    line: u32,
    /// Column just past the line's end, for "expected X, found end of line".
    end_col: u32,
}

type Res<T> = Result<T, Diagnostic>;

impl<'t, 'a> Cursor<'t, 'a> {
    fn peek(&self) -> Option<&'a str> {
        self.tokens.get(self.pos).map(|t| t.text)
    }

    fn col(&self) -> u32 {
        self.tokens.get(self.pos).map_or(self.end_col, |t| t.col)
    }

    fn error(&self, message: String) -> Diagnostic {
        diag(self.file, self.line, self.col(), message)
    }

    fn found(&self) -> String {
        self.peek().map_or("end of line".to_owned(), |t| format!("`{t}`"))
    }

    fn next(&mut self, what: &str) -> Res<&'a str> {
        match self.peek() {
            Some(t) => {
                self.pos += 1;
                Ok(t)
            }
            None => Err(self.error(format!("expected {what}, found end of line"))),
        }
    }

    fn eat(&mut self, word: &str) -> bool {
        if self.peek() == Some(word) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, word: &str) -> Res<()> {
        if self.eat(word) {
            Ok(())
        } else {
            let hint = self.peek().map(|p| did_you_mean(p, [word])).unwrap_or_default();
            Err(self.error(format!("expected `{word}`, found {}{hint}", self.found())))
        }
    }

    /// One of `words`, with a suggestion when the token is close to one.
    fn one_of(&mut self, words: &[&'static str], what: &str) -> Res<&'static str> {
        if let Some(w) = words.iter().find(|w| Some(**w) == self.peek()) {
            self.pos += 1;
            return Ok(w);
        }
        let hint = self.peek().map(|p| did_you_mean(p, words.iter().copied())).unwrap_or_default();
        Err(self.error(format!("expected {what} ({}), found {}{hint}", words.join(", "), self.found())))
    }

    fn done(&self) -> Res<()> {
        match self.peek() {
            None => Ok(()),
            Some(t) => Err(self.error(format!("unexpected `{t}` at the end of the line"))),
        }
    }

    fn ident(&mut self, what: &str) -> Res<String> {
        let col = self.col();
        let word = self.next(what)?;
        check_ident(word).map_err(|m| diag(self.file, self.line, col, format!("expected {what}: {m}")))?;
        Ok(word.to_owned())
    }

    fn u32(&mut self, what: &str) -> Res<u32> {
        let col = self.col();
        let word = self.next(what)?;
        parse_u32(word).ok_or_else(|| diag(self.file, self.line, col, format!("expected {what}, found `{word}`")))
    }

    fn size(&mut self) -> Res<u64> {
        let col = self.col();
        let word = self.next("a size (4096, 64KiB, 1MiB)")?;
        parse_size(word).ok_or_else(|| {
            diag(self.file, self.line, col, format!("expected a size in bytes (4096, 64KiB, 1MiB), found `{word}`"))
        })
    }

    fn duration(&mut self) -> Res<u64> {
        let col = self.col();
        let word = self.next("a duration (500ns, 20us, 2ms, 1s)")?;
        parse_duration(word).ok_or_else(|| {
            diag(self.file, self.line, col, format!("expected a duration (500ns, 20us, 2ms, 1s), found `{word}`"))
        })
    }

    /// `=> CODE | CODE ...`, or nothing.
    fn codes(&mut self) -> Res<Vec<String>> {
        let mut codes = Vec::new();
        if self.eat("=>") {
            loop {
                codes.push(self.code()?);
                if !self.eat("|") {
                    break;
                }
            }
        }
        Ok(codes)
    }

    fn code(&mut self) -> Res<String> {
        let col = self.col();
        let word = self.next("a cudaError name (cudaSuccess, cudaErrorNotReady, ...)")?;
        if word == "cudaSuccess" || (word.starts_with("cudaError") && word.chars().all(|c| c.is_ascii_alphanumeric())) {
            Ok(word.to_owned())
        } else {
            Err(diag(
                self.file,
                self.line,
                col,
                format!("expected a cudaError name (cudaSuccess, cudaErrorNotReady, ...), found `{word}`"),
            ))
        }
    }
}

/// Names and labels: `[a-z_][a-z0-9_-]*`, not a keyword or built-in stream.
fn check_ident(word: &str) -> Result<(), String> {
    let mut chars = word.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_lowercase() || c == '_');
    if !first_ok || !word.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-') {
        return Err(format!("`{word}` is not a name (lowercase letters, digits, `_`, `-`; starting with a letter)"));
    }
    if BUILTIN_STREAMS.contains(&word) {
        return Err(format!("`{word}` is a built-in stream"));
    }
    if DECL_WORDS.contains(&word)
        || EXPECT_WORDS.contains(&word)
        || OP_WORDS.contains(&word)
        || STRUCTURE_WORDS.contains(&word)
    {
        return Err(format!("`{word}` is a keyword"));
    }
    Ok(())
}

pub fn parse_u32(word: &str) -> Option<u32> {
    match word.strip_prefix("0x").or_else(|| word.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16).ok(),
        None => word.parse().ok(),
    }
}

pub fn parse_size(word: &str) -> Option<u64> {
    let (digits, unit) = split_unit(word);
    let n: u64 = digits.parse().ok()?;
    let scale = match unit {
        "" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        _ => return None,
    };
    n.checked_mul(scale)
}

pub fn parse_duration(word: &str) -> Option<u64> {
    let (digits, unit) = split_unit(word);
    let n: u64 = digits.parse().ok()?;
    let scale = match unit {
        "ns" => 1,
        "us" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        _ => return None,
    };
    n.checked_mul(scale)
}

fn split_unit(word: &str) -> (&str, &str) {
    let at = word.find(|c: char| !c.is_ascii_digit()).unwrap_or(word.len());
    word.split_at(at)
}

impl<'f> CaseParser<'f> {
    fn new(file: &'f str, line: u32, tokens: &[Token<'_>]) -> Self {
        let mut case = Case {
            id: String::new(),
            rule: String::new(),
            source: String::new(),
            requires: Vec::new(),
            env: Vec::new(),
            poisons: Vec::new(),
            decls: Vec::new(),
            script: Vec::new(),
            expects: Vec::new(),
            positions: SourceMap { file: file.to_owned(), case_line: line, ..SourceMap::default() },
        };
        let end_col = tokens.last().map_or(1, |t| t.col + t.text.len() as u32);
        let mut cur = Cursor { tokens, pos: 1, file, line, end_col };
        let error = match cur.next("a case id (area/name)") {
            Ok(id) if valid_case_id(id) => {
                case.id = id.to_owned();
                cur.done().err()
            }
            Ok(id) => Some(diag(
                file,
                line,
                tokens[1].col,
                format!("expected a case id `area/name` (lowercase letters, digits, `-`, `_`, `/`), found `{id}`"),
            )),
            Err(e) => Some(e),
        };
        CaseParser {
            file,
            case,
            part: Part::Header,
            rule_seen: false,
            source_seen: false,
            names: HashMap::new(),
            error,
        }
    }

    fn line(&mut self, number: u32, raw: &str) -> Res<()> {
        let trimmed = raw.trim_start();
        let indent = (raw.len() - trimmed.len()) as u32 + 1;
        for (key, is_rule) in [("rule:", true), ("source:", false)] {
            if let Some(text) = trimmed.strip_prefix(key) {
                return self.header_text(number, indent, is_rule, text.trim());
            }
        }
        if let Some(text) = trimmed.strip_prefix("env:") {
            return self.env(number, indent + 4, strip_comment(text));
        }
        let code = strip_comment(raw);
        if code.trim().is_empty() {
            return Ok(());
        }
        let tokens =
            tokenize(code).map_err(|(col, c)| diag(self.file, number, col, format!("unexpected character `{c}`")))?;
        let end_col = tokens.last().map_or(1, |t| t.col + t.text.len() as u32);
        let mut cur = Cursor { tokens: &tokens, pos: 0, file: self.file, line: number, end_col };
        let first = tokens[0].text;
        match first {
            "end" => {
                cur.pos = 1;
                cur.done()
            }
            "requires" => {
                cur.pos = 1;
                cur.expect(":")?;
                self.enter(Part::Header, &cur, "`requires:` belongs in the header, before declarations")?;
                self.requires(&mut cur)
            }
            "poisons-context" => {
                cur.pos = 1;
                cur.expect(":")?;
                self.enter(Part::Header, &cur, "`poisons-context:` belongs in the header, before declarations")?;
                if !self.case.poisons.is_empty() {
                    return Err(cur.error("second `poisons-context:` line".into()));
                }
                self.case.poisons.push(cur.code()?);
                while cur.eat("|") {
                    self.case.poisons.push(cur.code()?);
                }
                cur.done()
            }
            "case" => Err(cur.error("expected `end` before the next `case`".into())),
            w if DECL_WORDS.contains(&w) => {
                self.enter(Part::Decls, &cur, "declarations come before the script")?;
                let decl = self.decl(&mut cur)?;
                self.case.positions.decl_lines.push(number);
                self.case.decls.push(decl);
                Ok(())
            }
            w if EXPECT_WORDS.contains(&w) => {
                self.part = Part::Expects;
                let e = self.expectation(&mut cur)?;
                self.case.positions.expect_lines.push(number);
                self.case.expects.push(e);
                Ok(())
            }
            _ => {
                self.enter(Part::Script, &cur, "operations come before the expectations")?;
                let op = self.op(&mut cur)?;
                self.case.positions.op_lines.push(number);
                self.case.script.push(op);
                Ok(())
            }
        }
    }

    fn enter(&mut self, part: Part, cur: &Cursor, why: &str) -> Res<()> {
        if part < self.part {
            return Err(cur.error(format!("out of order: {why}")));
        }
        self.part = part;
        Ok(())
    }

    fn header_text(&mut self, line: u32, col: u32, is_rule: bool, text: &str) -> Res<()> {
        if self.part != Part::Header {
            return Err(diag(self.file, line, col, "out of order: `rule:` and `source:` belong in the header".into()));
        }
        if text.is_empty() {
            return Err(diag(self.file, line, col, "expected text after the colon".into()));
        }
        let (seen, slot) = if is_rule {
            (&mut self.rule_seen, &mut self.case.rule)
        } else {
            (&mut self.source_seen, &mut self.case.source)
        };
        if *seen {
            return Err(diag(
                self.file,
                line,
                col,
                format!("second `{}:` line", if is_rule { "rule" } else { "source" }),
            ));
        }
        *seen = true;
        *slot = text.to_owned();
        Ok(())
    }

    /// `env: NAME=VALUE ...`: only `CUDA_*` variables, since those are what the runtime reads.
    fn env(&mut self, line: u32, col: u32, text: &str) -> Res<()> {
        if self.part != Part::Header {
            return Err(diag(self.file, line, col, "out of order: `env:` belongs in the header".into()));
        }
        if text.trim().is_empty() {
            return Err(diag(self.file, line, col, "expected NAME=VALUE after `env:`".into()));
        }
        for pair in text.split_whitespace() {
            let valid = pair.split_once('=').filter(|(name, value)| {
                name.starts_with("CUDA_")
                    && name.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
                    && !value.is_empty()
            });
            let Some((name, value)) = valid else {
                return Err(diag(
                    self.file,
                    line,
                    col,
                    format!("expected CUDA_NAME=VALUE (a CUDA_* environment variable), found `{pair}`"),
                ));
            };
            if self.case.env.iter().any(|(n, _)| n == name) {
                return Err(diag(self.file, line, col, format!("`{name}` is set twice")));
            }
            self.case.env.push((name.to_owned(), value.to_owned()));
        }
        Ok(())
    }

    fn finish(self) -> Res<Case> {
        let line = self.case.positions.case_line;
        for (seen, key) in [(self.rule_seen, "rule"), (self.source_seen, "source")] {
            if !seen {
                return Err(diag(self.file, line, 1, format!("case `{}` has no `{key}:` line", self.case.id)));
            }
        }
        Ok(self.case)
    }

    fn requires(&mut self, cur: &mut Cursor) -> Res<()> {
        loop {
            let word = cur.one_of(&REQUIREMENTS, "a requirement")?;
            let req = match word {
                "concurrent-kernels" => Requirement::ConcurrentKernels,
                "stream-priorities" => Requirement::StreamPriorities,
                "mapped-memory" => Requirement::MappedMemory,
                _ => {
                    cur.expect(">=")?;
                    match word {
                        "async-engines" => Requirement::AsyncEngines(cur.u32("a number")?),
                        "connections" => Requirement::Connections(cur.u32("a number")?),
                        "devices" => Requirement::Devices(cur.u32("a number")?),
                        _ => {
                            let col = cur.col();
                            let v = cur.next("a version (12.3)")?;
                            let (major, minor) = parse_version(v).ok_or_else(|| {
                                diag(self.file, cur.line, col, format!("expected a version like 12.3, found `{v}`"))
                            })?;
                            match word {
                                "runtime" => Requirement::Runtime(major * 1000 + minor * 10),
                                "driver" => Requirement::Driver(major * 1000 + minor * 10),
                                _ => Requirement::Compute(major, minor),
                            }
                        }
                    }
                }
            };
            self.case.requires.push(req);
            if !cur.eat(",") {
                return cur.done();
            }
        }
    }

    fn declare(&mut self, cur: &Cursor, name: &str, kind: NameKind, col: u32) -> Res<()> {
        if self.names.insert(name.to_owned(), kind).is_some() {
            return Err(diag(self.file, cur.line, col, format!("`{name}` is already declared")));
        }
        Ok(())
    }

    fn decl(&mut self, cur: &mut Cursor) -> Res<Decl> {
        let word = cur.next("a declaration")?;
        let col = cur.col();
        let name = cur.ident("a name")?;
        let decl = match word {
            "stream" => {
                self.declare(cur, &name, NameKind::Stream, col)?;
                let (mut non_blocking, mut priority, mut raw_flags, mut later) = (false, None, None, false);
                while let Some(w) = cur.peek().filter(|w| *w != "=>") {
                    match w {
                        "blocking" => non_blocking = false,
                        "later" => later = true,
                        "non-blocking" => non_blocking = true,
                        "priority" => {
                            cur.pos += 1;
                            priority = Some(Self::priority(cur)?);
                            continue;
                        }
                        "flags" => {
                            cur.pos += 1;
                            raw_flags = Some(cur.u32("a flags word")?);
                            continue;
                        }
                        _ => {
                            let words = ["blocking", "non-blocking", "priority", "flags", "later"];
                            return Err(cur.error(format!(
                                "expected a stream attribute ({}), found `{w}`{}",
                                words.join(", "),
                                did_you_mean(w, words)
                            )));
                        }
                    }
                    cur.pos += 1;
                }
                Decl::Stream { name, non_blocking, priority, raw_flags, later, expect: cur.codes()? }
            }
            "event" => {
                self.declare(cur, &name, NameKind::Event, col)?;
                let (mut flags, mut raw_flags, mut later) = (EventFlags::default(), None, false);
                while let Some(w) = cur.peek().filter(|w| *w != "=>") {
                    match w {
                        "disable-timing" => flags.disable_timing = true,
                        "blocking-sync" => flags.blocking_sync = true,
                        "interprocess" => flags.interprocess = true,
                        "later" => later = true,
                        "flags" => {
                            cur.pos += 1;
                            raw_flags = Some(cur.u32("a flags word")?);
                            continue;
                        }
                        _ => {
                            let words = ["disable-timing", "blocking-sync", "interprocess", "flags", "later"];
                            return Err(cur.error(format!(
                                "expected an event flag ({}), found `{w}`{}",
                                words.join(", "),
                                did_you_mean(w, words)
                            )));
                        }
                    }
                    cur.pos += 1;
                }
                Decl::Event { name, flags, raw_flags, later, expect: cur.codes()? }
            }
            "buffer" => {
                self.declare(cur, &name, NameKind::Other, col)?;
                let kind = match cur.one_of(&["device", "pinned", "pageable", "mapped"], "a memory kind")? {
                    "device" => MemKind::Device,
                    "pinned" => MemKind::Pinned,
                    "pageable" => MemKind::Pageable,
                    _ => MemKind::Mapped,
                };
                let bytes = cur.size()?;
                Decl::Buffer { name, kind, bytes, later: cur.eat("later") }
            }
            other => {
                self.declare(cur, &name, NameKind::Other, col)?;
                match other {
                    "gate" => Decl::Gate { name },
                    "thread" => Decl::Thread { name },
                    "graph" => Decl::Graph { name },
                    _ => Decl::Exec { name },
                }
            }
        };
        cur.done()?;
        Ok(decl)
    }

    fn stream(&self, cur: &mut Cursor) -> Res<StreamRef> {
        let col = cur.col();
        let word = cur.next("a stream")?;
        Ok(match word {
            "legacy" => StreamRef::Legacy,
            "per-thread" => StreamRef::PerThread,
            "null" => StreamRef::Null,
            _ => match self.names.get(word) {
                Some(NameKind::Stream) => StreamRef::Named(word.to_owned()),
                Some(_) => return Err(diag(self.file, cur.line, col, format!("`{word}` is not a stream"))),
                None => {
                    let streams = self.names_of(NameKind::Stream).chain(BUILTIN_STREAMS);
                    let hint = did_you_mean(word, streams);
                    return Err(diag(self.file, cur.line, col, format!("undeclared stream `{word}`{hint}")));
                }
            },
        })
    }

    fn names_of(&self, kind: NameKind) -> impl Iterator<Item = &str> {
        self.names.iter().filter(move |(_, k)| **k == kind).map(|(n, _)| n.as_str())
    }

    fn on_stream(&self, cur: &mut Cursor) -> Res<StreamRef> {
        cur.expect("on")?;
        self.stream(cur)
    }

    fn target(&self, cur: &mut Cursor) -> Res<Target> {
        match cur.peek() {
            Some(w) if self.names.get(w) == Some(&NameKind::Event) => {
                cur.pos += 1;
                Ok(Target::Event(w.to_owned()))
            }
            Some(w) if BUILTIN_STREAMS.contains(&w) || self.names.get(w) == Some(&NameKind::Stream) => {
                Ok(Target::Stream(self.stream(cur)?))
            }
            Some(w) => {
                let known =
                    self.names_of(NameKind::Stream).chain(self.names_of(NameKind::Event)).chain(BUILTIN_STREAMS);
                Err(cur.error(format!("expected a stream or an event, found `{w}`{}", did_you_mean(w, known))))
            }
            None => Err(cur.error("expected a stream or an event, found end of line".into())),
        }
    }

    /// `N`, `greatest` or `least`.
    fn priority(cur: &mut Cursor) -> Res<Priority> {
        let priority = match cur.peek() {
            Some("greatest") => Priority::Greatest,
            Some("least") => Priority::Least,
            Some(v) => Priority::Value(
                v.parse()
                    .map_err(|_| cur.error(format!("expected a priority (a number, greatest, least), found `{v}`")))?,
            ),
            None => return Err(cur.error("expected a priority, found end of line".into())),
        };
        cur.pos += 1;
        Ok(priority)
    }

    /// `[grid N|full] [block N] [shared BYTES]`, each at most once, in any order.
    fn launch_shape(cur: &mut Cursor) -> Res<LaunchShape> {
        let mut shape = LaunchShape::default();
        let mut seen = Vec::new();
        while let Some(word) = cur.peek().filter(|w| ["grid", "block", "shared"].contains(w)) {
            if seen.contains(&word) {
                return Err(cur.error(format!("`{word}` is given twice")));
            }
            seen.push(word);
            cur.pos += 1;
            match word {
                "grid" => {
                    shape.grid =
                        if cur.eat("full") { Grid::Full } else { Grid::Blocks(cur.u32("a block count or full")?) }
                }
                "block" => shape.block = cur.u32("a thread count")?,
                _ => shape.shared_bytes = cur.size()?,
            }
        }
        Ok(shape)
    }

    fn capture_mode(cur: &mut Cursor) -> Res<CaptureMode> {
        Ok(match cur.one_of(&["global", "thread-local", "relaxed"], "a capture mode")? {
            "global" => CaptureMode::Global,
            "thread-local" => CaptureMode::ThreadLocal,
            _ => CaptureMode::Relaxed,
        })
    }

    fn op(&mut self, cur: &mut Cursor) -> Res<Op> {
        let mut label = None;
        if cur.tokens.get(1).map(|t| t.text) == Some(":") {
            label = Some(cur.ident("a label")?);
            cur.pos += 1;
        }
        let mut thread = None;
        if cur.eat("@") {
            thread = Some(cur.ident("a thread name")?);
        }
        let col = cur.col();
        let word = cur.next("an operation")?;
        let kind = match word {
            "launch" => match cur.one_of(&LAUNCH_KINDS, "a kernel")? {
                "gate" => {
                    let gate = cur.ident("a gate")?;
                    OpKind::LaunchGate { gate, stream: self.on_stream(cur)? }
                }
                "spin" => {
                    let ns = if cur.peek() == Some("on") { 0 } else { cur.duration()? };
                    let stream = self.on_stream(cur)?;
                    OpKind::LaunchSpin { ns, stream, shape: Self::launch_shape(cur)? }
                }
                "lazy-spin" => {
                    let ns = if cur.peek() == Some("on") { 0 } else { cur.duration()? };
                    OpKind::LaunchLazySpin { ns, stream: self.on_stream(cur)? }
                }
                "fault" => {
                    let fault = match cur.one_of(&["illegal-address", "trap"], "a fault")? {
                        "illegal-address" => Fault::IllegalAddress,
                        _ => Fault::Trap,
                    };
                    OpKind::LaunchFault { fault, stream: self.on_stream(cur)? }
                }
                "fill" => {
                    let buf = cur.ident("a buffer")?;
                    let value = cur.u32("a value")?;
                    OpKind::LaunchFill { buf, value, stream: self.on_stream(cur)? }
                }
                "transform" => {
                    let buf = cur.ident("a buffer")?;
                    cur.expect("mul")?;
                    let mul = cur.u32("a multiplier")?;
                    cur.expect("add")?;
                    let add = cur.u32("an addend")?;
                    OpKind::LaunchTransform { buf, mul, add, stream: self.on_stream(cur)? }
                }
                _ => {
                    let a = cur.ident("a buffer")?;
                    let b = cur.ident("a buffer")?;
                    cur.expect("into")?;
                    let into = cur.ident("a buffer")?;
                    OpKind::LaunchCompare { a, b, into, stream: self.on_stream(cur)? }
                }
            },
            "memcpy" | "memcpy-async" => {
                let dst = cur.ident("a destination buffer")?;
                let src = cur.ident("a source buffer")?;
                let bytes = if cur.peek().is_some_and(|w| w != "on" && w != "=>") { Some(cur.size()?) } else { None };
                let stream = if word == "memcpy-async" { Some(self.on_stream(cur)?) } else { None };
                OpKind::Memcpy { dst, src, bytes, stream }
            }
            "memset" | "memset-async" => {
                let buf = cur.ident("a buffer")?;
                let bcol = cur.col();
                let v = cur.u32("a byte value")?;
                let byte = u8::try_from(v)
                    .map_err(|_| diag(self.file, cur.line, bcol, format!("expected a byte value 0..255, found {v}")))?;
                let bytes = if cur.peek().is_some_and(|w| w != "on" && w != "=>") { Some(cur.size()?) } else { None };
                let stream = if word == "memset-async" { Some(self.on_stream(cur)?) } else { None };
                OpKind::Memset { buf, byte, bytes, stream }
            }
            "record" => {
                let event = cur.ident("an event")?;
                let stream = self.on_stream(cur)?;
                OpKind::Record { event, stream, external: cur.eat("external") }
            }
            "wait" => {
                let stream = self.stream(cur)?;
                cur.expect("for")?;
                let event = cur.ident("an event")?;
                OpKind::Wait { stream, event, external: cur.eat("external") }
            }
            "query" => OpKind::Query { target: self.target(cur)? },
            "sync" => OpKind::Sync { target: self.target(cur)? },
            "device-sync" => OpKind::DeviceSync,
            "elapsed" => OpKind::Elapsed { start: cur.ident("an event")?, stop: cur.ident("an event")? },
            "host-func" => {
                let stream = self.on_stream(cur)?;
                let snapshot = if cur.eat("snapshot") { Some(cur.ident("a buffer")?) } else { None };
                let hold = if cur.eat("hold") { Some(cur.ident("a gate")?) } else { None };
                OpKind::HostFunc { stream, snapshot, hold }
            }
            "callback" => OpKind::Callback { stream: self.on_stream(cur)? },
            "begin-capture" => {
                let stream = self.stream(cur)?;
                let mode =
                    if cur.peek().is_some_and(|w| w != "=>") { Self::capture_mode(cur)? } else { CaptureMode::Global };
                OpKind::BeginCapture { stream, mode }
            }
            "end-capture" => {
                let stream = self.stream(cur)?;
                cur.expect("into")?;
                OpKind::EndCapture { stream, graph: cur.ident("a graph")? }
            }
            "capture-status" => {
                let stream = self.stream(cur)?;
                cur.expect("is")?;
                let status = match cur.one_of(&["none", "active", "invalidated"], "a capture status")? {
                    "none" => CaptureStatus::None,
                    "active" => CaptureStatus::Active,
                    _ => CaptureStatus::Invalidated,
                };
                OpKind::CaptureStatus { stream, status }
            }
            "capture-deps" => {
                let stream = self.stream(cur)?;
                cur.expect("is")?;
                OpKind::CaptureDeps { stream, count: cur.u32("a count")? }
            }
            "exchange-capture-mode" => OpKind::ExchangeCaptureMode { mode: Self::capture_mode(cur)? },
            "pointer-type" => {
                let buf = cur.ident("a buffer")?;
                cur.expect("is")?;
                let memory = match cur.one_of(&["unregistered", "host", "device", "managed"], "a memory type")? {
                    "unregistered" => MemoryType::Unregistered,
                    "host" => MemoryType::Host,
                    "device" => MemoryType::Device,
                    _ => MemoryType::Managed,
                };
                OpKind::PointerType { buf, memory }
            }
            "instantiate" => {
                let exec = cur.ident("an exec")?;
                cur.expect("from")?;
                OpKind::Instantiate { exec, graph: cur.ident("a graph")? }
            }
            "launch-graph" | "upload" => {
                let exec = cur.ident("an exec")?;
                let stream = self.on_stream(cur)?;
                if word == "upload" {
                    OpKind::Upload { exec, stream }
                } else {
                    OpKind::LaunchGraph { exec, stream }
                }
            }
            "create" => OpKind::Create { name: cur.ident("a name")? },
            "destroy" => OpKind::Destroy { name: cur.ident("a name")? },
            "malloc-async" | "free-async" => {
                let buf = cur.ident("a buffer")?;
                let stream = self.on_stream(cur)?;
                if word == "malloc-async" {
                    OpKind::MallocAsync { buf, stream }
                } else {
                    OpKind::FreeAsync { buf, stream }
                }
            }
            "register" => OpKind::Register { buf: cur.ident("a buffer")? },
            "unregister" => OpKind::Unregister { buf: cur.ident("a buffer")? },
            "set-device" => OpKind::SetDevice,
            "get-device" => OpKind::GetDevice,
            "set-limit" => {
                let limit = match cur.one_of(&["stack-size", "printf-fifo", "malloc-heap"], "a limit")? {
                    "stack-size" => Limit::StackSize,
                    "printf-fifo" => Limit::PrintfFifoSize,
                    _ => Limit::MallocHeapSize,
                };
                OpKind::SetLimit { limit, value: cur.size()? }
            }
            "set-cache-config" => {
                let words = ["prefer-none", "prefer-shared", "prefer-l1", "prefer-equal"];
                let config = match cur.one_of(&words, "a cache configuration")? {
                    "prefer-none" => CacheConfig::PreferNone,
                    "prefer-shared" => CacheConfig::PreferShared,
                    "prefer-l1" => CacheConfig::PreferL1,
                    _ => CacheConfig::PreferEqual,
                };
                OpKind::SetCacheConfig { config }
            }
            "stream-priority" => {
                let stream = self.stream(cur)?;
                cur.expect("is")?;
                OpKind::StreamPriority { stream, priority: Self::priority(cur)? }
            }
            "read" => OpKind::Read { buf: cur.ident("a buffer")? },
            "peek-last-error" => OpKind::PeekLastError,
            "malloc" => OpKind::Malloc { bytes: cur.size()? },
            "get-last-error" => OpKind::GetLastError,
            "open" => {
                let gate = cur.ident("a gate")?;
                let after_ns = if cur.eat("after") { Some(cur.duration()?) } else { None };
                OpKind::Open { gate, after_ns }
            }
            "sleep" => OpKind::Sleep { ns: cur.duration()? },
            other => {
                let ops = OP_WORDS.iter().copied().chain(DECL_WORDS).chain(EXPECT_WORDS);
                let hint = did_you_mean(other, ops);
                return Err(diag(self.file, cur.line, col, format!("expected an operation, found `{other}`{hint}")));
            }
        };
        let expect = cur.codes()?;
        cur.done()?;
        Ok(Op { label, thread, kind, expect })
    }

    fn expectation(&mut self, cur: &mut Cursor) -> Res<Expectation> {
        let e = match cur.next("expect, quality, variant or observe")? {
            "expect" => Expectation::Expect(self.predicate(cur)?),
            "quality" => Expectation::Quality(self.predicate(cur)?),
            word => {
                let mut alternatives = Vec::new();
                loop {
                    // Variant names name nothing else, so keywords (`sync`, `wait`) are fine here.
                    let col = cur.col();
                    let name = cur.next("a variant name")?.to_owned();
                    if !name.starts_with(|c: char| c.is_ascii_lowercase())
                        || !name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
                    {
                        return Err(diag(self.file, cur.line, col, format!("expected a variant name, found `{name}`")));
                    }
                    cur.expect(":")?;
                    alternatives.push((name, self.predicate(cur)?));
                    if !cur.eat("|") {
                        break;
                    }
                }
                if word == "observe" {
                    Expectation::Observe(alternatives)
                } else {
                    Expectation::Variant(alternatives)
                }
            }
        };
        cur.done()?;
        Ok(e)
    }

    fn arrow(cur: &mut Cursor) -> Res<(String, String, String)> {
        let graph = cur.ident("a graph")?;
        let from = cur.ident("a label")?;
        cur.expect("->")?;
        Ok((graph, from, cur.ident("a label")?))
    }

    fn predicate(&mut self, cur: &mut Cursor) -> Res<Predicate> {
        let col = cur.col();
        let first = cur.next("a predicate")?;
        let p = match first {
            "host-order" => {
                let mut labels = vec![cur.ident("a label")?];
                while cur.peek().is_some_and(|w| w != "|") {
                    labels.push(cur.ident("a label")?);
                }
                Predicate::HostOrder { labels }
            }
            "snapshot" => {
                let label = cur.ident("a label")?;
                cur.expect("==")?;
                Predicate::SnapshotEquals { label, value: cur.u32("a value")? }
            }
            "callback" => {
                let label = cur.ident("a label")?;
                cur.expect("status")?;
                Predicate::CallbackStatus { label, code: cur.code()? }
            }
            "host-runs" => {
                let label = cur.ident("a label")?;
                cur.expect("==")?;
                Predicate::HostRuns { label, count: cur.u32("a count")? }
            }
            "elapsed" => {
                let label = cur.ident("a label")?;
                let comparison = cur.one_of(&[">", ">=", "<", "<="], "a comparison")?;
                let inclusive = comparison.ends_with('=');
                let vcol = cur.col();
                let v = cur.next("milliseconds")?;
                let ms: f64 =
                    v.parse().ok().filter(|m: &f64| m.is_finite()).ok_or_else(|| {
                        diag(self.file, cur.line, vcol, format!("expected milliseconds, found `{v}`"))
                    })?;
                if comparison.starts_with('<') {
                    Predicate::ElapsedBelow { label, ms, inclusive }
                } else {
                    Predicate::ElapsedAbove { label, ms, inclusive }
                }
            }
            "nodes" | "edges" => {
                let graph = cur.ident("a graph")?;
                cur.expect("==")?;
                let count = cur.u32("a count")?;
                if first == "nodes" {
                    Predicate::NodeCount { graph, count }
                } else {
                    Predicate::EdgeCount { graph, count }
                }
            }
            "edge" | "no-edge" | "path" | "no-path" => {
                let (graph, from, to) = Self::arrow(cur)?;
                match first {
                    "edge" => Predicate::Edge { graph, from, to },
                    "no-edge" => Predicate::NoEdge { graph, from, to },
                    "path" => Predicate::Path { graph, from, to },
                    _ => Predicate::NoPath { graph, from, to },
                }
            }
            subject => {
                check_ident(subject).map_err(|_| {
                    let hint = did_you_mean(subject, PREDICATE_WORDS);
                    diag(self.file, cur.line, col, format!("expected a predicate, found `{subject}`{hint}"))
                })?;
                let subject = subject.to_owned();
                let verbs = ["before", "overlaps", "waited-for", "not-waited-for", "returned", "==", "[", "timed-out"];
                match cur.one_of(&verbs, "a predicate word")? {
                    "before" => Predicate::Before { first: subject, second: cur.ident("a label")? },
                    "overlaps" => Predicate::Overlaps { a: subject, b: cur.ident("a label")? },
                    "waited-for" => Predicate::WaitedFor { op: subject, gate: cur.ident("a gate")? },
                    "not-waited-for" => Predicate::NotWaitedFor { op: subject, gate: cur.ident("a gate")? },
                    "returned" => Predicate::Returned { op: subject, code: cur.code()? },
                    "timed-out" => Predicate::TimedOut { gate: subject },
                    "==" => Predicate::BufferEquals { buf: subject, index: None, value: cur.u32("a value")? },
                    _ => {
                        let index = cur.u32("an index")?;
                        cur.expect("]")?;
                        cur.expect("==")?;
                        Predicate::BufferEquals { buf: subject, index: Some(index as u64), value: cur.u32("a value")? }
                    }
                }
            }
        };
        Ok(p)
    }
}

fn valid_case_id(id: &str) -> bool {
    let segments: Vec<&str> = id.split('/').collect();
    segments.len() >= 2
        && segments.iter().all(|s| {
            !s.is_empty() && s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_')
        })
}

fn parse_version(v: &str) -> Option<(u32, u32)> {
    let (major, minor) = v.split_once('.')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}
