//! The case language: syntax tree, parser, validator and printer. See `cases/README.md` for the language.

pub mod ast;
mod can_finish;
mod cursor;
mod diagnostic;
pub mod lint;
mod parse;
pub mod placement;
pub mod print;
pub mod suite;
mod tokens;
mod validate;
pub mod words;

#[cfg(test)]
mod tests;

pub use diagnostic::Diagnostic;
pub use lint::{lint, Warning};
pub use parse::parse_file;
pub use print::{op as print_op, op_kind as print_op_kind, predicate as print_predicate, print_case, print_file};
pub use validate::validate;
