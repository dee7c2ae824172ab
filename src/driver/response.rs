//! A solver's answer as smtproxy reads it: one framed s-expression classified as
//! `success`, `sat`, `unsat`, `unknown`, `unsupported`, `(error "...")` or anything else.
//!
//! Invariants:
//! * [`Response::parse`] never fails: text that is none of the known answers is kept,
//!   trimmed, as [`Response::Other`], so nothing the solver says is lost.
//! * [`Response::to_text`] prints an answer as the solver would: an error's message is
//!   re-quoted (`"` doubled), so `parse(to_text(r)) == r` for every `r` that `parse` made.

use super::reader;

/// One complete answer from the solver.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Response {
    /// `success`
    Success,
    Sat,
    Unsat,
    Unknown,
    /// `unsupported`
    Unsupported,
    /// `(error "msg")`, with `msg` unescaped.
    Error(String),
    /// Any other answer, exactly as the solver printed it (trimmed).
    Other(String),
}

impl Response {
    /// Classify one framed response text.
    pub fn parse(text: &str) -> Response {
        let t = text.trim();
        match t {
            "success" => return Response::Success,
            "sat" => return Response::Sat,
            "unsat" => return Response::Unsat,
            "unknown" => return Response::Unknown,
            "unsupported" => return Response::Unsupported,
            _ => {}
        }
        if let Some(msg) = parse_error(t) {
            return Response::Error(msg);
        }
        Response::Other(t.to_string())
    }

    /// How to print it to a client (error text re-escaped: `"` becomes `""`).
    pub fn to_text(&self) -> String {
        match self {
            Response::Success => "success".into(),
            Response::Sat => "sat".into(),
            Response::Unsat => "unsat".into(),
            Response::Unknown => "unknown".into(),
            Response::Unsupported => "unsupported".into(),
            Response::Error(m) => format!("(error {})", reader::quote_string(m)),
            Response::Other(s) => s.clone(),
        }
    }

    pub fn is_error(&self) -> bool {
        matches!(self, Response::Error(_))
    }
}

impl std::fmt::Display for Response {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_text())
    }
}

/// `(error "msg")` -> msg; `(error <anything else>)` -> that text raw.
fn parse_error(t: &str) -> Option<String> {
    let inner = t.strip_prefix('(')?.strip_suffix(')')?;
    let inner = reader::skip_ws_comments(inner);
    let rest = inner.strip_prefix("error")?;
    if !rest.starts_with(|c: char| c.is_ascii_whitespace() || c == '"') {
        return None;
    }
    if let Some((msg, after)) = reader::parse_string_literal(rest) {
        if reader::skip_ws_comments(after).is_empty() {
            return Some(msg);
        }
    }
    Some(rest.trim().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_responses() {
        assert_eq!(Response::parse("success"), Response::Success);
        assert_eq!(Response::parse(" sat\n"), Response::Sat);
        assert_eq!(Response::parse("unsat"), Response::Unsat);
        assert_eq!(Response::parse("unknown"), Response::Unknown);
        assert_eq!(Response::parse("unsupported"), Response::Unsupported);
        assert_eq!(
            Response::parse("(error \"a \"\"b\"\"\")"),
            Response::Error("a \"b\"".into())
        );
        assert_eq!(
            Response::parse("(error \"line 1\nmore\")"),
            Response::Error("line 1\nmore".into())
        );
        assert_eq!(
            Response::parse("((x 1))"),
            Response::Other("((x 1))".into())
        );
        assert_eq!(
            Response::parse("(errors x)"),
            Response::Other("(errors x)".into())
        );
        assert_eq!(
            Response::parse("(error |odd|)"),
            Response::Error("|odd|".into())
        );
    }

    #[test]
    fn error_round_trip() {
        let r = Response::Error("say \"hi\"".into());
        assert_eq!(r.to_text(), "(error \"say \"\"hi\"\"\")");
        assert_eq!(Response::parse(&r.to_text()), r);
    }
}
