(set-logic QF_ABV) (declare-fun y () (_ BitVec 8)) (assert (bvult y #x05)) (check-sat)
(assert (= x #x01))
(check-sat)
; An unknown name sends the session to passthrough: the client's state is replayed into a
; new solver, and z3's error for the command must still carry the client's line (2) and
; column. The state comes first, on line 1, so a replay of one command per line would push
; the command below its line (tests/proxy_differential.rs compares every strategy's output
; with z3's byte for byte).
