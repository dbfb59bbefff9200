
BoutputJ(x©2YΥp1	φG7ΑCY5sl‹3†2²1Rª(vώ?‚6―τα6