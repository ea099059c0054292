"""Model B (seed 003): the collapsed alpha/beta (looped: w/v) recursions of attention with and
without layer normalisation.

Paper sections: Section 5, Appendices B (Task 1/Task 2 data, B.1 per-sample terms), C (Lemma
C.1; Theorems 4.6 and 4.7) and G (figures).

Modules (import them by full path, e.g. ``from rdyn.reduced_dynamics.model_b import run``;
this ``__init__`` imports nothing):

* ``run``: the public surface (``run`` for one rule or QMC replicas, the names callers use);
* ``config``, ``constants``: ``Config`` and the choice of expectation; kappa1..kappa4, Upsilon_3;
* ``rule``, ``exact``, ``dirichlet_rule``, ``sampling``: the spectral rule (``SpectralRule``),
  exact Task 2 rules (theta rule, Dirichlet Gauss-Jacobi rules), one Monte Carlo sample;
* ``gaussian``, ``gaussian_route``: the Gaussian route (quadratic-form quadrature, any number
  of distinct eigenvalues);
* ``terms``, ``looped``: per-sample loss and L'(gamma); the looped model;
* ``iterate``, ``qmc``, ``series``: iterating one rule, scrambled-Sobol replicas, checkpoints;
* ``analysis``, ``report``: fitted exponents, Theorem 4.6/4.7 quantities; ``rdyn ln``'s report.
"""
