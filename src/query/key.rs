//! Cache keys. A key is a fixed, versioned function of the canonical text: blake3 (a fixed,
//! specified hash function) over a length-prefixed encoding of `KEY_FORMAT_VERSION`, the
//! logic, the answer-changing options the caller passes (in the given order) and the
//! canonical text, truncated to 128 bits. It does not depend on term ids, allocation
//! order, hasher seeds or library hasher versions, so keys are stable across runs and
//! processes. Any change to the encoding or to canonical text must bump the version.

/// Version of the key encoding and of the canonical text it hashes.
pub const KEY_FORMAT_VERSION: u32 = 1;

fn put(h: &mut blake3::Hasher, bytes: &[u8]) {
    h.update(&(bytes.len() as u64).to_le_bytes());
    h.update(bytes);
}

/// The 128-bit key of a canonical component text under a logic and answer-changing options.
pub fn key(canon_text: &str, logic: &str, options: &[(&str, &str)]) -> [u8; 16] {
    let mut h = blake3::Hasher::new();
    h.update(b"smtproxy-key");
    h.update(&KEY_FORMAT_VERSION.to_le_bytes());
    put(&mut h, logic.as_bytes());
    h.update(&(options.len() as u64).to_le_bytes());
    for (k, v) in options {
        put(&mut h, k.as_bytes());
        put(&mut h, v.as_bytes());
    }
    put(&mut h, canon_text.as_bytes());
    let mut out = [0u8; 16];
    out.copy_from_slice(&h.finalize().as_bytes()[..16]);
    out
}

/// Lower-case hex of a key (for logs and stores that want text).
pub fn key_hex(k: &[u8; 16]) -> String {
    k.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_golden() {
        let k = key(
            "(declare-fun sp!c0 () (_ BitVec 8))\n(assert (bvult sp!c0 #x05))\n",
            "QF_ABV",
            &[],
        );
        assert_eq!(key_hex(&k), "52d0b464c555ebbcc85011706d970512");
    }

    #[test]
    fn key_separates_fields() {
        let a = key("ab", "c", &[]);
        let b = key("b", "ac", &[]);
        assert_ne!(a, b);
        assert_ne!(key("x", "L", &[("k", "v")]), key("x", "L", &[]));
        assert_ne!(key("x", "L", &[("k", "v1")]), key("x", "L", &[("k1", "v")]));
        assert_eq!(key("x", "L", &[("k", "v")]), key("x", "L", &[("k", "v")]));
    }
}
