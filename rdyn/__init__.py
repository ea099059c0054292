"""rdyn: exact, checkable collapsed training dynamics of two transformer theory papers.

The pipeline is ``derivations`` (sympy) -> ``reduced_dynamics`` (iterators, phases)
-> ``verify`` (cross-checks, lemma report) -> ``rdyn.cli`` (the ``rdyn`` command).
"""

__version__ = "0.1.0"
