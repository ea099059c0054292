"""Model A's limits: the small-step limit eta -> 0 and the large-D limit.

Modules (import them by full path, e.g. ``from rdyn.reduced_dynamics.model_a.limits import flow``;
this ``__init__`` imports nothing):

* ``flow``: the gradient-flow limit of the collapsed map and its slow manifold for the
  homogeneous activations (``rdyn teacher --method flow|slow``): phase limits tau1, tau_star;
* ``smooth_flow``: the same for the smooth activations;
* ``asymptotics``: the large-D behaviour of tau1, tau_star and the late loss (``rdyn asymptotics``).
"""
