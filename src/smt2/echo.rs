//! The term a get-value answer repeats, as cvc5 and yices repeat it. z3 echoes the client's
//! text. yices re-prints the tokens it read of the term (comments and spacing gone, a
//! string's `\"` and `\\` escapes undone) and lays the whole answer out with its pretty
//! printer, 160 columns wide (yices 2.6, `smt2_get_value` in its `smt2_commands.c`, checked
//! against its answers); see [`yices_get_value`]. cvc5 prints the term it parsed, so its
//! answer shows the client's term with:
//! `#x` literals and `(_ bvN W)` as `#b` literals of their width, decimals as `N.0` when
//! integral and `(/ n d)` in lowest terms otherwise, a division of two numerals folded the
//! same way (`(/ 4 2)` is `2.0`; one by zero is kept), `let` bindings substituted, a
//! `:named` label replaced by the term it names, `|x|` as `x` when `x` is a simple symbol,
//! and single spaces between tokens (cvc5 1.0, checked against its answers). Under a logic
//! of reals without integers (`QF_LRA`, `NRA`, ...) cvc5 reads every numeral as a real:
//! it prints `3` as `3.0` and keeps a division of numerals as written (`(/ 4.0 2.0)`).
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
/// `reals`: the logic has reals and no integers (`logic::reals_without_ints`).
pub fn cvc5_term(src: &str, reals: bool, label: &dyn Fn(&str) -> Option<String>) -> String {
    let Some(sxs) = parse(src) else {
        return src.to_string();
    };
    let [sx] = sxs.as_slice() else {
        return src.to_string();
    };
    let mut out = String::with_capacity(src.len());
    let cx = Cx { label, reals };
    echo(sx, &Env::default(), &cx, 0, &mut out);
    out
}

/// What the echo of a term depends on besides the term: the labels' texts, and whether
/// numerals are reals.
struct Cx<'l> {
    label: &'l dyn Fn(&str) -> Option<String>,
    reals: bool,
}

/// The widest `(_ bvN W)` written out in binary (W digits); a wider one, which the
/// client's own text states in a few bytes, is repeated as written.
const WIDE_MAX: u32 = 1 << 16;

/// Labels name terms that may use labels of their own; a chain deeper than this is printed
/// as written (a label cannot name a term that uses itself, so this only bounds the work).
const LABEL_DEPTH: u32 = 64;

fn echo(sx: &Sx<'_>, env: &Env, cx: &Cx<'_>, depth: u32, out: &mut String) {
    match sx {
        Sx::Atom(a) => echo_atom(a, env, cx, depth, out),
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
                                    echo(&pair[1], env, cx, depth, &mut t);
                                    inner.insert(unquote(v).to_string(), Some(t));
                                } else {
                                    ok = false;
                                }
                            }
                            _ => ok = false,
                        }
                    }
                    if ok {
                        echo(body, &inner, cx, depth, out);
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
                    echo(body, &inner, cx, depth, out);
                    out.push(')');
                    return;
                }
                [Sx::Atom("/"), Sx::Atom(n), Sx::Atom(d)]
                    if numeral(n) && numeral(d) && !cx.reals =>
                {
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
                // An index is not a numeral of the theory.
                [Sx::Atom("_"), ..] => {
                    write_into(sx, out);
                    return;
                }
                _ => {}
            }
            out.push('(');
            for (k, it) in items.iter().enumerate() {
                if k > 0 {
                    out.push(' ');
                }
                echo(it, env, cx, depth, out);
            }
            out.push(')');
        }
    }
}

fn echo_atom(a: &str, env: &Env, cx: &Cx<'_>, depth: u32, out: &mut String) {
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
    if cx.reals && numeral(a) {
        out.push_str(a);
        out.push_str(".0");
        return;
    }
    if a.starts_with(|c: char| c.is_ascii_digit() || c == '#' || c == '"' || c == ':') {
        out.push_str(a);
        return;
    }
    let name = unquote(a);
    match env.get(name) {
        Some(Some(t)) => out.push_str(t),
        Some(None) => out.push_str(printed_symbol(a)),
        None => match (depth < LABEL_DEPTH).then(|| (cx.label)(name)).flatten() {
            Some(text) => {
                let echoed = match parse(&text) {
                    Some(sxs) if sxs.len() == 1 => {
                        let mut t = String::new();
                        echo(&sxs[0], &Env::default(), cx, depth + 1, &mut t);
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

// ---------------------------------------------------------------------------------------
// yices
// ---------------------------------------------------------------------------------------

/// A token of the client's text as yices' SMT-LIB 2.0 lexer keeps it (`smt2_lexer.c`):
/// a parenthesis, or an atom's text (a string literal's escapes `\"` and `\\` undone, as
/// `smt2_read_string` does; every other atom exactly as written).
#[derive(Debug, Clone, PartialEq, Eq)]
enum YTok<'a> {
    Open,
    Close,
    Atom(std::borrow::Cow<'a, str>),
}

/// Whether yices' lexer takes `c` into a symbol or keyword (`issimple` in the C locale).
fn yices_simple(c: u8) -> bool {
    c.is_ascii_alphanumeric() || b"~!@$%^&*_-+=<>.?/".contains(&c)
}

/// `isspace` in the C locale.
fn yices_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | 0x0b | 0x0c)
}

/// The tokens of `text` as yices reads them, comments and white space dropped; `None` if
/// its lexer would refuse some token or the parentheses do not balance.
fn yices_lex(text: &str) -> Option<Vec<YTok<'_>>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    let run = |mut j: usize, ok: &dyn Fn(u8) -> bool| {
        while j < b.len() && ok(b[j]) {
            j += 1;
        }
        j
    };
    while i < b.len() {
        let c = b[i];
        let start = i;
        match c {
            _ if yices_space(c) => {
                i += 1;
                continue;
            }
            b';' => {
                i = run(i, &|c| c != b'\n');
                continue;
            }
            b'(' => {
                depth += 1;
                out.push(YTok::Open);
                i += 1;
                continue;
            }
            b')' => {
                depth = depth.checked_sub(1)?;
                out.push(YTok::Close);
                i += 1;
                continue;
            }
            b'"' => {
                // `smt2_read_string`: `\"` and `\\` stand for `"` and `\`, any other
                // backslash is kept; only printable characters and white space.
                let mut s = String::new();
                i += 1;
                loop {
                    let c = *b.get(i)?;
                    i += 1;
                    match c {
                        b'"' => break,
                        b'\\' => match b.get(i) {
                            Some(&q @ (b'"' | b'\\')) => {
                                s.push(q as char);
                                i += 1;
                            }
                            _ => s.push('\\'),
                        },
                        0x20..=0x7e => s.push(c as char),
                        _ if yices_space(c) => s.push(c as char),
                        _ => return None,
                    }
                }
                out.push(YTok::Atom(format!("\"{s}\"").into()));
                continue;
            }
            b'|' => {
                // No `\` inside, nor control characters other than white space.
                i = run(i + 1, &|c| {
                    c != b'|' && c != b'\\' && (c >= 32 || yices_space(c))
                });
                if b.get(i) != Some(&b'|') {
                    return None;
                }
                i += 1;
            }
            b'#' => {
                let digits: &dyn Fn(u8) -> bool = match b.get(i + 1) {
                    Some(b'b') => &|c| c == b'0' || c == b'1',
                    Some(b'x') => &|c: u8| c.is_ascii_hexdigit(),
                    _ => return None,
                };
                i = run(i + 2, digits);
                if i == start + 2 {
                    return None;
                }
            }
            b'0'..=b'9' => {
                i = run(i, &|c| c.is_ascii_digit());
                if c == b'0' && i > start + 1 {
                    return None; // `007`
                }
                if b.get(i) == Some(&b'.') {
                    let frac = i + 1;
                    i = run(frac, &|c| c.is_ascii_digit());
                    if i == frac {
                        return None;
                    }
                }
            }
            b':' => {
                i = run(i + 1, &yices_simple);
                if i == start + 1 {
                    return None;
                }
            }
            _ if yices_simple(c) => i = run(i, &yices_simple),
            _ => return None,
        }
        out.push(YTok::Atom(text[start..i].into()));
    }
    (depth == 0).then_some(out)
}

/// The term `src` (the client's text of one get-value term) as yices prints it back on
/// one line: its tokens as its lexer read them, one space apart, none after `(` or before
/// `)` (`pp_smt2_expr` in yices' `smt2_expressions.c` prints the tokens it kept of the
/// command). Text yices' lexer would refuse is returned as given. The tests' view of the
/// lexer: answers are laid out from the tokens themselves ([`yices_get_value`]).
#[cfg(test)]
fn yices_term(src: &str) -> String {
    let Some(toks) = yices_lex(src) else {
        return src.to_string();
    };
    let mut out = String::with_capacity(src.len());
    push_flat(&toks, &mut out);
    out
}

/// `toks` onto `out` on one line, one space apart, none after `(` or before `)`.
fn push_flat(toks: &[YTok<'_>], out: &mut String) {
    let mut space = false;
    for t in toks {
        match t {
            YTok::Open => {
                if space {
                    out.push(' ');
                }
                out.push('(');
                space = false;
            }
            YTok::Close => {
                out.push(')');
                space = true;
            }
            YTok::Atom(a) => {
                if space {
                    out.push(' ');
                }
                out.push_str(a);
                space = true;
            }
        }
    }
}

/// yices' pretty printer (`src/io/pretty_printer.c`, after Oppen): the layouts a block
/// may take, as bits.
const PP_H: u8 = 1;
const PP_M: u8 = 2;
const PP_V: u8 = 4;
const PP_T: u8 = 8;

/// The width yices-smt2 prints in (`g->pp_area.width = 160` in `smt2_commands.c`; no
/// truncation, no stretch, no offset, unlimited height).
const YICES_WIDTH: u32 = 160;

/// A block or atom whose size is known to exceed the width (`PP_MAX_BSIZE`).
const PP_MAX_BSIZE: u32 = 1 << 30;

/// An open-block token: its label (printed after `(`), its layouts, whether a space may
/// follow the label, the indentation of the V and M layouts and that of the T layout
/// (`open_desc` in `yices_pp.c`). Every block yices prints here has parentheses.
#[derive(Debug, Clone, Copy)]
struct Open {
    label: &'static str,
    formats: u8,
    sep: bool,
    indent: u32,
    short_indent: u32,
}

impl Open {
    /// `PP_OPEN_PAR`: a parenthesis, H, M or T layout (each list of the client's term).
    const PAR: Open = Open {
        label: "",
        formats: PP_H | PP_M | PP_T,
        sep: false,
        indent: 1,
        short_indent: 1,
    };
    /// `PP_OPEN_VPAR`: a parenthesis, V layout only (the list of pairs).
    const VPAR: Open = Open {
        label: "",
        formats: PP_V,
        sep: false,
        indent: 1,
        short_indent: 1,
    };

    /// A standard block with this label (`standard_block` in `yices_pp.c`: `-`, `/`,
    /// `store`, `as const`, `as`): H, M or T, a space after the label, indented past it.
    const fn standard(label: &'static str) -> Open {
        Open {
            label,
            formats: PP_H | PP_M | PP_T,
            sep: true,
            indent: label.len() as u32 + 2,
            short_indent: 1,
        }
    }

    /// `PP_OPEN_SMT2_BV_DEC` (`(_ bvN W)`, the value right after the label).
    const BV_DEC: Open = Open {
        label: "_ bv",
        formats: PP_H,
        sep: false,
        indent: 5,
        short_indent: 1,
    };
    /// `PP_OPEN_SMT2_BV_TYPE` (`(_ BitVec W)`).
    const BV_TYPE: Open = Open {
        label: "_ BitVec",
        formats: PP_H,
        sep: true,
        indent: 10,
        short_indent: 1,
    };
}

#[derive(Debug, Clone)]
enum PpTok<'a> {
    Open(Open),
    Atom(std::borrow::Cow<'a, str>),
    Close,
}

/// The pretty-printer tokens of a value as yices' `smt2_printer.c` builds them: `(- n)`,
/// `(/ n d)`, `(store ...)`, `(as ...)` and `(as const T)` as labelled blocks, `(_ bvN W)`
/// and `(_ BitVec W)` as theirs, any other list as a parenthesis.
fn value_tokens<'a>(toks: Vec<YTok<'a>>, out: &mut Vec<PpTok<'a>>) {
    let atom = |k: usize| match toks.get(k) {
        Some(YTok::Atom(a)) => a.as_ref(),
        _ => "",
    };
    let mut k = 0;
    while k < toks.len() {
        match &toks[k] {
            YTok::Close => out.push(PpTok::Close),
            YTok::Atom(a) => out.push(PpTok::Atom(a.clone())),
            YTok::Open => {
                let (open, skip) = match (atom(k + 1), atom(k + 2)) {
                    ("as", "const") => (Open::standard("as const"), 2),
                    ("as", _) => (Open::standard("as"), 1),
                    ("-", _) => (Open::standard("-"), 1),
                    ("/", _) => (Open::standard("/"), 1),
                    ("store", _) => (Open::standard("store"), 1),
                    ("_", "BitVec") => (Open::BV_TYPE, 2),
                    ("_", bv)
                        if bv.len() > 2
                            && bv.starts_with("bv")
                            && bv[2..].bytes().all(|c| c.is_ascii_digit()) =>
                    {
                        out.push(PpTok::Open(Open::BV_DEC));
                        out.push(PpTok::Atom(bv[2..].to_string().into()));
                        k += 3;
                        continue;
                    }
                    _ => (Open::PAR, 0),
                };
                out.push(PpTok::Open(open));
                k += skip;
            }
        }
        k += 1;
    }
}

/// A get-value answer from (client term text, value text) pairs, as yices-smt2 prints it:
/// `print_term_value_list` in `smt2_commands.c` sends a V-layout block of pairs, each an
/// H/M/T block of the term's tokens (`pp_smt2_expr`) and the value's, to the pretty
/// printer, which breaks what does not fit in 160 columns. Without the trailing newline.
/// Short pairs of one-token values, which it never breaks, are laid out directly
/// (`yices_flat_answer`: a sixth of the engine's time on KLEE logs it answers itself).
pub fn yices_get_value(pairs: &[(&str, &str)]) -> String {
    if let Some(flat) = yices_flat_answer(pairs) {
        return flat;
    }
    let mut toks: Vec<PpTok<'_>> = Vec::new();
    toks.push(PpTok::Open(Open::VPAR));
    for (term, value) in pairs {
        toks.push(PpTok::Open(Open::PAR));
        match yices_lex(term) {
            Some(ts) => toks.extend(ts.into_iter().map(|t| match t {
                YTok::Open => PpTok::Open(Open::PAR),
                YTok::Close => PpTok::Close,
                YTok::Atom(a) => PpTok::Atom(a),
            })),
            None => toks.push(PpTok::Atom((*term).into())),
        }
        match yices_lex(value) {
            Some(vs) => value_tokens(vs, &mut toks),
            None => toks.push(PpTok::Atom((*value).into())),
        }
        toks.push(PpTok::Close);
    }
    toks.push(PpTok::Close);
    pretty_print(&toks)
}

/// The widest pair, in bytes, [`yices_flat_answer`] lays out itself: well inside the
/// printer's 160 columns, with the pair's indent and the list's closing parenthesis.
const FLAT_PAIR_MAX: usize = 120;

/// [`yices_get_value`]'s answer where every pair is short and its value one token (a
/// symbolic executor's byte reads: `((select a (_ bv0 32)) #b01100001)`): the pretty
/// printer then puts each pair on a line of its own, flat, the first after `(` and the
/// others one column in. `None` for anything else, which the printer lays out.
fn yices_flat_answer(pairs: &[(&str, &str)]) -> Option<String> {
    if pairs.is_empty() {
        return None;
    }
    let mut out = String::with_capacity(pairs.len() * 32);
    out.push('(');
    for (k, (term, value)) in pairs.iter().enumerate() {
        if k > 0 {
            out.push_str("\n ");
        }
        let start = out.len();
        out.push('(');
        push_flat(&yices_lex(term)?, &mut out);
        let value = yices_lex(value)?;
        let [YTok::Atom(v)] = value.as_slice() else {
            return None;
        };
        out.push(' ');
        out.push_str(v);
        out.push(')');
        if out.len() - start > FLAT_PAIR_MAX || out[start..].contains(['\n', '\r', '\t']) {
            return None;
        }
    }
    out.push(')');
    Some(out)
}

/// The text yices' pretty printer makes of `toks` (balanced), printing from column 0 in
/// V mode, without the newline it ends with.
fn pretty_print(toks: &[PpTok<'_>]) -> String {
    let mut pp = Pp {
        toks,
        bsize: vec![0; toks.len()],
        csize: vec![0; toks.len()],
        fsize: vec![0; toks.len()],
        f: Formatter::default(),
        p: Printer::new(),
    };
    for k in 0..toks.len() {
        pp.process_token(k);
    }
    pp.set_bsizes_and_close();
    pp.flush_token_queue();
    pp.p.out
}

/// The formatter's state (`formatter_t`): the tokens not yet printed, the blocks whose
/// size is not yet known (with their start on the formatting line), the head block.
#[derive(Default)]
struct Formatter {
    queue: std::collections::VecDeque<usize>,
    blocks: std::collections::VecDeque<(u32, usize)>,
    nclosed: usize,
    head: Option<usize>,
    head_closed: bool,
    last_atom: Option<usize>,
    atom_col: u32,
    no_space: bool,
    length: u32,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    H,
    V,
    Hv,
}

/// The printer's state (`printer_t`), for an area that neither truncates nor stretches.
struct Printer {
    out: String,
    stack: Vec<(Mode, u32)>,
    mode: Mode,
    indent: u32,
    next_margin: u32,
    no_break: bool,
    no_space: bool,
    col: u32,
    margin: u32,
}

impl Printer {
    fn new() -> Printer {
        Printer {
            out: String::new(),
            stack: vec![(Mode::V, 0)],
            mode: Mode::V,
            indent: 0,
            next_margin: line_width(0),
            no_break: true,
            no_space: true,
            col: 0,
            margin: YICES_WIDTH,
        }
    }
}

/// `line_width_for_indent`: what is left of the width after `indent` columns.
fn line_width(indent: u32) -> u32 {
    YICES_WIDTH.saturating_sub(indent)
}

struct Pp<'t, 'a> {
    toks: &'t [PpTok<'a>],
    bsize: Vec<u32>,
    csize: Vec<u32>,
    fsize: Vec<u32>,
    f: Formatter,
    p: Printer,
}

impl Pp<'_, '_> {
    fn open(&self, k: usize) -> Option<Open> {
        match &self.toks[k] {
            PpTok::Open(o) => Some(*o),
            _ => None,
        }
    }

    /// Give block `k` a sub-block or atom of block size `size`.
    fn add_sub(&mut self, k: usize, size: u32) {
        if self.fsize[k] == 0 {
            self.fsize[k] = size;
            self.csize[k] = size;
        } else if self.csize[k] < size {
            self.csize[k] = size;
        }
    }

    fn set_bsizes_and_close(&mut self) {
        let mut csize = 0;
        if let Some(a) = self.f.last_atom {
            csize = self.f.length - self.f.atom_col;
            self.bsize[a] = csize;
        }
        let n = std::mem::take(&mut self.f.nclosed);
        for _ in 0..n {
            let Some((col, tk)) = self.f.blocks.pop_back() else {
                break;
            };
            self.add_sub(tk, csize);
            csize = self.f.length - col;
            self.bsize[tk] = csize;
        }
        if csize > 0 {
            match self.f.blocks.back() {
                None => {
                    if let Some(h) = self.f.head {
                        self.add_sub(h, csize);
                    }
                }
                Some(&(_, tk)) => self.add_sub(tk, csize),
            }
        }
    }

    fn flush_token_queue(&mut self) {
        while let Some(k) = self.f.queue.pop_front() {
            self.print_token(k);
        }
        self.f.last_atom = None;
        self.f.head = None;
        self.f.head_closed = false;
    }

    fn flush_head_block(&mut self) {
        if self.f.head_closed {
            self.flush_token_queue();
        }
    }

    /// Blocks known to be wider than the area get `PP_MAX_BSIZE`; the tokens before the
    /// first of them can be printed.
    fn flush_wide_blocks(&mut self) {
        while let Some(&(col, tk)) = self.f.blocks.front() {
            if self.f.length - col <= YICES_WIDTH {
                break;
            }
            self.bsize[tk] = PP_MAX_BSIZE;
            if let Some(h) = self.f.head {
                self.csize[h] = PP_MAX_BSIZE;
                if self.fsize[h] == 0 {
                    self.fsize[h] = PP_MAX_BSIZE;
                }
            }
            while let Some(&k) = self.f.queue.front() {
                if k == tk {
                    break;
                }
                self.f.queue.pop_front();
                self.print_token(k);
            }
            self.f.head = Some(tk);
            if self.f.nclosed == self.f.blocks.len() {
                self.f.nclosed -= 1;
            }
            self.f.blocks.pop_front();
        }
    }

    fn process_token(&mut self, k: usize) {
        match &self.toks[k] {
            PpTok::Open(o) => {
                self.set_bsizes_and_close();
                self.flush_head_block();
                if !self.f.no_space {
                    self.f.length += 1;
                }
                self.csize[k] = 0;
                self.fsize[k] = 0;
                self.f.blocks.push_back((self.f.length, k));
                self.f.length += o.label.len() as u32 + 1;
                self.f.no_space = !o.sep;
                self.f.last_atom = None;
            }
            PpTok::Atom(a) => {
                self.set_bsizes_and_close();
                self.flush_head_block();
                if !self.f.no_space {
                    self.f.length += 1;
                }
                self.f.atom_col = self.f.length;
                self.f.last_atom = Some(k);
                self.f.length += a.len() as u32;
                self.f.no_space = false;
            }
            PpTok::Close => {
                self.f.length += 1;
                if self.f.nclosed < self.f.blocks.len() {
                    self.f.nclosed += 1;
                } else if self.f.head.is_some() {
                    self.f.head_closed = true;
                }
            }
        }
        self.f.queue.push_back(k);
        self.flush_wide_blocks();
    }

    fn newline(&mut self) {
        let p = &mut self.p;
        p.out.push('\n');
        p.out.extend(std::iter::repeat_n(' ', p.indent as usize));
        p.col = 0;
        p.margin = p.next_margin;
        p.no_space = true;
    }

    /// A line break before a token of block size `n`, where the mode asks for one.
    fn check_newline(&mut self, n: u32) {
        let p = &self.p;
        if p.no_break {
            return;
        }
        let brk = match p.mode {
            Mode::H => false,
            Mode::V => true,
            Mode::Hv => p.col + n + u32::from(!p.no_space) > p.margin,
        };
        if brk {
            self.newline();
        }
    }

    fn print_blank(&mut self) {
        if !self.p.no_space {
            self.p.out.push(' ');
            self.p.col += 1;
        }
    }

    fn print_token(&mut self, k: usize) {
        match &self.toks[k] {
            PpTok::Open(o) => {
                self.check_newline(self.bsize[k]);
                self.print_blank();
                self.p.out.push('(');
                self.p.out.push_str(o.label);
                self.p.col += 1 + o.label.len() as u32;
                self.push_state(k);
            }
            PpTok::Atom(a) => {
                self.check_newline(self.bsize[k]);
                self.print_blank();
                self.p.out.push_str(a);
                self.p.col += a.len() as u32;
                self.p.no_space = false;
                self.p.no_break = false;
            }
            PpTok::Close => {
                self.p.out.push(')');
                self.p.col += 1;
                self.p.no_space = false;
                self.p.no_break = false;
                self.pop_state();
            }
        }
    }

    /// `printer_push_state`: the layout of the block that opens at `k`.
    fn push_state(&mut self, k: usize) {
        let Some(tk) = self.open(k) else { return };
        let (bsize, csize, fsize) = (self.bsize[k], self.csize[k], self.fsize[k]);
        let p = &mut self.p;
        p.no_space = !tk.sep;
        p.no_break = true;
        let fits_h = || p.col + bsize.saturating_sub(tk.label.len() as u32 + 1) <= p.margin;
        let subs_fit = || {
            let w = line_width(p.indent + tk.indent);
            w >= 4 && csize <= w && p.col + fsize + u32::from(!tk.sep) <= p.margin
        };
        // The T layout breaks before the first element only where a space may follow the
        // label (`p->no_break = p->no_space`).
        let (mode, delta, tight) = if p.mode != Mode::V {
            (Mode::H, 0, false)
        } else {
            match tk.formats {
                PP_H => (Mode::H, 0, false),
                PP_M => (Mode::Hv, tk.indent, false),
                PP_V => (Mode::V, tk.indent, false),
                PP_T => (Mode::V, tk.short_indent, true),
                f if f & PP_H != 0 && fits_h() => (Mode::H, 0, false),
                f if f & PP_M != 0 && subs_fit() => (Mode::Hv, tk.indent, false),
                f if f & PP_V != 0 && subs_fit() => (Mode::V, tk.indent, false),
                _ => (Mode::V, tk.short_indent, true),
            }
        };
        if tight {
            p.no_break = p.no_space;
        }
        p.stack.push((mode, delta));
        p.mode = mode;
        p.indent += delta;
        p.next_margin = line_width(p.indent);
    }

    fn pop_state(&mut self) {
        let p = &mut self.p;
        if p.stack.len() < 2 {
            return;
        }
        let (_, delta) = p.stack.pop().unwrap_or((Mode::V, 0));
        p.indent -= delta;
        p.mode = p.stack.last().map_or(Mode::V, |s| s.0);
        p.next_margin = line_width(p.indent);
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
        cvc5_term(src, false, &|n| labels.get(n).map(|s| s.to_string()))
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
    /// What yices 2.6.5 (`yices-smt2 --incremental`) printed for these get-value terms.
    #[test]
    fn terms_as_yices_prints_them() {
        for (src, want) in [
            ("(select a (_ bv0 32) )", "(select a (_ bv0 32))"),
            ("|weird x|", "|weird x|"),
            (
                "( ( _   extract 3 0 ) |weird x| )",
                "((_ extract 3 0) |weird x|)",
            ),
            ("(ite   true #x01 #x02)", "(ite true #x01 #x02)"),
            ("( ; comment\n  (+ x\n     1) )", "((+ x 1))"),
            ("(! x :foo \"a\\\"b\")", "(! x :foo \"a\"b\")"),
            ("(! x :foo (1 \"a b\"))", "(! x :foo (1 \"a b\"))"),
            ("(! x :foo |a\nb|)", "(! x :foo |a\nb|)"),
            ("(! x :named n1 :foo bar)", "(! x :named n1 :foo bar)"),
            ("x;c\n", "x"),
            ("|x|", "|x|"),
            ("1.50", "1.50"),
            ("(forall ((y Int)) (> y x))", "(forall ((y Int)) (> y x))"),
        ] {
            assert_eq!(yices_term(src), want, "{src:?}");
        }
        // What yices' lexer refuses is left as written.
        assert_eq!(yices_term("(+ x"), "(+ x");
        assert_eq!(yices_term("007"), "007");
    }

    /// Whole answers as yices 2.6.5 printed them (`yices-smt2 --incremental`, and
    /// `--smt2-model-format` for the arrays), from the client's terms and the values.
    #[test]
    fn answers_laid_out_as_yices_prints_them() {
        let concat = "(concat (select a (_ bv0 32)) (concat (select a (_ bv1 32)) (concat (select \
                      a (_ bv2 32)) (concat (select a (_ bv3 32)) (concat (select a (_ bv4 32)) \
                      (select a (_ bv5 32)))))))";
        let zeros = format!("#b{}", "0".repeat(48));
        assert_eq!(
            yices_get_value(&[(concat, &zeros)]),
            "(((concat (select a (_ bv0 32))\n   (concat (select a (_ bv1 32)) (concat (select a \
             (_ bv2 32)) (concat (select a (_ bv3 32)) (concat (select a (_ bv4 32)) (select a \
             (_ bv5 32)))))))\n  #b000000000000000000000000000000000000000000000000))"
        );
        assert_eq!(
            yices_get_value(&[
                ("   |weird x|", "#b00000000"),
                ("(bvadd |weird x| #b00000001)", "#b00000001"),
                ("( ( _   extract 3 0 ) |weird x| )", "#b0000"),
                ("(let ((y |weird x|)) (bvmul y y))", "#b00000000"),
            ]),
            "((|weird x| #b00000000)\n ((bvadd |weird x| #b00000001) #b00000001)\n \
             (((_ extract 3 0) |weird x|) #b0000)\n ((let ((y |weird x|)) (bvmul y y)) \
             #b00000000))"
        );
        // With `--bvconst-in-decimal`.
        assert_eq!(
            yices_get_value(&[("x", "(_ bv5 8)"), ("(bvadd x x)", "(_ bv10 8)")]),
            "((x (_ bv5 8))\n ((bvadd x x) (_ bv10 8)))"
        );
        let n = "nvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvvv";
        let big = "68022543218450889998822008219414067407614391501578755266481597821585865482\
                   172749618166831186577085597284679349826184932964347435002458949";
        assert_eq!(
            yices_get_value(&[(
                &format!("(ite (< x |q r|) (- {n}) |q r|)"),
                &format!("(- {big})")
            )]),
            format!("(((ite (< x |q r|) (- {n}) |q r|)\n  (- {big})))")
        );
        let xs = |k: usize| format!("(+{})", " x".repeat(k));
        // The 78 `x` that fit on the first line, without the closing parenthesis.
        let first = format!("(+{}", " x".repeat(78));
        assert_eq!(
            yices_get_value(&[(&xs(80), "(- 75439095628640)"), ("(* 2 |q r|)", "14")]),
            format!("(({first}\n   x x)\n  (- 75439095628640))\n ((* 2 |q r|) 14))")
        );
        assert_eq!(
            yices_get_value(&[(&xs(79), "(- 74496106933282)")]),
            format!("(({first}\n   x)\n  (- 74496106933282)))")
        );
    }

    /// The flat layout of short pairs is the pretty printer's, byte for byte: random
    /// terms of nested applications and atoms of every kind, widths on both sides of
    /// [`FLAT_PAIR_MAX`], one to four pairs, values a token or an application.
    #[test]
    fn short_pairs_are_laid_out_as_the_printer_lays_them_out() {
        let mut state = 0x5eed_f1a7u64;
        let mut rng = |n: usize| (crate::test_rng::xorshift(&mut state) % n as u64) as usize;
        let atoms = [
            "x",
            "|weird x|",
            "#b0101",
            "#x0f",
            "17",
            "0.5",
            "bvadd",
            "select",
            "a",
            "\"s t\"",
            ":k",
            "(_ bv0 32)",
            "((_ extract 7 0) y)",
        ];
        let values = [
            "#b00000001",
            "true",
            "(- 3)",
            "(_ bv5 8)",
            "0",
            "#b0",
            "(/ 1 3)",
            "x",
        ];
        fn term(rng: &mut dyn FnMut(usize) -> usize, atoms: &[&str], depth: u32) -> String {
            if depth == 0 || rng(3) == 0 {
                return atoms[rng(atoms.len())].to_string();
            }
            let n = 1 + rng(4);
            let args: Vec<String> = (0..n).map(|_| term(rng, atoms, depth - 1)).collect();
            let sep = ["  ", " ", "\n  "][rng(3)];
            format!("( {}{sep})", args.join(sep))
        }
        let (mut flat, mut printed) = (0, 0);
        for _ in 0..3000 {
            let n = 1 + rng(4);
            let depth = 1 + rng(6) as u32;
            let owned: Vec<(String, String)> = (0..n)
                .map(|_| {
                    let v = values[rng(values.len())];
                    (term(&mut rng, &atoms, depth), v.to_string())
                })
                .collect();
            let pairs: Vec<(&str, &str)> = owned
                .iter()
                .map(|(t, v)| (t.as_str(), v.as_str()))
                .collect();
            let Some(fast) = yices_flat_answer(&pairs) else {
                printed += 1;
                continue;
            };
            flat += 1;
            let mut toks: Vec<PpTok<'_>> = vec![PpTok::Open(Open::VPAR)];
            for (t, v) in &pairs {
                toks.push(PpTok::Open(Open::PAR));
                toks.extend(yices_lex(t).unwrap().into_iter().map(|t| match t {
                    YTok::Open => PpTok::Open(Open::PAR),
                    YTok::Close => PpTok::Close,
                    YTok::Atom(a) => PpTok::Atom(a),
                }));
                value_tokens(yices_lex(v).unwrap(), &mut toks);
                toks.push(PpTok::Close);
            }
            toks.push(PpTok::Close);
            assert_eq!(fast, pretty_print(&toks), "pairs {pairs:?}");
        }
        assert!(
            flat > 500 && printed > 500,
            "flat {flat}, printed {printed}"
        );
    }

    /// Array values as yices 2.6.5 prints them with `--smt2-model-format`: `store` blocks
    /// indented past their label, `((as const T) v)`.
    #[test]
    fn array_values_laid_out_as_yices_prints_them() {
        let k = "123456789012345678901234567890123456789012345678901234567890";
        let a = format!(
            "(store (store (store (store (store ((as const (Array Int Int)) 0) 4 {k}) 5 {k}) \
             1 5) 3 {k}) 2 (- 7))"
        );
        let b = "(store ((as const (Array Int (Array Int Int))) ((as const (Array Int Int)) 7)) \
                 1 (store ((as const (Array Int Int)) 6) 2 3))";
        let a_printed = format!(
            "(store\n   (store\n    (store\n     (store (store ((as const (Array Int Int)) 0) \
             4 {k}) 5\n            {k})\n     1\n     5)\n    3\n    {k})\n   2\n   (- 7))"
        );
        assert_eq!(
            yices_get_value(&[("a", &a)]),
            format!("((a\n  {a_printed}))")
        );
        assert_eq!(
            yices_get_value(&[("b", b), ("(select a 1)", "5"), ("a", &a)]),
            format!("((b {b})\n ((select a 1) 5)\n (a\n  {a_printed}))")
        );
    }

    /// A term nested deeper than the line is wide: yices' T layout, one column more each
    /// level, and no recursion here to overflow.
    #[test]
    fn deep_terms_in_the_tight_layout() {
        let depth = 200;
        let term = format!("{}x{}", "(bvnot ".repeat(depth), ")".repeat(depth));
        let out = yices_get_value(&[(&term, "#b00000101")]);
        let lines: Vec<&str> = out.lines().collect();
        // `((` then the first levels that fit, then one level a line.
        assert!(lines.len() > 100, "{out}");
        assert_eq!(yices_term(&term), term);
        assert!(out.ends_with("\n  #b00000101))"), "{out}");
        let deep = format!("{}x{}", "(".repeat(100_000), ")".repeat(100_000));
        assert!(yices_get_value(&[(&deep, "0")]).ends_with(" 0))"));
    }
}
