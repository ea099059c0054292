"""Smooth activations beyond the paper (docs/models_and_conventions.md, "Activations beyond the paper"): erf, tanh,
GELU (exact, x Phi(x)), softplus, sigmoid, and a user formula in ``x``.

Each activation is a sympy expression ``sigma(x)``; its derivatives ``sigma'``, ``sigma''`` are
taken by sympy (never typed in), and every numeric backend evaluates the same expressions
(:func:`numeric_functions`). A user formula is parsed and validated here, once, before any work
(:func:`parse_expression`): one free symbol ``x``, real and finite with finite first and second
derivatives on a grid covering [-40, 40] (so differentiable almost everywhere), and growth slow
enough for every Gaussian moment to exist (|sigma(x)| <= 1e6 (1 + x^2) on the grid).

Closed-form Gaussian smoothings (used to reduce the 2-D expectations of the collapsed map to
1-D ones, see :mod:`rdyn.reduced_dynamics.model_a.smooth`): for ``Z ~ N(0, 1)``,
``S0(m, s) = E[sigma(m + s Z)]`` and ``S1(m, s) = E[sigma'(m + s Z)]``. They are derived in
:func:`smoothing` for erf and GELU from the Gaussian convolution of sigma' (a Gaussian or a
Gaussian times a polynomial), integrated back in ``m`` from the symmetry point; tanh, softplus,
sigmoid and user formulas have none (the quadrature is 2-D then).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import sympy as sp

from rdyn.derivations.reproducible import seeded

x = sp.Symbol("x", real=True)

# The named activations (docs/models_and_conventions.md): sympy expressions in x.
NAMED = {
    "erf": sp.erf(x),
    "tanh": sp.tanh(x),
    "gelu": x * (1 + sp.erf(x / sp.sqrt(2))) / 2,   # x Phi(x), the exact GELU
    "softplus": sp.log(1 + sp.exp(x)),
    "sigmoid": 1 / (1 + sp.exp(-x)),
}
SMOOTH_ACTIVATIONS = tuple(NAMED) + ("expr",)

GRID_HALF_WIDTH = 40
GROWTH_LIMIT = 1e6
SCALE_RANGE = (1e-6, 1e6)   # max |sigma'| on [-4, 4], where the Gaussian mass is


FORMULA_SECONDS = 10.0   # wall-clock budget of parsing and checking one formula
FIELD = "{activation_expr}"   # the request field a refusal names (the API words it --activation-expr)


@lru_cache(maxsize=64)
def parse_expression(text: str) -> sp.Expr:
    """Parse and validate the request field ``activation_expr`` (the API's ``--activation-expr``):
    a :class:`~rdyn.derivations.fields.FieldError` with a one-line reason otherwise.

    The text is data, never code: :func:`rdyn.derivations.formula.parse` builds the sympy tree
    from a whitelist (numbers, ``x``, ``+ - * / **``, the functions of
    :data:`rdyn.derivations.formula.FUNCTIONS`; bounded length, nesting, literals and
    exponents), and the checks below run under a time budget of :data:`FORMULA_SECONDS`.
    Accepted: a formula whose only variable is ``x``, finite and real with finite sigma' and
    sigma'' at 801 points of [-40, 40] and at the grid's half-steps, |sigma(x)| <= 1e6 (1 + x^2)
    there (the Gaussian expectations the dynamics need exist), and max |sigma'| on [-4, 4] in
    [1e-6, 1e6] (a smaller or larger scale leaves the moments under- or overflowing float64).
    """
    from rdyn.derivations.fields import FieldError
    from rdyn.derivations.formula import parse, time_budget

    try:
        expr = parse(text, {"x": x}, what=FIELD)
        if x not in expr.free_symbols:
            raise ValueError(f"{FIELD}: the expression does not depend on x")
        with time_budget(FORMULA_SECONDS, FIELD):
            _check_on_grid(text, expr)
    except FieldError:
        raise
    except ValueError as exc:   # every refusal above begins with the field's placeholder
        raise FieldError("activation_expr", str(exc)) from None
    return expr


def _check_on_grid(text: str, expr: sp.Expr) -> None:
    try:
        funcs = [numeric_functions_float(expr)]
    except Exception as exc:   # noqa: BLE001 -- a form sympy cannot print (a guard: the parser
        # admits none it knows of): one line naming the formula, never a printer's traceback
        why = type(exc).__name__
        raise ValueError(f"{FIELD}: {text!r} or its derivatives cannot be printed "
                         f"for evaluation ({why})") from None
    import numpy as np

    grid = np.linspace(-GRID_HALF_WIDTH, GRID_HALF_WIDTH, 801)
    grid = np.concatenate([grid, grid[:-1] + 0.05])
    with np.errstate(all="ignore"):
        for order, f in enumerate(funcs[0]):
            try:
                values = np.asarray([complex(f(float(t))) for t in grid])
            except (ZeroDivisionError, OverflowError, ValueError, TypeError):
                raise ValueError(f"{FIELD}: {_order_name(order)} of {text!r} cannot "
                                 "be evaluated on [-40, 40]") from None
            if not np.all(np.isfinite(values)) or np.any(np.abs(values.imag) > 1e-12 * (1 + np.abs(values.real))):
                bad = grid[~(np.isfinite(values) & (np.abs(values.imag) <= 1e-12 * (1 + np.abs(values.real))))][0]
                raise ValueError(f"{FIELD}: {_order_name(order)} of {text!r} is not "
                                 f"finite and real at x = {bad:g}")
            if order == 0 and np.any(np.abs(values.real) > GROWTH_LIMIT * (1 + grid**2)):
                raise ValueError(f"{FIELD}: {text!r} grows too fast (|sigma(x)| > "
                                 "1e6 (1 + x^2) on [-40, 40]); Gaussian moments would not be usable")
            if order == 1:
                scale = float(np.max(np.abs(values.real[np.abs(grid) <= 4])))
                if not SCALE_RANGE[0] <= scale <= SCALE_RANGE[1]:
                    raise ValueError(f"{FIELD}: max |sigma'| on [-4, 4] is {scale:.3g}, "
                                     f"outside [{SCALE_RANGE[0]:g}, {SCALE_RANGE[1]:g}]: the "
                                     "Gaussian moments (products of two sigma' values) would "
                                     "under- or overflow float64; rescale the formula")


def _order_name(order: int) -> str:
    return ("sigma", "sigma'", "sigma''")[order]


@dataclass(frozen=True)
class Activation:
    """A smooth activation: ``name`` (erf, tanh, gelu, softplus, sigmoid, expr) and, for
    ``expr``, the user formula's text."""

    name: str
    formula: str | None = None

    def __post_init__(self):
        if self.name not in SMOOTH_ACTIVATIONS:
            raise ValueError(f"unknown smooth activation {self.name!r}")
        if (self.name == "expr") != (self.formula is not None):
            raise ValueError("a formula goes with activation 'expr' only")

    @property
    def expression(self) -> sp.Expr:
        return NAMED[self.name] if self.name != "expr" else parse_expression(self.formula)

    @property
    def label(self) -> str:
        return self.name if self.name != "expr" else f"expr:{self.formula}"


def derivatives(expr: sp.Expr) -> tuple[sp.Expr, sp.Expr, sp.Expr]:
    """(sigma, sigma', sigma'') by sympy differentiation; Dirac deltas whose factor vanishes
    where the delta sits are removed (:func:`without_null_deltas`: ``Max(x, 0)**3`` is C^2)."""
    d1 = without_null_deltas(sp.diff(expr, x))
    return expr, d1, without_null_deltas(sp.diff(d1, x))


def without_null_deltas(expr: sp.Expr) -> sp.Expr:
    """``expr`` with every term ``f(x) DiracDelta(u(x))`` removed whose factor ``f`` is zero at
    every real root of ``u`` (``f(x) delta(u) = sum f(r) delta(u)/|u'(r)|`` over the roots, so
    such a term is the zero distribution; ``f`` must be continuous there, as Max and powers
    are). Deltas with a non-zero factor stay (the formula then has a kink: refused by
    rdyn/options/value_checks.py)."""
    for delta in expr.atoms(sp.DiracDelta):
        if len(delta.args) != 1:
            continue
        marker = sp.Dummy("delta")
        linear = sp.expand(expr.subs(delta, marker))
        factor = linear.coeff(marker)
        if factor.has(marker) or linear.coeff(marker, 2) != 0:
            continue
        roots = [r for r in sp.solve(delta.args[0], x) if r.is_real]
        if roots and all(sp.simplify(factor.subs(x, r)) == 0 for r in roots):
            expr = linear.subs(marker, 0)
    return expr


def numeric_functions_float(expr: sp.Expr):
    """(sigma, sigma', sigma'') as plain-Python callables on floats (validation)."""
    return tuple(sp.lambdify(x, e, modules=["math", "mpmath", "sympy"]) for e in derivatives(expr))


def lambdify_for(args, expr: sp.Expr, backend: str, bits: int = 53):
    """``expr`` as a callable for ``backend``: "numpy" (float64 arrays, scipy's erf), "arb"
    (python-flint balls at ``bits``; rationals and pi exact at that precision),
    "arb_guarded" (arb balls at the caller's precision, branch points guarded:
    :func:`guarded_arb_lambdify`) or "mpmath" (mpf at the caller's mpmath precision)."""
    if backend == "arb_guarded":
        return guarded_arb_lambdify(args, expr)
    if backend == "numpy":
        import functools   # the numpy printer writes Max/Min as functools.reduce(numpy.maximum, ...)

        names = {"functools": functools}
        if expr.has(sp.erf):   # scipy.special costs 0.5 s to import: only where erf is used
            names["erf"] = _np_erf()
        if expr.has(sp.erfc, sp.besselj):   # the other special functions: scipy.special too
            from scipy.special import erfc, jv

            names.update(erfc=erfc, besselj=jv)
        return sp.lambdify(args, expr, modules=[names, "numpy"], printer=_NumpyErfPrinter)
    if backend == "arb":
        return sp.lambdify(args, expr, modules=[_arb_module(bits)], printer=_ArbPrinter)
    return sp.lambdify(args, expr, modules=["mpmath"])


@lru_cache(maxsize=64)
def _lambdified(name: str, formula: str | None, backend: str, bits: int):
    expr = Activation(name, formula).expression
    return tuple(lambdify_for(x, e, backend, bits) for e in derivatives(expr))


def numeric_functions(activation: Activation, backend: str, bits: int = 53):
    """(sigma, sigma', sigma'') for ``backend``: "numpy" (float64 arrays), "arb" (python-flint
    balls at ``bits``; named activations) or "mpmath" (mpf; any formula)."""
    return _lambdified(activation.name, activation.formula, backend, bits)


# --------------------------------------------------------------------------------------------
# Exponential separation: sigma(a + b) from exp(a / L) and exp(b / L) (compiled tensor rule)
# --------------------------------------------------------------------------------------------

growth = sp.Symbol("E", positive=True)   # E = exp(x / L)


@lru_cache(maxsize=64)
@seeded
def exponential_separation(name: str, formula: str | None = None) -> tuple[sp.Expr, int, int] | None:
    """``(R, L, P)`` with ``sigma(x) = R(x, E)``, ``E = exp(x / L)``, where x enters R only
    polynomially (no function of x left: every transcendental part goes through E), or None.

    Derived by sympy: ``sigma.rewrite(exp)``; each ``exp(k x)`` (k rational) becomes
    ``E^(k L)`` with L the least common denominator of the k; then ``together``. Then
    ``sigma(a + b) = R(a + b, exp(a / L) exp(b / L))``: on the lattice ``a_i + b_j`` of the
    tensor rule the exponentials are 2n per step instead of n^2 evaluations of sigma
    (:mod:`rdyn.reduced_dynamics.model_a.compiled_rule`). tanh: ``(E^2 - 1)/(E^2 + 1)``;
    sigmoid: ``E/(E + 1)``; softplus: ``log(E + 1)``; erf, GELU: None. ``P``: the largest
    |power| of E in R (E^P must stay finite where R is used). Checked against sigma at 161
    points of [-40, 40] (relative 1e-12, absolute 1e-300)."""
    expr = Activation(name, formula).expression
    rewritten = expr.rewrite(sp.exp)
    exps = rewritten.atoms(sp.exp)
    rates = []
    for term in exps:
        k = sp.nsimplify(sp.cancel(term.args[0] / x))
        if not (k.is_Rational and k != 0 and sp.expand(term.args[0] - k * x) == 0):
            return None
        rates.append(k)
    if not rates:
        return None
    L = int(sp.ilcm(*[k.q for k in rates])) if len(rates) > 1 else int(rates[0].q)
    form = sp.together(rewritten.xreplace({t: growth ** int(k * L) for t, k in zip(exps, rates)}))
    if form.has(sp.I) or any(f.has(x) for f in form.atoms(sp.Function)) or any(
            p.exp.has(x) for p in form.atoms(sp.Pow)):
        return None
    direct = sp.lambdify(x, expr, modules="mpmath")
    separated = sp.lambdify((x, growth), form, modules="mpmath")
    import mpmath

    with mpmath.workdps(30):
        for k in range(-80, 81):
            t = mpmath.mpf(k) / 2
            want, got = direct(t), separated(t, mpmath.exp(t / L))
            if not abs(got - want) <= 1e-12 * abs(want) + 1e-300:
                return None
    powers = [abs(int(p.exp)) for p in form.atoms(sp.Pow) if p.base == growth and p.exp.is_Integer]
    return form, L, max(powers + [1])


def _np_erf():
    from scipy.special import erf

    return erf


def _printers():
    from sympy.printing.numpy import NumPyPrinter
    from sympy.printing.str import StrPrinter

    class ArbPrinter(StrPrinter):
        def _print_Rational(self, e):
            return f"arb({e.p})/arb({e.q})"

        def _print_Integer(self, e):
            return str(e.p)

        def _print_Half(self, e):
            return "arb(1)/arb(2)"

        def _print_Pi(self, e):
            return "pi"

    class NumpyErfPrinter(NumPyPrinter):
        def _print_erf(self, e):
            return f"erf({self._print(e.args[0])})"

        def _print_erfc(self, e):   # scipy.special.erfc, given as erfc by lambdify_for
            return f"erfc({self._print(e.args[0])})"

        def _print_besselj(self, e):   # scipy.special.jv(n, x), given as besselj
            return f"besselj({self._print(e.args[0])}, {self._print(e.args[1])})"

    return ArbPrinter, NumpyErfPrinter


_ArbPrinter, _NumpyErfPrinter = _printers()


def _arb_module(bits: int) -> dict:
    import flint

    A = flint.arb
    with flint.ctx.workprec(bits):
        pi, euler = A.pi(), A(1).exp()
    return {"arb": A, "erf": lambda v: A(v).erf(), "tanh": lambda v: A(v).tanh(),
            "exp": lambda v: A(v).exp(), "log": lambda v: A(v).log(),
            "sqrt": lambda v: A(v).sqrt(), "pi": pi, "cosh": lambda v: A(v).cosh(),
            "sinh": lambda v: A(v).sinh(), "sech": lambda v: A(v).sech(),
            "sin": lambda v: A(v).sin(), "cos": lambda v: A(v).cos(), "tan": lambda v: A(v).tan(),
            "erfc": lambda v: A(v).erfc(), "besselj": lambda n, v: A(v).bessel_j(A(n)),
            "E": euler}


class BranchPointError(ArithmeticError):
    """A ball enclosure reached a branch point or pole of a closed form (a square root or
    fractional power of a ball not certainly positive, a division by a ball containing 0):
    the enclosure cannot continue."""


def _guarded_printer():
    class GuardedArbPrinter(_ArbPrinter):
        """Every fractional power, negative power and quotient goes through a guard; positive
        integer powers are products (``x**2`` of a ball containing 0 is nan in python-flint,
        issue #426); pi is computed at the precision of the call."""

        def _print_Pi(self, e):
            return "arb.pi()"

        def _print_Pow(self, e, rational=False):
            b, k = e.base, e.exp
            if k.is_Integer and k > 0:
                return "(" + "*".join([self.parenthesize(b, 100)] * int(k)) + ")"
            if k.is_Integer:
                return f"positive_power({self._print(b)}, {int(k)}, 1, False)"
            if k.is_Rational:
                return f"positive_power({self._print(b)}, {k.p}, {k.q}, True)"
            return f"real_power({self._print(b)}, {self._print(k)})"

        def _print_Mul(self, e):
            num, den = sp.fraction(e, exact=True)
            if den != 1:
                return f"quotient({self._print(num)}, {self._print(den)})"
            return super()._print_Mul(e)

    return GuardedArbPrinter


def _guarded_arb_module() -> dict:
    import flint

    A = flint.arb

    def positive_power(b, p, q, fractional):
        b = A(b)
        if fractional and not b > 0:
            raise BranchPointError(f"power {p}/{q} of {b}, not certainly positive")
        if not fractional and not (b > 0 or b < 0):
            raise BranchPointError(f"power {p} of {b}, which contains 0")
        root = b.sqrt() if q == 2 else b if q == 1 else (b.log() / q).exp()
        out = A(1)
        for _ in range(abs(p)):
            out = out * root
        return out if p > 0 else 1 / out

    def quotient(a, b):
        if not (b > 0 or b < 0):
            raise BranchPointError(f"division by {b}, which contains 0")
        return a / b

    def log(v):
        if not A(v) > 0:
            raise BranchPointError(f"log of {v}, not certainly positive")
        return A(v).log()

    def real_power(b, k):
        if not A(b) > 0:
            raise BranchPointError(f"power of {b}, not certainly positive")
        return (A(b).log() * k).exp()

    return {"arb": A, "erf": lambda v: A(v).erf(), "exp": lambda v: A(v).exp(),
            "atan": lambda v: A(v).atan(), "tanh": lambda v: A(v).tanh(), "log": log,
            "positive_power": positive_power, "quotient": quotient, "real_power": real_power}


_GuardedArbPrinter = _guarded_printer()


@lru_cache(maxsize=32)
def _guarded_lambdified(args: tuple, exprs: tuple):
    return sp.lambdify(args, list(exprs), modules=[_guarded_arb_module()],
                       printer=_GuardedArbPrinter, cse=True)


def guarded_arb_lambdify(args, exprs):
    """``exprs`` (one expression or a sequence) as one callable on python-flint ``arb`` balls
    that evaluates at the caller's precision (``flint.ctx.prec``; pi and rationals are
    computed there, so the callable does not depend on when it was built) and raises
    :class:`BranchPointError` where an enclosure reaches a branch point: square roots and
    fractional powers of balls not certainly positive, logs likewise, negative powers and
    quotients of balls containing 0. Common subexpressions are shared (sympy cse). Returns
    a list for a sequence, one ball for one expression."""
    single = isinstance(exprs, sp.Basic)
    f = _guarded_lambdified(tuple(args), (exprs,) if single else tuple(exprs))
    return (lambda *a: f(*a)[0]) if single else f


# --------------------------------------------------------------------------------------------
# Closed-form Gaussian smoothings (erf, GELU)
# --------------------------------------------------------------------------------------------

m, s = sp.symbols("m s", real=True)
_z = sp.Symbol("z", real=True)


def _gaussian_average(integrand: sp.Expr) -> sp.Expr:
    """E[f(Z)] for Z ~ N(0,1), by sympy integration (integrands: Gaussian times polynomial)."""
    density = sp.exp(-_z**2 / 2) / sp.sqrt(2 * sp.pi)
    value = sp.integrate(sp.expand(integrand * density), (_z, -sp.oo, sp.oo), conds="none")
    value = sp.simplify(sp.unpolarify(value).rewrite(sp.erf))
    return value.replace(sp.exp, lambda arg: sp.exp(sp.factor(arg)))


@lru_cache(maxsize=None)
@seeded
def smoothing(name: str) -> tuple[sp.Expr, sp.Expr] | None:
    """(S0, S1) = (E[sigma(m + s Z)], E[sigma'(m + s Z)]) in closed form, or None.

    Derivation: sigma' of erf (2/sqrt(pi) e^{-x^2}) and of GELU (Phi(x) + x phi(x), whose
    derivative 2 phi(x) - x^2 phi(x) is a Gaussian times a polynomial) have Gaussian
    convolutions sympy integrates exactly. S0 follows as the antiderivative in m of S1
    (d/dm E[sigma(m + sZ)] = E[sigma'(m + sZ)]) fixed at m = 0 by oddness (erf: S0(0) = 0) or
    by S0 - m S1 -> known limit (GELU: written as m E[Phi] + s^2 E[phi], checked below).
    """
    sp_pos = sp.Symbol("s", positive=True)
    if name == "erf":
        sigma1 = sp.diff(NAMED["erf"], x)
        S1 = _gaussian_average(sigma1.subs(x, m + sp_pos * _z))
        mu = sp.Symbol("mu", real=True)
        S0 = sp.simplify(sp.unpolarify(sp.integrate(S1.subs(m, mu), (mu, 0, m))))
        assert sp.simplify(sp.diff(S0, m) - S1) == 0 and S0.subs(m, 0) == 0
        return S0.subs(sp_pos, s), S1.subs(sp_pos, s)
    if name == "gelu":
        phi = sp.exp(-x**2 / 2) / sp.sqrt(2 * sp.pi)
        # E[phi(m + sZ)] in closed form; then E[Phi(m + sZ)] by integrating in m from -oo,
        # E[(m + sZ) Phi(m + sZ)] = m E[Phi] + s E[Z Phi(m + sZ)] = m E[Phi] + s^2 E[phi] (Stein)
        Ephi = _gaussian_average(phi.subs(x, m + sp_pos * _z))
        root = sp.sqrt(1 + sp_pos**2)
        # Ephi = phi(m / root) / root: integrate in m: E[Phi(m + sZ)] = Phi(m / root)
        assert sp.simplify(Ephi - phi.subs(x, m / root) / root) == 0
        EPhi = (1 + sp.erf(m / root / sp.sqrt(2))) / 2
        assert sp.simplify(sp.diff(EPhi, m) - Ephi) == 0 and sp.limit(EPhi, m, -sp.oo) == 0
        S0 = m * EPhi + sp_pos**2 * Ephi
        # E[sigma'] = E[Phi] + E[(m+sZ) phi(m+sZ)] = E[Phi] + d/dm-free form: m Ephi + s^2 E[phi']
        Ephi_prime = sp.diff(Ephi, m)  # E[phi'(m + sZ)] = d/dm E[phi(m + sZ)]
        S1 = EPhi + m * Ephi + sp_pos**2 * Ephi_prime
        assert sp.simplify(sp.diff(S0, m) - S1) == 0
        return sp.simplify(S0.subs(sp_pos, s)), sp.simplify(S1.subs(sp_pos, s))
    return None


def smoothing_functions(name: str, backend: str, bits: int = 53):
    """(S0, S1) of :func:`smoothing` lambdified for ``backend`` (numpy, arb, mpmath), or None."""
    return _smoothing_lambdified(name, backend, bits)


@lru_cache(maxsize=16)
def _smoothing_lambdified(name: str, backend: str, bits: int):
    forms = smoothing(name)
    if forms is None:
        return None
    return tuple(lambdify_for((m, s), f, backend, bits) for f in forms)


# --------------------------------------------------------------------------------------------
# erf: every expectation of the collapsed map in closed form
# --------------------------------------------------------------------------------------------

alpha, beta, lam = sp.symbols("alpha beta lambda", nonnegative=True)


@lru_cache(maxsize=None)
@seeded
def erf_primitives() -> dict:
    """Gaussian integrals (Z ~ N(0, 1)) that make erf's collapsed map a closed form:

    ``I1 = E[Z erf(alpha Z) e^{-lambda Z^2}]``, ``I3 = E[Z^3 erf(alpha Z) e^{-lambda Z^2}]``,
    ``G0 = E[e^{-lambda Z^2}]``, ``G2 = E[Z^2 e^{-lambda Z^2}]`` (sympy integrates them), and
    ``J = E[erf(alpha Z) erf(beta Z)]``: sympy leaves ``int_0^alpha dJ/dalpha`` unevaluated
    (``dJ/dalpha = (2/sqrt(pi)) I1(beta, alpha^2)`` by differentiation under the integral), so the
    arcsine-type candidate ``(2/pi) atan(2 alpha beta / sqrt(1 + 2 alpha^2 + 2 beta^2))`` (the
    atan form of ``(2/pi) arcsin(2 alpha beta / sqrt((1+2alpha^2)(1+2beta^2)))``, well
    conditioned near correlation 1) is verified: its alpha-derivative equals dJ/dalpha and it
    vanishes at alpha = 0.
    """
    a, l = sp.Symbol("a", positive=True), sp.Symbol("l", positive=True)
    density = sp.exp(-_z**2 / 2) / sp.sqrt(2 * sp.pi)

    def average(integrand):
        value = sp.integrate(integrand * density, (_z, -sp.oo, sp.oo), conds="none")
        return sp.simplify(value).subs({a: alpha, l: lam})

    I1 = average(_z * sp.erf(a * _z) * sp.exp(-l * _z**2))
    I3 = average(_z**3 * sp.erf(a * _z) * sp.exp(-l * _z**2))
    G0 = average(sp.exp(-l * _z**2))
    G2 = average(_z**2 * sp.exp(-l * _z**2))
    J = 2 / sp.pi * sp.atan(2 * alpha * beta / sp.sqrt(1 + 2 * alpha**2 + 2 * beta**2))
    dJ = 2 / sp.sqrt(sp.pi) * I1.subs({alpha: beta, lam: alpha**2}, simultaneous=True)
    assert sp.simplify(sp.diff(J, alpha) - dJ) == 0 and J.subs(alpha, 0) == 0
    return {"I1": I1, "I3": I3, "G0": G0, "G2": G2, "J": J}


# --------------------------------------------------------------------------------------------
# GELU: every expectation of the collapsed map in closed form
# --------------------------------------------------------------------------------------------

_u, _v, _c = sp.symbols("u v c", positive=True)


@lru_cache(maxsize=None)
@seeded
def _one_erf(k: int) -> sp.Expr:
    """E[Z^k erf(u Z) e^{-c Z^2}] (odd k), by sympy integration."""
    density = sp.exp(-_z**2 / 2) / sp.sqrt(2 * sp.pi)
    value = sp.integrate(_z**k * sp.erf(_u * _z) * sp.exp(-_c * _z**2) * density,
                         (_z, -sp.oo, sp.oo), conds="none")
    return sp.simplify(value)


@lru_cache(maxsize=None)
@seeded
def _two_erf(j: int) -> sp.Expr:
    """E[Z^(2j) erf(u Z) erf(v Z) e^{-c Z^2}]: the rescaling Z -> Z / sqrt(1 + 2c) of
    erf_primitives' J, differentiated j times in -c."""
    w = sp.sqrt(1 + 2 * _c)
    base = erf_primitives()["J"].subs({alpha: _u / w, beta: _v / w}, simultaneous=True) / w
    return sp.simplify((-1) ** j * sp.diff(base, _c, j))


def gaussian_term(term: sp.Expr) -> sp.Expr:
    """E over Z ~ N(0, 1) of one product ``coeff * Z^k * erf(u1 Z) ... * exp(-c Z^2)`` (at most
    two erf factors with arguments linear in Z): a closed form (ValueError otherwise)."""
    coeff, dep = term.as_independent(_z, as_Add=False)
    k, slopes, c = 0, [], sp.Integer(0)
    for f in sp.Mul.make_args(dep):
        if f == 1:
            continue
        base, e = f.as_base_exp()
        if base == _z:
            k += int(e)
        elif isinstance(base, sp.erf) and e.is_Integer and e > 0:
            slopes += [sp.simplify(base.args[0] / _z)] * int(e)
        elif isinstance(f, sp.exp):
            c += -sp.simplify(f.args[0] / _z**2)
        else:
            raise ValueError(f"not a Gaussian-erf monomial: {f}")
    if any(sl.has(_z) for sl in slopes) or c.has(_z):
        raise ValueError(f"not a Gaussian-erf monomial: {term}")
    if not slopes:
        value = 0 if k % 2 else sp.factorial2(k - 1) * (1 + 2 * c) ** (-sp.Rational(k + 1, 2))
    elif len(slopes) == 1:
        value = 0 if k % 2 == 0 else _one_erf(k).subs({_u: slopes[0], _c: c}, simultaneous=True)
    elif len(slopes) == 2:
        value = 0 if k % 2 else _two_erf(k // 2).subs(
            {_u: slopes[0], _v: slopes[1], _c: c}, simultaneous=True)
    else:
        raise ValueError("more than two erf factors")
    return coeff * value


def gaussian_expectation_closed(integrand: sp.Expr) -> sp.Expr:
    """E[integrand(Z)] for a polynomial in Z, erf(u Z) (at most two factors a term) and
    Gaussians exp(-c Z^2): expanded into monomials, each by :func:`gaussian_term`. Every
    result is odd in each erf slope, so it holds for slopes of either sign."""
    expanded = sp.expand(integrand)
    return sp.Add(*[gaussian_term(sp.powsimp(t, combine="exp")) for t in sp.Add.make_args(expanded)])


# symbols of the collapsed state seen from the outer variable Z (model_a.smooth's notation):
# Y2 = s2 Z, E[Y1 | Z] = rho Z, residual sd s_res; r the row norm; W = sqrt(1 + r^2 s_res^2)
state_C1 = sp.Symbol("C1", real=True)
state_r, state_rho, state_sres, state_s2, state_W, state_K = sp.symbols(
    "r rho s_res s2 W K", positive=True)


CLOSED_MOMENTS = ("erf", "gelu")   # activations with every expectation of the map closed


def smoothing_width(name: str) -> sp.Expr:
    """``W^2`` as a function of the inner spread ``s``: the argument of the square root in
    :func:`smoothing`'s S0 (erf: ``1 + 2 s^2``, GELU: ``1 + s^2``), read off the derived form."""
    S0 = smoothing(name)[0]
    bases = {p.base for p in S0.atoms(sp.Pow) if p.exp in (sp.S.Half, -sp.S.Half) and p.base.has(s)}
    assert len(bases) == 1, bases
    return bases.pop()


@lru_cache(maxsize=None)
@seeded
def closed_moments(name: str) -> dict:
    """The collapsed map's m1, m2, dm2/dC1, E[sigma(r Y1) sigma(C1 r Y2)] (cross),
    E[sigma(C1 r Y2)^2] (square) and E[sigma(r Y1)^2] (teacher) in closed form for ``name``
    (erf, gelu), in C1, r, rho, s_res, s2, W, K, with ``W^2 = smoothing_width(name)`` at
    ``s = r s_res``.

    The inner average over Y1 given Z is :func:`smoothing`'s S0 with ``m = r rho Z``,
    ``s = r s_res`` (``W^2`` kept as a symbol so that no sum ends up in a
    denominator), ``E[sigma(r Y1) Y1 | Z] = rho Z S0 + s_res^2 r dS0/dm`` (Stein); every
    remaining integrand is a polynomial times erf factors and Gaussians in Z
    (:func:`gaussian_expectation_closed`)."""
    z, W, r = _z, state_W, state_r
    S0 = smoothing(name)[0]
    width = smoothing_width(name)
    spread = sp.solve(sp.Eq(width, W**2), s**2)[0]          # s^2 in terms of W
    S0 = S0.subs(width, W**2).subs(s**2, spread)
    assert not S0.has(s)
    S1 = sp.diff(S0, m)
    mean = S0.subs(m, r * state_rho * z)
    mean_y1 = state_rho * z * mean + S1.subs(m, r * state_rho * z) * state_sres**2 * r
    sig, d1, d2 = derivatives(NAMED[name])
    arg = state_C1 * r * state_s2 * z
    B, B1, B2 = (f.subs(x, arg) for f in (sig, d1, d2))
    y2, mu = state_s2 * z, state_rho * z
    integrands = {"m2": (mean - B) * B1 * y2 / r, "m1": B1 * (mean_y1 - B * mu) / r,
                  "dm2": y2**2 * ((mean - B) * B2 - B1**2), "cross": B * mean, "square": B * B,
                  "teacher": sig.subs(x, r * z / sp.sqrt(state_K)) ** 2}
    return {key: gaussian_expectation_closed(f) for key, f in integrands.items()}


# --------------------------------------------------------------------------------------------
# Cache of the closed forms (deriving GELU's takes about 8 s of sympy)
# --------------------------------------------------------------------------------------------

CLOSED_FORMS_CACHE = "_activation_catalog.py"


def derive_closed_forms() -> dict:
    """Every closed form the compiled float64 loops use, derived now: {(activation, name): expr}."""
    out = {("erf", k): v for k, v in erf_primitives().items()}
    for name in CLOSED_MOMENTS:
        out.update({(name, k): v for k, v in closed_moments(name).items()})
        out[(name, "width")] = smoothing_width(name)
    return out


def write_closed_forms_cache(path=None) -> None:
    """``python -m rdyn.derivations.activations``: write the srepr of :func:`derive_closed_forms`
    to derivations/_activation_catalog.py (or ``path``; a test re-derives and compares), whole
    or not at all (:mod:`rdyn.derivations.atomic_files`)."""
    from rdyn.derivations.atomic_files import write_text_atomic

    lines = ['"""Generated by `python -m rdyn.derivations.activations`; do not edit."""', "",
             "CLOSED_FORMS = {"]
    for (activation, name), expr in derive_closed_forms().items():
        lines.append(f"    ({activation!r}, {name!r}): {sp.srepr(expr)!r},")
    lines.append("}")
    write_text_atomic(Path(__file__).with_name(CLOSED_FORMS_CACHE) if path is None else path,
                      "\n".join(lines) + "\n")


@lru_cache(maxsize=None)
def closed_forms(activation: str) -> dict:
    """The cached closed forms of ``activation`` (erf: the primitives and the moments; gelu:
    the moments of :func:`closed_moments`; both: ``width``, :func:`smoothing_width`)."""
    from rdyn.derivations._activation_catalog import CLOSED_FORMS

    # srepr text of the package's own generated module (never user or file input; the
    # security section of docs/input_rules.md): sympy constructors only, no builtins
    namespace = {name: getattr(sp, name) for name in dir(sp) if not name.startswith("_")}
    namespace["__builtins__"] = {}
    return {name: eval(text, namespace) for (act, name), text in CLOSED_FORMS.items()
            if act == activation}


if __name__ == "__main__":
    write_closed_forms_cache()
