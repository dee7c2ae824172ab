//! When the session's term store is collected, and what a collection must reach.
//!
//! The term store (`term::TermStore`) never forgets a node, and the session's memos are
//! keyed by its ids, so a session of hours grows without bound although a `(reset)` makes
//! nearly all of it unreachable. smtproxy collects by generations: at a `(reset)`, once the
//! store holds at least [`Arena::collect_at`] nodes, the engine drops the store and every
//! table that holds one of its ids (`TermId`, `Sym`, `SortId`, `LitId`) and starts a fresh
//! store (`Engine::collect_terms`).
//!
//! Why a fresh store rather than copying the live terms into a new one and renaming ids in
//! every holder: right after a `(reset)` the client's view holds no term at all (its
//! declarations, definitions, assertions and named terms are gone; only option texts stay),
//! so nothing the client can still name is lost. What else holds ids is memos (the parse
//! memo, the slicing memo, the conjunct digests, the session memos of queries and
//! components, the counterexample indexes, the recent models) and the stack backend's
//! mirror; each of them is an optimisation that refills from the next queries, and under a
//! tool that names every query's terms afresh (Manticore's `a_N`) none of them would hit
//! again anyway. Renaming would have to visit each of those tables and the incremental
//! backend's scopes for results that are seldom used; dropping them is one assignment each
//! and cannot leave a stale id behind. What outlives a collection is keyed by text or
//! hashes of text: the result-store tiers (blake3 keys over canonical text, models stored as
//! text), the options, the parse memo's successor (refilled) and the statistics. So a query
//! after a collection gets the same answer as before, and a stored result is still found.
//!
//! The stack backend's scopes and `:global-declarations` macros are named by term ids, so a
//! collection abandons that backend (it is restarted at the next query that needs it, a
//! cost of one process start and one re-push of the next query's conjuncts). The other
//! backends hold no ids between queries: a fresh context is rebuilt from text each time,
//! and passthrough holds only the client's texts.
//!
//! Why not also at a `(pop)` back to level 0: there the client's level-0 declarations,
//! definitions and assertions still hold ids (KLEE and Manticore declare at level 0 and push
//! above it, or use `(reset)`), so a fresh store would first need every live term copied
//! and its ids renamed in the client's view and the mirror, which this design avoids. The
//! one case as safe as a `(reset)`, a pop to level 0 where no level holds a term (the
//! engine's `client_has_terms` false, no `:global-declarations` kept), would be a check in
//! the engine's two `Pop` arms (`session/mod.rs`) calling `Engine::collect_terms` when
//! [`Arena::due`]. It is not done: the engine is edited elsewhere, and the sessions of
//! KLEE and Manticore never reach that state (they keep their level-0 declarations).
//!
//! Invariants:
//! * Ids of two generations never meet: every holder of an id is either dropped by
//!   `Engine::collect_terms` or holds none between commands (the scratch tables of
//!   `term::visit` and the evaluator's memos are emptied when their walk ends; a command
//!   being parsed is finished before a reset is interpreted).
//! * A collection happens only at a `(reset)` (never in the middle of a query or of the
//!   client's scopes), and only when the store has grown past the bound: twice what was
//!   left after the last collection, and never under [`COLLECT_MIN_TERMS`], so its cost
//!   (refilled memos, one backend restart) is paid once per that many new nodes.

/// The store is not collected while it holds fewer nodes than this. What a node costs is
/// mostly outside the store: on a recorded Manticore session (fresh names at every reset)
/// the heap held about 550 bytes per node at 404k nodes (heaptrack: the parse memo a
/// quarter, the slicing memo, the store, the component models, the counterexample indexes,
/// the symbol table and the exact-key digests most of the rest), so this bound is what
/// keeps the session's peak near the solver's own. On a generated session of 19,000 resets
/// with fresh names (`scripts/gen-session.py --queries 19000`, where z3 alone peaks at
/// 48.6 MB), new store each time, two runs each: 2^15 nodes peaked at 75.0 MB in 11.7-11.9
/// s (21 collections), 2^16 at 100-109 MB in 10.3-10.4 s, 2^17 at 153 MB; z3 took 55 s.
/// A collection costs a restart of the stack backend and memos refilled, about 0.1 s each
/// there; a warm store's run is the same either way (1.8 s).
pub const COLLECT_MIN_TERMS: usize = 1 << 15;

/// The bound a new engine starts with: `COLLECT_MIN_TERMS`, or the environment's
/// `SMTPROXY_COLLECT_TERMS` (a number of nodes; 1 collects at every reset, which is how the
/// test suite is run against collections).
pub fn collect_floor() -> usize {
    std::env::var("SMTPROXY_COLLECT_TERMS")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(COLLECT_MIN_TERMS)
}

/// The collection policy's state and the figures `--stats` reports.
#[derive(Clone, Debug)]
pub struct Arena {
    /// Collect at the next `(reset)` once the store holds this many nodes.
    pub collect_at: usize,
    /// The least `collect_at` (`COLLECT_MIN_TERMS`; tests set it lower).
    pub floor: usize,
    /// The most nodes a store of this session has held.
    pub peak: usize,
    /// Collections so far.
    pub collections: u64,
}

impl Default for Arena {
    fn default() -> Self {
        Arena::with_floor(COLLECT_MIN_TERMS)
    }
}

impl Arena {
    pub fn with_floor(floor: usize) -> Arena {
        Arena {
            collect_at: floor,
            floor,
            peak: 0,
            collections: 0,
        }
    }

    /// Whether a store of `len` nodes is due for collection at this reset.
    pub fn due(&self, len: usize) -> bool {
        len >= self.collect_at
    }

    /// The store had `before` nodes, and `after` are left in the new one.
    pub fn collected(&mut self, before: usize, after: usize) {
        self.note(before);
        self.collections += 1;
        self.collect_at = (2 * after).max(self.floor);
    }

    /// A store of `len` nodes was seen (for the peak).
    pub fn note(&mut self, len: usize) {
        self.peak = self.peak.max(len);
    }
}

/// The process's peak resident set in MB (`VmHWM` of `/proc/self/status`), where the
/// system tells it (Linux).
pub fn peak_rss_mb() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bound_doubles_what_is_left_with_a_floor() {
        let mut a = Arena::with_floor(100);
        assert!(!a.due(99));
        assert!(a.due(100));
        a.collected(150, 2);
        assert_eq!((a.collect_at, a.peak, a.collections), (100, 150, 1));
        a.collected(400, 80);
        assert_eq!((a.collect_at, a.peak, a.collections), (160, 400, 2));
    }

    #[test]
    fn peak_rss_is_read_on_linux() {
        if cfg!(target_os = "linux") {
            let mb = peak_rss_mb().expect("VmHWM in /proc/self/status");
            assert!(mb > 0.0 && mb < 1e6, "{mb}");
        }
    }
}
