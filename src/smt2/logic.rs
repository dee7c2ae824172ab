//! What a `set-logic` lets a strict solver take. cvc5 and yices refuse a command that
//! uses a theory the client's logic leaves out (`(declare-fun i () Int)` under `QF_BV`:
//! an error, and `i` stays undeclared), each in its own way (cvc5 takes bit-vectors in
//! `QF_LIA` and refuses functions without `UF`; yices takes functions and quantifiers
//! anywhere). All three refuse an arithmetic operator the logic's arithmetic lacks (`/`
//! without reals, `div` without integers, `to_real` without both) and a non-linear term
//! (a product of two terms with variables, a division by one) under a linear logic;
//! those are the only rules judged for z3. smtproxy's parser takes every theory
//! it models in every logic, so the engine asks [`LogicCheck::outside`] before it takes a
//! declaration, definition or assertion, and lets the solver judge a command outside
//! (passthrough from there on): the client gets the solver's own error, and the session
//! goes on as the solver's would.
//!
//! Invariants:
//! * `outside` says true only where the solver refuses (each rule checked against cvc5
//!   1.0, yices 2.6 and, for the arithmetics, z3 in `tests/suite/proxy_acceptance.rs`);
//!   z3 under a logic without arithmetic (KLEE's QF_AUFBV) is not judged at all, so its
//!   sessions pay no check; a logic name it does not read
//!   (`ALL`, strings, floating point, datatypes, ...) and sorts smtproxy does not model
//!   are not judged, so a command is never refused here that the solver takes, and at
//!   worst a command the solver refuses is taken as before.
//! * A term's theories are a function of the term (its operator and its arguments'),
//!   memoised per term id; terms never change. Literals and symbols belong to no theory
//!   here: the solvers take `1` and `#x00` in any logic, and a symbol's sorts were judged
//!   when it was declared.

use super::command::Command;
use super::response::Dialect;
use crate::term::sort::Sort;
use crate::term::{Op, SortId, TermId, TermStore};

/// A set of theories, as bits: where the solvers refuse a theory, they refuse its sorts in
/// declarations and its operators in terms, not its literals (`(= 1 1)` is taken under
/// `QF_BV`), and cvc5 takes bit-vector sorts (and `#x` literals) without `BV`, but not
/// bit-vector operators: so sorts and operators are separate bits where that matters.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Theories(u16);

impl Theories {
    /// The sort `Int` in a declaration or definition.
    pub const INT: Theories = Theories(1);
    /// The sort `Real` in a declaration or definition.
    pub const REAL: Theories = Theories(2);
    /// An arithmetic operator (`<`, `+`, `to_real`, ...), over either sort.
    pub const ARITH: Theories = Theories(4);
    /// A bit-vector sort in a declaration or definition.
    pub const BV_SORT: Theories = Theories(8);
    /// A bit-vector operator.
    pub const BV: Theories = Theories(16);
    /// An array sort or operator.
    pub const ARRAY: Theories = Theories(32);
    /// Uninterpreted functions of one or more arguments, and declared sorts.
    pub const UF: Theories = Theories(64);
    pub const QUANT: Theories = Theories(128);
    /// Real division `/`, which a logic of integers alone does not have.
    pub const REAL_OPS: Theories = Theories(256);
    /// `div` and `mod`, which a logic of reals alone does not have.
    pub const INT_OPS: Theories = Theories(512);
    /// `to_real`, `to_int`, `is_int`: only where both sorts are.
    pub const MIXED: Theories = Theories(1024);
    /// A product of two terms with variables, or a division or `mod` by one: only the
    /// non-linear logics (`NIA`, `NRA`, `NIRA`).
    pub const NONLINEAR: Theories = Theories(2048);
    /// Not a theory: the term has a variable (a symbol), which decides `NONLINEAR` for
    /// cvc5 and yices.
    const VARS: Theories = Theories(4096);
    /// Not a theory: the term is not a numeral (`2`, `(- 2)`, `(/ 1 2)`), which decides
    /// `NONLINEAR` for z3 (a product by `(+ 1 2)` is non-linear to it).
    const NOT_NUMERAL: Theories = Theories(8192);
    const NONE: Theories = Theories(0);

    fn union(self, o: Theories) -> Theories {
        Theories(self.0 | o.0)
    }
    fn minus(self, o: Theories) -> Theories {
        Theories(self.0 & !o.0)
    }
    fn meets(self, o: Theories) -> bool {
        self.0 & o.0 != 0
    }
}

/// The theories the SMT-LIB logic `name` admits, or `None` for a name this does not read
/// (`ALL`, and any logic with strings, floating point, datatypes or other theories
/// smtproxy does not judge). Read as `[QF_][A|AX][UF][BV][arithmetic]`, the arithmetic
/// part one of `IDL RDL LIA LRA LIRA NIA NRA NIRA`.
pub fn admitted(name: &str) -> Option<Theories> {
    let (mut t, mut rest) = match name.strip_prefix("QF_") {
        Some(r) => (Theories::NONE, r),
        None => (Theories::QUANT, name),
    };
    if let Some(r) = rest.strip_prefix("AX") {
        (t, rest) = (t.union(Theories::ARRAY), r);
    } else if let Some(r) = rest.strip_prefix('A') {
        (t, rest) = (t.union(Theories::ARRAY), r);
    }
    if let Some(r) = rest.strip_prefix("UF") {
        (t, rest) = (t.union(Theories::UF), r);
    }
    if let Some(r) = rest.strip_prefix("BV") {
        (t, rest) = (t.union(Theories::BV).union(Theories::BV_SORT), r);
    }
    let ints = Theories::INT
        .union(Theories::ARITH)
        .union(Theories::INT_OPS);
    let reals = Theories::REAL
        .union(Theories::ARITH)
        .union(Theories::REAL_OPS);
    let arith = match rest {
        "" => Theories::NONE,
        "IDL" | "LIA" => ints,
        "NIA" => ints.union(Theories::NONLINEAR),
        "RDL" | "LRA" => reals,
        "NRA" => reals.union(Theories::NONLINEAR),
        "LIRA" => ints.union(reals).union(Theories::MIXED),
        "NIRA" => ints
            .union(reals)
            .union(Theories::MIXED)
            .union(Theories::NONLINEAR),
        _ => return None,
    };
    let t = t.union(arith);
    // `QF_` alone, `A` alone, ...: not a logic name.
    (t != Theories::NONE && t != Theories::QUANT).then_some(t)
}

/// Whether the logic `name` has reals and no integers (`QF_LRA`, `NRA`, `QF_UFLRA`, ...),
/// under which cvc5 reads every numeral as a real (`smt2::echo`).
pub fn reals_without_ints(name: &str) -> bool {
    admitted(name).is_some_and(|t| t.meets(Theories::REAL) && !t.meets(Theories::INT))
}

/// The theories a strict solver refuses outside its logic.
fn enforced(dialect: Dialect) -> Theories {
    let both = Theories::INT
        .union(Theories::REAL)
        .union(Theories::ARITH)
        .union(Theories::REAL_OPS)
        .union(Theories::INT_OPS)
        .union(Theories::MIXED)
        .union(Theories::NONLINEAR)
        .union(Theories::BV)
        .union(Theories::ARRAY);
    match dialect {
        // z3 is judged only on an arithmetic's operators the logic's arithmetic lacks
        // (`/` under QF_LIA, `to_int` under QF_LRA: "logic does not support reals") and
        // on a non-linear term under a linear logic (its refusal of a theory's sorts
        // outside the logic, an Int under QF_BV, is not judged here).
        Dialect::Z3 => Theories::REAL_OPS
            .union(Theories::INT_OPS)
            .union(Theories::MIXED)
            .union(Theories::NONLINEAR),
        Dialect::Cvc5 => both.union(Theories::UF).union(Theories::QUANT),
        Dialect::Yices => both.union(Theories::BV_SORT),
    }
}

/// The check for one session's logic.
pub struct LogicCheck {
    /// Theories the solver would refuse in this logic.
    refused: Theories,
    /// Theories of each term seen, by term id (`UNSEEN` when not computed).
    memo: Vec<u16>,
    /// Products are judged as z3 judges them (`Theories::NOT_NUMERAL`).
    z3_products: bool,
}

const UNSEEN: u16 = u16::MAX;

impl LogicCheck {
    /// The check for `logic` under `dialect`'s solver, or `None` when nothing is refused
    /// there (a logic this does not read, a logic with every enforced theory, z3 under a
    /// logic without arithmetic: its rules here are the arithmetics').
    pub fn new(dialect: Dialect, logic: &str) -> Option<LogicCheck> {
        let admitted = admitted(logic)?;
        if dialect == Dialect::Z3 && !admitted.meets(Theories::ARITH) {
            return None;
        }
        let refused = enforced(dialect).minus(admitted);
        (refused != Theories::NONE).then(|| LogicCheck {
            refused,
            memo: Vec::new(),
            z3_products: dialect == Dialect::Z3,
        })
    }

    /// The check before any `set-logic`: yices then takes no theory but the core (it
    /// refuses `Int`, `BitVec`, ... until a logic is set); cvc5's default is `ALL`.
    pub fn without_logic(dialect: Dialect) -> Option<LogicCheck> {
        (dialect == Dialect::Yices).then(|| LogicCheck {
            refused: enforced(dialect),
            memo: Vec::new(),
            z3_products: false,
        })
    }

    /// Whether the solver refuses `cmd` (a declaration, definition or assertion; other
    /// commands are not judged) for a theory the logic leaves out.
    pub fn outside(&mut self, store: &TermStore, cmd: &Command) -> bool {
        let used = match cmd {
            Command::DeclareSort(..) => Theories::UF,
            Command::DeclareFun { params, ret, .. } => {
                let t = sorts_theories(store, params.iter().copied().chain([*ret]));
                if params.is_empty() {
                    t
                } else {
                    t.union(Theories::UF)
                }
            }
            // A body's parameters are not the variables of a product: an application may
            // make it linear.
            Command::DefineFun {
                params, ret, body, ..
            } => sorts_theories(store, params.iter().map(|p| p.1).chain([*ret]))
                .union(self.term(store, *body).minus(Theories::NONLINEAR)),
            Command::Assert(t, _) => self.term(store, *t),
            _ => Theories::NONE,
        };
        used.meets(self.refused)
    }

    /// Whether the solver refuses term `t` (as a get-value or check-sat-assuming term, or
    /// an assertion) for a theory the logic leaves out.
    pub fn term_outside(&mut self, store: &TermStore, t: TermId) -> bool {
        self.term(store, t).meets(self.refused)
    }

    /// The theories of the operators `t` applies and its quantifiers, at any depth.
    fn term(&mut self, store: &TermStore, t: TermId) -> Theories {
        if self.memo.len() < store.len() {
            self.memo.resize(store.len(), UNSEEN);
        }
        let mut stack = vec![(t, false)];
        while let Some((x, expanded)) = stack.pop() {
            let i = x.0 as usize;
            if self.memo[i] != UNSEEN {
                continue;
            }
            let args = store.args(x);
            if !expanded {
                stack.push((x, true));
                stack.extend(
                    args.iter()
                        .filter(|a| self.memo[a.0 as usize] == UNSEEN)
                        .map(|&a| (a, false)),
                );
                continue;
            }
            let op = store.op(x);
            let mut bits = op_theories(op);
            for a in args {
                bits = bits.union(Theories(self.memo[a.0 as usize]));
            }
            let factor = if self.z3_products {
                Theories::NOT_NUMERAL
            } else {
                Theories::VARS
            };
            let variable = |a: &TermId| Theories(self.memo[a.0 as usize]).meets(factor);
            let nonlinear = match op {
                Op::Mul => args.iter().filter(|a| variable(a)).count() >= 2,
                Op::RealDiv | Op::IntDiv | Op::Mod => args.iter().skip(1).any(variable),
                _ => false,
            };
            if nonlinear {
                bits = bits.union(Theories::NONLINEAR);
            }
            if matches!(op, Op::Sym(_)) {
                bits = bits.union(Theories::VARS);
            }
            let numeral = match op {
                Op::Num(_) | Op::Dec(_) => true,
                Op::Neg | Op::RealDiv => !args
                    .iter()
                    .any(|a| Theories(self.memo[a.0 as usize]).meets(Theories::NOT_NUMERAL)),
                _ => false,
            };
            if !numeral {
                bits = bits.union(Theories::NOT_NUMERAL);
            }
            self.memo[i] = bits.0;
        }
        Theories(self.memo[t.0 as usize])
    }
}

/// The theory an operator belongs to (none for the core, literals and symbols).
fn op_theories(op: Op) -> Theories {
    use Op::*;
    match op {
        Forall(_) | Exists(_) => Theories::QUANT,
        Select | Store | ConstArray => Theories::ARRAY,
        Concat | Extract(..) | ZeroExtend(_) | SignExtend(_) | Repeat(_) | RotateLeft(_)
        | RotateRight(_) | BvNot | BvNeg | BvAnd | BvOr | BvXor | BvNand | BvNor | BvXnor
        | BvComp | BvAdd | BvSub | BvMul | BvUdiv | BvUrem | BvSdiv | BvSrem | BvSmod | BvShl
        | BvLshr | BvAshr | BvUlt | BvUle | BvUgt | BvUge | BvSlt | BvSle | BvSgt | BvSge => {
            Theories::BV
        }
        RealDiv => Theories::ARITH.union(Theories::REAL_OPS),
        IntDiv | Mod => Theories::ARITH.union(Theories::INT_OPS),
        ToReal | ToInt | IsInt => Theories::ARITH.union(Theories::MIXED),
        Neg | Sub | Add | Mul | Abs | Le | Lt | Ge | Gt | Divisible(_) => Theories::ARITH,
        True | False | Bv(_) | BvWide(_) | Num(_) | Dec(_) | Str(_) | Sym(_) | Other(_)
        | Annot(_) | Not | And | Or | Xor | Implies | Eq | Distinct | Ite => Theories::NONE,
    }
}

fn sorts_theories(store: &TermStore, sorts: impl Iterator<Item = SortId>) -> Theories {
    sorts.fold(Theories::NONE, |t, s| t.union(sort_theories(store, s)))
}

/// The theories a sort in a declaration belongs to (a sort smtproxy does not model: none).
fn sort_theories(store: &TermStore, s: SortId) -> Theories {
    match store.sorts.get(s) {
        Sort::Int => Theories::INT,
        Sort::Real => Theories::REAL,
        Sort::BitVec(_) => Theories::BV_SORT,
        Sort::Array(i, e) => Theories::ARRAY
            .union(sort_theories(store, *i))
            .union(sort_theories(store, *e)),
        Sort::Bool | Sort::Named { .. } | Sort::Unknown => Theories::NONE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::smt2::parser::parse_command;
    use crate::term::signature::Signature;

    #[test]
    fn logic_names() {
        use Theories as T;
        let t = |v: &[Theories]| v.iter().fold(T::NONE, |a, &b| a.union(b));
        let bv = t(&[T::BV, T::BV_SORT]);
        let int = t(&[T::INT, T::ARITH, T::INT_OPS]);
        let real = t(&[T::REAL, T::ARITH, T::REAL_OPS]);
        assert_eq!(admitted("QF_BV"), Some(bv));
        assert_eq!(admitted("QF_ABV"), Some(t(&[T::ARRAY, bv])));
        assert_eq!(admitted("QF_AUFBV"), Some(t(&[T::ARRAY, T::UF, bv])));
        assert_eq!(admitted("QF_AX"), Some(T::ARRAY));
        assert_eq!(admitted("QF_UF"), Some(T::UF));
        assert_eq!(admitted("QF_LIA"), Some(int));
        assert_eq!(admitted("QF_IDL"), Some(int));
        assert_eq!(admitted("QF_LRA"), Some(real));
        assert_eq!(
            admitted("QF_UFLIRA"),
            Some(t(&[T::UF, int, real, T::MIXED]))
        );
        assert_eq!(admitted("QF_NRA"), Some(t(&[real, T::NONLINEAR])));
        assert_eq!(
            admitted("AUFLIA"),
            Some(t(&[T::QUANT, T::ARRAY, T::UF, int]))
        );
        assert_eq!(
            admitted("UFNIA"),
            Some(t(&[T::QUANT, T::UF, int, T::NONLINEAR]))
        );
        assert_eq!(admitted("BV"), Some(t(&[T::QUANT, bv])));
        for unread in [
            "ALL",
            "QF_S",
            "QF_SLIA",
            "QF_FP",
            "QF_BVFP",
            "QF_DT",
            "QF_",
            "",
            "QF_ALIAX",
            "HO_ALL",
            "QF_UFSLIA",
        ] {
            assert_eq!(admitted(unread), None, "{unread}");
        }
    }

    /// Parse `decls` then `cmd` and ask whether `dialect`'s solver refuses `cmd` in `logic`.
    fn outside(dialect: Dialect, logic: &str, decls: &[&str], cmd: &str) -> bool {
        let mut store = TermStore::new();
        let mut sig = Signature::default();
        for d in decls {
            let c = parse_command(&mut store, &sig, d).expect("declaration parses");
            c.declare_in(&mut store, &mut sig);
        }
        let c = parse_command(&mut store, &sig, cmd).unwrap_or_else(|e| panic!("{cmd}: {e:?}"));
        LogicCheck::new(dialect, logic).is_some_and(|mut lc| lc.outside(&store, &c))
    }

    #[test]
    fn what_each_solver_refuses() {
        use Dialect::*;
        let int = "(declare-fun i () Int)";
        let bvf = "(declare-fun f ((_ BitVec 8)) (_ BitVec 8))";
        let lt = "(assert (< 2 1))";
        for d in [Cvc5, Yices] {
            assert!(outside(d, "QF_BV", &[], int), "{d:?}");
            assert!(outside(d, "QF_BV", &[], lt), "{d:?}");
            assert!(outside(d, "QF_BV", &[], "(declare-fun r () Real)"));
            assert!(outside(d, "QF_LIA", &[], "(declare-fun r () Real)"));
            assert!(outside(d, "QF_LRA", &[], int));
            assert!(outside(d, "QF_UF", &[], int));
            assert!(outside(
                d,
                "QF_BV",
                &[],
                "(declare-fun m () (Array (_ BitVec 8) (_ BitVec 8)))"
            ));
            assert!(!outside(d, "QF_LRA", &[], "(assert (< 1 (+ 2 3)))"));
            assert!(outside(d, "QF_BV", &[], "(assert (= (+ 1 2) 3))"));
            // Literals of a theory the logic leaves out are taken (both solvers).
            assert!(!outside(d, "QF_BV", &[], "(assert (= 1 1))"));
            assert!(!outside(d, "QF_LIA", &[], "(assert (= 1.5 1.5))"));
            // Bit-vector operators need BV in both.
            let v = ["(declare-fun v () (_ BitVec 8))"];
            assert!(outside(d, "QF_LIA", &v, "(assert (bvult v #x00))"));
            assert!(outside(
                d,
                "QF_LIA",
                &v,
                "(assert (= ((_ extract 3 0) v) #x0))"
            ));
            // Arrays need A, in a declaration or an operator.
            assert!(outside(
                d,
                "QF_BV",
                &[],
                "(define-fun m () (Array Bool Bool) ((as const (Array Bool Bool)) true))"
            ));
            // Taken by both.
            assert!(!outside(d, "QF_AUFBV", &[], bvf));
            assert!(!outside(d, "QF_LIRA", &[], "(declare-fun r () Real)"));
            assert!(!outside(d, "QF_LIA", &[], "(assert (= (* 2 3) 6))"));
            assert!(!outside(
                d,
                "QF_BV",
                &[],
                "(define-fun g ((x (_ BitVec 8))) (_ BitVec 8) x)"
            ));
            assert!(!outside(d, "ALL", &[], int));
            assert!(!outside(d, "QF_SLIA", &[], int));
            // A term over declared constants: judged by its sorts.
            let decls = ["(declare-fun v () (_ BitVec 8))"];
            assert!(!outside(d, "QF_BV", &decls, "(assert (bvult v #x05))"));
            // Each arithmetic's own operators, and products of variables only where the
            // logic is non-linear (cvc5 1.0.3 and yices 2.6.5 alike, pySMT's tests).
            let (a, b) = ("(declare-fun a () Int)", "(declare-fun b () Int)");
            let (r, q) = ("(declare-fun r () Real)", "(declare-fun q () Real)");
            assert!(outside(d, "QF_NIA", &[a], "(assert (= (/ 5 a) 2))"));
            assert!(outside(d, "QF_LIA", &[a], "(assert (= (to_real a) 1.0))"));
            assert!(outside(d, "QF_LRA", &[r], "(assert (= (to_int r) 1))"));
            assert!(!outside(d, "QF_LIA", &[a], "(assert (= (div a 2) 1))"));
            assert!(!outside(
                d,
                "QF_LIRA",
                &[a, r],
                "(assert (= (to_real a) r))"
            ));
            assert!(outside(d, "QF_LRA", &[r], "(assert (= (* r r) 1.0))"));
            assert!(outside(d, "QF_LIA", &[a, b], "(assert (= (mod a b) 1))"));
            assert!(outside(d, "QF_LRA", &[r, q], "(assert (= (/ r q) 1.0))"));
            assert!(outside(d, "QF_UFLIRA", &[r], "(assert (= (* r r) 2.0))"));
            assert!(!outside(d, "QF_LIA", &[a], "(assert (= (* 2 3 a) 6))"));
            assert!(!outside(d, "QF_LIA", &[a], "(assert (= (* (+ 1 2) a) 6))"));
            assert!(!outside(d, "QF_LRA", &[r], "(assert (= (/ r 2.0) 1.0))"));
            assert!(!outside(d, "QF_NIA", &[a, b], "(assert (= (* a b) 1))"));
            assert!(!outside(d, "QF_NRA", &[r], "(assert (= (* r r) 2.0))"));
            let sq = "(define-fun sq ((x Int)) Int (* x x))";
            assert!(!outside(d, "QF_LIA", &[], sq));
        }
        // cvc5 alone: functions and declared sorts need UF, quantifiers a quantified logic.
        assert!(outside(Cvc5, "QF_BV", &[], bvf));
        assert!(outside(Cvc5, "QF_ABV", &[], bvf));
        assert!(!outside(Yices, "QF_BV", &[], bvf));
        assert!(outside(Cvc5, "QF_BV", &[], "(declare-sort U 0)"));
        assert!(!outside(Yices, "QF_BV", &[], "(declare-sort U 0)"));
        let q = "(assert (forall ((x (_ BitVec 8))) (= x x)))";
        assert!(outside(Cvc5, "QF_BV", &[], q));
        assert!(!outside(Cvc5, "BV", &[], q));
        assert!(!outside(Yices, "QF_BV", &[], q));
        // yices alone: bit-vector sorts need BV (cvc5 takes them, and `=` over them, in
        // QF_LIA; not their operators).
        let v = "(declare-fun v () (_ BitVec 8))";
        assert!(outside(Yices, "QF_LIA", &[], v));
        assert!(!outside(Cvc5, "QF_LIA", &[], v));
        assert!(!outside(Cvc5, "QF_LIA", &[v], "(assert (= v #x00))"));
        // Before set-logic: yices takes the core only, cvc5 everything.
        let before = |d: Dialect, cmd: &str| {
            let mut store = TermStore::new();
            let sig = Signature::default();
            let c = parse_command(&mut store, &sig, cmd).expect("parses");
            LogicCheck::without_logic(d).is_some_and(|mut lc| lc.outside(&store, &c))
        };
        assert!(before(Yices, "(declare-fun v () (_ BitVec 8))"));
        assert!(before(Yices, int));
        assert!(!before(Yices, "(declare-fun a () Bool)"));
        assert!(!before(Cvc5, int) && !before(Z3, int));
        // z3 is judged on the arithmetic operators and non-linear terms only.
        for (logic, cmd) in [("QF_BV", int), ("QF_BV", lt), ("QF_BV", bvf), ("QF_BV", q)] {
            assert!(!outside(Z3, logic, &[], cmd));
        }
        let a = "(declare-fun a () Int)";
        assert!(outside(Z3, "QF_NIA", &[a], "(assert (= (/ 5 a) 2))"));
        assert!(outside(Z3, "QF_LIA", &[a], "(assert (= (* a a) 4))"));
        assert!(!outside(Z3, "QF_NIA", &[a], "(assert (= (* a a) 4))"));
        assert!(!outside(Z3, "QF_LIA", &[a], "(assert (= (div a 2) 1))"));
        assert!(
            LogicCheck::new(Z3, "QF_AUFBV").is_none() && LogicCheck::new(Z3, "QF_BV").is_none()
        );
    }
}
