//! SMT-LIB v2.6: streaming command framing (`reader`), tokens and s-expressions (`lexer`,
//! nom), commands parsed into the term store (`parser`, `command`; assertions in the
//! common KLEE subset in one pass, `fast`; repeated assertions from a memo, `memo`), the
//! printer whose output parses back to the same term ids (`printer`), the formatting of
//! answers (`response`), and what a strict solver's `set-logic` lets it take (`logic`).

pub mod command;
mod fast;
pub mod lexer;
pub mod logic;
pub mod memo;
pub mod parser;
pub mod printer;
pub mod reader;
pub mod response;
