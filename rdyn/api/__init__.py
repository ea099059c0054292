"""The Python API: one function per subcommand, keyword arguments named as its options.

``rdyn.teacher(D=20, K=4, eta=0.5, steps=200000)`` is ``rdyn teacher --D 20 --K 4 --eta 0.5
--steps 200000``: the same options (dashes -> underscores), the same checks (a
:class:`ValueError` carrying the CLI's one-line message, raised before any work) and a
:class:`rdyn.result.Result` whose ``to_dict()`` is the CLI's ``--json`` object. The option
table is :mod:`rdyn.options`; each function lives in its own private module (``rdyn.api._teacher``, ...) and only
orchestrates library calls (derivations, reduced_dynamics, verify).
"""
from __future__ import annotations

import importlib

FUNCTIONS = ("teacher", "crosscheck", "ln", "sweep", "scaling", "verify", "figures", "claims",
              "asymptotics", "prove")

__all__ = list(FUNCTIONS)


def __getattr__(name: str):
    if name in FUNCTIONS:
        return getattr(importlib.import_module(f"rdyn.api._{name}"), name)
    raise AttributeError(f"module 'rdyn.api' has no attribute {name!r}")
