"""Certified iteration of Model A's collapsed map for tanh, softplus and sigmoid: each
step's moments enclosed by a tensor trapezoidal rule on python-flint ``arb`` balls plus a proved
bound of its remainder for integrands analytic in a strip.

The map and the events are those of :mod:`rdyn.reduced_dynamics.certified.smooth` (erf, GELU,
whose moments are closed forms); only the moments differ. With ``Z1, Z2`` independent N(0, 1),
``Y2 = s2 Z1``, ``Y1 = rho Z1 + s Z2`` (``rho = p/s2``, ``s = s_res``; model_a.smooth),
``b = C1 r s2``, the teacher's argument ``w_T = r (rho Z1 + s Z2)`` and the student's
``w_S = b Z1``:

    r m2 = E[(sigma(w_T) - sigma(w_S)) sigma'(w_S) s2 Z1],
    r m1 = E[(sigma(w_T) - sigma(w_S)) sigma'(w_S) (rho Z1 + s Z2)],
    dm2/dC1 = E[s2^2 Z1^2 ((sigma(w_T) - sigma(w_S)) sigma''(w_S) - sigma'(w_S)^2)].

Each is ``E[F(Z1, Z2)]`` = the integral of ``g = F phi(z1) phi(z2)`` over the plane. The rule:
nodes ``x_k = k h``, |k| <= n, weights ``h phi(x_k)``, one (h, n) for Z1 and one for Z2 (all
in arb).

Remainder (proved). (1) Strip bounds of the activation: for ``|Im w| <= v_max``
(:data:`STRIP`) ``|sigma(w)| <= alpha0 + beta0 |w|``, ``|sigma'(w)| <= alpha1``,
``|sigma''(w)| <= alpha2``:

* sigmoid, v_max = 1 (< pi/2): ``1 + e^{-w}`` has real part ``1 + e^{-u} cos v >= 1``, so
  ``|sigma| <= 1``; ``sigma' = sigma(w) sigma(-w)``: ``|sigma'| <= 1``;
  ``sigma'' = sigma' (1 - 2 sigma)``: ``|sigma''| <= 3``;
* tanh, v_max = 3/4 (< pi/4): ``tanh w = 2 sigmoid(2w) - 1`` with ``|Im 2w| < pi/2``:
  ``|tanh| <= 3``, ``|tanh'| = 4 |sigmoid'(2w)| <= 4``, ``|tanh''| = 8 |sigmoid''(2w)| <= 24``;
* softplus ``log(1 + e^w)``, v_max = 1: ``Re(1 + e^w) >= 1``, so the principal log is analytic
  and ``|log(1 + e^w)| <= log(1 + e^u) + pi/2 <= |w| + log 2 + pi/2``; ``sigma' = sigmoid``,
  ``sigma'' = sigmoid'``: 1 and 1.

(2) So, with ``|Im z1| <= a1``, ``|Im z2| <= a2``, ``r rho a1, |b| a1, r s a2 <= v_max``,
``|F| <= P(|z1|, |z2|)``, a polynomial with non-negative coefficients (:func:`_bounds`:
``|sigma(w_T) - sigma(w_S)| <= 2 alpha0 + beta0 (r rho |z1| + r s |z2| + |b| |z1|)``, times
``alpha1 s2 |z1|``, ``alpha1 (rho |z1| + s |z2|)``, ``s2^2 |z1|^2 (.. alpha2 + alpha1^2)``), and
``|phi(x + iy)| = phi(x) e^{y^2/2}``, ``|x + iy| <= |x| + |y|``.

(3) The trapezoidal rule on the line (Trefethen and Weideman, SIAM Review 56 (2014),
Theorem 5.1): for g analytic in ``|Im x| < a`` with ``int |g(x + iy)| dx <= M`` (|y| < a),
``|h sum_k g(kh) - int g| <= 2 M / (e^{2 pi a/h} - 1)``. The tensor rule's error
``I - Q = (I1 - Q1) I2 + Q1 (I2 - Q2)`` is then at most
``c1 E[P(|X1| + a1, |X2|)] + c2 h1 sum_k phi(x_k) E[P(|x_k|, |X2| + a2)]`` with
``c_i = 2 e^{a_i^2/2} / (e^{2 pi a_i/h_i} - 1)`` and X ~ N(0, 1) (absolute moments ``E|X|^j``:
1, sqrt(2/pi), 1, 2 sqrt(2/pi)). Truncating to |k|, |l| <= n (``L = n h``) omits at most
``T1 A2 + A1 T2`` with ``T = 2 int_L^inf x^j phi`` (the monomials ``x^j phi(x)`` decrease for
``x >= sqrt(j)``, and ``L >= 2``) and ``A`` the kept sum plus T. All these numbers are
computed in arb; the moment's enclosure is the rule's ball sum widened by the bound.

h and n are chosen per step (floats, from the balls' upper bounds) so that the bound is about
the run's moment tolerance; whatever they are, the enclosure is rigorous. The run itself is
:func:`rdyn.reduced_dynamics.certified.smooth.certified_smooth_run`'s loop (mean-value form in
C1 with the enclosure of dm2/dC1 over the C1 ball; C2, C3 plain ball updates) at a fixed
working precision: the moments carry a proved absolute error of about the tolerance each step
(a smaller one costs more nodes: the n^2 lattice of arb evaluations is the run's cost, about
``digits^3``). By default (``dps=None``, the CLI's ``--certify`` on a float64 run) the
tolerance is :data:`MOMENT_TOLERANCE` at :data:`PREC` bits, and the final radii are about
1e-15 relative; with ``dps`` (the library's ``certified_smooth_run`` default 30, or ``--dps N
--certify``) it is ``10^-dps`` (at most :data:`STRIP_DPS_MAX` digits) at ``dps log2 10 + 64``
bits (:func:`strip_precision`), and the radii are near ``10^-dps``. Either way t1 and T* are
certified wherever the test quantity is not within that distance of 0.

Formulas (``--activation-expr``): :func:`formula_strip` derives the strip and the bounds from
the parsed sympy tree (rules in its docstring): each bound is a polynomial in ``|w|`` with
non-negative coefficients, valid on the whole strip, and every function the formula may
contain is shown analytic there by the rule that bounds it; a formula with a function that
may be singular or branched in the strip (sqrt, log, abs, Max, Min, atan, asinh, a quotient by
a non-constant, a non-integer power, tan, sinh, cosh, exp of a non-quadratic argument) is
refused with the reason. The remainder bound below takes those polynomials in place of the
constants of item (1).
"""
from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from functools import lru_cache

from rdyn.reduced_dynamics.certified.certificate import QuadratureTooLarge

# activation -> (v_max, alpha0, beta0, alpha1, alpha2): module docstring, item (1)
STRIP = {
    "sigmoid": ("1", "1", "0", "1", "3"),
    "tanh": ("0.75", "3", "0", "4", "24"),
    "softplus": ("1", "2.2639", "1", "1", "1"),   # log 2 + pi/2 = 2.26383... <= 2.2639
}
MOMENT_TOLERANCE = 1e-15
PREC = 128
A_MAX = 4.0
STRIP_DPS_MAX = 40   # the most digits a strip run aims at (--dps above: this; cost ~ digits^3)
# the most lattice points (2 n1 + 1)(2 n2 + 1) of one step's rule: a state so large that its
# strip is thinner (C1 of a diverging run: 3e5) stops the certified pass (QuadratureTooLarge)
# instead of building millions of arb nodes; the runs above need 2e3 (1e-15) to 5e4 (40 digits)
MAX_LATTICE = 250_000


class NotCertifiable(ValueError):
    """A formula whose analyticity in a strip, or whose growth there, is not established (the
    message says which part of the formula and why)."""


@dataclass(frozen=True)
class StripBounds:
    """``|Im w| <= v_max`` (a decimal string) and, for k = 0, 1, 2, ``|sigma^(k)(w)| <=
    sum_j polys[k][j] |w|^j`` there (coefficients: decimal strings of upper bounds)."""

    v_max: str
    polys: tuple


def strip_bounds(activation) -> StripBounds:
    """The strip and bounds of a named activation (:data:`STRIP`) or of a formula
    (:func:`formula_strip`; NotCertifiable with the reason)."""
    if activation.name in STRIP:
        v, a0, b0, a1, a2 = STRIP[activation.name]
        return StripBounds(v, ((a0, b0), (a1,), (a2,)))
    if activation.name == "expr":
        return formula_strip(activation.formula)
    raise NotCertifiable(f"no certified quadrature for activation {activation.label}")


def strip_certifiable(activation) -> bool:
    """Whether the strip quadrature certifies ``activation`` (named: tanh, softplus, sigmoid; a
    formula: when :func:`formula_strip` derives its bounds)."""
    try:
        strip_bounds(activation)
    except NotCertifiable:
        return False
    return True


def why_not_certifiable(activation) -> str | None:
    """The reason a formula is not certifiable (None if it is, or not a formula)."""
    if activation.name != "expr":
        return None
    try:
        formula_strip(activation.formula)
    except NotCertifiable as exc:
        return str(exc)
    return None


# --------------------------------------------------------------------------------------------
# Strip bounds of a formula, from its sympy tree
# --------------------------------------------------------------------------------------------

_BRANCHED = {"sqrt": "a branch point at 0 and a cut", "log": "a branch point at 0 and a cut",
             "Abs": "a kink where its argument is 0 (not analytic)",
             "Max": "a kink where its arguments meet (not analytic)",
             "Min": "a kink where its arguments meet (not analytic)",
             "atan": "branch points at +-i", "asinh": "branch points at +-i",
             "tan": "poles on the real line", "sinh": "exponential growth",
             "cosh": "exponential growth"}


@lru_cache(maxsize=32)
def formula_strip(formula: str) -> StripBounds:
    """Strip bounds of the formula ``sigma`` and its sympy derivatives, derived node by node.
    On ``S_v = {|Im w| <= v}`` each node f gets a polynomial ``B_f(t)`` (non-negative
    coefficients) with ``|f(w)| <= B_f(|w|)``, and is analytic on S_v:

    * a real constant c: ``|c|`` (an arb ball containing it); x: ``t``;
    * sums and products: sums and products of the bounds; ``f^n`` (integer n >= 0): ``B_f^n``;
      a negative or non-integer power only of a constant;
    * ``tanh(a x + b)`` (a, b real) with ``|a| v <= 3/4``: 3 (tanh w = 2 sigmoid(2w) - 1 with
      ``|Im 2w| <= 3/2 < pi/2``, so ``Re(1 + e^{-2w}) >= 1`` and ``|sigmoid(2w)| <= 1``; no pole:
      the poles are at ``Im w = pi/2``);
    * ``erf(a x + b)``: ``1 + 2 y e^{y^2} / sqrt(pi)`` with ``y = |a| v`` (erf(u + iy) = erf(u) +
      2i/sqrt(pi) int_0^y e^{-(u + is)^2} ds, ``|e^{-(u+is)^2}| = e^{s^2 - u^2} <= e^{s^2}``);
      ``erfc = 1 - erf``: 2 + the same;
    * ``sin, cos(a x + b)``: ``cosh(|a| v)``; ``besselj(n, a x + b)`` (integer n):
      ``e^{|a| v}`` (|J_n(z)| <= e^{|Im z|} from Bessel's integral);
    * ``exp(alpha x^2 + beta x + gamma)`` with alpha < 0 (or alpha = beta = 0): ``exp(gamma -
      beta^2/(4 alpha) + |alpha| v^2)``, the largest real part on S_v;
    * every other function, or an argument not affine in x: NotCertifiable (the reason).

    ``v = min(1, 3/(4 max |a|))`` over the tanh arguments. Entire functions and tanh on S_v
    are analytic, so the bounds also prove the analyticity that the remainder theorem needs."""
    import sympy as sp

    from rdyn.derivations.activations import derivatives, parse_expression, x

    expr = parse_expression(formula)
    forms = derivatives(expr)
    slopes = [sp.Integer(0)]
    for form in forms:
        for node in sp.preorder_traversal(form):
            if isinstance(node, sp.tanh):
                slopes.append(_affine(node.args[0], x, formula)[0])
    steepest = max(abs(float(a)) for a in slopes)
    v = "1" if steepest <= 0.75 else repr(0.75 / steepest)
    while float(v) * steepest > 0.75:    # the decimal rounded up: step it down
        v = repr(float(v) * (1 - 1e-15))
    import flint

    with flint.ctx.workprec(PREC):
        polys = tuple(tuple(_upper_decimal(c) for c in _node_bound(form, x, flint.arb(v), formula))
                      for form in forms)
    return StripBounds(v, polys)


def _upper_decimal(ball) -> str:
    """A decimal string >= every point of ``ball`` (30 digits, rounded up)."""
    import flint

    upper = flint.arb(ball.upper())
    text = upper.str(30, radius=False)
    while flint.arb(text) < upper:
        upper = upper * (1 + flint.arb(10) ** -29)
        text = upper.str(30, radius=False)
    return text


def _affine(arg, x, formula):
    """(a, b) with ``arg = a x + b``, a and b real constants (NotCertifiable otherwise)."""
    import sympy as sp

    poly = sp.Poly(arg, x) if arg.is_polynomial(x) else None
    if poly is None or poly.degree() > 1 or not all(c.is_real for c in poly.all_coeffs()):
        raise NotCertifiable(f"the formula's argument {arg} is not affine in x, so its growth in "
                             "a strip |Im x| <= v is not bounded")
    coeffs = poly.all_coeffs()
    return (coeffs[0], coeffs[1]) if poly.degree() == 1 else (sp.Integer(0), coeffs[0])


def _poly_add(p, q):
    from flint import arb

    n = max(len(p), len(q))
    return [(p[i] if i < len(p) else arb(0)) + (q[i] if i < len(q) else arb(0)) for i in range(n)]


def _poly_mul(p, q):
    from flint import arb

    out = [arb(0)] * (len(p) + len(q) - 1)
    for i, a in enumerate(p):
        for j, b in enumerate(q):
            out[i + j] = out[i + j] + a * b
    return out


def _node_bound(node, x, v, formula):
    """B_node as a list of arb coefficients (rules: :func:`formula_strip`)."""
    import sympy as sp
    from flint import arb

    from rdyn.reduced_dynamics.certified.exact_inputs import exact_ball

    def refuse(why):
        raise NotCertifiable(f"the formula contains {node}, {why}; "
                             "certified strip bounds need a formula analytic and bounded on a "
                             "strip |Im x| <= v (rdyn teacher --help, docs/any_activation.md)")

    if not node.has(x):
        if not node.is_real:
            refuse("not a real constant")
        return [abs(exact_ball(node))]
    if node == x:
        return [arb(0), arb(1)]
    if isinstance(node, sp.Add):
        out = [arb(0)]
        for term in node.args:
            out = _poly_add(out, _node_bound(term, x, v, formula))
        return out
    if isinstance(node, sp.Mul):
        out = [arb(1)]
        for factor in node.args:
            out = _poly_mul(out, _node_bound(factor, x, v, formula))
        return out
    if isinstance(node, sp.Pow):
        base, n = node.args
        if not (n.is_Integer and n >= 0):
            refuse("a power that is negative or not an integer (a pole or branch point may lie "
                   "in the strip)")
        out, base_bound = [arb(1)], _node_bound(base, x, v, formula)
        for _ in range(int(n)):
            out = _poly_mul(out, base_bound)
        return out
    name = type(node).__name__
    if name in _BRANCHED:
        refuse(f"which has {_BRANCHED[name]}: a singularity or branch cut may lie in the strip")
    if isinstance(node, sp.tanh):
        a, _ = _affine(node.args[0], x, formula)
        assert abs(float(a)) * float(v.upper()) <= 0.75
        return [arb(3)]
    if isinstance(node, (sp.erf, sp.erfc)):
        a, _ = _affine(node.args[0], x, formula)
        y = abs(exact_ball(a)) * v
        bound = 1 + 2 * y * (y * y).exp() / arb.pi().sqrt()
        return [bound + (1 if isinstance(node, sp.erfc) else 0)]
    if isinstance(node, (sp.sin, sp.cos)):
        a, _ = _affine(node.args[0], x, formula)
        return [(abs(exact_ball(a)) * v).cosh()]
    if isinstance(node, sp.besselj):
        order, arg = node.args
        if not order.is_Integer:
            refuse("a Bessel function of non-integer order (a branch point at 0)")
        a, _ = _affine(arg, x, formula)
        return [(abs(exact_ball(a)) * v).exp()]
    if isinstance(node, sp.exp):
        arg = sp.expand(node.args[0])
        poly = sp.Poly(arg, x) if arg.is_polynomial(x) else None
        if poly is None or poly.degree() > 2 or not all(c.is_real for c in poly.all_coeffs()):
            refuse("whose argument is not a real quadratic in x")
        alpha, beta, gamma = ([sp.Integer(0)] * (3 - len(poly.all_coeffs())) + poly.all_coeffs())
        if alpha == 0 and beta == 0:
            return [abs(exact_ball(sp.exp(gamma)))]
        if not alpha < 0:
            refuse("which grows exponentially along the real line")
        A, B, G = exact_ball(alpha), exact_ball(beta), exact_ball(gamma)
        return [(G - B * B / (4 * A) + abs(A) * v * v).exp()]
    refuse("a function without a derived strip bound")


# --------------------------------------------------------------------------------------------
# Polynomials with non-negative coefficients in (|z1|, |z2|): dict (i, j) -> arb
# --------------------------------------------------------------------------------------------

def _padd(*ps):
    out = {}
    for p in ps:
        for k, v in p.items():
            out[k] = out.get(k, 0) + v
    return out


def _pmul(p, q):
    out = {}
    for (i, j), v in p.items():
        for (k, l), w in q.items():
            out[(i + k, j + l)] = out.get((i + k, j + l), 0) + v * w
    return out


def _pscale(p, c):
    return {k: v * c for k, v in p.items()}


def _shift(p, a1, a2):
    """P(u1 + a1, u2 + a2) expanded (binomially)."""
    out = {}
    for (i, j), v in p.items():
        for k in range(i + 1):
            for l in range(j + 1):
                c = v * math.comb(i, k) * math.comb(j, l) * a1 ** (i - k) * a2 ** (j - l)
                out[(k, l)] = out.get((k, l), 0) + c
    return out


def _abs_moment(j):
    """E|X|^j, X ~ N(0, 1): 1, sqrt(2/pi), then (j - 1) E|X|^(j-2)."""
    from flint import arb

    m = [arb(1), (2 / arb.pi()).sqrt()]
    while len(m) <= j:
        m.append((len(m) - 1) * m[-2])
    return m[j]


def _upper_tail(j, L):
    """int_L^inf x^j phi(x) dx, arb: Q(L), phi(L), then L^(j-1) phi(L) + (j - 1) T_(j-2)
    (integration by parts)."""
    from flint import arb

    phi = (-(L * L) / 2).exp() / (2 * arb.pi()).sqrt()
    T = [(L / arb(2).sqrt()).erfc() / 2, phi]
    while len(T) <= j:
        k = len(T)
        T.append(L ** (k - 1) * phi + (k - 1) * T[-2])
    return T[j]


def _compose(bound, linear):
    """``sum_j bound[j] L^j`` for the polynomial ``linear`` in (|z1|, |z2|)."""
    out, power = {}, {(0, 0): 1}
    for c in bound:
        out = _padd(out, _pscale(power, c))
        power = _pmul(power, linear)
    return out


def _bounds(strip: StripBounds, r, rho, s, s2, b_abs):
    """|F| <= P for (m2 * r, m1 * r, dm2): three polynomials in (|z1|, |z2|) (module
    docstring, item 2, with ``|sigma^(k)(w)| <= B_k(|w|)``, ``|w_T| <= r rho |z1| + r s |z2|``,
    ``|w_S| <= |b| |z1|``)."""
    from flint import arb

    B0, B1, B2 = ([arb(c) for c in poly] for poly in strip.polys)
    teacher, student = {(1, 0): r * rho, (0, 1): r * s}, {(1, 0): b_abs}
    diff = _padd(_compose(B0, teacher), _compose(B0, student))
    d1, d2 = _compose(B1, student), _compose(B2, student)
    p_m2 = _pmul(_pmul(diff, d1), {(1, 0): s2})
    p_m1 = _pmul(_pmul(diff, d1), {(1, 0): rho, (0, 1): s})
    p_dm2 = _pmul({(2, 0): s2 * s2}, _padd(_pmul(diff, d2), _pmul(d1, d1)))
    return p_m2, p_m1, p_dm2


# --------------------------------------------------------------------------------------------
# The rule and its remainder
# --------------------------------------------------------------------------------------------

@lru_cache(maxsize=32)
def _nodes(q: int, n: int, prec: int):
    """(x_k, h phi(x_k)) for |k| <= n, h = 1/q, as arb balls at ``prec`` bits."""
    import flint
    from flint import arb

    with flint.ctx.workprec(prec):
        h = arb(1) / q
        norm = h / (2 * arb.pi()).sqrt()
        xs = [arb(k) / q for k in range(-n, n + 1)]
        ws = [norm * (-(x * x) / 2).exp() for x in xs]
    return tuple(xs), tuple(ws)


def _upper(ball) -> float:
    flint = sys.modules.get("flint")   # an arb exists only once flint is loaded
    arb_ball = flint is not None and isinstance(ball, flint.arb)
    return float(abs(ball).upper()) if arb_ball else abs(float(ball))


def _choose_rule(strip: StripBounds, r, rho, s, b_abs, tolerance: float = MOMENT_TOLERANCE
                 ) -> tuple[tuple[int, int], tuple[int, int], float, float]:
    """((q1, n1), (q2, n2), a1, a2): the outer (Z1) and inner (Z2) rules, h = 1/q and n nodes
    a side, and the strip half-widths, from float upper bounds (any choice is rigorous; this
    one aims at ``tolerance``)."""
    v = float(strip.v_max)
    a1 = min(A_MAX, v / max(_upper(r * rho), _upper(b_abs), 1e-300))
    a2 = min(A_MAX, v / max(_upper(r * s), 1e-300))
    L = math.sqrt(2 * math.log(1 / tolerance)) + 0.5

    def rule(a):
        need = math.log(1 / tolerance) + a * a / 2 + 3
        q = max(1, math.ceil(need / (2 * math.pi * a)))
        return q, math.ceil(L * q)

    return rule(a1), rule(a2), a1, a2


def _remainder(p, a1, a2, outer, inner):
    """The proved bound on |E[F] - rule| for |F| <= p on the strips (module docstring);
    ``outer``, ``inner``: (q, n, nodes, weights) of the Z1 and Z2 rules."""
    from flint import arb

    A1, A2 = arb(a1), arb(a2)

    def c(a, q):
        return 2 * (a * a / 2).exp() / ((2 * arb.pi() * a * q).exp() - 1)

    def kept(rule, i):
        return sum((w * abs(x) ** i for x, w in zip(rule[2], rule[3])), arb(0))

    def tail(rule, i):
        return 2 * _upper_tail(i, arb(rule[1]) / rule[0])

    # (I1 - Q1) I2: E[P(|X1| + a1, |X2|)]
    e1 = sum((v * _abs_moment(i) * _abs_moment(j)
              for (i, j), v in _shift(p, A1, arb(0)).items()), arb(0))
    # Q1 (I2 - Q2): h1 sum_k phi(x_k) E[P(|x_k|, |X2| + a2)] (kept nodes + tail)
    e2 = sum((v * (kept(outer, i) + tail(outer, i)) * _abs_moment(j)
              for (i, j), v in _shift(p, arb(0), A2).items()), arb(0))
    # truncation: T1 A2 + A1 T2 over the monomials of p (real arguments)
    trunc = arb(0)
    for (i, j), v in p.items():
        t_i, t_j = tail(outer, i), tail(inner, j)
        trunc += v * (t_i * (kept(inner, j) + t_j) + (kept(outer, i) + t_i) * t_j)
    return c(A1, outer[0]) * e1 + c(A2, inner[0]) * e2 + trunc


class StripMoments:
    """The enclosures of one step: ``level(geo)`` computes the teacher's inner sums (n^2
    sigma evaluations, depends on e only), then ``moments(C1)``, ``m2(C1)``, ``dm2(C1)``."""

    def __init__(self, config, tolerance: float = MOMENT_TOLERANCE, prec: int = PREC):
        """``tolerance``: the absolute error each moment's rule aims at; ``prec``: the bits
        of the nodes and of sigma's evaluations."""
        from rdyn.derivations.activations import numeric_functions

        self.strip = strip_bounds(config.activation)
        self.tolerance, self.prec = tolerance, prec
        self.sigma, self.dsigma, self.d2sigma = numeric_functions(config.activation, "arb", prec)

    def level(self, r, rho, s, s2, C1_abs_upper):
        from flint import arb

        b_abs = arb(C1_abs_upper) * r * s2
        (q1, n1), (q2, n2), a1, a2 = _choose_rule(self.strip, r, rho, s, b_abs, self.tolerance)
        if (2 * n1 + 1) * (2 * n2 + 1) > MAX_LATTICE:
            raise QuadratureTooLarge(f"the strip rule would need {2 * n1 + 1} x {2 * n2 + 1} "
                                     f"points (more than {MAX_LATTICE}; |C1| <= {C1_abs_upper:.3g})")
        outer = (q1, n1, *_nodes(q1, n1, self.prec))
        inner = (q2, n2, *_nodes(q2, n2, self.prec))
        xs, ws = outer[2], outer[3]
        sigma = self.sigma
        T, U = [], []
        for x in xs:
            base = r * rho * x
            mean = arb(0)
            acc = arb(0)
            for z, w in zip(inner[2], inner[3]):
                val = sigma(base + r * s * z) * w
                mean += val
                acc += val * z
            T.append(mean)
            U.append(rho * x * mean + s * acc)
        bounds = _bounds(self.strip, r, rho, s, s2, b_abs)
        errors = [_remainder(p, a1, a2, outer, inner) for p in bounds]
        self._state = (r, rho, s, s2, xs, ws, T, U, errors, C1_abs_upper)

    def for_run(self, b: dict):
        """Bind the run's balls (``b``: :func:`rdyn.reduced_dynamics.certified.exact_inputs.
        smooth_run_balls`) for :meth:`at`; returns self."""
        self._run = b
        return self

    def at(self, C1, e, p, s2, s_res):
        """The step's level (the interface of ``certified.smooth_loop._iterate``): the strip must
        hold C1 and C1 / fraction (the t1 test); returns self."""
        r, fraction = self._run["r"], self._run["fraction"]
        reach = _upper(C1) / float(fraction.lower()) * 1.0001 + 1e-12
        self.level(r, p / s2, s_res, s2, reach)
        return self

    def _check(self, C1):
        if _upper(C1) > self._state[-1]:
            raise ValueError("C1 outside the level's strip bound")

    def moments(self, C1):
        """(m1, m2) enclosures."""
        from flint import arb

        self._check(C1)
        r, rho, s, s2, xs, ws, T, U, errors, _ = self._state
        b = C1 * r * s2
        m1 = m2 = arb(0)
        for x, w, t, u in zip(xs, ws, T, U):
            B, B1 = self.sigma(b * x), self.dsigma(b * x)
            m2 += w * (t - B) * B1 * s2 * x
            m1 += w * B1 * (u - B * rho * x)
        m2 = (m2 + arb(0, errors[0].upper())) / r
        m1 = (m1 + arb(0, errors[1].upper())) / r
        return m1, m2

    def m2(self, C1):
        return self.moments(C1)[1]

    def dm2(self, C1):
        from flint import arb

        self._check(C1)
        r, rho, s, s2, xs, ws, T, U, errors, _ = self._state
        b = C1 * r * s2
        out = arb(0)
        for x, w, t in zip(xs, ws, T):
            B, B1, B2 = self.sigma(b * x), self.dsigma(b * x), self.d2sigma(b * x)
            out += w * s2 * s2 * x * x * ((t - B) * B2 - B1 * B1)
        return out + arb(0, errors[2].upper())


def strip_precision(dps: int | None) -> tuple[float, int]:
    """(moment tolerance, working bits) of a strip run: 1e-15 at 128 bits by default; with
    ``dps``, ``10^-d`` at ``ceil(d log2 10) + 64`` bits, ``d = min(dps, STRIP_DPS_MAX)``."""
    if dps is None:
        return MOMENT_TOLERANCE, PREC
    digits = min(int(dps), STRIP_DPS_MAX)
    return 10.0 ** -digits, math.ceil(digits * math.log2(10)) + 64


def certified_strip_run(config, eta: float, steps: int | None = None, thresholds=None,
                        tstar_level=None, min_default_steps: int = 1000, dps: int | None = None):
    """Certified enclosures of the float64 run of ``config`` (tanh, softplus, sigmoid, a
    formula with derived strip bounds) at step size ``eta`` (its decimal form), as
    :func:`rdyn.reduced_dynamics.certified.smooth.certified_smooth_run` reports them (a
    :class:`~rdyn.reduced_dynamics.certified.certificate.CertifiedResult`, backend "arb"):
    that module's loop with the moments of :class:`StripMoments`, aiming at relative radii
    near ``10^-dps`` (:func:`strip_precision`; default about 1e-15)."""
    from rdyn.reduced_dynamics.certified.smooth_loop import _iterate
    from rdyn.reduced_dynamics.model_a.dynamics import Thresholds

    strip_bounds(config.activation)   # NotCertifiable (a ValueError) with the reason
    tolerance, prec = strip_precision(dps)
    return _iterate(config, eta, steps, thresholds or Thresholds(), tstar_level,
                    min_default_steps, prec, None, StripMoments(config, tolerance, prec).for_run)
