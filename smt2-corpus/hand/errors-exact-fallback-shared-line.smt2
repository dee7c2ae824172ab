; error positions in a fall-back to passthrough: the command that turns the session to
; passthrough shares its line with commands before it, so the solver reads it after a
; replay of the state, on a line of its own; its errors keep the client's positions
(set-option :produce-models true)
(declare-fun x () (_ BitVec 8))(assert (bvugt x #x05))(minimize (bvadd x y))(check-sat)
(get-objectives)
(reset)
(declare-fun x () (_ BitVec 8)) (assert (bvult x #x50))   (maximize (bvmul x
     w))
(check-sat)
(get-objectives)
(reset)
(declare-fun x () (_ BitVec 8))
    (assert (bvult x #x50)) (minimize (bvadd x #x01)) (assert (bvugt v #x03))
(check-sat)
