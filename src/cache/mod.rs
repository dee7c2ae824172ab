//! Result stores.
