"""Model A (teacher-model paper, seed 000), derived with sympy.

Modules (import them by full path, e.g. ``from rdyn.derivations.model_a import collapsed``;
this ``__init__`` imports nothing):

* ``collapsed``: the collapsed ``(C1, C2, C3)`` map of Lemma D.2 (with Lemmas D.4, D.8) for the
  positively homogeneous activations; ``collapsed_general``: the same map for any activation;
* ``catalog`` (and the generated ``_catalog``): the derived expressions, cached as source;
* ``gradient_flow``, ``gradient_flow_general``: the eta -> 0 limit, its modified equation, the slow
  manifold;
* ``late_phase``: phase 3 (T > T*), the law of ``x = C2 + C3`` and the late rates (Theorem 3.1,
  Lemmas D.17-D.19);
* ``asymptotics``: large-D limits of tau1, tau_star and the late loss;
* ``attention_angle``: Lemma D.6's ``A(t)``;
* ``tstar_law``, ``tstar_law_relu``: Lemma D.17's law for T* in the flow limit (steps 1-3 exact obligations, the rest listed unchecked);
* ``correction_identities``: exact identities behind the ledger's ``proved`` corrections.
"""
