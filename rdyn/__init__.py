"""rdyn: exact, checkable collapsed training dynamics of two transformer theory papers.

The pipeline is ``derivations`` (sympy) -> ``reduced_dynamics`` (iterators, phases)
-> ``verify`` (cross-checks, lemma report) -> ``rdyn`` (this package: the Python API and the
``rdyn`` command).

Python API (docs/api.md): one function per subcommand, keyword arguments named as the
options (dashes -> underscores), the same checks as the CLI (ValueError with its one-line
message), results whose attributes are the JSON keys and whose ``to_dict()`` is the
``--json`` object::

    import rdyn
    r = rdyn.teacher(D=20, K=4, eta=0.5, steps=200000)
    r.t1, r.T_star, r.final.C1, r.to_dict()
    b = rdyn.ln(model="ln", data="spectrum", spectrum=(4, 1, 1), d=3, eta=0.5, steps=200, dps=30)

Functions: teacher, crosscheck, ln, sweep, scaling, verify, figures, claims, asymptotics. Importing rdyn is cheap:
each function imports its machinery on first use.
"""
from reduced_dynamics._version import __version__

__all__ = ["teacher", "crosscheck", "ln", "sweep", "scaling", "verify", "figures", "claims", "asymptotics", "Result",
           "__version__"]


_FUNCTIONS = ("teacher", "crosscheck", "ln", "sweep", "scaling", "verify", "figures", "claims",
              "asymptotics")


def __getattr__(name: str):
    import importlib

    if name == "Result":
        return importlib.import_module("rdyn.result").Result
    if name in _FUNCTIONS:
        return getattr(importlib.import_module(f"rdyn.api._{name}"), name)
    raise AttributeError(f"module 'rdyn' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
