//! z3's optimisation commands for the shape symbolic executors send: one `(minimize x)` or
//! `(maximize x)` of a declared bit-vector constant, then `(check-sat)`. z3's optimiser
//! takes tens of milliseconds on a query its plain solver answers in a fraction of one (a
//! recorded Manticore session: 60 such queries, 45 ms each); the optimum of an unsigned
//! objective is found here instead by a search over bounds, each bound a plain check-sat
//! of the client's query with `(bvule x v)` or `(bvuge x v)` added, through the modelled
//! engine (caches, models, the stack). Manticore does the same search itself for solvers
//! without an optimiser.
//!
//! Invariants:
//! * The optimum is exact: every bound the search steps past was answered `unsat` by the
//!   engine (a solver or a stored unsat), and the optimum is the objective's value in a
//!   model the engine evaluated true on the query with the optimum's bound. z3 orders
//!   bit-vector objectives as unsigned numbers, as here.
//! * Only the plain shape is taken (`accepts`): z3 only, one objective since the last
//!   `(reset)`, given at assertion level 0, a constant of at most [`MAX_WIDTH`] bits, no
//!   `:opt.` option; anything else goes to the solver as before (passthrough for the
//!   block). Values are unbounded naturals (`BigUint`), so EVM's 256-bit words are
//!   searched as 8-bit ones are.
//! * Any `unknown` during the search gives up: the caller lets the solver answer the
//!   check-sat itself, except when the client's deadline for the check-sat has passed
//!   (`Oracle::out_of_time`): the whole search is one check-sat to the client, held to
//!   one deadline, and then the answer is z3's at its deadline, `unknown`, with the
//!   interval known to hold the optimum. Nothing here answers the client; it only says
//!   what the optimum is.

use crate::session::vocab::Answer;
use crate::smt2::lex::command_head;
use crate::term::signature::{DeclKind, FunDef, Signature};
use crate::term::{Op, SortStore, TermId, TermStore};
use num_bigint::BigUint;
use num_traits::{One, Zero};

/// The widest objective searched here: a search takes up to `width + 2` checks, and 256
/// bits covers the words of the symbolic executors that optimise (Manticore's EVM words
/// are 256 bits, its native ones 64); a wider one goes to z3's optimiser.
pub const MAX_WIDTH: u32 = 256;

/// One objective of the client's.
#[derive(Clone, Debug)]
pub struct Objective {
    pub maximize: bool,
    /// The objective's constant, as a term.
    pub term: TermId,
    /// Its name as the client wrote it (get-objectives names it so).
    pub name: String,
    pub width: u32,
}

/// An objective command's text read as the plain shape: `(minimize x)` or `(maximize x)`
/// with `x` a declared bit-vector constant of at most [`MAX_WIDTH`] bits. None for anything else
/// (attributes, compound terms, other sorts).
pub fn parse(store: &mut TermStore, sig: &Signature, text: &str) -> Option<Objective> {
    let maximize = match command_head(text)? {
        "minimize" => false,
        "maximize" => true,
        _ => return None,
    };
    let body = text.trim().strip_prefix('(')?.strip_suffix(')')?.trim();
    let mut words = body.split_whitespace();
    words.next()?;
    let name = words.next()?;
    if words.next().is_some() || name.starts_with(['(', '|', ':']) || name.contains([')', '(']) {
        return None;
    }
    let FunDef::Declared {
        sym,
        params,
        ret,
        kind: DeclKind::Free,
    } = sig.fun(name)?
    else {
        return None;
    };
    if !params.is_empty() {
        return None;
    }
    let width = store.sorts.bv_width(*ret)?;
    if width == 0 || width > MAX_WIDTH {
        return None;
    }
    let term = store.mk_sym_app(*sym, Vec::new(), *ret);
    Some(Objective {
        maximize,
        term,
        name: name.to_string(),
        width,
    })
}

/// Whether `text` is one of the optimisation commands taken here (an objective, or
/// get-objectives; `assert-soft` goes to the solver like any command not interpreted).
pub fn is_optimisation(text: &str) -> bool {
    matches!(
        command_head(text),
        Some("minimize" | "maximize" | "get-objectives")
    )
}

impl Objective {
    /// get-objectives' answer after a search that ran out of time with the optimum in
    /// `[lo, hi]`, as z3 prints it then: the bound not yet reached first (z3 with `-t:`
    /// prints `(interval 0 <max>)` for a minimize it knows nothing of).
    pub fn report_interval(&self, lo: &BigUint, hi: &BigUint) -> String {
        let (a, b) = if self.maximize { (hi, lo) } else { (lo, hi) };
        format!("(objectives\n ({}  (interval {a} {b}))\n)", self.name)
    }

    /// `x <= v` (minimize) or `x >= v` (maximize), unsigned.
    pub fn bound(&self, store: &mut TermStore, v: &BigUint) -> Option<TermId> {
        let lit = store.mk_bv(v, self.width);
        let op = if self.maximize { Op::BvUge } else { Op::BvUle };
        let t = store.app_slice(op, &[self.term, lit]).ok()?;
        (store.sort(t) == SortStore::BOOL).then_some(t)
    }

    /// The largest value of the objective's width.
    fn top(&self) -> BigUint {
        (BigUint::one() << self.width as usize) - 1u8
    }

    /// get-objectives' answer for `value`, as z3 prints it.
    pub fn report(&self, value: &BigUint) -> String {
        format!("(objectives\n ({} {value})\n)", self.name)
    }
}

/// What the search needs of the engine: the client's query with at most one bound added
/// (`Objective::bound` of the value given), and the objective's value in the model of the
/// last `sat`.
pub trait Oracle {
    fn check(&mut self, bound: Option<&BigUint>) -> Answer;
    fn value(&mut self) -> Option<BigUint>;
    /// The client's deadline for this check-sat has passed (an `unknown` is then the
    /// deadline's, not the solver's).
    fn out_of_time(&self) -> bool;
}

/// How a search ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// The query is unsat (without a bound).
    Unsat,
    /// The optimum: the last check the oracle answered was the query with the optimum's
    /// bound, `sat`, with the objective at the optimum in its model.
    Optimum(BigUint),
    /// The client's deadline passed with the optimum somewhere in `[lo, hi]`.
    OutOfTime { lo: BigUint, hi: BigUint },
    /// An `unknown`, or a model that broke the search's rules: let the solver answer.
    GaveUp,
}

/// What an `unknown` from the oracle means, the optimum being in `[lo, hi]`.
fn unknown(oracle: &impl Oracle, lo: &BigUint, hi: &BigUint) -> Outcome {
    if oracle.out_of_time() {
        Outcome::OutOfTime {
            lo: lo.clone(),
            hi: hi.clone(),
        }
    } else {
        Outcome::GaveUp
    }
}

/// The optimum of `obj` over the client's query, by bisection on bounds (each step at
/// least halves the interval that holds it, or more when a model goes past the bound
/// asked): at most `width + 2` checks.
pub fn search(obj: &Objective, oracle: &mut impl Oracle) -> Outcome {
    match oracle.check(None) {
        Answer::Unsat => return Outcome::Unsat,
        Answer::Unknown => return unknown(oracle, &BigUint::zero(), &obj.top()),
        Answer::Sat => {}
    }
    let Some(first) = oracle.value() else {
        return Outcome::GaveUp;
    };
    // [lo, hi] holds the optimum; `best` is a value known to be reached (an end of it).
    let (mut lo, mut hi) = if obj.maximize {
        (first.clone(), obj.top())
    } else {
        (BigUint::zero(), first.clone())
    };
    let mut best = first.clone();
    // The objective's value in the model of the oracle's last check, if it was `sat`.
    let mut last = Some(first);
    while lo < hi {
        let gap = &hi - &lo;
        let mid = if obj.maximize {
            &lo + (gap + 1u8) / 2u8
        } else {
            &lo + gap / 2u8
        };
        match oracle.check(Some(&mid)) {
            Answer::Sat => {
                let Some(v) = oracle.value() else {
                    return Outcome::GaveUp;
                };
                // The model keeps the bound: anything else is not a model of the query.
                let kept = if obj.maximize { v >= mid } else { v <= mid };
                if !kept {
                    return Outcome::GaveUp;
                }
                best = v.clone();
                if obj.maximize {
                    lo = v.clone();
                } else {
                    hi = v.clone();
                }
                last = Some(v);
            }
            Answer::Unsat => {
                // `mid` is past `lo` (maximize) or below `hi` (minimize), so neither end
                // wraps.
                if obj.maximize {
                    hi = mid - 1u8;
                } else {
                    lo = mid + 1u8;
                }
                last = None;
            }
            Answer::Unknown => return unknown(oracle, &lo, &hi),
        }
    }
    if last.as_ref() != Some(&best) {
        // The last check was not `sat` at the optimum: ask for the optimum's model, so the
        // model the client reads next is one.
        match oracle.check(Some(&best)) {
            Answer::Sat if oracle.value().as_ref() == Some(&best) => {}
            Answer::Unknown => return unknown(oracle, &best, &best),
            _ => return Outcome::GaveUp,
        }
    }
    Outcome::Optimum(best)
}

/// The unsigned value of a bit-vector value as the solver or smtproxy prints it (`#x..`,
/// `#b..`, `(_ bvN w)`).
pub fn bv_value(text: &str) -> Option<BigUint> {
    let t = text.trim();
    let digits = |d: &str, radix: u32| {
        // `parse_bytes` takes `_` separators, which no solver prints in a value.
        if d.is_empty() || d.contains('_') {
            return None;
        }
        BigUint::parse_bytes(d.as_bytes(), radix)
    };
    if let Some(h) = t.strip_prefix("#x") {
        return digits(h, 16);
    }
    if let Some(b) = t.strip_prefix("#b") {
        return digits(b, 2);
    }
    let inner = t.strip_prefix('(')?.strip_suffix(')')?.trim();
    let mut w = inner.split_whitespace();
    (w.next()? == "_").then_some(())?;
    digits(w.next()?.strip_prefix("bv")?, 10)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The query "x is in `set`" over x of `width` bits, answered by brute force.
    struct Set {
        set: Vec<BigUint>,
        maximize: bool,
        model: Option<BigUint>,
        checks: usize,
        unknown_at: Option<usize>,
        /// The deadline passes at this check (its answer is `unknown`).
        deadline_at: Option<usize>,
    }

    impl Oracle for Set {
        fn check(&mut self, bound: Option<&BigUint>) -> Answer {
            self.checks += 1;
            if Some(self.checks) == self.unknown_at || self.out_of_time() {
                return Answer::Unknown;
            }
            let ok = |x: &&BigUint| match bound {
                None => true,
                Some(b) if self.maximize => *x >= b,
                Some(b) => *x <= b,
            };
            // Any model will do: the middle one of those that satisfy.
            let fits: Vec<&BigUint> = self.set.iter().filter(ok).collect();
            self.model = fits.get(fits.len() / 2).map(|x| (*x).clone());
            if self.model.is_some() {
                Answer::Sat
            } else {
                Answer::Unsat
            }
        }
        fn value(&mut self) -> Option<BigUint> {
            self.model.clone()
        }
        fn out_of_time(&self) -> bool {
            self.deadline_at.is_some_and(|d| self.checks >= d)
        }
    }

    fn obj(maximize: bool, width: u32) -> Objective {
        Objective {
            maximize,
            term: TermId(0),
            name: "x".into(),
            width,
        }
    }

    fn run(
        set: &[BigUint],
        width: u32,
        maximize: bool,
        unknown_at: Option<usize>,
    ) -> (Outcome, Set) {
        let mut o = Set {
            set: set.to_vec(),
            maximize,
            model: None,
            checks: 0,
            unknown_at,
            deadline_at: None,
        };
        (search(&obj(maximize, width), &mut o), o)
    }

    fn nums(v: &[u64]) -> Vec<BigUint> {
        v.iter().map(|&x| BigUint::from(x)).collect()
    }

    fn check_optimum(set: &[BigUint], width: u32) {
        for maximize in [false, true] {
            let (out, o) = run(set, width, maximize, None);
            let want = if maximize {
                set.iter().max().unwrap()
            } else {
                set.iter().min().unwrap()
            };
            assert_eq!(
                out,
                Outcome::Optimum(want.clone()),
                "{set:?} maximize={maximize}"
            );
            assert_eq!(
                o.model.as_ref(),
                Some(want),
                "the last model is the optimum's"
            );
            assert!(o.checks <= width as usize + 2, "{} checks", o.checks);
        }
    }

    #[test]
    fn finds_the_unsigned_optimum_and_leaves_its_model() {
        for set in [
            nums(&[0]),
            nums(&[255]),
            nums(&[3, 200, 17, 128]),
            nums(&[100, 101, 102, 255, 0, 77]),
            (0u32..256).map(BigUint::from).collect(),
        ] {
            check_optimum(&set, 8);
        }
    }

    #[test]
    fn words_wider_than_64_bits() {
        let top = (BigUint::one() << 256usize) - 1u8;
        let big = BigUint::parse_bytes(b"123456789abcdef0123456789abcdef0123456789", 16).unwrap();
        let just_past_u64 = BigUint::one() << 64usize;
        for set in [
            vec![top.clone()],
            vec![BigUint::zero(), top.clone()],
            vec![big.clone(), just_past_u64.clone(), BigUint::from(7u8)],
            vec![&top - 1u8, &top >> 1usize, big],
        ] {
            check_optimum(&set, 256);
        }
        check_optimum(&[just_past_u64.clone(), just_past_u64 - 1u8], 65);
    }

    #[test]
    fn unsat_and_unknown() {
        assert_eq!(run(&[], 8, false, None).0, Outcome::Unsat);
        for at in 1..4 {
            assert_eq!(
                run(&nums(&[1, 50, 90, 200]), 8, true, Some(at)).0,
                Outcome::GaveUp
            );
        }
    }

    #[test]
    fn a_deadline_leaves_the_interval_that_holds_the_optimum() {
        let set = nums(&[1, 50, 90, 200]);
        for maximize in [false, true] {
            let want = BigUint::from(if maximize { 200u8 } else { 1u8 });
            for at in 1..12 {
                let mut o = Set {
                    set: set.clone(),
                    maximize,
                    model: None,
                    checks: 0,
                    unknown_at: None,
                    deadline_at: Some(at),
                };
                match search(&obj(maximize, 8), &mut o) {
                    Outcome::OutOfTime { lo, hi } => {
                        assert!(lo <= want && want <= hi, "{lo}..{hi} at {at}");
                        if at == 1 {
                            assert_eq!((lo, hi), (BigUint::zero(), BigUint::from(255u8)));
                        }
                    }
                    // Searches that end before the deadline are exact.
                    Outcome::Optimum(v) => assert!(v == want && o.checks < at),
                    other => panic!("{other:?} at {at}"),
                }
            }
        }
        let o = obj(false, 8);
        assert_eq!(
            o.report_interval(&BigUint::zero(), &BigUint::from(255u8)),
            "(objectives\n (x  (interval 0 255))\n)"
        );
        let o = obj(true, 8);
        assert_eq!(
            o.report_interval(&BigUint::from(3u8), &BigUint::from(255u8)),
            "(objectives\n (x  (interval 255 3))\n)"
        );
    }

    #[test]
    fn values_as_printed() {
        let n = |x: u64| Some(BigUint::from(x));
        assert_eq!(bv_value("#x00000064"), n(100));
        assert_eq!(bv_value("#b101"), n(5));
        assert_eq!(bv_value("(_ bv300 16)"), n(300));
        assert_eq!(bv_value("#xffffffffffffffff"), n(u64::MAX));
        assert_eq!(
            bv_value(&format!("#x{}", "f".repeat(64))),
            Some((BigUint::one() << 256usize) - 1u8)
        );
        assert_eq!(
            bv_value("(_ bv18446744073709551616 65)"),
            Some(BigUint::one() << 64usize)
        );
        assert_eq!(bv_value("true"), None);
        assert_eq!(bv_value("#x"), None);
        assert_eq!(bv_value("#x1_0"), None);
    }
}
