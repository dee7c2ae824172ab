//! Queries: assertions turned into conjuncts, independent components, canonical forms and cache keys.

pub mod view;
pub mod slice;
pub mod canon;
pub mod eval;
pub mod value;
pub mod key;
