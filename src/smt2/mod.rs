//! SMT-LIB v2.6: the lexical rules, for every place that scans SMT-LIB bytes (`lex`),
//! streaming command framing (`reader`), s-expressions (`lexer`), commands parsed into the
//! term store (`parser`, `command`; assertions in the common KLEE subset in one pass,
//! `fast`; repeated assertions from a memo, `memo`), the
//! printer whose output parses back to the same term ids (`printer`), the formatting of
//! answers (`response`), and what a strict solver's `set-logic` lets it take (`logic`).

pub mod command;
mod fast;
pub mod lex;
pub mod lexer;
pub mod logic;
pub mod memo;
pub mod parser;
pub mod printer;
pub mod reader;
pub mod response;
