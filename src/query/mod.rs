//! Queries: evaluation of terms under models (`eval`) and the values involved (`value`).

pub mod eval;
pub mod value;
