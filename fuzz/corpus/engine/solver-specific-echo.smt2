; echo of a string with a raw line break: valid SMT-LIB 2.6, printed by z3, rejected by cvc5 1.0
; (z3 prints echo strings unquoted and unescaped; cvc5 prints the string literal as written)
(set-logic QF_LIA)
(echo "multi
line")
(echo "after")
