//! The cache strategy's query path (Green + KLEE's solver chain, on canonical forms). A
//! query asked before in this session is answered from the whole-query memo. Otherwise it
//! is sliced into independent components, and each is tried, cheapest first: the session
//! memo of components; counterexample reasoning on unsat sets (a refuted subset proves
//! unsat); a model of a stored superset or a recent model, evaluated; the component's
//! exact key (as the client wrote it: a lookup per conjunct, `key::exact_key`), then its
//! canonical key (a walk of the whole component, found under other names too) in the
//! tiered store; a backend. Results of the backend feed the store under both keys; a
//! canonical hit, and a component a recent model answered, are stored under the exact
//! key, so the next run finds it at once even where its own models go another way.
//! Under `hybrid` the backend is the incremental stack, and a component that got past the
//! memo and the unsat index is sent to it ahead of need while at least half such
//! components have ended up there: the solver works on the other core while models are
//! evaluated and the key is computed, and its answer is read only if the cache finds none.
//!
//! Invariants:
//! * A `sat` is only returned with a model that the evaluator found to satisfy every
//!   assertion and assumption of the client's query (not just the component).
//! * A solve started ahead is either waited for (the component's answer) or dropped before
//!   `check` returns, never both (`StackMirror::begin`).
//! * `unknown` is never stored. An unsat entry is stored under the key of the exact
//!   canonical component the backend refuted, and in the counterexample index under the
//!   set of that component's conjuncts (client names, this session), so a superset is
//!   unsat by monotonicity.
//! * Stored models are in canonical order: value `i` belongs to canonical constant `i`,
//!   and is mapped back to the client's constant through the component's renaming. Under
//!   an exact key, value `i` belongs to the component's `i`-th constant by name (a
//!   component with a name twice, redeclared with another sort, gets no exact key).
//! * An unsat under an exact key is the very formula refuted (same conjunct texts, same
//!   names and sorts); a model from either key is evaluated on the component before use.
//! * A backend model of an array that the component reads only at literal indices holds
//!   exactly the solver's values at those cells (the rest is a default, the solver's own
//!   when it was asked for): such a model satisfies the component as the solver's did.

use super::backend::SolverHandle;
use super::client::Decl;
use super::fresh::fresh_check;
use super::stack::{InFlight, StackMirror, Via};
use super::stats::Stats;
use super::vocab::{split_values, Answer, Query};
use crate::cache::{CacheConfig, Entry, Key, SetIndex, TieredCache, Verdict};
use crate::driver::{DriverError, Response};
use crate::query::canon::canonicalize;
use crate::query::definitions::{definitions, fill};
use crate::query::enumerate::{Decided, Small};
use crate::query::eval::{EvalMemo, Evaluator, Model};
use crate::query::key::{conjunct_digest, exact_key, key};
use crate::query::slice::{
    free_symbols_of, free_symbols_with, slice_with, sliceable_with, SliceMemo,
};
use crate::query::value::Value;
use crate::query::view::conjuncts;
use crate::smt2::parser::parse_term;
use crate::smt2::printer::{print_term, BackendNames};
use crate::smt2::response::Dialect;
use crate::term::signature::Signature;
use crate::term::{Op, TermId, TermStore};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::VecDeque;

/// How many recent component models are tried before going to the backend.
const RECENT_MODELS: usize = 16;
/// Bound on the counterexample index (sets); it is cleared when exceeded.
const CEX_MAX_SETS: usize = 50_000;
/// Unsat cores learned before judging whether they pay (see `CachePlanner::cores_learned`).
const CORE_TRIAL: u64 = 64;

/// How the cache planner resolves a cache miss.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MissPolicy {
    /// A fresh context per missing component (the `cache` strategy).
    Fresh,
    /// The incremental stack (the `hybrid` strategy), falling back to fresh when the stack
    /// abandons a query (`race`: see `StackMirror::check`).
    Stack { race: bool },
}

pub struct CachePlanner {
    store_tiers: Option<TieredCache>,
    /// Without a configured store, a memory tier of this run only.
    policy: MissPolicy,
    /// Refuted conjunct sets; `true` for a solver's unsat core (see `cores_learned`).
    unsat_sets: SetIndex<bool>,
    /// Unsat cores learned from the stack backend, and components they refuted later. Once
    /// `CORE_TRIAL` cores are learned, fewer than one refutation per 16 cores stops them
    /// (naming assertions costs z3 time; cyphert-sprs: 559 cores, 1 refutation).
    cores_learned: u64,
    core_hits: u64,
    sat_sets: SetIndex<u32>,
    models: Vec<Model>,
    recent: VecDeque<u32>,
    /// Session memo: sorted conjunct set of a component -> what it was found to be.
    exact: FxHashMap<Vec<TermId>, Known>,
    /// Session memo of whole queries: sorted assertions and assumptions -> unsat (`None`)
    /// or the model that satisfied them.
    whole: FxHashMap<Vec<TermId>, Option<Model>>,
    warned: bool,
    /// Components for which models were tried, and how many a model answered, in the
    /// current window: the recent-model budget shrinks when they rarely pay.
    model_tries: u32,
    model_wins: u32,
    /// The same over the whole session, halved now and then (see `probe_defaults`).
    all_tries: u32,
    all_wins: u32,
    recent_budget: usize,
    /// Components that got past the session memo and the unsat index, and how many of
    /// those went to the backend (both halved now and then): hybrid solves ahead while
    /// at least half do.
    past_memo: u32,
    to_backend: u32,
    /// Whether hybrid's guesses of wide components (`Small::decide`'s rounds) and its
    /// local searches (`Small::search`) have been finding models here.
    guesses: Gate,
    searches: Gate,
    /// What each conjunct seen reads and which symbols it needs declared (`SliceMemo`).
    slice_memo: SliceMemo,
    /// Each conjunct's digest for exact keys (`key::conjunct_digest`): a function of the
    /// term alone, like the term store it indexes, so `forget_session` keeps it (a second
    /// run of a tool computes each conjunct's once, as this run did).
    digests: FxHashMap<TermId, [u8; 16]>,
}

/// Which tiers of the result store a lookup asks.
#[derive(Clone, Copy)]
enum Tiers {
    /// The memory tier alone (a hash lookup).
    Memory,
    /// Memory, then disk, then Redis.
    All,
}

/// What a result-store entry says about a component.
enum Stored {
    Unsat,
    /// Its model, decoded and evaluated to true on the component (see `stored`).
    Sat(Model),
    /// Nothing usable (a model that did not decode or did not satisfy it).
    Useless,
}

#[derive(Clone, Copy)]
enum Known {
    Sat(u32),
    Unsat,
}

/// The result of a cache-planned check.
pub enum Planned {
    /// Answered with a model smtproxy validated itself.
    Own(Answer, Option<Model>),
    /// Not handled here (query outside the modelled fragment): plan it otherwise.
    NotModelled,
}

impl CachePlanner {
    pub fn new(cfg: Option<&CacheConfig>, policy: MissPolicy) -> Self {
        let cfg = cfg.cloned().unwrap_or(CacheConfig {
            mem_entries: 100_000,
            mem_bytes: 256 << 20,
            disk: None,
            redis: None,
        });
        CachePlanner {
            store_tiers: Some(TieredCache::new(&cfg)),
            policy,
            unsat_sets: SetIndex::new(CEX_MAX_SETS),
            cores_learned: 0,
            core_hits: 0,
            sat_sets: SetIndex::new(CEX_MAX_SETS),
            digests: FxHashMap::default(),
            models: Vec::new(),
            recent: VecDeque::new(),
            model_tries: 0,
            model_wins: 0,
            all_tries: 0,
            all_wins: 0,
            recent_budget: RECENT_MODELS,
            past_memo: 0,
            to_backend: 0,
            guesses: Gate::default(),
            searches: Gate::default(),
            exact: FxHashMap::default(),
            whole: FxHashMap::default(),
            warned: false,
            slice_memo: SliceMemo::default(),
        }
    }

    /// Forget the session's memos, models and counterexample index (see
    /// `Engine::forget_session`); the result store stays.
    pub fn forget_session(&mut self) {
        self.unsat_sets.clear();
        self.sat_sets.clear();
        self.models.clear();
        self.recent.clear();
        self.exact.clear();
        self.whole.clear();
        self.slice_memo = SliceMemo::default();
    }

    /// The exact key of a component (`key::exact_key`) and the order its constants'
    /// values are stored in (by name). `None` when two of its constants share a name (a
    /// name redeclared with another sort), which the key could not tell apart.
    fn exact_key_of(
        &mut self,
        store: &TermStore,
        conj: &[TermId],
        leaves: &[TermId],
        logic: &str,
    ) -> Option<(Key, Vec<(usize, TermId)>)> {
        let mut named: Vec<(&str, &str, TermId)> = Vec::with_capacity(leaves.len());
        for &l in leaves {
            let Op::Sym(s) = store.op(l) else { return None };
            named.push((store.sym_name(s), store.sorts.text(store.sort(l)), l));
        }
        named.sort_unstable();
        if named.windows(2).any(|w| w[0].0 == w[1].0) {
            return None;
        }
        let digests: Vec<[u8; 16]> = conj
            .iter()
            .map(|&c| {
                *self
                    .digests
                    .entry(c)
                    .or_insert_with(|| conjunct_digest(&print_term(store, c, &BackendNames)))
            })
            .collect();
        let constants: Vec<(&str, &str)> = named.iter().map(|&(n, s, _)| (n, s)).collect();
        let k = Key(exact_key(logic, &digests, &constants));
        let order = named
            .iter()
            .enumerate()
            .map(|(i, &(_, _, l))| (i, l))
            .collect();
        Some((k, order))
    }

    /// What the result store holds for a component under key `k`, its constants' values
    /// stored in `order`: a model is used only if it decodes and evaluates to true on
    /// `conj` (the component's conjuncts, or the client's assertions when the query is this
    /// one component).
    fn stored(
        &mut self,
        store: &mut TermStore,
        k: &Key,
        order: &[(usize, TermId)],
        conj: &[TermId],
        tiers: Tiers,
    ) -> Stored {
        let Some(e) = self.store_tiers.as_mut().and_then(|t| match tiers {
            Tiers::Memory => t.get_memory(k),
            Tiers::All => t.get(k),
        }) else {
            return Stored::Useless;
        };
        match e.verdict {
            Verdict::Unsat => Stored::Unsat,
            Verdict::Sat => match e
                .model
                .as_deref()
                .and_then(|t| decode_model(store, t, order))
            {
                Some(m) if satisfies(store, &m, conj) => Stored::Sat(m),
                _ => Stored::Useless,
            },
        }
    }

    fn put(&mut self, k: &Key, verdict: Verdict, model: Option<String>) {
        if let Some(t) = self.store_tiers.as_mut() {
            t.put(k, &Entry { verdict, model });
        }
    }

    pub fn flush(&mut self) {
        if let Some(t) = self.store_tiers.as_mut() {
            t.flush();
        }
    }

    /// Counters of the result store (None without one).
    pub fn tier_stats(&self) -> Option<&crate::cache::CacheStats> {
        self.store_tiers.as_ref().map(|t| t.stats())
    }

    fn warn_tiers(&mut self, stats: &mut Stats) {
        if let Some(t) = &self.store_tiers {
            for w in t.warnings() {
                stats.note(w.clone());
            }
        }
        self.warned = true;
    }

    pub fn check(
        &mut self,
        stack: &mut StackMirror,
        main: &mut SolverHandle,
        aux: &mut SolverHandle,
        store: &mut TermStore,
        q: &Query,
        stats: &mut Stats,
    ) -> Result<Planned, DriverError> {
        // The very same query (assertions and assumptions, as terms) answered before in
        // this session (a KLEE log repeats many): no slicing, no per-component work. A
        // model is evaluated on the query again all the same.
        let mut whole: Vec<TermId> = q.assertions.to_vec();
        whole.extend_from_slice(q.assumptions);
        whole.sort_unstable();
        whole.dedup();
        if q.defs.is_empty() {
            match self.whole.get(&whole) {
                Some(None) => {
                    stats.cache_hits += 1;
                    return Ok(Planned::Own(Answer::Unsat, None));
                }
                Some(Some(m)) if satisfies(store, m, &whole) => {
                    stats.cache_hits += 1;
                    return Ok(Planned::Own(Answer::Sat, Some(m.clone())));
                }
                _ => {}
            }
        }
        let mut spec = None;
        let r = self.plan(stack, main, aux, store, q, stats, &mut spec);
        if let Some((_, f)) = spec {
            stack.drop_inflight(f);
        }
        if let Ok(Planned::Own(a @ (Answer::Sat | Answer::Unsat), m)) = &r {
            let known = match (a, m) {
                (Answer::Unsat, _) => Some(None),
                (_, Some(m)) => Some(Some(m.clone())),
                _ => None,
            };
            if let Some(k) = known {
                if self.whole.len() >= CEX_MAX_SETS {
                    self.whole.clear();
                }
                self.whole.insert(whole, k);
            }
        }
        r
    }

    /// `check`, with the component (index) whose solve was started ahead in `spec`.
    #[allow(clippy::too_many_arguments)]
    fn plan(
        &mut self,
        stack: &mut StackMirror,
        main: &mut SolverHandle,
        aux: &mut SolverHandle,
        store: &mut TermStore,
        q: &Query,
        stats: &mut Stats,
        spec: &mut Option<(usize, InFlight)>,
    ) -> Result<Planned, DriverError> {
        let mut all: Vec<TermId> = q.assertions.to_vec();
        all.extend_from_slice(q.assumptions);
        let cs = conjuncts(store, &all);
        // Only free symbols and modelled sorts (see `slice::sliceable`), and no function
        // applied (models of functions are not extracted); anything else is planned
        // another way.
        if !q.defs.is_empty()
            || sliceable_with(store, q.sig, &cs, &mut self.slice_memo) != Some(false)
        {
            return Ok(Planned::NotModelled);
        }
        if cs.contains(&TermStore::FALSE) {
            return Ok(Planned::Own(Answer::Unsat, None));
        }
        let logic = q.logic.unwrap_or("");
        let comps = slice_with(store, &cs, &mut self.slice_memo);
        let mut model = Model::new();
        let mut any_solver = false;
        let mut any_local = false;
        let mut used_model = false;
        // A query of one component: its models are evaluated on the client's assertions
        // themselves (`all`, equivalent to the component's conjuncts), and the final check
        // is then made once that evaluation holds (`evaluated`).
        let single = comps.len() == 1;
        let mut evaluated = false;
        for (ci, comp) in comps.into_iter().enumerate() {
            let check: &[TermId] = if single { &all } else { &comp.conjuncts };
            // The same conjunct set answered before in this session.
            let mut exact: Vec<TermId> = comp.conjuncts.clone();
            exact.sort_unstable();
            match self.exact.get(&exact) {
                Some(Known::Unsat) => {
                    stats.cache_hits += u64::from(!any_solver);
                    return Ok(Planned::Own(Answer::Unsat, None));
                }
                Some(Known::Sat(i)) => {
                    if let Some(m) = self.models.get(*i as usize) {
                        merge(store, &mut model, m, &comp.conjuncts);
                        continue;
                    }
                }
                None => {}
            }
            let ids = Self::conjunct_ids(&comp.conjuncts);
            // Counterexample reasoning: a refuted subset.
            if let Some(&from_core) = self.unsat_sets.find_subset(&ids) {
                self.core_hits += u64::from(from_core);
                stats.cache_hits += u64::from(!any_solver);
                self.learn(exact, Known::Unsat);
                return Ok(Planned::Own(Answer::Unsat, None));
            }
            let leaves: Vec<TermId> =
                free_symbols_with(store, &comp.conjuncts, &mut self.slice_memo);
            // Hybrid: while models are tried and the component is canonicalised and
            // looked up, the stack backend already solves it on the other core, when most
            // components that get this far end up there anyway.
            self.past_memo += 1;
            if self.past_memo >= 256 {
                self.past_memo /= 2;
                self.to_backend /= 2;
            }
            // Hybrid decides a component of a few bits itself (`query::enumerate`) where
            // it would otherwise go to the backend; `cache` keeps the design it measures
            // (each miss solved in a fresh context).
            let local = matches!(self.policy, MissPolicy::Stack { .. });
            let mut small: Option<Option<Small>> = None;
            // The component as the client wrote it in the memory tier: a hash of its
            // conjuncts' digests and a lookup, cheaper than trying models (which fail on
            // every unsat component) or starting the backend.
            let xkey = self.exact_key_of(store, &comp.conjuncts, &leaves, logic);
            let mut stored = match &xkey {
                Some((xk, xorder)) => self.stored(store, xk, xorder, check, Tiers::Memory),
                None => Stored::Useless,
            };
            if matches!(stored, Stored::Useless) {
                if spec.is_none()
                    && local
                    && self.to_backend * 2 >= self.past_memo
                    && small
                        .get_or_insert_with(|| Small::of(store, &comp.conjuncts))
                        .as_ref()
                        .is_none_or(|s| !s.is_exhaustive())
                {
                    let decls = component_decls(store, q, &leaves);
                    let cq = component_query(q, &comp.conjuncts, &decls);
                    if let Some(f) = stack.begin(main, store, &cq, stats) {
                        stats.speculations += 1;
                        *spec = Some((ci, f));
                    }
                }
                // A model of a superset, or a recent model (cheaper than canonicalising).
                let found = self.find_model(store, &ids, &comp.conjuncts);
                self.note_model_try(found.is_some());
                if let Some(m) = found {
                    used_model = true;
                    // Stored under its exact key (cheap: no canonical form), so that a later
                    // run finds it even where its own models go another way (a model another
                    // process stored first for an earlier component leads elsewhere).
                    if let Some((xk, xorder)) = &xkey {
                        let text = encode_model(store, &m, xorder);
                        self.put(xk, Verdict::Sat, text);
                    }
                    merge(store, &mut model, &m, &comp.conjuncts);
                    let i = self.remember(&ids, m);
                    self.learn(exact, Known::Sat(i));
                    continue;
                }
                // Then under the exact key in every tier, then the canonical form. The exact
                // key costs a lookup per conjunct; the canonical form walks the whole
                // component, and finds it under other names too.
                if let Some((xk, xorder)) = &xkey {
                    stored = self.stored(store, xk, xorder, check, Tiers::All);
                }
            }
            stats.exact_hits += u64::from(!matches!(stored, Stored::Useless));
            let canon =
                matches!(stored, Stored::Useless).then(|| canonicalize(store, &comp.conjuncts));
            let (k, order) = match &canon {
                Some(canon) => {
                    let k = Key(key(&canon.text, logic, &[]));
                    let mut order: Vec<(usize, TermId)> = canon
                        .renaming
                        .iter()
                        .map(|&(client, can)| (canon_index(store, can), client))
                        .collect();
                    order.sort_unstable();
                    stored = self.stored(store, &k, &order, check, Tiers::All);
                    (Some(k), order)
                }
                None => (None, Vec::new()),
            };
            // What the canonical key found goes under the exact key as well.
            if let (Some(_), Some((xk, xorder))) = (&k, &xkey) {
                match &stored {
                    Stored::Unsat => self.put(xk, Verdict::Unsat, None),
                    Stored::Sat(m) => {
                        let text = encode_model(store, m, xorder);
                        self.put(xk, Verdict::Sat, text);
                    }
                    Stored::Useless => {}
                }
            }
            match stored {
                Stored::Unsat => {
                    stats.cache_hits += u64::from(!any_solver);
                    self.unsat_sets.insert(&ids, false);
                    self.learn(exact, Known::Unsat);
                    return Ok(Planned::Own(Answer::Unsat, None));
                }
                Stored::Sat(m) => {
                    // `stored` evaluated `m` on `check`.
                    evaluated = true;
                    merge(store, &mut model, &m, &comp.conjuncts);
                    let i = self.remember(&ids, m);
                    self.learn(exact, Known::Sat(i));
                    continue;
                }
                Stored::Useless => {}
            }
            let (Some(canon), Some(k)) = (canon, k) else {
                // Cannot happen (nothing usable under the exact key leads to the canonical
                // form); were it to, the query is planned another way.
                return Ok(Planned::NotModelled);
            };
            if canon.conjuncts == [TermStore::FALSE] {
                // The canonical form (an equivalence) decided the component.
                stats.cache_hits += u64::from(!any_solver);
                self.unsat_sets.insert(&ids, false);
                self.learn(exact, Known::Unsat);
                return Ok(Planned::Own(Answer::Unsat, None));
            }
            // Every assignment of a few bits, or a guess, or a local search where searches
            // have been finding models, or else the backend.
            if local {
                small.get_or_insert_with(|| Small::of(store, &comp.conjuncts));
            }
            let small_ref = small.as_ref().and_then(Option::as_ref).filter(|_| local);
            let decided = match small_ref {
                Some(s) if s.is_exhaustive() => {
                    s.decide(store, &comp.conjuncts, &|leaf| self.recent_value(leaf))
                }
                Some(s) => {
                    let mut d = None;
                    if self.guesses.pays() {
                        d = s.decide(store, &comp.conjuncts, &|leaf| self.recent_value(leaf));
                        self.guesses.note(d.is_some());
                    }
                    if d.is_none() && self.searches.pays() {
                        d = s.search(store, &comp.conjuncts, &|leaf| self.recent_value(leaf));
                        self.searches.note(d.is_some());
                    }
                    d
                }
                None => None,
            };
            let (a, m) = match decided {
                Some(d) => {
                    if small
                        .as_ref()
                        .and_then(Option::as_ref)
                        .is_some_and(Small::is_exhaustive)
                    {
                        stats.enumerated += 1;
                    } else {
                        stats.guessed += 1;
                    }
                    any_local = true;
                    match d {
                        Decided::Unsat => (Answer::Unsat, None),
                        Decided::Sat(m) => (Answer::Sat, Some(m)),
                    }
                }
                None => {
                    any_solver = true;
                    self.to_backend += 1;
                    let ahead = match spec.take() {
                        Some((i, f)) if i == ci => {
                            stats.speculations_used += 1;
                            Some(f)
                        }
                        Some((_, f)) => {
                            stack.drop_inflight(f);
                            None
                        }
                        None => None,
                    };
                    self.solve(
                        stack,
                        main,
                        aux,
                        store,
                        q,
                        &comp.conjuncts,
                        &leaves,
                        ahead,
                        stats,
                    )?
                }
            };
            match a {
                Answer::Unsat => {
                    self.unsat_sets.insert(&ids, false);
                    self.learn(exact, Known::Unsat);
                    self.put(&k, Verdict::Unsat, None);
                    if let Some((xk, _)) = &xkey {
                        self.put(xk, Verdict::Unsat, None);
                    }
                    return Ok(Planned::Own(Answer::Unsat, None));
                }
                Answer::Unknown => return Ok(Planned::Own(Answer::Unknown, None)),
                Answer::Sat => {
                    let Some(m) = m else {
                        // No usable model: the answer must come from a backend with the model.
                        return Ok(Planned::NotModelled);
                    };
                    if !satisfies(store, &m, check) {
                        stats.note(
                            "a backend model did not evaluate to true; answering from the backend"
                                .into(),
                        );
                        return Ok(Planned::NotModelled);
                    }
                    evaluated = true;
                    if let Some(text) = encode_model(store, &m, &order) {
                        self.put(&k, Verdict::Sat, Some(text));
                    }
                    if let Some((xk, xorder)) = &xkey {
                        if let Some(text) = encode_model(store, &m, xorder) {
                            self.put(xk, Verdict::Sat, Some(text));
                        }
                    }
                    merge(store, &mut model, &m, &comp.conjuncts);
                    let i = self.remember(&ids, m);
                    self.learn(exact, Known::Sat(i));
                }
            }
        }
        if !self.warned {
            self.warn_tiers(stats);
        }
        // The whole query, under the union of the component models. With one component
        // whose model was evaluated to true on `all` above, `model` is that model (merged
        // into an empty one) and this check was that evaluation. A model from the session's
        // memo or one restricted from another query's is evaluated here.
        if (single && evaluated) || satisfies(store, &model, &all) {
            if !any_solver && !any_local {
                if used_model {
                    stats.model_hits += 1;
                } else {
                    stats.cache_hits += 1;
                }
            }
            return Ok(Planned::Own(Answer::Sat, Some(model)));
        }
        stats.note(
            "combined component models did not satisfy the query; answering from the backend"
                .into(),
        );
        Ok(Planned::NotModelled)
    }

    /// Keep a component model for reuse; returns its index.
    fn remember(&mut self, ids: &[u64], m: Model) -> u32 {
        if self.models.len() >= CEX_MAX_SETS {
            self.models.clear();
            self.sat_sets.clear();
            self.recent.clear();
            self.exact.clear();
        }
        let idx = self.models.len() as u32;
        self.models.push(m);
        self.sat_sets.insert(ids, idx);
        self.recent.push_front(idx);
        self.recent.truncate(RECENT_MODELS);
        idx
    }

    fn learn(&mut self, conj: Vec<TermId>, k: Known) {
        if self.exact.len() >= CEX_MAX_SETS {
            self.exact.clear();
        }
        self.exact.insert(conj, k);
    }

    /// Ids of conjuncts for the counterexample index: the term ids themselves. The store
    /// lives as long as the session and hash-conses every term with its sorts, so equal ids
    /// are the same formula; client text is not enough (after a pop or reset the same text
    /// may name constants of other sorts: `(distinct a b c)` is unsat over Bool only).
    fn conjunct_ids(conj: &[TermId]) -> Vec<u64> {
        let mut ids: Vec<u64> = conj.iter().map(|c| u64::from(c.0)).collect();
        ids.sort_unstable();
        ids.dedup();
        ids
    }

    /// A recent model's value of `leaf` (the four newest models), where a decision starts.
    fn recent_value(&self, leaf: TermId) -> Option<&Value> {
        self.recent
            .iter()
            .take(4)
            .find_map(|&i| self.models.get(i as usize)?.get(leaf))
    }

    /// Adapt how many recent models are tried: each try evaluates the component, which on
    /// logs where models rarely carry over (bit-vector arithmetic over arrays) costs more
    /// than it saves. Windows of 128 components; all 16 while at least 1 in 8 is answered.
    fn note_model_try(&mut self, won: bool) {
        self.model_tries += 1;
        self.model_wins += u32::from(won);
        self.all_tries += 1;
        self.all_wins += u32::from(won);
        if self.all_tries >= 1024 {
            self.all_tries /= 2;
            self.all_wins /= 2;
        }
        if self.model_tries >= 128 {
            self.recent_budget = if self.model_wins * 8 >= self.model_tries {
                RECENT_MODELS
            } else {
                RECENT_MODELS / 4
            };
            self.model_tries = 0;
            self.model_wins = 0;
        }
    }

    /// Ask the solver for an array's default (one more cell, see `solve`) while models carry
    /// over to later queries here: it keeps the solver's default in the model, which makes
    /// reuse far likelier, but costs z3 about as much as printing the whole array (a sort
    /// log's backend stream: 0.42-0.46 s in z3 with cells alone, 0.58-0.60 s with the probe
    /// on 7 of its 20 get-values). So only once models have been seen to carry over: at
    /// least 8 tries, 1 in 4 of them answered.
    fn probe_defaults(&self) -> bool {
        self.all_tries >= 8 && self.all_wins * 4 >= self.all_tries
    }

    /// A model of a stored superset or a recent model that satisfies `conj`, as it is or
    /// with the constants `conj` defines recomputed from their definitions (a tool that
    /// names its intermediates afresh in every query: see `query::definitions`).
    fn find_model(&self, store: &TermStore, ids: &[u64], conj: &[TermId]) -> Option<Model> {
        let mut defs: Option<Vec<(TermId, TermId)>> = None;
        let mut tried: FxHashSet<u32> = FxHashSet::default();
        let cands = self
            .sat_sets
            .find_supersets(ids, 8)
            .into_iter()
            .copied()
            .chain(self.recent.iter().take(self.recent_budget).copied());
        for i in cands {
            if !tried.insert(i) {
                continue;
            }
            let m = self.models.get(i as usize)?;
            if satisfies(store, m, conj) {
                // Keep only the values of this component's constants (plus completions).
                return Some(restrict(store, m, conj));
            }
            let defs = defs.get_or_insert_with(|| definitions(store, conj));
            if !defs.is_empty() {
                let filled = fill(store, m, defs);
                if satisfies(store, &filled, conj) {
                    return Some(restrict(store, &filled, conj));
                }
            }
        }
        None
    }

    #[allow(clippy::too_many_arguments)]
    fn solve(
        &mut self,
        stack: &mut StackMirror,
        main: &mut SolverHandle,
        aux: &mut SolverHandle,
        store: &mut TermStore,
        client_q: &Query,
        conj: &[TermId],
        leaves: &[TermId],
        ahead: Option<InFlight>,
        stats: &mut Stats,
    ) -> Result<(Answer, Option<Model>), DriverError> {
        let decls = component_decls(store, client_q, leaves);
        let q = component_query(client_q, conj, &decls);
        let (a, h, stack_names): (Answer, &mut SolverHandle, bool) = match self.policy {
            MissPolicy::Stack { race } => {
                let r = match ahead {
                    Some(f) => stack.finish(f, main, aux, race, store, &q, stats)?,
                    None => stack.check(main, aux, race, store, &q, stats)?,
                };
                match r {
                    (Answer::Unsat, Via::Incremental) => {
                        // A core smaller than the component refutes every later component
                        // that contains it (counterexample reasoning, with the solver's core
                        // rather than the whole set).
                        if let Some(core) = stack.unsat_core(main) {
                            if core.len() < conj.len() {
                                stats.cores += 1;
                                self.cores_learned += 1;
                                self.unsat_sets.insert(&Self::conjunct_ids(&core), true);
                                if self.cores_learned >= CORE_TRIAL
                                    && self.core_hits * 16 < self.cores_learned
                                {
                                    stack.stop_cores();
                                    stats.note(format!(
                                        "unsat cores stopped: {} learned, {} later refutations",
                                        self.cores_learned, self.core_hits
                                    ));
                                }
                            }
                        }
                        (Answer::Unsat, main, true)
                    }
                    (a, Via::Incremental) => (a, main, true),
                    (a, Via::Fresh) => (a, aux, false),
                }
            }
            MissPolicy::Fresh => (fresh_check(main, store, &q, stats)?, main, false),
        };
        if a != Answer::Sat || leaves.is_empty() {
            return Ok((
                a,
                if a == Answer::Sat {
                    Some(Model::new())
                } else {
                    None
                },
            ));
        }
        let names: &dyn crate::smt2::printer::Names = if stack_names {
            stack.names()
        } else {
            &BackendNames
        };
        // What to ask for: each leaf, except that an array read only at literal indices is
        // asked for those cells (z3 5.4 takes ~5 ms to print a KLEE array's whole model;
        // the cells are all the component can see, and every model is evaluated before it
        // is served anyway).
        // One more cell, at an index the component does not read, gives the array's value
        // everywhere else in the solver's model (its default): models that keep the
        // solver's default are reused far more often (a regexp log: 135 model hits with it,
        // 83 with the element sort's default).
        let cells = cell_reads(store, conj, leaves);
        let probe = self.probe_defaults();
        let mut probes: FxHashMap<TermId, TermId> = FxHashMap::default();
        let mut asked: Vec<TermId> = Vec::with_capacity(leaves.len());
        for &l in leaves {
            match cells.get(&l) {
                Some(sel) => {
                    asked.extend_from_slice(sel);
                    if let Some(p) = probe.then(|| unread_cell(store, l, sel)).flatten() {
                        probes.insert(l, p);
                        asked.push(p);
                    }
                }
                None => asked.push(l),
            }
        }
        let mut cmd = String::from("(get-value (");
        for (i, &t) in asked.iter().enumerate() {
            if i > 0 {
                cmd.push(' ');
            }
            cmd.push_str(&print_term(store, t, names));
        }
        cmd.push_str("))");
        // Asked of the process that answered; if it died since, the model is simply not
        // available here and the query is planned otherwise (the backend is restarted).
        let gen = h.generation;
        let text = match h.cmd_in_generation(gen, &cmd) {
            Ok(Response::Other(t)) => t,
            Ok(_) => return Ok((a, None)),
            Err(e) => {
                stats.note(format!(
                    "the solver died before it gave its model ({e}); solving again"
                ));
                return Ok((a, None));
            }
        };
        let Ok(values) = split_values(&text, asked.len()) else {
            return Ok((a, None));
        };
        let empty = Signature::default();
        let mut got: FxHashMap<TermId, Value> = FxHashMap::default();
        for (&t, v) in asked.iter().zip(values) {
            let Ok(vt) = parse_term(store, &empty, &v) else {
                return Ok((a, None));
            };
            let Some(val) = Value::from_term(store, vt) else {
                return Ok((a, None));
            };
            got.insert(t, val);
        }
        let mut m = Model::new();
        for &l in leaves {
            let val = match cells.get(&l) {
                Some(sel) => {
                    let default = probes.get(&l).and_then(|p| got.get(p)).cloned();
                    let Some(arr) = array_of_cells(store, l, sel, default, &got) else {
                        return Ok((a, None));
                    };
                    arr
                }
                None => match got.remove(&l) {
                    Some(v) => v,
                    None => return Ok((a, None)),
                },
            };
            m.set(l, val);
        }
        Ok((a, Some(m)))
    }
}

/// The client's declarations of a component's free constants.
fn component_decls(store: &TermStore, client_q: &Query, leaves: &[TermId]) -> Vec<Decl> {
    let used: FxHashSet<&str> = leaves
        .iter()
        .filter_map(|&l| match store.op(l) {
            Op::Sym(s) => Some(store.sym_name(s)),
            _ => None,
        })
        .collect();
    client_q
        .decls
        .iter()
        .filter(|d| used.contains(d.name.as_str()))
        .cloned()
        .collect()
}

/// A component as a query of its own (the client's options and base, no assumptions).
fn component_query<'a>(client_q: &Query<'a>, conj: &'a [TermId], decls: &'a [Decl]) -> Query<'a> {
    Query {
        assertions: conj,
        base: client_q.base,
        assumptions: &[],
        decls,
        defs: &[],
        preamble: client_q.preamble,
        logic: client_q.logic,
        sig: client_q.sig,
    }
}

/// The array leaves among `leaves` that `conj` reads only as `(select a i)` with a
/// literal index `i`, with those select terms (ascending, no duplicates). An array that
/// occurs anywhere else (a symbolic index, a store, an equality) is not in the map.
fn cell_reads(
    store: &TermStore,
    conj: &[TermId],
    leaves: &[TermId],
) -> FxHashMap<TermId, Vec<TermId>> {
    let arrays: FxHashSet<TermId> = leaves
        .iter()
        .copied()
        .filter(|&l| matches!(store.sorts.get(store.sort(l)), crate::term::Sort::Array(..)))
        .collect();
    if arrays.is_empty() {
        return FxHashMap::default();
    }
    let mut cells: FxHashMap<TermId, Vec<TermId>> = FxHashMap::default();
    let mut whole: FxHashSet<TermId> = FxHashSet::default();
    let mut seen = crate::term::visit::Visited::new();
    let mut stack: Vec<TermId> = conj.to_vec();
    while let Some(t) = stack.pop() {
        if !seen.insert(t) {
            continue;
        }
        let args = store.args(t);
        for (k, &x) in args.iter().enumerate() {
            if !arrays.contains(&x) {
                continue;
            }
            let literal_index = k == 0 && Value::literal_select_index(store, t).is_some();
            if literal_index {
                cells.entry(x).or_default().push(t);
            } else {
                whole.insert(x);
            }
        }
        stack.extend(args.iter().copied());
    }
    cells.retain(|a, _| !whole.contains(a));
    for sel in cells.values_mut() {
        sel.sort_unstable();
        sel.dedup();
    }
    cells
}

/// `(select a i)` for a bit-vector index `i` that none of `sel` reads (the highest such
/// value), or None (other index sorts, or no such index among the 64 highest).
fn unread_cell(store: &mut TermStore, a: TermId, sel: &[TermId]) -> Option<TermId> {
    let crate::term::Sort::Array(isort, _) = *store.sorts.get(store.sort(a)) else {
        return None;
    };
    let w = store
        .sorts
        .bv_width(isort)
        .filter(|&w| (1..=64).contains(&w))?;
    let read: FxHashSet<TermId> = sel.iter().map(|&s| store.args(s)[1]).collect();
    let top = crate::query::value::mask64(w);
    for k in 0..64u64.min(top) {
        let idx = store.mk_bv_u64(top - k, w);
        if !read.contains(&idx) {
            return store.app(Op::Select, vec![a, idx]).ok();
        }
    }
    None
}

/// The array value of `a` from the values of its cells (`sel`, from `cell_reads`), the
/// element sort's default elsewhere.
fn array_of_cells(
    store: &TermStore,
    a: TermId,
    sel: &[TermId],
    default: Option<Value>,
    got: &FxHashMap<TermId, Value>,
) -> Option<Value> {
    let crate::term::Sort::Array(isort, esort) = *store.sorts.get(store.sort(a)) else {
        return None;
    };
    let default = match default {
        Some(d) => d,
        None => Value::default_of(&store.sorts, esort)?,
    };
    let mut arr = crate::query::value::ArrayVal::constant(default);
    for &s in sel {
        let i = Value::from_term(store, store.args(s)[1])?;
        arr.store(i, got.get(&s)?.clone());
    }
    arr.normalise_finite(&store.sorts, isort)
        .then_some(Value::Array(arr))
}

/// The index `i` of a canonical constant `\0c<i>`.
fn canon_index(store: &TermStore, leaf: TermId) -> usize {
    match store.op(leaf) {
        Op::Sym(s) => store
            .sym_name(s)
            .rsplit('c')
            .next()
            .and_then(|d| d.parse().ok())
            .unwrap_or(usize::MAX),
        _ => usize::MAX,
    }
}

/// Whether a way of deciding components locally that may find nothing pays on this log,
/// from how often it has found something: hybrid's guesses of wide components cost a few
/// evaluations each, its local searches up to about a millisecond when they find nothing,
/// as they mostly do on logs whose components are unsat or need arithmetic (cyphert-sprs:
/// 13 guessed of 710, 3 found by a search in 646), while on KLEE's they mostly find a
/// model (sort: 47 searches of 48). Every one of the first 16 is made, then while at least
/// 1 in 8 finds something; otherwise 1 in 16, so that a log whose queries change is
/// noticed. Counts halve at 64, so that the recent ones weigh most.
#[derive(Default)]
struct Gate {
    made: u32,
    found: u32,
    skipped: u32,
}

impl Gate {
    fn pays(&mut self) -> bool {
        let pays = self.made < 16 || self.found * 8 >= self.made;
        self.skipped = if pays { 0 } else { self.skipped + 1 };
        pays || self.skipped.is_multiple_of(16)
    }

    fn note(&mut self, found: bool) {
        self.made += 1;
        self.found += u32::from(found);
        if self.made >= 64 {
            self.made /= 2;
            self.found /= 2;
        }
    }
}

/// Whether every term of `ts` evaluates to true under `m` (completed with defaults).
///
/// Evaluated last to first: conjuncts come in assertion order (and `whole` in ascending
/// term id, i.e. interning order), and a model from an earlier query of the same path
/// usually satisfies the old prefix and fails on the newest branch condition, so a model
/// that does not fit is rejected after one conjunct rather than after the whole prefix
/// (hybrid replay of cyphert-sprs: 462M instructions in here before, 168M after; the
/// answer is the same either way, a conjunction).
fn satisfies(store: &TermStore, m: &Model, ts: &[TermId]) -> bool {
    let mut ev = Evaluator::new(store, m, true);
    ts.iter().rev().all(|&t| ev.is_true(t).unwrap_or(false))
}

/// Add a component's model to the query's model. Components share no constant, but they
/// may share an array whose cells they read at different constant indices (KLEE's
/// independence rule): for an array already in the model, only the cells this component
/// reads are copied, so the other components' cells (and the default) stay as they were.
fn merge(store: &TermStore, into: &mut Model, from: &Model, conj: &[TermId]) {
    // The cells `conj` reads of each array, found only when an array is in both models
    // (components may share an array, each reading its own cells: KLEE's rule in `slice`).
    let mut cells: Option<FxHashMap<TermId, Vec<TermId>>> = None;
    for (l, v) in from.iter() {
        match (into.get_mut(l), v) {
            (Some(Value::Array(have)), Value::Array(new)) => {
                let cells = cells.get_or_insert_with(|| literal_cells(store, conj));
                let idx = cells.get(&l).map(|v| v.as_slice()).unwrap_or(&[]);
                for &i in idx {
                    if let Some(iv) = Value::from_term(store, i) {
                        let e = new.select(&iv).clone();
                        have.store(iv, e);
                    }
                }
            }
            _ => into.set(l, v.clone()),
        }
    }
}

/// The index terms of every `(select a i)` in `conj` with `a` an array constant, by array.
fn literal_cells(store: &TermStore, conj: &[TermId]) -> FxHashMap<TermId, Vec<TermId>> {
    let mut cells: FxHashMap<TermId, Vec<TermId>> = FxHashMap::default();
    let mut seen = crate::term::visit::Visited::new();
    let mut stack: Vec<TermId> = conj.to_vec();
    while let Some(t) = stack.pop() {
        if !seen.insert(t) {
            continue;
        }
        if store.op(t) == Op::Select {
            let (a, i) = (store.args(t)[0], store.args(t)[1]);
            if store.args(a).is_empty() && matches!(store.op(a), Op::Sym(_)) {
                cells.entry(a).or_default().push(i);
            }
        }
        stack.extend(store.args(t).iter().copied());
    }
    cells
}

fn restrict(store: &TermStore, m: &Model, conj: &[TermId]) -> Model {
    let mut out = Model::new();
    for l in free_symbols_of(store, conj) {
        if let Some(v) = m.get(l) {
            out.set(l, v.clone());
        } else {
            let mut ev = Evaluator::new(store, m, true);
            if let Ok(Some(v)) = ev.eval(l) {
                out.set(l, v);
            }
        }
    }
    out
}

/// A model as stored: one value per canonical constant, in canonical order, one per line.
fn encode_model(store: &mut TermStore, m: &Model, order: &[(usize, TermId)]) -> Option<String> {
    let mut s = String::new();
    for &(_, leaf) in order {
        let sort = store.sort(leaf);
        let v = match m.get(leaf) {
            Some(v) => v.clone(),
            None => Value::default_of(&store.sorts, sort)?,
        };
        let t = v.to_term(store, sort);
        s.push_str(&print_term(store, t, &BackendNames));
        s.push('\n');
    }
    Some(s)
}

fn decode_model(store: &mut TermStore, text: &str, order: &[(usize, TermId)]) -> Option<Model> {
    let lines: Vec<&str> = text.lines().filter(|l| !l.is_empty()).collect();
    if lines.len() != order.len() {
        return None;
    }
    let empty = Signature::default();
    let mut m = Model::new();
    for (&(_, leaf), line) in order.iter().zip(lines) {
        let sort = store.sort(leaf);
        // Read straight from the text where it is a literal of the usual forms; else as a
        // term (which interns it).
        let v = match crate::query::literal::parse(line, sort, &store.sorts) {
            Some(v) => v,
            None => {
                let t = parse_term(store, &empty, line).ok()?;
                Value::from_term(store, t)?
            }
        };
        if !v.has_sort(&store.sorts, sort) {
            return None;
        }
        m.set(leaf, v);
    }
    Some(m)
}

/// A model smtproxy validated itself, as get-value and get-model read it after the
/// check-sat it answered. The values evaluated for earlier get-values are kept, and the
/// completions they made are set in the model, so the answers of one check-sat agree and a
/// KLEE query's sixteen get-values check the array's sort and evaluate shared subterms
/// once rather than sixteen times.
pub struct OwnModel {
    model: Model,
    /// A completing evaluator's values under `model` (see `EvalMemo`).
    memo: Option<EvalMemo>,
}

impl OwnModel {
    pub fn new(model: Model) -> OwnModel {
        OwnModel { model, memo: None }
    }

    /// Values for get-value, in the client's order, printed as `dialect`'s solver prints them.
    pub fn values(
        &mut self,
        store: &mut TermStore,
        terms: &[TermId],
        dialect: Dialect,
    ) -> Result<Vec<String>, String> {
        let mut vals = Vec::with_capacity(terms.len());
        let completions;
        {
            let mut ev = match self.memo.take() {
                Some(memo) => Evaluator::resume(store, &self.model, memo),
                None => Evaluator::new(store, &self.model, true),
            };
            for &t in terms {
                match ev.eval(t) {
                    Ok(Some(v)) => vals.push((t, v)),
                    Ok(None) => return Err("model does not determine the term".into()),
                    Err(e) => return Err(format!("cannot evaluate: {e:?}")),
                }
            }
            completions = ev.completions();
            self.memo = Some(ev.into_memo());
        }
        for (l, v) in completions {
            self.model.set(l, v);
        }
        let mut out = Vec::with_capacity(vals.len());
        let names = dialect.value_names();
        for (t, v) in vals {
            let s = store.sort(t);
            let vt = v.to_term(store, s);
            out.push(print_term(store, vt, &names));
        }
        Ok(out)
    }

    /// A get-model answer over the client's declared constants.
    pub fn model_text(
        &mut self,
        store: &mut TermStore,
        decls: &[Decl],
        dialect: Dialect,
    ) -> Result<String, String> {
        let mut entries = Vec::new();
        let mut seen: FxHashMap<String, ()> = FxHashMap::default();
        for d in decls.iter().rev() {
            if !d.params.is_empty() || seen.insert(d.name.clone(), ()).is_some() {
                continue;
            }
            let leaf = store.mk_sym_app(d.sym, vec![], d.ret);
            let v = self
                .values(store, &[leaf], dialect)?
                .pop()
                .unwrap_or_default();
            entries.push((
                crate::smt2::printer::quote_symbol(&d.name).into_owned(),
                String::new(),
                store.sorts.to_text(d.ret),
                v,
            ));
        }
        entries.reverse();
        Ok(crate::smt2::response::model(dialect, &entries))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A gate lets every one of the first 16 through, closes when under 1 in 8 finds
    /// something (then lets 1 in 16 through), and opens again when those find.
    #[test]
    fn a_gate_follows_what_it_finds() {
        let mut g = Gate::default();
        for _ in 0..16 {
            assert!(g.pays());
            g.note(false);
        }
        let let_through: Vec<bool> = (0..48).map(|_| g.pays()).collect();
        assert_eq!(let_through.iter().filter(|&&p| p).count(), 3);
        assert!(let_through[15] && !let_through[14]);
        // Three probes that find: 3 of 19 is over 1 in 8.
        for _ in 0..3 {
            g.note(true);
        }
        assert!(g.pays() && g.pays());
        // A gate that keeps finding stays open.
        let mut g = Gate::default();
        for k in 0..200 {
            assert!(g.pays());
            g.note(k % 4 == 0);
        }
    }

    #[test]
    fn arrays_read_at_literal_indices_are_asked_cell_by_cell() {
        let mut s = TermStore::new();
        let (b32, b8) = (s.sorts.bv(32), s.sorts.bv(8));
        let arr = s.sorts.array(b32, b8);
        let (a, b) = (s.mk_const("a", arr), s.mk_const("b", arr));
        let x = s.mk_const("x", b32);
        let one = s.mk_bv_u64(1, 32);
        let two = s.mk_bv_u64(2, 32);
        let k = s.mk_bv_u64(7, 8);
        let a1 = s.app(Op::Select, vec![a, one]).unwrap();
        let a2 = s.app(Op::Select, vec![a, two]).unwrap();
        let bx = s.app(Op::Select, vec![b, x]).unwrap();
        let c1 = s.app(Op::Eq, vec![a1, k]).unwrap();
        let c2 = s.app(Op::Eq, vec![a2, bx]).unwrap();
        let leaves = [a, b, x];
        let cells = cell_reads(&s, &[c1, c2], &leaves);
        // a: cells 1 and 2 only; b is read at a symbolic index: asked whole.
        let mut want = vec![a1, a2];
        want.sort_unstable();
        assert_eq!(cells.get(&a), Some(&want));
        assert!(!cells.contains_key(&b) && !cells.contains_key(&x));
        // The array built from the cells: those values, the element default elsewhere.
        let mut got = FxHashMap::default();
        got.insert(a1, Value::bv_u64(8, 7));
        got.insert(a2, Value::bv_u64(8, 9));
        let Some(Value::Array(v)) = array_of_cells(&s, a, &want, None, &got) else {
            panic!("no array")
        };
        assert_eq!(v.select(&Value::bv_u64(32, 1)), &Value::bv_u64(8, 7));
        assert_eq!(v.select(&Value::bv_u64(32, 2)), &Value::bv_u64(8, 9));
        assert_eq!(v.select(&Value::bv_u64(32, 3)), &Value::bv_u64(8, 0));
        // The probe for the solver's default reads a cell the component does not.
        let p = unread_cell(&mut s, a, &want).expect("a probe cell");
        assert_eq!(s.args(p)[0], a);
        assert!(!want.iter().any(|&c| s.args(c)[1] == s.args(p)[1]));
        let Some(Value::Array(v)) = array_of_cells(&s, a, &want, Some(Value::bv_u64(8, 42)), &got)
        else {
            panic!("no array")
        };
        assert_eq!(v.select(&Value::bv_u64(32, 3)), &Value::bv_u64(8, 42));
        assert_eq!(v.select(&Value::bv_u64(32, 1)), &Value::bv_u64(8, 7));
    }
}
