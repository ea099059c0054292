"""Model A's collapsed map as generated source, for every numeric backend.

The step and the observables are printed from the derived expressions of
:mod:`derivations.catalog` by :mod:`derivations.codegen`; float64 (numba), mpmath and arb
evaluate the same source. Subexpressions that depend only on the parameters are computed
once per run by ``prepare``; the per-step functions take the state and that tuple ``c``::

    prepare(D, K, eta, vstar_norm2, kappa, s0) -> c
    step(C1, C2, C3, c) -> (C1', C2', C3')
    attention(C2, C3, c) -> p            c1_star(C2, C3, c) -> C1*
    multiplier(C2, C3, c) -> dC1'/dC1    loss(C1, C2, C3, c) -> excess loss

``e = exp(-(C2 + C3)/scale)`` is computed once per call; everything else is a function of
``C1`` and ``e`` (no ``1 - K p`` and no ``arccos``: see :mod:`derivations.model_a`).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import sympy as sp

from derivations import codegen
from derivations import model_a as ma
from derivations.catalog import model_a_expressions

PARAMETERS = "D, K, eta, vstar_norm2, kappa, s0"
_e = sp.Symbol("e")
_RENAME = {ma.out_group_ratio: _e, ma.kappa: sp.Symbol("kappa"), ma.s0: sp.Symbol("s0")}
_VARIABLES = frozenset({ma.C1, ma.C2, ma.C3, _e})


def _function(pool: codegen.ConstantPool, header: str, branches, scale: str) -> str:
    """A generated function whose body computes e, then one block per branch.

    ``branches`` holds (keyword, expressions, return template): the template formats the
    printed expressions (default: return them all).
    """
    divisor = ma.D if scale == "D" else sp.sqrt(ma.D)
    e_line = codegen.emit_assignments([pool.hoist(-1 / divisor)], "")[1][0]
    out = [header, f"    e = F.exp((C2 + C3) * {e_line})"]
    for keyword, exprs, template in branches:
        indent = "    " if keyword is None else "        "
        if keyword is not None:
            out.append(f"    {keyword}")
        lines, printed = codegen.emit_assignments([pool.hoist(x.subs(_RENAME)) for x in exprs], indent)
        out += lines + [indent + (template or "return {}").format(*printed)
                        if template else f"{indent}return {', '.join(printed)}"]
    return "\n".join(out) + "\n"


@lru_cache(maxsize=None)
def kernel_source(activation: str, scale: str) -> str:
    """Source of prepare, step, attention, c1_star, multiplier, loss for one configuration."""
    x = model_a_expressions(activation, scale)
    pool = codegen.ConstantPool(_VARIABLES)
    ratio = pool.hoist(ma.K / (ma.D - ma.K))

    def nxt(branch):
        # C3 moves by K/(D-K) times C2's move: the derived invariant (tests: A.invariant.*)
        exprs = [x[f"C1_next_{branch}"], x[f"C2_next_{branch}"] - ma.C2]
        return branch_keyword[branch], exprs, "_d = {1}; return {0}, C2 + _d, C3 + %s * _d" % ratio

    branch_keyword = {"positive": "if C1 > 0:", "zero": "elif C1 == 0:", "negative": "else:"}
    functions = [
        _function(pool, "def step(C1, C2, C3, c):", [nxt(b) for b in ma.BRANCHES], scale),
        _function(pool, "def attention(C2, C3, c):", [(None, [x["p"]], None)], scale),
        _function(pool, "def c1_star(C2, C3, c):", [(None, [x["C1_star"]], None)], scale),
        _function(pool, "def multiplier(C2, C3, c):", [(None, [x["C1_multiplier"]], None)], scale),
        _function(pool, "def loss(C1, C2, C3, c):",
                  [("if C1 >= 0:", [x["loss_positive"]], None),
                   ("else:", [x["loss_negative"]], None)], scale),
    ]
    return pool.source("prepare", PARAMETERS) + "\n" + "\n".join(functions)


@dataclass(frozen=True)
class Kernels:
    prepare: Callable
    step: Callable
    attention: Callable
    c1_star: Callable
    multiplier: Callable
    loss: Callable


@lru_cache(maxsize=None)
def kernels(activation: str, scale: str, backend_name: str) -> Kernels:
    """The generated functions compiled for ``float64`` (plain Python), ``mpmath`` or ``arb``."""
    backend = {"float64": codegen.float_backend, "mpmath": codegen.mpmath_backend,
               "arb": codegen.arb_backend}[backend_name]()
    source = kernel_source(activation, scale)
    namespace = backend.namespace()
    exec(compile(source, f"<rdyn model A kernels [{activation}/{scale}/{backend_name}]>", "exec"),
         namespace)
    return Kernels(*(namespace[name] for name in Kernels.__dataclass_fields__))


@lru_cache(maxsize=None)
def eta_limit_expression(activation: str) -> sp.Expr:
    return model_a_expressions(activation, "D")["eta_limit"]
