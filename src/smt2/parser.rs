//! The entry point from one command's text to a `Command` whose terms live in the term
//! store: the one-pass fast path (`fast`) first, the general parser over the s-expression
//! tree (`general`) for whatever it leaves; `parse_term` and `parse_sort` for standalone
//! terms and sorts. See `general` for what parsing means (macros inlined, `let` shared,
//! terms sort-checked, the solver's arity rules) and for the three kinds of error.
//!
//! Invariants: a command gets the same `Command` and the same trace whichever of the two
//! parsers builds it (`check_fast_path` tests it; the tests below and the reader fuzz target
//! run it), and every error message is the general parser's. The modules form a chain
//! without cycles: this one uses `fast` and `general`, both use `ops` (the vocabulary they
//! share) and the lexical layer, and none of them uses this one.

use super::command::Command;
use super::fast;
use super::general::general;
pub use super::general::{parse_sort, parse_term};
use super::ops::PResult;
pub use super::ops::{builtin_op, ErrorKind, ParseError, Trace, MAX_DEPTH};
use crate::term::signature::Signature;
use crate::term::TermStore;

/// Parse one command (the text of one top-level s-expression).
/// Whether `name` is a theory symbol the parser reads as its operator whatever the
/// client declared.
pub fn is_builtin_symbol(name: &str) -> bool {
    super::ops::builtin_op(name).is_some()
}

pub fn parse_command(store: &mut TermStore, sig: &Signature, text: &str) -> PResult<Command> {
    command_with(store, sig, text, None).0
}

/// `parse_command`, also returning the signature lookups its terms were built from.
pub fn parse_command_traced(
    store: &mut TermStore,
    sig: &Signature,
    text: &str,
) -> (PResult<Command>, Trace) {
    let (r, trace) = command_with(store, sig, text, Some(Trace::default()));
    (r, trace.unwrap_or_default())
}

/// The general parser alone, without the fast path, with its trace.
fn parse_command_general(
    store: &mut TermStore,
    sig: &Signature,
    text: &str,
) -> (PResult<Command>, Trace) {
    let (r, trace) = general(store, sig, text, Some(Trace::default()));
    (r, trace.unwrap_or_default())
}

/// For the tests and the fuzz target that hold the fast path (`fast`) to the general
/// parser: where the fast path takes `text`, parse it with both. `Ok(true)` when they give
/// the same command and look up the same names, `Ok(false)` when the fast path leaves the
/// command to the general parser, and the difference otherwise. (Only where the fast path
/// takes a command: parsing twice one that makes fresh symbols, such as a define-fun, gives
/// two different commands.)
#[doc(hidden)]
pub fn check_fast_path(store: &mut TermStore, sig: &Signature, text: &str) -> Result<bool, String> {
    let mut trace = Some(Trace::default());
    let Some(fast) = fast::command(store, sig, &mut trace, text) else {
        return Ok(false);
    };
    let trace = trace.unwrap_or_default();
    let (general, gtrace) = parse_command_general(store, sig, text);
    if general.as_ref() == Ok(&fast) && gtrace == trace {
        Ok(true)
    } else {
        Err(format!(
            "the fast path and the general parser differ on {text:?}\nfast: {fast:?} {trace:?}\ngeneral: {general:?} {gtrace:?}"
        ))
    }
}

fn command_with(
    store: &mut TermStore,
    sig: &Signature,
    text: &str,
    mut trace: Option<Trace>,
) -> (PResult<Command>, Option<Trace>) {
    if let Some(c) = fast::command(store, sig, &mut trace, text) {
        return (Ok(c), trace);
    }
    // The general parser notes its own lookups; the fast path's may include names it never
    // reached.
    if let Some(t) = trace.as_mut().filter(|t| !t.is_empty()) {
        *t = Trace::default();
    }
    general(store, sig, text, trace)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::smt2::fast::command;

    /// A store and signature with the declarations and definitions of `decls`, one per line.
    fn declared(decls: &str) -> (TermStore, Signature) {
        let mut store = TermStore::new();
        let mut sig = Signature::default();
        for d in decls.lines() {
            let c = parse_command_general(&mut store, &sig, d).0.unwrap();
            c.declare_in(&mut store, &mut sig);
        }
        (store, sig)
    }

    /// Parse `decls` then `cmd` both ways; when the fast path answers, it must be with the
    /// general parser's command and trace.
    fn both(decls: &str, cmd: &str) -> Option<Command> {
        let (mut store, sig) = declared(decls);
        let mut trace = Some(Trace::default());
        let fast = command(&mut store, &sig, &mut trace, cmd);
        let (general, gtrace) = parse_command_general(&mut store, &sig, cmd);
        let fast = fast?;
        assert_eq!(general.as_ref(), Ok(&fast), "{cmd}");
        assert_eq!(trace.unwrap(), gtrace, "{cmd}");
        let (traced, _) = parse_command_traced(&mut store, &sig, cmd);
        assert_eq!(traced.as_ref(), Ok(&fast), "{cmd}");
        Some(fast)
    }

    const DECLS: &str = "(declare-fun a () (Array (_ BitVec 32) (_ BitVec 8)))
(declare-fun x () (_ BitVec 8))
(declare-fun f ((_ BitVec 8) Int) Bool)
(declare-fun r () Real)
(declare-fun p () Bool)
(define-fun m ((y (_ BitVec 8))) Bool (= y x))
(define-fun k () Bool (not p))";

    #[test]
    fn klee_terms_take_the_fast_path() {
        for cmd in [
            "(assert (bvult (concat (select a (_ bv3 32)) (select a (_ bv2 32))) (_ bv3 16)))",
            "(assert (let ( (?B1 (select a (_ bv0 32))) (?B2 x) ) (and (= false (bvslt ?B1 ?B2)) (bvult ?B1 (_ bv3 8)))))",
            "( assert(=((_ extract 7 0)((_ zero_extend 24) x))#x0f);c\n)",
            "(assert (= (bvadd x #b00000001) (bvneg (_ bv255 8))))",
            "(assert (f x (- 3)))",
            "(assert (and (m x) k (< r 2)))",
            "(assert (let ((y x) (z p)) (let ((y (bvnot y)) (z (not z))) (and z (= y x)))))",
            "(assert (let ((true false)) true))",
            "(assert (let ((p (= x x))) (let ((q p)) q)))",
            "(get-value ( (select a (_ bv0 32)) x  (let ((y x)) (bvadd y y))p))",
            "(check-sat)",
            "( exit )",
            "(reset)",
            "(get-model)",
            "(set-logic QF_AUFBV )",
            "(declare-fun re () (Array (_ BitVec 32) (_ BitVec 8) ) )",
            "(declare-fun q () Bool)",
            "(declare-fun n() Int)",
            "(declare-fun b () (Array Int (Array (_ BitVec 4) Real)))",
            "(set-option :produce-models true)",
            "(set-option :random-seed 7)",
            "(set-info :status unsat )",
            "(set-option :print-success)",
        ] {
            assert!(both(DECLS, cmd).is_some(), "fast path gave up on {cmd}");
        }
    }

    #[test]
    fn the_rest_is_left_to_the_general_parser() {
        for cmd in [
            "(assert (! p :named n))",
            "(assert |p|)",
            "(assert (forall ((y Int)) (> y 0)))",
            "(assert (= r 1.5))",
            "(assert (= x (_ bv3 0)))",
            "(assert (= x (_ bv99999999999999999999 8)))",
            "(assert (= x ((_ extract 7 0) a)))",
            "(assert (bvult x))",
            "(assert (unknown x))",
            "(assert x)",
            "(assert (f x))",
            "(assert f)",
            "(assert p) (assert p)",
            "(assert (let ((y x)) y))",
            "(assert (let ((y x) p)))",
            "(assert (not p)",
            "(assert (= x #x0g))",
            "(assert (= x #x))",
            "(check-sat p)",
            "(set-logic)",
            "(set-logic |QF_BV|)",
            "(declare-fun x () Bool)",
            "(declare-fun m () Bool)",
            "(declare-fun and () Bool)",
            "(declare-fun true () Bool)",
            "(declare-fun g (Int) Bool)",
            "(declare-fun s () (_ BitVec 0))",
            "(declare-fun s () (_ BitVec 01x))",
            "(declare-fun s () (_ FloatingPoint 8 24))",
            "(declare-fun s () String)",
            "(declare-fun s () (Array Int))",
            "(declare-fun |s| () Bool)",
            "(exit) x",
            "(set-option produce-models true)",
            "(set-option :)",
            "(set-option : true)",
            "(set-info :source |a b|)",
            "(set-info :notes \"x\")",
            "(set-option :opt true false)",
            "(set-option :opt (a))",
            "(set-info :smt-lib-version 2.6)",
            "(assert (! p :named n))",
            "(get-value ())",
            "(get-value (x |x|))",
            "(get-value x)",
            "(assert (m x) )x",
        ] {
            assert_eq!(both(DECLS, cmd), None, "fast path answered {cmd}");
        }
    }

    /// `(_ bvN w)` read from the bytes: on both sides of every limit of `small_bv` and of
    /// the tokens it reads, the fast path answers with the general parser's term or not
    /// at all; it answers the plain forms.
    #[test]
    fn bit_vector_literals_agree_with_the_general_parser() {
        let taken = [
            "(assert (= x (_ bv255 8)))",
            "(assert (= x (_ bv300 8)))",
            "(assert (= x (_ bv0 8)))",
            "(assert (= x (_ bv007 08)))",
            "(assert (= x (_\tbv7\n;c\n 8 ;d\n)))",
            "(assert (= x(_ bv7 8)))",
            "(assert (= (_ bv9999999999999999999 64) (concat (concat x x) (_ bv1 48))))",
            "(assert (= (_ bv1 72) ((_ zero_extend 64) x)))",
            "(assert (let ((a x) (re x)) (= a re (_ bv1 8) re)))",
            "(get-value ((_ bv3 8) x (select a (_ bv2 32)) a (select a (_ bv2 32))))",
        ];
        for cmd in taken {
            assert!(both(DECLS, cmd).is_some(), "fast path gave up on {cmd}");
        }
        for cmd in [
            "(assert (= x (_ bv 8)))",
            "(assert (= x (_ bv1a 8)))",
            "(assert (= x (_ bv1|a| 8)))",
            "(assert (= x (_ bv1 8a)))",
            "(assert (= x (_ bv1 0)))",
            "(assert (= x (_ bv1 4294967296)))",
            "(assert (= x (_ bv10000000000000000000 8)))",
            "(assert (= x (_ bv1 8 8)))",
            "(assert (= x (_ bv1)))",
            "(assert (= x (_ bv1 8)",
            "(assert (= x (_ bv-1 8)))",
            "(assert (= x (_ BV1 8)))",
            "(assert (= x (_ +oo 8)))",
            "(assert (= x (_(bv1) 8)))",
            "(assert (= x (_bv1 8)))",
        ] {
            assert_eq!(both(DECLS, cmd), None, "fast path answered {cmd}");
        }
    }

    /// Random well- and ill-sorted assertions over lets that rebind declared names,
    /// `true`, and each other under other sorts: wherever the general parser accepts one,
    /// the fast path takes it with the same term, and it never takes one the general parser
    /// refuses.
    #[test]
    fn random_lets_agree_with_the_general_parser() {
        let decls = "(declare-fun x () (_ BitVec 8))
(declare-fun p () Bool)
(declare-fun f ((_ BitVec 8)) Bool)
(define-fun m ((y (_ BitVec 8)) (c Bool)) (_ BitVec 8) (ite c y x))";
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let (mut ok, mut refused) = (0, 0);
        for _ in 0..3000 {
            let mut g = Gen {
                state: &mut state,
                env: vec![("x", false), ("p", true)],
            };
            let cmd = format!("(assert {})", g.term(true, 0));
            let (mut store, sig) = declared(decls);
            let mut trace = Some(Trace::default());
            let fast = command(&mut store, &sig, &mut trace, &cmd);
            let (general, gtrace) = parse_command_general(&mut store, &sig, &cmd);
            match (fast, general) {
                (Some(c), Ok(g)) => {
                    assert_eq!(c, g, "{cmd}");
                    assert_eq!(trace.unwrap(), gtrace, "{cmd}");
                    ok += 1;
                }
                (None, Err(_)) => refused += 1,
                (f, g) => panic!("{cmd}\nfast: {f:?}\ngeneral: {g:?}"),
            }
        }
        assert!(
            ok > 500 && refused > 500,
            "{ok} accepted, {refused} refused"
        );
    }

    /// Random terms for `random_lets_agree_with_the_general_parser`: Bool when `boolean`,
    /// else 8-bit vectors; one time in ten a name is used whatever its sort.
    struct Gen<'r> {
        state: &'r mut u64,
        /// Names in scope and whether each is Bool.
        env: Vec<(&'static str, bool)>,
    }

    impl Gen<'_> {
        fn below(&mut self, n: u64) -> u64 {
            crate::test_rng::xorshift(self.state) % n
        }
        fn name(&mut self, boolean: bool) -> String {
            let any = self.below(10) == 0;
            let fit: Vec<_> = self
                .env
                .iter()
                .filter(|(_, b)| any || *b == boolean)
                .map(|(n, _)| *n)
                .collect();
            match fit.len() {
                0 if boolean => "true".into(),
                0 => "#x2a".into(),
                n => fit[self.below(n as u64) as usize].into(),
            }
        }
        fn term(&mut self, boolean: bool, depth: u32) -> String {
            let leaf = depth > 4 || self.below(3) == 0;
            if leaf {
                return match (boolean, self.below(4)) {
                    (true, 0) => ["true", "false"][self.below(2) as usize].into(),
                    (false, 0) => format!("(_ bv{} 8)", self.below(300)),
                    (false, 1) => format!("#b{:08b}", self.below(256)),
                    _ => self.name(boolean),
                };
            }
            let d = depth + 1;
            match self.below(6) {
                0 | 1 => {
                    let n = 1 + self.below(3) as usize;
                    let names = ["x", "y", "p", "true", "z"];
                    let mut binds = Vec::new();
                    for _ in 0..n {
                        let name = names[self.below(5) as usize];
                        let b = self.below(2) == 0;
                        binds.push((name, b, self.term(b, d)));
                    }
                    let text: Vec<_> = binds.iter().map(|(n, _, t)| format!("({n} {t})")).collect();
                    let saved = self.env.len();
                    self.env.extend(binds.iter().map(|(n, b, _)| (*n, *b)));
                    let body = self.term(boolean, d);
                    self.env.truncate(saved);
                    format!("(let ({}) {body})", text.join(" "))
                }
                2 if boolean => format!("(= {} {})", self.term(false, d), self.term(false, d)),
                2 => format!("(bvadd {} {})", self.term(false, d), self.term(false, d)),
                3 if boolean => {
                    format!("(and {} (not {}))", self.term(true, d), self.term(true, d))
                }
                3 => format!(
                    "((_ extract 7 0) ((_ zero_extend 4) {}))",
                    self.term(false, d)
                ),
                4 if boolean => format!("(f {})", self.term(false, d)),
                4 => format!("(m {} {})", self.term(false, d), self.term(true, d)),
                _ => format!(
                    "(ite {} {} {})",
                    self.term(true, d),
                    self.term(boolean, d),
                    self.term(boolean, d)
                ),
            }
        }
    }
}
