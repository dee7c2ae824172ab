//! The library's typed errors. Every error carries its cause; the binary turns them
//! into `anyhow` reports at the edge.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum Error {
    #[error(transparent)]
    Driver(#[from] crate::driver::DriverError),
    // The cause is the error's source, printed after this by the report (`{:#}`).
    #[error("cannot read {path}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("cannot read {path} as KQuery")]
    Kquery {
        path: String,
        source: crate::corpus::kquery::Error,
    },
    #[error(transparent)]
    Io(#[from] std::io::Error),
}
