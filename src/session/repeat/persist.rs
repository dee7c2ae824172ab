//! The trie of repeated blocks kept across runs (Memoise kept its trie of path prefixes
//! from one run of the program under test to the next): saved beside the disk store
//! (`cache::sidecar`, `<store>.trie`), loaded at the first block of the next session that
//! runs with the same settings, so a symbolic executor run again over a warm store follows
//! its earlier paths from its first query, not only from the second time a path comes in
//! one session.
//!
//! Invariants:
//! * A loaded trie is exactly a trie some earlier session built and saved: the file's
//!   checksum and the decoder's checks (every edge's bytes in range, every node after its
//!   parent, every model valid UTF-8, nothing left over) stand between damage and an
//!   answer; a file that fails them is left unused (and replaced at the next save).
//! * It is loaded only under the settings it was built under: the file's tag is a digest
//!   of this format's version, of the block key's normalisation (`smt2::alpha`), of the
//!   result store's formats, of smtproxy's version, and of the session's settings (the
//!   solver's kind and flags, the client's flags); the root it was built from (the options
//!   kept across a reset) must equal the first block's. So each node's answer is, as in
//!   the session that made it, the answer smtproxy checked on a block equal to any that
//!   reaches the node up to the names of its constants. Any change to how the trie's
//!   edges or answers are written must change [`TRIE_FORMAT`].
//! * It is read once, at the first block of a session, and taken at the first of the
//!   session's first [`LOAD_BLOCKS`] blocks that begins from its root while the trie in
//!   memory holds nothing of that root (never later, whatever the session's roots do);
//!   it is written, when it changed, at a block where it has doubled since the last
//!   write (from [`FIRST_SAVE`] bytes) or that comes [`SAVE_INTERVAL`] after it, and at
//!   the end of the session (a client that kills its solver leaves no end: the writes at
//!   blocks keep what it ran up to the last interval). A trie emptied at its bound starts
//!   its doubling again. So a session writes at most about twice the trie's bound each
//!   time it fills, plus one trie every interval.
//! * Bounded: a file holds at most one trie (the last one written, whatever its settings),
//!   of at most the trie's bound and its share of the store's own bound
//!   ([`crate::cache::budget`]: header included); a trie past either is not written. An
//!   emptied trie is not written until it has grown again, so a session that only emptied
//!   it leaves the file as it was.
//! * A write goes on a thread of its own (`trie-write`): the session encodes the trie and
//!   goes on while the checksum and the file's bytes are written (a trie of megabytes took
//!   5 to 17 ms to write, each time, on the engine's thread). One write at a time: a save
//!   waits for the write before it, so files are written in the order their tries were.
//!   [`Repeats::wait_saved`] waits for the last one; the session's end calls it after the
//!   result store has closed, so the two overlap. A write's temporary file
//!   (`<trie>.tmp-PID`) left by a process killed during it is removed by the next write
//!   of any session, once that process is gone (`sidecar::remove_stale`).

use super::{Known, Node, Repeats, NONE, REPEAT_BYTES};
use crate::cache::budget::Budget;
use crate::cache::sidecar;
use std::hash::BuildHasher;
use std::path::Path;
use std::time::{Duration, Instant};

/// The version of the payload's layout below.
pub const TRIE_FORMAT: u32 = 1;
/// The first blocks of a session, one of which may begin from the saved trie's root.
const LOAD_BLOCKS: u8 = 8;
/// A trie is first written once it holds this many bytes.
const FIRST_SAVE: usize = 1 << 20;
/// A trie that changed is written at a block this long after its last write, whatever
/// its growth: a client that kills its solver (Manticore sends SIGKILL) leaves no end of
/// session to write at.
const SAVE_INTERVAL: Duration = Duration::from_secs(10);

/// The trie's file, and what was done with it.
pub struct TrieFile {
    path: std::path::PathBuf,
    tag: [u8; 16],
    /// The bound on the payload.
    max_len: usize,
    /// Blocks left to begin from the stashed trie's root (the file is read at the first,
    /// when all [`LOAD_BLOCKS`] are left).
    blocks_left: u8,
    /// The trie the file held, until a block begins from its root.
    stash: Option<Box<Repeats>>,
    /// The trie's size at the last write (or load), and its change count then.
    saved_size: usize,
    saved_changes: u64,
    /// When the trie was last written (or the file attached).
    saved_at: Instant,
    /// The write in flight, if any.
    writing: Option<Writing>,
    /// Whether this session has looked for temporary files of dead writers.
    swept: bool,
}

/// A write of the trie's file on its thread, and the trie's change count it holds.
struct Writing {
    thread: std::thread::JoinHandle<bool>,
    changes: u64,
}

impl TrieFile {
    /// The trie file of the disk store at `store` (whose bound is `store_max` bytes), for
    /// sessions run with `settings`.
    pub fn new(store: &Path, store_max: Option<u64>, settings: &str) -> TrieFile {
        let mut h = blake3::Hasher::new();
        h.update(b"smtproxy trie\0");
        h.update(&TRIE_FORMAT.to_le_bytes());
        h.update(crate::smt2::alpha::BLOCK_KEY_DOMAIN);
        h.update(&crate::query::key::KEY_FORMAT_VERSION.to_le_bytes());
        h.update(&[
            crate::cache::FORMAT_VERSION,
            crate::cache::COMPACT_FORMAT_VERSION,
        ]);
        h.update(env!("CARGO_PKG_VERSION").as_bytes());
        h.update(b"\0");
        h.update(settings.as_bytes());
        let mut tag = [0u8; 16];
        tag.copy_from_slice(&h.finalize().as_bytes()[..16]);
        let share = store_max.map_or(usize::MAX, |m| {
            usize::try_from(Budget::split(m).trie)
                .unwrap_or(usize::MAX)
                .saturating_sub(sidecar::HEADER_LEN)
        });
        TrieFile {
            path: sidecar::path_for(store, "trie"),
            tag,
            max_len: REPEAT_BYTES.min(share),
            blocks_left: LOAD_BLOCKS,
            stash: None,
            saved_size: 0,
            saved_changes: 0,
            saved_at: Instant::now(),
            writing: None,
            swept: false,
        }
    }

    /// Takes the write in flight once it is over (at once, if `wait`): a write that
    /// succeeded makes its change count the saved one.
    fn settle(&mut self, wait: bool) {
        let Some(w) = self.writing.take_if(|w| wait || w.thread.is_finished()) else {
            return;
        };
        if w.thread.join().unwrap_or(false) {
            self.saved_changes = w.changes;
        }
    }

    /// Write `payload` (the trie at change count `changes`) on a thread of its own, once
    /// the write before it is over (here, when no thread can be started).
    fn write(&mut self, payload: Vec<u8>, changes: u64) {
        self.settle(true);
        let sweep = !std::mem::replace(&mut self.swept, true);
        let job = std::sync::Arc::new((self.path.clone(), self.tag, payload));
        let theirs = job.clone();
        let spawned = std::thread::Builder::new()
            .name("trie-write".into())
            .spawn(move || write_file(&theirs, sweep));
        match spawned {
            Ok(thread) => self.writing = Some(Writing { thread, changes }),
            Err(_) => {
                if write_file(&job, sweep) {
                    self.saved_changes = changes;
                }
            }
        }
    }
}

/// Write a trie's file: (its path, its tag, the payload); first, if `sweep`, remove the
/// temporary files dead writers left beside it.
fn write_file(job: &(std::path::PathBuf, [u8; 16], Vec<u8>), sweep: bool) -> bool {
    let (path, tag, payload) = job;
    if sweep {
        sidecar::remove_stale(path);
    }
    sidecar::write(path, tag, payload).is_ok()
}

impl Drop for TrieFile {
    fn drop(&mut self) {
        self.settle(true);
    }
}

/// Little-endian readers over a payload; each None past its end.
struct Input<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Input<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let s = self.b.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
    fn bytes(&mut self) -> Option<&'a [u8]> {
        let n = self.u32()? as usize;
        self.take(n)
    }
}

fn put_bytes(out: &mut Vec<u8>, b: &[u8]) -> Option<()> {
    out.extend_from_slice(&u32::try_from(b.len()).ok()?.to_le_bytes());
    out.extend_from_slice(b);
    Some(())
}

const NO_ANSWER: u8 = 0;
const UNSAT: u8 = 1;
const SAT: u8 = 2;

impl Repeats {
    /// The trie as a payload: its root; its edges' bytes; then per node after the root
    /// its parent, its edge's range and its answer (a tag, and a sat's model as text).
    /// The children's links are not written: they follow from the parents, in node order.
    pub(super) fn encode(&self) -> Option<Vec<u8>> {
        let mut parent = vec![NONE; self.nodes.len()];
        for (n, node) in self.nodes.iter().enumerate() {
            if node.first != NONE {
                parent[node.first as usize] = n as u32;
            }
        }
        for (&(p, _), &c) in &self.edges {
            parent[c as usize] = p;
        }
        let mut out = Vec::with_capacity(self.bytes.len() + self.nodes.len() * 13 + self.answers);
        put_bytes(&mut out, self.root.as_bytes())?;
        put_bytes(&mut out, &self.bytes)?;
        out.extend_from_slice(&u32::try_from(self.nodes.len()).ok()?.to_le_bytes());
        for (n, node) in self.nodes.iter().enumerate().skip(1) {
            out.extend_from_slice(&parent[n].to_le_bytes());
            out.extend_from_slice(&node.start.to_le_bytes());
            out.extend_from_slice(&node.end.to_le_bytes());
            match &node.known {
                None => out.push(NO_ANSWER),
                Some(Known::Unsat) => out.push(UNSAT),
                Some(Known::Sat(text)) => {
                    out.push(SAT);
                    put_bytes(&mut out, text.as_bytes())?;
                }
            }
        }
        Some(out)
    }

    /// The trie a payload of [`Repeats::encode`] holds; None when it is malformed.
    pub(super) fn decode(payload: &[u8]) -> Option<Repeats> {
        let mut r = Repeats::default();
        let mut input = Input { b: payload, at: 0 };
        r.root = std::str::from_utf8(input.bytes()?).ok()?.to_string();
        r.bytes = input.bytes()?.to_vec();
        let count = input.u32()?;
        if count == 0 {
            return None;
        }
        for n in 1..count {
            let (parent, start, end) = (input.u32()?, input.u32()?, input.u32()?);
            if parent >= n || start > end || end as usize > r.bytes.len() {
                return None;
            }
            let known = match input.u8()? {
                NO_ANSWER => None,
                UNSAT => Some(Known::Unsat),
                SAT => {
                    let text = std::str::from_utf8(input.bytes()?).ok()?;
                    r.answers += text.len();
                    Some(Known::Sat(text.into()))
                }
                _ => return None,
            };
            r.nodes.push(Node {
                start,
                end,
                first: NONE,
                known,
            });
            let first = r.nodes[parent as usize].first;
            if first == NONE {
                r.nodes[parent as usize].first = n;
            } else {
                let h = r.hasher.hash_one(r.edge(n));
                r.edges.entry((parent, h)).or_insert(n);
            }
        }
        (input.at == payload.len()).then_some(r)
    }

    /// Attach the file the trie is kept in between sessions.
    pub fn keep_in(&mut self, file: TrieFile) {
        self.file = Some(file);
    }

    /// At the first blocks of a session: the trie saved under this session's settings,
    /// once a block begins from the root it was built from. The file is read once, at the
    /// first block; what it holds is kept for the next [`LOAD_BLOCKS`] blocks only (a
    /// client's first block often begins before the options it keeps across resets are
    /// set, so its root is not yet the one of the blocks after it).
    pub(super) fn load(&mut self, root: &str) {
        let Some(file) = self.file.as_mut().filter(|f| f.blocks_left > 0) else {
            return;
        };
        if file.blocks_left == LOAD_BLOCKS {
            file.stash = sidecar::read(&file.path, &file.tag, file.max_len)
                .ok()
                .flatten()
                .and_then(|payload| Repeats::decode(&payload))
                .map(Box::new);
        }
        file.blocks_left -= 1;
        let due = file.stash.as_ref().is_some_and(|t| t.root == root)
            && (self.root != root || self.nodes.len() == 1);
        if file.blocks_left == 0 || due {
            file.blocks_left = 0;
            let Some(mut loaded) = file.stash.take().filter(|_| due) else {
                return;
            };
            let mut file = self.file.take();
            if let Some(f) = file.as_mut() {
                f.saved_size = loaded.size();
                f.saved_changes = self.changes;
            }
            loaded.file = file;
            loaded.changes = self.changes;
            loaded.loaded_nodes = loaded.nodes.len() as u64 - 1;
            *self = *loaded;
        }
    }

    /// Write the trie when it has changed since the last write and, unless `at_end`, has
    /// doubled since or was last written [`SAVE_INTERVAL`] ago. The write goes on after
    /// this returns ([`Repeats::wait_saved`]).
    pub(super) fn save(&mut self, at_end: bool) {
        let (size, changes) = (self.size(), self.changes);
        let Some(file) = self.file.as_mut() else {
            return;
        };
        file.settle(false);
        // A write in flight counts as written; one that fails is tried again later.
        let saved = file
            .writing
            .as_ref()
            .map_or(file.saved_changes, |w| w.changes);
        let due = changes != saved
            && (at_end
                || size >= FIRST_SAVE.max(file.saved_size.saturating_mul(2))
                || file.saved_at.elapsed() >= SAVE_INTERVAL);
        if !due || size > REPEAT_BYTES {
            return;
        }
        let max_len = file.max_len;
        let payload = self.encode().filter(|p| p.len() <= max_len);
        if let Some(f) = self.file.as_mut() {
            // Tried, written or not (over its share, a directory that cannot be written):
            // the next try waits for the trie to double again or for the interval.
            f.saved_size = size;
            f.saved_at = Instant::now();
            if let Some(p) = payload {
                f.write(p, changes);
            }
        }
    }

    /// Wait for the trie's write in flight, if any.
    pub fn wait_saved(&mut self) {
        if let Some(f) = self.file.as_mut() {
            f.settle(true);
        }
    }

    /// The trie was emptied: its next write starts the doubling again.
    pub(super) fn restart_saves(&mut self) {
        if let Some(f) = self.file.as_mut() {
            f.saved_size = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Repeats {
        let mut r = Repeats::default();
        let root = r.begin("(set-option :produce-models true)");
        let a = r.extend(root, b"(declare-fun 0 () Int)").unwrap();
        let b = r.extend(a, b"(assert (> 0 1))").unwrap();
        let c = r.extend(b, b"(check-sat)").unwrap();
        r.set_known(c, Known::Sat("2\n".into()));
        let d = r.extend(a, b"(assert (< 0 0))").unwrap();
        let e = r.extend(d, b"(check-sat)").unwrap();
        r.set_known(e, Known::Unsat);
        // A third child of `a`, and one under the root.
        r.extend(a, b"(assert (= 0 0))").unwrap();
        r.extend(root, b"(check-sat)").unwrap();
        r
    }

    fn paths(r: &Repeats) -> Vec<(Vec<u8>, Option<Known>)> {
        // Every node, as its path's bytes and its answer, found from the root by `child`.
        let mut out = Vec::new();
        let mut stack = vec![(0u32, Vec::new())];
        while let Some((at, path)) = stack.pop() {
            for n in 1..r.nodes.len() as u32 {
                let mut p = path.clone();
                p.extend_from_slice(r.edge(n));
                p.push(b'|');
                if r.child(at, r.edge(n)) == Some(n) {
                    out.push((p.clone(), r.known(n).cloned()));
                    stack.push((n, p));
                }
            }
        }
        out.sort_by(|x, y| x.0.cmp(&y.0));
        out
    }

    #[test]
    fn a_trie_decodes_to_the_same_paths_and_answers() {
        let r = sample();
        let back = Repeats::decode(&r.encode().unwrap()).unwrap();
        assert_eq!(back.root, r.root);
        assert_eq!(back.nodes.len(), r.nodes.len());
        assert_eq!(back.size(), r.size());
        let p = paths(&r);
        assert_eq!(p.len(), 7);
        assert_eq!(paths(&back), p);
        // It goes on growing as the one it was saved from.
        let mut back = back;
        let a = back.child(0, b"(declare-fun 0 () Int)").unwrap();
        assert!(back.extend(a, b"(assert false)").is_some());
    }

    #[test]
    fn malformed_payloads_are_refused() {
        let good = sample().encode().unwrap();
        for cut in 0..good.len() {
            assert!(Repeats::decode(&good[..cut]).is_none(), "cut {cut}");
        }
        let mut longer = good.clone();
        longer.push(0);
        assert!(Repeats::decode(&longer).is_none());
        // A node before its parent, an edge out of range, an unknown answer tag.
        let mut r = Repeats::default();
        r.begin("");
        let a = r.extend(0, b"(check-sat)").unwrap();
        r.set_known(a, Known::Unsat);
        let p = r.encode().unwrap();
        let node_at = 4 + 4 + 11 + 4;
        for (off, v) in [(node_at, 1u8), (node_at + 8, 99), (node_at + 12, 7)] {
            let mut b = p.clone();
            b[off] = v;
            assert!(Repeats::decode(&b).is_none(), "byte {off} = {v}");
        }
        assert!(Repeats::decode(&p).is_some());
    }

    fn tmp_store(name: &str) -> std::path::PathBuf {
        let p = std::env::temp_dir().join(format!(
            "smtproxy-trie-{}-{name}.sqlite3",
            std::process::id()
        ));
        let _ = std::fs::remove_file(sidecar::path_for(&p, "trie"));
        p
    }

    /// A new session's trie, kept in the trie file of `store` under `settings`.
    fn session_over(store: &std::path::Path, settings: &str) -> Repeats {
        let mut r = Repeats::default();
        r.keep_in(TrieFile::new(store, None, settings));
        r
    }

    /// Saved an interval after the last write and at the end, loaded by the next session with the same
    /// settings and root only, and only at its first block.
    #[test]
    fn saved_tries_are_loaded_under_their_settings_only() {
        let store = tmp_store("settings");
        let mut r = sample();
        r.keep_in(TrieFile::new(&store, None, "z3 -in"));
        r.save(false);
        r.wait_saved();
        assert!(
            !sidecar::path_for(&store, "trie").exists(),
            "saved below FIRST_SAVE"
        );
        // An interval after the last write, a block writes it.
        r.file.as_mut().unwrap().saved_at -= SAVE_INTERVAL;
        r.save(false);
        r.wait_saved();
        assert!(sidecar::path_for(&store, "trie").exists());
        std::fs::remove_file(sidecar::path_for(&store, "trie")).unwrap();
        // Unchanged since: not written again, at a block or at the end.
        r.file.as_mut().unwrap().saved_at -= SAVE_INTERVAL;
        r.save(false);
        r.wait_saved();
        r.save(true);
        r.wait_saved();
        assert!(!sidecar::path_for(&store, "trie").exists());
        // Changed within the interval: written at the end only.
        r.file.as_mut().unwrap().saved_at = Instant::now();
        r.extend(0, b"(assert true)").unwrap();
        r.save(false);
        r.wait_saved();
        assert!(
            !sidecar::path_for(&store, "trie").exists(),
            "saved within the interval"
        );
        r.save(true);
        r.wait_saved();
        assert!(sidecar::path_for(&store, "trie").exists());

        let mut next = session_over(&store, "z3 -in");
        next.begin("(set-option :produce-models true)");
        assert_eq!(paths(&next), paths(&r));
        assert_eq!(next.loaded_nodes, 8);
        // Nothing changed: nothing is written at the end.
        let before = std::fs::metadata(sidecar::path_for(&store, "trie"))
            .unwrap()
            .modified()
            .unwrap();
        next.save(true);
        next.wait_saved();
        let after = std::fs::metadata(sidecar::path_for(&store, "trie"))
            .unwrap()
            .modified()
            .unwrap();
        assert_eq!(before, after);

        for (settings, root) in [
            ("cvc5 --incremental", "(set-option :produce-models true)"),
            ("z3 -in", "(set-option :produce-models false)"),
        ] {
            let mut other = session_over(&store, settings);
            other.begin(root);
            assert_eq!(other.nodes.len(), 1, "{settings} {root}");
        }
        // Taken at a later block whose root is the saved one, among the first few only.
        let mut later = session_over(&store, "z3 -in");
        later.begin("");
        later.begin("(set-option :produce-models true)");
        assert_eq!(paths(&later), paths(&r));
        let mut late = session_over(&store, "z3 -in");
        for _ in 0..LOAD_BLOCKS {
            late.begin("(set-option :a 1)");
        }
        assert!(
            late.file.as_ref().unwrap().stash.is_none(),
            "kept past its blocks"
        );
        late.begin("(set-option :produce-models true)");
        assert_eq!(late.nodes.len(), 1);
        let _ = std::fs::remove_file(sidecar::path_for(&store, "trie"));
    }

    /// A write that fails (a directory that is not there) is tried again only after the
    /// interval, not at every block; and at the end.
    #[test]
    fn a_failed_write_waits_for_the_interval() {
        let store = std::env::temp_dir()
            .join(format!("smtproxy-no-such-dir-{}", std::process::id()))
            .join("s.sqlite3");
        let mut r = sample();
        r.keep_in(TrieFile::new(&store, None, "z3"));
        r.file.as_mut().unwrap().saved_at -= SAVE_INTERVAL;
        let before = r.file.as_ref().unwrap().saved_at;
        r.save(false);
        r.wait_saved();
        let f = r.file.as_ref().unwrap();
        assert!(f.saved_at > before, "the attempt was not noted");
        assert_ne!(f.saved_changes, r.changes, "counted as written");
        let tried = f.saved_at;
        r.extend(0, b"(assert false)").unwrap();
        r.save(false);
        r.wait_saved();
        assert_eq!(
            r.file.as_ref().unwrap().saved_at,
            tried,
            "tried again at once"
        );
        r.save(true);
        r.wait_saved();
        assert!(
            r.file.as_ref().unwrap().saved_at > tried,
            "not tried at the end"
        );
    }

    /// A save starts the write on a thread and returns; the writes of two saves land in
    /// order (the file holds the later trie), and a trie is counted as saved once its
    /// write is over.
    #[test]
    fn writes_go_on_behind_the_session_in_order() {
        let store = tmp_store("behind");
        let mut r = sample();
        r.keep_in(TrieFile::new(&store, None, "z3 -in"));
        r.save(true);
        assert!(
            r.file.as_ref().unwrap().writing.is_some(),
            "no write started"
        );
        r.extend(0, b"(assert (= 1 1))").unwrap();
        r.save(true);
        let changes = r.changes;
        r.wait_saved();
        let f = r.file.as_ref().unwrap();
        assert!(f.writing.is_none());
        assert_eq!(f.saved_changes, changes);
        let mut next = session_over(&store, "z3 -in");
        next.begin("(set-option :produce-models true)");
        assert_eq!(paths(&next), paths(&r));
        let _ = std::fs::remove_file(sidecar::path_for(&store, "trie"));
    }

    /// A store bound whose trie share is a byte short of the trie's file keeps it from
    /// being written; at that share it is written, and the file fills the share exactly.
    #[test]
    fn a_trie_over_its_share_of_the_store_is_not_written() {
        let store = tmp_store("share");
        let mut r = sample();
        let file = r.encode().unwrap().len() as u64 + sidecar::HEADER_LEN as u64;
        r.keep_in(TrieFile::new(&store, Some(file * 20 - 20), "z3"));
        r.save(true);
        r.wait_saved();
        assert!(!sidecar::path_for(&store, "trie").exists());
        r.keep_in(TrieFile::new(&store, Some(file * 20), "z3"));
        r.save(true);
        r.wait_saved();
        let written = std::fs::metadata(sidecar::path_for(&store, "trie")).unwrap();
        assert_eq!(written.len(), Budget::split(file * 20).trie);
        let _ = std::fs::remove_file(sidecar::path_for(&store, "trie"));
    }
}
