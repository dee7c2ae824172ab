; Query 0 -- Type: InitialValues, Instructions: 7582
(set-logic QF_AUFBV )
(assert true )
(check-sat)
(exit)
;   OK -- Elapsed: 5.228578e-03s
;   Solvable: true

; Query 1 -- Type: InitialValues, Instructions: 7582
(set-option :produce-models true)
(set-logic QF_AUFBV )
(declare-fun input () (Array (_ BitVec 32) (_ BitVec 8) ) )
(assert (bvslt  (concat  (select  input (_ bv7 32) ) (concat  (select  input (_ bv6 32) ) (concat  (select  input (_ bv5 32) ) (select  input (_ bv4 32) ) ) ) ) (concat  (select  input (_ bv3 32) ) (concat  (select  input (_ bv2 32) ) (concat  (select  input (_ bv1 32) ) (select  input (_ bv0 32) ) ) ) ) ) )
(check-sat)
(get-value ( (select input (_ bv0 32) ) ) )
(get-value ( (select input (_ bv1 32) ) ) )
(get-value ( (select input (_ bv2 32) ) ) )
(get-value ( (select input (_ bv3 32) ) ) )
(get-value ( (select input (_ bv4 32) ) ) )
(get-value ( (select input (_ bv5 32) ) ) )
(get-value ( (select input (_ bv6 32) ) ) )
(get-value ( (select input (_ bv7 32) ) ) )
(get-value ( (select input (_ bv8 32) ) ) )
(get-value ( (select input (_ bv9 32) ) ) )
(get-value ( (select input (_ bv10 32) ) ) )
(get-value ( (select input (_ bv11 32) ) ) )
(get-value ( (select input (_ bv12 32) ) ) )
(get-value ( (select input (_ bv13 32) ) ) )
(get-value ( (select input (_ bv14 32) ) ) )
(get-value ( (select input (_ bv15 32) ) ) )
(exit)
;   OK -- Elapsed: 4.186847e-0