; Under :global-declarations, declarations made in scopes popped together (the inner one
; uses the outer one's name) stay; a later unknown name sends the session to passthrough,
; whose replay of the client's state must declare y before z uses it, or the solver loses
; (= z 5) and gives a model that breaks it. Byte for byte with z3 under every strategy.
(set-option :global-declarations true)
(push 1)
(declare-fun y () Int)
(push 1)
(define-fun z () Int (+ y 1))
(pop 2)
(assert (= z 5))
(assert (> q 0))
(set-info :status sat)
(check-sat)
(get-value (y))
