"""Model A's collapsed map as generated source, for every numeric backend.

The step and the observables are printed from the derived expressions of
:mod:`rdyn.derivations.model_a.catalog` by :mod:`rdyn.derivations.codegen`; float64 (numba), mpmath and arb
evaluate the same source. Subexpressions that depend only on the parameters are computed
once per run by ``prepare``; the per-step functions take the state and that tuple ``c``::

    prepare(D, K, eta, vstar_norm2, kappa, s0) -> c
    step(C1, C2, C3, c) -> (C1', C2', C3')
    attention(C2, C3, c) -> p            c1_star(C2, C3, c) -> C1*
    multiplier(C2, C3, c) -> dC1'/dC1    loss(C1, C2, C3, c) -> excess loss

``e = exp(-(C2 + C3)/scale)`` is computed once per call; everything else is a function of
``C1`` and ``e`` (no ``1 - K p`` and no ``arccos``: see :mod:`rdyn.derivations.model_a.collapsed`).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from types import SimpleNamespace
from typing import Callable

from rdyn.derivations.generated import run_generated
from rdyn.reduced_dynamics.runs import kernel_cache

PARAMETERS = "D, K, eta, vstar_norm2, kappa, s0"


@lru_cache(maxsize=None)
def _sym() -> SimpleNamespace:
    """sympy and the derivation modules, imported on first use: a warm run reads the
    generated source from :mod:`rdyn.reduced_dynamics.runs.kernel_cache` and never imports sympy."""
    import sympy as sp

    from rdyn.derivations import codegen
    from rdyn.derivations.model_a import collapsed as ma
    from rdyn.derivations.model_a.catalog import model_a_expressions

    e = sp.Symbol("e")
    return SimpleNamespace(
        sp=sp, codegen=codegen, ma=ma, model_a_expressions=model_a_expressions,
        rename={ma.out_group_ratio: e, ma.kappa: sp.Symbol("kappa"), ma.s0: sp.Symbol("s0")},
        variables=frozenset({ma.C1, ma.C2, ma.C3, e}))


def __getattr__(name: str):
    """``_RENAME`` and ``_VARIABLES`` (sympy objects, used by the certified modules), built on
    first access so that importing this module does not import sympy (PEP 562)."""
    if name == "_RENAME":
        return _sym().rename
    if name == "_VARIABLES":
        return _sym().variables
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _function(pool: codegen.ConstantPool, header: str, branches, scale: str) -> str:
    """A generated function whose body computes e, then one block per branch.

    ``branches`` holds (keyword, expressions, return template): the template formats the
    printed expressions (default: return them all).
    """
    sp, codegen, ma = _sym().sp, _sym().codegen, _sym().ma
    divisor = ma.D if scale == "D" else sp.sqrt(ma.D)
    e_line = codegen.emit_assignments([pool.hoist(-1 / divisor)], "")[1][0]
    out = [header, f"    e = F.exp((C2 + C3) * {e_line})"]
    for keyword, exprs, template in branches:
        indent = "    " if keyword is None else "        "
        if keyword is not None:
            out.append(f"    {keyword}")
        lines, printed = codegen.emit_assignments([pool.hoist(x.subs(_sym().rename)) for x in exprs], indent)
        out += lines + [indent + (template or "return {}").format(*printed)
                        if template else f"{indent}return {', '.join(printed)}"]
    return "\n".join(out) + "\n"


def _generated_functions(activation: str, scale: str, extra: bool = False):
    """The constant pool and the generated per-step functions (sources, in order).

    With ``extra``, ``step_positive`` follows: the C1 > 0 branch of ``step`` alone (same
    expressions, same pool), for loops that know every C1 is positive. It is printed after the
    other functions so their sources and the constant indices stay as without it.
    """
    codegen, ma = _sym().codegen, _sym().ma
    x = _sym().model_a_expressions(activation, scale)
    pool = codegen.ConstantPool(_sym().variables)
    ratio = pool.hoist(ma.K / (ma.D - ma.K))

    def nxt(branch, keyword):
        # C3 moves by K/(D-K) times C2's move: the derived invariant (tests: A.invariant.*)
        exprs = [x[f"C1_next_{branch}"], x[f"C2_next_{branch}"] - ma.C2]
        return keyword, exprs, "_d = {1}; return {0}, C2 + _d, C3 + %s * _d" % ratio

    branch_keyword = {"positive": "if C1 > 0:", "zero": "elif C1 == 0:", "negative": "else:"}
    functions = [
        _function(pool, "def step(C1, C2, C3, c):",
                  [nxt(b, branch_keyword[b]) for b in ma.BRANCHES], scale),
        _function(pool, "def attention(C2, C3, c):", [(None, [x["p"]], None)], scale),
        _function(pool, "def c1_star(C2, C3, c):", [(None, [x["C1_star"]], None)], scale),
        _function(pool, "def multiplier(C2, C3, c):", [(None, [x["C1_multiplier"]], None)], scale),
        _function(pool, "def loss(C1, C2, C3, c):",
                  [("if C1 >= 0:", [x["loss_positive"]], None),
                   ("else:", [x["loss_negative"]], None)], scale),
    ]
    if extra:
        size = len(pool.constants)
        functions.append(_function(pool, "def step_positive(C1, C2, C3, c):",
                                   [nxt("positive", None)], scale))
        assert len(pool.constants) == size, "step_positive must reuse step's constants"
    return pool, functions


@lru_cache(maxsize=None)
def kernel_source(activation: str, scale: str) -> str:
    """Source of prepare, step, attention, c1_star, multiplier, loss for one configuration
    (generated with sympy once, then read from the source cache)."""
    def generate():
        pool, functions = _generated_functions(activation, scale)
        return pool.source("prepare", PARAMETERS) + "\n" + "\n".join(functions)

    return kernel_cache.cached_source("model_a", (activation, scale), generate)


@lru_cache(maxsize=None)
def batch_kernel_source(activation: str, scale: str) -> str:
    """:func:`kernel_source` followed by ``step_positive(C1, C2, C3, c)``, the C1 > 0 branch
    of ``step`` as a function of its own (branch-free, so a loop over configurations that are
    all in that branch can be vectorised); it returns what ``step`` returns for C1 > 0."""
    def generate():
        pool, functions = _generated_functions(activation, scale, extra=True)
        return pool.source("prepare", PARAMETERS) + "\n" + "\n".join(functions)

    return kernel_cache.cached_source("model_a_batch", (activation, scale), generate)


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
    source = kernel_source(activation, scale)
    if backend_name == "float64":  # codegen.float_backend().namespace(), without sympy
        namespace = {"F": math, "R": float}
    else:
        codegen = _sym().codegen
        backend = {"mpmath": codegen.mpmath_backend, "arb": codegen.arb_backend}[backend_name]()
        namespace = backend.namespace()
    run_generated(source, f"model A kernels [{activation}/{scale}/{backend_name}]", namespace)
    return Kernels(*(namespace[name] for name in Kernels.__dataclass_fields__))


@lru_cache(maxsize=None)
def eta_limit_expression(activation: str) -> sp.Expr:
    return _sym().model_a_expressions(activation, "D")["eta_limit"]


@lru_cache(maxsize=None)
def eta_limit_source(activation: str) -> str:
    """``def eta_limit(D, K, kappa)``: :func:`eta_limit_expression` printed for exact rational
    arithmetic (call it with ``fractions.Fraction`` arguments and ``R = Fraction``), cached
    like the kernels so that a warm run needs no sympy. The expression is a rational function
    of D, K, kappa (checked)."""
    def generate():
        s = _sym()
        expr = eta_limit_expression(activation)
        symbols = (s.ma.D, s.ma.K, s.ma.kappa)
        if not expr.is_rational_function(*symbols) or expr.has(s.sp.Float):
            raise ValueError(f"eta_limit for {activation} is not a rational function: {expr}")
        printed = s.codegen._BackendPrinter().doprint(expr.subs({s.ma.kappa: s.sp.Symbol("kappa")}))
        return f"def eta_limit(D, K, kappa):\n    return {printed}\n"

    return kernel_cache.cached_source("model_a_eta_limit", (activation,), generate)


# --------------------------------------------------------------------------------------------
# Batch (``rdyn sweep``) kernels: the same generated source, optionally with vectorisable
# exp/atan in place of the C library's.
# --------------------------------------------------------------------------------------------

# Cephes (S. Moshier) approximations: exp as a Pade form on [-ln2/2, ln2/2] (Cody-Waite
# reduction), atan as a rational form after reduction to |x| <= 0.66. Measured on 2e4 random
# arguments against 40-digit mpmath: max relative error 3.1e-16 (exp) and 2.2e-16 (atan).
_EXP_P = (1.26177193074810590878e-4, 3.02994407707441961300e-2, 9.99999999999999999910e-1)
_EXP_Q = (3.00198505138664455042e-6, 2.52448340349684104192e-3, 2.27265548208155028766e-1,
          2.00000000000000000009e0)
_ATAN_P = (-8.750608600031904122785e-1, -1.615753718733365076637e1,
           -7.500855792314704667340e1, -1.228866684490136173410e2, -6.485021904942025371773e1)
_ATAN_Q = (2.485846490142306297962e1, 1.650270098316988542046e2, 4.328810604912902668951e2,
           4.853903996359136964868e2, 1.945506571482613964425e2)


@lru_cache(maxsize=None)
def fast_math_namespace():
    """A module ``F`` whose ``exp`` and ``atan`` are branch-free numba functions (inlined, so
    LLVM can vectorise a loop over configurations that calls them); other names are ``math``'s.

    They are not the C library's functions: results differ from ``math.exp``/``math.atan``
    in the last bit for about 1 argument in 10 (error <= 1.4 ulp), so iterates computed with
    them are not bit-identical to :func:`rdyn.reduced_dynamics.model_a.dynamics.run`.
    """
    import types

    import numba
    import numpy as np
    from numba import types as nbt
    from numba.extending import intrinsic

    jit = numba.njit(inline="always", error_model="numpy")

    @intrinsic
    def bits_to_float(typingctx, bits):
        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], context.get_value_type(nbt.float64))
        return nbt.float64(nbt.int64), codegen

    @intrinsic
    def float_to_bits(typingctx, value):
        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], context.get_value_type(nbt.int64))
        return nbt.int64(nbt.float64), codegen

    magic = 6755399441055744.0  # 1.5 * 2^52: integral doubles |k| < 2^51 as k + its bits

    @jit
    def power_of_two(k):
        """2^k for an integral double k in [-1022, 1023], without a float-to-int conversion
        (AVX2 has no vector one)."""
        return bits_to_float((float_to_bits(k + magic) - float_to_bits(magic) + 1023) << 52)

    p0, p1, p2 = _EXP_P
    q0, q1, q2, q3 = _EXP_Q
    a0, a1, a2, a3, a4 = _ATAN_P
    b0, b1, b2, b3, b4 = _ATAN_Q

    @jit
    def exp(x):
        xc = min(max(x, -745.2), 709.7)
        fn = np.floor(1.4426950408889634073599 * xc + 0.5)  # a double (math.floor: an int)
        r = xc - fn * 6.93145751953125e-1
        r = r - fn * 1.42860682030941723212e-6
        rr = r * r
        px = r * ((p0 * rr + p1) * rr + p2)
        qx = ((q0 * rr + q1) * rr + q2) * rr + q3
        y = 1.0 + 2.0 * (px / (qx - px))
        h = np.floor(0.5 * fn)  # 2^fn as two factors, so that subnormal results come out right
        y = y * power_of_two(h) * power_of_two(fn - h)
        return 0.0 if x < -745.2 else y

    @jit
    def atan(x):
        a = abs(x)
        big = a > 2.41421356237309504880  # tan(3 pi/8)
        mid = a > 0.66
        # one division: the numerator and denominator are selected first (written as
        # arithmetic so that LLVM does not divide in every branch and blend the quotients)
        u = 1.0 if mid else 0.0
        z = (-1.0 if big else a - u) / (a if big else a * u + 1.0)
        base = 1.57079632679489661923 if big else (0.785398163397448309616 if mid else 0.0)
        extra = (6.123233995736765886130e-17 if big
                 else (3.061616997868382943065e-17 if mid else 0.0))
        zz = z * z
        p = (((a0 * zz + a1) * zz + a2) * zz + a3) * zz + a4
        q = ((((zz + b0) * zz + b1) * zz + b2) * zz + b3) * zz + b4
        y = base + ((z * (zz * p / q) + z) + extra)
        return -y if x < 0 else y

    module = types.ModuleType("rdyn_fast_math")
    for name in ("sqrt", "pi", "log", "sin", "cos", "acos", "atan2", "log1p", "expm1"):
        setattr(module, name, getattr(math, name))
    module.exp = exp
    module.atan = atan
    return module


# --------------------------------------------------------------------------------------------
# Sources of the certified (interval, arb) and double-double backends
# --------------------------------------------------------------------------------------------

def jacobian_entries(activation: str, scale: str, branch: str) -> list:
    """(g_C1, g_e e_C, d_C1, d_e e_C) on one branch of the map C1' = g(C1, e),
    C2' = C2 + d(C1, e), with e = exp(-(C2 + C3)/scale) and e_C = de/dC2 = -e/scale: the
    sympy derivatives of the catalog expressions, functions of C1 and e only."""
    sp, ma = _sym().sp, _sym().ma
    x = _sym().model_a_expressions(activation, scale)
    e = ma.out_group_ratio
    e_c = -e / (ma.D if scale == "D" else sp.sqrt(ma.D))
    g = x[f"C1_next_{branch}"]
    d = x[f"C2_next_{branch}"] - ma.C2
    exprs = [sp.diff(g, ma.C1), sp.diff(g, e) * e_c, sp.diff(d, ma.C1), sp.diff(d, e) * e_c]
    assert not any(ex.has(ma.C2) or ex.has(ma.C3) for ex in exprs)
    return exprs


@lru_cache(maxsize=None)
def jacobian_source(activation: str, scale: str) -> str:
    """Source of ``prepare`` and ``jacobian_positive/negative(C1, C2, C3, c) -> (g_C1,
    g_e e_C, d_C1, d_e e_C)`` (derivatives of the generated step's C1 map g and C2 increment
    d; e_C = -e/scale), printed like the step (:func:`kernel_source`); evaluated on
    arb balls by :func:`rdyn.reduced_dynamics.certified.arb_iteration.jacobian_kernels`."""
    pool = _sym().codegen.ConstantPool(_sym().variables)
    functions = [_function(pool, f"def jacobian_{branch}(C1, C2, C3, c):",
                           [(None, jacobian_entries(activation, scale, branch), None)], scale)
                 for branch in ("positive", "negative")]
    return pool.source("prepare", PARAMETERS) + "\n" + "\n".join(functions)


INTERVAL_PARAMETERS = "D, K, eta, vstar_norm2, kappa, s0"


@lru_cache(maxsize=None)
def interval_source(activation: str, scale: str, op: str = "i") -> str:
    """Source of ``prepare`` (constants; run on arb balls) and the interval functions

    incr_positive / incr_negative / incr_zero(C1, C2, C3, c) -> (g, d)   (C1 map, C2 increment)
    jac_positive / jac_negative(C1, C2, C3, c) -> (g_C1, g_e e_C, d_C1, d_e e_C)
    attention(C2, C3, c) -> p          c1_star(C2, C3, c) -> C1*

    printed by :func:`rdyn.derivations.codegen.emit_interval_ssa` from the catalog expressions
    (the Jacobian entries as in :func:`jacobian_source`). ``c``
    is an (n, 2) array of constant enclosures; every argument and result is a (lo, hi) pair.

    ``op = "d"`` prints the same functions on double-double numbers (``c`` an (n, 2) array of
    (hi, lo) pairs, :mod:`rdyn.reduced_dynamics.numerics.double_double`) without the Jacobian and with
    ``multiplier(C2, C3, c) -> dC1'/dC1`` (the C1 > 0 multiplier, for the stability check).
    """
    sp, codegen, ma = _sym().sp, _sym().codegen, _sym().ma
    rename = _sym().rename
    x = _sym().model_a_expressions(activation, scale)
    e_sym = rename[ma.out_group_ratio]
    divisor = ma.D if scale == "D" else sp.sqrt(ma.D)
    pool = codegen.ConstantPool(_sym().variables)
    e_factor = pool.hoist(-1 / divisor)

    def function(header, exprs, variables):
        hoisted = [pool.hoist(ex.subs(rename)) for ex in exprs]
        names = {getattr(ma, v): v for v in variables}
        used = set()
        for ex in hoisted + [e_factor]:
            used |= {s for s in ex.free_symbols if s.name.startswith("c[")}
        loads = []
        for s in sorted(used, key=lambda s: int(s.name[2:-1])):
            i = int(s.name[2:-1])
            names[s] = f"_c{i}"
            loads.append(f"    _c{i} = (c[{i}, 0], c[{i}, 1])")
        lines = [header] + loads
        if "e" in {str(s) for ex in hoisted for s in ex.free_symbols}:
            lines.append(f"    e = {op}exp({op}mul({op}add(C2, C3), {names[e_factor]}))")
            names[e_sym] = "e"
        body, outs = codegen.emit_interval_ssa(hoisted, names, op=op)
        return "\n".join(lines + body + [f"    return ({', '.join(outs)},)"]) + "\n"

    state = ("C1", "C2", "C3")
    functions = []
    for branch in ("positive", "negative", "zero"):
        d = x[f"C2_next_{branch}"] - ma.C2
        if branch == "zero":   # W_V = 0: the logits do not move (the loop relies on it)
            d = sp.simplify(d)
            assert d == 0, d
        functions.append(function(f"def incr_{branch}(C1, C2, C3, c):",
                                  [x[f"C1_next_{branch}"], d], state))
    if op == "i":
        for branch in ("positive", "negative"):
            functions.append(function(f"def jac_{branch}(C1, C2, C3, c):",
                                      jacobian_entries(activation, scale, branch), state))
    functions.append(function("def attention(C2, C3, c):", [x["p"]], ("C2", "C3")))
    functions.append(function("def c1_star(C2, C3, c):", [x["C1_star"]], ("C2", "C3")))
    if op != "i":
        functions.append(function("def multiplier(C2, C3, c):", [x["C1_multiplier"]],
                                  ("C2", "C3")))
    return pool.source("prepare", INTERVAL_PARAMETERS) + "\n" + "\n".join(functions)
