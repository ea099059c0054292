"""Computer-assisted proofs for Model B (seed 003; docs/proofs.md, "Model B").

Three results, each decided rigorously with python-flint ``arb`` balls:

* **Theorem B.3** (Appendix B.2.3, no-LN layer): at ``eta = eta_max`` (as printed, and as
  corrected: ``S0^2`` for the printed ``1`` in the first term; root cause ``B3_eta_max_S0``) and
  from ``alpha_0 = 0``, ``beta_0^2 = S0`` for *every* ``S0`` in a stated interval, for every step
  ``t``: (i) the loss decreases, ``L(gamma_{t+1}) < L(gamma_t)`` while ``gamma_t != gamma*``;
  (ii) Part 1's descent inequality ``L(gamma_{t+1}) - L(gamma_t) <= -(1/2) eta d S_t F_t^2``;
  (iii) ``gamma_t`` increases monotonically to ``gamma*`` (no overshoot, ``gamma_t <= gamma*``).
  Method: in the scaled coordinates ``g = gamma/gamma*``, ``sigma = S/gamma*``,
  ``delta = D/gamma*`` (``D = beta^2 - alpha^2``) and ``k = 2 eta kappa2 gamma*/d`` the recursions
  of B.2.3 read ``g' - 1 = f (g - 1)`` with ``f = 1 - k sigma - k^2 g (1 - g)``,
  ``delta' = (1 - k^2 (g-1)^2) delta``, ``sigma^2 = delta^2 + 4 g^2`` (the invariant
  ``S^2 - D^2 = 4 gamma^2``). Step 0 is exact (``g = 0``, ``sigma = S0/gamma*``); every later
  state lies in ``R = {|g - 1| <= |1 - k sigma0|, 0 <= delta <= (1 - k^2) sigma0}`` (or its part
  ``g <= 1``), which interval branch and bound over ``(S0, g, delta)`` shows invariant, with each
  statement's normalised slack certainly positive on every box. A statement not carried on some
  ``S0`` box is searched for a counterexample by the certified iteration from points of that box.
* **Theorem B.3 for every eta up to eta_max** (``--eta-fraction LO,HI``, :func:`.b3.prove_b3_theta`): the
  same statements at every ``eta = theta eta_max(S0)``, ``theta`` in ``[LO, HI]``, by branch and bound
  over (S0, theta) boxes with the region enclosed per box (``k = theta k_max``) and the loss slack
  normalised by ``k sigma``; a refuted printed statement also reports the theta below which it is
  certified and the lowest theta of its counterexamples.
* **Theorem 4.2 (gamma*)**: ``gamma*`` is the unique fixed point of the collapsed GD map
  ``g(gamma) = gamma - eta S F(gamma) + eta^2 gamma F(gamma)^2`` in a box ``X``, for every ``S0``
  of the interval and every ``S`` the trajectory can reach, by the Krawczyk test
  ``K(X) = m - C h(m) + (1 - C h'(X))(X - m) inside int X`` (``h = gamma - g``), and attracting:
  ``q = sup |g'(X)| < 1`` (the linear rate of Theorem 4.2 (2)).
* **Theorem 4.6 / G.1 (looped contraction)**: the per-layer factor ``R = (1 + gamma l_{r+1})/
  (1 + gamma l_1)`` of the looped layer (LN layer: ``gamma``; looped model: ``rho``; no-LN:
  ``gamma*``) enclosed over a stated range and certified ``< 1``; in the eigenbasis the loop map
  acts on ``u_i = c_i/c_1`` as ``diag((1 + gamma l_i)/(1 + gamma l_1))``, so ``R`` is the norm of
  its derivative on every cone ``{tan psi <= tau}`` (each invariant). With ``steps``, ``gamma_T``
  (``rho_T``) comes from a certified GD run (:func:`.training.certified_training`, spectra with two or
  three distinct eigenvalues).

Constants: ``kappa1 = tr S/d``, ``kappa2 = E||S a||^2`` are exact rationals
(:func:`rdyn.reduced_dynamics.model_b.constants.kappa_exact`); for the normalized target
``kappa3 = E||S a||`` (Task 2 spectra) is enclosed by :func:`.instance.kappa3_enclosure` (a rigorous
``acb.integral`` with bounded head and tail).

Modules (one concept each; import them by full path, e.g.
``from rdyn.verification.proofs.model_b.prove import prove_model_b``):

* ``instance``: :class:`.instance.BInstance`, the constants (kappa1, kappa2, gamma*, kappa3) and eta_max's terms,
* ``slacks``: the slacks of B.3's statements on a box, in the float interval
  :class:`rdyn.reduced_dynamics.certified.interval.Interval` (operators over that module's sharp primitives),
* ``boxes``: one S0 (or (S0, theta)) box decided: step 0 exactly, the region by interval branch and bound,
* ``counterexample``: the certified (gamma, S) iteration that refutes a statement, and where to try it,
* ``b3``: Theorem B.3 over the S0 interval (:func:`.b3.prove_b3`) and over theta (:func:`.b3.prove_b3_theta`),
* ``krawczyk``: gamma* by the Krawczyk test,
* ``contraction``: the contraction factor R (Theorems 4.6, 4.7),
* ``training``: certified GD training on two-level spectra (``--steps``),
* ``prove``: :func:`.prove.prove_model_b`, the whole ``rdyn prove --paper B`` report.
"""
