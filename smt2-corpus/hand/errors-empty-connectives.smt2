; `and`, `or` and `xor` with no argument are errors in z3, cvc5 and yices (smtproxy took them
; for true/false before session 10, so its state held an assertion the solver's did not);
; with one argument they are that argument. The failed asserts add nothing.
(set-option :print-success true)
(set-logic QF_UF)
(declare-const a Bool)
(declare-const b Bool)
(assert (and))
(assert (or (and) a))
(assert (let ((q (or))) (not q)))
(assert (=> (xor) b))
(assert (or a))
(assert (and b))
(set-info :status sat)
(check-sat)
(assert (not (and a b)))
(set-info :status unsat)
(check-sat)
