//! Result stores: where smtproxy remembers the verdicts (and models) of check-sat
//! queries it has already answered.
//!
//! Invariants of this module:
//!
//! * A cache key ([`Key`]) is a fixed 128-bit hash of a canonical query component,
//!   computed elsewhere; the stores treat it as opaque bytes.
//! * Only definite answers are stored: [`Verdict`] has exactly `Sat` and `Unsat`, so
//!   `unknown` (or a timeout) cannot be represented, let alone cached.
//! * Entries are facts: two writers that store the same key store the same verdict,
//!   so every tier is "first writer wins" and nothing is ever overwritten or merged.
//! * The model text is opaque: it is stored and returned byte for byte.
//! * Every persistent byte string is an [`Entry::encode`] output whose first byte is
//!   [`FORMAT_VERSION`] (Redis, exports, stores made before format 3) or an
//!   [`Entry::encode_compact`] output whose first byte is [`COMPACT_FORMAT_VERSION`]
//!   (on-disk stores made since: the model in [`compact`] form); a reader rejects any
//!   other version (or any malformed byte string) with [`CacheError`] rather than
//!   guessing.
//! * An encoded entry ends with a checksum of its key and its bytes, so an entry that was
//!   damaged, or that sits under a key it was not stored for, is rejected rather than
//!   served: an unsat verdict is trusted as it is read (a sat one is checked against its
//!   model anyway).
//! * Stores never panic on bad input, bad files or unreachable servers: they return
//!   [`CacheError`]. The [`TieredCache`] turns an error into a single warning on
//!   stderr and continues without the failing tier, so a cache problem can slow
//!   smtproxy down but never make it give a wrong answer or stop.
//! * [`cex::SetIndex`] is a bounded, in-memory subset/superset index used for
//!   counterexample reasoning; it is not persisted.
//! * State that is not made of entries (the trie of repeated blocks) is kept in a
//!   [`sidecar`] file beside the disk store, under its own header and checksum.
//! * A store's byte bound covers all of its files on disk: [`budget`] shares it between
//!   the SQLite file, its log and the trie.

pub mod admin;
pub mod behind;
pub mod budget;
pub mod cex;
pub mod compact;
pub mod disk;
pub mod memory;
pub mod redis;
pub mod secret;
pub mod sidecar;
pub mod tiered;

pub use cex::SetIndex;
pub use disk::DiskStore;
pub use memory::MemoryStore;
pub use redis::RedisStore;
pub use secret::FleetSecret;
pub use tiered::{CacheConfig, CacheStats, TieredCache};

use std::fmt;

/// The version byte that starts every encoded [`Entry`] (and is recorded in the
/// on-disk store's `meta` table). Version 2 added the checksum.
pub const FORMAT_VERSION: u8 = 2;

/// The version byte of an [`Entry::encode_compact`] entry: format 2 with the model in
/// [`compact`] form and no length field (the model is all that lies between the header
/// and the checksum, so such an entry is stored alone, never followed by a tag). Written
/// to on-disk stores made since (their `meta` records it); [`Entry::decode`] reads both.
pub const COMPACT_FORMAT_VERSION: u8 = 3;

/// The version of the on-disk store's tables (`schema_version` in its `meta` table),
/// separate from the entries' [`FORMAT_VERSION`]: 1 had `results(key, value)` only, 2
/// adds each entry's worth (solve time, hits, last use, creation).
pub const SCHEMA_VERSION: i64 = 2;

/// A 128-bit cache key: the hash of a canonical query component.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Key(pub [u8; 16]);

/// What an entry costs in the memory tier beside its model text (the 16-byte key, the
/// entry, the LRU's linked node and its map slot, rounded to the allocator's classes).
pub const ENTRY_OVERHEAD: usize = 112;

impl Key {
    /// Lower-case hexadecimal, 32 characters.
    pub fn to_hex(&self) -> String {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut s = String::with_capacity(32);
        for b in self.0 {
            s.push(HEX[(b >> 4) as usize] as char);
            s.push(HEX[(b & 15) as usize] as char);
        }
        s
    }

    /// Parses the output of [`Key::to_hex`] (either case).
    pub fn from_hex(s: &str) -> Option<Key> {
        let b = s.as_bytes();
        if b.len() != 32 {
            return None;
        }
        let nib = |c: u8| -> Option<u8> {
            match c {
                b'0'..=b'9' => Some(c - b'0'),
                b'a'..=b'f' => Some(c - b'a' + 10),
                b'A'..=b'F' => Some(c - b'A' + 10),
                _ => None,
            }
        };
        let mut k = [0u8; 16];
        for i in 0..16 {
            k[i] = (nib(b[2 * i])? << 4) | nib(b[2 * i + 1])?;
        }
        Some(Key(k))
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Key({})", self.to_hex())
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_hex())
    }
}

/// A definite check-sat answer. `unknown` is deliberately not representable.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum Verdict {
    Sat,
    Unsat,
}

/// A cached answer: the verdict and, for `sat`, optionally a model in canonical names.
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Entry {
    pub verdict: Verdict,
    pub model: Option<String>,
}

// Encoding, version 2:
//   byte 0      FORMAT_VERSION (2)
//   byte 1      verdict: 1 = sat, 2 = unsat
//   byte 2      0 = no model, 1 = model follows
//   bytes 3..7  (only if model) model length, u32 little-endian
//   bytes 7..   (only if model) model text, UTF-8, exactly that many bytes
//   last 8      checksum: the first 8 bytes of blake3("smtproxy-entry" || key || all the
//               bytes before the checksum)
// Nothing may follow.
//
// Version 3 (COMPACT_FORMAT_VERSION): bytes 0..3 as above (byte 0 is 3), then, only if
// model, compact::pack of the model text (no length: it ends where the checksum starts),
// then the same checksum.
const V_SAT: u8 = 1;
const V_UNSAT: u8 = 2;
const CHECKSUM_LEN: usize = 8;

fn checksum(k: &Key, body: &[u8]) -> [u8; CHECKSUM_LEN] {
    let mut h = blake3::Hasher::new();
    h.update(b"smtproxy-entry");
    h.update(&k.0);
    h.update(body);
    let mut out = [0u8; CHECKSUM_LEN];
    out.copy_from_slice(&h.finalize().as_bytes()[..CHECKSUM_LEN]);
    out
}

impl Entry {
    pub fn sat(model: Option<String>) -> Entry {
        Entry {
            verdict: Verdict::Sat,
            model,
        }
    }

    pub fn unsat() -> Entry {
        Entry {
            verdict: Verdict::Unsat,
            model: None,
        }
    }

    /// The versioned binary form of the entry stored under `k` (see the module source for
    /// the layout).
    pub fn encode(&self, k: &Key) -> Vec<u8> {
        let model = self.model.as_deref();
        let mut out = Vec::with_capacity(7 + model.map_or(0, str::len) + CHECKSUM_LEN);
        out.push(FORMAT_VERSION);
        out.push(match self.verdict {
            Verdict::Sat => V_SAT,
            Verdict::Unsat => V_UNSAT,
        });
        match model {
            None => out.push(0),
            Some(m) => {
                out.push(1);
                // Models beyond 4 GiB are not a realistic concern; refuse to wrap.
                let len = u32::try_from(m.len()).unwrap_or(u32::MAX);
                out.extend_from_slice(&len.to_le_bytes());
                out.extend_from_slice(&m.as_bytes()[..len as usize]);
            }
        }
        let sum = checksum(k, &out);
        out.extend_from_slice(&sum);
        out
    }

    /// The entry in format 3 ([`COMPACT_FORMAT_VERSION`]): the model in [`compact`] form.
    pub fn encode_compact(&self, k: &Key) -> Vec<u8> {
        let packed = self.model.as_deref().map(compact::pack);
        let mut out = Vec::with_capacity(3 + packed.as_ref().map_or(0, Vec::len) + CHECKSUM_LEN);
        out.push(COMPACT_FORMAT_VERSION);
        out.push(match self.verdict {
            Verdict::Sat => V_SAT,
            Verdict::Unsat => V_UNSAT,
        });
        out.push(u8::from(packed.is_some()));
        out.extend_from_slice(packed.as_deref().unwrap_or_default());
        let sum = checksum(k, &out);
        out.extend_from_slice(&sum);
        out
    }

    /// [`Entry::encode`] or [`Entry::encode_compact`], by format version (3 the latter,
    /// any other the former).
    pub fn encode_as(&self, k: &Key, format: u8) -> Vec<u8> {
        if format == COMPACT_FORMAT_VERSION {
            self.encode_compact(k)
        } else {
            self.encode(k)
        }
    }

    /// Parses [`Entry::encode`] or [`Entry::encode_compact`] output read under key `k`;
    /// any other version, malformed input or a checksum that does not match (damage, or
    /// an entry under another key's name) is an error.
    pub fn decode(k: &Key, bytes: &[u8]) -> Result<Entry, CacheError> {
        let bad = |why: &str| CacheError::BadEntry(why.to_string());
        let (&version, _) = bytes.split_first().ok_or_else(|| bad("empty"))?;
        if version != FORMAT_VERSION && version != COMPACT_FORMAT_VERSION {
            return Err(CacheError::Version {
                found: version,
                expected: FORMAT_VERSION,
            });
        }
        if bytes.len() < 1 + CHECKSUM_LEN {
            return Err(bad("truncated"));
        }
        let (bytes, sum) = bytes.split_at(bytes.len() - CHECKSUM_LEN);
        if checksum(k, bytes) != sum {
            return Err(bad(
                "checksum mismatch (damaged, or stored under another key)",
            ));
        }
        let rest = &bytes[1..];
        if rest.len() < 2 {
            return Err(bad("truncated header"));
        }
        let verdict = match rest[0] {
            V_SAT => Verdict::Sat,
            V_UNSAT => Verdict::Unsat,
            other => return Err(bad(&format!("verdict byte {other}"))),
        };
        let rest = &rest[2..];
        if version == COMPACT_FORMAT_VERSION {
            let model = match bytes[2] {
                0 if rest.is_empty() => None,
                0 => return Err(bad("trailing bytes")),
                1 => Some(compact::unpack(rest).ok_or_else(|| bad("compact model"))?),
                other => return Err(bad(&format!("model flag {other}"))),
            };
            return Ok(Entry { verdict, model });
        }
        let model = match bytes[2] {
            0 => {
                if !rest.is_empty() {
                    return Err(bad("trailing bytes"));
                }
                None
            }
            1 => {
                if rest.len() < 4 {
                    return Err(bad("truncated model length"));
                }
                let len = u32::from_le_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
                let text = &rest[4..];
                if text.len() != len {
                    return Err(bad("model length mismatch"));
                }
                Some(String::from_utf8(text.to_vec()).map_err(|_| bad("model is not UTF-8"))?)
            }
            other => return Err(bad(&format!("model flag {other}"))),
        };
        Ok(Entry { verdict, model })
    }

    /// Splits `bytes` into an [`Entry::encode`] output (by its own length fields, unchecked)
    /// and what follows it; None when the header or lengths do not fit, or for a format-3
    /// entry (which has no length field and is never followed by anything).
    pub fn split_encoded(bytes: &[u8]) -> Option<(&[u8], &[u8])> {
        if *bytes.first()? != FORMAT_VERSION {
            return None;
        }
        let len = match *bytes.get(2)? {
            0 => 3 + CHECKSUM_LEN,
            1 => {
                let l = bytes.get(3..7)?;
                let l = u32::from_le_bytes([l[0], l[1], l[2], l[3]]) as usize;
                7usize.checked_add(l)?.checked_add(CHECKSUM_LEN)?
            }
            _ => return None,
        };
        (bytes.len() >= len).then(|| bytes.split_at(len))
    }

    /// Approximate heap bytes an entry holds in the memory tier, for its byte bound: the
    /// model text, and [`ENTRY_OVERHEAD`] for the key, the entry and the LRU's node and map
    /// slot around them.
    pub fn approx_size(&self) -> usize {
        ENTRY_OVERHEAD + self.model.as_ref().map_or(0, String::len)
    }
}

/// Why a store could not do what was asked.
#[derive(Debug, thiserror::Error)]
pub enum CacheError {
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("redis: {0}")]
    Redis(#[from] ::redis::RedisError),
    #[error("i/o: {0}")]
    Io(#[from] std::io::Error),
    #[error("unsupported entry format version {found} (this build reads {expected})")]
    Version { found: u8, expected: u8 },
    #[error("unsupported store schema version {found} (this build reads up to {expected})")]
    Schema { found: i64, expected: i64 },
    #[error("malformed entry: {0}")]
    BadEntry(String),
    #[error("not an smtproxy cache or corrupt: {0}")]
    Corrupt(String),
    #[error("read-only: {0}")]
    ReadOnly(String),
    #[error("unavailable: {0}")]
    Unavailable(String),
}

impl CacheError {
    /// True when only one stored entry is bad (the store itself still works).
    pub fn is_entry_error(&self) -> bool {
        matches!(self, CacheError::Version { .. } | CacheError::BadEntry(_))
    }
}

/// One tier of the result cache.
pub trait Store: Send {
    fn get(&mut self, k: &Key) -> Result<Option<Entry>, CacheError>;
    fn put(&mut self, k: &Key, e: &Entry) -> Result<(), CacheError>;
    fn name(&self) -> &'static str;
    /// Makes buffered writes durable (or handed off); a no-op by default.
    fn flush(&mut self) -> Result<(), CacheError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_hex_round_trip() {
        let k = Key([0x01, 0xab, 0xff, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 0x7f]);
        let h = k.to_hex();
        assert_eq!(h, "01abff000102030405060708090a0b7f");
        assert_eq!(Key::from_hex(&h), Some(k));
        assert_eq!(Key::from_hex("xyz"), None);
    }

    #[test]
    fn entry_round_trip() {
        let k = Key([7; 16]);
        for e in [
            Entry::unsat(),
            Entry::sat(None),
            Entry::sat(Some(String::new())),
            Entry::sat(Some(
                "((x0 #x01) (a0 ((as const (Array (_ BitVec 32) (_ BitVec 8))) #x00)))".into(),
            )),
            Entry::sat(Some("ünïcode ✓".into())),
        ] {
            assert_eq!(Entry::decode(&k, &e.encode(&k)).unwrap(), e);
        }
    }

    #[test]
    fn entry_unknown_version_rejected() {
        let k = Key([7; 16]);
        let mut b = Entry::sat(Some("m".into())).encode(&k);
        b[0] = 4;
        assert!(matches!(
            Entry::decode(&k, &b),
            Err(CacheError::Version {
                found: 4,
                expected: 2
            })
        ));
        // A format-2 entry relabelled as format 3 (or back) fails its checksum.
        b[0] = COMPACT_FORMAT_VERSION;
        assert!(Entry::decode(&k, &b).is_err());
        let mut c = Entry::sat(Some("m".into())).encode_compact(&k);
        c[0] = FORMAT_VERSION;
        assert!(Entry::decode(&k, &c).is_err());
        b[0] = 1;
        assert!(matches!(
            Entry::decode(&k, &b),
            Err(CacheError::Version { found: 1, .. })
        ));
    }

    #[test]
    fn entry_malformed_rejected() {
        let k = Key([7; 16]);
        let good = Entry::sat(Some("model".into())).encode(&k);
        for cut in 0..good.len() {
            assert!(
                Entry::decode(&k, &good[..cut]).is_err(),
                "prefix {cut} accepted"
            );
        }
        let mut extra = good.clone();
        extra.push(0);
        assert!(Entry::decode(&k, &extra).is_err());
        let mut badv = good.clone();
        badv[1] = 9;
        assert!(Entry::decode(&k, &badv).is_err());
        assert!(Entry::decode(&k, &[2, 2, 0, 0]).is_err());
    }

    /// Format 3 round-trips every kind of value a model holds (bit-vectors of every width
    /// from 1 to 256, in hex and binary, bools, arrays, ints and reals), is never longer
    /// than format 2 for ASCII text (each byte of it packs to at most one), much shorter on KLEE
    /// models; every flipped bit and every cut is refused, never decoded to another entry.
    #[test]
    fn compact_entries_round_trip_and_refuse_damage() {
        let k = Key([9; 16]);
        let mut models = vec![
            String::new(),
            "true\nfalse\n".into(),
            "((as const (Array (_ BitVec 32) (_ BitVec 8))) #x26)\n(store (store ((as const (Array (_ BitVec 32) (_ BitVec 8))) #x00) #x00000025 #x05) #x0000002a #x05)\n".into(),
            "((as const (Array Int Bool)) false)\n".into(),
            "0\n-1\n(- 42)\n(/ 1 3)\n(- (/ 22 7))\n12345678901234567890123\n1.5\n".into(),
            "ünïcode ✓".into(),
        ];
        for w in 1..=256usize {
            models.push(format!("#b{}\n", "10".repeat(w).get(..w).unwrap()));
            if w % 4 == 0 {
                models.push(format!(
                    "#x{}\n",
                    "f0e1d2c3b4a59687".repeat(w).get(..w / 4).unwrap()
                ));
            }
        }
        for e in std::iter::once(Entry::unsat())
            .chain(std::iter::once(Entry::sat(None)))
            .chain(models.into_iter().map(|m| Entry::sat(Some(m))))
        {
            let b = e.encode_compact(&k);
            assert_eq!(b[0], COMPACT_FORMAT_VERSION);
            assert_eq!(Entry::decode(&k, &b).unwrap(), e);
            assert_eq!(
                Entry::decode(&k, &e.encode_as(&k, FORMAT_VERSION)).unwrap(),
                e
            );
            if e.model.as_ref().is_none_or(|m| m.is_ascii()) {
                assert!(b.len() <= e.encode(&k).len(), "{e:?}");
            }
            for cut in 0..b.len() {
                assert!(Entry::decode(&k, &b[..cut]).is_err(), "cut {cut} of {e:?}");
            }
        }
        let klee = Entry::sat(Some("(store (store (store ((as const (Array (_ BitVec 32) (_ BitVec 8))) #x00) #x00000022 #x22) #x00000027 #x27) #x00000045 #x1b)\n".into()));
        let (v2, v3) = (klee.encode(&k), klee.encode_compact(&k));
        assert!(v3.len() * 2 < v2.len(), "{} against {}", v3.len(), v2.len());
        for i in 0..v3.len() {
            for bit in 0..8 {
                let mut b = v3.clone();
                b[i] ^= 1 << bit;
                assert!(Entry::decode(&k, &b).is_err(), "byte {i} bit {bit}");
            }
        }
        assert!(Entry::decode(&Key([8; 16]), &v3).is_err(), "another key");
        assert_eq!(Entry::split_encoded(&v3), None);
    }

    /// The checksum binds an entry to its key and its bytes: an unsat entry read under
    /// another key, or with any byte changed, is refused (never served as a verdict).
    #[test]
    fn entry_checksum_binds_key_and_bytes() {
        let (k, other) = (Key([7; 16]), Key([8; 16]));
        let unsat = Entry::unsat().encode(&k);
        assert!(matches!(
            Entry::decode(&other, &unsat),
            Err(CacheError::BadEntry(m)) if m.contains("checksum")
        ));
        let sat = Entry::sat(Some("((x #x01))".into())).encode(&k);
        for i in 0..sat.len() {
            for bit in 0..8 {
                let mut b = sat.clone();
                b[i] ^= 1 << bit;
                assert!(
                    Entry::decode(&k, &b).is_err(),
                    "byte {i} bit {bit} flipped and accepted"
                );
            }
        }
        // A sat entry's bytes with the verdict byte set to unsat do not pass either.
        let mut forged = Entry::sat(None).encode(&k);
        forged[1] = 2;
        assert!(Entry::decode(&k, &forged).is_err());
    }
}
