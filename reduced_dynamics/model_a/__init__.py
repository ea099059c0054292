"""Model A (teacher-model paper, seed 000): the collapsed ``(C1, C2, C3)`` dynamics, iterated.

Paper sections: Section 4.1 and Appendix D (Lemma D.2's collapsed map; Lemmas D.13-D.19, the
phases t1 and T*), Appendix F (the Gaussian expectations of smooth activations).

Modules (import them by full path, e.g. ``from rdyn.reduced_dynamics.model_a import dynamics``;
this ``__init__`` imports nothing):

* ``kernels``: the collapsed map as generated source for every numeric backend;
* ``dynamics``: iterating it (float64/numba, arb, mpmath), the event loop (t1, T*, stability):
  ``Config``, ``run``, ``RunResult``;
* ``engine``: the one engine of every Model A run, homogeneous and smooth (the driver engine
  around a moment provider's chunk, captured steps, ``RunResult`` assembly);
* ``double_double_run``: the map in compiled double-double arithmetic (``--precision dd``);
* ``smooth``, ``gauss_hermite``, ``compiled``, ``compiled_rule``: smooth activations
  (Gauss-Hermite expectations, compiled closed forms and tensor rules);
* ``limits/``: the eta -> 0 limits (``flow``, ``smooth_flow``: gradient flow, slow manifold) and
  the large-D behaviour of the phase limits (``asymptotics``);
* ``batch``, ``grid``, ``smooth_sweep``: many configurations at once (``rdyn sweep``);
* ``presets``: the preset teachers and user group families.
"""
