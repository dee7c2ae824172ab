//! The library's typed errors. Every error carries its cause; the binary turns them
//! into `anyhow` reports at the edge.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum Error {
    #[error(transparent)]
    Driver(#[from] crate::driver::DriverError),
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error(transparent)]
    Io(#[from] std::io::Error),
}
