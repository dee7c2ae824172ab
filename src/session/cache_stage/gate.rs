//! A gate on a way of deciding components that may find nothing (hybrid's guesses and
//! local searches): open while it pays, then only now and then.
//!
//! Invariant: the counts halve at 64, so recent outcomes weigh most; a closed gate still
//! lets 1 in 16 through, so a log whose queries change is noticed.

/// Whether a way of deciding components locally that may find nothing pays on this log,
/// from how often it has found something: hybrid's guesses of wide components cost a few
/// evaluations each, its local searches up to about a millisecond when they find nothing,
/// as they mostly do on logs whose components are unsat or need arithmetic (cyphert-sprs:
/// 13 guessed of 710, 3 found by a search in 646), while on KLEE's they mostly find a
/// model (sort: 47 searches of 48). Every one of the first 16 is made, then while at least
/// 1 in 8 finds something; otherwise 1 in 16, so that a log whose queries change is
/// noticed. Counts halve at 64, so that the recent ones weigh most.
#[derive(Default)]
pub(super) struct Gate {
    made: u32,
    found: u32,
    skipped: u32,
}

impl Gate {
    pub(super) fn pays(&mut self) -> bool {
        let pays = self.made < 16 || self.found * 8 >= self.made;
        self.skipped = if pays { 0 } else { self.skipped + 1 };
        pays || self.skipped.is_multiple_of(16)
    }

    pub(super) fn note(&mut self, found: bool) {
        self.made += 1;
        self.found += u32::from(found);
        if self.made >= 64 {
            self.made /= 2;
            self.found /= 2;
        }
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
}
