; error positions: solvers number lines and columns of their input; passthrough must
; give the client the numbers of its own text (comment lines, blank lines, tabs, two
; commands on a line, commands over several lines)
(set-logic QF_LIA)
(declare-const x Int)

; a comment line before an error
(assert (> y 0))
	(assert (< z 0)) ; a tab before, a comment after
(assert (> x 0)) (assert (> w 0))
(assert
  (and (> x 0)
       (< v 10)))
   
(set-info :status sat)
(check-sat)
; two errors on one line
(get-value (u)) (get-value (x t))
(assert (< x 0))
(set-info :status unsat)
(check-sat)
