"""Computer-assisted proofs of Model A's induction lemmas for one instance (``rdyn prove``;
docs/proofs.md).

For a fixed instance (D, K, activation, kappa, ||V*||_F^2, eta, logit scale) a statement that holds
"for all t >= t_start" (seed 000, Appendix D: Lemmas D.18, D.19, ...) is decided in two parts:

* steps ``t_start .. T0``: the certified arb iteration of the collapsed map (:mod:`.iterate`) decides the
  statement at every step (a certified failure is a counterexample);
* steps ``t >= T0``: a compact region ``R`` of reduced coordinates ``e = exp(-(C2+C3)/scale)``,
  ``w = (C1/C1*(e) - 1)/e^3`` that contains the certified state at ``T0`` is shown invariant
  (``map(R)`` inside ``R``) and the statement true on ``R`` by interval branch and bound
  (:mod:`.region`), with the 0/0 terms at ``e = 0`` written in closed form (:mod:`.symbolic`).

:func:`rdyn.verification.proofs.engine.prove` is the entry point; verdicts ``certified``,
``refuted``, ``undecided`` (never a pass).
"""
