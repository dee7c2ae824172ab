; reset-assertions WITHOUT :global-declarations: z3 keeps the declarations made at level 0,
; cvc5 1.0 removes them (so the assert below is an error on cvc5 and it exits).
(set-logic QF_LIA)
(declare-const x Int)
(assert (> x 0))
(set-info :status sat)
(check-sat)
(reset-assertions)
(assert (< x 0))
(set-info :status sat)
(check-sat)
