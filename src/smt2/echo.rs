//! The term a get-value answer repeats, as cvc5 repeats it. z3 and yices echo the client's
//! text; cvc5 prints the term it parsed, so its answer shows the client's term with:
//! `#x` literals and `(_ bvN W)` as `#b` literals of their width, decimals as `N.0` when
//! integral and `(/ n d)` in lowest terms otherwise, a division of two numerals folded the
//! same way (`(/ 4 2)` is `2.0`; one by zero is kept), `let` bindings substituted, a
//! `:named` label replaced by the term it names, `|x|` as `x` when `x` is a simple symbol,
//! and single spaces between tokens (cvc5 1.0, checked against its answers).
//!
//! Invariants:
//! * Only the text changes, never the term: every rewrite above is one cvc5's parser makes,
//!   and anything this module does not recognise is printed as written.
//! * Binders shadow: a `let`, `forall` or `exists` variable hides a label or an outer
//!   binding of the same name inside its scope, as in the parsed term.
//! * Text that does not read as balanced s-expressions is returned as given.

use num_bigint::BigUint;
use num_integer::Integer;
use num_traits::Zero;
use rustc_hash::FxHashMap;

/// An s-expression over the source text: an atom (its text) or a list.
#[derive(Debug, Clone)]
enum Sx<'a> {
    Atom(&'a str),
    List(Vec<Sx<'a>>),
}

/// The s-expressions of `text` (comments skipped); `None` if it is not balanced.
fn parse(text: &str) -> Option<Vec<Sx<'_>>> {
    let b = text.as_bytes();
    let mut stack: Vec<Vec<Sx<'_>>> = vec![Vec::new()];
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b' ' | b'\t' | b'\n' | b'\r' => i += 1,
            b';' => {
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
            }
            b'(' => {
                stack.push(Vec::new());
                i += 1;
            }
            b')' => {
                let done = stack.pop()?;
                stack.last_mut()?.push(Sx::List(done));
                i += 1;
            }
            b'"' => {
                let start = i;
                i += 1;
                loop {
                    match b.get(i) {
                        None => return None,
                        Some(b'"') if b.get(i + 1) == Some(&b'"') => i += 2,
                        Some(b'"') => {
                            i += 1;
                            break;
                        }
                        Some(_) => i += 1,
                    }
                }
                stack.last_mut()?.push(Sx::Atom(&text[start..i]));
            }
            b'|' => {
                let start = i;
                let close = b[i + 1..].iter().position(|&c| c == b'|')?;
                i += close + 2;
                stack.last_mut()?.push(Sx::Atom(&text[start..i]));
            }
            _ => {
                let start = i;
                while i < b.len()
                    && !matches!(
                        b[i],
                        b' ' | b'\t' | b'\n' | b'\r' | b'(' | b')' | b'"' | b'|' | b';'
                    )
                {
                    i += 1;
                }
                stack.last_mut()?.push(Sx::Atom(&text[start..i]));
            }
        }
    }
    if stack.len() != 1 {
        return None;
    }
    stack.pop()
}

/// The terms that `(! TERM ... :named LABEL ...)` names in `text` (an assertion as the
/// client wrote it), as (label, term text) pairs, the label without `|` quotes.
pub fn named_terms(text: &str) -> Vec<(String, String)> {
    let mut out = Vec::new();
    if let Some(sxs) = parse(text) {
        for sx in &sxs {
            collect_named(sx, &mut out);
        }
    }
    out
}

fn collect_named(sx: &Sx<'_>, out: &mut Vec<(String, String)>) {
    let Sx::List(items) = sx else { return };
    if let [Sx::Atom("!"), term, attrs @ ..] = items.as_slice() {
        for w in attrs.windows(2) {
            if let [Sx::Atom(":named"), Sx::Atom(label)] = w {
                out.push((unquote(label).to_string(), write(term)));
            }
        }
    }
    for it in items {
        collect_named(it, out);
    }
}

/// `sx` as text with single spaces.
fn write(sx: &Sx<'_>) -> String {
    let mut s = String::new();
    write_into(sx, &mut s);
    s
}

fn write_into(sx: &Sx<'_>, out: &mut String) {
    match sx {
        Sx::Atom(a) => out.push_str(a),
        Sx::List(items) => {
            out.push('(');
            for (k, it) in items.iter().enumerate() {
                if k > 0 {
                    out.push(' ');
                }
                write_into(it, out);
            }
            out.push(')');
        }
    }
}

/// `|x|` as `x`; any other atom as it is.
fn unquote(a: &str) -> &str {
    a.strip_prefix('|')
        .and_then(|s| s.strip_suffix('|'))
        .unwrap_or(a)
}

/// Whether `s` is a simple symbol (printed without `|` quotes).
fn simple_symbol(s: &str) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    let ok = |c: char| c.is_ascii_alphanumeric() || "~!@$%^&*_-+=<>.?/".contains(c);
    !first.is_ascii_digit() && s.chars().all(ok)
}

/// What a name stands for in the echo: the text of a `let` binding or label, or nothing
/// (a binder's own variable, which hides the outer meaning).
type Env = FxHashMap<String, Option<String>>;

/// The term `src` (the client's text of one get-value term) as cvc5 prints it back;
/// `label` gives the text a `:named` label names (the client's text of that term).
pub fn cvc5_term(src: &str, label: &dyn Fn(&str) -> Option<String>) -> String {
    let Some(sxs) = parse(src) else {
        return src.to_string();
    };
    let [sx] = sxs.as_slice() else {
        return src.to_string();
    };
    let mut out = String::with_capacity(src.len());
    echo(sx, &Env::default(), label, 0, &mut out);
    out
}

/// The widest `(_ bvN W)` written out in binary (W digits); a wider one, which the
/// client's own text states in a few bytes, is repeated as written.
const WIDE_MAX: u32 = 1 << 16;

/// Labels name terms that may use labels of their own; a chain deeper than this is printed
/// as written (a label cannot name a term that uses itself, so this only bounds the work).
const LABEL_DEPTH: u32 = 64;

fn echo(
    sx: &Sx<'_>,
    env: &Env,
    label: &dyn Fn(&str) -> Option<String>,
    depth: u32,
    out: &mut String,
) {
    match sx {
        Sx::Atom(a) => echo_atom(a, env, label, depth, out),
        Sx::List(items) => {
            match items.as_slice() {
                [Sx::Atom("_"), Sx::Atom(v), Sx::Atom(w)] if v.starts_with("bv") => {
                    if let (Some(v), Ok(w @ 1..=WIDE_MAX)) = (
                        BigUint::parse_bytes(&v.as_bytes()[2..], 10),
                        w.parse::<u32>(),
                    ) {
                        binary(&v, w as usize, out);
                        return;
                    }
                }
                [Sx::Atom("let"), Sx::List(binds), body] => {
                    let mut inner = env.clone();
                    let mut ok = true;
                    for b in binds {
                        match b {
                            Sx::List(pair) if pair.len() == 2 => {
                                if let Sx::Atom(v) = &pair[0] {
                                    let mut t = String::new();
                                    echo(&pair[1], env, label, depth, &mut t);
                                    inner.insert(unquote(v).to_string(), Some(t));
                                } else {
                                    ok = false;
                                }
                            }
                            _ => ok = false,
                        }
                    }
                    if ok {
                        echo(body, &inner, label, depth, out);
                        return;
                    }
                }
                [Sx::Atom(q @ ("forall" | "exists")), Sx::List(vars), body] => {
                    let mut inner = env.clone();
                    for v in vars {
                        if let Sx::List(pair) = v {
                            if let Some(Sx::Atom(name)) = pair.first() {
                                inner.insert(unquote(name).to_string(), None);
                            }
                        }
                    }
                    out.push('(');
                    out.push_str(q);
                    out.push(' ');
                    write_into(&Sx::List(vars.clone()), out);
                    out.push(' ');
                    echo(body, &inner, label, depth, out);
                    out.push(')');
                    return;
                }
                [Sx::Atom("/"), Sx::Atom(n), Sx::Atom(d)] if numeral(n) && numeral(d) => {
                    if let (Some(n), Some(d)) = (
                        BigUint::parse_bytes(n.as_bytes(), 10),
                        BigUint::parse_bytes(d.as_bytes(), 10),
                    ) {
                        if !d.is_zero() {
                            rational(n, d, out);
                            return;
                        }
                    }
                }
                _ => {}
            }
            out.push('(');
            for (k, it) in items.iter().enumerate() {
                if k > 0 {
                    out.push(' ');
                }
                echo(it, env, label, depth, out);
            }
            out.push(')');
        }
    }
}

fn echo_atom(
    a: &str,
    env: &Env,
    label: &dyn Fn(&str) -> Option<String>,
    depth: u32,
    out: &mut String,
) {
    if let Some(hex) = a.strip_prefix("#x") {
        if let Some(v) = BigUint::parse_bytes(hex.as_bytes(), 16) {
            binary(&v, 4 * hex.len(), out);
            return;
        }
    }
    if let Some((i, f)) = a.split_once('.') {
        if numeral(i) && !f.is_empty() && f.bytes().all(|c| c.is_ascii_digit()) {
            let scale = BigUint::from(10u8).pow(f.len() as u32);
            if let (Some(i), Some(f)) = (
                BigUint::parse_bytes(i.as_bytes(), 10),
                BigUint::parse_bytes(f.as_bytes(), 10),
            ) {
                rational(i * &scale + f, scale, out);
                return;
            }
        }
    }
    if a.starts_with(|c: char| c.is_ascii_digit() || c == '#' || c == '"' || c == ':') {
        out.push_str(a);
        return;
    }
    let name = unquote(a);
    match env.get(name) {
        Some(Some(t)) => out.push_str(t),
        Some(None) => out.push_str(printed_symbol(a)),
        None => match (depth < LABEL_DEPTH).then(|| label(name)).flatten() {
            Some(text) => {
                let echoed = match parse(&text) {
                    Some(sxs) if sxs.len() == 1 => {
                        let mut t = String::new();
                        echo(&sxs[0], &Env::default(), label, depth + 1, &mut t);
                        t
                    }
                    _ => text,
                };
                out.push_str(&echoed);
            }
            None => out.push_str(printed_symbol(a)),
        },
    }
}

/// A symbol as cvc5 prints it: `|x|` as `x` when `x` needs no quotes.
fn printed_symbol(a: &str) -> &str {
    let inner = unquote(a);
    if inner.len() != a.len() && simple_symbol(inner) {
        inner
    } else {
        a
    }
}

fn numeral(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|c| c.is_ascii_digit())
}

/// `n/d` (d > 0) as cvc5 prints a rational constant: `N.0` or `(/ n d)` in lowest terms.
fn rational(n: BigUint, d: BigUint, out: &mut String) {
    let g = n.gcd(&d);
    let (n, d) = if g.is_zero() {
        (n, d)
    } else {
        (&n / &g, &d / &g)
    };
    if d == BigUint::from(1u8) {
        out.push_str(&n.to_string());
        out.push_str(".0");
    } else {
        out.push_str("(/ ");
        out.push_str(&n.to_string());
        out.push(' ');
        out.push_str(&d.to_string());
        out.push(')');
    }
}

/// `#b` and `v` in `w` bits.
fn binary(v: &BigUint, w: usize, out: &mut String) {
    out.push_str("#b");
    let bits = v.to_str_radix(2);
    if bits.len() >= w {
        out.push_str(&bits[bits.len() - w..]);
    } else {
        out.extend(std::iter::repeat_n('0', w - bits.len()));
        out.push_str(&bits);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn echo_of(src: &str) -> String {
        let labels: FxHashMap<&str, &str> = [
            ("q", "(= a   #x0f)"),
            ("w z", "(> x (- 2))"),
            ("outer", "(and q p)"),
        ]
        .into_iter()
        .collect();
        cvc5_term(src, &|n| labels.get(n).map(|s| s.to_string()))
    }

    /// Each pair was printed by cvc5 1.0.3 for the term on the left.
    #[test]
    fn as_cvc5_prints_them() {
        for (src, want) in [
            ("2.0", "2.0"),
            ("0.5", "(/ 1 2)"),
            ("1.25", "(/ 5 4)"),
            ("10.50", "(/ 21 2)"),
            ("0.0", "0.0"),
            ("(+ r 0.5)", "(+ r (/ 1 2))"),
            ("#x0a", "#b00001010"),
            ("#b0101", "#b0101"),
            ("(bvadd a #xff)", "(bvadd a #b11111111)"),
            ("(_ bv5 8)", "#b00000101"),
            ("(bvadd a (_ bv1 8))", "(bvadd a #b00000001)"),
            ("(_ bv0 32)", "#b00000000000000000000000000000000"),
            ("(let ((z x)) (+ z z))", "(+ x x)"),
            ("(let ((z 1) (y 2)) (let ((z y)) (+ z y)))", "(+ 2 2)"),
            ("q", "(= a #b00001111)"),
            ("(and q true)", "(and (= a #b00001111) true)"),
            ("|w z|", "(> x (- 2))"),
            ("(- 3)", "(- 3)"),
            ("(+  x\n 1 2)", "(+ x 1 2)"),
            ("(/ 4 2)", "2.0"),
            ("(/ 6 4)", "(/ 3 2)"),
            ("(/ 0 5)", "0.0"),
            ("(/ 3 0)", "(/ 3 0)"),
            ("(/ 1.5 3)", "(/ (/ 3 2) 3)"),
            ("(/ (- 1) 2)", "(/ (- 1) 2)"),
            ("(- 0.5)", "(- (/ 1 2))"),
            ("(/ r 2)", "(/ r 2)"),
            ("|x|", "x"),
            ("\"a\"\"b\"", "\"a\"\"b\""),
            ("(str.++ s \"x\")", "(str.++ s \"x\")"),
            ("(forall ((x Int)) (> x 0))", "(forall ((x Int)) (> x 0))"),
            ("(exists ((q Int)) (> q 0))", "(exists ((q Int)) (> q 0))"),
            ("((_ extract 3 0) a)", "((_ extract 3 0) a)"),
            ("(select A #x3)", "(select A #b0011)"),
        ] {
            assert_eq!(echo_of(src), want, "{src}");
        }
    }

    #[test]
    fn labels_within_labels_and_bad_text() {
        assert_eq!(echo_of("outer"), "(and (= a #b00001111) p)");
        // Not balanced: as written.
        assert_eq!(echo_of("(+ x"), "(+ x");
        assert_eq!(echo_of("|x"), "|x");
        // A quoted symbol that needs its quotes keeps them.
        assert_eq!(echo_of("|a b|"), "|a b|");
        // A width written in a few bytes is not spelt out in billions of digits.
        assert_eq!(echo_of("(_ bv1 4000000000)"), "(_ bv1 4000000000)");
        assert_eq!(echo_of("(_ bv1 0)"), "(_ bv1 0)");
    }

    #[test]
    fn named_terms_of_an_assertion() {
        assert_eq!(
            named_terms("(assert (and (! (> x 0) :named p) (! (< y #x1)  :named |q r|)))"),
            vec![
                ("p".to_string(), "(> x 0)".to_string()),
                ("q r".to_string(), "(< y #x1)".to_string())
            ]
        );
        assert!(named_terms("(assert (> x 0))").is_empty());
    }
}
