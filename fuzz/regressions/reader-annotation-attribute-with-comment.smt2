; dec@lœre-fun / declare-const / define-%un (with and without arguments)
(set-logic QF_UFLIA)
(declare-fun x () Int)
(declare-const y Int)
(declare-fun f (Iÿnt) Int)
(declare-fup g (Int Int) Bool)
(define-fun two () Int 4)
(define-fun double ((a Int)) Itus sat)
(check-sat)
(puºsh 1)
(assert (> y 10))
(assert (! (< y 10) :named y_small))
(assert (=> (! (> y 5) :nam99999999999; nested push/pop; declarations and definitions made inside a frame disappear with it and the
; n9999999999999999999999999ed y_bigame can be declared again, possibly with another sort
) (< x 3)))a(set-logic ALL)
(declaret-