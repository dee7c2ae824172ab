//! A backend's get-model answer rewritten for the client: only the client's current
//! declarations, under the client's names, in the order its solver prints them.
//!
//! Invariant: an answer that needs no change is returned byte for byte; one that cannot be
//! read is returned as it is.

use crate::smt2::lexer::Sexps;
use crate::smt2::printer::quote_symbol;
use crate::smt2::response::{self, Dialect};

/// One client declaration as `filter_model` sees it: its client name, its place in the
/// client's declarations, and whether it is a function (arguments).
pub struct ModelName {
    pub client: String,
    pub index: usize,
    pub function: bool,
}

/// Rewrite a backend get-model answer for the client: keep only the entries of the
/// client's current declarations (`names` maps their backend names to them), so CSE
/// macros, declarations hoisted for earlier queries and renamed declarations never show,
/// and the client sees its own names, in the order of its own declarations (the backend
/// saw them in the order queries needed them). With `functions_last` (z3) the constants
/// come first, then the functions, each in declaration order, as z3 prints them; cvc5 and
/// yices keep declaration order throughout. With the `model` header of yices dropped, the
/// layout is z3's.
pub fn filter_model(
    text: &str,
    names: &rustc_hash::FxHashMap<String, ModelName>,
    dialect: Dialect,
) -> String {
    let functions_last = dialect == Dialect::Z3;
    let Ok(sx) = Sexps::parse(text) else {
        return text.to_string();
    };
    let Some(items) = entries(&sx) else {
        return text.to_string();
    };
    let mut changed = false;
    // (order, entry text)
    let mut kept: Vec<((bool, usize), String)> = Vec::new();
    for &it in items {
        let k = sx.list(it).unwrap_or(&[]);
        let name = k.get(1).and_then(|&n| sx.symbol(n));
        match name.map(|n| (n, names.get(n))) {
            Some((_, None)) => changed = true,
            Some((n, Some(m))) => {
                let order = (functions_last && m.function, m.index);
                if m.client != n {
                    changed = true;
                    let src = sx.source(it);
                    let name_src = sx.source(k[1]);
                    kept.push((order, src.replacen(name_src, &quote_symbol(&m.client), 1)));
                } else {
                    kept.push((order, sx.source(it).to_string()));
                }
            }
            // Not a `(define-fun NAME ...)` entry: kept, after the known ones, in the
            // solver's order.
            None => kept.push(((true, usize::MAX), sx.source(it).to_string())),
        }
    }
    if !kept.windows(2).all(|w| w[0].0 <= w[1].0) {
        changed = true;
        // Stable: entries the function does not know keep their relative order.
        kept.sort_by_key(|e| e.0);
    }
    if !changed {
        return text.to_string();
    }
    let entries: Vec<String> = kept.into_iter().map(|(_, k)| k).collect();
    response::model_of_entries(dialect, &entries)
}

/// The entries (node ids) of a printed model: the items of its first list, past the
/// `model` head yices (`--smt2-model-format`) and z3 before 4.8 put there.
pub(crate) fn entries<'s>(sx: &'s Sexps<'_>) -> Option<&'s [u32]> {
    let items = sx.list(*sx.roots.first()?)?;
    match items.first() {
        Some(&first) if sx.is_symbol(first, "model") => Some(&items[1..]),
        _ => Some(items),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn models_in_client_names_and_order() {
        let mut names = rustc_hash::FxHashMap::default();
        for (i, (backend, client, function)) in
            [("g", "g", true), ("y", "y", false), ("sp!d1!x", "x", false)]
                .into_iter()
                .enumerate()
        {
            let m = ModelName {
                client: client.into(),
                index: i,
                function,
            };
            names.insert(backend.to_string(), m);
        }
        // The backend's order, a renamed declaration and a CSE macro.
        let backend = "(\n  (define-fun |sp!d1!x| () Int\n    1)\n  (define-fun sp!m0 () Int\n    (+ y 1))\n  (define-fun g ((x!0 Int)) Int\n    0)\n  (define-fun y () Int\n    2)\n)";
        assert_eq!(
            filter_model(backend, &names, Dialect::Z3),
            "(\n  (define-fun y () Int\n    2)\n  (define-fun x () Int\n    1)\n  (define-fun g ((x!0 Int)) Int\n    0)\n)"
        );
        // cvc5 lists functions in declaration order, and does not indent.
        assert_eq!(
            filter_model(backend, &names, Dialect::Cvc5),
            "(\n(define-fun g ((x!0 Int)) Int\n    0)\n(define-fun y () Int\n    2)\n(define-fun x () Int\n    1)\n)"
        );
        // yices (`--smt2-model-format`) heads its model with `model`.
        let yices = "(model\n  (define-fun |sp!d1!x| () Int 1)\n  (define-fun y () Int 2))";
        assert_eq!(
            filter_model(yices, &names, Dialect::Yices),
            "(model\n  (define-fun y () Int 2)\n  (define-fun x () Int 1))"
        );
        // Already the client's: the solver's text as it is.
        let same = "(\n  (define-fun y () Int 2)\n  (define-fun g ((x!0 Int)) Int 0))";
        assert_eq!(filter_model(same, &names, Dialect::Z3), same);
    }
}
