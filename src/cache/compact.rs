//! A compact, lossless byte form of model text, for the entries of format 3
//! ([`super::COMPACT_FORMAT_VERSION`]): what a store holds of a model is mostly SMT-LIB
//! punctuation, array `store` chains and hexadecimal literals, which this form writes in
//! a byte or two per token instead of their spelling.
//!
//! Invariants:
//! * Lossless for every string: [`unpack`]`(`[`pack`]`(s)) == s` byte for byte, whatever
//!   `s` is (text that is not SMT-LIB is written as literal bytes). The model text stays
//!   opaque to the stores.
//! * The form is fixed: the opcodes and the dictionary ([`DICT`]) are part of entry
//!   format 3 and are never changed or reordered (a new form is a new format version);
//!   [`pack`] is deterministic.
//! * [`unpack`] of any byte string returns a text or `None` (truncated, unknown opcode, a
//!   field out of its range, not UTF-8), never a panic; of a [`pack`] output, the text
//!   packed. (The entry's checksum, not this form, is what detects damage.)
//!
//! Layout, one token after another:
//! * `0x00..=0x7f`: that ASCII byte itself.
//! * `0x80..=0xbf`: the dictionary string [`DICT`]`[b - 0x80]`.
//! * `0xc0..=0xdf`: `#x` and `n = b - 0xbf` (1 to 32) lower-case hexadecimal digits, in
//!   `ceil(n / 2)` bytes (an odd count's first byte holds one digit).
//! * `0xe0`, varint `n`, `ceil(n / 2)` bytes: `#x` and `n` (> 32) digits, as above.
//! * `0xe1`, varint `n`, `ceil(n / 8)` bytes: `#b` and `n` (>= 1) binary digits, most
//!   significant first, the first byte holding `n mod 8` of them when that is not 0.
//! * `0xe2`, one byte: that byte itself (UTF-8 beyond ASCII).
//! * `0xe3`, varint `v`: the decimal numeral of `v` (no leading zero, 2 to 18 digits).
//!
//! Varints are LEB128 (7 bits a byte, low first), at most 10 bytes, shortest form only.

/// Strings written as one byte (`0x80 + index`). Longest first where one is a prefix of
/// another (the packer takes the first that matches). Never changed: part of format 3.
pub const DICT: [&str; 24] = [
    "((as const (Array (_ BitVec 32) (_ BitVec 8))) ",
    "((as const (Array (_ BitVec 64) (_ BitVec 8))) ",
    "(as const (Array (_ BitVec 32) (_ BitVec 8))) ",
    "(as const (Array (_ BitVec 64) (_ BitVec 8))) ",
    "((as const (Array ",
    "(as const (Array ",
    "(_ BitVec 32)",
    "(_ BitVec 64)",
    "(_ BitVec 8)",
    "(_ BitVec ",
    "(store ",
    "(define-fun ",
    "(_ bv",
    "(Array ",
    "false",
    "true",
    "(- ",
    "(/ ",
    ")) ",
    ") ",
    "))",
    ")\n",
    " ()",
    "Bool",
];

const HEX_SHORT: u8 = 0xc0;
const HEX_LONG: u8 = 0xe0;
const BIN: u8 = 0xe1;
const RAW: u8 = 0xe2;
const NUM: u8 = 0xe3;

fn put_varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// Reads a shortest-form varint at `*i`.
fn get_varint(b: &[u8], i: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let x = *b.get(*i)?;
        *i += 1;
        let part = u64::from(x & 0x7f);
        if shift == 63 && part > 1 {
            return None;
        }
        v |= part << shift;
        if x & 0x80 == 0 {
            // Shortest form: no trailing zero group (except the value 0 itself).
            if x == 0 && shift > 0 {
                return None;
            }
            return Some(v);
        }
    }
    None
}

fn hex_val(c: u8) -> Option<u8> {
    match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    }
}

/// Packs `digits` (lower-case hexadecimal) two a byte, an odd count's first byte holding
/// one.
fn put_hex(out: &mut Vec<u8>, digits: &[u8]) {
    let (head, rest) = digits.split_at(digits.len() % 2);
    if let [d] = head {
        out.push(hex_val(*d).unwrap_or(0));
    }
    for p in rest.chunks_exact(2) {
        out.push((hex_val(p[0]).unwrap_or(0) << 4) | hex_val(p[1]).unwrap_or(0));
    }
}

fn get_hex(b: &[u8], i: &mut usize, n: usize, out: &mut Vec<u8>) -> Option<()> {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = b.get(*i..*i + n.div_ceil(2))?;
    *i += bytes.len();
    out.extend_from_slice(b"#x");
    for (j, x) in bytes.iter().enumerate() {
        if j == 0 && n % 2 == 1 {
            if *x > 0x0f {
                return None;
            }
            out.push(HEX[*x as usize]);
        } else {
            out.push(HEX[(x >> 4) as usize]);
            out.push(HEX[(x & 15) as usize]);
        }
    }
    Some(())
}

/// The compact form of `text` (see the module doc).
pub fn pack(text: &str) -> Vec<u8> {
    let s = text.as_bytes();
    let mut out = Vec::with_capacity(s.len() / 2 + 8);
    let mut i = 0;
    while i < s.len() {
        let rest = &s[i..];
        if rest.starts_with(b"#x") {
            let n = rest[2..]
                .iter()
                .take_while(|c| hex_val(**c).is_some())
                .count();
            if n >= 1 {
                if n <= 32 {
                    out.push(HEX_SHORT + (n as u8 - 1));
                } else {
                    out.push(HEX_LONG);
                    put_varint(&mut out, n as u64);
                }
                put_hex(&mut out, &rest[2..2 + n]);
                i += 2 + n;
                continue;
            }
        }
        if rest.starts_with(b"#b") {
            let n = rest[2..]
                .iter()
                .take_while(|c| matches!(c, b'0' | b'1'))
                .count();
            if n >= 1 {
                out.push(BIN);
                put_varint(&mut out, n as u64);
                let bits = &rest[2..2 + n];
                let (head, body) = bits.split_at(n % 8);
                for chunk in std::iter::once(head)
                    .filter(|h| !h.is_empty())
                    .chain(body.chunks_exact(8))
                {
                    out.push(chunk.iter().fold(0u8, |a, c| (a << 1) | (c - b'0')));
                }
                i += 2 + n;
                continue;
            }
        }
        if let Some(j) = DICT.iter().position(|d| rest.starts_with(d.as_bytes())) {
            out.push(0x80 + j as u8);
            i += DICT[j].len();
            continue;
        }
        let digits = rest.iter().take_while(|c| c.is_ascii_digit()).count();
        if (2..=18).contains(&digits) && rest[0] != b'0' {
            // At most 18 digits: the value fits in a u64 and is below 10^18.
            let v = rest[..digits]
                .iter()
                .fold(0u64, |a, c| a * 10 + u64::from(c - b'0'));
            out.push(NUM);
            put_varint(&mut out, v);
            i += digits;
            continue;
        }
        if rest[0] < 0x80 {
            out.push(rest[0]);
        } else {
            out.push(RAW);
            out.push(rest[0]);
        }
        i += 1;
    }
    out
}

/// The text whose [`pack`] is `b`, or None when `b` is not one.
pub fn unpack(b: &[u8]) -> Option<String> {
    let mut out = Vec::with_capacity(b.len() * 3);
    let mut i = 0;
    while i < b.len() {
        let op = b[i];
        i += 1;
        match op {
            0x00..=0x7f => out.push(op),
            0x80..=0xbf => out.extend_from_slice(DICT.get(usize::from(op - 0x80))?.as_bytes()),
            HEX_SHORT..=0xdf => get_hex(b, &mut i, usize::from(op - HEX_SHORT) + 1, &mut out)?,
            HEX_LONG => {
                let n = usize::try_from(get_varint(b, &mut i)?).ok()?;
                if n <= 32 {
                    return None;
                }
                get_hex(b, &mut i, n, &mut out)?;
            }
            BIN => {
                let n = usize::try_from(get_varint(b, &mut i)?).ok()?;
                if n == 0 {
                    return None;
                }
                let bytes = b.get(i..i + n.div_ceil(8))?;
                i += bytes.len();
                out.extend_from_slice(b"#b");
                for (j, x) in bytes.iter().enumerate() {
                    let width = if j == 0 && n % 8 != 0 { n % 8 } else { 8 };
                    if width < 8 && x >> width != 0 {
                        return None;
                    }
                    for bit in (0..width).rev() {
                        out.push(b'0' + ((x >> bit) & 1));
                    }
                }
            }
            RAW => {
                let x = *b.get(i)?;
                i += 1;
                if x < 0x80 {
                    return None;
                }
                out.push(x);
            }
            NUM => {
                let v = get_varint(b, &mut i)?;
                if !(10..1_000_000_000_000_000_000).contains(&v) {
                    return None;
                }
                out.extend_from_slice(v.to_string().as_bytes());
            }
            _ => return None,
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn round_trip(s: &str) -> usize {
        let p = pack(s);
        assert_eq!(unpack(&p).as_deref(), Some(s), "{s:?} packed to {p:?}");
        p.len()
    }

    #[test]
    fn every_value_kind_round_trips() {
        // Bit-vectors of every width from 1 to 300, as #b and as #x where the width allows,
        // with their extreme and a middle value.
        for w in 1..=300usize {
            for bit in ['0', '1'] {
                round_trip(&format!("#b{}", bit.to_string().repeat(w)));
            }
            round_trip(&format!("#b1{}", "0".repeat(w - 1)));
            if w % 4 == 0 {
                let n = w / 4;
                round_trip(&format!("#x{}", "0".repeat(n)));
                round_trip(&format!("#x{}", "f".repeat(n)));
                round_trip(&format!(
                    "#x{}",
                    "0123456789abcdef".repeat(n).get(..n).unwrap()
                ));
                round_trip(&format!("(_ bv{} {w})", (1u128 << (w.min(100) - 1)) - 1));
            }
        }
        for s in [
            "",
            "true\nfalse\n",
            "((as const (Array (_ BitVec 32) (_ BitVec 8))) #x26)\n(store (store ((as const (Array (_ BitVec 32) (_ BitVec 8))) #x00) #x00000025 #x05) #x0000002a #x05)\n",
            "((as const (Array (_ BitVec 64) (_ BitVec 8))) #x00)",
            "((as const (Array Int Bool)) false)",
            "0\n7\n10\n(- 42)\n(/ 1 3)\n(- (/ 22 7))\n1.5\n0.0\n007\n123456789012345678\n1234567890123456789\n",
            "#xABCD #xabCD #x #b #b2 #x0g",
            "ünïcode ✓ \u{0}\u{7f}",
            "(define-fun x () (_ BitVec 8) #x01)",
        ] {
            round_trip(s);
        }
    }

    #[test]
    fn klee_models_shrink() {
        let m = "(store (store (store ((as const (Array (_ BitVec 32) (_ BitVec 8))) #x00) #x00000022 #x22) #x00000027 #x27) #x00000045 #x1b)\n";
        let n = round_trip(m);
        assert!(n * 3 < m.len(), "{n} of {} bytes", m.len());
    }

    #[test]
    fn unpack_refuses_what_pack_never_writes() {
        for bad in [
            &[0xe4][..],                // unknown opcode
            &[0x80 + DICT.len() as u8], // past the dictionary
            &[0xc3, 0x12],              // truncated hex (4 digits, 1 byte)
            &[0xc0, 0x1f],              // an odd count's first byte above one digit
            &[0xe0, 0x05, 0, 0, 0],     // a long hex run of a short length
            &[0xe1, 0x00],              // zero bits
            &[0xe1, 0x03, 0x08],        // a bit past the width
            &[0xe2, 0x41],              // an ASCII byte escaped
            &[0xe3, 0x05],              // a one-digit numeral
            &[0xe3, 0x80, 0x00],        // a varint not in shortest form
            &[0xe2, 0xff],              // not UTF-8
        ] {
            assert_eq!(unpack(bad), None, "{bad:?}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        #[test]
        fn any_text_round_trips(parts in proptest::collection::vec(
            prop_oneof![
                proptest::sample::select(DICT.to_vec()).prop_map(String::from),
                "#x[0-9a-fA-F]{0,40}",
                "#b[01]{0,20}",
                "[0-9]{1,22}",
                "[ -~\n]{0,6}",
                any::<String>(),
            ], 0..12)) {
            let s: String = parts.concat();
            prop_assert_eq!(unpack(&pack(&s)), Some(s));
        }
    }
}
