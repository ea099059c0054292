"""The independent routes: computations that share no code path with the collapsed iterators,
against which the derivations and iterators are checked.

Paper sections: Model A's full model (seed 000, Sections 2 and 4.1, Appendix F's expectations),
Model B's full model and exact Task 2 expectations (seed 003, Appendix B), the Theta-claims.

Modules (import them by full path; this ``__init__`` imports nothing):

* ``quadrature``, ``montecarlo``: 1-D mpmath quadrature of the bivariate forms; Monte Carlo of
  Model A's full-matrix population gradient;
* ``full_matrix``, ``full_matrix_smooth``, ``crosscheck``: Model A's full student and teacher
  (population GD, online SGD; ``rdyn crosscheck``);
* ``full_matrix_b``, ``dirichlet_b``, ``gaussian_route_b``: Model B's full matrices and the
  independent routes of its exact expectations;
* ``manifold``, ``flow_accuracy``, ``scaling``: is the collapsed manifold attracting; how close
  the eta -> 0 limits are; measured exponents and constants (``rdyn scaling``).
"""
