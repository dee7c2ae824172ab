//! Who wins, per query class, in a portfolio of solvers: measured solve times in, a plan
//! per query out. A class is the query's logic and the (log2) sizes of its conjunct and
//! declaration lists. Plain data: it starts no process and reads no clock.
//!
//! Invariants:
//! * A plan only ever names enabled members, and a race at most `jobs` of them at once.
//! * A class is explored (its enabled members raced and measured) until every enabled
//!   member has a measured time in it, and again every [`REEXPLORE`]-th query, so a
//!   solver that lost once (and was killed, its time only bounded below) can win back.
//! * A new class starts from what its theory taught: when every class of the same logic
//!   in which all members were measured has the same fastest member, ahead of every other
//!   by [`WIDE_MARGIN`] or more, the new class takes the estimates of the nearest such
//!   class (by size bins) and is not explored before its [`REEXPLORE`]-th query. Sizes
//!   bin finely (log2), so a stream of growing queries would otherwise race every
//!   member, waiting for each, at each new size; a member that lost everywhere by a wide
//!   margin is not worth that. The escalation below still lets the others join a query
//!   the chosen member takes long on.
//! * Only a definitive answer (sat/unsat) is a measured time; a member killed as a loser
//!   is known to take at least as long as it ran, and taken to take longer than the
//!   answer that beat it (members are not posed a query at the same moment); `unknown`,
//!   an error or a death counts as very slow ([`FAILED_MS`]).
//! * A member that answers alone is given `escalate_after` before the others join; a class
//!   whose fastest member takes more than [`SLOW_MS`] is raced from the start, unless the
//!   fastest is the first solver (member 0): its own path (the incremental stack) cannot
//!   be raced, and is what made it fastest.
//! * "Fastest" is what a member's answer costs the session: its solve (timed from its
//!   send to its answer, for every member alike), and after a `sat` the read of its model
//!   that follows (the cache stage asks the answering process for its values; yices builds
//!   its model at the first `get-value`, on KLEE's PCRE log 4.8 ms a read against z3's 1).
//!   A class's share of `sat` answers weighs each member's read estimate: its reads in
//!   this class, else in any class, else the fastest read of any member (a loser's model
//!   is never read: counted as free, its reads would make it look the cheaper for as long
//!   as it lost), else nothing. Reads are estimated apart from solves for that reason.

use rustc_hash::FxHashMap;
use std::time::Duration;

/// Queries of a class re-explored every this many.
pub const REEXPLORE: u64 = 64;
/// A class whose best measured time is above this is raced from its first query on.
pub const SLOW_MS: f64 = 200.0;
/// A member answering alone gets this many times its measured time before the others
/// join, and at least [`ESCALATE_MIN_MS`].
const ESCALATE_FACTOR: f64 = 3.0;
const ESCALATE_MIN_MS: f64 = 20.0;
/// What `unknown`, an error or a death is taken to have cost.
pub const FAILED_MS: f64 = 10_000.0;
/// How far ahead of every other member a theory's fastest member must be, in every
/// measured class of it, for a new class of that theory to start from their estimates.
pub const WIDE_MARGIN: f64 = 3.0;
/// Weight of a new measurement in a member's estimate.
const ALPHA: f64 = 0.3;

/// The class of a query: its logic, and log2 of its conjunct and declaration counts.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ClassKey {
    logic: String,
    conjuncts: u8,
    decls: u8,
}

impl ClassKey {
    pub fn new(logic: Option<&str>, conjuncts: usize, decls: usize) -> ClassKey {
        let log2 = |n: usize| (usize::BITS - n.leading_zeros()) as u8;
        ClassKey {
            logic: logic.unwrap_or("").to_string(),
            conjuncts: log2(conjuncts),
            decls: log2(decls),
        }
    }
}

/// How to solve one query.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Plan {
    /// One member, the others joining past `escalate_after`.
    Alone(usize),
    /// These members at once (at most `jobs`); the rest join when one of them fails.
    /// `wait_all`: every racer is waited for (a bounded while), to be measured and
    /// cross-checked, rather than killed at the first answer.
    Race { first: Vec<usize>, wait_all: bool },
}

#[derive(Clone, Debug, Default)]
struct Class {
    seen: u64,
    /// Estimated solve time per member, in ms (None: never measured here).
    est: Vec<Option<f64>>,
    /// Estimated time to read a member's model after its `sat` here, in ms.
    read: Vec<Option<f64>>,
    /// The share of this class's queries answered `sat` (None: none answered yet).
    sat_share: Option<f64>,
}

pub struct Learner {
    members: usize,
    jobs: usize,
    classes: FxHashMap<ClassKey, Class>,
    /// Each member's model-read estimate over every class (for a class where it has not
    /// been read yet).
    read: Vec<Option<f64>>,
}

impl Learner {
    pub fn new(members: usize, jobs: usize) -> Learner {
        Learner {
            members,
            jobs: jobs.max(1),
            classes: FxHashMap::default(),
            read: vec![None; members],
        }
    }

    fn class(&mut self, key: &ClassKey) -> &mut Class {
        if !self.classes.contains_key(key) {
            let est = self.prior(key).unwrap_or_else(|| vec![None; self.members]);
            let class = Class {
                seen: 0,
                est,
                read: vec![None; self.members],
                sat_share: None,
            };
            self.classes.insert(key.clone(), class);
        }
        self.classes.get_mut(key).expect("inserted above")
    }

    /// What member `m`'s answer is expected to cost in class `c`, in ms: its solve, and its
    /// model's read weighed by the class's share of `sat` (None: its solve is unmeasured).
    /// A member whose reads were never timed is taken to read as fast as the fastest that
    /// was (a loser's model is never read: counted as free, its reads would make it look
    /// the cheaper for as long as it lost, and a wide lead narrow).
    fn cost(&self, c: &Class, m: usize) -> Option<f64> {
        let solve = c.est.get(m).copied().flatten()?;
        let least = |v: &[Option<f64>]| v.iter().flatten().copied().reduce(f64::min);
        let read = c
            .read
            .get(m)
            .copied()
            .flatten()
            .or_else(|| self.read.get(m).copied().flatten())
            .or_else(|| least(&c.read))
            .or_else(|| least(&self.read))
            .unwrap_or(0.0);
        Some(solve + c.sat_share.unwrap_or(0.0) * read)
    }

    /// Every member's [`Learner::cost`] in class `c`.
    fn costs(&self, c: &Class) -> Vec<Option<f64>> {
        (0..c.est.len()).map(|m| self.cost(c, m)).collect()
    }

    /// Estimates for a new class of `key`'s logic from the classes of that logic measured
    /// for every member, when they agree on a fastest member that leads each of them by
    /// [`WIDE_MARGIN`]: the nearest such class's (by size bins). None otherwise.
    fn prior(&self, key: &ClassKey) -> Option<Vec<Option<f64>>> {
        let mut winner = None;
        let mut nearest: Option<(u32, &Class)> = None;
        for (k, c) in &self.classes {
            if k.logic != key.logic || c.est.iter().any(Option::is_none) {
                continue;
            }
            let est: Vec<f64> = self
                .costs(c)
                .iter()
                .map(|e| e.unwrap_or(f64::INFINITY))
                .collect();
            let best = (0..est.len()).min_by(|&a, &b| est[a].total_cmp(&est[b]))?;
            let wide = (0..est.len())
                .all(|m| m == best || est[m] >= WIDE_MARGIN * est[best].max(f64::MIN_POSITIVE));
            if !wide || winner.is_some_and(|w| w != best) {
                return None;
            }
            winner = Some(best);
            let d = k.conjuncts.abs_diff(key.conjuncts) as u32 + k.decls.abs_diff(key.decls) as u32;
            if nearest.is_none_or(|(nd, _)| d < nd) {
                nearest = Some((d, c));
            }
        }
        nearest.map(|(_, c)| c.est.clone())
    }

    /// The plan for the next query of class `key`, among the `enabled` members; `peek`
    /// leaves the class's query count as it is (the plan of a query not yet asked).
    pub fn plan(&mut self, key: &ClassKey, enabled: &[bool], peek: bool) -> Plan {
        let jobs = self.jobs;
        let c = self.class(key);
        let seen = c.seen + 1;
        if !peek {
            c.seen = seen;
        }
        let live: Vec<usize> = (0..enabled.len()).filter(|&m| enabled[m]).collect();
        if live.len() <= 1 {
            return Plan::Alone(live.first().copied().unwrap_or(0));
        }
        let c = &self.classes[key];
        let order = order(&self.costs(c), &live);
        let unmeasured = live.iter().any(|&m| c.est[m].is_none());
        if unmeasured || seen.is_multiple_of(REEXPLORE) {
            if jobs >= 2 {
                return Plan::Race {
                    first: order.into_iter().take(jobs).collect(),
                    wait_all: true,
                };
            }
            // One process at a time: each member alone in turn.
            return Plan::Alone(live[(seen as usize) % live.len()]);
        }
        let best = order[0];
        if jobs >= 2 && best != 0 && c.est[best].unwrap_or(0.0) > SLOW_MS {
            return Plan::Race {
                first: order.into_iter().take(jobs).collect(),
                wait_all: false,
            };
        }
        Plan::Alone(best)
    }

    /// The enabled members other than `except`, unmeasured ones first, then fastest first.
    pub fn others(&mut self, key: &ClassKey, enabled: &[bool], except: &[usize]) -> Vec<usize> {
        self.class(key);
        let live: Vec<usize> = (0..enabled.len())
            .filter(|&m| enabled[m] && !except.contains(&m))
            .collect();
        order(&self.costs(&self.classes[key]), &live)
    }

    /// How long member `m`, answering alone, runs before the others join.
    pub fn escalate_after(&mut self, key: &ClassKey, m: usize) -> Duration {
        let est = self.class(key).est.get(m).copied().flatten().unwrap_or(0.0);
        Duration::from_secs_f64((est * ESCALATE_FACTOR).max(ESCALATE_MIN_MS) / 1000.0)
    }

    /// Member `m` answered (sat or unsat) in `ms`.
    pub fn answered(&mut self, key: &ClassKey, m: usize, ms: f64) {
        if let Some(e) = self.class(key).est.get_mut(m) {
            follow(e, ms);
        }
    }

    /// A query of class `key` was answered, `sat` or not (once per query, whoever
    /// answered it).
    pub fn outcome(&mut self, key: &ClassKey, sat: bool) {
        follow(&mut self.class(key).sat_share, if sat { 1.0 } else { 0.0 });
    }

    /// Member `m`'s model of a query of class `key`, which it found sat, was read in `ms`.
    pub fn model_read(&mut self, key: &ClassKey, m: usize, ms: f64) {
        if let Some(e) = self.class(key).read.get_mut(m) {
            follow(e, ms);
        }
        if let Some(e) = self.read.get_mut(m) {
            follow(e, ms);
        }
    }

    /// Member `m` was stopped after `ms` without an answer, another member having answered
    /// the query in `beaten_in` ms (None: none did). It takes at least as long as it ran,
    /// and is taken to take longer than the member that beat it: the two are not posed a
    /// query at the same moment (the first solver when its own path is free, a member when
    /// its process is up), so what it ran alone can be far below what it takes (on KLEE's
    /// sbase-cut, z3 stopped 1 ms after its send, beaten by yices' `sat` in 4, takes 7-18
    /// ms on such queries). Its estimate never drops for it.
    pub fn lost(&mut self, key: &ClassKey, m: usize, ms: f64, beaten_in: Option<f64>) {
        let floor = 1.5 * ms.max(beaten_in.unwrap_or(0.0));
        if let Some(e) = self.class(key).est.get_mut(m) {
            *e = Some(match *e {
                Some(old) => old.max(old + ALPHA * (floor - old)),
                None => floor,
            });
        }
    }

    /// Member `m` gave no answer (`unknown`, an error, a death).
    pub fn failed(&mut self, key: &ClassKey, m: usize) {
        self.lost(key, m, FAILED_MS, None);
    }
}

/// An estimate moved [`ALPHA`] of the way to a new measurement `x` (`x` itself when there
/// was none).
fn follow(e: &mut Option<f64>, x: f64) {
    *e = Some(match *e {
        Some(old) => old + ALPHA * (x - old),
        None => x,
    });
}

/// `live` ordered for a race: unmeasured members first (to measure them), then by
/// `cost` (each member's, see [`Learner::cost`]), cheapest first; ties in `--solver` order.
fn order(cost: &[Option<f64>], live: &[usize]) -> Vec<usize> {
    let mut v = live.to_vec();
    v.sort_by(|&a, &b| {
        let ka = cost.get(a).copied().flatten().unwrap_or(-1.0);
        let kb = cost.get(b).copied().flatten().unwrap_or(-1.0);
        ka.total_cmp(&kb).then(a.cmp(&b))
    });
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_class_starts_from_its_theorys_wide_winner() {
        let all = [true, true];
        let race = Plan::Race {
            first: vec![0, 1],
            wait_all: true,
        };
        let mut l = Learner::new(2, 2);
        let a = ClassKey::new(Some("QF_ABV"), 3, 2);
        assert_eq!(l.plan(&a, &all, false), race);
        l.answered(&a, 0, 40.0);
        l.answered(&a, 1, 2.0);
        // A new size of the same theory: member 1 alone, with class a's estimates.
        let b = ClassKey::new(Some("QF_ABV"), 40, 9);
        assert_eq!(l.plan(&b, &all, false), Plan::Alone(1));
        assert_eq!(l.escalate_after(&b, 1), Duration::from_millis(20));
        // Another theory learns on its own.
        let c = ClassKey::new(Some("QF_BV"), 3, 2);
        assert_eq!(l.plan(&c, &all, false), race);
        // A narrow lead is no prior.
        let mut l = Learner::new(2, 2);
        l.plan(&a, &all, false);
        l.answered(&a, 0, 5.0);
        l.answered(&a, 1, 2.0);
        assert_eq!(l.plan(&b, &all, false), race);
        // Nor are classes of the theory that disagree on the winner.
        let mut l = Learner::new(2, 2);
        l.plan(&a, &all, false);
        l.answered(&a, 0, 40.0);
        l.answered(&a, 1, 2.0);
        let d = ClassKey::new(Some("QF_ABV"), 1, 1);
        l.plan(&d, &all, false);
        // d took a's estimates; measured otherwise, it now disagrees with a.
        for _ in 0..12 {
            l.answered(&d, 0, 1.0);
            l.answered(&d, 1, 30.0);
        }
        assert_eq!(l.plan(&b, &all, false), race);
    }

    #[test]
    fn explores_then_sends_the_fastest_alone() {
        let k = ClassKey::new(Some("QF_BV"), 3, 2);
        let mut l = Learner::new(3, 2);
        let all = [true, true, true];
        assert_eq!(
            l.plan(&k, &all, false),
            Plan::Race {
                first: vec![0, 1],
                wait_all: true
            }
        );
        l.answered(&k, 0, 10.0);
        l.answered(&k, 1, 2.0);
        // Member 2 still unmeasured: raced first.
        assert_eq!(
            l.plan(&k, &all, false),
            Plan::Race {
                first: vec![2, 1],
                wait_all: true
            }
        );
        l.answered(&k, 2, 50.0);
        assert_eq!(l.plan(&k, &all, false), Plan::Alone(1));
        assert_eq!(l.others(&k, &all, &[1]), vec![0, 2]);
        assert_eq!(l.escalate_after(&k, 1), Duration::from_millis(20));
        // A disabled member is never planned.
        assert_eq!(l.plan(&k, &[true, false, true], false), Plan::Alone(0));
    }

    #[test]
    fn a_loser_never_looks_faster_and_slow_classes_race() {
        let k = ClassKey::new(None, 1, 1);
        let mut l = Learner::new(2, 2);
        l.answered(&k, 0, 900.0);
        l.answered(&k, 1, 300.0);
        assert_eq!(
            l.plan(&k, &[true, true], false),
            Plan::Race {
                first: vec![1, 0],
                wait_all: false
            }
        );
        // The first solver fastest: its own path, alone.
        l.answered(&k, 1, 5000.0);
        assert_eq!(l.plan(&k, &[true, true], false), Plan::Alone(0));
        l.answered(&k, 1, 300.0);
        l.answered(&k, 0, 900.0);
        let before = l.classes[&k].est[0].unwrap();
        l.lost(&k, 0, 10.0, Some(300.0));
        assert!(l.classes[&k].est[0].unwrap() >= before);
        l.failed(&k, 1);
        assert!(l.classes[&k].est[1].unwrap() > before);
    }

    /// The first solver, posed the query 3 ms after a member whose `sat` came in 4, is
    /// stopped after 1 ms: it has not been shown faster than the winner, and the class's
    /// next query goes to the winner alone (from its 1 ms alone, it went to the loser).
    #[test]
    fn a_loser_posed_later_is_not_taken_for_the_faster() {
        let k = ClassKey::new(Some("QF_AUFBV"), 9, 2);
        let mut l = Learner::new(2, 2);
        assert!(matches!(
            l.plan(&k, &[true, true], false),
            Plan::Race { .. }
        ));
        l.answered(&k, 1, 4.0);
        l.lost(&k, 0, 1.0, Some(4.0));
        assert!(l.classes[&k].est[0].unwrap() > 4.0);
        assert_eq!(l.plan(&k, &[true, true], false), Plan::Alone(1));
        // With no answer to beat it (a race that timed out), what it ran is the bound.
        let j = ClassKey::new(Some("QF_AUFBV"), 3, 2);
        l.lost(&j, 0, 2.0, None);
        assert_eq!(l.classes[&j].est[0], Some(3.0));
    }

    /// A member whose solves are a little faster but whose models are dear to read loses
    /// a class that is mostly sat, and keeps one that is unsat (no model is read there);
    /// a class where its reads were never measured takes them from the others it was read
    /// in.
    #[test]
    fn a_dear_model_read_counts_where_queries_are_sat() {
        let all = [true, true];
        let sat = ClassKey::new(Some("QF_ABV"), 3, 2);
        let mut l = Learner::new(2, 2);
        l.plan(&sat, &all, false);
        l.answered(&sat, 0, 1.0);
        l.answered(&sat, 1, 1.5);
        assert_eq!(
            l.plan(&sat, &all, false),
            Plan::Alone(0),
            "reads unmeasured"
        );
        for _ in 0..4 {
            l.outcome(&sat, true);
        }
        l.model_read(&sat, 0, 2.0);
        l.model_read(&sat, 1, 0.1);
        assert_eq!(l.plan(&sat, &all, false), Plan::Alone(1));
        // Unsat answers: no read follows, the faster solve wins.
        let unsat = ClassKey::new(Some("QF_ABV"), 5, 2);
        l.plan(&unsat, &all, false);
        l.answered(&unsat, 0, 1.0);
        l.answered(&unsat, 1, 1.5);
        for _ in 0..4 {
            l.outcome(&unsat, false);
        }
        assert_eq!(l.plan(&unsat, &all, false), Plan::Alone(0));
        // A mostly-sat class where neither was read yet: the reads measured elsewhere.
        let other = ClassKey::new(Some("QF_ABV"), 7, 2);
        l.plan(&other, &all, false);
        l.answered(&other, 0, 1.0);
        l.answered(&other, 1, 1.5);
        l.outcome(&other, true);
        assert_eq!(l.plan(&other, &all, false), Plan::Alone(1));
        assert_eq!(l.others(&other, &all, &[]), vec![1, 0]);
        // A member whose model was never read is not the cheaper for it: it is taken to
        // read as fast as the fastest that was.
        let mut l = Learner::new(2, 2);
        l.plan(&sat, &all, false);
        l.answered(&sat, 0, 1.0);
        l.answered(&sat, 1, 0.5);
        l.outcome(&sat, true);
        l.model_read(&sat, 1, 2.0);
        assert_eq!(l.plan(&sat, &all, false), Plan::Alone(1));
    }

    #[test]
    fn one_job_explores_in_turn() {
        let k = ClassKey::new(None, 1, 1);
        let mut l = Learner::new(2, 1);
        let a = l.plan(&k, &[true, true], false);
        let b = l.plan(&k, &[true, true], false);
        assert_ne!(a, b);
        assert!(matches!(a, Plan::Alone(_)) && matches!(b, Plan::Alone(_)));
    }
}
