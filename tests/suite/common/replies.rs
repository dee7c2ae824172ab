//! A solver's (or smtproxy's) replies in a form two runs can be compared in, for the tests
//! that hold smtproxy's answers against a solver's own (`proxy_acceptance`,
//! `proxy_differential`, `proxy_governor`, `proxy_portfolio`).

/// The check-sat answers (`sat`, `unsat`, `unknown` lines) of a run's stdout, in order.
pub fn check_sat_answers(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .map(str::trim)
        .filter(|l| matches!(*l, "sat" | "unsat" | "unknown"))
        .map(str::to_string)
        .collect()
}

/// Response lines with every `(error "...")` (possibly multi-line) collapsed to `(error)`,
/// and `;` comment lines left out.
pub fn normalise(out: &str) -> Vec<String> {
    let mut res = Vec::new();
    let mut lines = out.lines();
    while let Some(l) = lines.next() {
        if l.starts_with("(error \"") {
            let mut acc = l.to_string();
            // The message string may contain line breaks: read on until `")` ends a line.
            while !(acc.trim_end().ends_with("\")") && string_closed(&acc)) {
                match lines.next() {
                    Some(n) => {
                        acc.push('\n');
                        acc.push_str(n);
                    }
                    None => break,
                }
            }
            res.push("(error)".to_string());
        } else if l.starts_with(';') {
            // z3 follows `unsupported` for an unknown get-info key with `; Supported ...`
            // comment lines; comments are not answers, and smtproxy does not relay them.
        } else {
            res.push(l.to_string());
        }
    }
    res
}

/// Does `(error "...")` text have its string literal closed (SMT-LIB `""` escapes)?
fn string_closed(s: &str) -> bool {
    let Some(start) = s.find('"') else {
        return false;
    };
    let b = s.as_bytes();
    let mut i = start + 1;
    while i < b.len() {
        if b[i] == b'"' {
            if i + 1 < b.len() && b[i + 1] == b'"' {
                i += 2;
                continue;
            }
            return true;
        }
        i += 1;
    }
    false
}

/// The next response of `lines`: one line, or the lines up to the one that closes the
/// parentheses the first opens (a get-value or get-model answer over several lines), each
/// with its line break.
pub fn next_response<'a>(lines: &mut impl Iterator<Item = &'a str>) -> String {
    let mut s = String::new();
    let mut depth = 0i32;
    for l in lines {
        s.push_str(l);
        s.push('\n');
        depth += l.matches('(').count() as i32 - l.matches(')').count() as i32;
        if depth <= 0 {
            break;
        }
    }
    s
}
