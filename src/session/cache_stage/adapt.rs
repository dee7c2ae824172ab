//! What the cache stage learns, as a session goes, about which of its ways pay: trying
//! recent models, asking for arrays' defaults, solving ahead of need, learning unsat cores,
//! guessing and searching (each a [`Gate`]), reading the solver's models ([`ModelCost`]).
//!
//! Invariant: every count is halved or reset now and then, so recent outcomes weigh most,
//! and a way that was closed is still tried now and then, so a log whose queries change is
//! noticed. None of this decides an answer, only where smtproxy looks first.

use std::time::{Duration, Instant};

/// How many recent component models are tried before going to the backend.
pub(super) const RECENT_MODELS: usize = 16;
/// Unsat cores learned before judging whether they pay (see [`CoreTrial`]).
const CORE_TRIAL: u64 = 64;

/// Components for which models were tried, and how many a model answered: in the current
/// window (the recent-model budget shrinks when they rarely pay) and over the session,
/// halved now and then (see `probe_defaults`).
pub(super) struct ModelTries {
    window_tries: u32,
    window_wins: u32,
    all_tries: u32,
    all_wins: u32,
    budget: usize,
}

impl Default for ModelTries {
    fn default() -> Self {
        ModelTries {
            window_tries: 0,
            window_wins: 0,
            all_tries: 0,
            all_wins: 0,
            budget: RECENT_MODELS,
        }
    }
}

impl ModelTries {
    /// Adapt how many recent models are tried: each try evaluates the component, which on
    /// logs where models rarely carry over (bit-vector arithmetic over arrays) costs more
    /// than it saves. Windows of 128 components; all 16 while at least 1 in 8 is answered.
    pub(super) fn note(&mut self, won: bool) {
        self.window_tries += 1;
        self.window_wins += u32::from(won);
        self.all_tries += 1;
        self.all_wins += u32::from(won);
        if self.all_tries >= 1024 {
            self.all_tries /= 2;
            self.all_wins /= 2;
        }
        if self.window_tries >= 128 {
            self.budget = if self.window_wins * 8 >= self.window_tries {
                RECENT_MODELS
            } else {
                RECENT_MODELS / 4
            };
            self.window_tries = 0;
            self.window_wins = 0;
        }
    }

    /// How many recent models to try.
    pub(super) fn budget(&self) -> usize {
        self.budget
    }

    /// Ask the solver for an array's default (one more cell, see `cells`) while models
    /// carry over to later queries here: it keeps the solver's default in the model, which
    /// makes reuse far likelier, but costs z3 about as much as printing the whole array (a
    /// sort log's backend stream: 0.42-0.46 s in z3 with cells alone, 0.58-0.60 s with the
    /// probe on 7 of its 20 get-values). So only once models have been seen to carry over:
    /// at least 8 tries, 1 in 4 of them answered.
    pub(super) fn probe_defaults(&self) -> bool {
        self.all_tries >= 8 && self.all_wins * 4 >= self.all_tries
    }
}

/// Components that got past the session memo and the unsat index, and how many of those
/// went to the backend (both halved now and then): hybrid solves ahead while at least half
/// do.
#[derive(Default)]
pub(super) struct AheadRate {
    past_memo: u32,
    to_backend: u32,
}

impl AheadRate {
    pub(super) fn got_past_memo(&mut self) {
        self.past_memo += 1;
        if self.past_memo >= 256 {
            self.past_memo /= 2;
            self.to_backend /= 2;
        }
    }

    pub(super) fn sent_to_backend(&mut self) {
        self.to_backend += 1;
    }

    pub(super) fn pays(&self) -> bool {
        self.to_backend * 2 >= self.past_memo
    }
}

/// Unsat cores learned from the stack backend, and components they refuted later. Once
/// `CORE_TRIAL` cores are learned, fewer than one refutation per 16 cores stops them
/// (naming assertions costs z3 time; cyphert-sprs: 559 cores, 1 refutation).
#[derive(Default)]
pub(super) struct CoreTrial {
    pub(super) learned: u64,
    pub(super) hits: u64,
}

impl CoreTrial {
    /// Whether cores have had their trial and do not pay.
    pub(super) fn failed(&self) -> bool {
        self.learned >= CORE_TRIAL && self.hits * 16 < self.learned
    }
}

/// Whether a way of deciding components locally pays on this log, from how often it has
/// found something and what it cost against what the backend takes for a component. (The
/// same count, without the backend's cost, gates reads of blocks' models from the store.)
/// Hybrid's guesses of wide components cost a few evaluations each, its local searches up
/// to a few milliseconds when they find nothing, as they mostly do on logs whose components
/// are unsat or need arithmetic (cyphert-sprs: 13 guessed of 710, 3 found by a search in
/// 646), while on KLEE's they mostly find a model (sort: 47 searches of 48). And where the
/// backend answers a component in a fraction of a millisecond (yices), even a search that
/// finds is slower than asking it (cyphert-alu: 1-2 ms a search, 0.3 ms a yices check).
/// Every one of the first 16 is made while the tries cost no more per find than the
/// backend takes (judged from the 4th), then while at least 1 in 8 finds something as
/// well; otherwise 1 in 16, so that a log whose queries change is noticed. Counts and time
/// halve at 64, so that the recent ones weigh most.
#[derive(Default)]
pub(super) struct Gate {
    made: u32,
    found: u32,
    skipped: u32,
    /// Time the tries took.
    spent: Duration,
}

impl Gate {
    /// `backend`: what the backend stage takes per component, once measured.
    pub(super) fn pays(&mut self, backend: Option<Duration>) -> bool {
        let finds = self.made < 16 || self.found * 8 >= self.made;
        let cheap = match backend {
            Some(b) if self.made >= 4 => self.spent <= b * self.found,
            _ => true,
        };
        let pays = finds && cheap;
        self.skipped = if pays { 0 } else { self.skipped + 1 };
        pays || self.skipped.is_multiple_of(16)
    }

    /// `f`, when the gate says it pays, timed and noted.
    pub(super) fn timed<T>(
        &mut self,
        backend: Option<Duration>,
        f: impl FnOnce() -> Option<T>,
    ) -> Option<T> {
        if !self.pays(backend) {
            return None;
        }
        let t0 = Instant::now();
        let found = f();
        self.note(found.is_some(), t0.elapsed());
        found
    }

    pub(super) fn note(&mut self, found: bool, spent: Duration) {
        self.made += 1;
        self.found += u32::from(found);
        self.spent += spent;
        if self.made >= 64 {
            self.made /= 2;
            self.found /= 2;
            self.spent /= 2;
        }
    }
}

/// What the backend stage takes per component: the lower median of the last
/// [`BACKEND_SAMPLES`]. A median, not a mean: the first solve of a process pays its start
/// (z3's first check-sat costs it 11-14 ms, against a fraction of one for the next), and a
/// portfolio's first race of a kind of query waits for the slowest; such a sample would
/// otherwise stand for the backend's cost for dozens of queries, and make local decisions
/// look cheap beside it.
/// (Taken at each backend solve, which is rarer than the local decisions that read it.)
#[derive(Default)]
pub(super) struct BackendCost {
    recent: [Duration; BACKEND_SAMPLES],
    seen: usize,
    median: Option<Duration>,
}

/// Backend times the median is taken over.
const BACKEND_SAMPLES: usize = 16;

impl BackendCost {
    pub(super) fn note(&mut self, took: Duration) {
        self.recent[self.seen % BACKEND_SAMPLES] = took;
        self.seen += 1;
        let n = self.seen.min(BACKEND_SAMPLES);
        let mut v = self.recent;
        let v = &mut v[..n];
        v.sort_unstable();
        self.median = Some(v[(n - 1) / 2]);
    }

    pub(super) fn median(&self) -> Option<Duration> {
        self.median
    }
}

/// A model read costing more than this many solves of its component may be left unread.
const MODEL_DEAR: u32 = 4;
/// ... and only when it also costs more than this (a model that costs milliseconds is read:
/// stored, it answers later queries).
const MODEL_FLOOR: Duration = Duration::from_millis(50);
/// While models are left unread, one is read all the same after this many, so that the
/// mean follows a log whose models get cheaper; each read that finds them still dear
/// doubles the interval, up to [`MODEL_RESAMPLE_MAX`].
const MODEL_RESAMPLE: u32 = 16;
const MODEL_RESAMPLE_MAX: u32 = 256;

/// What the backend takes to find a component sat and to give its model (running means
/// over about the last 4 of each; the first sat solve, which mostly waited for the
/// solver's start, is left out): whether a sat component's model is worth reading. cvc5
/// builds its model at the first get-value after a sat, whatever is asked: on a KLEE PCRE
/// log 2-8 s a query against 0.2-0.7 s for the check. A model left unread costs nothing
/// when the client asks for it (it is read then), but it is not stored, and a stored
/// model answers later queries, each a sat solve saved: so a model is left unread only
/// where its read costs several such solves.
pub(super) struct ModelCost {
    /// Whether a sat solve has been seen (the first is not counted).
    solved_once: bool,
    solve: Option<Duration>,
    read: Option<Duration>,
    /// Models left unread since the last one read, and how many that may reach.
    left_unread: u32,
    interval: u32,
    /// Every model is dear (`SMTPROXY_MODELS_UNREAD`, for tests of the paths a model left
    /// unread takes).
    always_dear: bool,
}

impl Default for ModelCost {
    fn default() -> Self {
        ModelCost {
            solved_once: false,
            solve: None,
            read: None,
            left_unread: 0,
            interval: MODEL_RESAMPLE,
            always_dear: std::env::var_os("SMTPROXY_MODELS_UNREAD").is_some_and(|v| v == "1"),
        }
    }
}

impl ModelCost {
    fn mean(m: &mut Option<Duration>, took: Duration) {
        *m = Some(match *m {
            None => took,
            Some(m) => (m * 3 + took) / 4,
        });
    }

    pub(super) fn solved(&mut self, took: Duration) {
        if std::mem::replace(&mut self.solved_once, true) {
            Self::mean(&mut self.solve, took);
        }
    }

    pub(super) fn read(&mut self, took: Duration) {
        Self::mean(&mut self.read, took);
    }

    /// Whether the model of a component just found sat is to be read.
    pub(super) fn worth_reading(&mut self) -> bool {
        if self.always_dear {
            return false;
        }
        let dear = match (self.solve, self.read) {
            (Some(s), Some(r)) => r > MODEL_FLOOR && r > s * MODEL_DEAR,
            _ => false,
        };
        if !dear {
            self.left_unread = 0;
            self.interval = MODEL_RESAMPLE;
            return true;
        }
        self.left_unread += 1;
        if self.left_unread > self.interval {
            self.left_unread = 0;
            self.interval = (self.interval * 2).min(MODEL_RESAMPLE_MAX);
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A gate lets every one of the first 16 through, closes when under 1 in 8 finds
    /// something (then lets 1 in 16 through), and opens again when those find.
    #[test]
    fn a_gate_follows_what_it_finds() {
        let ms = Duration::from_millis;
        let mut g = Gate::default();
        for _ in 0..16 {
            assert!(g.pays(None));
            g.note(false, ms(1));
        }
        let let_through: Vec<bool> = (0..48).map(|_| g.pays(None)).collect();
        assert_eq!(let_through.iter().filter(|&&p| p).count(), 3);
        assert!(let_through[15] && !let_through[14]);
        // Three probes that find: 3 of 19 is over 1 in 8.
        for _ in 0..3 {
            g.note(true, ms(1));
        }
        assert!(g.pays(None) && g.pays(None));
        // A gate that keeps finding stays open.
        let mut g = Gate::default();
        for k in 0..200 {
            assert!(g.pays(Some(ms(10))));
            g.note(k % 4 == 0, ms(1));
        }
    }

    /// A way that finds every time but costs more than the backend closes after four
    /// tries (then 1 in 16), and opens again when the backend turns out slower.
    #[test]
    fn a_gate_closes_where_the_backend_is_cheaper() {
        let ms = Duration::from_millis;
        let mut g = Gate::default();
        for _ in 0..4 {
            assert!(g.pays(Some(ms(1))));
            g.note(true, ms(2));
        }
        let let_through = (0..32).filter(|_| g.pays(Some(ms(1)))).count();
        assert_eq!(let_through, 2);
        assert!(g.pays(Some(ms(3))));
    }

    /// The backend's cost is the lower median of its last 16 components: a first solve
    /// that paid the process's start stands for nothing once others are known, and the
    /// cost follows a log whose queries get dearer.
    #[test]
    fn one_slow_start_is_not_the_backends_cost() {
        let us = Duration::from_micros;
        let mut costs = BackendCost::default();
        assert_eq!(costs.median(), None);
        costs.note(us(14_000));
        assert_eq!(costs.median(), Some(us(14_000)));
        costs.note(us(500));
        assert_eq!(costs.median(), Some(us(500)));
        for _ in 0..14 {
            costs.note(us(400));
        }
        assert_eq!(costs.median(), Some(us(400)));
        for _ in 0..8 {
            costs.note(us(3_000));
        }
        assert_eq!(
            costs.median(),
            Some(us(400)),
            "half of the window is not yet the cost"
        );
        costs.note(us(3_000));
        assert_eq!(costs.median(), Some(us(3_000)));
    }

    /// Models are read while they cost under four solves or 50 ms (the first solve not
    /// counted); a dearer one is left unread but for one after 16, then 32, ... (up to
    /// 256), and reading resumes once they are cheap again.
    #[test]
    fn a_dear_model_is_left_unread_but_sampled() {
        let ms = Duration::from_millis;
        let mut c = ModelCost::default();
        assert!(c.worth_reading());
        c.solved(ms(5000));
        c.solved(ms(1));
        c.read(ms(30));
        assert!(c.worth_reading(), "30 ms is under the floor");
        let mut c = ModelCost::default();
        c.solved(ms(0));
        c.solved(ms(500));
        c.read(ms(1900));
        assert!(c.worth_reading(), "under four solves' worth is read");
        let mut c = ModelCost::default();
        c.solved(ms(5000));
        c.solved(ms(500));
        c.read(ms(8000));
        let read: Vec<usize> = (0..1000).filter(|_| c.worth_reading()).collect();
        assert_eq!(read, [16, 49, 114, 243, 500, 757]);
        for _ in 0..20 {
            c.read(ms(100));
        }
        assert!(c.worth_reading() && c.worth_reading());
    }
}
