//! Small components decided by trying every assignment. A component whose free symbols are
//! Bool and bit-vector constants, and arrays read only as `(select a i)` at literal indices
//! `i` (KLEE's byte reads), depends on nothing but those constants and cells: its *atoms*.
//! When the atoms hold at most [`MAX_BITS`] bits in all, evaluating the component under
//! every assignment of them (at most 256) costs far less than one solver round trip, and
//! it decides the component either way.
//!
//! A component in the same fragment with more bits (each atom at most 64) is not
//! enumerated but *guessed*: a few assignments that give every atom the same kind of
//! value (a recent model's, zero, one, all ones, the sign bit alone, all but the sign bit,
//! then the literals of its width in the component) are evaluated, at most [`GUESSES`].
//! KLEE's queries are mostly satisfiable, often by such values (a word assembled from
//! four byte reads that must be zero, non-zero, negative or positive), and evaluating a
//! few assignments costs far less than the solver's round trip, let alone starting it. A
//! guess decides only `sat`. When no round satisfies, a short local search (in the manner
//! of GSAT) changes one atom at a time to another of its guess values, the change that
//! makes the most conjuncts true, which finds orders among words (`(bvslt w1 w0)`, where
//! the uniform rounds give every word one value); when it stalls, the solver is asked.
//!
//! Invariants: [`Decided::Sat`] carries a model under which the evaluator found every
//! conjunct true. [`Decided::Unsat`] is given only when every assignment of the atoms was
//! evaluated, each to a definite Bool, with some conjunct false under each; that is a proof
//! because every occurrence of a free symbol in the component is an atom (an array
//! constant occurs only as the array of a `select` at a literal index), so any model of the
//! component agrees with one of the assignments on everything the component reads. An
//! evaluation error, an undetermined value, or anything outside that fragment gives up
//! (`None`), and the caller asks the solver.

use super::eval::{Evaluator, Model};
use super::value::{ArrayVal, BvVal, Value};
use crate::term::visit::Visited;
use crate::term::{Op, Sort, SortId, TermId, TermStore};
use rustc_hash::FxHashMap;

/// The most bits of atoms a component may have to be decided here (so at most 2^8
/// assignments are evaluated).
pub const MAX_BITS: u32 = 8;

/// The most node evaluations a decision may take, counted as the component's DAG size
/// times its number of assignments (a byte read in a handful of nodes is a few thousand;
/// a large term over one byte is left to the solver, which is then the cheaper way).
pub const MAX_WORK: usize = 1 << 18;

/// The most assignments a guess evaluates.
pub const GUESSES: usize = 12;

/// The widest atom a guess assigns (its values are built as 64-bit words).
const GUESS_MAX_WIDTH: u32 = 64;

/// The most atoms a guessed component may have (atoms are looked up by a linear scan),
/// and the most literals wider than [`MAX_BITS`] kept as hints (a guess tries a few).
const GUESS_MAX_ATOMS: usize = 64;
const GUESS_MAX_WIDE_HINTS: usize = 8;

/// A guess's local search: the most changes it makes, the most of them that leave the
/// number of true conjuncts as it was, and the most assignments it evaluates.
const SEARCH_STEPS: usize = 12;
const SEARCH_SIDEWAYS: usize = 2;
const SEARCH_EVALS: usize = 256;

/// What trying every assignment, or a guess, showed.
#[derive(Debug)]
pub enum Decided {
    Sat(Model),
    Unsat,
}

/// One atom: a constant, or a cell of an array constant.
#[derive(Debug)]
struct Atom {
    /// The `Sym` leaf of the constant or of the array.
    leaf: TermId,
    /// For a cell, its literal index.
    index: Option<Value>,
    /// The sort of the constant or of the cell (Bool, or a bit-vector of at most
    /// `MAX_BITS` bits when enumerated, 64 when guessed).
    sort: SortId,
    bits: u32,
}

impl Atom {
    /// Give the atom value `v` in `model` (a cell is stored into its array, which the
    /// model already holds); None when the array is missing.
    fn assign(&self, model: &mut Model, v: Value) -> Option<()> {
        match &self.index {
            None => model.set(self.leaf, v),
            Some(i) => match model.get_mut(self.leaf) {
                Some(Value::Array(arr)) => arr.store(i.clone(), v),
                _ => return None,
            },
        }
        Some(())
    }
}

/// A component in the fragment this module decides, with its atoms.
#[derive(Debug)]
pub struct Small {
    atoms: Vec<Atom>,
    /// Values of the bit-vector literals in the component, tried first (a constraint
    /// `(= #x24 (select a 5))` is met by the literal it names).
    hints: Vec<Value>,
    /// Every assignment is tried (at most [`MAX_BITS`] bits and [`MAX_WORK`]); otherwise
    /// only a guess is made, which decides `sat` alone.
    exhaustive: bool,
    /// Nodes in the component's DAG (the evaluations of one assignment).
    nodes: usize,
}

impl Small {
    /// The atoms of `conj`, if every free symbol in it occurs as an atom of at most 64
    /// bits. Exhaustive when they hold at most `MAX_BITS` bits and evaluating the
    /// component under each assignment stays within `MAX_WORK`; otherwise a guess, when
    /// [`GUESSES`] evaluations stay within it.
    pub fn of(store: &TermStore, conj: &[TermId]) -> Option<Small> {
        let mut atoms: Vec<Atom> = Vec::new();
        let mut hints: Vec<Value> = Vec::new();
        let (mut wide_hints, mut indices) = (0usize, Vec::new());
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
                Op::Bv(_) if !indices.contains(&t) => {
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
                // The literal index of a select is no value of an atom.
                Op::Select if args.len() == 2 && store.args(args[1]).is_empty() => {
                    indices.push(args[1]);
                }
                _ => {}
            }
            for (k, &x) in args.iter().enumerate() {
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

    /// Evaluate `conj` under every assignment of the atoms. `base` gives a recent model's
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
                guesses(store, a, first, &self.hints)
            });
        }
        Some((model, lists))
    }

    /// Round `r` gives every atom the `r`th value of its list (cycling through a shorter
    /// list), except the atoms a conjunct fixes (see [`Small::forced`]); the first round
    /// that satisfies every conjunct is the answer. When none does, a local search starts
    /// from round 0 (see [`Small::search`]).
    fn guess(
        &self,
        store: &TermStore,
        conj: &[TermId],
        mut model: Model,
        lists: &[Vec<Value>],
    ) -> Option<Decided> {
        let forced = self.forced(store, conj);
        let mut cur: Vec<Value> = Vec::with_capacity(self.atoms.len());
        let rounds = lists.iter().map(Vec::len).max().unwrap_or(1).min(GUESSES);
        for r in 0..rounds {
            self.assign_round(&mut model, &mut cur, lists, &forced, r)?;
            if all_true(store, &model, conj)? {
                return finish(store, model, &self.atoms).map(Decided::Sat);
            }
        }
        self.assign_round(&mut model, &mut cur, lists, &forced, 0)?;
        let mut fixed = vec![false; self.atoms.len()];
        for (k, _) in &forced {
            fixed[*k] = true;
        }
        self.search(store, conj, &mut model, &mut cur, lists, &fixed)?;
        // The search kept values of unchanged nodes; the answer rests on one evaluation
        // of the whole component from nothing.
        all_true(store, &model, conj)?
            .then(|| finish(store, model, &self.atoms).map(Decided::Sat))
            .flatten()
    }

    /// Write round `r`'s values into `model` (and `cur`, the value of each atom).
    fn assign_round(
        &self,
        model: &mut Model,
        cur: &mut Vec<Value>,
        lists: &[Vec<Value>],
        forced: &[(usize, Value)],
        r: usize,
    ) -> Option<()> {
        cur.clear();
        for list in lists {
            cur.push(list.get(r % list.len().max(1))?.clone());
        }
        for (k, v) in forced {
            cur[*k] = v.clone();
        }
        for (a, v) in self.atoms.iter().zip(cur.iter()) {
            a.assign(model, v.clone())?;
        }
        Some(())
    }

    /// Atoms whose value a conjunct fixes: `(= L T)` (either way round) with `L` a literal
    /// of at most 64 bits and `T` atoms joined by `concat` (KLEE's word of byte reads,
    /// `(= #x00000001 (concat (select a #x00000003) ...))`) gives each atom its bits of
    /// `L`. Every model has those values, since each conjunct holds in every model.
    fn forced(&self, store: &TermStore, conj: &[TermId]) -> Vec<(usize, Value)> {
        let mut out = Vec::new();
        for &c in conj {
            let args = store.args(c);
            if store.op(c) != Op::Eq || args.len() != 2 {
                continue;
            }
            let (l, t) = match (literal_u64(store, args[0]), literal_u64(store, args[1])) {
                (Some(l), None) => (l, args[1]),
                (None, Some(l)) => (l, args[0]),
                _ => continue,
            };
            let mut parts = Vec::new();
            if !self.concat_atoms(store, t, &mut parts) {
                continue;
            }
            let mut shift = 0u32;
            for &k in parts.iter().rev() {
                let a = &self.atoms[k];
                if shift >= 64 {
                    break;
                }
                out.push((k, Value::bv_u64(a.bits, l >> shift)));
                shift += a.bits;
            }
        }
        out
    }

    /// The atoms `t` joins by `concat`, most significant first; false when `t` is anything
    /// else.
    fn concat_atoms(&self, store: &TermStore, t: TermId, out: &mut Vec<usize>) -> bool {
        if store.op(t) == Op::Concat {
            return store
                .args(t)
                .iter()
                .all(|&x| self.concat_atoms(store, x, out));
        }
        let (leaf, index) = match store.op(t) {
            Op::Sym(_) if store.args(t).is_empty() => (t, None),
            Op::Select => match (store.args(t).first(), Value::literal_select_index(store, t)) {
                (Some(&arr), Some(i)) => (arr, Some(i)),
                _ => return false,
            },
            _ => return false,
        };
        match self
            .atoms
            .iter()
            .position(|a| a.leaf == leaf && a.index == index)
        {
            Some(k) => {
                out.push(k);
                true
            }
            None => false,
        }
    }

    /// A local search in the manner of GSAT, from the assignment in `model` (`cur`): take
    /// a false conjunct (each in turn) and, among the values of their lists for the atoms
    /// it reads (except `fixed` ones), make the one change under which the most conjuncts
    /// are true. Some when every conjunct is true; None when no change helps (a few
    /// changes that only keep the count are allowed), after [`SEARCH_STEPS`] changes, or
    /// past [`SEARCH_EVALS`] tries (and [`MAX_WORK`] nodes). Orders among words
    /// assembled from bytes (`(bvslt w1 w0)`, KLEE's sort) are found this way: the
    /// uniform rounds give every word the same value.
    ///
    /// A try evaluates again only what depends on the atom it changes: the values of the
    /// other nodes stay in the evaluator's memo (each node's atoms are a bit set, since a
    /// guess has at most 64 atoms).
    fn search(
        &self,
        store: &TermStore,
        conj: &[TermId],
        model: &mut Model,
        cur: &mut [Value],
        lists: &[Vec<Value>],
        fixed: &[bool],
    ) -> Option<()> {
        let cap = (MAX_WORK / self.nodes.max(1)).min(SEARCH_EVALS);
        let masks = self.atom_masks(store, conj);
        let reads: Vec<u64> = conj
            .iter()
            .map(|c| masks.get(c).copied().unwrap_or(0))
            .collect();
        let mut dependents: Vec<Vec<TermId>> = vec![Vec::new(); self.atoms.len()];
        for (&t, &m) in &masks {
            for (k, d) in dependents.iter_mut().enumerate() {
                if m >> k & 1 == 1 {
                    d.push(t);
                }
            }
        }
        let mut truth = vec![false; conj.len()];
        let mut memo = {
            let mut ev = Evaluator::new(store, model, false);
            for (c, t) in conj.iter().zip(truth.iter_mut()) {
                *t = is_true(ev.eval(*c))?;
            }
            ev.into_memo()
        };
        let mut tries = 0usize;
        let mut sideways = 0;
        for step in 0..SEARCH_STEPS {
            let score = truth.iter().filter(|&&t| t).count();
            let falses: Vec<usize> = (0..conj.len()).filter(|&c| !truth[c]).collect();
            let Some(&c) = falses.get(step % falses.len().max(1)) else {
                return Some(());
            };
            // The best change: (conjuncts true, atom, value).
            let mut best: Option<(usize, usize, &Value)> = None;
            for k in (0..self.atoms.len()).filter(|&k| reads[c] >> k & 1 == 1 && !fixed[k]) {
                for (i, v) in lists[k].iter().enumerate() {
                    if *v == cur[k] || lists[k][..i].contains(v) {
                        continue;
                    }
                    tries += 1;
                    if tries > cap {
                        return None;
                    }
                    self.atoms[k].assign(model, v.clone())?;
                    let saved: Vec<_> =
                        dependents[k].iter().map(|&t| (t, memo.forget(t))).collect();
                    let mut ev = Evaluator::resume(store, model, memo);
                    let mut s = score;
                    for (j, &cj) in conj.iter().enumerate() {
                        if reads[j] >> k & 1 == 1 {
                            s = s + usize::from(is_true(ev.eval(cj))?) - usize::from(truth[j]);
                        }
                    }
                    memo = ev.into_memo();
                    for (t, old) in saved {
                        memo.forget(t);
                        if let Some(v) = old {
                            memo.restore(t, v);
                        }
                    }
                    if best.is_none_or(|b| s > b.0) {
                        best = Some((s, k, v));
                    }
                }
                self.atoms[k].assign(model, cur[k].clone())?;
            }
            let (s, k, v) = best?;
            if s < score || (s == score && sideways >= SEARCH_SIDEWAYS) {
                return None;
            }
            sideways += usize::from(s == score);
            self.atoms[k].assign(model, v.clone())?;
            cur[k] = v.clone();
            for &t in &dependents[k] {
                memo.forget(t);
            }
            let mut ev = Evaluator::resume(store, model, memo);
            for (j, &cj) in conj.iter().enumerate() {
                if reads[j] >> k & 1 == 1 {
                    truth[j] = is_true(ev.eval(cj))?;
                }
            }
            memo = ev.into_memo();
            if truth.iter().all(|&t| t) {
                return Some(());
            }
        }
        None
    }

    /// For every node of the component, the set of atoms (bit `k` for atom `k`) whose
    /// values its value depends on. An atom is a constant or a cell `(select a i)` at a
    /// literal index; a select node is where the cell's value enters.
    fn atom_masks(&self, store: &TermStore, conj: &[TermId]) -> FxHashMap<TermId, u64> {
        let mut masks: FxHashMap<TermId, u64> = FxHashMap::default();
        let atom_bit = |leaf: TermId, index: Option<Value>| -> u64 {
            self.atoms
                .iter()
                .position(|a| a.leaf == leaf && a.index == index)
                .map_or(0, |k| 1u64 << k)
        };
        // Post-order: a node's mask once its arguments' are known.
        let mut stack: Vec<(TermId, bool)> = conj.iter().map(|&c| (c, false)).collect();
        while let Some((t, expanded)) = stack.pop() {
            if masks.contains_key(&t) {
                continue;
            }
            let args = store.args(t);
            let cell = match (store.op(t), args.first()) {
                (Op::Select, Some(&arr)) if is_array_constant(store, arr) => {
                    Value::literal_select_index(store, t).map(|i| (arr, i))
                }
                _ => None,
            };
            let m = match (store.op(t), cell) {
                (_, Some((arr, i))) => atom_bit(arr, Some(i)),
                (Op::Sym(_), None) if args.is_empty() => atom_bit(t, None),
                _ if !expanded => {
                    stack.push((t, true));
                    stack.extend(args.iter().map(|&x| (x, false)));
                    continue;
                }
                _ => args
                    .iter()
                    .fold(0, |m, x| m | masks.get(x).copied().unwrap_or(0)),
            };
            masks.insert(t, m);
        }
        masks
    }
}

/// Whether an evaluation gave true; None on an error or an undetermined or non-Bool value.
fn is_true(r: Result<Option<Value>, super::eval::EvalError>) -> Option<bool> {
    match r {
        Ok(Some(Value::Bool(b))) => Some(b),
        _ => None,
    }
}

/// The value of a bit-vector literal of at most 64 bits.
fn literal_u64(store: &TermStore, t: TermId) -> Option<u64> {
    match Value::from_term(store, t)? {
        Value::Bv {
            v: BvVal::Small(x), ..
        } if store.args(t).is_empty() => Some(x),
        _ => None,
    }
}

/// Whether every conjunct evaluates to true under `model` (None on an evaluation error or
/// an undetermined value).
fn all_true(store: &TermStore, model: &Model, conj: &[TermId]) -> Option<bool> {
    let mut ev = Evaluator::new(store, model, false);
    for &c in conj {
        match ev.eval(c) {
            Ok(Some(Value::Bool(true))) => {}
            Ok(Some(Value::Bool(false))) => return Some(false),
            _ => return None,
        }
    }
    Some(true)
}

/// The values a guess gives atom `a`, round by round: `first` (a recent model's) or zero,
/// then zero, one, all ones, the sign bit alone, all but the sign bit, then the literals
/// of its width.
fn guesses(store: &TermStore, a: &Atom, first: Option<Value>, hints: &[Value]) -> Vec<Value> {
    if matches!(store.sorts.get(a.sort), Sort::Bool) {
        let first = first.filter(|v| matches!(v, Value::Bool(_)));
        return [
            first.unwrap_or(Value::Bool(false)),
            Value::Bool(true),
            Value::Bool(false),
        ]
        .to_vec();
    }
    let w = a.bits;
    let ones = if w >= 64 { u64::MAX } else { (1u64 << w) - 1 };
    let sign = 1u64 << (w - 1);
    let first = first.filter(|v| v.has_sort(&store.sorts, a.sort));
    let mut out = vec![first.unwrap_or_else(|| Value::bv_u64(w, 0))];
    out.extend([0, 1, ones, sign, ones & !sign].map(|x| Value::bv_u64(w, x)));
    out.extend(
        hints
            .iter()
            .filter(|v| matches!(v, Value::Bv { width, .. } if *width == w))
            .cloned(),
    );
    out
}

/// Whether `x` is an array constant (a `Sym` leaf of an array sort).
fn is_array_constant(store: &TermStore, x: TermId) -> bool {
    matches!(store.op(x), Op::Sym(_))
        && store.args(x).is_empty()
        && matches!(store.sorts.get(store.sort(x)), Sort::Array(..))
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

/// The satisfying model as served: arrays in their canonical form for a finite index sort.
fn finish(store: &TermStore, mut model: Model, atoms: &[Atom]) -> Option<Model> {
    for a in atoms.iter().filter(|a| a.index.is_some()) {
        let Sort::Array(isort, _) = *store.sorts.get(store.sort(a.leaf)) else {
            return None;
        };
        if let Some(Value::Array(arr)) = model.get_mut(a.leaf) {
            if !arr.normalise_finite(&store.sorts, isort) {
                return None;
            }
        }
    }
    Some(model)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::query::eval::Evaluator;
    use crate::smt2::command::Command;
    use crate::smt2::parser::parse_command;
    use crate::term::signature::Signature;

    /// The conjuncts asserted by `script` (declarations first), in a fresh store.
    fn asserted(script: &str) -> (TermStore, Vec<TermId>) {
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

    const DECLS: &str = "(declare-fun a () (Array (_ BitVec 32) (_ BitVec 8)))
(declare-fun b () (Array (_ BitVec 32) (_ BitVec 8)))
(declare-fun x () (_ BitVec 4))
(declare-fun y () (_ BitVec 8))
(declare-fun p () Bool)
(declare-fun n () Int)
(declare-fun f ((_ BitVec 4)) Bool)
";

    fn decide(body: &str) -> Option<Decided> {
        let (store, conj) = asserted(&format!("{DECLS}{body}"));
        let small = Small::of(&store, &conj)?;
        let d = small.decide(&store, &conj, &|_| None);
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

    /// Word `i` of array `a` as KLEE reads it: four bytes, the highest first.
    fn word(i: u32) -> String {
        let cell = |k: u32| format!("(select a #x{:08x})", 4 * i + k);
        format!(
            "(concat {} (concat {} (concat {} {})))",
            cell(3),
            cell(2),
            cell(1),
            cell(0)
        )
    }

    /// Orders among words (KLEE's sort): every uniform round gives all words one value, so
    /// only the local search finds these; an order that cannot be is left to the solver.
    #[test]
    fn orders_among_words_are_found_by_the_search() {
        let w: Vec<String> = (0..4).map(word).collect();
        let lt = |i: usize, j: usize| format!("(bvslt {} {})", w[i], w[j]);
        let ge = |i: usize, j: usize| format!("(not {})", lt(i, j));
        for (body, found) in [
            (vec![lt(1, 0), ge(2, 1)], true),
            (vec![ge(1, 0), lt(2, 0), ge(3, 2)], true),
            (vec![lt(0, 1), lt(1, 2)], true),
            (vec![ge(3, 0), ge(1, 0), ge(2, 0), lt(2, 1)], true),
            (vec![format!("(bvult {} {})", w[1], w[0]), lt(0, 2)], true),
            // Unsat: an order and its converse, a cycle.
            (vec![lt(0, 1), lt(1, 0)], false),
            (vec![lt(0, 1), lt(1, 2), lt(2, 0)], false),
        ] {
            let body: String = body.iter().map(|c| format!("(assert {c})\n")).collect();
            let (store, conj) = asserted(&format!("{DECLS}{body}"));
            let small = Small::of(&store, &conj).expect("in the fragment");
            let (mut model, lists) = small.start(&store, &|_| None).expect("start");
            let forced = small.forced(&store, &conj);
            let mut cur = Vec::new();
            let uniform = (0..GUESSES).any(|r| {
                small.assign_round(&mut model, &mut cur, &lists, &forced, r);
                all_true(&store, &model, &conj) == Some(true)
            });
            assert!(!uniform, "{body}: a uniform round satisfies it");
            match decide(&body) {
                Some(Decided::Sat(_)) => assert!(found, "{body}: found"),
                Some(Decided::Unsat) => panic!("{body}: a guess decided unsat"),
                None => assert!(!found, "{body}: not found"),
            }
        }
    }

    /// The search evaluates again only what depends on the atom it changes; whenever it
    /// says every conjunct is true, an evaluation from nothing agrees (random orders and
    /// bounds among four words).
    #[test]
    fn the_search_agrees_with_a_whole_evaluation() {
        let w: Vec<String> = (0..4).map(word).collect();
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = move |n: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % n
        };
        let (mut found, mut agreed) = (0, 0);
        for _ in 0..300 {
            let mut body = String::new();
            for _ in 0..2 + next(4) {
                let (i, j) = (next(4) as usize, next(4) as usize);
                let op = ["bvslt", "bvsle", "bvult", "bvule", "="][next(5) as usize];
                let rhs = if next(4) == 0 {
                    format!(
                        "#x{:08x}",
                        [0u32, 1, 0x7fff_ffff, 0x8000_0000][next(4) as usize]
                    )
                } else {
                    w[j].clone()
                };
                let lit = format!("({op} {} {rhs})", w[i]);
                let lit = if next(2) == 0 {
                    format!("(not {lit})")
                } else {
                    lit
                };
                body.push_str(&format!("(assert {lit})\n"));
            }
            let (store, conj) = asserted(&format!("{DECLS}{body}"));
            let small = Small::of(&store, &conj).expect("in the fragment");
            let (mut model, lists) = small.start(&store, &|_| None).expect("start");
            let forced = small.forced(&store, &conj);
            let mut cur = Vec::new();
            small.assign_round(&mut model, &mut cur, &lists, &forced, 0);
            let mut fixed = vec![false; cur.len()];
            for (k, _) in &forced {
                fixed[*k] = true;
            }
            if small
                .search(&store, &conj, &mut model, &mut cur, &lists, &fixed)
                .is_some()
            {
                found += 1;
                agreed += usize::from(all_true(&store, &model, &conj) == Some(true));
            }
        }
        assert_eq!(agreed, found);
        assert!(found >= 100, "the search found {found} of 300");
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
