//! Guessed models of components too wide to enumerate (see the parent module): a few
//! uniform rounds, then a short local search. Only `sat` is ever decided here.
//!
//! - *Pins*: a conjunct `(= L W)` or `(= L (bvand W M))`, with `L` and `M` literals and `W`
//!   atoms joined by `concat` (KLEE's word of byte reads), fixes the bits of `W` under `M`
//!   (all of them for the plain equality) in every model. Every value a guess gives an
//!   atom has its pinned bits.
//! - *Rounds*: round `r` gives every atom the `r`th value of its list (the parent's
//!   [`guesses`]: a recent model's value, zero, one, all ones, the sign bit, all but
//!   it, the literals of its width), at most [`super::GUESSES`] rounds.
//! - *Search*: in the manner of GSAT, from round 0: take a false conjunct (each in turn)
//!   and make the one change, among the changes to what it reads, under which the most
//!   conjuncts are true. A change gives one atom another value of its list, or a whole
//!   word (the atoms of a `concat`) a value of its own: zero, one, all ones, the sign bit,
//!   all but it, and each literal of its width and its two neighbours (`(bvult w #x03)`
//!   with `(bvsgt w #x00)` and `(distinct w #x01)` is met by `#x02`). It stops when every
//!   conjunct is true, when no change helps (a few changes that keep the count are
//!   allowed), or past [`SEARCH_STEPS`] changes, [`SEARCH_TRIES`] tries or [`SEARCH_WORK`].
//!
//! Invariants: a `Sat` answer carries a model under which a whole evaluation of the
//! component, from nothing, found every conjunct true (the search itself keeps the values
//! of nodes that do not depend on what a try changes: each node's atoms are a bit set, a
//! guess having at most 64 atoms). Nothing here answers `unsat`.

use super::domain::{finish, is_array_constant, literal_u64, Atom, Decided, Small, GUESSES};
use crate::query::eval::{EvalError, EvalMemo, Evaluator, Model};
use crate::query::value::{mask64, BvVal, Value};
use crate::term::Sort;
use crate::term::{Op, TermId, TermStore};
use rustc_hash::FxHashMap;

/// The most changes a search makes, the most of them that leave the number of true
/// conjuncts as it was, and the most changes it evaluates.
const SEARCH_STEPS: usize = 12;
const SEARCH_SIDEWAYS: usize = 2;
const SEARCH_TRIES: usize = 256;

/// The most evaluations [`Small::lower`] makes for one model.
const LOWER_TRIES: usize = 16;

/// The most work a search does, in nodes evaluated: the first evaluation of the component,
/// then each try's nodes that depend on what it changes, and an eighth for the scan that
/// finds them (a component of more than a quarter of it is not searched). A search that
/// finds nothing costs about this (a millisecond or less).
const SEARCH_WORK: usize = 1 << 12;

/// The most words whose values a search tries (each adds a dozen tries or so to a step).
const MAX_WORDS: usize = 16;

/// A change: atoms and their new values.
type Change = Vec<(usize, Value)>;

/// Memo values a change made a search forget, to be put back (see [`EvalMemo::forget`]).
type Saved = Vec<(TermId, Option<Option<Value>>)>;

/// The bits a conjunct fixes, per atom: (mask, bits under the mask).
struct Pins(Vec<(u64, u64)>);

impl Pins {
    /// `v` with atom `k`'s pinned bits.
    fn apply(&self, k: usize, v: Value) -> Value {
        let (mask, bits) = self.0[k];
        match v {
            Value::Bv {
                width,
                v: BvVal::Small(x),
            } if mask != 0 => Value::bv_u64(width, (x & !mask) | (bits & mask)),
            v => v,
        }
    }
}

/// A word: atoms joined by `concat`, most significant first, its width, and the set of
/// its atoms (bit `k` for atom `k`).
struct Word {
    atoms: Vec<usize>,
    width: u32,
    mask: u64,
}

impl Word {
    /// Each atom of the word with the position of its lowest bit and its width, least
    /// significant first, as far as the low 64 bits of the word go.
    fn parts<'w>(&'w self, atoms: &'w [Atom]) -> impl Iterator<Item = (usize, u32, u32)> + 'w {
        self.atoms
            .iter()
            .rev()
            .scan(0u32, |shift, &k| {
                let at = *shift;
                *shift = at.saturating_add(atoms[k].bits);
                Some((k, at, atoms[k].bits))
            })
            .take_while(|&(_, at, _)| at < 64)
    }
}

/// What depends on which atoms, for a search: the conjuncts, the atoms each reads, and
/// every node that depends on some atom with the set of them.
struct Deps<'c> {
    conj: &'c [TermId],
    reads: Vec<u64>,
    nodes: Vec<(TermId, u64)>,
}

impl<'c> Deps<'c> {
    fn of(conj: &'c [TermId], masks: FxHashMap<TermId, u64>) -> Deps<'c> {
        let reads = conj
            .iter()
            .map(|c| masks.get(c).copied().unwrap_or(0))
            .collect();
        let nodes = masks.into_iter().filter(|&(_, m)| m != 0).collect();
        Deps { conj, reads, nodes }
    }
}

impl Small {
    /// The uniform rounds (see the module doc). `model` holds every array the atoms are
    /// cells of; `lists[k]` is atom `k`'s values.
    pub(super) fn guess(
        &self,
        store: &TermStore,
        conj: &[TermId],
        mut model: Model,
        lists: &[Vec<Value>],
    ) -> Option<Decided> {
        let pins = self.pins(store, conj);
        let mut cur: Vec<Value> = Vec::with_capacity(self.atoms.len());
        let rounds = lists.iter().map(Vec::len).max().unwrap_or(1).min(GUESSES);
        for r in 0..rounds {
            self.assign_round(&mut model, &mut cur, lists, &pins, r)?;
            if all_true(store, &model, conj)? {
                self.lower(store, conj, &mut model, &cur);
                return finish(store, model, &self.atoms).map(Decided::Sat);
            }
        }
        None
    }

    /// Make a guessed model look as a solver's does: bits that no conjunct needs set are
    /// clear (`(= ((_ extract 7 0) x) #xff)` with a 32-bit `x` gets `#x000000ff` as from
    /// z3, cvc5 and yices, not the all-ones guess that met it; clients take such values
    /// as test inputs and compare them). The atoms whose value is all ones, or has bits
    /// above its low byte, are tried as zero, then with only their low nibble, byte, two
    /// bytes, four bytes kept: first all together (atoms an equality ties stay equal), then
    /// each alone; at each step the first under which every conjunct stays true. At most
    /// [`LOWER_TRIES`] evaluations. `model` satisfies `conj` before and after.
    fn lower(&self, store: &TermStore, conj: &[TermId], model: &mut Model, cur: &[Value]) {
        if !cur.iter().any(|v| lowerable(v).is_some()) {
            return;
        }
        let before = model.clone();
        self.lower_from(store, conj, model, cur);
        // Every change was evaluated as it was made; this only guards the invariant
        // against an assignment that could not be undone.
        if all_true(store, model, conj) != Some(true) {
            *model = before;
        }
    }

    fn lower_from(&self, store: &TermStore, conj: &[TermId], model: &mut Model, cur: &[Value]) {
        const KEEP: [u64; 5] = [0, 0xf, 0xff, 0xffff, 0xffff_ffff];
        let mut vals: Vec<Value> = cur.to_vec();
        let candidates: Vec<usize> = (0..vals.len())
            .filter(|&k| lowerable(&vals[k]).is_some())
            .collect();
        if candidates.is_empty() {
            return;
        }
        let mut tries = 0;
        // A value with the bits of `keep` kept, when that changes it.
        let lowered = |v: &Value, keep: u64| {
            let (w, x) = lowerable(v)?;
            (keep < mask64(w) && x & !keep != 0).then(|| Value::bv_u64(w, x & keep))
        };
        // All together.
        for keep in KEEP {
            let changes: Vec<(usize, Value)> = candidates
                .iter()
                .filter_map(|&k| lowered(&vals[k], keep).map(|v| (k, v)))
                .collect();
            if changes.is_empty() || tries >= LOWER_TRIES {
                continue;
            }
            tries += 1;
            for (k, v) in &changes {
                if self.atoms[*k].assign(model, v.clone()).is_none() {
                    return;
                }
            }
            if all_true(store, model, conj) == Some(true) {
                for (k, v) in changes {
                    vals[k] = v;
                }
                break;
            }
            for (k, _) in &changes {
                if self.atoms[*k].assign(model, vals[*k].clone()).is_none() {
                    return;
                }
            }
        }
        // Then each alone.
        for &k in &candidates {
            for keep in KEEP {
                let Some(v) = lowered(&vals[k], keep) else {
                    continue;
                };
                if tries >= LOWER_TRIES {
                    return;
                }
                tries += 1;
                if self.atoms[k].assign(model, v.clone()).is_none() {
                    return;
                }
                if all_true(store, model, conj) == Some(true) {
                    vals[k] = v;
                    break;
                }
                if self.atoms[k].assign(model, vals[k].clone()).is_none() {
                    return;
                }
            }
        }
    }

    /// The local search (see the module doc), from round 0 of [`Small::decide`]'s guess,
    /// for a component that guess left: `Sat` with a model, or None. None at once for a
    /// component that is enumerated. It costs up to about a millisecond when it finds
    /// nothing, so the caller decides whether it pays (how often it has found a model).
    pub fn search<'m>(
        &self,
        store: &TermStore,
        conj: &[TermId],
        base: &dyn Fn(TermId) -> Option<&'m Value>,
    ) -> Option<Decided> {
        if self.exhaustive {
            return None;
        }
        let (mut model, lists) = self.start(store, base)?;
        let pins = self.pins(store, conj);
        let mut cur: Vec<Value> = Vec::with_capacity(self.atoms.len());
        self.assign_round(&mut model, &mut cur, &lists, &pins, 0)?;
        self.walk(store, conj, &mut model, &mut cur, &lists, &pins)?;
        // The answer rests on one evaluation of the whole component from nothing.
        if !all_true(store, &model, conj)? {
            return None;
        }
        self.lower(store, conj, &mut model, &cur);
        finish(store, model, &self.atoms).map(Decided::Sat)
    }

    /// Write round `r`'s values, pinned, into `model` and `cur` (each atom's value).
    fn assign_round(
        &self,
        model: &mut Model,
        cur: &mut Vec<Value>,
        lists: &[Vec<Value>],
        pins: &Pins,
        r: usize,
    ) -> Option<()> {
        cur.clear();
        for (k, list) in lists.iter().enumerate() {
            cur.push(pins.apply(k, list.get(r % list.len().max(1))?.clone()));
        }
        for (a, v) in self.atoms.iter().zip(cur.iter()) {
            a.assign(model, v.clone())?;
        }
        Some(())
    }

    /// The bits conjuncts pin (see the module doc). Each holds in every model, so every
    /// model has those bits; bits two conjuncts pin differently (an unsat component) keep
    /// the first, and no guess satisfies both.
    fn pins(&self, store: &TermStore, conj: &[TermId]) -> Pins {
        let mut pins = Pins(vec![(0, 0); self.atoms.len()]);
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
            // `(bvand W M)` or `(bvand M W)` pins the bits under M; W alone, all of them.
            let targs = store.args(t);
            let (w, mask) = match store.op(t) {
                Op::BvAnd if targs.len() == 2 => {
                    match (literal_u64(store, targs[0]), literal_u64(store, targs[1])) {
                        (Some(m), None) => (targs[1], m),
                        (None, Some(m)) => (targs[0], m),
                        _ => continue,
                    }
                }
                _ => (t, u64::MAX),
            };
            if l & !mask != 0 {
                continue; // never equal: the conjunct is false under every assignment
            }
            let Some(word) = self.word(store, w) else {
                continue;
            };
            for (k, shift, bits) in word.parts(&self.atoms) {
                let (m, b) = ((mask >> shift) & mask64(bits), (l >> shift) & mask64(bits));
                let (pm, pb) = &mut pins.0[k];
                let free = m & !*pm;
                *pb |= b & free;
                *pm |= free;
            }
        }
        pins
    }

    /// `t` as a word: a bit-vector atom, or atoms joined by `concat`.
    fn word(&self, store: &TermStore, t: TermId) -> Option<Word> {
        let mut atoms = Vec::new();
        self.concat_atoms(store, t, &mut atoms).then_some(())?;
        let width = atoms.iter().map(|&k| self.atoms[k].bits).sum();
        let mask = atoms.iter().fold(0u64, |m, &k| m | 1 << k);
        Some(Word { atoms, width, mask })
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

    /// The words of the component that are more than one atom (`concat` nodes that are
    /// not themselves inside a `concat`), at most [`MAX_WORDS`], with at most 64 bits.
    fn words(&self, store: &TermStore, conj: &[TermId]) -> Vec<Word> {
        let mut out: Vec<(TermId, Word)> = Vec::new();
        let mut seen = crate::term::visit::Visited::new();
        let mut stack: Vec<TermId> = conj.to_vec();
        while let Some(t) = stack.pop() {
            if !seen.insert(t) || out.len() >= MAX_WORDS {
                continue;
            }
            for &x in store.args(t) {
                if store.op(x) == Op::Concat && store.op(t) != Op::Concat {
                    if let Some(w) = self.word(store, x).filter(|w| w.width <= 64) {
                        if !out.iter().any(|(y, _)| *y == x) {
                            out.push((x, w));
                        }
                        continue;
                    }
                }
                stack.push(x);
            }
        }
        out.into_iter().map(|(_, w)| w).collect()
    }

    /// The changes a search tries for a false conjunct that reads the atoms in `reads`:
    /// each atom to each other value of its list, each word it reads to each of its own
    /// values, pinned; none that changes nothing.
    fn changes(
        &self,
        reads: u64,
        cur: &[Value],
        lists: &[Vec<Value>],
        words: &[Word],
        pins: &Pins,
    ) -> Vec<Change> {
        let mut out: Vec<Change> = Vec::new();
        for k in (0..self.atoms.len()).filter(|&k| reads >> k & 1 == 1) {
            let mut tried: Vec<Value> = vec![cur[k].clone()];
            for v in &lists[k] {
                let v = pins.apply(k, v.clone());
                if !tried.contains(&v) {
                    tried.push(v.clone());
                    out.push(vec![(k, v)]);
                }
            }
        }
        for w in words.iter().filter(|w| w.mask & reads != 0) {
            let ones = mask64(w.width);
            let mut values = uniform(w.width).to_vec();
            for h in &self.hints {
                if let Value::Bv {
                    width,
                    v: BvVal::Small(x),
                } = h
                {
                    if *width == w.width {
                        values.extend([x.wrapping_sub(1) & ones, *x, x.wrapping_add(1) & ones]);
                    }
                }
            }
            let mut seen: Vec<u64> = Vec::new();
            for x in values {
                if seen.contains(&x) {
                    continue;
                }
                seen.push(x);
                let change: Change = w
                    .parts(&self.atoms)
                    .map(|(k, shift, bits)| (k, pins.apply(k, Value::bv_u64(bits, x >> shift))))
                    .collect();
                if change.iter().any(|(k, v)| *v != cur[*k]) && !out.contains(&change) {
                    out.push(change);
                }
            }
        }
        out
    }

    /// The local search's steps: Some when every conjunct is true under `model`, which
    /// then holds the assignment found.
    fn walk(
        &self,
        store: &TermStore,
        conj: &[TermId],
        model: &mut Model,
        cur: &mut [Value],
        lists: &[Vec<Value>],
        pins: &Pins,
    ) -> Option<()> {
        // The work: nodes evaluated, the first evaluation's and each try's.
        let mut work = self.nodes;
        if work > SEARCH_WORK / 4 {
            return None;
        }
        let deps = Deps::of(conj, self.atom_masks(store, conj));
        let words = self.words(store, conj);
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
            // The best change: (conjuncts true, change).
            let mut best: Option<(usize, Change)> = None;
            for change in self.changes(deps.reads[c], cur, lists, &words, pins) {
                tries += 1;
                if tries > SEARCH_TRIES || work > SEARCH_WORK {
                    return None;
                }
                let mut after = truth.clone();
                let saved;
                (memo, saved) = self.make(store, &deps, model, memo, &change, &mut after)?;
                work += saved.len() + deps.nodes.len() / 8;
                let s = after.iter().filter(|&&t| t).count();
                // Back to the current assignment and its values.
                for (t, old) in saved {
                    memo.forget(t);
                    if let Some(v) = old {
                        memo.restore(t, v);
                    }
                }
                for (k, _) in &change {
                    self.atoms[*k].assign(model, cur[*k].clone())?;
                }
                if best.as_ref().is_none_or(|b| s > b.0) {
                    best = Some((s, change));
                }
            }
            let (s, change) = best?;
            if s < score || (s == score && sideways >= SEARCH_SIDEWAYS) {
                return None;
            }
            sideways += usize::from(s == score);
            (memo, _) = self.make(store, &deps, model, memo, &change, &mut truth)?;
            for (k, v) in change {
                cur[k] = v;
            }
            if truth.iter().all(|&t| t) {
                return Some(());
            }
        }
        None
    }

    /// Make `change` in `model`, forget the values of the nodes that depend on it
    /// (returned, to be put back), and evaluate again into `truth` the conjuncts that
    /// read it.
    fn make(
        &self,
        store: &TermStore,
        deps: &Deps,
        model: &mut Model,
        mut memo: EvalMemo,
        change: &[(usize, Value)],
        truth: &mut [bool],
    ) -> Option<(EvalMemo, Saved)> {
        let mask = change.iter().fold(0u64, |m, (k, _)| m | 1 << k);
        for (k, v) in change {
            self.atoms[*k].assign(model, v.clone())?;
        }
        let saved: Vec<_> = deps
            .nodes
            .iter()
            .filter(|(_, m)| m & mask != 0)
            .map(|&(t, _)| (t, memo.forget(t)))
            .collect();
        let mut ev = Evaluator::resume(store, model, memo);
        for (j, &c) in deps.conj.iter().enumerate() {
            if deps.reads[j] & mask != 0 {
                truth[j] = is_true(ev.eval(c))?;
            }
        }
        Some((ev.into_memo(), saved))
    }

    /// For every node of the component, the set of atoms (bit `k` for atom `k`) whose
    /// values its value depends on. A select at a literal index of an array constant is
    /// where a cell's value enters.
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

/// The values a guess gives atom `a`, round by round: `first` (a recent model's) or zero,
/// then zero, one, all ones, the sign bit alone, all but the sign bit, then the literals
/// of its width.
pub(super) fn guesses(
    store: &TermStore,
    a: &Atom,
    first: Option<Value>,
    hints: &[Value],
) -> Vec<Value> {
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
    let first = first.filter(|v| v.has_sort(&store.sorts, a.sort));
    let mut out = vec![first.unwrap_or_else(|| Value::bv_u64(w, 0))];
    out.extend(uniform(w).map(|x| Value::bv_u64(w, x)));
    out.extend(
        hints
            .iter()
            .filter(|v| matches!(v, Value::Bv { width, .. } if *width == w))
            .cloned(),
    );
    out
}

/// The values of width `w` every atom and word is tried with: zero, one, all ones, the
/// sign bit alone, all but the sign bit.
fn uniform(w: u32) -> [u64; 5] {
    let ones = mask64(w);
    let sign = 1u64 << (w - 1);
    [0, 1, ones, sign, ones & !sign]
}

/// A value `Small::lower` tries to lower, as (width, value): all ones, or bits set above
/// the low byte.
fn lowerable(v: &Value) -> Option<(u32, u64)> {
    match v {
        Value::Bv {
            width,
            v: BvVal::Small(x),
        } if *x == mask64(*width) || *x > 0xff => Some((*width, *x)),
        _ => None,
    }
}

/// Whether an evaluation gave true; None on an error or an undetermined or non-Bool value.
fn is_true(r: Result<Option<Value>, EvalError>) -> Option<bool> {
    match r {
        Ok(Some(Value::Bool(b))) => Some(b),
        _ => None,
    }
}

/// Whether every conjunct evaluates to true under `model` (None on an evaluation error or
/// an undetermined value).
pub(super) fn all_true(store: &TermStore, model: &Model, conj: &[TermId]) -> Option<bool> {
    let mut ev = Evaluator::new(store, model, false);
    for &c in conj {
        if !is_true(ev.eval(c))? {
            return Some(false);
        }
    }
    Some(true)
}

#[cfg(test)]
mod tests {
    use super::super::tests::{asserted, decide, DECLS};
    use super::super::GUESSES;
    use super::*;

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
            let pins = small.pins(&store, &conj);
            let mut cur = Vec::new();
            let uniform = (0..GUESSES).any(|r| {
                small.assign_round(&mut model, &mut cur, &lists, &pins, r);
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
        let mut next = move |n: u64| crate::test_rng::xorshift(&mut seed) % n;
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
            let pins = small.pins(&store, &conj);
            let mut cur = Vec::new();
            small.assign_round(&mut model, &mut cur, &lists, &pins, 0);
            if small
                .walk(&store, &conj, &mut model, &mut cur, &lists, &pins)
                .is_some()
            {
                found += 1;
                agreed += usize::from(all_true(&store, &model, &conj) == Some(true));
            }
        }
        assert_eq!(agreed, found);
        assert!(found >= 100, "the search found {found} of 300");
    }

    /// Bounds on a word (KLEE's `argc`) are met by a literal's neighbour; bits fixed under
    /// masks (`stat`'s mode tests) are pinned in every value tried. Unsat ones are left.
    #[test]
    fn bounds_and_masked_bits_on_words() {
        let w = word(0);
        let masked = |l: u32, m: u32| format!("(= #x{l:08x} (bvand {w} #x{m:08x}))");
        for (body, found) in [
            (
                vec![
                    format!("(bvult {w} #x00000003)"),
                    format!("(bvslt #x00000000 {w})"),
                    format!("(not (= #x00000001 {w}))"),
                ],
                true,
            ),
            (
                vec![
                    masked(0x8000, 0xf000),
                    masked(0x180, 0x1c0),
                    masked(0x20, 0x38),
                    masked(0x4, 0x7),
                ],
                true,
            ),
            (
                vec![masked(0x4000, 0xf000), format!("(bvugt {w} #x00010000)")],
                true,
            ),
            // Unsat: two masks that disagree; a bit outside the mask.
            (vec![masked(0x1, 0x1), masked(0x0, 0x3)], false),
            (vec![masked(0x5, 0x4)], false),
        ] {
            let body: String = body.iter().map(|c| format!("(assert {c})\n")).collect();
            match decide(&body) {
                Some(Decided::Sat(_)) => assert!(found, "{body}: found"),
                Some(Decided::Unsat) => panic!("{body}: a guess decided unsat"),
                None => assert!(!found, "{body}: not found"),
            }
        }
    }

    /// Bits no conjunct needs are clear in a guessed model, as in a solver's: the word
    /// whose low byte is pinned gets zero above it, not the all-ones round that met it.
    #[test]
    fn guessed_models_leave_unneeded_bits_clear() {
        let w = word(0);
        let body = format!("(assert (= ((_ extract 7 0) {w}) #xff))\n(assert (bvugt y #x80))\n");
        let Some(Decided::Sat(m)) = decide(&body) else {
            panic!("guessed")
        };
        let arr = m
            .iter()
            .find_map(|(_, v)| match v {
                Value::Array(arr) => Some(arr.clone()),
                _ => None,
            })
            .expect("a has a value");
        let cells: Vec<Value> = (0..4u64)
            .map(|k| arr.select(&Value::bv_u64(32, k)).clone())
            .collect();
        assert_eq!(cells[0], Value::bv_u64(8, 0xff));
        assert_eq!(
            &cells[1..],
            &[
                Value::bv_u64(8, 0),
                Value::bv_u64(8, 0),
                Value::bv_u64(8, 0)
            ]
        );
    }

    /// Atoms an equality ties are lowered together.
    #[test]
    fn tied_atoms_are_lowered_together() {
        let body = "(assert (= ((_ extract 3 0) y) #xf))\n(assert (= ((_ extract 3 0) y) x))\n";
        let Some(Decided::Sat(m)) = decide(body) else {
            panic!("guessed")
        };
        let vals: Vec<Value> = m.iter().map(|(_, v)| v.clone()).collect();
        assert!(vals.contains(&Value::bv_u64(8, 0x0f)), "{vals:?}");
    }
}
