"""The late phase of Model A in a chart that holds every D at once (seed 000, Appendix D; docs/proofs.md,
"Every D: the late phase"), derived with sympy from :func:`.symbolic.reduced` and printed as python-flint
``arb`` functions.

Chart (logits/D; ``N = D - K``, ``y = sqrt(K/N)``, so ``y -> 0`` is ``D -> oo`` and ``0 < y <= 1`` is
``D >= 2K``)::

    v = N e/K           (the late phase e <= K/N is 0 <= v <= 1; p = 1/(K (1 + v)))
    omega = N w         (w = (C1/C1* - 1)/e^3, the lag of :mod:`.eta_box`)
    mu = eta D          (the step size scaled with D; Lemma D.5's condition eta <= K/D is mu <= K)

so ``e = v y^2``, ``eta = mu y^2/(K (1 + y^2))``, ``C1 = C1*(e) (1 + omega (y^2/K) e^3)``. ``y`` rather than
``1/sqrt(N)`` keeps the coefficients of order 1 at every K (``K/N = y^2``). In it the map's functions are regular
at ``y = 0`` (sympy forms, checked below and by :mod:`.all_d` on every box):

* ``x_hat = Delta x/(eta g2 e^2)`` in ``(v, y, omega, B)`` (``atan(z)`` written ``z - z^3 B``, ``z = v y``, as
  in :mod:`.symbolic`), identically 1 at ``y = 0`` (:func:`LateChart.facts`);
* ``slack = (1 - x_hat)/(v^a y^b)``, the largest powers dividing the numerator identically;
* ``star = C1*`` and ``star_v = dC1*/dv`` in ``(v, y)`` (atan kept: no 0/0);
* ``lam = (1 - alpha)/mu``, so ``1 - alpha = mu lam``;
* ``u_coefficient``: ``Delta x/scale = mu y^8 v^2 u_coefficient x_hat`` (an identity, checked).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from typing import Callable

import sympy as sp
from flint import arb

from rdyn.derivations import codegen
from rdyn.derivations.generated import run_generated
from rdyn.derivations.model_a.tstar_law import box_nonnegative
from rdyn.reduced_dynamics.runs import kernel_cache
from rdyn.verification.proofs import symbolic as sy
from rdyn.verification.proofs.kernels import source_fingerprint

v, y, omega, mu = sp.symbols("v y omega mu", real=True)
VARIABLES = frozenset({v, y, omega, sy.B})
PARAMETERS = "sK, M, kappa"
MU_MAX_OVER_K = 1      # the chart's step sizes: mu = eta D in (0, K] (Lemma D.5: 1 - eta D/K >= 0)


@dataclass(frozen=True)
class LateChart:
    """sympy forms of the module docstring, one activation (logits/D), parameters ``sK = sqrt(K)``, ``M``,
    ``kappa`` symbolic."""

    activation: str
    g2: sp.Expr              # eta g2/eta, a constant
    x_hat: sp.Expr           # Delta x/(eta g2 e^2) (v, y, omega, B)
    slack: sp.Expr           # (1 - x_hat)/(v^a y^b)
    slack_powers: tuple      # (a, b)
    star: sp.Expr            # C1* (v, y)
    star_v: sp.Expr          # dC1*/dv
    lam: sp.Expr             # (1 - alpha)/mu (v, y)
    u_coefficient: sp.Expr   # Delta x/scale = mu y^8 v^2 u_coefficient x_hat

    def facts(self) -> dict:
        """What :mod:`.all_d` rests on, each decided by sympy (exact; an identity or a box sign test):

        * ``x_hat_is_1_at_y_0``: ``x_hat(v, 0, omega, B) = 1`` identically;
        * ``u_identity``: ``Delta x/scale = mu y^8 v^2 u_coefficient x_hat``, that is ``(eta e^2/scale) g2 =
          mu y^8 v^2 u_coefficient`` in the chart (``x_hat`` is :func:`.symbolic.reduced`'s exact quotient
          ``Delta x/e^2`` over ``eta g2``);
        * ``alpha_nonnegative``: ``1 - K lam >= 0`` for ``0 <= v <= 1``, ``0 <= y <= 1`` (D >= 2K), so
          ``alpha = 1 - mu lam >= 0`` for every ``mu <= K`` (:func:`.symbolic` ``box_nonnegative``, exact);
        * ``lam_free_of_mu``: ``lam`` has no ``mu``."""
        return _facts(self.activation)


def _chart_subs() -> dict:
    return {sy.sN: sy.sK / y, sy.e: v * y**2, sy.w: omega * y**2 / sy.sK**2}


def _eta_in_chart() -> sp.Expr:
    return mu * y**2 / (sy.sK**2 * (1 + y**2))


def _largest_power(poly: sp.Poly, index: int) -> int:
    return min(m[index] for m in poly.monoms())


@lru_cache(maxsize=None)
def late_chart(activation: str) -> LateChart:
    """The forms of the module docstring (seconds of sympy; cached on disk as source by :func:`source`)."""
    r = sy.reduced(activation, "D")
    subs = _chart_subs()
    g2 = sp.simplify(r.eta_g2 / sy.eta)
    if sy.eta in g2.free_symbols:
        raise ArithmeticError("eta g2 is not eta times a constant")
    num, den = r.dx_over_e2
    n, d = sp.fraction(sp.cancel(sp.together((num / den / r.eta_g2).subs(subs))))
    x_hat = n / d
    slack_num = sp.Poly(sp.expand(d - n), v, y)
    a, b = _largest_power(slack_num, 0), _largest_power(slack_num, 1)
    slack = sp.expand(slack_num.as_expr() / (v**a * y**b)) / d
    star = sp.simplify(r.star.subs(subs))
    lam = sp.factor(sp.simplify(((1 - r.alpha) / sy.eta).subs(subs) * _eta_in_chart() / mu))
    u_coefficient = g2 / (sy.sK**4 * (1 + y**2)**2)
    return LateChart(activation, g2, x_hat, slack, (a, b), star, sp.diff(star, v), lam, u_coefficient)


@lru_cache(maxsize=None)
def _facts(activation: str) -> dict:
    c = late_chart(activation)
    r = sy.reduced(activation, "D")
    n, d = sp.fraction(c.x_hat)
    at_zero = sp.expand(d.subs(y, 0)) != 0 and sy._is_zero(n.subs(y, 0) - d.subs(y, 0))
    # x_hat is (Delta x/e^2)/(eta g2) of :func:`.symbolic.reduced` (an exact quotient there) in the chart, so
    # Delta x/scale = (eta e^2/scale) g2 x_hat: the chart's u is that prefactor
    prefactor = (sy.eta * sy.e**2 / r.scale_expr).subs(sy.eta, _eta_in_chart()).subs(_chart_subs())
    u_identity = sy._is_zero(prefactor * c.g2 - mu * y**8 * v**2 * c.u_coefficient)
    floor = sp.cancel(sp.together(1 - MU_MAX_OVER_K * sy.sK**2 * c.lam))   # y in [0, 1]: D - K >= K
    try:
        alpha_ok = not (floor.free_symbols - {v, y, sy.kappa}) and \
            box_nonnegative(floor, {v: (0, 1), y: (0, 1), **({sy.kappa: (0, 1)} if sy.kappa in floor.free_symbols
                                                              else {})})
    except (sp.PolynomialError, sp.GeneratorsNeeded):
        alpha_ok = False
    return {"x_hat_is_1_at_y_0": bool(at_zero), "u_identity": bool(u_identity), "alpha_nonnegative": bool(alpha_ok),
            "lam_free_of_mu": mu not in c.lam.free_symbols, "slack_powers": list(c.slack_powers)}


@dataclass(frozen=True)
class ChartKernels:
    """The forms as ``arb`` functions (``c = prepare(sK, M, kappa)``)."""

    prepare: Callable
    x_hat: Callable      # (v, y, omega, B, c)
    slack: Callable      # (v, y, omega, B, c)
    star: Callable       # (v, y, c)
    star_v: Callable     # (v, y, c)
    lam: Callable        # (v, y, c)
    u_coefficient: Callable   # (y, c)
    g2: Callable         # (c)
    facts: dict


def _source(activation: str) -> str:
    c = late_chart(activation)
    pool = codegen.ConstantPool(VARIABLES)
    zero = 0 * v

    def function(header, expr):
        lines, (printed,) = codegen.emit_assignments([pool.hoist(expr)])
        return "\n".join([header, *lines, f"    return {printed}"]) + "\n"

    functions = [function("def x_hat(v, y, omega, B, c):", c.x_hat),
                 function("def slack(v, y, omega, B, c):", c.slack),
                 function("def star(v, y, c):", c.star),
                 function("def star_v(v, y, c):", c.star_v),
                 function("def lam(v, y, c):", c.lam + zero),
                 function("def u_coefficient(y, c):", c.u_coefficient + zero),
                 function("def g2(c):", c.g2 + zero),
                 f"def facts():\n    return {c.facts()!r}\n"]
    return pool.source("prepare", PARAMETERS) + "\n" + "\n".join(functions)


@lru_cache(maxsize=None)
def source(activation: str) -> str:
    """The generated source (cached in the project's kernel source cache)."""
    fingerprint = source_fingerprint(("symbolic.py", "late_chart.py"))
    return kernel_cache.cached_source("proofs_model_a_late_chart", (activation, fingerprint),
                                      lambda: _source(activation))


@lru_cache(maxsize=None)
def chart_kernels(activation: str) -> ChartKernels:
    namespace = codegen.arb_backend().namespace()
    run_generated(source(activation), f"proofs late chart [{activation}/arb]", namespace)

    def balled(raw):
        return lambda *args: (lambda value: value if isinstance(value, arb) else arb(value))(raw(*args))

    names = ("prepare", "x_hat", "slack", "star", "star_v", "lam", "u_coefficient", "g2")
    functions = {n: (namespace[n] if n == "prepare" else balled(namespace[n])) for n in names}
    return ChartKernels(**functions, facts=namespace["facts"]())
