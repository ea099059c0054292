"""Certified iteration of Model A's collapsed map for tanh, softplus and sigmoid (issue 31): each
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
:data:`MOMENT_TOLERANCE`; whatever they are, the enclosure is rigorous. The run itself is
:func:`rdyn.reduced_dynamics.certified.smooth.certified_smooth_run`'s loop (mean-value form in
C1 with the enclosure of dm2/dC1 over the C1 ball; C2, C3 plain ball updates) at a fixed
working precision (:data:`PREC` bits): the moments carry a proved absolute error of about
:data:`MOMENT_TOLERANCE` each step (a smaller one costs more nodes: the n^2 lattice of arb
evaluations is the run's cost), so the final radii are about 1e-13 relative, not the
``10^-dps`` of the closed forms; enough to certify t1 and T* wherever the test quantity is
not within that distance of 0. Formulas (``--activation-expr``) are refused: their strip bounds are not derived.
"""
from __future__ import annotations

import math
from functools import lru_cache

# activation -> (v_max, alpha0, beta0, alpha1, alpha2): module docstring, item (1)
STRIP = {
    "sigmoid": ("1", "1", "0", "1", "3"),
    "tanh": ("0.75", "3", "0", "4", "24"),
    "softplus": ("1", "2.2639", "1", "1", "1"),   # log 2 + pi/2 = 2.26383... <= 2.2639
}
MOMENT_TOLERANCE = 1e-15
PREC = 128
A_MAX = 4.0


def strip_certifiable(name: str) -> bool:
    return name in STRIP


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
    from flint import arb

    root = (2 / arb.pi()).sqrt()
    return [arb(1), root, arb(1), 2 * root, arb(3), 8 * root][j]


def _upper_tail(j, L):
    """int_L^inf x^j phi(x) dx (j <= 4), arb."""
    from flint import arb

    phi = (-(L * L) / 2).exp() / (2 * arb.pi()).sqrt()
    Q = (L / arb(2).sqrt()).erfc() / 2
    return [Q, phi, L * phi + Q, (L * L + 2) * phi, (L ** 3 + 3 * L) * phi + 3 * Q][j]


def _bounds(name, r, rho, s, s2, b_abs):
    """|F| <= P for (m2 * r, m1 * r, dm2): three polynomials in (|z1|, |z2|) (module
    docstring, item 2)."""
    from flint import arb

    _, a0, b0, a1, a2 = (arb(t) for t in STRIP[name])
    diff = {(0, 0): 2 * a0, (1, 0): b0 * (r * rho + b_abs), (0, 1): b0 * r * s}
    p_m2 = _pscale(_pmul(diff, {(1, 0): s2}), a1)
    p_m1 = _pscale(_pmul(diff, {(1, 0): rho, (0, 1): s}), a1)
    p_dm2 = _pmul({(2, 0): s2 * s2}, _padd(_pscale(diff, a2), {(0, 0): a1 * a1}))
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
    return float(abs(ball).upper()) if hasattr(ball, "upper") else abs(float(ball))


def _choose_rule(name, r, rho, s, b_abs) -> tuple[tuple[int, int], tuple[int, int], float, float]:
    """((q1, n1), (q2, n2), a1, a2): the outer (Z1) and inner (Z2) rules, h = 1/q and n nodes
    a side, and the strip half-widths, from float upper bounds (any choice is rigorous; this
    one aims at MOMENT_TOLERANCE)."""
    v = float(STRIP[name][0])
    a1 = min(A_MAX, v / max(_upper(r * rho), _upper(b_abs), 1e-300))
    a2 = min(A_MAX, v / max(_upper(r * s), 1e-300))
    L = math.sqrt(2 * math.log(1 / MOMENT_TOLERANCE)) + 0.5

    def rule(a):
        need = math.log(1 / MOMENT_TOLERANCE) + a * a / 2 + 3
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

    def __init__(self, config):
        from rdyn.derivations.activations import numeric_functions

        self.name = config.activation.name
        self.sigma, self.dsigma, self.d2sigma = numeric_functions(config.activation, "arb", PREC)

    def level(self, r, rho, s, s2, C1_abs_upper):
        from flint import arb

        b_abs = arb(C1_abs_upper) * r * s2
        (q1, n1), (q2, n2), a1, a2 = _choose_rule(self.name, r, rho, s, b_abs)
        outer = (q1, n1, *_nodes(q1, n1, PREC))
        inner = (q2, n2, *_nodes(q2, n2, PREC))
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
        bounds = _bounds(self.name, r, rho, s, s2, b_abs)
        errors = [_remainder(p, a1, a2, outer, inner) for p in bounds]
        self._state = (r, rho, s, s2, xs, ws, T, U, errors, C1_abs_upper)

    def for_run(self, b: dict):
        """Bind the run's balls (``b``: :func:`rdyn.reduced_dynamics.certified.exact_inputs.
        smooth_run_balls`) for :meth:`at`; returns self."""
        self._run = b
        return self

    def at(self, C1, e, p, s2, s_res):
        """The step's level (the interface of ``certified.smooth._iterate``): the strip must
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


def certified_strip_run(config, eta: float, steps: int | None = None, thresholds=None,
                        tstar_level=None, min_default_steps: int = 1000):
    """Certified enclosures of the float64 run of ``config`` (tanh, softplus, sigmoid) at step
    size ``eta`` (its decimal form), as :func:`rdyn.reduced_dynamics.certified.smooth.
    certified_smooth_run` reports them (a :class:`~rdyn.reduced_dynamics.certified.certificate.
    CertifiedResult`, backend "arb"): that module's loop at :data:`PREC` bits with the moments
    of :class:`StripMoments`."""
    from rdyn.reduced_dynamics.certified.smooth import _iterate
    from rdyn.reduced_dynamics.model_a.dynamics import Thresholds

    if not strip_certifiable(config.activation.name):
        raise ValueError(f"no certified quadrature for activation {config.activation.label}")
    return _iterate(config, eta, steps, thresholds or Thresholds(), tstar_level,
                    min_default_steps, PREC, None, StripMoments(config).for_run)
