//! Empty: this package only pins easy-smt for scripts/test-easy-smt.sh.
