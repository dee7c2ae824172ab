//! One byte bound on a store (`--cache-max-mb`) shared between the files that make the
//! store on disk: the SQLite file, its write-ahead log and the log's index (`-wal`,
//! `-shm`), and the trie of repeated blocks beside it (`.trie`, see [`super::sidecar`]).
//!
//! Invariants:
//! * The shares add up to at most the bound: the file's share with the eviction's slack
//!   ([`FILE_SLACK_DIV`]: the file may rest up to a twentieth above its share after an
//!   eviction), plus the log's, plus the index's fixed [`SHM_BYTES`], plus the trie's,
//!   whenever the bound is at least [`MIN_BOUND`]. Below that the file keeps
//!   [`MIN_FILE`], its fixed pages and a few entries: such a bound cannot be kept.
//! * The log's share is a twentieth of the bound, between [`MIN_LOG`] and [`MAX_LOG`]
//!   (SQLite checkpoints it at half its share, at most 1000 pages: a larger share would
//!   only be room never used); the trie's a twentieth, at most [`TRIE_MAX`] (the trie's
//!   own bound in memory: a larger file is never written).
//! * A pure function of the bound: every process sharing a store splits it alike.

/// The write-ahead log's index (`-shm`): 32 KiB while the log holds fewer than 4096
/// frames, which the log's share keeps it to.
pub const SHM_BYTES: u64 = 32 << 10;
/// The least and the most of the bound given to the write-ahead log.
pub const MIN_LOG: u64 = 16 << 10;
pub const MAX_LOG: u64 = 8 << 20;
/// The most a trie of repeated blocks holds, in memory and in its file.
pub const TRIE_MAX: u64 = 32 << 20;
/// The least the SQLite file is given: its fixed pages and a few entries.
pub const MIN_FILE: u64 = 16 << 10;
/// After an eviction the file may rest up to its share plus its share / this.
pub const FILE_SLACK_DIV: u64 = 20;
/// The least bound whose shares all fit in it.
pub const MIN_BOUND: u64 = 128 << 10;

/// The share of each of the store's files, in bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Budget {
    /// The SQLite file (pages x page size), before the eviction's slack.
    pub file: u64,
    /// The write-ahead log (`-wal`).
    pub log: u64,
    /// The trie of repeated blocks (`.trie`).
    pub trie: u64,
}

impl Budget {
    /// The shares of a store bounded at `total` bytes.
    pub fn split(total: u64) -> Budget {
        let log = (total / 20).clamp(MIN_LOG, MAX_LOG);
        let trie = (total / 20).min(TRIE_MAX);
        let rest = total.saturating_sub(log + trie + SHM_BYTES);
        // file + file / FILE_SLACK_DIV <= rest (divided first: no bound overflows)
        let file = (rest / (FILE_SLACK_DIV + 1) * FILE_SLACK_DIV).max(MIN_FILE);
        Budget { file, log, trie }
    }

    /// The most the file may rest at after an eviction.
    pub fn file_slack(file: u64) -> u64 {
        file + file / FILE_SLACK_DIV
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shares_fit_in_the_bound() {
        for total in [
            MIN_BOUND,
            200 << 10,
            1 << 20,
            3 << 20,
            100 << 20,
            1 << 30,
            64 << 30,
            u64::MAX,
        ] {
            let b = Budget::split(total);
            let used = Budget::file_slack(b.file) + b.log + SHM_BYTES + b.trie;
            assert!(used <= total, "{total}: {b:?} uses {used}");
            // From a MiB on, most of the bound goes to the entries.
            if total >= 1 << 20 {
                assert!(b.file >= total / 10 * 8, "{total}: {b:?}");
            }
        }
    }

    #[test]
    fn a_bound_below_the_least_keeps_a_file() {
        let b = Budget::split(10 << 10);
        assert_eq!(b.file, MIN_FILE);
        assert_eq!(b.log, MIN_LOG);
    }
}
