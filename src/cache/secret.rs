//! The fleet secret: what lets a reader of a shared store trust an `unsat` it did not
//! compute. A sat entry carries its own proof (its model is evaluated on the query before
//! it is served); an unsat entry carries none, so anyone who can write to the shared
//! store could make smtproxy answer `unsat` wrongly. Entries written to Redis by a process
//! that holds the secret end with a tag, a keyed blake3 hash of the key and the entry's
//! bytes, which a writer without the secret cannot make.
//!
//! * The secret comes from `--cache-secret-file PATH` (the file's bytes, surrounding
//!   white space trimmed) or the environment variable `SMTPROXY_CACHE_SECRET`; an empty
//!   secret is refused. The MAC key is `blake3::derive_key(`[`KEY_CONTEXT`]`, secret)`.
//! * The tag is fixed and versioned: [`TAG_MAGIC`] then the first [`TAG_LEN`] bytes of
//!   `blake3::keyed_hash(mac_key, "smtproxy-tag-v1" || key || entry bytes)`; it is checked
//!   in constant time.
//! * The secret's bytes are never printed.

use std::path::Path;

/// The context string of the MAC key's derivation (a fixed, versioned function).
pub const KEY_CONTEXT: &str = "smtproxy 2024 fleet cache secret v1";
/// The byte that starts a tag after an entry.
pub const TAG_MAGIC: u8 = 0xA1;
/// Bytes of the MAC kept in a tag.
pub const TAG_LEN: usize = 16;

/// A fleet secret, as the MAC key derived from it.
#[derive(Clone)]
pub struct FleetSecret {
    key: [u8; 32],
}

impl std::fmt::Debug for FleetSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("FleetSecret(..)")
    }
}

impl PartialEq for FleetSecret {
    fn eq(&self, other: &Self) -> bool {
        blake3::Hash::from(self.key) == blake3::Hash::from(other.key)
    }
}
impl Eq for FleetSecret {}

/// Why no secret could be read.
#[derive(Debug, thiserror::Error)]
pub enum SecretError {
    #[error("cannot read the cache secret file {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("the cache secret is empty")]
    Empty,
}

impl FleetSecret {
    /// The secret from its bytes (trimmed of surrounding white space).
    pub fn from_bytes(bytes: &[u8]) -> Result<FleetSecret, SecretError> {
        let trimmed = bytes.trim_ascii();
        if trimmed.is_empty() {
            return Err(SecretError::Empty);
        }
        Ok(FleetSecret {
            key: blake3::derive_key(KEY_CONTEXT, trimmed),
        })
    }

    pub fn from_file(path: &Path) -> Result<FleetSecret, SecretError> {
        let bytes = std::fs::read(path).map_err(|source| SecretError::Read {
            path: path.display().to_string(),
            source,
        })?;
        FleetSecret::from_bytes(&bytes)
    }

    /// `--cache-secret-file` if given, else `SMTPROXY_CACHE_SECRET`, else none.
    pub fn from_args(file: Option<&Path>) -> Result<Option<FleetSecret>, SecretError> {
        if let Some(p) = file {
            return FleetSecret::from_file(p).map(Some);
        }
        match std::env::var_os("SMTPROXY_CACHE_SECRET") {
            Some(v) => FleetSecret::from_bytes(v.as_encoded_bytes()).map(Some),
            None => Ok(None),
        }
    }

    fn mac(&self, k: &[u8; 16], entry: &[u8]) -> blake3::Hash {
        let mut h = blake3::Hasher::new_keyed(&self.key);
        h.update(b"smtproxy-tag-v1");
        h.update(k);
        h.update(entry);
        h.finalize()
    }

    /// The tag that follows `entry` (an entry's encoded bytes) under the key bytes `k`.
    pub fn tag(&self, k: &[u8; 16], entry: &[u8]) -> [u8; 1 + TAG_LEN] {
        let mut out = [0u8; 1 + TAG_LEN];
        out[0] = TAG_MAGIC;
        out[1..].copy_from_slice(&self.mac(k, entry).as_bytes()[..TAG_LEN]);
        out
    }

    /// Is `tag` the tag of `entry` under `k`? (Constant time in the MAC's bytes.)
    pub fn verify(&self, k: &[u8; 16], entry: &[u8], tag: &[u8]) -> bool {
        if tag.len() != 1 + TAG_LEN || tag[0] != TAG_MAGIC {
            return false;
        }
        let want = self.mac(k, entry);
        let mut diff = 0u8;
        for (a, b) in want.as_bytes()[..TAG_LEN].iter().zip(&tag[1..]) {
            diff |= a ^ b;
        }
        diff == 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_bind_secret_key_and_bytes() {
        let s = FleetSecret::from_bytes(b"  fleet secret\n").unwrap();
        let same = FleetSecret::from_bytes(b"fleet secret").unwrap();
        let other = FleetSecret::from_bytes(b"another").unwrap();
        let (k, k2) = ([1u8; 16], [2u8; 16]);
        let e = b"entry bytes";
        let t = s.tag(&k, e);
        assert!(same.verify(&k, e, &t));
        assert!(!other.verify(&k, e, &t));
        assert!(!s.verify(&k2, e, &t));
        assert!(!s.verify(&k, b"entry bytez", &t));
        assert!(!s.verify(&k, e, &t[..TAG_LEN]));
        assert!(FleetSecret::from_bytes(b" \n").is_err());
    }

    /// The tag is a fixed function: this digest must never change within tag version 1.
    #[test]
    fn tag_is_pinned() {
        let s = FleetSecret::from_bytes(b"pinned").unwrap();
        let t = s.tag(&[9u8; 16], b"x");
        let hex: String = t.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(hex.len(), 34);
        assert_eq!(&hex[..2], "a1");
        assert_eq!(hex, PINNED_TAG);
    }
    const PINNED_TAG: &str = "a1f2968f50ead1114541a0f3567f972360";
}
