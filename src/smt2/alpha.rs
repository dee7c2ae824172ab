//! The client's commands since its last `(reset)` as a key that does not depend on the
//! names it declared: a symbolic executor that re-declares every query after a `(reset)`
//! under fresh names (`a_3` where the last query had `a_1`) sends the same block of
//! commands again and again, and this key finds it without parsing.
//!
//! Invariants:
//! * The key is a function of the block's tokens alone: white space and comments do not
//!   count; each symbol that a `declare-fun`, `declare-const`, `define-fun` or
//!   `define-const` of the block introduced counts as the ordinal of its first declaration,
//!   every other token as its own text. Two blocks that differ only by a one-to-one renaming
//!   of their declared names get the same key.
//! * The key is a hint, never a proof: a caller that answers from it must check what it
//!   finds against the parsed query (a model is evaluated on the client's assertions), so a
//!   lexical slip (a name that shadows a theory symbol, a collision) can cost a lookup but
//!   never an answer.
//! * The key goes into the result store, so it is a fixed, versioned function of the
//!   normalised bytes: blake3 over [`BLOCK_KEY_DOMAIN`] (which names the encoding's
//!   version and keeps block keys apart from every component key) and each command's
//!   normalised bytes, truncated to 128 bits. Any change to the normalisation must change
//!   the domain string.
//! * Cost is linear in the command's bytes, with no allocation past the first few
//!   declarations of a block.
//! * A block is `repeatable` when it began at a `(reset)` or holds no `push`/`pop`: a
//!   session of scopes with no reset is one block that only grows, whose keys never recur.

use super::lex::{command_parts, comment_end, is_space, quoted_stop, string_end, token_end};
use rustc_hash::FxHashMap;

/// What a block's hash starts with: the version of the normalisation below, and a
/// separation from the result store's component keys (`query::key`).
pub const BLOCK_KEY_DOMAIN: &[u8] = b"smtproxy block key, normalisation 1\0";

/// Normalised bytes held before they are hashed.
const PENDING_MAX: usize = 16 << 10;

/// A 128-bit key of a block of commands.
pub type BlockKey = [u8; 16];

/// The running key of the commands since the last `(reset)`.
#[derive(Clone)]
pub struct Block {
    /// The hash of the commands so far (after the domain string).
    hash: blake3::Hasher,
    /// Declared names, by their text, to the ordinal of their first declaration.
    names: FxHashMap<Box<str>, u32>,
    /// A token can be in `names` only if its bit is set here (`filter_bit`): most tokens
    /// are the theory's symbols and keywords, told apart from the block's names without
    /// hashing them.
    filter: [u64; 4],
    /// Normalised bytes not yet hashed: hashing a few KiB at once lets blake3 work on
    /// several chunks in parallel, where a command at a time goes one chunk at a time.
    pending: Vec<u8>,
    /// Where the last command's normalised bytes start in `pending`.
    last_start: usize,
    /// Whether the last command held a quoted symbol or a `:named` label: a name spelt
    /// another way (`|x|` is `x`), or one introduced outside a declaration.
    last_opaque: bool,
    /// Commands added since the last `clear`.
    commands: u64,
    /// Whether the block began at a `clear` (a `(reset)`), not at the session's start.
    after_reset: bool,
    /// Whether a `push` or `pop` is among its commands.
    scoped: bool,
    /// Whether a declaration named a token that reads as a literal or a keyword.
    literal_named: bool,
}

/// Whether a command of this head introduces the symbol that follows it.
fn declares(head: &str) -> bool {
    matches!(
        head,
        "declare-fun" | "declare-const" | "define-fun" | "define-const"
    )
}

impl Default for Block {
    fn default() -> Self {
        let mut hash = blake3::Hasher::new();
        hash.update(BLOCK_KEY_DOMAIN);
        Block {
            hash,
            names: FxHashMap::default(),
            filter: [0; 4],
            pending: Vec::new(),
            last_start: 0,
            last_opaque: false,
            commands: 0,
            after_reset: false,
            scoped: false,
            literal_named: false,
        }
    }
}

/// Where a token's bit is in `Block::filter`: a function of its first and last bytes and
/// its length, which tells `a_12` from `assert`, `select` or `BitVec` at no cost.
#[inline]
fn filter_bit(tok: &str) -> (usize, u64) {
    let b = tok.as_bytes();
    let (first, last) = (b.first().copied(), b.last().copied());
    let h = u32::from(first.unwrap_or(0))
        .wrapping_mul(31)
        .wrapping_add(u32::from(last.unwrap_or(0)))
        .wrapping_mul(31)
        .wrapping_add(b.len() as u32)
        .wrapping_mul(0x9E37_79B1)
        >> 24;
    ((h >> 6) as usize & 3, 1 << (h & 63))
}

impl Block {
    /// Forget every command (a `(reset)`).
    pub fn clear(&mut self) {
        self.hash.reset();
        self.hash.update(BLOCK_KEY_DOMAIN);
        self.names.clear();
        self.filter = [0; 4];
        self.pending.clear();
        self.last_start = 0;
        self.commands = 0;
        self.after_reset = true;
        self.scoped = false;
        self.literal_named = false;
    }

    /// Whether the block can come again: it began at a `(reset)` (a symbolic executor's
    /// query), or it has no scopes (a whole session that is one query, as a KLEE query
    /// is). A session of pushes and pops with no reset is one block that only grows: each
    /// of its check-sats has a key no later one shares.
    pub fn repeatable(&self) -> bool {
        self.after_reset || !self.scoped
    }

    /// Commands added since the last `clear`.
    pub fn len(&self) -> u64 {
        self.commands
    }

    pub fn is_empty(&self) -> bool {
        self.commands == 0
    }

    /// Add the command `text` (one whole command as the client sent it).
    pub fn add(&mut self, text: &str) {
        self.add_parts(text, command_parts(text));
    }

    /// [`add`](Self::add), given `parts`, the command's `lex::command_parts`.
    pub fn add_parts(&mut self, text: &str, parts: Option<(&str, usize)>) {
        if self.pending.len() >= PENDING_MAX {
            self.hash.update(&self.pending);
            self.pending.clear();
        }
        self.last_start = self.pending.len();
        self.last_opaque = false;
        let b = text.as_bytes();
        // The symbol after the head of a declaration is the name it declares.
        self.scoped |= matches!(parts, Some(("push" | "pop", _)));
        let declared_at = parts.filter(|(h, _)| declares(h)).map(|(_, at)| at);
        let mut i = 0;
        while i < b.len() {
            let c = b[i];
            if is_space(c) {
                i += 1;
                continue;
            }
            let end = match c {
                b';' => {
                    i = comment_end(b, i);
                    continue;
                }
                b'(' | b')' => {
                    self.pending.push(c);
                    i += 1;
                    continue;
                }
                b'"' => string_end(b, i).unwrap_or(b.len()),
                b'|' => {
                    self.last_opaque = true;
                    quoted_stop(b, i + 1).map_or(b.len(), |j| j + 1)
                }
                _ => token_end(b, i).max(i + 1),
            };
            let tok = &text[i..end.min(b.len())];
            self.last_opaque |= tok == ":named";
            // Numerals, `#x`/`#b` literals and keywords are not looked up, unless a
            // declaration (an erroneous one) named one of them.
            let literal = c.is_ascii_digit() || c == b'#' || c == b':';
            let skip = literal && !self.literal_named;
            let (word, bit) = filter_bit(tok);
            let maybe_name = !skip && self.filter[word] & bit != 0;
            let ordinal = match maybe_name.then(|| self.names.get(tok)).flatten() {
                Some(&n) => Some(n),
                None if Some(i) == declared_at => {
                    self.literal_named |= literal;
                    let n = self.names.len() as u32;
                    self.names.insert(tok.into(), n);
                    self.filter[word] |= bit;
                    Some(n)
                }
                None => None,
            };
            match ordinal {
                // A declared name: a byte no token starts with, then its ordinal.
                Some(n) => {
                    self.pending.push(0x01);
                    self.pending.extend_from_slice(&n.to_le_bytes());
                }
                None => {
                    self.pending.extend_from_slice(tok.as_bytes());
                    self.pending.push(0x00);
                }
            }
            i = end;
        }
        // Commands are separated so that two commands never read as one.
        self.pending.push(0x02);
        self.commands += 1;
    }

    /// The normalised bytes of the last command added (empty before any): two commands
    /// after blocks of equal bytes have equal bytes exactly when they are the same command
    /// up to the renaming of the block's declared names.
    pub fn last_command(&self) -> &[u8] {
        &self.pending[self.last_start..]
    }

    /// Whether the last command held a quoted symbol (`|x|`, which is `x`) or a `:named`
    /// label (a name introduced outside a declaration).
    pub fn last_opaque(&self) -> bool {
        self.last_opaque
    }

    /// The key of the commands added so far.
    pub fn key(&self) -> BlockKey {
        let hash = if self.pending.is_empty() {
            self.hash.finalize()
        } else {
            let mut h = self.hash.clone();
            h.update(&self.pending);
            h.finalize()
        };
        let mut k = [0u8; 16];
        k.copy_from_slice(&hash.as_bytes()[..16]);
        k
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(cmds: &[&str]) -> BlockKey {
        let mut b = Block::default();
        for c in cmds {
            b.add(c);
        }
        b.key()
    }

    #[test]
    fn renamed_declarations_give_the_same_key() {
        let a = key(&[
            "(declare-fun a_1 () (_ BitVec 8))",
            "(assert (= a_1 (select A #x000003e9)))",
            "(check-sat)",
        ]);
        let b = key(&[
            "(declare-fun  a_7 ()   (_ BitVec 8)) ; fresh name",
            "(assert (= a_7\n (select A #x000003e9)))",
            "(check-sat)",
        ]);
        assert_eq!(a, b);
    }

    #[test]
    fn a_different_term_or_order_gives_another_key() {
        let base = key(&["(declare-fun x () Int)", "(assert (> x 1))", "(check-sat)"]);
        assert_ne!(
            base,
            key(&["(declare-fun x () Int)", "(assert (> x 2))", "(check-sat)"])
        );
        // A name that is not declared in the block counts by its text.
        assert_ne!(
            key(&["(assert (> y 1))", "(check-sat)"]),
            key(&["(assert (> z 1))", "(check-sat)"])
        );
        // Names swapped between two declarations: a renaming like any other.
        let two = |p: &str, q: &str| {
            key(&[
                &format!("(declare-fun {p} () Int)"),
                &format!("(declare-fun {q} () Bool)"),
                &format!("(assert (and {q} (> {p} 1)))"),
            ])
        };
        assert_eq!(two("x", "y"), two("u", "v"));
        assert_eq!(two("x", "y"), two("y", "x"));
        // The same declarations in another order are another block (ordinals follow the
        // order of declaration, as the models kept under the key do).
        let swapped = key(&[
            "(declare-fun y () Bool)",
            "(declare-fun x () Int)",
            "(assert (and y (> x 1)))",
        ]);
        assert_ne!(two("x", "y"), swapped);
        // Command boundaries count.
        assert_ne!(key(&["(push 1)", "(pop 1)"]), key(&["(push 1)(pop 1)"]));
    }

    #[test]
    fn strings_and_quoted_symbols_are_single_tokens() {
        let a = key(&[
            "(declare-fun |a b| () Int)",
            "(assert (= |a b| 1))",
            "(echo \"x ; y\")",
        ]);
        let b = key(&[
            "(declare-fun |c d| () Int)",
            "(assert (= |c d| 1))",
            "(echo \"x ; y\")",
        ]);
        assert_eq!(a, b);
        let c = key(&[
            "(declare-fun |c d| () Int)",
            "(assert (= |c d| 1))",
            "(echo \"x ;  y\")",
        ]);
        assert_ne!(a, c);
    }

    /// The key goes on disk: it must not change unless `BLOCK_KEY_DOMAIN` does.
    #[test]
    fn key_golden() {
        let k = key(&[
            "(declare-fun a_1 () (_ BitVec 8))",
            "(assert (bvugt a_1 #x10))",
            "(check-sat)",
        ]);
        let hex: String = k.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex, "51ff2a5e3d7d3b3c2478870da8402fae");
        assert_eq!(key(&[]), {
            let mut k = [0u8; 16];
            k.copy_from_slice(&blake3::hash(BLOCK_KEY_DOMAIN).as_bytes()[..16]);
            k
        });
    }

    #[test]
    fn a_declared_literal_counts_as_a_name() {
        // An erroneous declaration of a numeral still numbers it, as a declared name.
        let a = key(&["(declare-fun 5 () Int)", "(assert (= 5 x))"]);
        let b = key(&["(declare-fun 6 () Int)", "(assert (= 6 x))"]);
        assert_eq!(a, b);
        assert_ne!(a, key(&["(declare-fun 6 () Int)", "(assert (= 5 x))"]));
    }

    #[test]
    fn long_blocks_hash_as_one_stream() {
        // Commands past the pending buffer's bound give the key of the same bytes.
        let cmds: Vec<String> = (0..2000)
            .map(|i| {
                format!(
                    "(declare-fun a_{i} () Bool)(assert (= a_{i} (= x #x{:02x})))",
                    i % 256
                )
            })
            .collect();
        let mut b = Block::default();
        let mut keys = Vec::new();
        for c in &cmds {
            b.add(c);
            keys.push(b.key());
        }
        let again: Vec<&str> = cmds.iter().map(String::as_str).collect();
        assert_eq!(keys.last(), Some(&key(&again)));
        assert_eq!(keys[999], key(&again[..1000]));
        assert_ne!(keys[999], keys[1000]);
    }

    #[test]
    fn clear_starts_a_new_block() {
        let mut b = Block::default();
        b.add("(declare-fun x () Int)");
        b.clear();
        assert!(b.is_empty());
        b.add("(assert (> x 1))");
        // After the clear, x is no longer a declared name: it counts by its text.
        assert_eq!(b.key(), key(&["(assert (> x 1))"]));
        assert_ne!(b.key(), key(&["(assert (> y 1))"]));
    }

    #[test]
    fn a_block_with_scopes_repeats_only_after_a_reset() {
        let mut b = Block::default();
        b.add("(declare-fun x () Int)");
        b.add("(check-sat)");
        assert!(b.repeatable());
        b.add("(push 1)");
        assert!(!b.repeatable());
        b.clear();
        b.add("(push 1)");
        assert!(b.repeatable());
    }

    #[test]
    fn any_bytes_are_taken() {
        let mut b = Block::default();
        for t in [
            "(",
            ")",
            "|unterminated",
            "\"open",
            "#",
            ";only a comment",
            "\u{e9}(x",
        ] {
            b.add(t);
        }
        assert_eq!(b.len(), 7);
    }
}
