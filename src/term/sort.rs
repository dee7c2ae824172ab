//! Sorts, interned: every distinct sort is one `SortId`, so sort equality is id equality.
//! `Unknown` is the sort of a term built from an operator smtproxy does not model; such a
//! term can be printed and forwarded but never evaluated, canonicalised or cached. A sort's
//! text is made once, when it is interned, with names spelled by `symbol::quote_symbol`
//! (the printer's rule), so it reads back as the same sort.

use rustc_hash::FxHashMap;

#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug, PartialOrd, Ord)]
pub struct SortId(pub u32);

#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Sort {
    Bool,
    Int,
    Real,
    BitVec(u32),
    Array(SortId, SortId),
    /// A user sort (declare-sort, datatype) or a theory sort smtproxy does not model
    /// (String, FloatingPoint, ...): name, indices as written, and sort arguments.
    Named {
        name: String,
        indices: Vec<String>,
        args: Vec<SortId>,
    },
    Unknown,
}

#[derive(Default)]
pub struct SortStore {
    sorts: Vec<Sort>,
    /// Each sort's SMT-LIB text, made once when the sort is interned (sorts are few and
    /// their text is asked for on every canonicalisation and model print).
    texts: Vec<Box<str>>,
    /// Each sort's `is_modelled`, decided when it is interned (asked for every node a
    /// slicing walk visits).
    modelled: Vec<bool>,
    memo: FxHashMap<Sort, SortId>,
    /// Fast path for bit-vector sorts of small widths.
    bv_ids: Vec<Option<SortId>>,
}

impl SortStore {
    pub fn new() -> Self {
        let mut s = SortStore::default();
        // Fixed ids for the common sorts.
        s.intern(Sort::Bool);
        s.intern(Sort::Int);
        s.intern(Sort::Real);
        s.intern(Sort::Unknown);
        s
    }
    pub const BOOL: SortId = SortId(0);
    pub const INT: SortId = SortId(1);
    pub const REAL: SortId = SortId(2);
    pub const UNKNOWN: SortId = SortId(3);

    pub fn intern(&mut self, s: Sort) -> SortId {
        if let Some(&id) = self.memo.get(&s) {
            return id;
        }
        let id = SortId(self.sorts.len() as u32);
        let mut text = String::new();
        self.render(&s, &mut text);
        let modelled = match &s {
            Sort::Bool | Sort::Int | Sort::Real | Sort::BitVec(_) => true,
            Sort::Array(i, e) => self.is_modelled(*i) && self.is_modelled(*e),
            Sort::Named { .. } | Sort::Unknown => false,
        };
        self.modelled.push(modelled);
        self.sorts.push(s.clone());
        self.texts.push(text.into_boxed_str());
        self.memo.insert(s, id);
        id
    }
    pub fn get(&self, id: SortId) -> &Sort {
        &self.sorts[id.0 as usize]
    }
    pub fn bv(&mut self, w: u32) -> SortId {
        if let Some(Some(id)) = self.bv_ids.get(w as usize) {
            return *id;
        }
        let id = self.intern(Sort::BitVec(w));
        if w < 1024 {
            if self.bv_ids.len() <= w as usize {
                self.bv_ids.resize(w as usize + 1, None);
            }
            self.bv_ids[w as usize] = Some(id);
        }
        id
    }
    pub fn array(&mut self, i: SortId, e: SortId) -> SortId {
        self.intern(Sort::Array(i, e))
    }
    pub fn bv_width(&self, id: SortId) -> Option<u32> {
        match self.get(id) {
            Sort::BitVec(w) => Some(*w),
            _ => None,
        }
    }
    /// True when values of this sort can be evaluated by smtproxy's own evaluator.
    pub fn is_modelled(&self, id: SortId) -> bool {
        self.modelled[id.0 as usize]
    }
    /// SMT-LIB text of a sort.
    pub fn print(&self, id: SortId, out: &mut String) {
        out.push_str(self.text(id));
    }
    /// SMT-LIB text of a sort, as made when it was interned.
    pub fn text(&self, id: SortId) -> &str {
        &self.texts[id.0 as usize]
    }
    /// The text of a sort not yet interned (its argument sorts are).
    fn render(&self, s: &Sort, out: &mut String) {
        match s {
            Sort::Bool => out.push_str("Bool"),
            Sort::Int => out.push_str("Int"),
            Sort::Real => out.push_str("Real"),
            Sort::Unknown => out.push_str("?Unknown"),
            Sort::BitVec(w) => {
                out.push_str("(_ BitVec ");
                out.push_str(&w.to_string());
                out.push(')');
            }
            Sort::Array(i, e) => {
                out.push_str("(Array ");
                self.print(*i, out);
                out.push(' ');
                self.print(*e, out);
                out.push(')');
            }
            Sort::Named {
                name,
                indices,
                args,
            } => {
                let name = super::symbol::quote_symbol(name);
                if indices.is_empty() && args.is_empty() {
                    out.push_str(&name);
                    return;
                }
                let head = if indices.is_empty() {
                    name.into_owned()
                } else {
                    format!("(_ {} {})", name, indices.join(" "))
                };
                if args.is_empty() {
                    out.push_str(&head);
                    return;
                }
                out.push('(');
                out.push_str(&head);
                for &a in args {
                    out.push(' ');
                    self.print(a, out);
                }
                out.push(')');
            }
        }
    }
    pub fn to_text(&self, id: SortId) -> String {
        self.text(id).to_string()
    }
}
