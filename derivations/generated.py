"""The one place where generated source becomes code.

Every function rdyn compiles at run time (the collapsed maps, their Jacobians, the eta limit, the
compiled event loop, the smoothing kernels, the proofs' arb kernels) is Python source printed by
the package itself from derived sympy trees or fixed templates, never text from a user or a file
(docs/input_rules.md, "Formulas are data"). This module is deliberately free of sympy, so the
float64 path compiles its kernels without importing it.
"""
from __future__ import annotations


def run_generated(source: str, label: str, namespace: dict) -> dict:
    """Execute ``source`` (printed by rdyn) in ``namespace`` and return the namespace, now holding
    the functions it defines. ``label`` names the source in tracebacks (``<rdyn LABEL>``)."""
    exec(compile(source, f"<rdyn {label}>", "exec"), namespace)   # noqa: S102
    return namespace
