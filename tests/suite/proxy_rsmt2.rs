//! smtproxy driven through the `rsmt2` crate exactly as a tool drives z3: `SmtConf::z3`
//! with the smtproxy binary as the command (rsmt2 adds `-in -smt2`, which smtproxy accepts).

use crate::common;

use rsmt2::parse::{ExprParser, IdentParser, ModelParser, ValueParser};
use rsmt2::{SmtConf, SmtRes, Solver};

/// Keeps every identifier, sort, value and expression as its SMT-LIB text.
#[derive(Clone, Copy)]
struct Text;

fn text(i: &[u8]) -> String {
    String::from_utf8_lossy(i).trim().to_string()
}
impl<'a> IdentParser<String, String, &'a [u8]> for Text {
    fn parse_ident(self, i: &'a [u8]) -> SmtRes<String> {
        Ok(text(i))
    }
    fn parse_type(self, i: &'a [u8]) -> SmtRes<String> {
        Ok(text(i))
    }
}
impl<'a> ModelParser<String, String, String, &'a [u8]> for Text {
    fn parse_value(
        self,
        i: &'a [u8],
        _: &String,
        _: &[(String, String)],
        _: &String,
    ) -> SmtRes<String> {
        Ok(text(i))
    }
}
impl<'a> ValueParser<String, &'a [u8]> for Text {
    fn parse_value(self, i: &'a [u8]) -> SmtRes<String> {
        Ok(text(i))
    }
}
impl<'a> ExprParser<String, (), &'a [u8]> for Text {
    fn parse_expr(self, i: &'a [u8], _: ()) -> SmtRes<String> {
        Ok(text(i))
    }
}

fn conf(strategy: &str) -> SmtConf {
    let mut c = SmtConf::z3(common::bin());
    c.option("--solver")
        .option("z3")
        .option("--strategy")
        .option(strategy)
        .option("--cache")
        .option("none");
    c
}

/// Integer value text (`5`, `(- 5)`) to i64.
fn int(v: &str) -> i64 {
    let v = v.trim();
    if let Some(n) = v.strip_prefix("(-").and_then(|r| r.strip_suffix(')')) {
        -n.trim()
            .parse::<i64>()
            .unwrap_or_else(|_| panic!("not an int: {v}"))
    } else {
        v.parse().unwrap_or_else(|_| panic!("not an int: {v}"))
    }
}

fn bv8(v: &str) -> u64 {
    let v = v.trim();
    if let Some(h) = v.strip_prefix("#x") {
        u64::from_str_radix(h, 16).unwrap()
    } else if let Some(b) = v.strip_prefix("#b") {
        u64::from_str_radix(b, 2).unwrap()
    } else {
        panic!("not a bit-vector literal: {v}")
    }
}

fn value<'a>(vals: &'a [(String, String)], e: &str) -> &'a str {
    &vals
        .iter()
        .find(|(k, _)| k == e)
        .unwrap_or_else(|| panic!("no value for {e} in {vals:?}"))
        .1
}

fn session(strategy: &str, check_success: bool) {
    common::require("z3");
    let mut c = conf(strategy);
    if check_success {
        c.check_success();
    }
    let mut s: Solver<Text> = Solver::new(c, Text).expect("spawn smtproxy through rsmt2");

    s.set_custom_logic("ALL").unwrap();
    s.declare_const("x", "Int").unwrap();
    s.declare_const("y", "Int").unwrap();
    s.declare_const("p", "Bool").unwrap();
    s.declare_const("v", "(_ BitVec 8)").unwrap();
    s.declare_fun("f", &["Int"], "Int").unwrap();
    s.define_fun("sum", &[("a", "Int"), ("b", "Int")], "Int", "(+ a b)")
        .unwrap();
    s.assert("(= (sum x y) 10)").unwrap();
    s.assert("(> x 6)").unwrap();
    s.assert("(= (f x) (* 2 y))").unwrap();
    s.assert("(= v (bvadd #x0f #x01))").unwrap();
    assert!(s.check_sat().unwrap(), "{strategy}: first check-sat");

    let vals: Vec<(String, String)> = s
        .get_values(&["x", "y", "(sum x y)", "(f x)", "v"])
        .unwrap();
    let (x, y) = (int(value(&vals, "x")), int(value(&vals, "y")));
    assert!(x > 6 && x + y == 10, "{strategy}: x={x} y={y}");
    assert_eq!(int(value(&vals, "(sum x y)")), 10, "{strategy}");
    assert_eq!(int(value(&vals, "(f x)")), 2 * y, "{strategy}");
    assert_eq!(bv8(value(&vals, "v")), 0x10, "{strategy}");

    let model = s.get_model().unwrap();
    let names: Vec<&str> = model.iter().map(|(n, _, _, _)| n.as_str()).collect();
    for n in ["x", "y", "v", "f"] {
        assert!(
            names.contains(&n),
            "{strategy}: {n} missing from get-model {model:?}"
        );
    }
    for (n, args, _sort, val) in &model {
        match n.as_str() {
            "x" => assert_eq!(int(val), x, "{strategy}: get-model x vs get-value x"),
            "y" => assert_eq!(int(val), y, "{strategy}: get-model y vs get-value y"),
            "v" => assert_eq!(bv8(val), 0x10),
            "f" => assert_eq!(args.len(), 1, "{strategy}: f's model arity"),
            n if n.starts_with("smtproxy") || n.contains('!') && !n.starts_with('f') => {
                panic!("{strategy}: internal name {n} leaked into the model: {model:?}")
            }
            _ => {}
        }
    }

    s.push(1).unwrap();
    s.assert("(< x 0)").unwrap();
    assert!(!s.check_sat().unwrap(), "{strategy}: x > 6 and x < 0");
    s.push(1).unwrap();
    s.assert("p").unwrap();
    assert!(
        !s.check_sat().unwrap(),
        "{strategy}: still unsat one level deeper"
    );
    s.pop(2).unwrap();
    assert!(s.check_sat().unwrap(), "{strategy}: sat after pop 2");

    // check-sat-assuming over Boolean constants.
    s.declare_const("big", "Bool").unwrap();
    s.declare_const("small", "Bool").unwrap();
    s.assert("(= big (> x 100))").unwrap();
    s.assert("(= small (< x 8))").unwrap();
    assert!(
        s.check_sat_assuming(&["big"]).unwrap(),
        "{strategy}: assuming big"
    );
    let vals: Vec<(String, String)> = s.get_values(&["x", "big"]).unwrap();
    assert!(
        int(value(&vals, "x")) > 100,
        "{strategy}: model under assumption big: {vals:?}"
    );
    assert!(
        !s.check_sat_assuming(&["big", "small"]).unwrap(),
        "{strategy}: assuming big and small"
    );
    assert!(
        s.check_sat_assuming(&["small", "p"]).unwrap(),
        "{strategy}: assuming small, p"
    );
    let vals: Vec<(String, String)> = s.get_values(&["x", "p", "small"]).unwrap();
    assert_eq!(int(value(&vals, "x")), 7, "{strategy}: 6 < x < 8: {vals:?}");
    assert_eq!(value(&vals, "p"), "true", "{strategy}");
    // Assumptions do not stick.
    assert!(
        s.check_sat().unwrap(),
        "{strategy}: plain check-sat after check-sat-assuming"
    );

    // An unknown-or-unsat answer through check_sat_or_unk.
    s.push(1).unwrap();
    s.assert("(and (> (* x x) 50) (< x 7) (> x 6))").unwrap();
    assert_eq!(
        s.check_sat_or_unk().unwrap(),
        Some(false),
        "{strategy}: no integer between 6 and 7"
    );
    s.pop(1).unwrap();

    // reset: everything is gone, the session goes on.
    s.reset().unwrap();
    s.declare_const("x", "(_ BitVec 4)").unwrap();
    s.assert("(= (bvmul x #x3) #x1)").unwrap();
    assert!(
        s.check_sat().unwrap(),
        "{strategy}: after reset, x re-declared as a bit-vector"
    );
    let vals: Vec<(String, String)> = s.get_values(&["x"]).unwrap();
    assert_eq!(
        bv8(value(&vals, "x")) * 3 % 16,
        1,
        "{strategy}: 3x = 1 mod 16: {vals:?}"
    );
    s.assert("(= x #x0)").unwrap();
    assert!(
        !s.check_sat().unwrap(),
        "{strategy}: x = 0 contradicts 3x = 1"
    );
    s.kill().unwrap();
}

/// Run a session with a watchdog: rsmt2 blocks on reads, so a missing answer would hang.
fn watched(strategy: &'static str, check_success: bool) {
    let (tx, rx) = std::sync::mpsc::channel();
    let h = std::thread::spawn(move || {
        session(strategy, check_success);
        let _ = tx.send(());
    });
    match rx.recv_timeout(std::time::Duration::from_secs(90)) {
        Ok(()) => h.join().unwrap(),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            if let Err(e) = h.join() {
                std::panic::resume_unwind(e)
            }
        }
        Err(_) => {
            panic!("{strategy}: rsmt2 session hung for 90 s (an answer smtproxy never sent?)")
        }
    }
}

#[test]
fn rsmt2_stack() {
    watched("stack", false);
}

#[test]
fn rsmt2_stack_print_success() {
    watched("stack", true);
}

#[test]
fn rsmt2_passthrough() {
    watched("passthrough", false);
}

#[test]
fn rsmt2_fresh() {
    watched("fresh", false);
}
