; Options smtproxy sets on its backends for its own use are answered with the client's
; values (get-option), declarations made in a popped scope stay under :global-declarations
; (under every strategy, not only those that keep a solver stack), and z3 keeps every option
; across (reset): declarations still outlive their scope, and with produce-models off z3
; gives no model. Compared with z3 byte for byte under every strategy.
(set-option :global-declarations true)
(set-option :produce-models false)
(push 1)
(declare-fun a () Int)
(pop 1)
(assert (> a 0))
(set-info :status sat)
(check-sat)
(get-option :global-declarations)
(get-option :produce-models)
(get-option :produce-unsat-cores)
(get-model)
(reset)
(get-option :global-declarations)
(get-option :produce-models)
(push 1)
(declare-fun b () Int)
(pop 1)
(assert (< b 0))
(set-info :status sat)
(check-sat)
(get-value (b))
(set-option :produce-models true)
