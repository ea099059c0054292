"""rdyn.verification: the independent routes and the checks (third layer; imports
``rdyn.derivations`` and ``rdyn.reduced_dynamics``, never ``rdyn``'s API or CLI).

Subpackages (each ``__init__`` says what it holds; import modules by full path):
``checks`` (``rdyn verify``), ``claims`` (``rdyn claims``: ledger, fit rule, errata, reports),
``references`` (full matrices, quadrature, Monte Carlo, manifold, scaling fits), ``figures``
(``rdyn figures``). docs/layout.md draws the tree.
"""
