//! What each solver says to a `set-option` whose value smtproxy keeps itself (models,
//! print-success, global declarations, the unsat-core family) or that a solver refuses
//! from its state alone: a value of the wrong kind, or an option that can no longer be
//! changed. The backends cannot be asked: their state is smtproxy's, not the client's.
//!
//! Invariants:
//! * Pure: a verdict from the dialect, the keyword, the value's source text and the
//!   client's phase ([`Phase`]); the engine says it and leaves its state as it was.
//! * The phase is each solver's own: z3 builds its term manager at the first declaration,
//!   definition, assertion, push, check or get-value; cvc5 is "fully initialized" at the
//!   first assertion, definition, push or check; yices fixes its context at `set-logic`.
//!   A `(reset)` starts over in all three ([`initializes`]).
//! * Wording and order of the checks are the solvers' own (z3 5.4, cvc5 1.x, yices 2.6,
//!   compared byte for byte in `tests/suite/proxy_acceptance.rs`). z3 says where (the
//!   end of the keyword: the engine adds it), cvc5 and yices do not. cvc5 ends the session
//!   (exit code 1) on an option it can no longer change; z3 and yices go on.

use crate::smt2::command::Command;
use crate::smt2::response::Dialect;

/// The client's state, as far as a solver's option checks look at it.
#[derive(Clone, Copy, Debug, Default)]
pub struct Phase {
    /// See [`initializes`]: z3's manager exists, cvc5 is fully initialized, yices' logic
    /// is set.
    pub initialized: bool,
    /// An assertion since the start or the last reset (z3 then refuses to change the
    /// unsat-core family).
    pub asserted: bool,
    /// z3's `:global-decls` as it stands (z3 refuses only a change of it).
    pub global_declarations: bool,
}

/// How a solver refuses a `set-option`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// An error (z3: at the end of the keyword); the session goes on, the option as it was.
    Error(String),
    /// cvc5: the error, then the session ends with exit code 1.
    End(String),
    /// cvc5, an option smtproxy does not know: the session ends with this error if cvc5
    /// knows the option (the backend does not answer `unsupported`).
    EndIfKnown(String),
}

/// Whether `cmd` moves the client's solver into the phase where some options are fixed
/// (see the module doc).
pub fn initializes(dialect: Dialect, cmd: &Command) -> bool {
    match dialect {
        Dialect::Z3 => {
            cmd.is_declaration()
                || matches!(
                    cmd,
                    Command::Push(_)
                        | Command::Assert(..)
                        | Command::CheckSat
                        | Command::CheckSatAssuming(_)
                        | Command::GetValue(_)
                )
        }
        Dialect::Cvc5 => matches!(
            cmd,
            Command::DefineFun { .. }
                | Command::DefineFunsRec(_)
                | Command::Push(_)
                | Command::Assert(..)
                | Command::CheckSat
                | Command::CheckSatAssuming(_)
                | Command::ResetAssertions
        ),
        Dialect::Yices => matches!(cmd, Command::SetLogic(_)),
    }
}

/// The value of a Boolean option as the solver reads `value` (its source text): z3 and
/// yices take a quoted symbol `|true|` as `true`, cvc5 only the bare words.
pub fn bool_value(dialect: Dialect, value: &str) -> Option<bool> {
    let v = match dialect {
        Dialect::Cvc5 => value,
        _ => value
            .strip_prefix('|')
            .and_then(|v| v.strip_suffix('|'))
            .unwrap_or(value),
    };
    match v {
        "true" => Some(true),
        "false" => Some(false),
        _ => None,
    }
}

/// Whether `value` of `:regular-output-channel` names standard output as the solver reads
/// it (cvc5 takes a string literal as the name of a file, quotes included).
pub fn is_stdout(dialect: Dialect, value: &str) -> bool {
    match dialect {
        Dialect::Cvc5 => value == "stdout",
        _ => matches!(value, "stdout" | "\"stdout\"" | "|stdout|"),
    }
}

/// The Boolean options whose values the checks below judge.
fn is_bool_option(dialect: Dialect, key: &str) -> bool {
    match key {
        ":print-success"
        | ":produce-models"
        | ":produce-assignments"
        | ":produce-unsat-cores"
        | ":produce-unsat-assumptions"
        | ":global-declarations" => true,
        ":produce-proofs" => dialect != Dialect::Yices,
        ":global-decls" | ":produce-assertions" | ":interactive-mode" => dialect == Dialect::Z3,
        ":incremental" => dialect == Dialect::Cvc5,
        ":produce-unsat-model-interpolants" => dialect == Dialect::Yices,
        _ => false,
    }
}

/// What kind of value z3's reader makes of `value`.
enum Z3Value {
    Numeral,
    String,
    Symbol,
}

fn z3_kind(value: &str) -> Z3Value {
    let b = value.as_bytes();
    match b.first() {
        Some(b'"') => Z3Value::String,
        Some(b'#') => Z3Value::Numeral,
        Some(c) if c.is_ascii_digit() => Z3Value::Numeral,
        _ => Z3Value::Symbol,
    }
}

/// cvc5's options that stay settable once it is fully initialized.
const CVC5_MUTABLE: &[&str] = &[
    ":print-success",
    ":verbosity",
    ":reproducible-resource-limit",
    ":tlimit-per",
    ":regular-output-channel",
    ":diagnostic-output-channel",
];

/// Whether cvc5 takes option `key` once it is fully initialized.
pub fn cvc5_mutable(key: &str) -> bool {
    CVC5_MUTABLE.contains(&key)
}

/// Whether a backend must be asked to take option `key` in a fresh state (after a
/// `(reset)`): cvc5 takes most options only before it is fully initialized, yices some
/// only before set-logic, and a backend's state is smtproxy's, not the client's.
pub fn ask_fresh(dialect: Dialect, key: &str) -> bool {
    match dialect {
        Dialect::Cvc5 => !cvc5_mutable(key),
        Dialect::Yices => YICES_BEFORE_LOGIC.contains(&key),
        Dialect::Z3 => false,
    }
}

/// Options cvc5 knows that smtproxy keeps or models itself.
const CVC5_KNOWN: &[&str] = &[
    ":produce-models",
    ":produce-unsat-cores",
    ":produce-proofs",
    ":produce-unsat-assumptions",
    ":produce-assignments",
    ":global-declarations",
    ":incremental",
];

/// yices' options that must come before `set-logic`.
const YICES_BEFORE_LOGIC: &[&str] = &[
    ":produce-models",
    ":produce-unsat-cores",
    ":produce-unsat-assumptions",
    ":produce-assignments",
    ":global-declarations",
    ":produce-unsat-model-interpolants",
];

/// How the client's solver refuses `(set-option key value)` in `phase`, if it does.
/// `taken`: the backends took this option before (so the solver knows it).
pub fn refusal(
    dialect: Dialect,
    key: &str,
    value: &str,
    phase: Phase,
    taken: bool,
) -> Option<Refusal> {
    let boolean = is_bool_option(dialect, key);
    match dialect {
        Dialect::Z3 => {
            let kind = z3_kind(value);
            if boolean {
                match kind {
                    Z3Value::Numeral => return Some(err("option value is not a numeral")),
                    Z3Value::String => return Some(err("option value is not a string")),
                    Z3Value::Symbol => {}
                }
            }
            let fixed = |name: &str| {
                err(&format!(
                    "error setting '{name}', option value cannot be modified after initialization"
                ))
            };
            match key {
                ":produce-assertions" | ":interactive-mode" if phase.initialized => {
                    return Some(fixed(":produce-assertions"));
                }
                ":produce-unsat-cores" | ":produce-proofs" | ":produce-unsat-assumptions"
                    if phase.asserted =>
                {
                    return Some(err(&format!(
                        "error setting '{key}', option value cannot be modified after assertions have been added"
                    )));
                }
                _ => {}
            }
            let v = bool_value(dialect, value);
            if boolean && v.is_none() {
                return Some(err("invalid option value, true/false expected"));
            }
            let global = matches!(key, ":global-decls" | ":global-declarations");
            if global && phase.initialized && v != Some(phase.global_declarations) {
                return Some(fixed(":global-decls"));
            }
            None
        }
        Dialect::Cvc5 => {
            if phase.initialized && !cvc5_mutable(key) {
                let msg = format!(
                    "Invalid call to 'setOption' for option '{}', solver is already fully initialized",
                    key.trim_start_matches(':')
                );
                return Some(if taken || CVC5_KNOWN.contains(&key) {
                    Refusal::End(msg)
                } else {
                    Refusal::EndIfKnown(msg)
                });
            }
            if boolean && bool_value(dialect, value).is_none() {
                return Some(err(&format!(
                    "Error in option parsing: Argument '{value}' for bool option {} is not a bool constant",
                    key.trim_start_matches(':')
                )));
            }
            None
        }
        Dialect::Yices => {
            if phase.initialized && YICES_BEFORE_LOGIC.contains(&key) {
                return Some(err(&format!(
                    "option {key} can't be set now. It must be set before (set-logic ...)"
                )));
            }
            if boolean && bool_value(dialect, value).is_none() {
                return Some(err(&format!("option {key} requires a Boolean value")));
            }
            None
        }
    }
}

fn err(msg: &str) -> Refusal {
    Refusal::Error(msg.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase(initialized: bool) -> Phase {
        Phase {
            initialized,
            ..Phase::default()
        }
    }

    fn error(d: Dialect, k: &str, v: &str, p: Phase) -> Option<String> {
        match refusal(d, k, v, p, false)? {
            Refusal::Error(m) => Some(m),
            r => panic!("not an error that goes on: {r:?}"),
        }
    }

    #[test]
    fn z3_values_by_kind_and_its_fixed_options() {
        let z = Dialect::Z3;
        let fresh = phase(false);
        assert_eq!(error(z, ":print-success", "true", fresh), None);
        assert_eq!(error(z, ":print-success", "|true|", fresh), None);
        assert_eq!(
            error(z, ":print-success", "1", fresh).as_deref(),
            Some("option value is not a numeral")
        );
        assert_eq!(
            error(z, ":produce-models", "#x1", fresh).as_deref(),
            Some("option value is not a numeral")
        );
        assert_eq!(
            error(z, ":produce-models", "\"true\"", fresh).as_deref(),
            Some("option value is not a string")
        );
        assert_eq!(
            error(z, ":global-declarations", "foo", phase(true)).as_deref(),
            Some("invalid option value, true/false expected")
        );
        // A change of :global-decls once the manager exists; the same value is taken.
        assert_eq!(error(z, ":global-decls", "false", phase(true)), None);
        assert!(error(z, ":global-decls", "true", phase(true))
            .is_some_and(|m| m.starts_with("error setting ':global-decls'")));
        // interactive-mode is produce-assertions, fixed whatever the value.
        assert!(error(z, ":interactive-mode", "false", phase(true))
            .is_some_and(|m| m.starts_with("error setting ':produce-assertions'")));
        assert_eq!(error(z, ":interactive-mode", "false", fresh), None);
        // Not a Boolean option: the backend judges it.
        assert_eq!(error(z, ":random-seed", "3", phase(true)), None);
    }

    #[test]
    fn cvc5_ends_on_a_fixed_option_and_judges_values_as_written() {
        let c = Dialect::Cvc5;
        assert_eq!(
            refusal(c, ":produce-models", "true", phase(true), false),
            Some(Refusal::End(
                "Invalid call to 'setOption' for option 'produce-models', solver is already fully initialized".into()
            ))
        );
        assert_eq!(
            refusal(c, ":print-success", "true", phase(true), false),
            None
        );
        assert!(matches!(
            refusal(c, ":seed", "3", phase(true), false),
            Some(Refusal::EndIfKnown(_))
        ));
        assert!(matches!(
            refusal(c, ":seed", "3", phase(true), true),
            Some(Refusal::End(_))
        ));
        assert_eq!(refusal(c, ":seed", "3", phase(false), false), None);
        assert_eq!(
            error(c, ":produce-models", "|true|", phase(false)).as_deref(),
            Some("Error in option parsing: Argument '|true|' for bool option produce-models is not a bool constant")
        );
    }

    #[test]
    fn yices_fixes_its_context_at_set_logic() {
        let y = Dialect::Yices;
        assert_eq!(
            error(y, ":produce-models", "1", phase(true)).as_deref(),
            Some("option :produce-models can't be set now. It must be set before (set-logic ...)")
        );
        assert_eq!(
            error(y, ":produce-models", "1", phase(false)).as_deref(),
            Some("option :produce-models requires a Boolean value")
        );
        assert_eq!(error(y, ":print-success", "|true|", phase(true)), None);
        assert!(error(y, ":print-success", "yes", phase(true)).is_some());
    }

    #[test]
    fn the_phase_each_solver_keeps() {
        let decl = Command::DeclareFun {
            name: "x".into(),
            params: Vec::new(),
            ret: crate::term::SortStore::BOOL,
        };
        assert!(initializes(Dialect::Z3, &decl));
        assert!(!initializes(Dialect::Cvc5, &decl));
        assert!(!initializes(Dialect::Yices, &decl));
        let logic = Command::SetLogic("QF_BV".into());
        assert!(initializes(Dialect::Yices, &logic));
        assert!(!initializes(Dialect::Z3, &logic));
        assert!(initializes(Dialect::Cvc5, &Command::CheckSat));
    }
}
