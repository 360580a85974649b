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
use super::call::{ArgWord, ObjectKind};
use super::cursor::{check_ident, diag, parse_size, parse_version, valid_case_id, Cursor, Res};
use super::diagnostic::{did_you_mean, Diagnostic};
use super::tokens::{strip_comment, tokenize, Token};
use super::words::*;
use std::collections::HashMap;

/// Parses one case file. Never panics; returns every problem found (at most one per case).
pub fn parse_file(path: &str, text: &str) -> Result<CaseFile, Vec<Diagnostic>> {
    parse_file_at(path, 1, text)
}

/// [`parse_file`] for a text that starts at line `first_line` of `path` (one case of a file, sent to a worker
/// process): diagnostics and positions name the file's lines.
pub fn parse_file_at(path: &str, first_line: u32, text: &str) -> Result<CaseFile, Vec<Diagnostic>> {
    let mut cases = Vec::new();
    let mut errors = Vec::new();
    let all: Vec<&str> = text.lines().collect();
    let mut lines = all.iter().enumerate().map(|(i, l)| (i as u32 + first_line, *l)).peekable();
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
        if tokens[0].text == "sweep" {
            let mut block = vec![(number, line)];
            for (n, l) in lines.by_ref() {
                block.push((n, l));
                if strip_comment(l).trim() == "end" {
                    break;
                }
            }
            match super::sweep::expand(path, &block) {
                Ok(mut expanded) => cases.append(&mut expanded),
                Err(e) => errors.push(e),
            }
            continue;
        }
        if tokens[0].text != "case" {
            errors.push(diag(
                path,
                number,
                tokens[0].col,
                format!("expected `case ID` or `sweep ID`, found `{}`", tokens[0].text),
            ));
            continue;
        }
        let mut parser = CaseParser::new(path, number, &tokens);
        let mut closed = false;
        let mut failed = parser.error.take();
        let mut last = number;
        for (number, line) in lines.by_ref() {
            last = number;
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
                Ok(mut case) => {
                    let index = |line: u32| (line - first_line) as usize;
                    case.positions.text = all[index(number)..=index(last)].join("\n");
                    cases.push(case);
                }
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

/// The header lines of free text, each once per case ([`CaseParser::header_text`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum HeaderText {
    Rule,
    Source,
    OwnProcess,
}

impl HeaderText {
    const ALL: [HeaderText; 3] = [HeaderText::Rule, HeaderText::Source, HeaderText::OwnProcess];

    fn key(self) -> &'static str {
        match self {
            HeaderText::Rule => "rule",
            HeaderText::Source => "source",
            HeaderText::OwnProcess => "own-process",
        }
    }

    /// What the line must hold, for the message when it is empty.
    fn expects(self) -> &'static str {
        match self {
            HeaderText::Rule | HeaderText::Source => "text",
            HeaderText::OwnProcess => "the reason (which state of the process the case changes or must read untouched)",
        }
    }

    /// A rule or a source may quote a `#` (a C++ directive, an issue number); a reason ends at a comment as other
    /// lines do.
    fn has_comments(self) -> bool {
        self == HeaderText::OwnProcess
    }
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

/// The most runs `samples:` may ask for (each is a whole run of the script; the suite must stay fast).
pub const MAX_SAMPLES: u32 = 20;

struct CaseParser<'f> {
    file: &'f str,
    case: Case,
    part: Part,
    names: HashMap<String, NameKind>,
    /// An error found in the `case` line itself.
    error: Option<Diagnostic>,
}

impl<'f> CaseParser<'f> {
    fn new(file: &'f str, line: u32, tokens: &[Token<'_>]) -> Self {
        let mut case = Case {
            id: String::new(),
            rule: String::new(),
            source: String::new(),
            requires: Vec::new(),
            env: Vec::new(),
            own_process: None,
            poisons: Vec::new(),
            timing: None,
            samples: 1,
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
        CaseParser { file, case, part: Part::Header, names: HashMap::new(), error }
    }

    fn line(&mut self, number: u32, raw: &str) -> Res<()> {
        let trimmed = raw.trim_start();
        let indent = (raw.len() - trimmed.len()) as u32 + 1;
        for which in HeaderText::ALL {
            if let Some(text) = trimmed.strip_prefix(which.key()).and_then(|t| t.strip_prefix(':')) {
                return self.header_text(number, indent, which, text);
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
        if DeclWord::from_word(first).is_some() {
            self.enter(Part::Decls, &cur, "declarations come before the script")?;
            let decl = self.decl(&mut cur)?;
            self.case.positions.decl_lines.push(number);
            self.case.decls.push(decl);
            return Ok(());
        }
        if ExpectWord::from_word(first).is_some() {
            self.part = Part::Expects;
            let e = self.expectation(&mut cur)?;
            self.case.positions.expect_lines.push(number);
            self.case.expects.push(e);
            return Ok(());
        }
        // `rule:`, `source:`, `env:` and `own-process:` were taken above, before tokenizing (their text is free).
        match StructureWord::from_word(first) {
            Some(StructureWord::End) => {
                cur.pos = 1;
                cur.done()
            }
            Some(StructureWord::Requires) => {
                cur.pos = 1;
                cur.expect(":")?;
                self.enter(Part::Header, &cur, "`requires:` belongs in the header, before declarations")?;
                self.requires(&mut cur)
            }
            Some(StructureWord::PoisonsContext) => {
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
            Some(StructureWord::Timing) => {
                cur.pos = 1;
                cur.expect(":")?;
                self.enter(Part::Header, &cur, "`timing:` belongs in the header, before declarations")?;
                if self.case.timing.is_some() {
                    return Err(cur.error("second `timing:` line".into()));
                }
                let source = cur.word()?;
                let from = if cur.eat("from") { Some(cur.ident("a label")?) } else { None };
                self.case.timing = Some(TimingSpec { source, from });
                cur.done()
            }
            Some(StructureWord::Samples) => {
                cur.pos = 1;
                cur.expect(":")?;
                self.enter(Part::Header, &cur, "`samples:` belongs in the header, before declarations")?;
                if self.case.samples != 1 {
                    return Err(cur.error("second `samples:` line".into()));
                }
                let n = cur.u32("a number of samples")?;
                if !(2..=MAX_SAMPLES).contains(&n) {
                    return Err(cur.error(format!("`samples:` takes a number from 2 to {MAX_SAMPLES}, not {n}")));
                }
                self.case.samples = n;
                cur.done()
            }
            Some(StructureWord::Case) => Err(cur.error("expected `end` before the next `case`".into())),
            Some(StructureWord::Rule | StructureWord::Source | StructureWord::Env | StructureWord::OwnProcess) => {
                Err(cur.error(format!("expected `{first}:` with a colon right after the word")))
            }
            None => {
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

    /// A header line of free text (`rule:`, `source:`, `own-process:`): in the header, not empty, once.
    fn header_text(&mut self, line: u32, col: u32, which: HeaderText, text: &str) -> Res<()> {
        let key = which.key();
        if self.part != Part::Header {
            return Err(diag(self.file, line, col, format!("out of order: `{key}:` belongs in the header")));
        }
        let text = if which.has_comments() { strip_comment(text) } else { text }.trim();
        if text.is_empty() {
            return Err(diag(self.file, line, col, format!("expected {} after `{key}:`", which.expects())));
        }
        // A line that was read left its text, which is never empty.
        let seen = match which {
            HeaderText::Rule => !self.case.rule.is_empty(),
            HeaderText::Source => !self.case.source.is_empty(),
            HeaderText::OwnProcess => self.case.own_process.is_some(),
        };
        if seen {
            return Err(diag(self.file, line, col, format!("second `{key}:` line")));
        }
        match which {
            HeaderText::Rule => self.case.rule = text.to_owned(),
            HeaderText::Source => self.case.source = text.to_owned(),
            HeaderText::OwnProcess => self.case.own_process = Some(text.to_owned()),
        }
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
        for (text, key) in [(&self.case.rule, "rule"), (&self.case.source, "source")] {
            if text.is_empty() {
                return Err(diag(self.file, line, 1, format!("case `{}` has no `{key}:` line", self.case.id)));
            }
        }
        Ok(self.case)
    }

    fn requires(&mut self, cur: &mut Cursor) -> Res<()> {
        loop {
            let req = match cur.word::<RequirementWord>()? {
                RequirementWord::ConcurrentKernels => Requirement::ConcurrentKernels,
                RequirementWord::StreamPriorities => Requirement::StreamPriorities,
                RequirementWord::MappedMemory => Requirement::MappedMemory,
                RequirementWord::MemoryPools => Requirement::MemoryPools,
                RequirementWord::PeerAccess => Requirement::PeerAccess,
                // Managed memory
                RequirementWord::ConcurrentManagedAccess => Requirement::ConcurrentManagedAccess,
                RequirementWord::PageableMemoryAccess => Requirement::PageableMemoryAccess,
                RequirementWord::NoDriver => Requirement::NoDriver,
                RequirementWord::Vulkan => Requirement::Vulkan,
                RequirementWord::AsyncEngines => Requirement::AsyncEngines(Self::at_least(cur)?),
                RequirementWord::Connections => Requirement::Connections(Self::at_least(cur)?),
                RequirementWord::Devices => Requirement::Devices(Self::at_least(cur)?),
                RequirementWord::Runtime => {
                    let (major, minor) = Self::version_at_least(cur)?;
                    Requirement::Runtime(major * 1000 + minor * 10)
                }
                RequirementWord::Driver => {
                    let (major, minor) = Self::version_at_least(cur)?;
                    Requirement::Driver(major * 1000 + minor * 10)
                }
                RequirementWord::Compute => {
                    let (major, minor) = Self::version_at_least(cur)?;
                    Requirement::Compute(major, minor)
                }
                RequirementWord::Memory => {
                    cur.expect("<")?;
                    Requirement::MemoryBelow(cur.size()?)
                }
            };
            self.case.requires.push(req);
            if !cur.eat(",") {
                return cur.done();
            }
        }
    }

    /// `>= N`.
    fn at_least(cur: &mut Cursor) -> Res<u32> {
        cur.expect(">=")?;
        cur.u32("a number")
    }

    /// `>= MAJOR.MINOR`.
    fn version_at_least(cur: &mut Cursor) -> Res<(u32, u32)> {
        cur.expect(">=")?;
        let col = cur.col();
        let v = cur.next("a version (12.3)")?;
        parse_version(v)
            .ok_or_else(|| diag(cur.file, cur.line, col, format!("expected a version like 12.3, found `{v}`")))
    }

    fn declare(&mut self, cur: &Cursor, name: &str, kind: NameKind, col: u32) -> Res<()> {
        if self.names.insert(name.to_owned(), kind).is_some() {
            return Err(diag(self.file, cur.line, col, format!("`{name}` is already declared")));
        }
        Ok(())
    }

    fn decl(&mut self, cur: &mut Cursor) -> Res<Decl> {
        let word = cur.word::<DeclWord>()?;
        let col = cur.col();
        let name = cur.ident("a name")?;
        let name_kind = match word {
            DeclWord::Stream => NameKind::Stream,
            DeclWord::Event => NameKind::Event,
            DeclWord::Buffer
            | DeclWord::Gate
            | DeclWord::Thread
            | DeclWord::Graph
            | DeclWord::Exec
            | DeclWord::Pool
            | DeclWord::Condition
            | DeclWord::Slice
            | DeclWord::Process => NameKind::Other,
        };
        self.declare(cur, &name, name_kind, col)?;
        let decl = match word {
            DeclWord::Stream => {
                let (mut non_blocking, mut priority, mut raw_flags, mut later) = (false, None, None, false);
                let mut device = None;
                while cur.peek().is_some_and(|w| w != "=>") {
                    match cur.word::<StreamAttr>()? {
                        StreamAttr::Blocking => non_blocking = false,
                        StreamAttr::NonBlocking => non_blocking = true,
                        StreamAttr::Later => later = true,
                        StreamAttr::Priority => priority = Some(Self::priority(cur)?),
                        StreamAttr::Flags => raw_flags = Some(cur.u32("a flags word")?),
                        StreamAttr::Device => device = Some(Self::device(cur)?),
                    }
                }
                Decl::Stream { name, non_blocking, priority, raw_flags, later, device, expect: cur.codes()? }
            }
            DeclWord::Event => {
                let (mut flags, mut raw_flags, mut later, mut device) = (EventFlags::default(), None, false, None);
                while cur.peek().is_some_and(|w| w != "=>") {
                    match cur.word::<EventAttr>()? {
                        EventAttr::DisableTiming => flags.disable_timing = true,
                        EventAttr::BlockingSync => flags.blocking_sync = true,
                        EventAttr::Interprocess => flags.interprocess = true,
                        EventAttr::Later => later = true,
                        EventAttr::Flags => raw_flags = Some(cur.u32("a flags word")?),
                        EventAttr::Device => device = Some(Self::device(cur)?),
                    }
                }
                Decl::Event { name, flags, raw_flags, later, device, expect: cur.codes()? }
            }
            DeclWord::Buffer => {
                let kind = cur.word::<MemKind>()?;
                let bytes = cur.size()?;
                let device = if cur.eat("device") { Some(Self::device(cur)?) } else { None };
                Decl::Buffer { name, kind, bytes, device, later: cur.eat("later") }
            }
            DeclWord::Gate => Decl::Gate { name },
            DeclWord::Thread => Decl::Thread { name },
            DeclWord::Process => Decl::Process { name },
            DeclWord::Graph => Decl::Graph { name },
            DeclWord::Exec => Decl::Exec { name },
            DeclWord::Pool => {
                let default = cur.eat("default");
                // An exportable pool
                let posix_fd = !default && cur.eat("posix-fd");
                Decl::Pool { name, default, posix_fd }
            }
            DeclWord::Condition => Decl::Condition { name },
            DeclWord::Slice => {
                cur.expect("of")?;
                let of = cur.ident("a buffer")?;
                cur.expect("at")?;
                let offset = cur.size()?;
                cur.expect("size")?;
                Decl::Slice { name, of, offset, bytes: cur.size()? }
            }
        };
        cur.done()?;
        Ok(decl)
    }

    fn stream(&self, cur: &mut Cursor) -> Res<StreamRef> {
        let col = cur.col();
        let word = cur.next("a stream")?;
        if let Some(builtin) = BuiltinStream::from_word(word) {
            return Ok(builtin.into());
        }
        Ok(match self.names.get(word) {
            Some(NameKind::Stream) => StreamRef::Named(word.to_owned()),
            Some(_) => return Err(diag(self.file, cur.line, col, format!("`{word}` is not a stream"))),
            None => {
                let streams = self.names_of(NameKind::Stream).chain(BuiltinStream::words());
                let hint = did_you_mean(word, streams);
                return Err(diag(self.file, cur.line, col, format!("undeclared stream `{word}`{hint}")));
            }
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
            Some(w) if BuiltinStream::from_word(w).is_some() || self.names.get(w) == Some(&NameKind::Stream) => {
                Ok(Target::Stream(self.stream(cur)?))
            }
            Some(w) => {
                let known =
                    self.names_of(NameKind::Stream).chain(self.names_of(NameKind::Event)).chain(BuiltinStream::words());
                Err(cur.error(format!("expected a stream or an event, found `{w}`{}", did_you_mean(w, known))))
            }
            None => Err(cur.error("expected a stream or an event, found end of line".into())),
        }
    }

    /// A device index of the case (0 is the case's own device).
    /// `call FUNCTION [PARAM=VALUE ...]` up to `=>` or the line's end (`case/call.rs`).
    fn call(&self, cur: &mut Cursor) -> Res<Call> {
        let start = cur.pos;
        match self.resolved_call(cur) {
            Ok(call) => Ok(call),
            // Built against an older header than the suite's (CUDA 12.x): a function, parameter, field or constant it
            // lacks makes the call unresolved, not the file invalid; the operation is then not run, saying why. With
            // the suite's own header (13.0 and later) every call must resolve.
            Err(e) if crate::api::header_version().is_some_and(|v| v < 13000) => {
                cur.pos = start;
                let function = cur.next("a cudart function")?.to_owned();
                let mut raw_args = Vec::new();
                while let Some(w) = cur.peek().filter(|w| *w != "=>") {
                    raw_args.push(w.to_owned());
                    cur.pos += 1;
                }
                Ok(Call { function, args: Vec::new(), unresolved: Some((e.message, raw_args.join(" "))) })
            }
            Err(e) => Err(e),
        }
    }

    fn resolved_call(&self, cur: &mut Cursor) -> Res<Call> {
        let col = cur.col();
        let function = cur.next("a cudart function")?;
        let Some(row) = crate::api::function(function) else {
            let hint = did_you_mean(function, crate::api::table().iter().map(|f| f.name.as_str()));
            return Err(diag(
                self.file,
                cur.line,
                col,
                format!("`{function}` is not a function of the API table{hint}"),
            ));
        };
        if row.callable.is_none() {
            let why = row.platform.unwrap_or("its header is not bound");
            return Err(diag(self.file, cur.line, col, format!("`{function}` cannot be called here ({why})")));
        }
        let mut args: Vec<CallArg> = Vec::new();
        while cur.peek().is_some_and(|w| w != "=>") {
            let col = cur.col();
            let name = cur.next("a parameter name")?;
            let Some(param) = row.params.iter().find(|p| p.name == name) else {
                let names: Vec<&str> = row.params.iter().map(|p| p.name).collect();
                return Err(diag(
                    self.file,
                    cur.line,
                    col,
                    format!("`{function}` has no parameter `{name}` (its parameters: {})", names.join(", ")),
                ));
            };
            if args.iter().any(|a| a.name == name) {
                return Err(diag(self.file, cur.line, col, format!("parameter `{name}` named twice")));
            }
            cur.expect("=")?;
            let rust_type =
                row.callable.and_then(|g| g.params.iter().find(|p| p.name == name)).map_or("", |p| p.rust_type);
            let value = self.arg_value(cur, &param.class, rust_type)?;
            args.push(CallArg { name: name.to_owned(), value });
        }
        Ok(Call { function: row.name.clone(), args, unresolved: None })
    }

    /// One argument's value, read as its parameter's class asks.
    fn arg_value(&self, cur: &mut Cursor, class: &crate::api::ParamClass, rust_type: &str) -> Res<ArgValue> {
        use crate::api::ParamClass as C;
        if *class == C::Text {
            if let Some(text) = tmp_text(cur) {
                return Ok(ArgValue::Text(text));
            }
            if let Some(text) = colon_text(cur)? {
                return Ok(ArgValue::Text(text));
            }
        }
        if cur.eat("{") {
            // A struct by value, or one a pointer parameter points to (`const T *`, and `T *` the header does not
            // make const though the call reads it: cudaMemGetDefaultMemPool's location).
            let ty = match class {
                C::Struct(ty) | C::InStruct(ty) => ty.clone(),
                _ => match crate::api::pointee_struct(rust_type) {
                    Some(s) => s.name.to_owned(),
                    None => {
                        return Err(cur.error(format!(
                            "a `{{field=value ...}}` value needs a struct or a pointer to one, not {}",
                            class.word()
                        )))
                    }
                },
            };
            return self.fields(cur, &ty);
        }
        let col = cur.col();
        let word = cur.peek().ok_or_else(|| cur.error("expected an argument value, found end of line".into()))?;
        // A declared name comes first: a buffer may be called `out` or `count` (the words are not reserved).
        if let Some(w) = ArgWord::from_word(word).filter(|_| !self.names.contains_key(word)) {
            cur.pos += 1;
            return Ok(ArgValue::Word(w));
        }
        if let Some((label, param)) = word
            .split_once('.')
            .filter(|(l, p)| check_ident(l).is_ok() && !p.is_empty() && !p.starts_with(|c: char| c.is_ascii_digit()))
        {
            cur.pos += 1;
            return Ok(ArgValue::Output { label: label.to_owned(), param: param.to_owned() });
        }
        if let Some((_, value)) = crate::api::constant(word) {
            cur.pos += 1;
            return Ok(ArgValue::Constant(word.to_owned(), value));
        }
        // An output written into a declared buffer (`numEdges=cnt`): its initial contents are the call's input where
        // the parameter is in/out, and `BUF[I] == V` reads what the call wrote.
        let declared_buffer = self.case.decls.iter().any(|d| match d {
            Decl::Buffer { name, .. } | Decl::Slice { name, .. } => name == word,
            _ => false,
        });
        if *class == C::Out && declared_buffer {
            cur.pos += 1;
            return Ok(ArgValue::Object(word.to_owned(), ObjectKind::Buffer));
        }
        if word.starts_with(|c: char| c.is_ascii_digit() || c == '-') {
            cur.pos += 1;
            let number = parse_size(word)
                .map(i128::from)
                .or_else(|| word.strip_prefix("0x").and_then(|h| i128::from_str_radix(h, 16).ok()))
                .or_else(|| word.parse::<i128>().ok())
                .ok_or_else(|| diag(self.file, cur.line, col, format!("expected a number, found `{word}`")))?;
            return Ok(match (class, u32::try_from(number)) {
                (C::Device, Ok(d)) => ArgValue::Device(d),
                _ => ArgValue::Int(number),
            });
        }
        Ok(match class {
            C::Handle(t) if t == "cudaStream_t" => ArgValue::Stream(self.stream(cur)?),
            C::Handle(t) if t == "cudaEvent_t" => ArgValue::Object(cur.ident("an event")?, ObjectKind::Event),
            C::Handle(t) if t == "cudaGraph_t" => ArgValue::Object(cur.ident("a graph")?, ObjectKind::Graph),
            C::Handle(t) if t == "cudaGraphExec_t" => ArgValue::Object(cur.ident("an exec")?, ObjectKind::Exec),
            C::Handle(t) if t == "cudaMemPool_t" => ArgValue::Object(cur.ident("a pool")?, ObjectKind::Pool),
            C::Handle(t) if t == "cudaGraphNode_t" => ArgValue::Node(cur.ident("a node label")?),
            C::Memory | C::UserData if ImageWord::from_word(word).is_some() => ArgValue::Image(cur.word()?),
            C::Memory | C::UserData => ArgValue::Object(cur.ident("a buffer")?, ObjectKind::Buffer),
            C::Text if ImageWord::from_word(word).is_some() => ArgValue::ImageFile(cur.word()?),
            // A variable where a function is asked for: a registered host address that is no kernel.
            C::Function | C::Symbol if SymbolWord::from_word(word).is_some() => ArgValue::Symbol(cur.word()?),
            C::Function => ArgValue::Kernel(cur.word()?),
            // A kernel where a symbol is asked for: its host stub, a registered address that is no variable (what
            // cudaGetFuncBySymbol's `symbolPtr`, "the device entry function", takes; the class comes from its name).
            C::Symbol if KernelWord::from_word(word).is_some() => ArgValue::Kernel(cur.word()?),
            C::Callback => {
                let callback: CallbackWord = cur.word()?;
                let param_type = rust_type.rsplit("::").next().unwrap_or(rust_type).trim();
                if callback.c_type() != param_type {
                    return Err(diag(
                        self.file,
                        cur.line,
                        col,
                        format!("`{word}` is a {}; this parameter is a {param_type}", callback.c_type()),
                    ));
                }
                ArgValue::Callback(callback)
            }
            C::Text if !starts_word(word) => {
                return Err(diag(self.file, cur.line, col, format!("expected a text (a word), found `{word}`")))
            }
            C::Text => {
                cur.pos += 1;
                ArgValue::Text(word.to_owned())
            }
            other => {
                return Err(diag(
                    self.file,
                    cur.line,
                    col,
                    format!(
                        "expected a value for a {} parameter (a number, a constant, `null`, `L.param`), found `{word}`",
                        other.word()
                    ),
                ))
            }
        })
    }

    /// `field=value ... }` of struct `ty` (the `{` is read).
    fn fields(&self, cur: &mut Cursor, ty: &str) -> Res<ArgValue> {
        let Some(st) = crate::api::structure(ty) else {
            return Err(cur.error(format!("`{ty}` has no field table")));
        };
        let mut fields: Vec<CallArg> = Vec::new();
        while !cur.eat("}") {
            let col = cur.col();
            let name = cur.next("a field name or `}`")?;
            let Some((_, field)) = crate::api::field(st, name) else {
                let names = crate::api::field_names(st);
                return Err(diag(
                    self.file,
                    cur.line,
                    col,
                    format!("`{ty}` has no field `{name}` (its fields: {})", names.join(", ")),
                ));
            };
            cur.expect("=")?;
            let class = crate::api::classify("", field.name, field.rust_type);
            let value = self.arg_value(cur, &class, field.rust_type)?;
            fields.push(CallArg { name: name.to_owned(), value });
        }
        self.device_location(ty, &mut fields);
        Ok(ArgValue::Fields(fields))
    }

    /// In a device location (`{type_=cudaMemLocationTypeDevice id=N}`), `id` is a device ordinal: the case's
    /// device N, as a device parameter's number is, for the devices the case requires (`requires: devices >= K`,
    /// and device 0 always). A case that needs several devices runs in a process that sees them all, counted from
    /// the one it was given: a literal ordinal named the wrong GPU there (on a 4-GPU host, `run --devices 1` made
    /// `pools/set-access-peer-device-reads` grant the pool's own GPU and fault on the other). Any other number is
    /// written as it is (an ordinal out of range, on purpose).
    fn device_location(&self, ty: &str, fields: &mut [CallArg]) {
        let on_device = |f: &CallArg| {
            f.name == "type_" && matches!(&f.value, ArgValue::Constant(c, _) if c == "cudaMemLocationTypeDevice")
        };
        if ty != "cudaMemLocation" || !fields.iter().any(on_device) {
            return;
        }
        let required = self.case.devices_required().max(1);
        for field in fields.iter_mut().filter(|f| f.name == "id") {
            if let ArgValue::Int(n) = field.value {
                if let Some(d) = u32::try_from(n).ok().filter(|d| *d < required) {
                    field.value = ArgValue::Device(d);
                }
            }
        }
    }

    fn device(cur: &mut Cursor) -> Res<u32> {
        cur.u32("a device index (0 is the case's device, 1 the next one)")
    }

    /// `N`, `greatest` or `least`.
    // `ATTR [is] VALUE` of `stream-attr`, `set-stream-attr`, `node-attr`, `set-node-attr`.
    fn attr_value(cur: &mut Cursor, is: bool) -> Res<AttrValue> {
        let attr: LaunchAttr = cur.word()?;
        if is {
            cur.expect("is")?;
        }
        Ok(match attr {
            LaunchAttr::Priority => AttrValue::Priority(Self::priority(cur)?),
            LaunchAttr::MemSyncDomain => AttrValue::MemSyncDomain(cur.word()?),
        })
    }

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

    /// `[times N]` of a kernel that launches graphs: how many device-side launches one run makes (default 1).
    fn launch_times(cur: &mut Cursor) -> Res<u32> {
        if !cur.eat("times") {
            return Ok(1);
        }
        let col = cur.col();
        match cur.u32("a number of launches")? {
            0 => Err(diag(cur.file, cur.line, col, "expected a number of launches of at least 1, found `0`".into())),
            n => Ok(n),
        }
    }

    /// `[grid N|full] [block N] [shared BYTES]`, each at most once, in any order.
    fn launch_shape(cur: &mut Cursor) -> Res<LaunchShape> {
        let mut shape = LaunchShape::default();
        let mut seen = Vec::new();
        while let Some(word) = cur.peek_word::<ShapeWord>() {
            if seen.contains(&word) {
                return Err(cur.error(format!("`{}` is given twice", word.word())));
            }
            seen.push(word);
            cur.pos += 1;
            match word {
                ShapeWord::Grid => {
                    shape.grid =
                        if cur.eat("full") { Grid::Full } else { Grid::Blocks(cur.u32("a block count or full")?) }
                }
                ShapeWord::Block => shape.block = cur.u32("a thread count")?,
                ShapeWord::Shared => shape.shared_bytes = cur.size()?,
                ShapeWord::Trigger => shape.trigger = true,
                ShapeWord::Programmatic => shape.programmatic = true,
            }
        }
        Ok(shape)
    }

    /// `[grid N|full] [block N]` of a compute kernel, each at most once, in any order.
    fn compute_shape(cur: &mut Cursor) -> Res<ComputeShape> {
        let mut shape = ComputeShape::default();
        while let Some(word) = cur.peek_word::<ShapeWord>() {
            match word {
                ShapeWord::Grid if shape.grid.is_none() => {
                    cur.pos += 1;
                    shape.grid =
                        Some(if cur.eat("full") { Grid::Full } else { Grid::Blocks(cur.u32("a block count or full")?) })
                }
                ShapeWord::Block if shape.block.is_none() => {
                    cur.pos += 1;
                    shape.block = Some(cur.u32("a thread count")?)
                }
                ShapeWord::Grid | ShapeWord::Block => {
                    return Err(cur.error(format!("`{}` is given twice", word.word())))
                }
                ShapeWord::Shared | ShapeWord::Trigger | ShapeWord::Programmatic => {
                    return Err(cur.error(format!(
                        "`{}` is for `launch spin`; a compute kernel takes `grid` and `block`",
                        word.word()
                    )))
                }
            }
        }
        Ok(shape)
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
        let mut repeat = 1;
        if cur.eat("repeat") {
            let col = cur.col();
            repeat = cur.u32("a repeat count")?;
            if repeat == 0 {
                return Err(diag(self.file, cur.line, col, "expected a repeat count of at least 1, found `0`".into()));
            }
        }
        let Some(word) = cur.peek_word::<OpWord>() else {
            let col = cur.col();
            let found = cur.next("an operation")?;
            let hint = did_you_mean(found, OpWord::words().chain(DeclWord::words()).chain(ExpectWord::words()));
            return Err(diag(self.file, cur.line, col, format!("expected an operation, found `{found}`{hint}")));
        };
        cur.pos += 1;
        let kind = match word {
            OpWord::Launch => {
                let mut kernel = match cur.word::<KernelWord>()? {
                    KernelWord::Gate => KernelCall::Gate { gate: cur.ident("a gate")? },
                    KernelWord::Spin => {
                        let ns = if cur.peek() == Some("on") { 0 } else { cur.duration()? };
                        KernelCall::Spin { ns, shape: LaunchShape::default() }
                    }
                    KernelWord::LazySpin => {
                        KernelCall::LazySpin { ns: if cur.peek() == Some("on") { 0 } else { cur.duration()? } }
                    }
                    KernelWord::Fault => KernelCall::Fault { fault: cur.word()? },
                    KernelWord::Fill => {
                        let buf = cur.ident("a buffer")?;
                        KernelCall::Fill { buf, value: cur.u32("a value")? }
                    }
                    KernelWord::Transform => {
                        let buf = cur.ident("a buffer")?;
                        cur.expect("mul")?;
                        let mul = cur.u32("a multiplier")?;
                        cur.expect("add")?;
                        KernelCall::Transform { buf, mul, add: cur.u32("an addend")? }
                    }
                    k @ (KernelWord::Bounded32
                    | KernelWord::ManyRegisters
                    | KernelWord::Sm80Only
                    | KernelWord::PtxOnly
                    | KernelWord::BadPtx
                    | KernelWord::FuturePtx) => {
                        return Err(cur.error(format!(
                            "`{}` is launched only by the generic call (`call cudaLaunchKernel func={} ...`)",
                            k.word(),
                            k.word()
                        )))
                    }
                    k @ (KernelWord::SetCondition | KernelWord::Countdown) => {
                        return Err(cur.error(format!(
                        "`{}` takes a conditional handle: it runs only as a graph kernel node (`add-node G kernel ...`)",
                        k.word()
                    )))
                    }
                    KernelWord::Compare => {
                        let a = cur.ident("a buffer")?;
                        let b = cur.ident("a buffer")?;
                        cur.expect("into")?;
                        KernelCall::Compare { a, b, into: cur.ident("a buffer")? }
                    }
                    KernelWord::VecAdd => {
                        let a = cur.ident("a buffer")?;
                        let b = cur.ident("a buffer")?;
                        cur.expect("into")?;
                        let into = cur.ident("a buffer")?;
                        KernelCall::VecAdd { a, b, into, shape: ComputeShape::default() }
                    }
                    KernelWord::SinCos => {
                        let buf = cur.ident("a buffer")?;
                        cur.expect("iterations")?;
                        let iterations = cur.u32("an iteration count")?;
                        KernelCall::SinCos { buf, iterations, shape: ComputeShape::default() }
                    }
                    KernelWord::Sleep => {
                        let col = cur.col();
                        let word = cur.next("a number of clock cycles")?;
                        let cycles = word.parse::<u64>().map_err(|_| {
                            diag(self.file, cur.line, col, format!("expected a number of clock cycles, found `{word}`"))
                        })?;
                        KernelCall::Sleep { cycles, shape: ComputeShape::default() }
                    }
                    KernelWord::DeviceLaunch => {
                        let exec = cur.ident("an executable graph")?;
                        let mode = cur.word()?;
                        let times = Self::launch_times(cur)?;
                        cur.expect("into")?;
                        KernelCall::DeviceLaunch { exec, mode, times, into: cur.ident("a buffer")? }
                    }
                    KernelWord::RelaunchSelf => {
                        let counter = cur.ident("a counter buffer")?;
                        cur.expect("runs")?;
                        let runs = cur.u32("a number of runs")?;
                        let times = Self::launch_times(cur)?;
                        cur.expect("into")?;
                        KernelCall::RelaunchSelf { counter, runs, times, into: cur.ident("a buffer")? }
                    }
                    KernelWord::CurrentGraph => {
                        cur.expect("into")?;
                        KernelCall::CurrentGraph { into: cur.ident("a buffer")? }
                    }
                };
                let stream = self.on_stream(cur)?;
                // The launch shape follows the stream.
                match &mut kernel {
                    KernelCall::Spin { shape, .. } => *shape = Self::launch_shape(cur)?,
                    KernelCall::VecAdd { shape, .. }
                    | KernelCall::SinCos { shape, .. }
                    | KernelCall::Sleep { shape, .. } => *shape = Self::compute_shape(cur)?,
                    _ => {}
                }
                OpKind::Launch { kernel, stream }
            }
            OpWord::Memcpy | OpWord::MemcpyAsync => {
                let dst = cur.ident("a destination buffer")?;
                let src = cur.ident("a source buffer")?;
                let ends = |w: &str| matches!(w, "on" | "=>" | "default");
                let bytes = if cur.peek().is_some_and(|w| !ends(w)) { Some(cur.size()?) } else { None };
                let inferred = cur.eat("default");
                let stream = if word == OpWord::MemcpyAsync { Some(self.on_stream(cur)?) } else { None };
                OpKind::Memcpy { dst, src, bytes, inferred, stream }
            }
            OpWord::MemcpyPeer | OpWord::MemcpyPeerAsync => {
                let dst = cur.ident("a destination buffer")?;
                let src = cur.ident("a source buffer")?;
                let bytes = if cur.peek().is_some_and(|w| w != "on" && w != "=>") { Some(cur.size()?) } else { None };
                let stream = if word == OpWord::MemcpyPeerAsync { Some(self.on_stream(cur)?) } else { None };
                OpKind::MemcpyPeer { dst, src, bytes, stream }
            }
            OpWord::Memset | OpWord::MemsetAsync => {
                let buf = cur.ident("a buffer")?;
                let bcol = cur.col();
                let v = cur.u32("a byte value")?;
                let byte = u8::try_from(v)
                    .map_err(|_| diag(self.file, cur.line, bcol, format!("expected a byte value 0..255, found {v}")))?;
                let bytes = if cur.peek().is_some_and(|w| w != "on" && w != "=>") { Some(cur.size()?) } else { None };
                let stream = if word == OpWord::MemsetAsync { Some(self.on_stream(cur)?) } else { None };
                OpKind::Memset { buf, byte, bytes, stream }
            }
            OpWord::Record => {
                let event = cur.ident("an event")?;
                let stream = self.on_stream(cur)?;
                OpKind::Record { event, stream, external: cur.eat("external") }
            }
            OpWord::Wait => {
                let stream = self.stream(cur)?;
                cur.expect("for")?;
                let event = cur.ident("an event")?;
                OpKind::Wait { stream, event, external: cur.eat("external") }
            }
            OpWord::Query => OpKind::Query { target: self.target(cur)? },
            OpWord::Sync => OpKind::Sync { target: self.target(cur)? },
            OpWord::DeviceSync => OpKind::DeviceSync,
            OpWord::Elapsed => OpKind::Elapsed { start: cur.ident("an event")?, stop: cur.ident("an event")? },
            OpWord::HostFunc => {
                let stream = self.on_stream(cur)?;
                let snapshot = if cur.eat("snapshot") { Some(cur.ident("a buffer")?) } else { None };
                let hold = if cur.eat("hold") { Some(cur.ident("a gate")?) } else { None };
                OpKind::HostFunc { stream, snapshot, hold }
            }
            OpWord::Callback => OpKind::Callback { stream: self.on_stream(cur)? },
            OpWord::BeginCapture => {
                let stream = self.stream(cur)?;
                let mode = if cur.peek().is_some_and(|w| w != "=>") { cur.word()? } else { CaptureMode::Global };
                OpKind::BeginCapture { stream, mode }
            }
            OpWord::EndCapture => {
                let stream = self.stream(cur)?;
                cur.expect("into")?;
                OpKind::EndCapture { stream, graph: cur.ident("a graph")? }
            }
            OpWord::CaptureStatus => {
                let stream = self.stream(cur)?;
                cur.expect("is")?;
                OpKind::CaptureStatus { stream, status: cur.word()? }
            }
            OpWord::CaptureDeps => {
                let stream = self.stream(cur)?;
                cur.expect("is")?;
                let count = cur.u32("a count")?;
                let mut nodes = Vec::new();
                if cur.eat("on") {
                    nodes.push(cur.ident("a node label")?);
                    while cur.peek().is_some_and(|w| w != "=>") {
                        nodes.push(cur.ident("a node label")?);
                    }
                }
                OpKind::CaptureDeps { stream, count, nodes }
            }
            OpWord::ExchangeCaptureMode => OpKind::ExchangeCaptureMode { mode: cur.word()? },
            OpWord::PointerType => {
                let buf = cur.ident("a buffer")?;
                cur.expect("is")?;
                OpKind::PointerType { buf, memory: cur.word()? }
            }
            OpWord::Instantiate => {
                let exec = cur.ident("an exec")?;
                cur.expect("from")?;
                let graph = cur.ident("a graph")?;
                let mut flags = Vec::new();
                while let Some(flag) = cur.peek_word::<InstantiateFlag>() {
                    cur.pos += 1;
                    flags.push(flag);
                }
                let upload = if cur.eat("upload") { Some(self.stream(cur)?) } else { None };
                let with_params = cur.eat("with-params");
                OpKind::Instantiate { exec, graph, flags, upload, with_params }
            }
            OpWord::Update => {
                let exec = cur.ident("an exec")?;
                cur.expect("from")?;
                OpKind::Update { exec, graph: cur.ident("a graph")? }
            }
            OpWord::AddNode => {
                let graph = cur.ident("a graph")?;
                let node = self.node_spec(cur)?;
                OpKind::AddNode { graph, node, after: Self::after(cur)? }
            }
            OpWord::AddDeps | OpWord::RemoveDeps => {
                let (graph, from, to) = Self::arrow(cur)?;
                OpKind::Dependency { graph, from, to, remove: word == OpWord::RemoveDeps }
            }
            OpWord::Clone => {
                let copy = cur.ident("a graph")?;
                cur.expect("from")?;
                OpKind::Clone { copy, graph: cur.ident("a graph")? }
            }
            OpWord::DestroyNode => OpKind::DestroyNode { node: cur.ident("a node label")? },
            OpWord::List => {
                let what = cur.word()?;
                let graph = cur.ident("a graph")?;
                let room = if cur.eat("room") { Some(cur.u32("a number of entries")?) } else { None };
                OpKind::List { what, graph, room }
            }
            OpWord::SetNode | OpWord::ExecSetNode => {
                let exec = if word == OpWord::ExecSetNode { Some(cur.ident("an exec")?) } else { None };
                let node = cur.ident("a node label")?;
                OpKind::SetNode { exec, node, spec: self.node_spec(cur)? }
            }
            OpWord::Enable => {
                let exec = cur.ident("an exec")?;
                let node = cur.ident("a node label")?;
                let enabled = match cur.next("on or off")? {
                    "on" => true,
                    "off" => false,
                    other => return Err(cur.error(format!("expected on or off, found `{other}`"))),
                };
                OpKind::SetEnabled { exec, node, enabled }
            }
            OpWord::IsEnabled => {
                let exec = cur.ident("an exec")?;
                OpKind::GetEnabled { exec, node: cur.ident("a node label")? }
            }
            OpWord::BeginCaptureToGraph => {
                let stream = self.stream(cur)?;
                cur.expect("into")?;
                let graph = cur.ident("a graph")?;
                let after = if cur.peek() == Some("after") { Self::after_until_mode(cur)? } else { Vec::new() };
                let mode = if cur.peek().is_some_and(|w| w != "=>") { cur.word()? } else { CaptureMode::Global };
                OpKind::BeginCaptureToGraph { stream, graph, after, mode }
            }
            OpWord::UpdateCaptureDeps => {
                let stream = self.stream(cur)?;
                let set = match cur.next("add or set")? {
                    "add" => false,
                    "set" => true,
                    other => return Err(cur.error(format!("expected add or set, found `{other}`"))),
                };
                let mut nodes = Vec::new();
                while cur.peek().is_some_and(|w| w != "=>") {
                    nodes.push(cur.ident("a node label")?);
                }
                OpKind::UpdateCaptureDeps { stream, set, nodes }
            }
            OpWord::ConditionCreate => {
                let condition = cur.ident("a condition")?;
                cur.expect("in")?;
                let graph = cur.ident("a graph")?;
                let default = if cur.eat("default") { Some(cur.u32("a value")?) } else { None };
                OpKind::ConditionCreate { condition, graph, default }
            }
            OpWord::PoolSet => {
                let pool = cur.ident("a pool")?;
                let attr = cur.word()?;
                let value = if cur.eat("max") { u64::MAX } else { cur.size()? };
                OpKind::PoolSet { pool, attr, value }
            }
            OpWord::PoolGet => {
                let pool = cur.ident("a pool")?;
                OpKind::PoolGet { pool, attr: cur.word()? }
            }
            OpWord::PoolTrim => {
                let pool = cur.ident("a pool")?;
                OpKind::PoolTrim { pool, keep: cur.size()? }
            }
            OpWord::GraphMemTrim => OpKind::GraphMemTrim,
            OpWord::GraphMemGet => OpKind::GraphMemGet { attr: cur.word()? },
            OpWord::LaunchGraph => {
                let exec = cur.ident("an exec")?;
                OpKind::LaunchGraph { exec, stream: self.on_stream(cur)? }
            }
            OpWord::Upload => {
                let exec = cur.ident("an exec")?;
                OpKind::Upload { exec, stream: self.on_stream(cur)? }
            }
            OpWord::Create => OpKind::Create { name: cur.ident("a name")? },
            OpWord::Destroy => OpKind::Destroy { name: cur.ident("a name")? },
            OpWord::MallocAsync => {
                let buf = cur.ident("a buffer")?;
                let stream = self.on_stream(cur)?;
                let pool = if cur.eat("from") { Some(cur.ident("a pool")?) } else { None };
                OpKind::MallocAsync { buf, stream, pool }
            }
            OpWord::FreeAsync => {
                let buf = cur.ident("a buffer")?;
                OpKind::FreeAsync { buf, stream: self.on_stream(cur)? }
            }
            OpWord::Register => OpKind::Register { buf: cur.ident("a buffer")? },
            OpWord::Unregister => OpKind::Unregister { buf: cur.ident("a buffer")? },
            OpWord::SetDevice => {
                let device = if cur.peek().is_some_and(|w| w != "=>") { Self::device(cur)? } else { 0 };
                OpKind::SetDevice { device }
            }
            OpWord::GetDevice => {
                let expect = if cur.eat("is") { Some(Self::device(cur)?) } else { None };
                OpKind::GetDevice { expect }
            }
            OpWord::EnablePeerAccess | OpWord::DisablePeerAccess => {
                OpKind::PeerAccess { peer: Self::device(cur)?, enable: word == OpWord::EnablePeerAccess }
            }
            OpWord::CanAccessPeer => {
                let device = Self::device(cur)?;
                OpKind::CanAccessPeer { device, peer: Self::device(cur)? }
            }
            OpWord::SetLimit => {
                let limit = cur.word()?;
                OpKind::SetLimit { limit, value: cur.size()? }
            }
            OpWord::SetCacheConfig => OpKind::SetCacheConfig { config: cur.word()? },
            OpWord::StreamPriority => {
                let stream = self.stream(cur)?;
                cur.expect("is")?;
                OpKind::StreamPriority { stream, priority: Self::priority(cur)? }
            }
            OpWord::StreamFlags => OpKind::StreamFlags { stream: self.stream(cur)? },
            OpWord::Read => OpKind::Read { buf: cur.ident("a buffer")? },
            OpWord::PeekLastError => OpKind::PeekLastError,
            OpWord::Malloc => OpKind::Malloc { bytes: cur.size()? },
            OpWord::Call => OpKind::Call(self.call(cur)?),
            OpWord::GetLastError => OpKind::GetLastError,
            OpWord::Open => {
                let gate = cur.ident("a gate")?;
                let after_ns = if cur.eat("after") { Some(cur.duration()?) } else { None };
                OpKind::Open { gate, after_ns }
            }
            OpWord::Sleep => OpKind::Sleep { ns: cur.duration()? },
            // Batched copies, stream identity, stream and kernel-node attributes.
            OpWord::MemcpyBatch | OpWord::Memcpy3dBatch => {
                let mut copies = Vec::new();
                while cur.peek().is_some_and(|w| w != "on") {
                    let dst = cur.ident("a destination buffer")?;
                    copies.push((dst, cur.ident("a source buffer")?));
                }
                if copies.is_empty() {
                    return Err(cur.error("expected at least one copy (DST SRC) before `on`".into()));
                }
                let stream = self.on_stream(cur)?;
                let order = if cur.eat("order") { cur.word()? } else { SrcAccessOrder::Stream };
                let three_d = word == OpWord::Memcpy3dBatch;
                let attrs_at = if !three_d && cur.eat("attrs-at") {
                    let mut at = vec![u64::from(cur.u32("a copy index")?)];
                    while cur.peek().is_some_and(|w| w != "=>") {
                        at.push(u64::from(cur.u32("a copy index")?));
                    }
                    Some(at)
                } else {
                    None
                };
                OpKind::MemcpyBatch { copies, stream, order, attrs_at, three_d }
            }
            OpWord::StreamDevice => {
                let stream = self.stream(cur)?;
                cur.expect("is")?;
                OpKind::StreamDevice { stream, device: Self::device(cur)? }
            }
            OpWord::StreamId => OpKind::StreamId { stream: self.stream(cur)? },
            OpWord::StreamAttr | OpWord::SetStreamAttr => {
                let stream = self.stream(cur)?;
                let value = Self::attr_value(cur, word == OpWord::StreamAttr)?;
                if word == OpWord::StreamAttr {
                    OpKind::StreamAttr { stream, value }
                } else {
                    OpKind::SetStreamAttr { stream, value }
                }
            }
            OpWord::CopyStreamAttrs => {
                let dst = self.stream(cur)?;
                cur.expect("from")?;
                OpKind::CopyStreamAttrs { dst, src: self.stream(cur)? }
            }
            OpWord::NodeAttr | OpWord::SetNodeAttr => {
                let node = cur.ident("a node label")?;
                let value = Self::attr_value(cur, word == OpWord::NodeAttr)?;
                if word == OpWord::NodeAttr {
                    OpKind::NodeAttr { node, value }
                } else {
                    OpKind::SetNodeAttr { node, value }
                }
            }
            // Managed memory, IPC, user objects, device facts, the launch queue
            OpWord::Attach => {
                let buf = cur.ident("a buffer")?;
                let stream = self.on_stream(cur)?;
                let mode = cur.word()?;
                let bytes = if cur.eat("bytes") { Some(cur.size()?) } else { None };
                OpKind::Attach { buf, stream, mode, bytes }
            }
            OpWord::Prefetch => {
                let buf = cur.ident("a buffer")?;
                cur.expect("to")?;
                let to = cur.word()?;
                OpKind::Prefetch { buf, to, stream: self.on_stream(cur)? }
            }
            OpWord::Advise => {
                let buf = cur.ident("a buffer")?;
                let advice = cur.word()?;
                OpKind::Advise { buf, advice, place: cur.word()? }
            }
            OpWord::MallocManaged => {
                let bytes = cur.size()?;
                OpKind::MallocManaged { bytes, host: cur.eat("host") }
            }
            OpWord::DeviceAttr => OpKind::DeviceAttr { attr: cur.word()? },
            OpWord::DeviceCount => OpKind::DeviceCount,
            OpWord::IpcMemHandle => OpKind::IpcMemHandle { buf: cur.ident("a buffer")? },
            OpWord::IpcOpenMem => {
                let handle = cur.ident("the label of an ipc-mem-handle")?;
                let into = if cur.eat("as") { Some(cur.ident("a buffer")?) } else { None };
                OpKind::IpcOpenMem { handle, into }
            }
            OpWord::IpcCloseMem => OpKind::IpcCloseMem { opened: cur.ident("the label of an ipc-open-mem")? },
            OpWord::IpcEventHandle => OpKind::IpcEventHandle { event: cur.ident("an event")? },
            OpWord::IpcOpenEvent => {
                let handle = cur.ident("the label of an ipc-event-handle")?;
                cur.expect("into")?;
                OpKind::IpcOpenEvent { handle, into: cur.ident("an event")? }
            }
            OpWord::PoolExport => OpKind::PoolExport { pool: cur.ident("a pool")? },
            OpWord::UserObject => OpKind::UserObject,
            OpWord::RetainUserObject => {
                let graph = cur.ident("a graph")?;
                let object = cur.ident("the label of a user-object")?;
                let count = if cur.eat("count") { cur.u32("a count")? } else { 1 };
                OpKind::RetainUserObject { graph, object, count, take: cur.eat("move") }
            }
            OpWord::ReleaseUserObject => {
                let first = cur.ident("a graph or the label of a user-object")?;
                let (graph, object) = match cur.peek() {
                    Some(w) if w != "count" && w != "=>" => (Some(first), cur.ident("the label of a user-object")?),
                    _ => (None, first),
                };
                let count = if cur.eat("count") { cur.u32("a count")? } else { 1 };
                OpKind::ReleaseUserObject { graph, object, count }
            }
            OpWord::Destroyed => {
                let object = cur.ident("the label of a user-object")?;
                OpKind::Destroyed { object, wait: cur.eat("wait") }
            }
            OpWord::QueueDepth => {
                let stream = self.stream(cur)?;
                cur.expect("behind")?;
                let gate = cur.ident("a gate")?;
                cur.expect("max")?;
                OpKind::QueueDepth { stream, gate, max: cur.u32("a launch count")? }
            }
            OpWord::VkMemory => {
                let col = cur.col();
                let bytes = cur.size()?;
                // Whole u32 words (`vk-write`, `snapshot`), and Vulkan refuses an allocation of 0 bytes.
                if bytes == 0 || bytes % 4 != 0 {
                    return Err(diag(
                        self.file,
                        cur.line,
                        col,
                        format!("a Vulkan memory size is a non-zero multiple of 4, not {bytes}"),
                    ));
                }
                OpKind::VkMemory { bytes }
            }
            OpWord::VkSemaphore => {
                let col = cur.col();
                let timeline = match cur.next("`binary` or `timeline`")? {
                    "binary" => None,
                    "timeline" => Some(if cur.eat("initial") { u64::from(cur.u32("an initial value")?) } else { 0 }),
                    other => {
                        return Err(diag(
                            self.file,
                            cur.line,
                            col,
                            format!("expected `binary` or `timeline`, found `{other}`"),
                        ))
                    }
                };
                OpKind::VkSemaphore { timeline }
            }
            OpWord::VkWrite => {
                let memory = cur.ident("the label of a vk-memory")?;
                OpKind::VkWrite { memory, value: cur.u32("a u32 value")? }
            }
            OpWord::VkRead => {
                let memory = cur.ident("the label of a vk-memory")?;
                let at = if cur.eat("at") { cur.size()? } else { 0 };
                let bytes = if cur.eat("bytes") { Some(cur.size()?) } else { None };
                if at % 4 != 0 || bytes.is_some_and(|b| b == 0 || b % 4 != 0) {
                    return Err(cur.error(
                        "`vk-read` reads whole u32 words: an offset and a non-zero size that are multiples of 4".into(),
                    ));
                }
                OpKind::VkRead { memory, at, bytes }
            }
            OpWord::VkCounter => OpKind::VkCounter { semaphore: cur.ident("the label of a vk-semaphore")? },
        };
        let expect = cur.codes()?;
        cur.done()?;
        Ok(Op { label, thread, kind, expect, repeat })
    }

    fn expectation(&mut self, cur: &mut Cursor) -> Res<Expectation> {
        let word = cur.word::<ExpectWord>()?;
        let e = match word {
            ExpectWord::Expect => Expectation::Expect(self.predicate(cur)?),
            ExpectWord::Quality => Expectation::Quality(self.predicate(cur)?),
            ExpectWord::Variant | ExpectWord::Observe => {
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
                if word == ExpectWord::Observe {
                    Expectation::Observe(alternatives)
                } else {
                    Expectation::Variant(alternatives)
                }
            }
            ExpectWord::Measure => Expectation::Measure(Self::measure(cur)?),
        };
        cur.done()?;
        Ok(e)
    }

    /// `NAME: WHAT` after `measure`.
    fn measure(cur: &mut Cursor) -> Res<Measure> {
        let name = cur.ident("a measure name")?;
        cur.expect(":")?;
        let range = |cur: &mut Cursor| -> Res<(String, Option<String>)> {
            let from = cur.ident("a label")?;
            let to = if cur.eat("to") { Some(cur.ident("a label")?) } else { None };
            Ok((from, to))
        };
        let per = |cur: &mut Cursor| -> Res<Option<u32>> {
            if !cur.eat("per") {
                return Ok(None);
            }
            let col = cur.col();
            match cur.u32("a divisor")? {
                0 => Err(diag(cur.file, cur.line, col, "expected a divisor of at least 1, found `0`".into())),
                n => Ok(Some(n)),
            }
        };
        let of = match cur.word::<MeasureWord>()? {
            MeasureWord::Elapsed => MeasureOf::Elapsed { label: cur.ident("a label")? },
            MeasureWord::Device => {
                let (from, to) = range(cur)?;
                MeasureOf::Device { from, to, per: per(cur)? }
            }
            MeasureWord::Bandwidth => {
                let (from, to) = range(cur)?;
                MeasureOf::Bandwidth { from, to }
            }
            MeasureWord::Host => {
                let (from, to) = range(cur)?;
                MeasureOf::Host { from, to, per: per(cur)? }
            }
            MeasureWord::Busy => {
                let from = cur.ident("a label")?;
                cur.expect("to")?;
                MeasureOf::Busy { from, to: cur.ident("a label")? }
            }
            MeasureWord::Spread => {
                let mut labels = vec![cur.ident("a label")?];
                while cur.peek().is_some() {
                    labels.push(cur.ident("a label")?);
                }
                MeasureOf::Spread { labels }
            }
            MeasureWord::Value => MeasureOf::Value { label: cur.ident("a label")? },
        };
        Ok(Measure { name, of })
    }

    /// `[after L ...]` up to the end of the line or `=>`.
    fn after(cur: &mut Cursor) -> Res<Vec<String>> {
        let mut labels = Vec::new();
        if cur.eat("after") {
            labels.push(cur.ident("a node label")?);
            while cur.peek().is_some_and(|w| w != "=>") {
                labels.push(cur.ident("a node label")?);
            }
        }
        Ok(labels)
    }

    /// `after L ...` up to a capture mode, the end of the line or `=>`.
    fn after_until_mode(cur: &mut Cursor) -> Res<Vec<String>> {
        cur.expect("after")?;
        let mut labels = vec![cur.ident("a node label")?];
        while cur.peek().is_some_and(|w| w != "=>" && CaptureMode::from_word(w).is_none()) {
            labels.push(cur.ident("a node label")?);
        }
        Ok(labels)
    }

    /// A node's kind and parameters (`add-node`, `set-node`, `exec-set-node`).
    fn node_spec(&self, cur: &mut Cursor) -> Res<NodeSpec> {
        let col = cur.col();
        let line = cur.line;
        let unsupported = |what: &str| Err(diag(self.file, line, col, format!("{what} nodes are not in the language")));
        Ok(match cur.word::<NodeWord>()? {
            NodeWord::Kernel => {
                let kcol = cur.col();
                NodeSpec::Kernel(match cur.word::<KernelWord>()? {
                    KernelWord::Gate => NodeKernel::Gate { gate: cur.ident("a gate")? },
                    KernelWord::Spin => NodeKernel::Spin {
                        ns: if cur.peek().is_some_and(|w| w != "after" && w != "=>") { cur.duration()? } else { 0 },
                    },
                    KernelWord::Fill => {
                        let buf = cur.ident("a buffer")?;
                        NodeKernel::Fill { buf, value: cur.u32("a value")? }
                    }
                    KernelWord::Transform => {
                        let buf = cur.ident("a buffer")?;
                        cur.expect("mul")?;
                        let mul = cur.u32("a multiplier")?;
                        cur.expect("add")?;
                        NodeKernel::Transform { buf, mul, add: cur.u32("an addend")? }
                    }
                    KernelWord::SetCondition => {
                        let condition = cur.ident("a condition")?;
                        cur.expect("from")?;
                        NodeKernel::SetCondition { condition, buf: cur.ident("a buffer")? }
                    }
                    KernelWord::Countdown => {
                        let condition = cur.ident("a condition")?;
                        NodeKernel::Countdown { condition, buf: cur.ident("a buffer")? }
                    }
                    k @ (KernelWord::DeviceLaunch | KernelWord::RelaunchSelf | KernelWord::CurrentGraph) => {
                        return Err(diag(
                            self.file,
                            cur.line,
                            kcol,
                            format!(
                                "`{}` is not a graph kernel here: capture `launch {} ...` on a capturing stream, as \
                                 the Programming Guide's device graph launch examples do",
                                k.word(),
                                k.word()
                            ),
                        ))
                    }
                    k @ (KernelWord::LazySpin
                    | KernelWord::Bounded32
                    | KernelWord::ManyRegisters
                    | KernelWord::Sm80Only
                    | KernelWord::PtxOnly
                    | KernelWord::BadPtx
                    | KernelWord::FuturePtx
                    | KernelWord::Fault
                    | KernelWord::Compare
                    | KernelWord::VecAdd
                    | KernelWord::SinCos
                    | KernelWord::Sleep) => {
                        return Err(diag(
                            self.file,
                            cur.line,
                            kcol,
                            format!(
                                "`{}` is not a graph kernel (gate, spin, fill, transform, set-condition, countdown)",
                                k.word()
                            ),
                        ))
                    }
                })
            }
            NodeWord::Memcpy => {
                let dst = cur.ident("a destination buffer")?;
                let src = cur.ident("a source buffer")?;
                let bytes =
                    if cur.peek().is_some_and(|w| w != "after" && w != "=>") { Some(cur.size()?) } else { None };
                NodeSpec::Memcpy { dst, src, bytes }
            }
            NodeWord::Memset => {
                let buf = cur.ident("a buffer")?;
                let bcol = cur.col();
                let v = cur.u32("a byte value")?;
                let byte = u8::try_from(v)
                    .map_err(|_| diag(self.file, cur.line, bcol, format!("expected a byte value 0..255, found {v}")))?;
                let bytes =
                    if cur.peek().is_some_and(|w| w != "after" && w != "=>") { Some(cur.size()?) } else { None };
                NodeSpec::Memset { buf, byte, bytes }
            }
            NodeWord::Host => NodeSpec::Host,
            NodeWord::Empty => NodeSpec::Empty,
            NodeWord::EventRecord => NodeSpec::EventRecord { event: cur.ident("an event")? },
            NodeWord::WaitEvent => NodeSpec::WaitEvent { event: cur.ident("an event")? },
            NodeWord::Graph => NodeSpec::Child { graph: cur.ident("a graph")? },
            NodeWord::MemAlloc => NodeSpec::MemAlloc { buf: cur.ident("a buffer")? },
            NodeWord::MemFree => NodeSpec::MemFree { buf: cur.ident("a buffer")? },
            NodeWord::Conditional => {
                let kind = cur.word()?;
                let condition = cur.ident("a condition")?;
                let size = if cur.eat("size") { Some(cur.u32("a size")?) } else { None };
                cur.expect("bodies")?;
                let mut bodies = vec![cur.ident("a graph")?];
                while cur.peek().is_some_and(|w| w != "after" && w != "=>") {
                    bodies.push(cur.ident("a graph")?);
                }
                NodeSpec::Conditional { kind, condition, size: size.unwrap_or(bodies.len() as u32), bodies }
            }
            NodeWord::ExtSemaphoreSignal | NodeWord::ExtSemaphoreWait => return unsupported("external-semaphore"),
        })
    }

    fn arrow(cur: &mut Cursor) -> Res<(String, String, String)> {
        let graph = cur.ident("a graph")?;
        let from = cur.ident("a label")?;
        cur.expect("->")?;
        Ok((graph, from, cur.ident("a label")?))
    }

    fn predicate(&mut self, cur: &mut Cursor) -> Res<Predicate> {
        let Some(first) = cur.peek_word::<PredicateWord>() else {
            return self.subject_predicate(cur);
        };
        cur.pos += 1;
        let p = match first {
            PredicateWord::HostOrder => {
                let mut labels = vec![cur.ident("a label")?];
                while cur.peek().is_some_and(|w| w != "|") {
                    labels.push(cur.ident("a label")?);
                }
                Predicate::HostOrder { labels }
            }
            PredicateWord::Snapshot => {
                let label = cur.ident("a label")?;
                cur.expect("==")?;
                Predicate::SnapshotEquals { label, value: cur.u32("a value")? }
            }
            PredicateWord::Callback => {
                let label = cur.ident("a label")?;
                cur.expect("status")?;
                Predicate::CallbackStatus { label, code: cur.code()? }
            }
            PredicateWord::HostRuns => {
                let label = cur.ident("a label")?;
                cur.expect("==")?;
                Predicate::HostRuns { label, count: cur.u32("a count")? }
            }
            PredicateWord::Elapsed => {
                let label = cur.ident("a label")?;
                let comparison = cur.word::<Comparison>()?;
                let vcol = cur.col();
                let v = cur.next("milliseconds")?;
                let ms: f64 =
                    v.parse().ok().filter(|m: &f64| m.is_finite()).ok_or_else(|| {
                        diag(self.file, cur.line, vcol, format!("expected milliseconds, found `{v}`"))
                    })?;
                match comparison {
                    Comparison::Above => Predicate::ElapsedAbove { label, ms, inclusive: false },
                    Comparison::AtLeast => Predicate::ElapsedAbove { label, ms, inclusive: true },
                    Comparison::Below => Predicate::ElapsedBelow { label, ms, inclusive: false },
                    Comparison::AtMost => Predicate::ElapsedBelow { label, ms, inclusive: true },
                }
            }
            PredicateWord::Nodes => {
                let graph = cur.ident("a graph")?;
                cur.expect("==")?;
                Predicate::NodeCount { graph, count: cur.u32("a count")? }
            }
            PredicateWord::Edges => {
                let graph = cur.ident("a graph")?;
                cur.expect("==")?;
                Predicate::EdgeCount { graph, count: cur.u32("a count")? }
            }
            PredicateWord::Edge => {
                let (graph, from, to) = Self::arrow(cur)?;
                Predicate::Edge { graph, from, to }
            }
            PredicateWord::NoEdge => {
                let (graph, from, to) = Self::arrow(cur)?;
                Predicate::NoEdge { graph, from, to }
            }
            PredicateWord::Path => {
                let (graph, from, to) = Self::arrow(cur)?;
                Predicate::Path { graph, from, to }
            }
            PredicateWord::NoPath => {
                let (graph, from, to) = Self::arrow(cur)?;
                Predicate::NoPath { graph, from, to }
            }
            PredicateWord::NodeKind => {
                let graph = cur.ident("a graph")?;
                let node = cur.ident("a label")?;
                cur.expect("is")?;
                Predicate::NodeKind { graph, node, kind: cur.word()? }
            }
        };
        Ok(p)
    }

    /// A predicate that starts with the name it is about: `A before B`, `BUF[I] == V`, `OP returned CODE`, ...
    fn subject_predicate(&mut self, cur: &mut Cursor) -> Res<Predicate> {
        let col = cur.col();
        let subject = cur.next("a predicate")?;
        // `L.param` (a call's output) names its operation's label before the dot.
        let base = subject.split_once('.').map_or(subject, |(label, _)| label);
        check_ident(base).map_err(|_| {
            let hint = did_you_mean(subject, PredicateWord::words());
            diag(self.file, cur.line, col, format!("expected a predicate, found `{subject}`{hint}"))
        })?;
        let subject = subject.to_owned();
        Ok(match cur.word::<Verb>()? {
            Verb::Before => Predicate::Before { first: subject, second: cur.ident("a label")? },
            Verb::Overlaps => Predicate::Overlaps { a: subject, b: cur.ident("a label")? },
            Verb::WaitedFor => Predicate::WaitedFor { op: subject, gate: cur.ident("a gate")? },
            Verb::NotWaitedFor => Predicate::NotWaitedFor { op: subject, gate: cur.ident("a gate")? },
            Verb::Returned => Predicate::Returned { op: subject, code: cur.code()? },
            Verb::TimedOut => Predicate::TimedOut { gate: subject },
            Verb::Equals => Predicate::BufferEquals { buf: subject, index: None, value: cur.u32("a value")? },
            Verb::Value => {
                let cmp = cur.word()?;
                let value = if cur.eat("max") { u64::MAX } else { cur.size()? };
                Predicate::Value { label: subject, cmp, value }
            }
            Verb::NullPadded => Predicate::NullPadded { label: subject },
            Verb::Result => {
                cur.expect("is")?;
                let col = cur.col();
                let result = cur.next("a result")?;
                if InstantiateResult::from_word(result).is_none() && UpdateResult::from_word(result).is_none() {
                    let hint = did_you_mean(result, InstantiateResult::words().chain(UpdateResult::words()));
                    return Err(diag(self.file, cur.line, col, format!("expected a result, found `{result}`{hint}")));
                }
                Predicate::Result { label: subject, result: result.to_owned() }
            }
            verb @ (Verb::ErrorNode | Verb::ErrorFrom) => {
                cur.expect("is")?;
                let node = if cur.eat("none") { None } else { Some(cur.ident("a node label or none")?) };
                Predicate::ErrorNode { label: subject, from: verb == Verb::ErrorFrom, node }
            }
            Verb::SameAddress => Predicate::SameAddress { a: subject, b: cur.ident("a label")?, same: true },
            Verb::OtherAddress => Predicate::SameAddress { a: subject, b: cur.ident("a label")?, same: false },
            Verb::SameValue => Predicate::SameValue { a: subject, b: cur.ident("a label")?, same: true },
            Verb::OtherValue => Predicate::SameValue { a: subject, b: cur.ident("a label")?, same: false },
            Verb::SameCode => Predicate::SameCode { a: subject, b: cur.ident("a label")? },
            Verb::Index => {
                let index = cur.u32("an index")?;
                cur.expect("]")?;
                cur.expect("==")?;
                Predicate::BufferEquals { buf: subject, index: Some(index as u64), value: cur.u32("a value")? }
            }
        })
    }
}

/// Whether a token is a word (not a symbol such as `:` or `=`).
fn starts_word(token: &str) -> bool {
    token.starts_with(|c: char| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/'))
}

/// A text of words joined by `:` written without spaces (`0000:ff:1f.7`, a PCI bus id), which the tokenizer splits
/// at each `:` (the symbol of `L: operation` and `label:`, which start a line, never a value); None, consuming
/// nothing, where the cursor's word is not followed by an adjoining `:`. A text that ends in `:` is an error: the
/// next word would be read as the next parameter.
fn colon_text(cur: &mut Cursor) -> Res<Option<String>> {
    let Some(t) = cur.tokens.get(cur.pos..cur.pos + 2) else { return Ok(None) };
    let adjoins = |a: &Token, b: &Token| b.col == a.col + a.text.len() as u32;
    if !(starts_word(t[0].text) && t[1].text == ":" && adjoins(&t[0], &t[1])) {
        return Ok(None);
    }
    let col = t[0].col;
    let mut text = t[0].text.to_owned();
    cur.pos += 1;
    while let Some(next) = cur.tokens.get(cur.pos).filter(|next| adjoins(&cur.tokens[cur.pos - 1], next)) {
        if !(next.text == ":" || starts_word(next.text)) {
            break;
        }
        text.push_str(next.text);
        cur.pos += 1;
    }
    if text.ends_with(':') {
        return Err(diag(
            cur.file,
            cur.line,
            col,
            format!("the text `{text}` ends with `:`: a text with `:` is written without spaces (`0000:ff:1f.7`)"),
        ));
    }
    Ok(Some(text))
}

/// `{tmp}` and what follows it up to the next space (`{tmp}/g.dot`) as one text value, which the tokenizer splits at
/// the braces; None, consuming nothing, where the cursor is not at one.
fn tmp_text(cur: &mut Cursor) -> Option<String> {
    let t = cur.tokens.get(cur.pos..cur.pos + 3)?;
    let joined = t[1].col == t[0].col + 1 && t[2].col == t[1].col + t[1].text.len() as u32;
    if !(t[0].text == "{" && t[1].text == "tmp" && t[2].text == "}" && joined) {
        return None;
    }
    let mut text = crate::case::call::TMP.to_owned();
    let mut end = t[2].col + 1;
    cur.pos += 3;
    while let Some(next) = cur.tokens.get(cur.pos).filter(|next| next.col == end) {
        text.push_str(next.text);
        end = next.col + next.text.len() as u32;
        cur.pos += 1;
    }
    Some(text)
}
