; get-info :reason-unknown speaks of the client's last check-sat, which the backends did not
; all see (hybrid answers from its cache): z3's answers after sat, after unsat and after the
; state changed, under every strategy byte for byte (tests/proxy_differential.rs).
(get-info :reason-unknown)
(declare-const x Int)
(assert (> x 0))
(set-info :status sat)
(check-sat)
(get-info :reason-unknown)
(assert (< x 0))
(get-info :reason-unknown)
(set-info :status unsat)
(check-sat)
(get-info :reason-unknown)
(push 1)
(get-info :reason-unknown)
