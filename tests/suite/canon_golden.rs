//! Golden digest of the cache keys of every component of two shipped KLEE logs. Keys go
//! into on-disk and shared (Redis) stores, so they may change only together with
//! `query::key::KEY_FORMAT_VERSION`: when this test fails after a change to slicing,
//! normalisation, canonical ordering, renaming or printing, either the change was not meant
//! to alter canonical text (fix it), or it was, and the version must be bumped and the
//! digest below updated (old stores then miss instead of serving entries keyed otherwise).

use smtproxy::query::key::{key, key_hex, KEY_FORMAT_VERSION};
use smtproxy::query::{canon::canonicalize, slice::slice, view::conjuncts};
use smtproxy::smt2::command::Command;
use smtproxy::smt2::parser::parse_command;
use smtproxy::smt2::reader::{CommandReader, Frame};
use smtproxy::term::signature::Signature;
use smtproxy::term::{Op, TermStore};
use std::path::Path;

/// blake3 over every component's key and its renaming (client names in canonical order),
/// query by query; and the number of components.
fn digest(rel: &str) -> (String, usize) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("smt2-corpus/klee")
        .join(rel);
    let text = smtproxy::corpus::load(&path).expect("corpus log").text;
    let mut store = TermStore::new();
    let mut sig = Signature::default();
    let mut asserted = Vec::new();
    let mut h = blake3::Hasher::new();
    let mut n = 0;
    for f in CommandReader::new(text.as_bytes()) {
        let Frame::Command(raw) = f else { continue };
        let cmd = parse_command(&mut store, &sig, &raw.text).expect("KLEE command parses");
        match &cmd {
            Command::Exit | Command::Reset => {
                sig.clear();
                asserted.clear();
                continue;
            }
            Command::Assert(t, _) => asserted.push(*t),
            Command::CheckSat => {
                let cs = conjuncts(&mut store, &asserted);
                for comp in slice(&store, &cs) {
                    let c = canonicalize(&mut store, &comp.conjuncts);
                    h.update(key_hex(&key(&c.text, "QF_AUFBV", &[])).as_bytes());
                    for (client, _) in &c.renaming {
                        let Op::Sym(s) = store.op(*client) else {
                            panic!("renamed a non-constant")
                        };
                        h.update(b" ");
                        h.update(store.sym_name(s).as_bytes());
                    }
                    h.update(b"\n");
                    n += 1;
                }
            }
            _ => {}
        }
        cmd.declare_in(&mut store, &mut sig);
    }
    (h.finalize().to_hex()[..32].to_string(), n)
}

#[test]
fn canonical_keys_are_pinned() {
    assert_eq!(
        KEY_FORMAT_VERSION, 1,
        "version bumped: update the digests below"
    );
    for (rel, want, comps) in [
        (
            "sbase-expr/solver-queries.smt2.gz",
            "6e0ca1e3ad8a114fbbe1e0a6545601a5",
            316,
        ),
        (
            "regexp/solver-queries.smt2.gz",
            "f32ea38e41a8107e51c8bb965c32afce",
            158,
        ),
        (
            "sort/solver-queries.smt2.gz",
            "be0f3ed85d7c9362c82cdc7c7de9903d",
            59,
        ),
    ] {
        let (got, n) = digest(rel);
        assert_eq!(n, comps, "{rel}: number of components");
        assert_eq!(
            got, want,
            "{rel}: the cache keys changed (see the module doc: bump KEY_FORMAT_VERSION)"
        );
    }
}
