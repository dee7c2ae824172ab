//! Core learning: unsat cores from the stack backend (hybrid on z3, array logics), so that
//! a refuted set of conjuncts is learnt beyond the query that refuted it.
//!
//! Invariants:
//! * Cores are asked for only under logics where they pay ([`cores_pay_in`]), and the
//!   assertions of a query are named `sp!u<k>` only when it has at most
//!   [`CORE_MAX_CONJUNCTS`] conjuncts (naming costs z3 time on every assertion).
//! * A name `sp!u<k>` stands for one conjunct in one backend generation and is never
//!   reused (`:global-declarations` keeps names defined); [`Cores::conjuncts`] maps a
//!   `(get-unsat-core)` answer back only when every name in it is one of this
//!   generation's, so a core is never made of someone else's names. The mirror asks for a
//!   core only when every assertion in the backend is named, so the core's conjuncts are
//!   unsatisfiable by themselves (declarations and macros are definitions).
//! * Nothing is named once the backend's base (never popped) holds an unnamed conjunct:
//!   no core can be asked for in that backend again. A base that held named conjuncts
//!   when that happened turns cores off, and the backend is rebuilt without them (named
//!   conjuncts cost z3 time on every later check: a bounded model checker's session that
//!   asserts each step at the base ran 2x slower in z3) once the incremental solves
//!   since have cost what its process's first query did, about what a rebuild costs.
//! * A solve slower than [`cores_slow_ms`] turns cores off for the session
//!   ([`Cores::off`]; the backend is rebuilt without them): core tracking costs z3 its
//!   preprocessing on hard queries.

use crate::term::TermId;
use rustc_hash::FxHashMap;

/// Queries of at most this many conjuncts have their assertions named for cores.
pub(super) const CORE_MAX_CONJUNCTS: usize = 16;
/// An incremental solve slower than this turns unsat cores off (see `Cores::off`).
const CORES_SLOW_MS: f64 = 50.0;

/// `CORES_SLOW_MS`, or `SMTPROXY_CORES_SLOW_MS` when set: tests that show what cores do
/// set it high, so that a loaded machine's slow solve does not turn them off.
pub(super) fn cores_slow_ms() -> f64 {
    static MS: std::sync::OnceLock<f64> = std::sync::OnceLock::new();
    *MS.get_or_init(|| {
        std::env::var("SMTPROXY_CORES_SLOW_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(CORES_SLOW_MS)
    })
}

/// Whether cores are wanted and on, and the names given to conjuncts.
#[derive(Default)]
pub(super) struct Cores {
    /// Wanted for this session (see `StackMirror::with_cores`).
    pub(super) wanted: bool,
    /// On in the current generation (`:produce-unsat-cores` in its preamble).
    pub(super) on: bool,
    /// `names[k]` is the conjunct named `sp!u<k>` in this generation.
    names: FxHashMap<u64, TermId>,
    counter: u64,
}

impl Cores {
    /// A new backend generation: on if wanted under `logic`. Returns whether it is on.
    pub(super) fn start(&mut self, logic: Option<&str>) -> bool {
        self.on = self.wanted && cores_pay_in(logic);
        self.on
    }

    /// The backend is gone: its names with it.
    pub(super) fn clear(&mut self) {
        self.names.clear();
        self.on = false;
    }

    /// How many names this generation has given.
    pub(super) fn len(&self) -> usize {
        self.names.len()
    }

    /// A fresh name for the conjunct `c`: its `k` in `sp!u<k>`.
    pub(super) fn name(&mut self, c: TermId) -> u64 {
        let k = self.counter;
        self.counter += 1;
        self.names.insert(k, c);
        k
    }

    /// No more cores this session, without a rebuild: nothing more is named (the option
    /// stays on in this backend, which costs nothing by itself).
    pub(super) fn stop(&mut self) {
        self.wanted = false;
        self.on = false;
    }

    /// No more cores this session; true when the backend has them on and is to be rebuilt
    /// without.
    pub(super) fn off(&mut self) -> bool {
        if self.wanted {
            self.wanted = false;
            return self.on;
        }
        false
    }

    /// The conjuncts of a `(get-unsat-core)` answer (see `core_conjuncts`).
    pub(super) fn conjuncts(&self, text: &str) -> Option<Vec<TermId>> {
        core_conjuncts(text, &self.names)
    }
}

/// Whether unsat cores are worth asking for under this logic: with arrays (KLEE's path
/// conditions over input bytes, where refuted branch conditions recur with small cores;
/// sort/all: 52 solver checks without them, 43 with), or no logic said. Not for pure
/// bit-vector or arithmetic logics: hard QF_BV queries lose z3's preprocessing to core
/// tracking (domain.smt2: 13 s of CPU without cores, 28 s with).
fn cores_pay_in(logic: Option<&str>) -> bool {
    match logic {
        None => true,
        Some(l) => l.starts_with("QF_A") || l == "ALL",
    }
}

/// The conjuncts named in a `(get-unsat-core)` answer, `(sp!u3 sp!u7)`: None unless it is
/// a list of `sp!u<k>` names all in `names` (deduplicated, in the answer's order).
fn core_conjuncts(text: &str, names: &FxHashMap<u64, TermId>) -> Option<Vec<TermId>> {
    let inner = text.trim().strip_prefix('(')?.strip_suffix(')')?;
    let mut out: Vec<TermId> = Vec::new();
    for tok in inner.split_ascii_whitespace() {
        let k: u64 = tok.strip_prefix("sp!u")?.parse().ok()?;
        let c = *names.get(&k)?;
        if !out.contains(&c) {
            out.push(c);
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_answers_map_to_named_conjuncts_only() {
        let names: FxHashMap<u64, TermId> = [(3, TermId(30)), (7, TermId(70)), (9, TermId(70))]
            .into_iter()
            .collect();
        assert_eq!(
            core_conjuncts("(sp!u3 sp!u7)", &names),
            Some(vec![TermId(30), TermId(70)])
        );
        // Two names of one conjunct (asserted twice): once.
        assert_eq!(
            core_conjuncts(" (sp!u7\n sp!u9 sp!u3) ", &names),
            Some(vec![TermId(70), TermId(30)])
        );
        assert_eq!(core_conjuncts("()", &names), Some(vec![]));
        // A name of another generation, a client's name, a term, not a list: nothing.
        assert_eq!(core_conjuncts("(sp!u3 sp!u4)", &names), None);
        assert_eq!(core_conjuncts("(sp!u3 a1)", &names), None);
        assert_eq!(core_conjuncts("(sp!u3 (not x))", &names), None);
        assert_eq!(core_conjuncts("(sp!ux)", &names), None);
        assert_eq!(core_conjuncts("unsupported", &names), None);
        assert_eq!(
            core_conjuncts("(error \"unsat core is not available\")", &names),
            None
        );
    }

    #[test]
    fn cores_only_under_array_logics() {
        for l in ["QF_ABV", "QF_AUFBV", "QF_AX", "QF_ALIA", "ALL"] {
            assert!(cores_pay_in(Some(l)), "{l}");
        }
        assert!(cores_pay_in(None));
        for l in ["QF_BV", "QF_LIA", "QF_UFBV", "QF_S", "LIA"] {
            assert!(!cores_pay_in(Some(l)), "{l}");
        }
    }
}
