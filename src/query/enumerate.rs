//! Small components decided by trying every assignment. A component whose free symbols are
//! Bool and bit-vector constants, and arrays read only as `(select a i)` at literal indices
//! `i` (KLEE's byte reads), depends on nothing but those constants and cells: its *atoms*.
//! When the atoms hold at most [`MAX_BITS`] bits in all, evaluating the component under
//! every assignment of them (at most 256) costs far less than one solver round trip, and
//! it decides the component either way.
//!
//! A component in the same fragment with more bits (each atom at most 64) is not
//! enumerated but *guessed* (`guess`): a few assignments that give every atom the same
//! kind of value (a recent model's, zero, one, all ones, the sign bit alone, all but the
//! sign bit, then the literals of its width in the component), at most [`GUESSES`], then
//! a short local search over atoms and words of atoms. KLEE's queries are mostly
//! satisfiable, often by such values (a word assembled from four byte reads that must be
//! zero, positive, below a bound, or above another word), and evaluating a few
//! assignments costs far less than the solver's round trip, let alone starting it. A guess
//! decides only `sat`; when it finds nothing, the solver is asked.
//!
//! Before the guesses, [`by_bounds`] (`bounds`) intersects the values each word's
//! comparisons with literals allow it: it refutes a component whose comparisons leave some
//! word no value, whatever else it holds, and it needs no [`Small`].
//!
//! Invariants: [`Decided::Sat`] carries a model under which the evaluator found every
//! conjunct true. [`Decided::Unsat`] is given by [`Small::decide`] only when every assignment
//! of the atoms was evaluated, each to a definite Bool, with some conjunct false under each; that is a proof
//! because every occurrence of a free symbol in the component is an atom (an array
//! constant occurs only as the array of a `select` at a literal index), so any model of the
//! component agrees with one of the assignments on everything the component reads. An
//! evaluation error, an undetermined value, or anything outside that fragment gives up
//! (`None`), and the caller asks the solver. [`by_bounds`]' own proof is in its module.

use super::eval::{Evaluator, Model};
use super::value::{ArrayVal, BvVal, Value};
use crate::term::visit::Visited;
use crate::term::{Op, Sort, TermId, TermStore};

mod bounds;
mod domain;
mod guess;
mod intervals;

pub use bounds::by_bounds;

use domain::{finish, is_array_constant, Atom};
pub use domain::{Decided, Small, GUESSES};

/// The most bits of atoms a component may have to be decided here (so at most 2^8
/// assignments are evaluated).
pub const MAX_BITS: u32 = 8;

/// The most node evaluations a decision may take, counted as the component's DAG size
/// times its number of assignments (a byte read in a handful of nodes is a few thousand;
/// a large term over one byte is left to the solver, which is then the cheaper way).
pub const MAX_WORK: usize = 1 << 18;

/// The widest atom a guess assigns (its values are built as 64-bit words).
const GUESS_MAX_WIDTH: u32 = 64;

/// The most atoms a guessed component may have (atoms are looked up by a linear scan),
/// and the most literals wider than [`MAX_BITS`] kept as hints (a guess tries a few).
const GUESS_MAX_ATOMS: usize = 64;
const GUESS_MAX_WIDE_HINTS: usize = 8;

impl Small {
    /// The atoms of `conj`, if every free symbol in it occurs as an atom of at most 64
    /// bits. Exhaustive when they hold at most `MAX_BITS` bits and evaluating the
    /// component under each assignment stays within `MAX_WORK`; otherwise a guess, when
    /// [`GUESSES`] evaluations stay within it.
    pub fn of(store: &TermStore, conj: &[TermId]) -> Option<Small> {
        let mut atoms: Vec<Atom> = Vec::new();
        let mut hints: Vec<Value> = Vec::new();
        let mut wide_hints = 0usize;
        let mut bits = 0u32;
        let mut seen = Visited::new();
        let mut stack: Vec<TermId> = conj.to_vec();
        let mut nodes = 0usize;
        let mut add = |atoms: &mut Vec<Atom>, leaf, index, sort| -> Option<()> {
            let b = match store.sorts.get(sort) {
                Sort::Bool => 1,
                Sort::BitVec(w) => *w,
                _ => return None,
            };
            (b <= GUESS_MAX_WIDTH && atoms.len() < GUESS_MAX_ATOMS).then_some(())?;
            bits = bits.saturating_add(b);
            atoms.push(Atom {
                leaf,
                index,
                sort,
                bits: b,
            });
            Some(())
        };
        while let Some(t) = stack.pop() {
            if !seen.insert(t) {
                continue;
            }
            nodes += 1;
            if nodes > MAX_WORK {
                return None;
            }
            let args = store.args(t);
            match store.op(t) {
                Op::Sym(_) if !args.is_empty() => return None,
                Op::Sym(_) => add(&mut atoms, t, None, store.sort(t))?,
                Op::Bv(_) => {
                    let w = store.sorts.bv_width(store.sort(t)).unwrap_or(u32::MAX);
                    let wide = w > MAX_BITS;
                    if w <= GUESS_MAX_WIDTH && !(wide && wide_hints >= GUESS_MAX_WIDE_HINTS) {
                        if let Some(v) = Value::from_term(store, t) {
                            if !hints.contains(&v) {
                                wide_hints += usize::from(wide);
                                hints.push(v);
                            }
                        }
                    }
                }
                _ => {}
            }
            // The literal index of a cell is no value of an atom: not visited from here
            // (the same literal elsewhere is a hint).
            let cell = store.op(t) == Op::Select
                && args.first().is_some_and(|&a| is_array_constant(store, a));
            for (k, &x) in args.iter().enumerate() {
                if cell && k == 1 {
                    continue;
                }
                if !is_array_constant(store, x) {
                    stack.push(x);
                    continue;
                }
                // An array constant: only as the array of a select at a literal index.
                let index = (k == 0)
                    .then(|| Value::literal_select_index(store, t))
                    .flatten()?;
                let dup = atoms
                    .iter()
                    .any(|a| a.leaf == x && a.index.as_ref() == Some(&index));
                if !dup {
                    add(&mut atoms, x, Some(index), store.sort(t))?;
                }
            }
        }
        let exhaustive = bits <= MAX_BITS && nodes.saturating_mul(1usize << bits) <= MAX_WORK;
        (exhaustive || nodes.saturating_mul(GUESSES) <= MAX_WORK).then_some(Small {
            atoms,
            hints,
            exhaustive,
            nodes,
        })
    }

    /// Whether [`Small::decide`] tries every assignment (and so always decides).
    pub fn is_exhaustive(&self) -> bool {
        self.exhaustive
    }

    /// Evaluate `conj` under every assignment of the atoms, or, for a component that is
    /// not exhaustive, under the guess's uniform rounds (its local search is
    /// [`Small::search`], which the caller asks for when it pays). `base` gives a recent model's
    /// value of a constant or an array: its value (of the constant or cell) is tried first,
    /// and an array keeps its default (so that the cells this component does not read keep
    /// the values other queries found there); without one, the element sort's default.
    pub fn decide<'m>(
        &self,
        store: &TermStore,
        conj: &[TermId],
        base: &dyn Fn(TermId) -> Option<&'m Value>,
    ) -> Option<Decided> {
        let (mut model, lists) = self.start(store, base)?;
        if !self.exhaustive {
            return self.guess(store, conj, model, &lists);
        }
        let mut digit = vec![0usize; self.atoms.len()];
        // Conjuncts in the order evaluated: the one that failed last goes first.
        let mut order: Vec<TermId> = conj.to_vec();
        loop {
            for (a, (list, &d)) in self.atoms.iter().zip(lists.iter().zip(&digit)) {
                a.assign(&mut model, list[d].clone())?;
            }
            let mut ev = Evaluator::new(store, &model, false);
            let mut failed = None;
            for (k, &c) in order.iter().enumerate() {
                match ev.eval(c) {
                    Ok(Some(Value::Bool(true))) => {}
                    Ok(Some(Value::Bool(false))) => {
                        failed = Some(k);
                        break;
                    }
                    _ => return None,
                }
            }
            drop(ev);
            match failed {
                None => return finish(store, model, &self.atoms).map(Decided::Sat),
                Some(k) => order[..=k].rotate_right(1),
            }
            // The next assignment (an odometer over the atoms' lists).
            let mut i = 0;
            loop {
                if i == digit.len() {
                    return Some(Decided::Unsat);
                }
                digit[i] += 1;
                if digit[i] < lists[i].len() {
                    break;
                }
                digit[i] = 0;
                i += 1;
            }
        }
    }

    /// The model every assignment is written into (each array present), and each atom's
    /// values in the order tried: its value in `base`, then the literals of its sort in
    /// the component and the rest in ascending order (enumerated) or the guesses'.
    fn start<'m>(
        &self,
        store: &TermStore,
        base: &dyn Fn(TermId) -> Option<&'m Value>,
    ) -> Option<(Model, Vec<Vec<Value>>)> {
        let mut model = Model::new();
        let mut lists: Vec<Vec<Value>> = Vec::with_capacity(self.atoms.len());
        for a in &self.atoms {
            let b = base(a.leaf);
            // An array starts from its base's default only (its other cells would pile up
            // from model to model, and the component reads none of them).
            if a.index.is_some() && model.get(a.leaf).is_none() {
                let start = match b {
                    Some(v @ Value::Array(arr)) if v.has_sort(&store.sorts, store.sort(a.leaf)) => {
                        Value::Array(ArrayVal::constant(arr.default_value().clone()))
                    }
                    _ => Value::default_of(&store.sorts, store.sort(a.leaf))?,
                };
                model.set(a.leaf, start);
            }
            let first = match (&a.index, b) {
                (Some(i), Some(Value::Array(arr))) => Some(arr.select(i).clone()),
                (Some(_), _) => None,
                (None, b) => b.cloned(),
            };
            lists.push(if self.exhaustive {
                candidates(store, a, first, &self.hints)
            } else {
                guess::guesses(store, a, first, &self.hints)
            });
        }
        Some((model, lists))
    }
}

/// Every value of atom `a`'s sort, `first` and the hints of its sort first.
fn candidates(store: &TermStore, a: &Atom, first: Option<Value>, hints: &[Value]) -> Vec<Value> {
    let is_bool = matches!(store.sorts.get(a.sort), Sort::Bool);
    // The position of a value of the sort in ascending order (false before true).
    let rank = |v: &Value| -> Option<usize> {
        match v {
            Value::Bool(b) if is_bool => Some(usize::from(*b)),
            Value::Bv {
                width,
                v: BvVal::Small(x),
            } if !is_bool && *width == a.bits => usize::try_from(*x).ok(),
            _ => None,
        }
    };
    let n = 1usize << a.bits;
    let all = (0..n).map(|x| {
        if is_bool {
            Value::Bool(x == 1)
        } else {
            Value::bv_u64(a.bits, x as u64)
        }
    });
    let mut taken = vec![false; n];
    let mut out: Vec<Value> = Vec::with_capacity(n);
    for v in first.into_iter().chain(hints.iter().cloned()).chain(all) {
        if let Some(r) = rank(&v) {
            if !std::mem::replace(&mut taken[r], true) {
                out.push(v);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::eval::Evaluator;
    use crate::smt2::command::Command;
    use crate::smt2::parser::parse_command;
    use crate::term::signature::Signature;

    /// The conjuncts asserted by `script` (declarations first), in a fresh store.
    pub(super) fn asserted(script: &str) -> (TermStore, Vec<TermId>) {
        let mut store = TermStore::new();
        let mut sig = Signature::default();
        let mut conj = Vec::new();
        for line in script.lines().filter(|l| !l.trim().is_empty()) {
            match parse_command(&mut store, &sig, line).expect(line) {
                Command::Assert(t, _) => conj.push(t),
                c => {
                    c.declare_in(&mut store, &mut sig);
                }
            }
        }
        (store, conj)
    }

    pub(super) const DECLS: &str = "(declare-fun a () (Array (_ BitVec 32) (_ BitVec 8)))
(declare-fun b () (Array (_ BitVec 32) (_ BitVec 8)))
(declare-fun x () (_ BitVec 4))
(declare-fun y () (_ BitVec 8))
(declare-fun p () Bool)
(declare-fun n () Int)
(declare-fun f ((_ BitVec 4)) Bool)
";

    pub(super) fn decide(body: &str) -> Option<Decided> {
        let (store, conj) = asserted(&format!("{DECLS}{body}"));
        let small = Small::of(&store, &conj)?;
        // As hybrid asks: the decision (every assignment, or the uniform rounds), then the
        // local search.
        let d = small
            .decide(&store, &conj, &|_| None)
            .or_else(|| small.search(&store, &conj, &|_| None));
        if let Some(Decided::Sat(m)) = &d {
            let mut ev = Evaluator::new(&store, m, false);
            for &c in &conj {
                assert_eq!(ev.eval(c).unwrap(), Some(Value::Bool(true)), "{body}");
            }
        }
        d
    }

    #[test]
    fn byte_reads_and_small_constants_are_decided() {
        for (body, sat) in [
            ("(assert (= #x24 (select a #x00000005)))", true),
            ("(assert (not (= #x00 (select a #x00000001))))", true),
            (
                "(assert (= #x24 (select a #x00000005)))\n(assert (bvult (select a #x00000005) #x20))",
                false,
            ),
            // Every value but one excluded: found only after most of the 256 are tried.
            ("(assert (bvugt (select a #x00000000) #xfe))", true),
            ("(assert (and (bvugt (select a #x00000000) #xfd) (not (= (select a #x00000000) #xff)) (not (= (select a #x00000000) #xfe))))", false),
            ("(assert (= (bvmul x x) #x9))", true),
            ("(assert (= (bvmul x x) #x2))", false),
            ("(assert (xor p (bvult x #x8)))\n(assert (= x (bvudiv x #x0)))", true),
            ("(assert (= (select a #x00000001) (select a #x00000001)))", true),
            ("(assert (= (_ bv1 1) ((_ extract 0 0) (select a #x00000002))))\n(assert (= ((_ extract 7 1) (select a #x00000002)) #b0000000))", true),
            ("(assert (distinct (select a #x00000003) (select a #x00000003)))", false),
            ("(assert (ite p (= x #xf) (= x #x0)))\n(assert (not (= x #x0)))\n(assert (not p))", false),
            ("(assert true)", true),
            ("(assert false)", false),
        ] {
            match decide(body) {
                Some(Decided::Sat(_)) => assert!(sat, "{body}: sat"),
                Some(Decided::Unsat) => assert!(!sat, "{body}: unsat"),
                None => panic!("{body}: not decided"),
            }
        }
    }

    #[test]
    fn outside_the_fragment_is_left_to_the_solver() {
        for body in [
            // An array read at a symbolic index, stored into, compared whole.
            "(assert (= #x00 (select a (concat #x000000 (select a #x00000000)))))",
            "(assert (= (select (store a #x00000000 #x01) #x00000001) #x02))",
            "(assert (= a b))",
            // Sorts and symbols neither enumeration nor guessing covers.
            "(assert (> n 0))",
            "(assert (f x))",
        ] {
            assert!(decide(body).is_none(), "decided {body}");
        }
        // A byte under a term too large to evaluate 256 times (the solver is cheaper) is
        // only guessed, while the same term over a nibble is enumerated.
        let byte = (0..1200).fold("(select a #x00000000)".to_string(), |t, k| {
            format!("(bvadd {t} (_ bv{} 8))", k % 251 + 1)
        });
        let nibble = (0..1200).fold("x".to_string(), |t, k| {
            format!("(bvadd {t} (_ bv{} 4))", k % 13 + 1)
        });
        for (body, exhaustive) in [
            (format!("(assert (= {byte} #x00))"), false),
            (format!("(assert (= {nibble} #x0))"), true),
        ] {
            let (store, conj) = asserted(&format!("{DECLS}{body}"));
            let small = Small::of(&store, &conj).expect("in the fragment");
            assert_eq!(small.is_exhaustive(), exhaustive);
        }
        assert!(matches!(
            decide(&format!("(assert (= {nibble} #x0))")),
            Some(Decided::Sat(_))
        ));
    }

    /// More than eight bits: a guessed assignment decides sat (with a model checked by
    /// `decide`); when no guess satisfies, or the component is unsat, the solver is asked.
    #[test]
    fn wider_components_are_guessed_sat_or_left_to_the_solver() {
        for (body, guessed) in [
            // A word of four byte reads: zero, non-zero, negative, positive.
            ("(assert (= #x00000000 (concat (select a #x00000003) (concat (select a #x00000002) (concat (select a #x00000001) (select a #x00000000))))))", true),
            ("(assert (not (= #x00000000 (concat (select a #x00000003) (concat (select a #x00000002) (concat (select a #x00000001) (select a #x00000000)))))))", true),
            ("(assert (bvslt (concat (select a #x00000001) (select a #x00000000)) #x0000))", true),
            ("(assert (bvsgt (concat (select a #x00000001) (select a #x00000000)) #x0000))", true),
            ("(assert (= (select a #x00000000) (select b #x00000000)))", true),
            // A word fixed by an equality: each byte gets its bits of the literal.
            ("(assert (= #x00000001 (concat (select a #x00000003) (concat (select a #x00000002) (concat (select a #x00000001) (select a #x00000000))))))\n(assert (bvult (concat (select a #x00000003) (concat (select a #x00000002) (concat (select a #x00000001) (select a #x00000000)))) #x00000003))", true),
            ("(assert (= (concat (select a #x00000001) (concat x (select b #x00000000))) #x2a5c3))\n(assert (= (select b #x00000000) #xc3))\n(assert (= x #x5))", true),
            ("(assert (= y (concat x x)))\n(assert (= x #x1))", false),
            ("(assert (= y #x5a))\n(assert p)\n(assert (= (select a #x00000000) #x01))", true),
            ("(assert (= y #x5a))\n(assert p)\n(assert (bvugt (select a #x00000000) #x81))\n(assert (bvult (select a #x00000000) #x83))", false),
            // Unsat: never decided by a guess.
            ("(assert (= (select a #x00000000) (select a #x00000001)))\n(assert (distinct (select a #x00000000) (select a #x00000001)))", false),
            ("(assert (bvult (concat (select a #x00000001) (select a #x00000000)) #x0000))", false),
        ] {
            let (store, conj) = asserted(&format!("{DECLS}{body}"));
            let small = Small::of(&store, &conj).expect("in the fragment");
            assert!(!small.is_exhaustive(), "{body}");
            match decide(body) {
                Some(Decided::Sat(_)) => assert!(guessed, "{body}: guessed"),
                Some(Decided::Unsat) => panic!("{body}: a guess decided unsat"),
                None => assert!(!guessed, "{body}: not guessed"),
            }
        }
    }

    /// The base is tried first and its array default kept; cells it has elsewhere are not
    /// carried into the model.
    #[test]
    fn the_base_value_comes_first_and_only_the_default_is_kept() {
        let (mut store, conj) = asserted(&format!(
            "{DECLS}(assert (not (= #x00 (select a #x00000001))))"
        ));
        let (b32, b8) = (store.sorts.bv(32), store.sorts.bv(8));
        let arr = store.sorts.array(b32, b8);
        let a = store.mk_const("a", arr);
        let small = Small::of(&store, &conj).expect("small");
        let mut base = ArrayVal::constant(Value::bv_u64(8, 0x2e));
        base.store(Value::bv_u64(32, 1), Value::bv_u64(8, 0x41));
        base.store(Value::bv_u64(32, 9), Value::bv_u64(8, 0x42));
        let base = Value::Array(base);
        let Some(Decided::Sat(m)) = small.decide(&store, &conj, &|l| (l == a).then_some(&base))
        else {
            panic!("sat");
        };
        let Some(Value::Array(got)) = m.get(a) else {
            panic!("array in model");
        };
        assert_eq!(got.default_value(), &Value::bv_u64(8, 0x2e));
        assert_eq!(got.select(&Value::bv_u64(32, 1)), &Value::bv_u64(8, 0x41));
        assert_eq!(got.select(&Value::bv_u64(32, 9)), &Value::bv_u64(8, 0x2e));
    }
}
