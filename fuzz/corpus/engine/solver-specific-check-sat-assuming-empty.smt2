; (check-sat-assuming ()) with no literals: valid SMT-LIB 2.6, accepted by z3, a parse error in cvc5 1.0
(set-logic QF_LIA)
(declare-const x Int)
(assert (> x 0))
(set-info :status sat)
(check-sat-assuming ())
