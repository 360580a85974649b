//! Splits one line of a case file into tokens with their columns. Words may contain letters, digits and
//! `_ - . /` (ids like `capture/fork-join`, sizes like `4KiB`, durations like `300ms`, decimals like `0.5`);
//! symbols are `=> == != >= <= -> = > < | , [ ] { } : @`.

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Token<'a> {
    pub text: &'a str,
    /// 1-based column of the first character.
    pub col: u32,
}

// `=`, `{` and `}` are the generic call's (`call F param=value field={a=1 b=2}`).
const SYMBOLS: [&str; 17] = ["=>", "==", "!=", ">=", "<=", "->", "=", ">", "<", "|", ",", "[", "]", "{", "}", ":", "@"];

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/')
}

/// Tokens of `line` (a comment is already removed). `Err(col)` points at a character that starts no token.
pub fn tokenize(line: &str) -> Result<Vec<Token<'_>>, (u32, char)> {
    let mut tokens = Vec::new();
    let mut rest = line;
    let col_of = |rest: &str| (line.len() - rest.len()) as u32 + 1;
    loop {
        rest = rest.trim_start();
        let Some(c) = rest.chars().next() else { break };
        let col = col_of(rest);
        // Longer symbols come first in SYMBOLS, so `>=` is not read as `>`. A lone `-` is not a symbol: it starts
        // a word (a negative number).
        if let Some(sym) = SYMBOLS.iter().find(|s| rest.starts_with(**s)) {
            tokens.push(Token { text: &rest[..sym.len()], col });
            rest = &rest[sym.len()..];
            continue;
        }
        if is_word_char(c) {
            let mut end = 0;
            for (i, ch) in rest.char_indices() {
                // A word ends before `->`, so `a->b` reads as three tokens.
                if !is_word_char(ch) || rest[i..].starts_with("->") {
                    break;
                }
                end = i + ch.len_utf8();
            }
            if end == 0 {
                return Err((col, c));
            }
            tokens.push(Token { text: &rest[..end], col });
            rest = &rest[end..];
        } else {
            return Err((col, c));
        }
    }
    Ok(tokens)
}

/// The line without its `#` comment.
pub fn strip_comment(line: &str) -> &str {
    line.split_once('#').map_or(line, |(code, _)| code)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(line: &str) -> Vec<&str> {
        tokenize(line).unwrap().into_iter().map(|t| t.text).collect()
    }

    #[test]
    fn splits_words_and_symbols() {
        assert_eq!(
            texts("k1: @t launch spin 2ms on s => cudaSuccess | cudaErrorNotReady"),
            ["k1", ":", "@", "t", "launch", "spin", "2ms", "on", "s", "=>", "cudaSuccess", "|", "cudaErrorNotReady"]
        );
        assert_eq!(texts("expect edge g a->b"), ["expect", "edge", "g", "a", "->", "b"]);
        assert_eq!(texts("expect buf[3] == 7"), ["expect", "buf", "[", "3", "]", "==", "7"]);
        assert_eq!(texts("stream s priority -1"), ["stream", "s", "priority", "-1"]);
        assert_eq!(texts("expect elapsed t >= 0.5"), ["expect", "elapsed", "t", ">=", "0.5"]);
    }

    #[test]
    fn columns_are_one_based() {
        let t = tokenize("  sync s").unwrap();
        assert_eq!((t[0].col, t[1].col), (3, 8));
        assert_eq!(tokenize("sync $s"), Err((6, '$')));
    }
}
