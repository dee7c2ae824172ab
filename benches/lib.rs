//! Nothing: the package is its benches (`benches/*.rs`); cargo wants a target besides them.
