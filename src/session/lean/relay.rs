//! The solver's output on its way to the client: bytes held until the passthrough writes
//! them out, in order.
//!
//! Invariants: bytes leave in the order they were queued; the only bytes dropped are the
//! one line break (`\n` or `\r\n`) that follows a `success` the client did not ask for
//! (`skip_line_break`), and only when it is the next thing the solver prints.

/// Solver output for the client not yet written.
#[derive(Default)]
pub struct Relay {
    out: Vec<u8>,
    /// Drop the line break that ends a dropped `success`.
    skip_nl: bool,
}

impl Relay {
    /// Queue solver output for the client (without the line break of a dropped `success`).
    pub fn push(&mut self, bytes: &[u8]) {
        let mut b = bytes;
        if self.skip_nl && !b.is_empty() {
            self.skip_nl = false;
            if let Some(r) = b.strip_prefix(b"\r\n").or_else(|| b.strip_prefix(b"\n")) {
                b = r;
            }
        }
        self.out.extend_from_slice(b);
    }

    /// The next line break the solver prints is not passed on (a `success` was dropped,
    /// or its line break was given already).
    pub fn skip_line_break(&mut self) {
        self.skip_nl = true;
    }

    /// A new solver: nothing of the old one's line is pending.
    pub fn new_solver(&mut self) {
        self.skip_nl = false;
    }

    /// How many bytes are held.
    pub fn len(&self) -> usize {
        self.out.len()
    }

    pub fn is_empty(&self) -> bool {
        self.out.is_empty()
    }

    /// The held bytes, to be written.
    pub fn bytes(&self) -> &[u8] {
        &self.out
    }

    /// Forget the held bytes (they were written), keeping the buffer.
    pub fn clear(&mut self) {
        self.out.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dropped_success_takes_its_line_break_only() {
        let mut r = Relay::default();
        r.push(b"sat\n");
        r.skip_line_break();
        r.push(b"\r\nunsat\n");
        r.push(b"\n");
        assert_eq!(r.bytes(), b"sat\nunsat\n\n");
        r.clear();
        assert!(r.is_empty());
    }
}
