//! Queries: assertions turned into conjuncts, independent components, canonical forms and cache keys.

pub mod canon;
pub mod definitions;
pub mod enumerate;
pub mod eval;
pub mod key;
pub mod literal;
pub mod slice;
pub mod value;
pub mod view;
