//! The case language: syntax tree, parser, validator and printer. See `cases/README.md` for the language.

pub mod ast;
pub mod call;
pub mod calls;
mod can_finish;
mod cursor;
mod diagnostic;
pub mod lint;
mod parse;
pub mod placement;
pub mod print;
pub mod suite;
mod sweep;
mod tokens;
mod validate;
pub mod words;

#[cfg(test)]
pub(crate) mod tests;

pub(crate) use can_finish::case_stream_non_blocking;
pub use diagnostic::Diagnostic;
pub use lint::{lint, Warning};
pub use parse::{parse_file, parse_file_at};
pub use print::{op as print_op, op_kind as print_op_kind, predicate as print_predicate, print_case, print_file};
pub use validate::validate;

use ast::Case;

/// Parses and validates a text that holds exactly one case, whose first line is line `first_line` of `path`, as
/// its file would be: how a worker process reads the case it is sent, and how the figures check a case they
/// generate.
pub fn parse_one(path: &str, first_line: u32, text: &str) -> Result<Case, Vec<Diagnostic>> {
    let file = parse_file_at(path, first_line, text)?;
    let problems = validate(&file);
    if !problems.is_empty() {
        return Err(problems);
    }
    let found = file.cases.len();
    let mut cases = file.cases.into_iter();
    match (cases.next(), cases.next()) {
        (Some(case), None) => Ok(case),
        _ => Err(vec![Diagnostic {
            file: path.to_owned(),
            line: first_line,
            col: 1,
            message: format!("the text must hold exactly one case, found {found}"),
        }]),
    }
}
