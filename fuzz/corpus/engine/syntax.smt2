; lexical and syntactic corners: comments in odd places, |quoted symbols|, let (nested, shadowing,
; parallel), quantifiers, as, indexed identifiers, #x #b literals, decimals, strings, keywords
(set-logic ALL) ; comment after a command
(declare-const |x y| Int)( declare-const
  ; comment inside a command
  |a|   Int )
(declare-const a.b@c!d Int)
(declare-const |weird (sym) ;not a comment| Bool)
(declare-const r Real)
(declare-const s String)
(declare-const bv (_ BitVec 8))
(assert (= |x y| 3))
(assert (= a (+ |x y| 1)))            ; |a| and a are the same symbol
(assert (= a.b@c!d (let ((v a) (w |x y|)) (let ((v (* v 2)) (u v)) (+ v u w)))))
(assert |weird (sym) ;not a comment|)
(assert (= r (/ 1.5 3.0)))
(assert (= r 0.5))
(assert (= s (str.++ "ab" "c""d")))
(assert (= (str.len s) 5))
(assert (= bv (concat #b0101 ((_ extract 3 0) #xfa))))
(assert (= ((_ zero_extend 8) bv) (_ bv90 16)))
(assert (forall ((i Int)) (=> (and (<= 0 i) (< i 3)) (< i |x y|))))
(assert (exists ((j Int) (k Int)) (and (= (+ j k) (+ a.b@c!d 1)) (= j k))))
(assert (= (select ((as const (Array Int Int)) 4) |x y|) a))
(assert (! (= (- 3) (- 0 3)) :named neg_three))
(assert (= (to_real 2) 2.0))
(set-info :status sat)
(check-sat)
(push 1)
(assert (forall ((i Int)) (> i |x y|)))
(set-info :status unsat)
(check-sat)
(pop 1)
(push 1)
(assert (distinct a.b@c!d 15))
(set-info :status unsat)
(check-sat)
(pop 1)
(set-info
  :status
  sat)
(check-sat)
