//! The printer's output parses back to the same term id, for every assertion and get-value
//! term of every shipped corpus log (KLEE logs, the third-party dumps, the SMT-LIB
//! incremental benchmark); and on each of their commands the one-pass parser, where it
//! applies, gives what the general parser gives.

use smtproxy::corpus;
use smtproxy::smt2::command::Command;
use smtproxy::smt2::parser::{check_fast_path, parse_command, parse_term};
use smtproxy::smt2::printer::{print_term, ClientNames};
use smtproxy::smt2::reader::{CommandReader, Frame};
use smtproxy::term::signature::{DeclKind, FunDef, Signature};
use smtproxy::term::TermStore;
use std::path::{Path, PathBuf};

fn corpus_logs() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("smt2-corpus");
    let mut v = Vec::new();
    for dir in ["klee", "external"] {
        let mut stack = vec![root.join(dir)];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).expect("corpus dir").flatten() {
                let p = e.path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.to_string_lossy().contains(".smt2") {
                    v.push(p);
                }
            }
        }
    }
    v.sort();
    v
}

#[test]
fn printed_terms_parse_back_and_both_parsers_agree() {
    let logs = corpus_logs();
    assert!(logs.len() >= 16, "corpus not found: {logs:?}");
    let mut checked = 0usize;
    let (mut eligible, mut fast_taken, mut other_taken) = (0usize, 0usize, 0usize);
    for path in logs {
        let log = corpus::load(&path).expect("load log");
        let mut store = TermStore::new();
        let mut sig = Signature::default();
        for frame in CommandReader::new(log.text.as_bytes()) {
            let Frame::Command(c) = frame else {
                panic!("{}: framing error {frame:?}", path.display())
            };
            // Where the one-pass parser (src/smt2/fast.rs) takes a command, the general
            // parser gives the same command and looks up the same names.
            let taken = match check_fast_path(&mut store, &sig, &c.text) {
                Ok(taken) => taken,
                Err(e) => panic!("{}:{}: {e}", path.display(), c.line),
            };
            let cmd = match parse_command(&mut store, &sig, &c.text) {
                Ok(cmd) => cmd,
                Err(e) => panic!("{}:{}: {} in {}", path.display(), c.line, e.msg, c.text),
            };
            if matches!(cmd, Command::Assert(..) | Command::GetValue(..)) {
                eligible += 1;
                fast_taken += usize::from(taken);
            } else {
                other_taken += usize::from(taken);
            }
            let terms: Vec<_> = match &cmd {
                Command::Assert(t, _) => vec![*t],
                Command::GetValue(ts) => ts.iter().map(|x| x.0).collect(),
                Command::DeclareFun { name, params, ret } => {
                    let sym = store.sym(name);
                    sig.add_fun(
                        name,
                        FunDef::Declared {
                            sym,
                            params: params.clone(),
                            ret: *ret,
                            kind: DeclKind::Free,
                        },
                    );
                    vec![]
                }
                Command::Push(n) => {
                    (0..*n).for_each(|_| sig.push());
                    vec![]
                }
                Command::Pop(n) => {
                    (0..*n).for_each(|_| {
                        sig.pop();
                    });
                    vec![]
                }
                Command::Exit | Command::Reset => {
                    sig.clear();
                    vec![]
                }
                _ => vec![],
            };
            for t in terms {
                let text = print_term(&store, t, &ClientNames);
                let back = parse_term(&mut store, &sig, &text).unwrap_or_else(|e| {
                    panic!(
                        "{}: printed term does not parse: {} in {text}",
                        path.display(),
                        e.msg
                    )
                });
                assert_eq!(
                    back,
                    t,
                    "{}: round trip changed the term:\n{text}",
                    path.display()
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 10_000, "only {checked} terms checked");
    // The one-pass parser takes nearly every assert and get-value of the corpus.
    eprintln!(
        "one-pass parser: {fast_taken} of {eligible} assert and get-value commands, \
         {other_taken} other commands"
    );
    assert!(
        eligible > 140_000,
        "only {eligible} assert and get-value commands"
    );
    assert!(
        fast_taken * 100 >= eligible * 99,
        "the one-pass parser took {fast_taken} of {eligible}"
    );
    // Each KLEE query's declarations, check-sat and exit take it too.
    assert!(
        other_taken > 40_000,
        "the one-pass parser took {other_taken} other commands"
    );
}
