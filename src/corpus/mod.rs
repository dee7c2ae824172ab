//! Recorded query logs: plain SMT-LIB scripts, KLEE `--use-query-log` SMT2 logs and KLEE's
//! KQuery logs (read as the SMT2 log they stand for, [`kquery`]), also gzip-compressed. A
//! KLEE log's answers come from its result comments (Truth `Is Valid: true` = unsat;
//! Validity `1` = unsat, `0`/`-1` = sat; Value = sat; InitialValues `Solvable: true` = sat,
//! `false` = unsat), attached to the check-sat of the record they follow. In a KLEE log
//! each record's `(exit)` ends that query, not the session: replay reads it as `(reset)`.

pub mod kquery;

use crate::session::vocab::Answer;
use flate2::read::GzDecoder;
use std::io::Read;
use std::path::Path;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LogKind {
    Klee,
    Script,
}

pub struct Log {
    pub path: String,
    pub kind: LogKind,
    pub text: String,
    /// KLEE logs: expected answer of the n-th check-sat (None when not recorded).
    pub klee_expected: Vec<Option<Answer>>,
}

pub fn read_text(path: &Path) -> Result<String, crate::error::Error> {
    let err = |source| crate::error::Error::Read {
        path: path.display().to_string(),
        source,
    };
    let bytes = std::fs::read(path).map_err(err)?;
    let bytes = if bytes.starts_with(&[0x1f, 0x8b]) {
        let mut out = Vec::new();
        GzDecoder::new(&bytes[..])
            .read_to_end(&mut out)
            .map_err(err)?;
        out
    } else {
        bytes
    };
    String::from_utf8(bytes).map_err(|_| {
        err(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            "log is not UTF-8",
        ))
    })
}

pub fn load(path: &Path) -> Result<Log, crate::error::Error> {
    let mut text = read_text(path)?;
    let name = path.display().to_string();
    if kquery::is_kquery(&name, &text) {
        text = kquery::to_smt2(&text).map_err(|source| crate::error::Error::Kquery {
            path: name.clone(),
            source,
        })?;
    }
    let kind = if text
        .lines()
        .take(20)
        .any(|l| l.starts_with("; Query ") && l.contains("-- Type:"))
    {
        LogKind::Klee
    } else {
        LogKind::Script
    };
    let klee_expected = if kind == LogKind::Klee {
        klee_answers(&text)
    } else {
        Vec::new()
    };
    Ok(Log {
        path: name,
        kind,
        text,
        klee_expected,
    })
}

/// Expected answers of a KLEE log, one per `(check-sat)` line, in order.
pub fn klee_answers(text: &str) -> Vec<Option<Answer>> {
    let mut out: Vec<Option<Answer>> = Vec::new();
    let mut qtype = "";
    for line in text.lines() {
        let l = line.trim();
        if let Some(rest) = l.strip_prefix("; Query ") {
            qtype = rest
                .split("Type: ")
                .nth(1)
                .and_then(|t| t.split(',').next())
                .unwrap_or("")
                .trim();
            continue;
        }
        if l == "(check-sat)" {
            out.push(if qtype == "Value" {
                Some(Answer::Sat)
            } else {
                None
            });
            continue;
        }
        let Some(c) = l.strip_prefix(';') else {
            continue;
        };
        let c = c.trim();
        let a = if let Some(v) = c.strip_prefix("Is Valid:") {
            match v.trim() {
                "true" => Some(Answer::Unsat),
                "false" => Some(Answer::Sat),
                _ => None,
            }
        } else if let Some(v) = c.strip_prefix("Validity:") {
            match v.trim() {
                "1" => Some(Answer::Unsat),
                "0" | "-1" => Some(Answer::Sat),
                _ => None,
            }
        } else if let Some(v) = c.strip_prefix("Solvable:") {
            match v.trim() {
                "true" => Some(Answer::Sat),
                "false" => Some(Answer::Unsat),
                _ => None,
            }
        } else if c.starts_with("Result:") {
            Some(Answer::Sat)
        } else {
            continue;
        };
        if let (Some(last), Some(a)) = (out.last_mut(), a) {
            *last = Some(a);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn klee_result_comments() {
        let t = "; Query 0 -- Type: Truth, Instructions: 1\n(check-sat)\n(exit)\n;   OK -- Elapsed: 1s\n;   Is Valid: true\n\n\
                 ; Query 1 -- Type: Validity, Instructions: 1\n(check-sat)\n(exit)\n;   Validity: -1\n\n\
                 ; Query 2 -- Type: Value, Instructions: 1\n(check-sat)\n(exit)\n;   Result: 5\n\n\
                 ; Query 3 -- Type: InitialValues, Instructions: 1\n(check-sat)\n(exit)\n;   Solvable: false\n";
        assert_eq!(
            klee_answers(t),
            vec![
                Some(Answer::Unsat),
                Some(Answer::Sat),
                Some(Answer::Sat),
                Some(Answer::Unsat)
            ]
        );
    }
}
