//! One long-lived `z3 -in` answering `check-sat`s through pipes, for the tests that ask z3
//! about many small scripts (`canon_props`, `canon_z3`, `enumerate_z3`, `proxy_models`).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

pub struct Z3Pipe {
    child: Child,
    inp: ChildStdin,
    out: BufReader<ChildStdout>,
}

impl Z3Pipe {
    pub fn new() -> Z3Pipe {
        let mut child = Command::new(super::program("z3"))
            .arg("-in")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .expect("z3 on PATH (scripts/install-deps.sh installs it)");
        let inp = child.stdin.take().expect("z3 stdin");
        let out = BufReader::new(child.stdout.take().expect("z3 stdout"));
        Z3Pipe { child, inp, out }
    }

    /// Send `text`, which ends in one `(check-sat)`, and return z3's answer, which must be
    /// `sat` or `unsat`.
    pub fn check(&mut self, text: &str) -> String {
        writeln!(self.inp, "{text}").expect("write z3");
        self.inp.flush().expect("flush z3");
        let mut line = String::new();
        self.out.read_line(&mut line).expect("read z3");
        let r = line.trim().to_string();
        assert!(r == "sat" || r == "unsat", "z3 said {r:?} for:\n{text}");
        r
    }
}

impl Drop for Z3Pipe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
