//! The cache strategy's query path (Green + KLEE's solver chain, on canonical forms). A
//! query asked before in this session is answered from the whole-query memo. Otherwise it
//! is sliced into independent components, and each is tried, cheapest first: the session
//! memo of components; counterexample reasoning on unsat sets (a refuted subset proves
//! unsat); a model of a stored superset or a recent model, evaluated; the component's
//! exact key (as the client wrote it: a lookup per conjunct, `key::exact_key`), then its
//! canonical key (a walk of the whole component, found under other names too) in the
//! tiered store; a backend. Results of the backend feed the store under both keys; a
//! canonical hit is stored under the exact key, so the next run finds it at once; a
//! component a recent model answered goes under the exact key in the memory tier only
//! (a later run meets it through its own models).
//! Under `hybrid` the backend is the incremental stack, and a component that got past the
//! memo and the unsat index is sent to it ahead of need while at least half such
//! components have ended up there: the solver works on the other core while models are
//! evaluated and the key is computed, and its answer is read only if the cache finds none.
//!
//! Invariants:
//! * A `sat` is only returned with a model that the evaluator found to satisfy every
//!   assertion and assumption of the client's query (not just the component).
//!   The one exception, `Planned::SatUnread`, is the solver's own sat on a query of one
//!   component whose model was dear to read: nothing is stored for it, and the planner
//!   reads its model (and evaluates it) only when it is asked for.
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

mod adapt;
mod cells;
mod hints;
mod model;

use adapt::{AheadRate, BackendCost, CoreTrial, Gate, ModelCost, ModelTries, RECENT_MODELS};
use cells::{array_of_cells, cell_reads, cell_terms, fixed_cells, unread_cell};
use hints::BlockHints;
pub use hints::{model_from_text, model_to_text};
pub use model::satisfies as model_satisfies;
use model::{canon_index, decode_model, encode_model, merge, restrict, satisfies};

use super::client::Decl;
use super::miss::MissPath;
use super::stats::Stats;
use super::vocab::{Answer, Query};
use crate::cache::{CacheConfig, Entry, Key, SetIndex, TieredCache, Verdict};
use crate::driver::DriverError;
use crate::query::canon::canonicalize;
use crate::query::definitions::{definitions, fill};
use crate::query::enumerate::{by_bounds, Decided, Small};
use crate::query::eval::Model;
use crate::query::key::{conjunct_digest, exact_key, key};
use crate::query::slice::{
    blocks_slicing, free_symbols_with, slice_with, sliceable_with, SliceMemo,
};
use crate::query::value::Value;
use crate::query::view::{conjuncts, normalise_top};
use crate::smt2::parser::parse_term;
use crate::smt2::printer::{print_term, BackendNames};
use crate::term::signature::Signature;
use crate::term::{Op, TermId, TermStore};
use rustc_hash::{FxHashMap, FxHashSet};
use std::collections::VecDeque;
use std::time::Instant;

/// Bound on the counterexample index (sets); it is cleared when exceeded. The session memos
/// (`exact`, `whole`) and the recent models are bounded by the same count.
const CEX_MAX_SETS: usize = 50_000;
/// Bound on the conjunct digests kept (28 bytes each and the table's slack); emptied when
/// exceeded.
const DIGESTS_MAX: usize = 1 << 20;

/// A block's model text (`hints`) for the last check-sat's model.
#[derive(Debug)]
pub enum BlockText {
    /// The text the model was read back from and evaluated true on that query.
    Checked(Box<str>),
    /// The text `hints` made of the model to keep it (not read back).
    Made(Box<str>),
}

pub struct CachePlanner {
    store_tiers: Option<TieredCache>,
    /// Without a configured store, a memory tier of this run only.
    /// Hybrid: decide components of a few bits locally, and solve ahead of need.
    local: bool,
    /// Refuted conjunct sets; `true` for a solver's unsat core (see `cores`).
    unsat_sets: SetIndex<bool>,
    cores: CoreTrial,
    sat_sets: SetIndex<u32>,
    models: Vec<Model>,
    recent: VecDeque<u32>,
    /// Session memo: sorted conjunct set of a component -> what it was found to be.
    exact: FxHashMap<Vec<TermId>, Known>,
    /// Session memo of whole queries: sorted assertions and assumptions -> unsat (`None`)
    /// or the model that satisfied them.
    whole: FxHashMap<Vec<TermId>, Option<Model>>,
    warned: bool,
    model_tries: ModelTries,
    ahead: AheadRate,
    /// Whether hybrid's enumerations of small components, its guesses of wide ones
    /// (`Small::decide`) and its local searches (`Small::search`) have been finding
    /// answers here, for less than the backend takes.
    enumerations: Gate,
    /// ... and its decisions by the bounds of words (`enumerate::by_bounds`).
    bounds: Gate,
    guesses: Gate,
    searches: Gate,
    /// Reads of a block's model from the result store (a model another run stored): a
    /// lookup per new block, which on a store no earlier run of this client filled is
    /// a miss each time (regexp/all: 10,000 of them, most of the store's cost there).
    block_reads: Gate,
    /// What the backend stage has been taking per component (`BackendCost`).
    backend_cost: BackendCost,
    /// The miss path was shown the first component that got past the memo and the
    /// memory tier (`MissPath::first_component`).
    warmed: bool,
    /// What the backend's solves and model reads take (`ModelCost`).
    model_cost: ModelCost,
    /// What each conjunct seen reads and which symbols it needs declared (`SliceMemo`).
    slice_memo: SliceMemo,
    /// The model of each block of commands answered sat, by its name-free key (`hints`).
    hints: BlockHints,
    /// The last check-sat's model as a block's text (`hints`), when there is one.
    block_text: Option<BlockText>,
    /// The component of the last query answered `Planned::SatUnread`, while its model may
    /// still be read (`model_read`).
    unread: Option<UnreadComp>,
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

/// One component of a query on its way through the stages.
struct Comp<'c> {
    index: usize,
    conj: &'c [TermId],
    /// What a model of it is evaluated on: its conjuncts, or the client's assertions
    /// themselves when the query is this one component.
    check: &'c [TermId],
    /// Its conjuncts, sorted: the session memo's key.
    sorted: Vec<TermId>,
    /// Its conjuncts' ids in the counterexample indexes.
    ids: Vec<u64>,
    /// Its free constants (from the exact key on).
    leaves: Vec<TermId>,
    /// Its exact key and the order of its constants' values under it.
    xkey: Option<(Key, Vec<(usize, TermId)>)>,
    /// Whether it is a component of a few bits (`Small::of`), worked out once if asked.
    small: Option<Option<Small>>,
}

impl Comp<'_> {
    fn small(&mut self, store: &TermStore) -> Option<&Small> {
        let conj = self.conj;
        self.small
            .get_or_insert_with(|| Small::of(store, conj))
            .as_ref()
    }
}

/// The query's progress over its components.
#[derive(Default)]
struct Tally {
    /// The union of the component models so far.
    model: Model,
    /// A component went to the backend, or was decided locally.
    any_solver: bool,
    /// The free constants of a component the backend found sat whose model was left
    /// unread (`ModelCost`), the last such.
    unread: Option<Vec<TermId>>,
    any_local: bool,
    /// A component was answered by a model of another query.
    used_model: bool,
    /// The (single) component's model was evaluated on the client's assertions.
    evaluated: bool,
}

/// What the backend stage made of a component.
enum Backend {
    /// Its answer and, for `sat`, the solver's model (`None`: it could not be read).
    Answer(Answer, Option<Model>),
    /// Sat; its model, dear to read, was not asked for.
    SatUnread,
}

/// What a stage made of a component, when it answered it.
enum Step {
    /// The query is answered (or must be answered another way): stop here.
    Stop(Planned),
    /// The component is satisfied and its values are in the query's model.
    Next,
}

/// A component whose model was left unread (`Planned::SatUnread`): what storing its model
/// takes, should it be read after all.
struct UnreadComp {
    canon: CanonKey,
    xkey: Option<(Key, Vec<(usize, TermId)>)>,
    ids: Vec<u64>,
    sorted: Vec<TermId>,
}

/// The canonical key of a component and the order of its constants' values under it.
struct CanonKey {
    key: Key,
    order: Vec<(usize, TermId)>,
    /// The canonical form is `false` (its rewriting decided the component).
    decided_unsat: bool,
}

/// The result of a cache-planned check.
pub enum Planned {
    /// Answered with a model smtproxy validated itself.
    Own(Answer, Option<Model>),
    /// Sat, by the backend's answer on the query's one component, whose model was left
    /// unread (`ModelCost`): the miss path's last solve, so its backend holds the query's
    /// model.
    SatUnread {
        /// The component's free constants: what that model gives values of.
        leaves: Vec<TermId>,
        /// The client's assertions and assumptions, what a model read must satisfy.
        query: Vec<TermId>,
    },
    /// Not handled here (query outside the modelled fragment): plan it otherwise.
    NotModelled,
}

impl CachePlanner {
    pub fn new(cfg: Option<&CacheConfig>, local: bool) -> Self {
        let cfg = cfg.cloned().unwrap_or(CacheConfig {
            mem_entries: 100_000,
            mem_bytes: crate::cache::tiered::MEM_BYTES,
            disk: None,
            redis: None,
            ..CacheConfig::default()
        });
        CachePlanner {
            store_tiers: Some(TieredCache::new(&cfg)),
            local,
            unsat_sets: SetIndex::new(CEX_MAX_SETS),
            cores: CoreTrial::default(),
            sat_sets: SetIndex::new(CEX_MAX_SETS),
            digests: FxHashMap::default(),
            models: Vec::new(),
            recent: VecDeque::new(),
            model_tries: ModelTries::default(),
            ahead: AheadRate::default(),
            enumerations: Gate::default(),
            bounds: Gate::default(),
            guesses: Gate::default(),
            searches: Gate::default(),
            block_reads: Gate::default(),
            backend_cost: BackendCost::default(),
            warmed: false,
            model_cost: ModelCost::default(),
            exact: FxHashMap::default(),
            whole: FxHashMap::default(),
            warned: false,
            slice_memo: SliceMemo::default(),
            hints: BlockHints::default(),
            block_text: None,
            unread: None,
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

    /// The term store is being replaced: `forget_session`, and the conjunct digests too
    /// (everything here keyed by a term id). The result store stays: its keys are hashes of
    /// text and its models are text.
    pub fn forget_terms(&mut self) {
        self.forget_session();
        self.unsat_sets = SetIndex::new(CEX_MAX_SETS);
        self.sat_sets = SetIndex::new(CEX_MAX_SETS);
        self.digests = FxHashMap::default();
        self.exact = FxHashMap::default();
        self.whole = FxHashMap::default();
        self.models = Vec::new();
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
        if self.digests.len() + conj.len() > DIGESTS_MAX {
            self.digests = FxHashMap::default();
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

    /// `put` into the memory tier alone (an entry that pays within this run only).
    fn put_memory(&mut self, k: &Key, verdict: Verdict, model: Option<String>) {
        if let Some(t) = self.store_tiers.as_mut() {
            t.put_memory(k, &Entry { verdict, model });
        }
    }

    /// The exact key of a result just stored under its canonical key: the store keeps it
    /// as a twin, valued by the hits twins get in that store (not evicted before the
    /// canonical entry: where repeats come under the client's names the exact key takes
    /// the hits, where they come renamed the canonical one does; see `cache::disk`).
    fn put_twin(&mut self, k: &Key, verdict: Verdict, model: Option<String>) {
        if let Some(t) = self.store_tiers.as_mut() {
            t.put_twin(k, &Entry { verdict, model });
        }
    }

    pub fn flush(&mut self) {
        if let Some(t) = self.store_tiers.as_mut() {
            t.flush();
        }
    }

    /// Close the result store's tiers (at the session's end): their writes are done, and
    /// nothing is looked up or stored after.
    pub fn close_store(&mut self) {
        self.store_tiers = None;
    }

    /// Counters of the result store (None without one).
    pub fn tier_stats(&self) -> Option<&crate::cache::CacheStats> {
        self.store_tiers.as_ref().map(|t| t.stats())
    }

    fn warn_tiers(&mut self, stats: &mut Stats) {
        if let Some(t) = self.store_tiers.as_mut() {
            for w in t.warnings() {
                stats.note(w.clone());
            }
        }
        self.warned = true;
    }

    /// The last check-sat's model as a block's text (`hints`), when there is one.
    pub fn block_text(&self) -> Option<&BlockText> {
        self.block_text.as_ref()
    }

    /// The last model is no longer the cache stage's (see `block_text`).
    pub fn forget_hint(&mut self) {
        self.block_text = None;
    }

    /// Answer `q` from what is known, solving what is not through `miss`: `Planned::Own`
    /// with a model evaluated on the whole query for `sat`, `SatUnread`, or `NotModelled`
    /// when the query must be answered another way (outside the modelled fragment, or no
    /// usable model). `read_models`: read the model of every sat component the backend
    /// solves, dear or not (the query's model is needed).
    pub fn check<M: MissPath>(
        &mut self,
        miss: &mut M,
        store: &mut TermStore,
        q: &Query,
        read_models: bool,
        stats: &mut Stats,
    ) -> Result<Planned, DriverError> {
        // The very same query (assertions and assumptions, as terms) answered before in
        // this session (a KLEE log repeats many): no slicing, no per-component work. A
        // model is evaluated on the query again all the same.
        self.block_text = None;
        self.unread = None;
        // A query that cannot be sliced as plain constants is planned another way
        // (`plan` finds that after splitting and sorting the whole query; nothing of such
        // a query is kept, so neither memo below can hold it): an assertion that is one
        // conjunct as it stands (normalised, not an `and`) may say so at once.
        let unsliced = q.assertions.iter().chain(q.assumptions).any(|&t| {
            let c = normalise_top(store, t);
            let one = match store.op(c) {
                Op::And | Op::True | Op::False => false,
                Op::Not => store.op(store.args(c)[0]) != Op::Or,
                _ => true,
            };
            one && blocks_slicing(store, c, &mut self.slice_memo)
        });
        if unsliced {
            return Ok(Planned::NotModelled);
        }
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
            // The same block of commands under other names: its model, evaluated here.
            if let Some(key) = &q.block {
                let tiers = &mut self.store_tiers;
                let reads = &mut self.block_reads;
                // Asked while it finds something (the `Gate`: the first 16, then while 1 in
                // 8 finds; else 1 in 16, so that a store another process fills is noticed).
                let from_store = || {
                    reads.timed(None, || {
                        let e = tiers.as_mut()?.get(&Key(*key))?;
                        // A block's entry is only ever a sat with its model.
                        (e.verdict == Verdict::Sat).then_some(e.model).flatten()
                    })
                };
                if let Some((m, text)) = self.hints.find(store, key, q.decls, &whole, from_store) {
                    stats.model_hits += 1;
                    stats.block_hints += 1;
                    self.block_text = Some(BlockText::Checked(text));
                    return Ok(Planned::Own(Answer::Sat, Some(m)));
                }
            }
        }
        let mut ahead = None;
        let r = self.plan(miss, store, q, read_models, stats, &mut ahead);
        if let Some((_, f)) = ahead {
            miss.drop_ahead(f);
        }
        if let (Ok(Planned::Own(Answer::Sat, Some(m))), Some(key)) = (&r, q.block) {
            if let Some((text, stored)) = self.hints.keep(store, key, q.decls, m) {
                if stored {
                    self.put(&Key(key), Verdict::Sat, Some(text.clone()));
                }
                self.block_text = Some(BlockText::Made(text.into()));
            }
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

    /// `check` past the whole-query memo: slice, then take each component through the
    /// stages in turn until one answers it. `ahead` holds the component (index) whose solve
    /// was started ahead, if any.
    fn plan<M: MissPath>(
        &mut self,
        miss: &mut M,
        store: &mut TermStore,
        q: &Query,
        read_models: bool,
        stats: &mut Stats,
        ahead: &mut Option<(usize, M::Ahead)>,
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
        // A query of one component: its models are evaluated on the client's assertions
        // themselves (`all`, equivalent to the component's conjuncts), and the final check
        // is then made once that evaluation holds (`Tally::evaluated`).
        let single = comps.len() == 1;
        let mut t = Tally::default();
        for (index, comp) in comps.into_iter().enumerate() {
            let mut c = Comp {
                index,
                conj: &comp.conjuncts,
                check: if single { &all } else { &comp.conjuncts },
                sorted: {
                    let mut s = comp.conjuncts.clone();
                    s.sort_unstable();
                    s
                },
                ids: Self::conjunct_ids(&comp.conjuncts),
                leaves: Vec::new(),
                xkey: None,
                small: None,
            };
            if let Some(step) = self.memo_stage(store, &c, &mut t, stats) {
                match step {
                    Step::Stop(p) => return Ok(p),
                    Step::Next => continue,
                }
            }
            if let Some(p) = self.counterexample_stage(&c, &t, stats) {
                return Ok(p);
            }
            c.leaves = free_symbols_with(store, c.conj, &mut self.slice_memo);
            self.ahead.got_past_memo();
            // The component as the client wrote it, in the memory tier: a hash of its
            // conjuncts' digests and a lookup, cheaper than trying models (which fail on
            // every unsat component) or starting the backend.
            c.xkey = self.exact_key_of(store, c.conj, &c.leaves, logic);
            let mut stored = self.exact_key_stage(store, &c, Tiers::Memory);
            if matches!(stored, Stored::Useless) {
                self.solve_ahead(miss, store, q, &mut c, ahead, stats);
                if self.model_stage(store, &c, &mut t) {
                    continue;
                }
                // Then under the exact key in every tier, then the canonical form. The
                // exact key costs a lookup per conjunct; the canonical form walks the whole
                // component, and finds it under other names too.
                stored = self.exact_key_stage(store, &c, Tiers::All);
            }
            stats.exact_hits += u64::from(!matches!(stored, Stored::Useless));
            let canon = match stored {
                Stored::Useless => {
                    let (canon, s) = self.canonical_key_stage(store, &c, logic);
                    stored = s;
                    Some(canon)
                }
                _ => None,
            };
            match stored {
                Stored::Unsat => return Ok(self.refuted(&c, &t, stats)),
                Stored::Sat(m) => {
                    // `stored` evaluated `m` on `check`.
                    t.evaluated = true;
                    self.satisfied(store, &c, m, &mut t);
                    continue;
                }
                Stored::Useless => {}
            }
            let Some(canon) = canon else {
                // Cannot happen (nothing usable under the exact key leads to the canonical
                // form); were it to, the query is planned another way.
                return Ok(Planned::NotModelled);
            };
            if canon.decided_unsat {
                // The canonical form (an equivalence) decided the component.
                return Ok(self.refuted(&c, &t, stats));
            }
            let (a, m) = match self.local_stage(store, &mut c, stats) {
                Some(found) => {
                    t.any_local = true;
                    found
                }
                None => {
                    t.any_solver = true;
                    let t0 = Instant::now();
                    let r = self.backend_stage(miss, store, q, &c, ahead, read_models, stats)?;
                    self.backend_cost.note(t0.elapsed());
                    match r {
                        Backend::Answer(a, m) => (a, m),
                        Backend::SatUnread => {
                            // Nothing to store or combine; a later component may still
                            // refute the query.
                            t.unread = Some(c.leaves.clone());
                            stats.models_unread += 1;
                            self.unread = single.then(|| UnreadComp {
                                canon,
                                xkey: c.xkey.clone(),
                                ids: c.ids.clone(),
                                sorted: c.sorted.clone(),
                            });
                            continue;
                        }
                    }
                }
            };
            match self.solved(store, &c, &canon, a, m, &mut t, stats) {
                Step::Stop(p) => return Ok(p),
                Step::Next => {}
            }
        }
        if !self.warned {
            self.warn_tiers(stats);
        }
        if let Some(leaves) = t.unread {
            // Every component is sat, one at least by the solver's word alone. With one
            // component that word is on the client's whole query; with several, the query
            // is solved whole, its model held by the backend.
            return Ok(if single {
                Planned::SatUnread { leaves, query: all }
            } else {
                Planned::NotModelled
            });
        }
        // The whole query, under the union of the component models. With one component
        // whose model was evaluated to true on `all` above, `model` is that model (merged
        // into an empty one) and this check was that evaluation. A model from the session's
        // memo or one restricted from another query's is evaluated here.
        if (single && t.evaluated) || satisfies(store, &t.model, &all) {
            if !t.any_solver && !t.any_local {
                if t.used_model {
                    stats.model_hits += 1;
                } else {
                    stats.cache_hits += 1;
                }
            }
            return Ok(Planned::Own(Answer::Sat, Some(t.model)));
        }
        stats.note(
            "combined component models did not satisfy the query; answering from the backend"
                .into(),
        );
        Ok(Planned::NotModelled)
    }

    /// Stage 1, the session memo: the same conjunct set answered before in this session.
    fn memo_stage(
        &mut self,
        store: &TermStore,
        c: &Comp,
        t: &mut Tally,
        stats: &mut Stats,
    ) -> Option<Step> {
        match self.exact.get(&c.sorted)? {
            Known::Unsat => {
                stats.cache_hits += u64::from(!t.any_solver);
                Some(Step::Stop(Planned::Own(Answer::Unsat, None)))
            }
            Known::Sat(i) => {
                let m = self.models.get(*i as usize)?;
                merge(store, &mut t.model, m, c.conj);
                Some(Step::Next)
            }
        }
    }

    /// Stage 2, counterexample reasoning: a refuted subset of the component's conjuncts
    /// (a set the backend refuted, or a solver's unsat core) proves it unsat.
    fn counterexample_stage(&mut self, c: &Comp, t: &Tally, stats: &mut Stats) -> Option<Planned> {
        let &from_core = self.unsat_sets.find_subset(&c.ids)?;
        self.cores.hits += u64::from(from_core);
        stats.cache_hits += u64::from(!t.any_solver);
        self.learn(c.sorted.clone(), Known::Unsat);
        Some(Planned::Own(Answer::Unsat, None))
    }

    /// Hybrid: while models are tried and the component is canonicalised and looked up,
    /// the backend already solves it on the other core, when most components that get
    /// this far end up there anyway (and it is not one of a few bits, decided locally).
    fn solve_ahead<M: MissPath>(
        &mut self,
        miss: &mut M,
        store: &mut TermStore,
        q: &Query,
        c: &mut Comp,
        ahead: &mut Option<(usize, M::Ahead)>,
        stats: &mut Stats,
    ) {
        let begin = ahead.is_none() && self.ahead.pays();
        if (self.warmed && !begin)
            || !self.local
            || c.small(store).is_some_and(Small::is_exhaustive)
        {
            return;
        }
        // The component's query is built only where it is used: for the first component
        // (to warm the miss path) and for a solve begun ahead.
        let decls = component_decls(store, q, &c.leaves);
        let cq = component_query(q, c.conj, &decls);
        if !self.warmed {
            self.warmed = true;
            miss.first_component(&cq);
        }
        if !begin {
            return;
        }
        if let Some(f) = miss.begin(store, &cq, stats) {
            stats.speculations += 1;
            *ahead = Some((c.index, f));
        }
    }

    /// Stage 3, models: a model of a stored superset, or a recent model, that satisfies the
    /// component (cheaper than canonicalising). Kept under the exact key in the memory
    /// tier (cheap: no canonical form), so that later in the run it is found where the
    /// recent models have moved on. Not written to disk or Redis: such entries were three
    /// quarters of what a fresh-name session wrote there, and a later run (or another log
    /// of the same program) meets them through its own models first; without them those
    /// runs made the same solver checks. True when it answered the component.
    fn model_stage(&mut self, store: &mut TermStore, c: &Comp, t: &mut Tally) -> bool {
        let found = self.find_model(store, &c.ids, c.conj);
        self.model_tries.note(found.is_some());
        let Some(m) = found else { return false };
        t.used_model = true;
        if let Some((xk, xorder)) = &c.xkey {
            let text = encode_model(store, &m, xorder);
            self.put_memory(xk, Verdict::Sat, text);
        }
        self.satisfied(store, c, m, t);
        true
    }

    /// Stage 4, the exact key: the component as the client wrote it, in `tiers`.
    fn exact_key_stage(&mut self, store: &mut TermStore, c: &Comp, tiers: Tiers) -> Stored {
        match &c.xkey {
            Some((xk, xorder)) => self.stored(store, xk, xorder, c.check, tiers),
            None => Stored::Useless,
        }
    }

    /// Stage 5, the canonical key: the component's canonical form (names do not matter)
    /// in every tier. What it finds goes under the exact key as well.
    fn canonical_key_stage(
        &mut self,
        store: &mut TermStore,
        c: &Comp,
        logic: &str,
    ) -> (CanonKey, Stored) {
        let canon = canonicalize(store, c.conj);
        let k = Key(key(&canon.text, logic, &[]));
        let mut order: Vec<(usize, TermId)> = canon
            .renaming
            .iter()
            .map(|&(client, can)| (canon_index(store, can), client))
            .collect();
        order.sort_unstable();
        let stored = self.stored(store, &k, &order, c.check, Tiers::All);
        if let Some((xk, xorder)) = &c.xkey {
            match &stored {
                Stored::Unsat => self.put_twin(xk, Verdict::Unsat, None),
                Stored::Sat(m) => {
                    let text = encode_model(store, m, xorder);
                    self.put_twin(xk, Verdict::Sat, text);
                }
                Stored::Useless => {}
            }
        }
        let canon = CanonKey {
            key: k,
            order,
            decided_unsat: canon.conjuncts == [TermStore::FALSE],
        };
        (canon, stored)
    }

    /// Stage 6, a local decision (hybrid only): every assignment of a few bits, or a guess,
    /// or a local search, each where it has been deciding components for less than the
    /// backend takes (`Gate`). `cache` keeps the design it measures (each miss solved in a
    /// fresh context).
    fn local_stage(
        &mut self,
        store: &mut TermStore,
        c: &mut Comp,
        stats: &mut Stats,
    ) -> Option<(Answer, Option<Model>)> {
        if !self.local {
            return None;
        }
        c.small(store);
        let small = c.small.as_ref().and_then(Option::as_ref);
        let backend = self.backend_cost.median();
        let (recent, models) = (&self.recent, &self.models);
        let base = |leaf| recent_value(recent, models, leaf);
        let decided = match small {
            Some(s) if s.is_exhaustive() => {
                let d = self
                    .enumerations
                    .timed(backend, || s.decide(store, c.conj, &base))?;
                stats.enumerated += 1;
                d
            }
            _ => {
                // The words' bounds first: one pass, and the only way here to refute.
                if let Some(d) = self
                    .bounds
                    .timed(backend, || by_bounds(store, c.conj, &base))
                {
                    stats.bounded += 1;
                    d
                } else {
                    let s = small?;
                    let d = self
                        .guesses
                        .timed(backend, || s.decide(store, c.conj, &base))
                        .or_else(|| {
                            self.searches
                                .timed(backend, || s.search(store, c.conj, &base))
                        })?;
                    stats.guessed += 1;
                    d
                }
            }
        };
        Some(match decided {
            Decided::Unsat => (Answer::Unsat, None),
            Decided::Sat(m) => (Answer::Sat, Some(m)),
        })
    }

    /// Stage 7, the backend (the miss path): the component's answer and, for `sat`, the
    /// solver's model of it, unless reading it costs several solves (`ModelCost`) and
    /// `read_models` is false.
    #[allow(clippy::too_many_arguments)]
    fn backend_stage<M: MissPath>(
        &mut self,
        miss: &mut M,
        store: &mut TermStore,
        client_q: &Query,
        c: &Comp,
        ahead: &mut Option<(usize, M::Ahead)>,
        read_models: bool,
        stats: &mut Stats,
    ) -> Result<Backend, DriverError> {
        self.ahead.sent_to_backend();
        let mine = match ahead.take() {
            Some((i, f)) if i == c.index => {
                stats.speculations_used += 1;
                Some(f)
            }
            Some((_, f)) => {
                miss.drop_ahead(f);
                None
            }
            None => None,
        };
        let decls = component_decls(store, client_q, &c.leaves);
        let q = component_query(client_q, c.conj, &decls);
        let t0 = Instant::now();
        let a = miss.solve(store, &q, mine, stats)?;
        let solve_took = t0.elapsed();
        if a == Answer::Unsat {
            // A core smaller than the component refutes every later component that
            // contains it (counterexample reasoning, with the solver's core rather than the
            // whole set).
            if let Some(core) = miss.unsat_core() {
                if core.len() < c.conj.len() {
                    stats.cores += 1;
                    self.cores.learned += 1;
                    self.unsat_sets.insert(&Self::conjunct_ids(&core), true);
                    if self.cores.failed() {
                        miss.stop_cores();
                        stats.note(format!(
                            "unsat cores stopped: {} learned, {} later refutations",
                            self.cores.learned, self.cores.hits
                        ));
                    }
                }
            }
        }
        if a != Answer::Sat {
            return Ok(Backend::Answer(a, None));
        }
        if c.leaves.is_empty() {
            return Ok(Backend::Answer(a, Some(Model::new())));
        }
        self.model_cost.solved(solve_took);
        if !read_models && !self.model_cost.worth_reading() {
            return Ok(Backend::SatUnread);
        }
        let t0 = Instant::now();
        let m = self.backend_model(miss, store, c, stats);
        self.model_cost.read(t0.elapsed());
        Ok(Backend::Answer(a, m))
    }

    /// The solver's model of a component it found sat: each leaf's value, except that an
    /// array the component only reads is asked for those cells, a symbolic index with its
    /// cell, and none the component fixes itself (see `cells`; z3 5.4 takes ~5 ms to print
    /// a KLEE array's whole model; the cells are all the component can see, and every model
    /// is evaluated before it is served anyway). One more cell, at an index the component
    /// does not read, gives the array's value everywhere else in the solver's model (its
    /// default): models that keep the solver's default are reused far more often (a regexp
    /// log: 135 model hits with it, 83 with the element sort's default).
    /// `None` when the model cannot be read (the query is then planned otherwise).
    fn backend_model<M: MissPath>(
        &mut self,
        miss: &mut M,
        store: &mut TermStore,
        c: &Comp,
        stats: &mut Stats,
    ) -> Option<Model> {
        let cells = cell_reads(store, c.conj, &c.leaves);
        let fixed = if cells.is_empty() {
            FxHashMap::default()
        } else {
            fixed_cells(store, c.conj)
        };
        let probe = self.model_tries.probe_defaults();
        let mut probes: FxHashMap<TermId, TermId> = FxHashMap::default();
        let mut asked: Vec<TermId> = Vec::with_capacity(c.leaves.len());
        for &l in &c.leaves {
            match cells.get(&l) {
                Some(sel) => {
                    asked.extend(cell_terms(store, sel, &fixed));
                    if let Some(p) = probe.then(|| unread_cell(store, l, sel)).flatten() {
                        probes.insert(l, p);
                        asked.push(p);
                    }
                }
                None => asked.push(l),
            }
        }
        // Each term once (a leaf can also be a cell's index, an index can serve two cells).
        let mut once = FxHashSet::default();
        asked.retain(|&t| once.insert(t));
        // Asked of the process that answered; if it died since, the model is simply not
        // available here and the query is planned otherwise (the backend is restarted).
        // Nothing to ask where the component fixes every cell it reads.
        let values = if asked.is_empty() {
            Vec::new()
        } else {
            match miss.values(store, &asked) {
                Ok(v) => v?,
                Err(e) => {
                    stats.note(format!(
                        "the solver died before it gave its model ({e}); solving again"
                    ));
                    return None;
                }
            }
        };
        let empty = Signature::default();
        let mut got: FxHashMap<TermId, Value> = fixed;
        for (&t, v) in asked.iter().zip(values) {
            let vt = parse_term(store, &empty, &v).ok()?;
            got.insert(t, Value::from_term(store, vt)?);
        }
        let mut m = Model::new();
        for &l in &c.leaves {
            let val = match cells.get(&l) {
                Some(sel) => {
                    let default = probes.get(&l).and_then(|p| got.get(p)).cloned();
                    array_of_cells(store, l, sel, default, &got)?
                }
                // (Not taken out: a leaf can be a symbolic index of a cell as well.)
                None => got.get(&l)?.clone(),
            };
            m.set(l, val);
        }
        Some(m)
    }

    /// What a local decision or the backend found, kept: an unsat under the component's
    /// set and keys (the query is unsat), a sat's model evaluated and stored under both
    /// keys. `unknown` is never stored.
    #[allow(clippy::too_many_arguments)]
    fn solved(
        &mut self,
        store: &mut TermStore,
        c: &Comp,
        canon: &CanonKey,
        a: Answer,
        m: Option<Model>,
        t: &mut Tally,
        stats: &mut Stats,
    ) -> Step {
        match a {
            Answer::Unsat => {
                self.unsat_sets.insert(&c.ids, false);
                self.learn(c.sorted.clone(), Known::Unsat);
                self.put(&canon.key, Verdict::Unsat, None);
                if let Some((xk, _)) = &c.xkey {
                    self.put_twin(xk, Verdict::Unsat, None);
                }
                Step::Stop(Planned::Own(Answer::Unsat, None))
            }
            Answer::Unknown => Step::Stop(Planned::Own(Answer::Unknown, None)),
            Answer::Sat => {
                let Some(m) = m else {
                    // No usable model: the answer must come from a backend with the model.
                    return Step::Stop(Planned::NotModelled);
                };
                if !satisfies(store, &m, c.check) {
                    stats.note(
                        "a backend model did not evaluate to true; answering from the backend"
                            .into(),
                    );
                    return Step::Stop(Planned::NotModelled);
                }
                t.evaluated = true;
                self.put_model(store, canon, &c.xkey, &m);
                self.satisfied(store, c, m, t);
                Step::Next
            }
        }
    }

    /// The model of the last query, answered `Planned::SatUnread`, read after all and
    /// found (by the caller) to satisfy it: stored and remembered as a backend's model of
    /// its component is. Nothing for any other query.
    pub fn model_read(&mut self, store: &mut TermStore, m: &Model) {
        let Some(u) = self.unread.take() else { return };
        self.put_model(store, &u.canon, &u.xkey, m);
        self.known_sat(&u.ids, u.sorted, m.clone());
    }

    /// A backend's model of a component, checked: stored under its canonical key and,
    /// beside it, its exact key.
    fn put_model(
        &mut self,
        store: &mut TermStore,
        canon: &CanonKey,
        xkey: &Option<(Key, Vec<(usize, TermId)>)>,
        m: &Model,
    ) {
        if let Some(text) = encode_model(store, m, &canon.order) {
            self.put(&canon.key, Verdict::Sat, Some(text));
        }
        if let Some((xk, xorder)) = xkey {
            if let Some(text) = encode_model(store, m, xorder) {
                self.put_twin(xk, Verdict::Sat, Some(text));
            }
        }
    }

    /// A component refuted by what the store, the canonical form or the index knew: the
    /// query is unsat.
    fn refuted(&mut self, c: &Comp, t: &Tally, stats: &mut Stats) -> Planned {
        stats.cache_hits += u64::from(!t.any_solver);
        self.unsat_sets.insert(&c.ids, false);
        self.learn(c.sorted.clone(), Known::Unsat);
        Planned::Own(Answer::Unsat, None)
    }

    /// A component satisfied by `m`: into the query's model, and remembered for later
    /// queries (session memo, recent models, the superset index).
    fn satisfied(&mut self, store: &TermStore, c: &Comp, m: Model, t: &mut Tally) {
        merge(store, &mut t.model, &m, c.conj);
        self.known_sat(&c.ids, c.sorted.clone(), m);
    }

    /// A component (its conjuncts' ids and its sorted conjuncts) known sat under `m`: the
    /// model kept for reuse, the component remembered by it.
    fn known_sat(&mut self, ids: &[u64], sorted: Vec<TermId>, m: Model) {
        let i = self.remember(ids, m);
        self.learn(sorted, Known::Sat(i));
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
            .chain(self.recent.iter().take(self.model_tries.budget()).copied());
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
        base_text: client_q.base_text,
        assumptions: &[],
        decls,
        defs: &[],
        preamble: client_q.preamble,
        logic: client_q.logic,
        sig: client_q.sig,
        block: None,
    }
}

/// A recent model's value of `leaf` (of the four newest models in `recent`, indexes into
/// `models`), where a local decision starts.
fn recent_value<'m>(
    recent: &VecDeque<u32>,
    models: &'m [Model],
    leaf: TermId,
) -> Option<&'m Value> {
    recent
        .iter()
        .take(4)
        .find_map(|&i| models.get(i as usize)?.get(leaf))
}
