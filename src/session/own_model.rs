//! A model smtproxy validated itself (the cache stage's `sat`), as get-value and get-model
//! read it after the check-sat it answered.
//!
//! Invariant: values are evaluated under the model, completed with defaults, and the
//! completions are kept, so every answer about one check-sat agrees with the others.

use super::client::Decl;
use crate::query::eval::{EvalMemo, Evaluator, Model};
use crate::smt2::printer::print_term;
use crate::smt2::response::Dialect;
use crate::term::{TermId, TermStore};
use rustc_hash::FxHashMap;

/// A model smtproxy validated itself, as get-value and get-model read it after the
/// check-sat it answered. The values evaluated for earlier get-values are kept, and the
/// completions they made are set in the model, so the answers of one check-sat agree and a
/// KLEE query's sixteen get-values check the array's sort and evaluate shared subterms
/// once rather than sixteen times.
pub struct OwnModel {
    model: Model,
    /// A completing evaluator's values under `model` (see `EvalMemo`).
    memo: Option<EvalMemo>,
}

impl OwnModel {
    pub fn new(model: Model) -> OwnModel {
        OwnModel { model, memo: None }
    }

    /// The model as validated (before any completion a get-value made).
    pub fn model(&self) -> &Model {
        &self.model
    }

    /// Values for get-value, in the client's order, printed as `dialect`'s solver prints them.
    pub fn values(
        &mut self,
        store: &mut TermStore,
        terms: &[TermId],
        dialect: Dialect,
    ) -> Result<Vec<String>, String> {
        let mut vals = Vec::with_capacity(terms.len());
        let completions;
        {
            let mut ev = match self.memo.take() {
                Some(memo) => Evaluator::resume(store, &self.model, memo),
                None => Evaluator::new(store, &self.model, true),
            };
            for &t in terms {
                match ev.eval(t) {
                    Ok(Some(v)) => vals.push((t, v)),
                    Ok(None) => return Err("model does not determine the term".into()),
                    Err(e) => return Err(format!("cannot evaluate: {e:?}")),
                }
            }
            completions = ev.completions();
            self.memo = Some(ev.into_memo());
        }
        for (l, v) in completions {
            self.model.set(l, v);
        }
        let mut out = Vec::with_capacity(vals.len());
        let names = dialect.value_names();
        for (t, v) in vals {
            let s = store.sort(t);
            let vt = v.to_term(store, s);
            out.push(print_term(store, vt, &names));
        }
        Ok(out)
    }

    /// A get-model answer over the client's declared constants.
    pub fn model_text(
        &mut self,
        store: &mut TermStore,
        decls: &[Decl],
        dialect: Dialect,
    ) -> Result<String, String> {
        let mut entries = Vec::new();
        let mut seen: FxHashMap<String, ()> = FxHashMap::default();
        for d in decls.iter().rev() {
            if !d.params.is_empty() || seen.insert(d.name.clone(), ()).is_some() {
                continue;
            }
            let leaf = store.mk_sym_app(d.sym, vec![], d.ret);
            let v = self
                .values(store, &[leaf], dialect)?
                .pop()
                .unwrap_or_default();
            entries.push((
                crate::smt2::printer::quote_symbol(&d.name).into_owned(),
                String::new(),
                store.sorts.to_text(d.ret),
                v,
            ));
        }
        entries.reverse();
        Ok(crate::smt2::response::model(dialect, &entries))
    }
}
