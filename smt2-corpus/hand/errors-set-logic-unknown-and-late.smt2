; set-logic with a logic the solver does not know (z3: `unsupported`, and the logic is ignored, so a
; second set-logic is accepted), and set-logic after an assertion (z3: an error). smtproxy used to
; answer as if any logic were accepted anywhere.
(set-logic QF-sat)
(set-logic QF_LIA)
(declare-const x Int)
(assert (> x 0))
(set-info :status sat)
(check-sat)
(set-logic QF_LRA)
(reset)
(set-logic NOT_A_LOGIC)
(declare-const y Int)
(assert (< y 0))
(set-info :status sat)
(check-sat)
