//! SMT-LIB v2.6. The lexical rules, for every place that scans SMT-LIB bytes (`lex`);
//! streaming command framing (`reader`); the s-expression tree of a command (`lexer`);
//! commands parsed into the term store (`parser`: the one-pass fast path for the common
//! KLEE subset, `fast`, then the general parser over the tree, `general`, sharing the
//! vocabulary of `ops`; repeated assertions from a memo, `memo`; the commands, `command`);
//! the printer whose output parses back to the same term ids (`printer`), the formatting of
//! answers (`response`), what a strict solver's `set-logic` lets it take (`logic`), and a
//! key of the commands since a `(reset)` that does not depend on declared names (`alpha`).
//!
//! Dependencies run one way: `lex` (which uses nothing in the crate but `term::symbol`) is
//! used by `reader`, `lexer`, `ops`, `fast`, `printer`, `alpha`; `fast` and `general` use `ops`;
//! `parser` uses both; `memo` uses `parser`. No module uses one that uses it back.

pub mod alpha;
pub mod command;
pub mod echo;
mod fast;
mod general;
pub mod lex;
pub mod lexer;
pub mod logic;
pub mod memo;
mod ops;
pub mod parser;
pub mod printer;
pub mod reader;
pub mod response;
