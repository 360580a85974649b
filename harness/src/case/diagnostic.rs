//! Errors in case files, as a user sees them: `file:line:col: what was expected, what was found`, with the
//! nearest valid word when one is close.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub file: String,
    /// 1-based.
    pub line: u32,
    /// 1-based, pointing at the offending token.
    pub col: u32,
    pub message: String,
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: {}", self.file, self.line, self.col, self.message)
    }
}

/// The candidate closest to `word` by edit distance, if close enough to be a likely typo.
pub fn nearest<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> Option<&'a str> {
    let limit = (word.chars().count() / 3).max(2);
    candidates
        .into_iter()
        .map(|c| (strsim::levenshtein(word, c), c))
        .filter(|(d, _)| *d <= limit)
        .min_by_key(|(d, _)| *d)
        .map(|(_, c)| c)
}

/// `; did you mean `x`?` when a candidate is close, else nothing.
pub fn did_you_mean<'a>(word: &str, candidates: impl IntoIterator<Item = &'a str>) -> String {
    nearest(word, candidates).map(|c| format!("; did you mean `{c}`?")).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_words_only() {
        assert_eq!(nearest("strem", ["stream", "event"]), Some("stream"));
        assert_eq!(nearest("zzzzzz", ["stream", "event"]), None);
        assert_eq!(did_you_mean("evnt", ["stream", "event"]), "; did you mean `event`?");
    }
}
