use super::*;
use crate::smt2::command::Command;
use crate::smt2::parser::{parse_command, parse_term};
use crate::term::signature::{DeclKind, FunDef, Signature};

struct Env {
    store: TermStore,
    sig: Signature,
}

impl Env {
    fn new() -> Self {
        Env {
            store: TermStore::new(),
            sig: Signature::default(),
        }
    }
    /// Declare with SMT-LIB text; returns the leaf for constants (or the app-less Sym term).
    fn declare(&mut self, text: &str) -> (Sym, SortId) {
        let Ok(Command::DeclareFun { name, params, ret }) =
            parse_command(&mut self.store, &self.sig, text)
        else {
            panic!("bad declaration {text}")
        };
        let sym = self.store.sym(&name);
        self.sig.add_fun(
            &name,
            FunDef::Declared {
                sym,
                params,
                ret,
                kind: DeclKind::Free,
            },
        );
        (sym, ret)
    }
    fn constant(&mut self, text: &str) -> TermId {
        let (sym, ret) = self.declare(text);
        self.store.mk_sym_app(sym, vec![], ret)
    }
    fn term(&mut self, text: &str) -> TermId {
        parse_term(&mut self.store, &self.sig, text).unwrap_or_else(|e| panic!("{text}: {e:?}"))
    }
    fn value(&mut self, text: &str) -> Value {
        let t = self.term(text);
        Value::from_term(&self.store, t).unwrap_or_else(|| panic!("not a value: {text}"))
    }
    fn eval_in(
        &mut self,
        model: &Model,
        complete: bool,
        text: &str,
    ) -> Result<Option<Value>, EvalError> {
        let t = self.term(text);
        Evaluator::new(&self.store, model, complete).eval(t)
    }
    fn eval(&mut self, text: &str) -> Value {
        let m = Model::new();
        self.eval_in(&m, false, text)
            .unwrap_or_else(|e| panic!("{text}: {e}"))
            .unwrap_or_else(|| panic!("{text}: undetermined"))
    }
    /// Assert that `text` evaluates to the value of the literal `expect`.
    fn check(&mut self, text: &str, expect: &str) {
        let got = self.eval(text);
        let want = self.value(expect);
        assert_eq!(got, want, "{text} should be {expect}");
    }
}

#[test]
fn bv_division_by_zero() {
    let mut e = Env::new();
    e.check("(bvudiv #x05 #x00)", "#xff");
    e.check("(bvurem #x05 #x00)", "#x05");
    e.check("(bvudiv #b1 #b0)", "#b1");
    e.check("(bvurem #b1 #b0)", "#b1");
    e.check(
        "(bvudiv #x0000000000000007 #x0000000000000000)",
        "#xffffffffffffffff",
    );
    e.check(
        "(bvurem #x0000000000000007 #x0000000000000000)",
        "#x0000000000000007",
    );
    e.check(
        "(bvudiv (_ bv7 65) (_ bv0 65))",
        "#b11111111111111111111111111111111111111111111111111111111111111111",
    );
    e.check("(bvurem (_ bv7 65) (_ bv0 65))", "(_ bv7 65)");
    e.check(
        "(bvudiv (_ bv7 128) (_ bv0 128))",
        "#xffffffffffffffffffffffffffffffff",
    );
    // signed: by zero, positive dividend -> all ones; negative dividend -> 1
    e.check("(bvsdiv #x05 #x00)", "#xff");
    e.check("(bvsdiv #xfb #x00)", "#x01");
    e.check("(bvsdiv #x00 #x00)", "#xff");
    e.check("(bvsrem #xfb #x00)", "#xfb");
    e.check("(bvsmod #xfb #x00)", "#xfb");
    e.check("(bvsmod #x05 #x00)", "#x05");
    e.check(
        "(bvsdiv (_ bv5 65) (_ bv0 65))",
        "(_ bv36893488147419103231 65)",
    );
    e.check("(bvsdiv (bvneg (_ bv5 128)) (_ bv0 128))", "(_ bv1 128)");
    e.check("(bvsdiv #b1 #b0)", "#b1");
    e.check("(bvsdiv #b0 #b0)", "#b1");
}

#[test]
fn bv_signed_division() {
    let mut e = Env::new();
    // -7 / 2 = -3 (truncating), -7 rem 2 = -1, -7 smod 2 = 1
    e.check("(bvsdiv #xf9 #x02)", "#xfd");
    e.check("(bvsrem #xf9 #x02)", "#xff");
    e.check("(bvsmod #xf9 #x02)", "#x01");
    // 7 / -2 = -3, 7 rem -2 = 1, 7 smod -2 = -1
    e.check("(bvsdiv #x07 #xfe)", "#xfd");
    e.check("(bvsrem #x07 #xfe)", "#x01");
    e.check("(bvsmod #x07 #xfe)", "#xff");
    // -7 / -2 = 3, rem -1, smod -1
    e.check("(bvsdiv #xf9 #xfe)", "#x03");
    e.check("(bvsrem #xf9 #xfe)", "#xff");
    e.check("(bvsmod #xf9 #xfe)", "#xff");
    // overflow: MIN / -1 = MIN
    e.check("(bvsdiv #x80 #xff)", "#x80");
    e.check("(bvsrem #x80 #xff)", "#x00");
    e.check("(bvsmod #x80 #xff)", "#x00");
    e.check(
        "(bvsdiv #x8000000000000000 #xffffffffffffffff)",
        "#x8000000000000000",
    );
    e.check(
        "(bvsdiv (concat #b1 (_ bv0 64)) (bvnot (_ bv0 65)))",
        "(_ bv18446744073709551616 65)",
    );
    e.check("(bvsmod (bvneg (_ bv7 128)) (_ bv2 128))", "(_ bv1 128)");
    e.check(
        "(bvsrem (bvneg (_ bv7 128)) (_ bv2 128))",
        "#xffffffffffffffffffffffffffffffff",
    );
    e.check(
        "(bvsmod (_ bv7 65) (bvneg (_ bv2 65)))",
        "(_ bv36893488147419103231 65)",
    );
    // width 1: #b1 is -1
    e.check("(bvsdiv #b1 #b1)", "#b1");
    e.check("(bvsrem #b1 #b1)", "#b0");
    e.check("(bvsmod #b1 #b1)", "#b0");
}

#[test]
fn bv_shifts_and_rotates() {
    let mut e = Env::new();
    e.check("(bvshl #x01 #x07)", "#x80");
    e.check("(bvshl #x01 #x08)", "#x00");
    e.check("(bvshl #xff #xff)", "#x00");
    e.check("(bvlshr #x80 #x07)", "#x01");
    e.check("(bvlshr #x80 #x08)", "#x00");
    e.check("(bvashr #x80 #x03)", "#xf0");
    e.check("(bvashr #x80 #x08)", "#xff");
    e.check("(bvashr #x80 #xff)", "#xff");
    e.check("(bvashr #x40 #x09)", "#x00");
    e.check(
        "(bvshl #x0000000000000001 #x0000000000000040)",
        "#x0000000000000000",
    );
    e.check(
        "(bvshl #x0000000000000001 #x000000000000003f)",
        "#x8000000000000000",
    );
    e.check(
        "(bvashr #x8000000000000000 #x000000000000003f)",
        "#xffffffffffffffff",
    );
    e.check(
        "(bvashr #x8000000000000000 #xffffffffffffffff)",
        "#xffffffffffffffff",
    );
    e.check(
        "(bvlshr #x8000000000000000 #x0000000000000040)",
        "#x0000000000000000",
    );
    e.check(
        "(bvshl (_ bv1 65) (_ bv64 65))",
        "(_ bv18446744073709551616 65)",
    );
    e.check("(bvshl (_ bv1 65) (_ bv65 65))", "(_ bv0 65)");
    e.check(
        "(bvashr (concat #b1 (_ bv0 64)) (_ bv64 65))",
        "(_ bv36893488147419103231 65)",
    );
    e.check(
        "(bvashr (concat #b1 (_ bv0 64)) (_ bv1 65))",
        "(_ bv27670116110564327424 65)",
    );
    e.check(
        "(bvashr (concat #b1 (_ bv0 64)) (_ bv100 65))",
        "(_ bv36893488147419103231 65)",
    );
    e.check("(bvlshr (bvnot (_ bv0 128)) (_ bv127 128))", "(_ bv1 128)");
    e.check("(bvshl #b1 #b1)", "#b0");
    e.check("(bvashr #b1 #b1)", "#b1");
    e.check("((_ rotate_left 3) #x81)", "#x0c");
    e.check("((_ rotate_left 8) #x81)", "#x81");
    e.check("((_ rotate_left 11) #x81)", "#x0c");
    e.check("((_ rotate_right 1) #x81)", "#xc0");
    e.check("((_ rotate_right 9) #x81)", "#xc0");
    e.check(
        "((_ rotate_left 1) #x8000000000000001)",
        "#x0000000000000003",
    );
    e.check(
        "((_ rotate_right 1) (_ bv1 65))",
        "(_ bv18446744073709551616 65)",
    );
    e.check("((_ rotate_left 5) #b1)", "#b1");
}

#[test]
fn bv_structure_ops() {
    let mut e = Env::new();
    e.check("(concat #x12 #x34)", "#x1234");
    e.check("(concat #b1 #x12 #b0)", "#b1000100100");
    e.check(
        "(concat #xffffffffffffffff #x0000000000000001)",
        "#xffffffffffffffff0000000000000001",
    );
    e.check("(concat #x0000000000000001 #b1)", "(_ bv3 65)");
    e.check("((_ extract 7 4) #xa5)", "#xa");
    e.check("((_ extract 0 0) #xa5)", "#b1");
    e.check("((_ extract 63 63) #x8000000000000000)", "#b1");
    e.check(
        "((_ extract 64 1) (concat #b1 #x0000000000000003))",
        "#x8000000000000001",
    );
    e.check(
        "((_ extract 127 64) #xffffffffffffffff0000000000000001)",
        "#xffffffffffffffff",
    );
    e.check("((_ zero_extend 8) #xff)", "#x00ff");
    e.check("((_ zero_extend 0) #xff)", "#xff");
    e.check("((_ sign_extend 8) #xff)", "#xffff");
    e.check("((_ sign_extend 8) #x7f)", "#x007f");
    e.check("((_ sign_extend 63) #b1)", "#xffffffffffffffff");
    e.check(
        "((_ sign_extend 1) #x8000000000000000)",
        "(_ bv27670116110564327424 65)",
    );
    e.check(
        "((_ sign_extend 64) #x8000000000000000)",
        "#xffffffffffffffff8000000000000000",
    );
    e.check(
        "((_ zero_extend 64) #x8000000000000000)",
        "#x00000000000000008000000000000000",
    );
    e.check("((_ repeat 3) #b10)", "#b101010");
    e.check(
        "((_ repeat 2) #xdeadbeefdeadbeef)",
        "#xdeadbeefdeadbeefdeadbeefdeadbeef",
    );
    e.check("((_ repeat 1) #xab)", "#xab");
    e.check("(bvcomp #xab #xab)", "#b1");
    e.check("(bvcomp #xab #xac)", "#b0");
    e.check("(bvcomp (_ bv3 65) (_ bv3 65))", "#b1");
}

#[test]
fn bv_arith_and_logic() {
    let mut e = Env::new();
    e.check("(bvadd #xff #x01)", "#x00");
    e.check("(bvadd #x01 #x02 #x03)", "#x06");
    e.check("(bvsub #x00 #x01)", "#xff");
    // yices takes bvsub of three (left-associative); z3 and cvc5 do not.
    e.sig.arity = crate::term::signature::ArityRule::Yices;
    e.check("(bvsub #x10 #x01 #x02)", "#x0d");
    e.sig.arity = crate::term::signature::ArityRule::Z3;
    e.check("(bvmul #x10 #x10)", "#x00");
    e.check(
        "(bvmul #xffffffffffffffff #xffffffffffffffff)",
        "#x0000000000000001",
    );
    e.check(
        "(bvadd #xffffffffffffffff #x0000000000000001)",
        "#x0000000000000000",
    );
    e.check("(bvadd (bvnot (_ bv0 65)) (_ bv1 65))", "(_ bv0 65)");
    e.check(
        "(bvsub (_ bv0 128) (_ bv1 128))",
        "#xffffffffffffffffffffffffffffffff",
    );
    e.check(
        "(bvmul (bvnot (_ bv0 128)) (bvnot (_ bv0 128)))",
        "(_ bv1 128)",
    );
    e.check("(bvneg #x80)", "#x80");
    e.check("(bvneg #x00)", "#x00");
    e.check("(bvneg #b1)", "#b1");
    e.check("(bvneg (_ bv1 65))", "(_ bv36893488147419103231 65)");
    e.check("(bvnot #b0)", "#b1");
    e.check("(bvnot #x0f)", "#xf0");
    e.check("(bvand #x0f #x3c #xff)", "#x0c");
    e.check("(bvor #x0f #x30)", "#x3f");
    e.check("(bvxor #x0f #x3c)", "#x33");
    e.check("(bvnand #x0f #x3c)", "#xf3");
    e.check("(bvnor #x0f #x30)", "#xc0");
    e.check("(bvxnor #x0f #x3c)", "#xcc");
    e.check(
        "(bvxnor (_ bv5 65) (_ bv5 65))",
        "(_ bv36893488147419103231 65)",
    );
    e.check("(bvudiv #x07 #x02)", "#x03");
    e.check("(bvurem #x07 #x02)", "#x01");
    e.check(
        "(bvudiv #xffffffffffffffffffffffffffffffff #x00000000000000000000000000000010)",
        "#x0fffffffffffffffffffffffffffffff",
    );
}

#[test]
fn bv_comparisons() {
    let mut e = Env::new();
    for (t, v) in [
        ("(bvult #x00 #xff)", true),
        ("(bvslt #x00 #xff)", false),
        ("(bvslt #x80 #x7f)", true),
        ("(bvsle #x80 #x80)", true),
        ("(bvsgt #x7f #x80)", true),
        ("(bvsge #x80 #x7f)", false),
        ("(bvuge #x80 #x7f)", true),
        ("(bvugt #x80 #x80)", false),
        ("(bvule #x80 #x80)", true),
        ("(bvslt #b1 #b0)", true),
        ("(bvult #b1 #b0)", false),
        ("(bvslt #x8000000000000000 #x7fffffffffffffff)", true),
        ("(bvult #x8000000000000000 #x7fffffffffffffff)", false),
        ("(bvslt (concat #b1 (_ bv0 64)) (_ bv1 65))", true),
        ("(bvsle (_ bv1 65) (concat #b1 (_ bv0 64)))", false),
        ("(bvsgt (bvnot (_ bv0 128)) (_ bv0 128))", false),
        ("(bvsge (_ bv0 128) (bvnot (_ bv0 128)))", true),
        ("(bvugt (bvnot (_ bv0 128)) (_ bv0 128))", true),
    ] {
        assert_eq!(e.eval(t), Value::Bool(v), "{t}");
    }
}

#[test]
fn core_connectives() {
    let mut e = Env::new();
    for (t, v) in [
        ("(=> false true false)", true), // right-assoc: false => (...)
        ("(=> true true false)", false),
        ("(=> true false true)", true),
        ("(xor true true true)", true),
        ("(xor true true)", false),
        ("(and true)", true),
        ("(or false)", false),
        ("(and true true false)", false),
        ("(or false false true)", true),
        ("(= true true true)", true),
        ("(= #x01 #x01 #x02)", false),
        ("(distinct #x01 #x02 #x03)", true),
        ("(distinct #x01 #x02 #x01)", false),
        ("(distinct 1 2 3 4 5 6 7 8 9 10 11 1)", false),
        ("(distinct 1 2 3 4 5 6 7 8 9 10 11 12)", true),
        ("(ite (= #x01 #x01) false true)", false),
        ("(not (ite false true false))", true),
        ("(! (= 1 1) :named a1)", true),
    ] {
        assert_eq!(e.eval(t), Value::Bool(v), "{t}");
    }
    e.check("(ite (bvult #x01 #x02) #x0a #x0b)", "#x0a");
}

#[test]
fn int_real_arith() {
    let mut e = Env::new();
    e.check("(div 7 2)", "3");
    e.check("(div (- 7) 2)", "(- 4)");
    e.check("(mod (- 7) 2)", "1");
    e.check("(div 7 (- 2))", "(- 3)");
    e.check("(mod 7 (- 2))", "1");
    e.check("(div (- 7) (- 2))", "4");
    e.check("(mod (- 7) (- 2))", "1");
    e.check("(div 100 3 2)", "16");
    e.check("(abs (- 5))", "5");
    e.check("(- 5 2 1)", "2");
    e.check("(- 5)", "(- 5)");
    e.check("(+ 1 2 3)", "6");
    e.check("(* 2 3 4)", "24");
    e.check("(+ 1 0.5)", "1.5");
    e.check("(/ 1 3)", "(/ 1 3)");
    e.check("(/ 1 3 2)", "(/ 1.0 6.0)");
    e.check("(- (/ 1 3))", "(- (/ 1 3))");
    e.check("(* 0.5 4)", "2.0");
    e.check("(to_real 3)", "3.0");
    e.check("(to_int 1.5)", "1");
    e.check("(to_int (- 1.5))", "(- 2)");
    e.check("(to_int (- 2.0))", "(- 2)");
    e.check("(ite true 1 2.5)", "1.0");
    for (t, v) in [
        ("(is_int 1.5)", false),
        ("(is_int 2.0)", true),
        ("((_ divisible 3) 9)", true),
        ("((_ divisible 3) (- 10))", false),
        ("(< 1 2 3)", true),
        ("(< 1 3 2)", false),
        ("(<= 1 1 2)", true),
        ("(> 3 2 2)", false),
        ("(>= 3 2 2)", true),
        ("(= 1 1.0)", true),
        ("(= 1 1.5)", false),
        ("(< 1 1.5)", true),
        ("(distinct 1 1.0)", false),
    ] {
        assert_eq!(e.eval(t), Value::Bool(v), "{t}");
    }
}

#[test]
fn division_by_zero_is_unsupported() {
    let mut e = Env::new();
    let m = Model::new();
    for t in [
        "(div 1 0)",
        "(mod 1 0)",
        "(/ 1.0 0.0)",
        "(/ 1 0)",
        "(/ 2 1 0)",
        "(= (div 5 (- 1 1)) 3)",
    ] {
        assert!(
            matches!(e.eval_in(&m, true, t), Err(EvalError::Unsupported(_))),
            "{t}"
        );
    }
    // not needed in an untaken branch or a decided connective
    e.check("(ite true 1 (div 1 0))", "1");
    assert_eq!(e.eval("(and false (= (div 1 0) 1))"), Value::Bool(false));
    assert_eq!(e.eval("(or (= 1 1) (= (mod 1 0) 1))"), Value::Bool(true));
}

#[test]
fn unsupported_constructs() {
    let mut e = Env::new();
    let m = Model::new();
    for t in ["(forall ((x Int)) (> x 0))", "(exists ((b Bool)) b)"] {
        assert!(
            matches!(e.eval_in(&m, true, t), Err(EvalError::Unsupported(_))),
            "{t}"
        );
    }
    e.sig
        .add_sort("U", crate::term::signature::SortDef::Declared(0));
    e.constant("(declare-fun u () U)");
    for t in ["(= u u)", "(ite true u u)"] {
        assert!(
            matches!(e.eval_in(&m, true, t), Err(EvalError::Unsupported(_))),
            "{t}"
        );
        assert!(
            matches!(
                e.eval_in(&m, false, t),
                Err(EvalError::Unsupported(_)) | Ok(None)
            ),
            "{t}"
        );
    }
    let s = e.store.mk_str("abc");
    let t = e.store.mk_other("str.len", vec![s], SortStore::INT);
    assert!(matches!(
        Evaluator::new(&e.store, &m, true).eval(t),
        Err(EvalError::Unsupported(_))
    ));
}

#[test]
fn partial_models_and_completion() {
    let mut e = Env::new();
    let x = e.constant("(declare-fun x () (_ BitVec 8))");
    let p = e.constant("(declare-fun p () Bool)");
    let a = e.constant("(declare-fun a () (Array (_ BitVec 32) (_ BitVec 8)))");
    let mut m = Model::new();
    assert_eq!(
        e.eval_in(&m, false, "(and p false)"),
        Ok(Some(Value::Bool(false)))
    );
    assert_eq!(
        e.eval_in(&m, false, "(or true p)"),
        Ok(Some(Value::Bool(true)))
    );
    assert_eq!(e.eval_in(&m, false, "(and p true)"), Ok(None));
    assert_eq!(e.eval_in(&m, false, "(bvadd x #x01)"), Ok(None));
    assert_eq!(
        e.eval_in(&m, false, "(ite p #x01 #x01)"),
        Ok(Some(Value::bv_u64(8, 1)))
    );
    assert_eq!(e.eval_in(&m, false, "(ite p #x01 #x02)"), Ok(None));
    assert_eq!(
        e.eval_in(&m, false, "(select (store a #x00000001 #x07) #x00000001)"),
        Ok(Some(Value::bv_u64(8, 7)))
    );
    assert_eq!(
        e.eval_in(&m, false, "(select (store a #x00000001 #x07) #x00000002)"),
        Ok(None)
    );
    // completion
    let t = e.term("(and (= x #x00) (not p) (= (select a #x00000005) #x00))");
    let mut ev = Evaluator::new(&e.store, &m, true);
    assert!(ev.is_true(t).unwrap());
    let mut c = ev.completions();
    c.sort();
    assert_eq!(
        c,
        vec![
            (x, Value::bv_u64(8, 0)),
            (p, Value::Bool(false)),
            (a, Value::Array(ArrayVal::constant(Value::bv_u64(8, 0)))),
        ]
        .into_iter()
        .collect::<BTreeMap<_, _>>()
        .into_iter()
        .collect::<Vec<_>>()
    );
    // with values
    m.set(x, Value::bv_u64(8, 3));
    m.set(p, Value::Bool(true));
    let t = e.term("(and p (= (bvmul x x) #x09))");
    let mut ev = Evaluator::new(&e.store, &m, false);
    assert!(ev.is_true(t).unwrap());
    assert!(ev.completions().is_empty());
    // wrong sort in the model is refused
    m.set(x, Value::Bool(true));
    assert!(matches!(
        Evaluator::new(&e.store, &m, false).eval(t),
        Err(EvalError::Unsupported(_))
    ));
    m.set(x, Value::bv_u64(16, 3));
    assert!(matches!(
        Evaluator::new(&e.store, &m, false).eval(t),
        Err(EvalError::Unsupported(_))
    ));
}

#[test]
fn int_model_value_promoted_for_real_symbol() {
    let mut e = Env::new();
    let r = e.constant("(declare-fun r () Real)");
    let mut m = Model::new();
    m.set(r, Value::Int(BigInt::from(2)));
    assert_eq!(
        e.eval_in(&m, false, "(= (* r 1.5) 3.0)"),
        Ok(Some(Value::Bool(true)))
    );
    assert_eq!(
        e.eval_in(&m, false, "r"),
        Ok(Some(Value::Real(BigRational::from_integer(2.into()))))
    );
}

#[test]
fn a_select_reads_a_model_array_as_its_leaf_would() {
    let mut e = Env::new();
    let a = e.constant("(declare-fun a () (Array (_ BitVec 32) (_ BitVec 8)))");
    let mut m = Model::new();
    // Of the array's sort: read in place, the same value twice over.
    m.set(
        a,
        e.value("(store ((as const (Array (_ BitVec 32) (_ BitVec 8))) #x00) #x00000001 #x05)"),
    );
    let five = Ok(Some(Value::bv_u64(8, 5)));
    assert_eq!(e.eval_in(&m, false, "(select a #x00000001)"), five);
    assert_eq!(
        e.eval_in(
            &m,
            false,
            "(ite (= (select a #x00000002) #x00) (select a #x00000001) #x07)"
        ),
        five
    );
    // Of another sort: refused, as evaluating the constant itself is.
    m.set(a, e.value("((as const (Array Int Int)) 7)"));
    assert!(e.eval_in(&m, false, "a").is_err());
    assert!(e.eval_in(&m, false, "(select a #x00000001)").is_err());
    // Missing: undetermined, or the default under completion.
    let m = Model::new();
    assert_eq!(e.eval_in(&m, false, "(select a #x00000001)"), Ok(None));
    assert_eq!(
        e.eval_in(&m, true, "(select a #x00000001)"),
        Ok(Some(Value::bv_u64(8, 0)))
    );
}

#[test]
fn arrays() {
    let mut e = Env::new();
    let a = e.constant("(declare-fun a () (Array (_ BitVec 32) (_ BitVec 8)))");
    let b = e.constant("(declare-fun b () (Array Int Int))");
    let mut m = Model::new();
    let av =
        e.value("(store ((as const (Array (_ BitVec 32) (_ BitVec 8))) #x00) #x00000001 #x05)");
    m.set(a, av.clone());
    m.set(b, e.value("((as const (Array Int Int)) 7)"));
    let check = |e: &mut Env, t: &str, v: bool| {
        assert_eq!(e.eval_in(&m, false, t), Ok(Some(Value::Bool(v))), "{t}")
    };
    check(&mut e, "(= (select a #x00000001) #x05)", true);
    check(&mut e, "(= (select a #x00000002) #x00)", true);
    check(
        &mut e,
        "(= (select (store a #x00000002 #x09) #x00000002) #x09)",
        true,
    );
    check(
        &mut e,
        "(= (store a #x00000001 #x00) ((as const (Array (_ BitVec 32) (_ BitVec 8))) #x00))",
        true,
    );
    check(&mut e, "(= (store a #x00000001 #x05) a)", true);
    check(&mut e, "(= (store a #x00000003 #x05) a)", false);
    check(
        &mut e,
        "(= (store (store a #x00000003 #x05) #x00000003 #x00) a)",
        true,
    );
    check(&mut e, "(= b ((as const (Array Int Int)) 7))", true);
    check(&mut e, "(= (store b 1 7) b)", true);
    check(&mut e, "(= (select (store (store b 1 2) 1 3) 1) 3)", true);
    check(&mut e, "(distinct (store b 1 8) b)", true);
    // finite index sorts: extensional equality across different defaults
    check(
        &mut e,
        "(= (store (store ((as const (Array Bool Bool)) false) true true) false true) ((as const (Array Bool Bool)) true))",
        true,
    );
    check(
        &mut e,
        "(= (store (store ((as const (Array (_ BitVec 1) (_ BitVec 8))) #x00) #b0 #x01) #b1 #x02) (store (store ((as const (Array (_ BitVec 1) (_ BitVec 8))) #x07) #b1 #x02) #b0 #x01))",
        true,
    );
    check(
        &mut e,
        "(= (store ((as const (Array (_ BitVec 1) (_ BitVec 8))) #x00) #b0 #x01) (store ((as const (Array (_ BitVec 1) (_ BitVec 8))) #x01) #b1 #x00))",
        true,
    );
    // value of a store chain
    let v = e
        .eval_in(
            &m,
            false,
            "(store (store a #x00000002 #x09) #x00000001 #x00)",
        )
        .unwrap()
        .unwrap();
    assert_eq!(
        v,
        e.value("(store ((as const (Array (_ BitVec 32) (_ BitVec 8))) #x00) #x00000002 #x09)")
    );
    // nested arrays
    check(
        &mut e,
        "(= (select (store ((as const (Array Int (Array Int Int))) ((as const (Array Int Int)) 0)) 1 b) 1) b)",
        true,
    );
}

#[test]
fn uninterpreted_functions() {
    let mut e = Env::new();
    let (f, _) = e.declare("(declare-fun f ((_ BitVec 8) Int) (_ BitVec 8))");
    let (g, _) = e.declare("(declare-fun g (Int) Int)");
    let mut m = Model::new();
    m.set_fun_entry(
        f,
        vec![Value::bv_u64(8, 1), Value::Int(2.into())],
        Value::bv_u64(8, 9),
    );
    assert_eq!(
        e.eval_in(&m, false, "(f #x01 2)"),
        Ok(Some(Value::bv_u64(8, 9)))
    );
    assert_eq!(e.eval_in(&m, false, "(f #x01 3)"), Ok(None));
    m.set_fun_default(f, Value::bv_u64(8, 4));
    assert_eq!(
        e.eval_in(&m, false, "(f #x01 3)"),
        Ok(Some(Value::bv_u64(8, 4)))
    );
    assert_eq!(
        e.eval_in(&m, false, "(f (bvadd #x00 #x01) (+ 1 1))"),
        Ok(Some(Value::bv_u64(8, 9)))
    );
    // completion of a function without a table
    let t = e.term("(= (g 5) (g 6))");
    let mut ev = Evaluator::new(&e.store, &m, true);
    assert!(ev.is_true(t).unwrap());
    assert_eq!(ev.fun_completions(), vec![(g, Value::Int(0.into()))]);
    // ill-sorted table refused
    m.set_fun_entry(f, vec![Value::bv_u64(8, 1)], Value::bv_u64(8, 9));
    assert!(matches!(
        e.eval_in(&m, false, "(f #x01 2)"),
        Err(EvalError::Unsupported(_))
    ));
}

#[test]
fn value_terms_round_trip() {
    let mut e = Env::new();
    for text in [
        "true",
        "#x0a",
        "#b101",
        "(_ bv5 65)",
        "#xffffffffffffffffffffffffffffffff",
        "5",
        "(- 5)",
        "1.5",
        "(- 2.0)",
        "(/ 1 3)",
        "(- (/ 1 3))",
        "(/ (- 1) 3)",
        "(/ 1.0 3.0)",
        "((as const (Array Int Int)) 0)",
        "(store (store ((as const (Array Int Int)) 0) 3 4) 1 2)",
        "(store ((as const (Array (_ BitVec 4) Real)) 0.5) #x1 (/ 1 3))",
        "(store ((as const (Array Bool Bool)) false) true true)",
    ] {
        let t = e.term(text);
        let v = Value::from_term(&e.store, t).unwrap_or_else(|| panic!("{text}"));
        let sort = e.store.sort(t);
        let back = v.to_term(&mut e.store, sort);
        assert_eq!(e.store.sort(back), sort, "{text}");
        assert_eq!(Value::from_term(&e.store, back), Some(v.clone()), "{text}");
    }
    assert_eq!(
        e.value("(- (/ 1 3))"),
        Value::Real(BigRational::new((-1).into(), 3.into()))
    );
    assert_eq!(
        e.value("(/ 6 4)"),
        Value::Real(BigRational::new(3.into(), 2.into()))
    );
    assert_eq!(e.value("(- 5)"), Value::Int((-5).into()));
    // deterministic store order, default entries dropped
    let v = e.value("(store (store (store ((as const (Array Int Int)) 0) 3 4) 1 2) 5 0)");
    let ii = e.store.sorts.array(SortStore::INT, SortStore::INT);
    let t = v.to_term(&mut e.store, ii);
    assert_eq!(
        crate::smt2::printer::print_tree(&e.store, t, &crate::smt2::printer::ClientNames),
        "(store (store ((as const (Array Int Int)) 0) 1 2) 3 4)"
    );
    let v = Value::Real(BigRational::new((-1).into(), 3.into()));
    let t = v.to_term(&mut e.store, SortStore::REAL);
    assert_eq!(
        crate::smt2::printer::print_tree(&e.store, t, &crate::smt2::printer::ClientNames),
        "(- (/ 1.0 3.0))"
    );
    // not values
    let x = e.constant("(declare-fun x () Int)");
    assert_eq!(Value::from_term(&e.store, x), None);
    let t = e.term("(+ 1 2)");
    assert_eq!(Value::from_term(&e.store, t), None);
    let t = e.term("(store ((as const (Array Int Int)) 0) x 1)");
    assert_eq!(Value::from_term(&e.store, t), None);
    assert!(parse_term(&mut e.store, &e.sig, "(_ as-array k!0)").is_err());
    let t = e.term("(/ 1 0)");
    assert_eq!(Value::from_term(&e.store, t), None);
}

#[test]
fn deep_term_does_not_overflow() {
    let mut store = TermStore::new();
    let bv8 = store.sorts.bv(8);
    let x = store.mk_const("x", bv8);
    let mut t = x;
    for _ in 0..200_000 {
        t = store.app(Op::BvNot, vec![t]).unwrap();
    }
    let mut u = t;
    for i in 0..100_000u64 {
        let c = store.mk_bv_u64(i & 1, 8);
        u = store.app(Op::BvAdd, vec![u, c]).unwrap();
    }
    let f = store.mk_eq(u, x).unwrap();
    let mut m = Model::new();
    m.set(x, Value::bv_u64(8, 0x5a));
    let mut ev = Evaluator::new(&store, &m, false);
    assert_eq!(ev.eval(t).unwrap(), Some(Value::bv_u64(8, 0x5a)));
    // 50_000 additions of 1 = 0x50 mod 256
    assert_eq!(
        ev.eval(u).unwrap(),
        Some(Value::bv_u64(8, (0x5a + 50_000u64) & 0xff))
    );
    assert!(!ev.is_true(f).unwrap());
    // deep Boolean chain through the short-circuit path
    let p = store.mk_const("p", SortStore::BOOL);
    let mut b = p;
    for _ in 0..200_000 {
        let nb = store.mk_not(b);
        b = store.mk_and(vec![nb, TermStore::TRUE]);
    }
    m.set(p, Value::Bool(true));
    assert_eq!(
        Evaluator::new(&store, &m, false).eval(b).unwrap(),
        Some(Value::Bool(true))
    );
}

#[test]
fn klee_like_query_is_fast() {
    // ~300 nodes: byte reads from an array, concatenated into words, arithmetic and comparisons.
    let mut e = Env::new();
    let a = e.constant("(declare-fun arr () (Array (_ BitVec 32) (_ BitVec 8)))");
    let mut conj = Vec::new();
    for i in 0..12u32 {
        let rd = |k: u32| format!("(select arr #x{:08x})", 4 * i + k);
        let word = format!(
            "(concat {} (concat {} (concat {} {})))",
            rd(3),
            rd(2),
            rd(1),
            rd(0)
        );
        conj.push(format!(
            "(not (bvslt (bvadd ((_ sign_extend 32) {word}) #x{:016x}) (bvmul ((_ zero_extend 32) {word}) #x0000000000000003)))",
            i
        ));
    }
    let text = format!("(and {})", conj.join(" "));
    let t = e.term(&text);
    let mut arr = ArrayVal::constant(Value::bv_u64(8, 0));
    for k in 0..48u64 {
        arr.store(Value::bv_u64(32, k), Value::bv_u64(8, k * 7));
    }
    let mut m = Model::new();
    m.set(a, Value::Array(arr));
    let mut times = Vec::new();
    let mut r = None;
    for _ in 0..200 {
        let start = std::time::Instant::now();
        let mut ev = Evaluator::new(&e.store, &m, false);
        r = Some(ev.eval(t).unwrap());
        times.push(start.elapsed());
    }
    times.sort();
    let median = times[times.len() / 2];
    eprintln!(
        "klee-like query ({} nodes in store): median {:?}",
        e.store.len(),
        median
    );
    assert!(r.unwrap().is_some());
    assert!(
        median < std::time::Duration::from_millis(2),
        "median {median:?}"
    );
}
