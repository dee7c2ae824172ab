//! Queries: assertions turned into conjuncts, independent components, canonical forms and cache keys.

pub mod view;
pub mod slice;
pub mod canon;
pub mod key;
