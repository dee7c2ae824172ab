//! The library's typed errors. Every error carries its cause; the binary turns them
//! into `anyhow` reports at the edge.
