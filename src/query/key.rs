//! Cache keys. A key is a fixed, versioned function of the canonical text: blake3 (a fixed,
//! specified hash function) over a length-prefixed encoding of `KEY_FORMAT_VERSION`, the
//! logic, the answer-changing options the caller passes (in the given order) and the
//! canonical text, truncated to 128 bits. It does not depend on term ids, allocation
//! order, hasher seeds or library hasher versions, so keys are stable across runs and
//! processes. Any change to the encoding or to canonical text must bump the version.
//!
//! Exact keys (`exact_key`) name a component as the client wrote it: the digests of its
//! conjuncts' printed text (`conjunct_digest`, in backend names), sorted, and the names
//! and sorts of its free constants, sorted; under the same version, with their own domain
//! separation, so they never equal a canonical key. Two components with one exact key are
//! the same formula. They cost O(conjuncts) per lookup where the canonical form walks the
//! whole component: a second run of a tool over the same program asks the same components
//! under the same names, and each conjunct's digest is computed once in its lifetime.

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

/// The digest of one conjunct's printed text (see `exact_key`).
pub fn conjunct_digest(text: &str) -> [u8; 16] {
    let mut h = blake3::Hasher::new();
    h.update(b"smtproxy-conjunct");
    h.update(&KEY_FORMAT_VERSION.to_le_bytes());
    put(&mut h, text.as_bytes());
    let mut out = [0u8; 16];
    out.copy_from_slice(&h.finalize().as_bytes()[..16]);
    out
}

/// The exact key of a component under a logic: its conjunct digests and its free
/// constants' `(name, sort text)`, each in any order (both are sorted here, digests
/// deduplicated). The caller makes sure no name occurs twice among `constants`.
pub fn exact_key(logic: &str, digests: &[[u8; 16]], constants: &[(&str, &str)]) -> [u8; 16] {
    let mut ds = digests.to_vec();
    ds.sort_unstable();
    ds.dedup();
    let mut cs = constants.to_vec();
    cs.sort_unstable();
    let mut h = blake3::Hasher::new();
    h.update(b"smtproxy-exact");
    h.update(&KEY_FORMAT_VERSION.to_le_bytes());
    put(&mut h, logic.as_bytes());
    h.update(&(ds.len() as u64).to_le_bytes());
    for d in &ds {
        h.update(d);
    }
    h.update(&(cs.len() as u64).to_le_bytes());
    for (n, s) in &cs {
        put(&mut h, n.as_bytes());
        put(&mut h, s.as_bytes());
    }
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
    fn exact_key_golden_and_order_free() {
        let (a, b) = (
            conjunct_digest("(bvult x #x05)"),
            conjunct_digest("(= y x)"),
        );
        let cs = [("x", "(_ BitVec 8)"), ("y", "(_ BitVec 8)")];
        let k = exact_key("QF_BV", &[a, b], &cs);
        assert_eq!(
            key_hex(&k),
            key_hex(&exact_key("QF_BV", &[b, a, b], &[cs[1], cs[0]]))
        );
        assert_eq!(key_hex(&k), "3755e3122a334bd0e634be08f883739a");
        // Another sort, logic or conjunct is another key; never a canonical key.
        assert_ne!(
            k,
            exact_key(
                "QF_BV",
                &[a, b],
                &[("x", "(_ BitVec 8)"), ("y", "(_ BitVec 4)")]
            )
        );
        assert_ne!(k, exact_key("QF_ABV", &[a, b], &cs));
        assert_ne!(k, exact_key("QF_BV", &[a], &cs));
        assert_ne!(k, key("(bvult x #x05)", "QF_BV", &[]));
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
