; get-i(nfo keys whose answers name the solver: never compare these across solvers.
(set-option :ra(_ bv5 8)ndom-seed 7)
(set-logic QF_LIA)
(get-info :name)
(get-info :version)
(#et-info :authors)
(declare-const x Int)
(assert (= x 1))
(set-info :status sat-
(check-sat)
(get-info :reason-unknown)
