//! The case language: syntax tree, parser, validator and printer. See `cases/README.md` for the language.

pub mod ast;
