//! A cursor over one line's tokens, and the lexical pieces of the language: names, numbers, sizes, durations,
//! versions, case ids and cudaError names. Every "expected X, found Y" message of the parser is made here.

use super::diagnostic::{did_you_mean, Diagnostic};
use super::tokens::Token;
use super::words::{reserved, Word};

pub(super) fn diag(file: &str, line: u32, col: u32, message: String) -> Diagnostic {
    Diagnostic { file: file.to_owned(), line, col, message }
}

/// A cursor over one line's tokens.
pub(super) struct Cursor<'t, 'a> {
    pub tokens: &'t [Token<'a>],
    pub pos: usize,
    pub file: &'t str,
    pub line: u32,
    /// Column just past the line's end, for "expected X, found end of line".
    pub end_col: u32,
}

pub(super) type Res<T> = Result<T, Diagnostic>;

impl<'t, 'a> Cursor<'t, 'a> {
    pub fn peek(&self) -> Option<&'a str> {
        self.tokens.get(self.pos).map(|t| t.text)
    }

    pub fn col(&self) -> u32 {
        self.tokens.get(self.pos).map_or(self.end_col, |t| t.col)
    }

    pub fn error(&self, message: String) -> Diagnostic {
        diag(self.file, self.line, self.col(), message)
    }

    pub fn found(&self) -> String {
        self.peek().map_or("end of line".to_owned(), |t| format!("`{t}`"))
    }

    pub fn next(&mut self, what: &str) -> Res<&'a str> {
        match self.peek() {
            Some(t) => {
                self.pos += 1;
                Ok(t)
            }
            None => Err(self.error(format!("expected {what}, found end of line"))),
        }
    }

    pub fn eat(&mut self, word: &str) -> bool {
        if self.peek() == Some(word) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    pub fn expect(&mut self, word: &str) -> Res<()> {
        if self.eat(word) {
            Ok(())
        } else {
            let hint = self.peek().map(|p| did_you_mean(p, [word])).unwrap_or_default();
            Err(self.error(format!("expected `{word}`, found {}{hint}", self.found())))
        }
    }

    /// A member of the word set `W`, with the set in the message and a suggestion when the token is close to one.
    pub fn word<W: Word>(&mut self) -> Res<W> {
        if let Some(w) = self.peek().and_then(W::from_word) {
            self.pos += 1;
            return Ok(w);
        }
        let hint = self.peek().map(|p| did_you_mean(p, W::words())).unwrap_or_default();
        let listed = if W::ALL.len() <= 12 {
            format!(" ({})", W::words().collect::<Vec<_>>().join(", "))
        } else {
            String::new()
        };
        Err(self.error(format!("expected {}{listed}, found {}{hint}", W::WHAT, self.found())))
    }

    /// The next token as a member of `W`, not consumed.
    pub fn peek_word<W: Word>(&self) -> Option<W> {
        self.peek().and_then(W::from_word)
    }

    pub fn done(&self) -> Res<()> {
        match self.peek() {
            None => Ok(()),
            Some(t) => Err(self.error(format!("unexpected `{t}` at the end of the line"))),
        }
    }

    pub fn ident(&mut self, what: &str) -> Res<String> {
        let col = self.col();
        let word = self.next(what)?;
        check_ident(word).map_err(|m| diag(self.file, self.line, col, format!("expected {what}: {m}")))?;
        Ok(word.to_owned())
    }

    pub fn u32(&mut self, what: &str) -> Res<u32> {
        let col = self.col();
        let word = self.next(what)?;
        parse_u32(word).ok_or_else(|| diag(self.file, self.line, col, format!("expected {what}, found `{word}`")))
    }

    pub fn size(&mut self) -> Res<u64> {
        let col = self.col();
        let word = self.next("a size (4096, 64KiB, 1MiB)")?;
        parse_size(word).ok_or_else(|| {
            diag(self.file, self.line, col, format!("expected a size in bytes (4096, 64KiB, 1MiB), found `{word}`"))
        })
    }

    pub fn duration(&mut self) -> Res<u64> {
        let col = self.col();
        let word = self.next("a duration (500ns, 20us, 2ms, 1s)")?;
        parse_duration(word).ok_or_else(|| {
            diag(self.file, self.line, col, format!("expected a duration (500ns, 20us, 2ms, 1s), found `{word}`"))
        })
    }

    /// `=> CODE | CODE ...`, or nothing.
    pub fn codes(&mut self) -> Res<Vec<String>> {
        let mut codes = Vec::new();
        if self.eat("=>") {
            // `=> any`: every code is acceptable, and the report records which (a sweep row's `observe`).
            if self.eat("any") {
                return Ok(vec!["any".to_owned()]);
            }
            loop {
                codes.push(self.code()?);
                if !self.eat("|") {
                    break;
                }
            }
        }
        Ok(codes)
    }

    pub fn code(&mut self) -> Res<String> {
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
pub(super) fn check_ident(word: &str) -> Result<(), String> {
    let mut chars = word.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_lowercase() || c == '_');
    if !first_ok || !word.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_' || c == '-') {
        return Err(format!("`{word}` is not a name (lowercase letters, digits, `_`, `-`; starting with a letter)"));
    }
    if let Some(what) = reserved(word) {
        return Err(format!("`{word}` is {what}"));
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

pub(super) fn valid_case_id(id: &str) -> bool {
    let segments: Vec<&str> = id.split('/').collect();
    segments.len() >= 2
        && segments.iter().all(|s| {
            let lower = s.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-' || c == '_');
            // A cudart function's name, as a sweep row's id spells it (`api/null-out/cudaMemGetInfo`).
            let function = s.starts_with("cuda") && s.chars().all(|c| c.is_ascii_alphanumeric());
            !s.is_empty() && (lower || function)
        })
}

pub(super) fn parse_version(v: &str) -> Option<(u32, u32)> {
    let (major, minor) = v.split_once('.')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}
