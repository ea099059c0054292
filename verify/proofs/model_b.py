"""Computer-assisted proofs for Model B (seed 003; docs/proofs.md, "Model B").

Three results, each decided rigorously with python-flint ``arb`` balls:

* **Theorem B.3** (Appendix B.2.3, no-LN layer): at ``eta = eta_max`` (as printed, and as
  corrected: ``S0^2`` for the printed ``1`` in the first term; root cause ``B3_eta_max_S0``) and
  from ``alpha_0 = 0``, ``beta_0^2 = S0`` for *every* ``S0`` in a stated interval, for every step
  ``t``: (i) the loss decreases, ``L(gamma_{t+1}) < L(gamma_t)`` while ``gamma_t != gamma*``;
  (ii) Part 1's descent inequality ``L(gamma_{t+1}) - L(gamma_t) <= -(1/2) eta d S_t F_t^2``;
  (iii) ``gamma_t`` increases monotonically to ``gamma*`` (no overshoot, ``gamma_t <= gamma*``).
  Method: in the scaled coordinates ``g = gamma/gamma*``, ``sigma = S/gamma*``,
  ``delta = D/gamma*`` (``D = beta^2 - alpha^2``) and ``k = 2 eta kappa2 gamma*/d`` the recursions
  of B.2.3 read ``g' - 1 = f (g - 1)`` with ``f = 1 - k sigma - k^2 g (1 - g)``,
  ``delta' = (1 - k^2 (g-1)^2) delta``, ``sigma^2 = delta^2 + 4 g^2`` (the invariant
  ``S^2 - D^2 = 4 gamma^2``). Step 0 is exact (``g = 0``, ``sigma = S0/gamma*``); every later
  state lies in ``R = {|g - 1| <= |1 - k sigma0|, 0 <= delta <= (1 - k^2) sigma0}`` (or its part
  ``g <= 1``), which interval branch and bound over ``(S0, g, delta)`` shows invariant, with each
  statement's normalised slack certainly positive on every box. A statement not carried on some
  ``S0`` box is searched for a counterexample by the certified iteration from points of that box.
* **Theorem B.3 for every eta up to eta_max** (``--eta-fraction LO,HI``, :func:`prove_b3_theta`): the
  same statements at every ``eta = theta eta_max(S0)``, ``theta`` in ``[LO, HI]``, by branch and bound
  over (S0, theta) boxes with the region enclosed per box (``k = theta k_max``) and the loss slack
  normalised by ``k sigma``; a refuted printed statement also reports the theta below which it is
  certified and the lowest theta of its counterexamples.
* **Theorem 4.2 (gamma*)**: ``gamma*`` is the unique fixed point of the collapsed GD map
  ``g(gamma) = gamma - eta S F(gamma) + eta^2 gamma F(gamma)^2`` in a box ``X``, for every ``S0``
  of the interval and every ``S`` the trajectory can reach, by the Krawczyk test
  ``K(X) = m - C h(m) + (1 - C h'(X))(X - m) inside int X`` (``h = gamma - g``), and attracting:
  ``q = sup |g'(X)| < 1`` (the linear rate of Theorem 4.2 (2)).
* **Theorem 4.6 / G.1 (looped contraction)**: the per-layer factor ``R = (1 + gamma l_{r+1})/
  (1 + gamma l_1)`` of the looped layer (LN layer: ``gamma``; looped model: ``rho``; no-LN:
  ``gamma*``) enclosed over a stated range and certified ``< 1``; in the eigenbasis the loop map
  acts on ``u_i = c_i/c_1`` as ``diag((1 + gamma l_i)/(1 + gamma l_1))``, so ``R`` is the norm of
  its derivative on every cone ``{tan psi <= tau}`` (each invariant). With ``steps``, ``gamma_T``
  (``rho_T``) comes from a certified GD run (:func:`certified_training`, two-level spectra).

Constants: ``kappa1 = tr S/d``, ``kappa2 = E||S a||^2`` are exact rationals
(:func:`rdyn.reduced_dynamics.model_b.constants.kappa_exact`); for the normalized target
``kappa3 = E||S a||`` (Task 2 spectra) is enclosed by :func:`kappa3_enclosure` (a rigorous
``acb.integral`` with bounded head and tail).
"""
from __future__ import annotations

import heapq
import math
import time
from dataclasses import dataclass
from fractions import Fraction

PREC_BITS = 200
STATEMENTS_B3 = (
    ("loss", "the loss decreases at every step: L(gamma_{t+1}) < L(gamma_t) while gamma_t != gamma*"),
    ("descent_lemma", "Part 1: L(gamma_{t+1}) - L(gamma_t) <= -(1/2) eta d S_t F(gamma_t)^2 at every step"),
    ("gamma", "gamma_t increases monotonically to gamma* (gamma_t <= gamma_{t+1} <= gamma*)"),
)
FORMS = ("printed", "corrected")
ETA_MAX_TEXT = {
    "printed": "eta_max = min{d/(8 kappa2 sqrt(1 + 16 gamma*^2)), d/(2 kappa2 S0), d/(2 kappa2 sqrt(2 S0 gamma*))}",
    "corrected": "eta_max = min{d/(8 kappa2 sqrt(S0^2 + 16 gamma*^2)), d/(2 kappa2 S0), d/(2 kappa2 sqrt(2 S0 gamma*))}",
}
MIN_S0_WIDTH = 2.0 ** -24       # relative width below which an S0 box is not split further
REGION_DEPTH = 10               # bisections of a (g, delta) region box
SEARCH_STEPS = 4000             # steps of a counterexample search


# --------------------------------------------------------------------------- instance, constants
@dataclass(frozen=True)
class BInstance:
    """One Model B instance (seed 003): the data law and the target fix kappa1, kappa2, gamma*."""

    model: str = "noln"
    target: str = "unnormalized"
    data: str = "sphere"
    d: int = 16
    n: int = 32
    spectrum: tuple | None = None
    L: int | None = None
    s0: tuple = (0.25, 16.0)         # the interval of S0 = beta_0^2 (alpha_0 = 0)
    gamma_range: tuple | None = None  # ln / looped: the range of gamma (rho) for the contraction factor
    steps: int | None = None         # ln / looped: certify this many GD steps (two-level spectra) instead
    eta: float = 0.1                 # ln / looped with steps: the GD step size
    eta_fraction: tuple = (1.0, 1.0)  # noln: Theorem B.3 at eta = theta eta_max(S0) for theta in [LO, HI]

    def to_dict(self) -> dict:
        out = {"model": self.model, "data": self.data, "d": self.d, "n": self.n,
               "spectrum": None if self.spectrum is None else list(self.spectrum)}
        if self.model == "noln":
            out.update(target=self.target, S0=[self.s0[0], self.s0[1]])
            if tuple(self.eta_fraction) != (1.0, 1.0):
                out["eta_fraction"] = [self.eta_fraction[0], self.eta_fraction[1]]
        elif self.steps is None:
            out.update(gamma=[self.gamma_range[0], self.gamma_range[1]])
        else:
            out.update(steps=self.steps, eta=self.eta, alpha0=0.0, beta0=1.0)
        if self.model == "looped":
            out["L"] = self.L
        return out


def qball(x: Fraction):
    """The exact rational x as a ball (radius from the working precision only)."""
    from flint import arb

    return arb(x.numerator) / x.denominator


def kappa3_enclosure(spectrum):
    """A ball containing ``kappa3 = E||S a||`` for ``S = diag(m_i)`` and ``a`` uniform on S^{d-1}.

    ``E||S a|| = E sqrt(g^T S^2 g) / E||g||`` for ``g ~ N(0, I_d)`` (radius and direction of ``g``
    are independent), ``E||g|| = sqrt(2) Gamma((d+1)/2)/Gamma(d/2)``, and for ``Q = g^T S^2 g``,
    ``E sqrt(Q) = (1/(2 sqrt(pi))) int_0^oo (1 - E e^{-sQ}) s^{-3/2} ds`` with
    ``E e^{-sQ} = prod_i (1 + 2 s m_i^2)^{-1/2}``; with ``s = u^2``, ``int_0^oo 2 (1 - P(u))/u^2 du``.
    Head ``[0, eps]``: ``0 <= 1 - P <= u^2 sum m_i^2``; tail ``[U, oo)``: the integrand lies in
    ``[2 (1 - P(U))/u^2, 2/u^2]``; the middle by ``acb.integral`` (rigorous error bound)."""
    from collections import Counter

    from flint import acb, arb

    d = len(spectrum)
    mus = [(arb(m * m), c) for m, c in sorted(Counter(spectrum).items())]
    musum = sum((mu * c for mu, c in mus), arb(0))

    def P(u):
        out = acb(1) if isinstance(u, acb) else arb(1)
        for mu, c in mus:
            z = 1 + 2 * u * u * mu
            out *= (z.rsqrt(analytic=True) if isinstance(u, acb) else z.rsqrt()) ** c
        return out

    eps, U = arb(2) ** -120, arb(2) ** 120
    middle = acb.integral(lambda u, _analytic: 2 * (1 - P(u)) / (u * u), eps, U,
                          rel_tol=arb(2) ** -(PREC_BITS - 40)).real
    head = arb(0, float((2 * eps * musum).upper()) * 2)
    tail_lo, tail_hi = 2 * (1 - P(U)) / U, 2 / U
    tail = (tail_lo + tail_hi) / 2 + arb(0, float((tail_hi - tail_lo).upper()))
    e_sqrt_q = (middle + head + tail) / (2 * arb.pi().sqrt())
    e_norm = arb(2).sqrt() * (arb(d + 1) / 2).gamma() / (arb(d) / 2).gamma()
    return e_sqrt_q / e_norm


@dataclass(frozen=True)
class NolnConstants:
    d: int
    kappa1: Fraction
    kappa2: Fraction
    gamma_star: object        # a ball (exact rational for the unnormalized target)
    gamma_star_exact: Fraction | None
    kappa3: object | None


def noln_constants(inst: BInstance) -> NolnConstants:
    """kappa1, kappa2 (exact), gamma* = 1 - kappa1/kappa2 (unnormalized) or (kappa3 - kappa1)/kappa2
    (normalized; Theorem 4.2 as derived by rdyn.derivations.model_b.noln_collapsed)."""
    from rdyn.reduced_dynamics.model_b.constants import kappa_exact

    k1, k2 = kappa_exact(inst.data, inst.d, inst.n, inst.spectrum)
    if inst.target == "unnormalized":
        gs = 1 - k1 / k2
        return NolnConstants(inst.d, k1, k2, qball(gs), gs, None)
    k3 = kappa3_enclosure(inst.spectrum)
    return NolnConstants(inst.d, k1, k2, (k3 - qball(k1)) / qball(k2), None, k3)


# --------------------------------------------------------------------------- eta_max, one step
def _bmin(balls):
    """A ball containing min(x_1, ..., x_n) for every choice x_i in ball i, and the index of the
    term that is certainly the smallest (None if that is not certain)."""
    from rdyn.verification.proofs.balls import ball, lower, upper

    for i, b in enumerate(balls):
        if all(i == j or bool(b < o) for j, o in enumerate(balls)):
            return b, i
    return ball(min(lower(b) for b in balls), min(upper(b) for b in balls)), None


def k_terms(form: str, S0, gs, kappa2, d):
    """The three terms of eta_max (B.2.3) in units of ``k = 2 eta kappa2 gamma*/d``:
    ``gamma*/(4 sqrt(c + 16 gamma*^2))`` with ``c = S0^2`` (corrected) or ``1`` (printed),
    ``gamma*/S0``, ``gamma*/sqrt(2 S0 gamma*)``. (The eta-terms are these times d/(2 kappa2 gamma*);
    tests/test_prove_model_b.py checks them against rdyn.derivations.model_b.eta_max_derived.)"""
    c = S0 * S0 if form == "corrected" else 1
    return [gs / (4 * (c + 16 * gs * gs).sqrt()), gs / S0, gs / (2 * S0 * gs).sqrt()]


def eta_of_k(k, gs, kappa2, d):
    return k * d / (2 * kappa2 * gs)


# --------------------------------------------------------------------------- Theorem B.3
@dataclass
class _Tally:
    boxes: int = 0
    s0_boxes: int = 0


class Iv:
    """A closed interval [lo, hi] of floats with outward rounding (every +, -, *, / is correctly
    rounded in IEEE double, then widened by one ulp): it contains every real result."""

    __slots__ = ("lo", "hi")

    def __init__(self, lo: float, hi: float | None = None):
        self.lo, self.hi = lo, lo if hi is None else hi

    @staticmethod
    def _out(lo: float, hi: float) -> "Iv":
        return Iv(math.nextafter(lo, -math.inf), math.nextafter(hi, math.inf))

    def __add__(self, o):
        o = o if isinstance(o, Iv) else Iv(float(o))
        return Iv._out(self.lo + o.lo, self.hi + o.hi)

    __radd__ = __add__

    def __neg__(self):
        return Iv(-self.hi, -self.lo)

    def __sub__(self, o):
        return self + (-(o if isinstance(o, Iv) else Iv(float(o))))

    def __rsub__(self, o):
        return Iv(float(o)) - self

    def __mul__(self, o):
        o = o if isinstance(o, Iv) else Iv(float(o))
        c = (self.lo * o.lo, self.lo * o.hi, self.hi * o.lo, self.hi * o.hi)
        return Iv._out(min(c), max(c))

    __rmul__ = __mul__

    def __pow__(self, n: int):
        assert n == 2 and self.lo >= 0
        return self * self

    def __truediv__(self, o):
        assert o.lo > 0, "divisor must be positive"
        c = (self.lo / o.lo, self.lo / o.hi, self.hi / o.lo, self.hi / o.hi)
        return Iv._out(min(c), max(c))


def _g_one_minus_g(a: float, b: float) -> Iv:
    """The range of g (1 - g) over [a, b] (concave, largest at g = 1/2)."""
    qa, qb = Iv(a) * (1 - Iv(a)), Iv(b) * (1 - Iv(b))
    hi = 0.25 if a <= 0.5 <= b else max(qa.hi, qb.hi)
    return Iv(min(qa.lo, qb.lo), hi)


def interval_slacks(k: Iv, sigma: Iv, a: float, b: float, loss_per_k_sigma: bool = False, ks: Iv | None = None):
    """The normalised slacks of the three statements at the states (g, sigma) of a box, with
    step factor ``f = 1 - u``, ``u = k sigma + k^2 g (1 - g)`` (``g' - 1 = f (g - 1)``):
    loss ``1 - f^2 = u (2 - u)`` (> 0: L decreases; monotone in u on [0, 1]), descent lemma
    ``(1 - k sigma - f^2)/(k sigma) = (1 - k sigma) + (k g (1-g)/sigma)(2 (1 - k sigma) - eps)``,
    ``eps = k^2 g (1 - g)`` (>= 0; written so that no two large terms cancel near sigma = 0),
    gamma ``f`` (>= 0 with g <= 1: no overshoot). k > 0, sigma > 0, g in [a, b]. With
    ``loss_per_k_sigma`` (``--eta-fraction``: k = theta k_max can be small) the loss slack is
    normalised as Part 1's, ``(1 - f^2)/(k sigma) = (1 + k g (1 - g)/sigma)(2 - u)``, which tends to 2
    (not 0) as k -> 0. ``ks``: an enclosure of k sigma (default k.lo sigma.lo .. k.hi sigma.hi).
    Returns (f, {name: slack}, 1 - k^2 (g - 1)^2)."""
    q = _g_one_minus_g(a, b)
    if ks is None:
        ks = Iv._out(k.lo * sigma.lo, k.hi * sigma.hi)
    eps = k * k * q
    u = ks + eps
    f = 1 - u
    if loss_per_k_sigma:
        loss = (1 + k * q / sigma) * (2 - u)
    elif 0 <= u.lo and u.hi <= 1:
        loss = Iv((Iv(u.lo) * (2 - Iv(u.lo))).lo, (Iv(u.hi) * (2 - Iv(u.hi))).hi)
    else:
        loss = u * (2 - u)
    lemma = (1 - ks) + (k * q / sigma) * (2 * (1 - ks) - eps)
    gm1 = Iv(a) - 1.0
    gm1.hi = (Iv(b) - 1.0).hi
    sq = Iv(0.0, (Iv(max(abs(gm1.lo), abs(gm1.hi))) ** 2).hi) if gm1.lo < 0 < gm1.hi else gm1 * gm1
    out = {"loss": loss, "descent_lemma": lemma, "gamma": f}
    if loss_per_k_sigma:
        out["u"] = u     # 1 - f, without the cancellation of 1 - (1 - u) when u is tiny
    return f, out, 1 - k * k * sq


def _region_ok(k, sig0_hi: float, g_lo: float, g_hi: float, conds, tally: _Tally, max_boxes: int,
               loss_per_k_sigma: bool = False, x0=None, sigma0=None):
    """Branch and bound over (g, delta) in [g_lo, g_hi] x [0, sig0_hi] for the fixed parameter
    ball ``k`` (over the S0 box it came from), in outward-rounded interval arithmetic
    (:class:`Iv`). ``conds``: names whose slack must be certainly positive ('loss'), non-negative
    ('descent_lemma', 'gamma') or the invariance conditions ('inv_loss': |f| <= 1, 'inv_mono':
    0 <= f <= 1; both with 1 - k^2 (g-1)^2 >= 0). Returns ({cond: True/False(undecided)},
    {cond: smallest lower bound of the slack}).

    With ``x0`` = k sigma0 and ``sigma0`` (balls; ``--eta-fraction``) the second coordinate is
    ``delta/sigma0`` in [0, sig0_hi] and ``k sigma = x0 sqrt((delta/sigma0)^2 + 4 g^2/sigma0^2)``: k and
    sigma0 stay correlated (k sigma0 = theta k_max sigma0 is enclosed tightly while k and sigma0 alone
    vary by the relative width of the S0 box)."""
    from rdyn.verification.proofs.balls import lower, upper

    kk = Iv(lower(k), upper(k))
    if x0 is not None:
        X, S0s = Iv(lower(x0), upper(x0)), Iv(lower(sigma0), upper(sigma0))
    if not (kk.lo > 0 and math.isfinite(kk.hi)):     # a wide S0 box: k not enclosed away from 0
        return {c: False for c in conds}, {c: None for c in conds}
    ok = {c: True for c in conds}
    margin = {c: None for c in conds}
    stack = [(g_lo, g_hi, 0.0, sig0_hi, 0)]
    while stack:
        a, b, p, q, depth = stack.pop()
        tally.boxes += 1
        # sigma = sqrt(delta^2 + 4 g^2) increases in delta and in g >= 0: its range from the corners
        s_lo = (Iv(p) * Iv(p) + 4 * Iv(a) * Iv(a)).lo
        s_hi = (Iv(q) * Iv(q) + 4 * Iv(b) * Iv(b)).hi
        if x0 is None:
            sigma = Iv(math.nextafter(math.sqrt(max(s_lo, 0.0)), -math.inf), math.nextafter(math.sqrt(s_hi), math.inf))
            f, s, dshrink = interval_slacks(kk, sigma, a, b, loss_per_k_sigma)
        else:   # sigma/sigma0 = sqrt(dhat^2 + 4 g^2/sigma0^2), increasing in dhat, g >= 0 and 1/sigma0
            s_lo = (Iv(p) * Iv(p) + 4 * (Iv(a) / Iv(S0s.hi)) * (Iv(a) / Iv(S0s.hi))).lo
            s_hi = (Iv(q) * Iv(q) + 4 * (Iv(b) / Iv(S0s.lo)) * (Iv(b) / Iv(S0s.lo))).hi
            shat = Iv(math.nextafter(math.sqrt(max(s_lo, 0.0)), -math.inf), math.nextafter(math.sqrt(s_hi), math.inf))
            ks = Iv._out(X.lo * shat.lo, X.hi * shat.hi)
            sigma = Iv._out(S0s.lo * shat.lo, S0s.hi * shat.hi)
            if not sigma.lo > 0:     # underflow (theta ~ 1e-160): nothing is decided on this box
                for c in conds:
                    ok[c] = False
                break
            f, s, dshrink = interval_slacks(kk, sigma, a, b, loss_per_k_sigma, ks=ks)
        pending = []
        for c in conds:
            if not ok[c]:
                continue
            one_minus_f = s["u"] if "u" in s else 1 - f
            if c == "inv_loss":
                lo = min(one_minus_f.lo, (1 + f).lo, dshrink.lo)
                good = lo >= 0
            elif c == "inv_mono":
                lo = min(f.lo, one_minus_f.lo, dshrink.lo)
                good = lo >= 0
            else:
                lo = s[c].lo
                good = lo > 0 if c == "loss" else lo >= 0
            if good:
                margin[c] = lo if margin[c] is None else min(margin[c], lo)
            else:
                pending.append(c)
        if pending:
            if depth >= REGION_DEPTH or tally.boxes >= max_boxes:
                for c in pending:
                    ok[c] = False
                continue
            if (b - a) >= (q - p) / 4 or depth % 2 == 0:
                m = (a + b) / 2
                stack += [(a, m, p, q, depth + 1), (m, b, p, q, depth + 1)]
            else:
                m = (p + q) / 2
                stack += [(a, b, p, m, depth + 1), (a, b, m, q, depth + 1)]
    return ok, margin


def _low(x) -> float:
    """A float <= every point of x; 0.0 for an exact zero (an equality that holds exactly)."""
    from rdyn.verification.proofs.balls import lower

    return 0.0 if x.is_exact() and x == 0 else lower(x)


def _fold_box(res: dict, mg: dict, margin: dict, failing: dict, box: tuple) -> list:
    """Fold one decided box into the running margins; record ``box`` under each statement it does not
    carry. Returns those statements."""
    failed = []
    for n in res:
        if res[n]:
            if mg[n] is not None:
                margin[n] = mg[n] if margin[n] is None else min(margin[n], mg[n])
        else:
            failing[n].append(box)
            failed.append(n)
    return failed


def _merge_region(result: dict, margins: dict, ok: dict, mg: dict, names) -> None:
    """Fold the region's verdicts into step 0's: a statement holds when it held at step 0 and on the
    region, its margin the smaller of the two."""
    for name in names:
        result[name] = result[name] and (True if ok[name] else None)
        if ok[name] and result[name]:
            margins[name] = min(margins[name], mg[name])


def _s0_box_decide(form, lo: float, hi: float, cst: NolnConstants, tally: _Tally, max_boxes: int):
    """Decide the three statements of B.3 for every S0 in [lo, hi]: ({name: True/None}, margins,
    region description)."""
    from rdyn.verification.proofs.balls import ball, lower, upper

    gs, k2, d = cst.gamma_star, qball(cst.kappa2), cst.d
    S0 = ball(lo, hi)
    k, which = _bmin(k_terms(form, S0, gs, k2, d))
    sigma0 = S0 / gs
    # the middle term binding makes k sigma0 = 1 exactly (the first step lands on gamma*)
    x0 = k * sigma0 if which != 1 else None
    from flint import arb

    exact_landing = which == 1
    if exact_landing:
        x0 = arb(1)
    f0 = 1 - x0
    # step 0 at g = 0: f = 1 - k sigma0
    step0 = {"loss": x0 * (1 + f0), "descent_lemma": f0, "gamma": f0}   # interval_slacks at g = 0
    result, margins = {}, {}
    for name, val in step0.items():
        good = bool(val > 0) if name == "loss" else bool(val >= 0)
        result[name] = True if good else None
        margins[name] = _low(val) if good else None
    if exact_landing:
        return result, margins, {"first_step": "lands on gamma* exactly (eta = d/(2 kappa2 S0) binds)"}
    # |g_1 - 1| = |1 - x0| <= rho0, rounded outward (1 - a in floating point may round down), and the
    # region's ends 1 -+ rho0 rounded outward too
    rho0 = math.nextafter(max(abs(1 - lower(x0)), abs(1 - upper(x0))), math.inf)
    if rho0 >= 1:
        return {n: None for n in result}, margins, None
    # delta_1 = (1 - k^2) sigma0 exactly (g_0 = 0), and delta never increases after
    sig_hi = upper(sigma0 * (1 - k * k))
    region = None
    if result["gamma"]:
        g_lo = math.nextafter(1 - rho0, -math.inf)
        ok, mg = _region_ok(k, sig_hi, g_lo, 1.0, ("inv_mono", "loss", "descent_lemma", "gamma"), tally,
                            max_boxes)
        if ok["inv_mono"]:
            region = {"g": [g_lo, 1.0], "delta": [0.0, sig_hi]}
            _merge_region(result, margins, ok, mg, ("loss", "descent_lemma", "gamma"))
            return result, margins, region
    result["gamma"] = None
    g_lo, g_hi = math.nextafter(1 - rho0, -math.inf), math.nextafter(1 + rho0, math.inf)
    ok, mg = _region_ok(k, sig_hi, g_lo, g_hi, ("inv_loss", "loss", "descent_lemma"), tally, max_boxes)
    if not ok["inv_loss"]:
        return {n: None for n in result}, margins, None
    region = {"g": [g_lo, g_hi], "delta": [0.0, sig_hi]}
    _merge_region(result, margins, ok, mg, ("loss", "descent_lemma"))
    return result, margins, region


def _pos_mul(a, b):
    """A ball containing a b for positive balls a, b, from the products of the endpoints (the
    midpoint-radius product of two wide balls, e.g. theta in [1e-9, 1e-8], can contain 0)."""
    from flint import arb

    from rdyn.verification.proofs.balls import ball, lower, upper

    if not (lower(a) > 0 and lower(b) > 0):
        return a * b
    return ball(lower(arb(lower(a)) * arb(lower(b))), upper(arb(upper(a)) * arb(upper(b))))


def _theta_box_decide(form, lo: float, hi: float, t_lo: float, t_hi: float, cst: NolnConstants, tally: _Tally,
                      max_boxes: int):
    """Decide the three statements of B.3 for every S0 in [lo, hi] and every eta = theta eta_max(S0)
    with theta in [t_lo, t_hi] (``--eta-fraction``; docs/proofs.md, Model B): k = theta k_max(S0) is
    enclosed over the (S0, theta) box, and so is the region R (rho0 = |1 - k sigma0| and
    delta <= (1 - k^2) sigma0 depend on k); the loss slack is normalised by k sigma (it tends to 2 as
    theta -> 0). Returns ({name: True/None}, margins, d log(k sigma0)/d log S0: 1, 0 or 1/2 when the
    first, second or third term of eta_max certainly binds on the box, else 1)."""
    from flint import arb

    from rdyn.verification.proofs.balls import ball, lower, upper

    gs, k2, d = cst.gamma_star, qball(cst.kappa2), cst.d
    S0 = ball(lo, hi)
    th = ball(t_lo, t_hi)
    kmax, which = _bmin(k_terms(form, S0, gs, k2, d))
    sigma0 = S0 / gs
    x1 = arb(1) if which == 1 else _pos_mul(kmax, sigma0)   # k_max sigma0 (exactly 1 when d/(2 kappa2 S0) binds)
    sens = {1: 0.0, 2: 0.5}.get(which, 1.0)
    k = _pos_mul(th, kmax)
    x0 = _pos_mul(th, x1)                             # k sigma0 at step 0 (g = 0)
    f0 = 1 - x0
    # step 0 at g = 0 (u = k sigma0): loss (1 - f^2)/(k sigma0) = 1 + f0, Part 1 (1 - x0 - f0^2)/x0 = f0
    step0 = {"loss": 1 + f0, "descent_lemma": f0, "gamma": f0}
    result, margins = {}, {}
    for name, val in step0.items():
        good = bool(val > 0) if name == "loss" else bool(val >= 0)
        result[name] = True if good else None
        margins[name] = _low(val) if good else None
    if not bool(x0 > 0) or not bool(x0 < 2):
        return {n: None for n in result}, margins, sens
    # delta_1 = (1 - k^2) sigma0 exactly (g_0 = 0), and delta never increases after; g_1 = x0
    dhat_hi = upper(1 - k * k)                        # delta/sigma0 <= 1 - k^2
    if result["gamma"]:       # f0 >= 0: g_1 = x0 in (0, 1], and 0 <= f <= 1 on [g_1, 1] keeps g there
        ok, mg = _region_ok(k, dhat_hi, lower(x0), 1.0, ("inv_mono", "loss", "descent_lemma", "gamma"), tally,
                            max_boxes, loss_per_k_sigma=True, x0=x0, sigma0=sigma0)
        if ok["inv_mono"]:
            _merge_region(result, margins, ok, mg, ("loss", "descent_lemma", "gamma"))
            return result, margins, sens
    result["gamma"] = None
    rho0 = upper(abs(1 - x0))                          # |g_1 - 1|; |f| <= 1 keeps |g - 1| <= rho0
    g_lo = (Iv(1.0) - Iv(rho0)).lo
    if not g_lo > 0:
        return {n: None for n in result}, margins, sens
    ok, mg = _region_ok(k, dhat_hi, g_lo, (Iv(1.0) + Iv(rho0)).hi, ("inv_loss", "loss", "descent_lemma"), tally,
                        max_boxes, loss_per_k_sigma=True, x0=x0, sigma0=sigma0)
    if not ok["inv_loss"]:
        return {n: None for n in result}, margins, sens
    _merge_region(result, margins, ok, mg, ("loss", "descent_lemma"))
    return result, margins, sens


def trajectory_counterexample(form: str, S0_value: float, cst: NolnConstants, names, steps: int = SEARCH_STEPS,
                              theta: float | None = None):
    """Iterate B.2.3's recursions (gamma, S) in arb from alpha_0 = 0, beta_0^2 = S0 (the exact
    float S0_value) at eta = eta_max(S0) (times the exact float ``theta``, ``--eta-fraction``; the
    counterexample then records it) and return {name: counterexample} for the statements of
    ``names`` that are certainly false at some step (the first such step)."""
    from flint import arb

    from rdyn.verification.proofs.iterate import digits

    gs, k2, d = cst.gamma_star, qball(cst.kappa2), cst.d
    S0 = arb(S0_value)
    k, which = _bmin(k_terms(form, S0, gs, k2, d))
    if which is None:
        return {}
    if theta is not None:
        k = arb(theta) * k
    eta = eta_of_k(k, gs, k2, d)
    gamma, S = arb(0), S0
    c = 2 * k2 / d
    found = {}
    for t in range(steps):
        F = c * (gamma - gs)
        g1 = gamma - eta * S * F + eta * eta * gamma * F * F
        S1 = (1 + eta * eta * F * F) * S - 4 * eta * gamma * F
        loss_t, loss_t1 = k2 * (gamma - gs) ** 2, k2 * (g1 - gs) ** 2
        sides = {"loss": (loss_t1, loss_t, bool(loss_t1 >= loss_t) and bool(loss_t > 0)),
                 "descent_lemma": (loss_t1 - loss_t, -eta * d * S * F * F / 2,
                                   bool(loss_t1 - loss_t > -eta * d * S * F * F / 2)),
                 "gamma": (g1, gs, bool(g1 > gs))}
        for name in names:
            lhs, rhs, false = sides[name]
            if name not in found and false:
                ratio = lhs / rhs
                found[name] = {"S0": digits(S0), "eta": digits(eta), "step": t, "gamma": digits(gamma), "S": digits(S),
                               "lhs": digits(lhs), "rhs": digits(rhs), "ratio": digits(ratio),
                               "ratio_radius": float(ratio.rad())}
                if theta is not None:
                    found[name]["theta"] = theta
        if len(found) == len(names) or bool(abs(gamma - gs) < arb(10) ** -45) or gamma.rad() > 1e-30:
            break
        gamma, S = g1, S1
    return found


def prove_b3(cst: NolnConstants, s0: tuple, *, max_boxes: int = 200_000, forms=FORMS):
    """Decide the statements of Theorem B.3 for every S0 in [s0[0], s0[1]], at each form of eta_max.

    S0 boxes are bisected while a statement is not carried on them; once a box is narrow
    (relative width < 2^-10) its midpoint is also iterated (:func:`trajectory_counterexample`), and
    a statement certainly false there is refuted and no longer drives the splitting. Returns a list
    of statement dicts (label, form, side, statement, quantity, verdict, certificate,
    counterexample, reason)."""
    out = []
    for form in forms:
        t0 = time.perf_counter()
        tally = _Tally()
        todo = [(float(s0[0]), float(s0[1]))]
        refuted: dict = {}
        margin = {n: None for n, _ in STATEMENTS_B3}
        failing = {n: [] for n, _ in STATEMENTS_B3}
        tried = 0
        while todo:
            lo, hi = todo.pop()
            tally.s0_boxes += 1
            res, mg, _region = _s0_box_decide(form, lo, hi, cst, tally, max_boxes)
            undecided = [n for n in res if n not in refuted and not res[n]]
            narrow = (hi - lo) <= 2.0 ** -10 * max(abs(hi), 1e-300)
            if undecided and narrow:
                tried += 1
                refuted.update(trajectory_counterexample(form, (lo + hi) / 2, cst, tuple(undecided)))
                undecided = [n for n in undecided if n not in refuted]
            if undecided and (hi - lo) > MIN_S0_WIDTH * max(abs(hi), 1e-300) and \
                    tally.boxes + tally.s0_boxes < max_boxes:   # region and S0 boxes: one budget
                m = (lo + hi) / 2
                todo += [(m, hi), (lo, m)]
                continue
            _fold_box(res, mg, margin, failing, (lo, hi))
        open_names = tuple(n for n, _ in STATEMENTS_B3 if failing[n] and n not in refuted)
        if open_names and form == "printed":
            # the printed form fails (if at all) just below the crossing S0_c = 4 sqrt(1 + 16 gamma*^2)
            # of its first two terms, in a window of relative width ~ k^2 (k = gamma*/S0_c; docs/proofs.md)
            # that can be narrower than the smallest S0 box: try points there
            for point in crossing_candidates(cst):
                if s0[0] <= point <= s0[1]:
                    tried += 1
                    got = trajectory_counterexample(form, point, cst, tuple(n for n in open_names if n not in refuted))
                    refuted.update(got)
        seconds = time.perf_counter() - t0
        for name, text in STATEMENTS_B3:
            base = {"label": "Theorem B.3 (Part 1)" if name == "descent_lemma" else "Theorem B.3 (eta_max)",
                    "form": form, "side": None, "statement": f"{text}, eta = eta_max ({form}: {ETA_MAX_TEXT[form]})",
                    "quantity": name}
            if name in refuted:
                out.append(_b3_row(base, cst, counterexample=refuted[name]))
            elif not failing[name]:
                out.append(_b3_row(base, cst, certificate={
                    "S0": [float(s0[0]), float(s0[1])], "region": region_text(), "boxes": tally.boxes,
                    "s0_boxes": tally.s0_boxes, "min_margin": margin[name], "seconds": round(seconds, 3)}))
            else:
                lo, hi = failing[name][0]
                out.append(_b3_row(base, cst, reason=(
                    f"not carried on S0 in [{lo!r}, {hi!r}] ({len(failing[name])} S0 boxes: "
                    f"{_budget_text(tally, max_boxes, 'S0 boxes')}); no counterexample within {SEARCH_STEPS} steps "
                    f"from the midpoints of the {tried} narrow S0 boxes and crossing points tried")))
    return out


def _budget_text(tally, max_boxes: int, boxes: str) -> str:
    """Why a box was left open: the budget, or boxes already at the smallest width."""
    if tally.boxes + tally.s0_boxes >= max_boxes:
        return "the box budget (--max-boxes: region and S0 boxes) ran out"
    return f"{boxes} of relative width {MIN_S0_WIDTH:.1e} do not carry it"


def _b3_row(base: dict, cst, counterexample=None, certificate=None, reason=None) -> dict:
    """One B.3 statement: refuted (with ``counterexample``), certified (``certificate``) or undecided
    (``reason``, plus the radius of gamma* when it is a ball: a smaller failure cannot be certified)."""
    if counterexample is not None:
        return {**base, "verdict": "refuted", "certificate": None, "counterexample": counterexample, "reason": None}
    if certificate is not None:
        return {**base, "verdict": "certified", "certificate": certificate, "counterexample": None, "reason": None}
    if cst.gamma_star_exact is None:
        reason += (f" (gamma* is a ball of radius {float(cst.gamma_star.rad()):.1e}: a failure smaller than that "
                   "cannot be certified)")
    return {**base, "verdict": "undecided", "certificate": None, "counterexample": None, "reason": reason}


NARROW = 2.0 ** -10               # relative width of a narrow S0 (theta) box: its midpoint is iterated
MAP_WIDTH = 2.0 ** -14            # --eta-fraction: relative width to which a refuted statement's boxes are split
MAP_STEPS = 64                    # steps of the search that maps where a refuted statement fails


def _rel(lo: float, hi: float) -> float:
    return (hi - lo) / max(abs(hi), 1e-300)


def prove_b3_theta(cst: NolnConstants, s0: tuple, eta_fraction: tuple, *, max_boxes: int = 200_000, forms=FORMS):
    """Theorem B.3's statements for every S0 in ``s0`` and every ``eta = theta eta_max(S0)``,
    ``theta`` in ``eta_fraction`` = (LO, HI) (``rdyn prove --paper B --eta-fraction``; docs/proofs.md,
    Model B): branch and bound over (S0, theta) boxes (:func:`_theta_box_decide`), taken by
    increasing theta, each split while a statement is not carried on it, in the coordinate on which
    k sigma0 = theta k_max(S0) sigma0 varies more (theta geometrically while it spans a factor > 2).

    A statement not yet refuted is searched for a counterexample at the midpoint of every narrow
    box (relative widths <= 2^-10), as at theta = 1; with HI = 1 the theta = 1 proof
    (:func:`prove_b3`) runs first, and its counterexample is the one reported; for the printed form
    the points of :func:`theta_candidates` are tried too. A refuted statement keeps splitting its
    boxes down to 2^-14, with a 64-step search at each midpoint, until one box of that width fails
    (boxes come by increasing theta, so that fixes the theta below which it is certified) and not
    above the lowest theta refuted: ``theta_failure`` in the counterexample gives that theta and the
    range of theta of the counterexamples found."""
    lo_t, hi_t = float(eta_fraction[0]), float(eta_fraction[1])
    out = []
    for form in forms:
        t0 = time.perf_counter()
        refuted: dict = {}
        if hi_t == 1.0:    # the theta = 1 proof: its counterexamples are those reported (default unchanged)
            for st in prove_b3(cst, s0, max_boxes=max_boxes, forms=(form,)):
                if st["verdict"] == "refuted":
                    refuted[st["quantity"]] = dict(st["counterexample"], theta=1.0)
        tally = _Tally()
        # boxes by increasing theta: the first refuted statement's box that stays failing fixes the
        # theta below which it is certified, and boxes above the lowest refuted theta are not refined
        todo = [(lo_t, float(s0[0]), float(s0[1]), hi_t)]
        margin = {n: None for n, _ in STATEMENTS_B3}
        failing = {n: [] for n, _ in STATEMENTS_B3}
        fail_theta = {n: [] for n, _ in STATEMENTS_B3}
        settled = {n: False for n, _ in STATEMENTS_B3}
        for n, c in refuted.items():
            fail_theta[n].append((1.0, c["S0"]))
        tried = 0
        if form == "printed":
            # the printed statements fail first (in theta) at the crossing S0_c of the first two terms:
            # try theta = 1 - j k_c^2/8 there (k_c = gamma*/S0_c; docs/proofs.md, Model B)
            for point, theta in theta_candidates(cst, lo_t, hi_t):
                if s0[0] <= point <= s0[1]:
                    names = tuple(n for n, _ in STATEMENTS_B3 if n != "loss")
                    got = trajectory_counterexample(form, point, cst, names, steps=MAP_STEPS, theta=theta)
                    for n, c in got.items():
                        refuted.setdefault(n, c)
                        fail_theta[n].append((theta, repr(point)))
        while todo:
            tl, lo, hi, th = heapq.heappop(todo)
            tally.s0_boxes += 1
            res, mg, sens = _theta_box_decide(form, lo, hi, tl, th, cst, tally, max_boxes)
            undecided = [n for n in res if not res[n]]
            narrow = _rel(lo, hi) <= NARROW and _rel(tl, th) <= NARROW
            open_ = [n for n in undecided if n not in refuted]
            mapped = [n for n in undecided if n in refuted]
            sm, tm = (lo + hi) / 2, (tl + th) / 2
            if open_ and narrow:
                tried += 1
                got = trajectory_counterexample(form, sm, cst, tuple(open_), theta=tm)
                for n, c in got.items():
                    refuted[n] = c
                    fail_theta[n].append((tm, repr(sm)))
                open_ = [n for n in open_ if n not in got]
            elif mapped and not open_ and all(settled[n] or tl >= min(fail_theta[n])[0] for n in mapped):
                # the theta below which it holds is settled (boxes come by increasing theta), or the box
                # lies above the lowest theta already refuted: it cannot narrow the bracket of theta_c
                for n in res:
                    if res[n]:      # a statement carried here keeps this box's margin
                        if mg[n] is not None:
                            margin[n] = mg[n] if margin[n] is None else min(margin[n], mg[n])
                    else:
                        failing[n].append((lo, hi, tl, th))
                continue
            elif mapped:
                for n in trajectory_counterexample(form, sm, cst, tuple(mapped), steps=MAP_STEPS, theta=tm):
                    fail_theta[n].append((tm, repr(sm)))
            budget = tally.boxes + tally.s0_boxes < max_boxes   # region and (S0, theta) boxes: one budget
            split_open = budget and open_ and max(_rel(lo, hi), _rel(tl, th)) > MIN_S0_WIDTH
            # widths weighted by how much k sigma0 = theta k_max(S0) sigma0 varies over the box (a refuted
            # statement's boxes are split down to MAP_WIDTH in these weighted widths)
            ws, wt = sens * _rel(lo, hi), _rel(tl, th)
            split_map = budget and mapped and max(ws, wt) > MAP_WIDTH
            if split_open or split_map:
                if ws >= wt or (split_open and wt <= MIN_S0_WIDTH):
                    m = (lo + hi) / 2
                    heapq.heappush(todo, (tl, m, hi, th))
                    heapq.heappush(todo, (tl, lo, m, th))
                else:     # geometric while theta spans more than a factor 2 (LO can be 1e-100)
                    m = math.sqrt(tl * th) if th > 2 * tl else (tl + th) / 2
                    heapq.heappush(todo, (m, lo, hi, th))
                    heapq.heappush(todo, (tl, lo, hi, m))
                continue
            for n in _fold_box(res, mg, margin, failing, (lo, hi, tl, th)):
                settled[n] = settled[n] or n in mapped
        seconds = time.perf_counter() - t0
        for name, text in STATEMENTS_B3:
            base = {"label": "Theorem B.3 (Part 1)" if name == "descent_lemma" else "Theorem B.3 (eta_max)",
                    "form": form, "side": None,
                    "statement": f"{text}, eta = theta eta_max for every theta in [{lo_t!r}, {hi_t!r}] "
                                 f"({form}: {ETA_MAX_TEXT[form]})",
                    "quantity": name}
            if name in refuted:
                below = min((b[2] for b in failing[name]), default=hi_t)
                (t_min, s_min), t_max = min(fail_theta[name]), max(fail_theta[name])[0]
                cex = dict(refuted[name])
                cex["theta_failure"] = {
                    "holds_below": below, "counterexample_theta": [t_min, t_max], "lowest_S0": s_min,
                    "counterexamples": len(fail_theta[name]),
                    "text": f"certified for every S0 in [{s0[0]!r}, {s0[1]!r}] and every theta in "
                            f"[{lo_t!r}, {below!r}); refuted at theta = {t_min!r}, S0 = {s_min} (the lowest of "
                            f"{len(fail_theta[name])} counterexamples found, at theta up to {t_max!r})"}
                out.append(_b3_row(base, cst, counterexample=cex))
            elif not failing[name]:
                out.append(_b3_row(base, cst, certificate={
                    "S0": [float(s0[0]), float(s0[1])], "eta_fraction": [lo_t, hi_t],
                    "region": region_text() + "; eta = theta eta_max(S0), R enclosed per (S0, theta) box",
                    "boxes": tally.boxes, "s0_boxes": tally.s0_boxes, "min_margin": margin[name],
                    "seconds": round(seconds, 3)}))
            else:
                lo, hi, tl, th = failing[name][0]
                out.append(_b3_row(base, cst, reason=(
                    f"not carried on S0 in [{lo!r}, {hi!r}], theta in [{tl!r}, {th!r}] ({len(failing[name])} boxes: "
                    f"{_budget_text(tally, max_boxes, '(S0, theta) boxes')}); no counterexample within {SEARCH_STEPS} "
                    f"steps from the midpoints of the {tried} narrow boxes tried")))
    return out


def theta_candidates(cst: NolnConstants, theta_lo: float, theta_hi: float = 1.0) -> list:
    """(S0, theta) points just below the crossing S0_c = 4 sqrt(1 + 16 gamma*^2) with theta =
    1 - j k_c^2/8 (j = 1..8, k_c = gamma*/S0_c): there k sigma_1 = theta (1 + k^2) k_c sigma0 passes 1
    for theta above about 1 - k_c^2, the lowest theta at which the printed statements fail."""
    from rdyn.verification.proofs.balls import lower

    gs = cst.gamma_star
    Sc = 4 * (1 + 16 * gs * gs).sqrt()
    kc2 = float((gs / Sc) ** 2)
    point = lower(Sc * (1 - 2.0 ** -30))
    return [(point, 1 - j * kc2 / 8) for j in range(1, 9) if theta_lo <= 1 - j * kc2 / 8 <= theta_hi]


def crossing_candidates(cst: NolnConstants) -> list:
    """Points S0_c (1 - theta k^2) (theta = 1/4, 1/2, 3/4; k = gamma*/S0_c) just below the S0 where
    the printed eta_max's first two terms cross, S0_c = 4 sqrt(1 + 16 gamma*^2): there k sigma0 is
    just below 1 and S grows by 1 + k^2 in the first step, so k sigma passes 1 (f < 0)."""
    from rdyn.verification.proofs.balls import lower

    gs = cst.gamma_star
    Sc = 4 * (1 + 16 * gs * gs).sqrt()
    k2 = (gs / Sc) ** 2
    return [lower(Sc * (1 - theta * k2)) for theta in (0.25, 0.5, 0.75)]


def region_text() -> str:
    return ("t = 0 exact; t >= 1: {|g - 1| <= |1 - k sigma0|, 0 <= delta <= (1 - k^2) sigma0} (g <= 1 where the step "
            "factor f >= 0), g = gamma/gamma*, delta = (beta^2 - alpha^2)/gamma*, k = 2 eta kappa2 gamma*/d")


# --------------------------------------------------------------------------- Krawczyk for gamma*
def krawczyk_gamma_star(cst: NolnConstants, s0: tuple, form: str = "corrected", rel_width: float = 2.0 ** -8):
    """Existence, uniqueness and attraction of gamma* in X = gamma* (1 +- rel_width) for the GD map
    g(gamma) = gamma - eta S F + eta^2 gamma F^2 (F = 2 kappa2 (gamma - gamma*)/d, B.2.3), for every
    S0 in s0 at eta = eta_max(S0) and every S in [2 min X, sqrt(S0^2 + 4 max X^2)] (the S the
    trajectory can have with gamma in X: S^2 = D^2 + 4 gamma^2, 0 <= D <= S0 by Theorem B.3's region).

    Returns a dict: box, width, K(X) (the Krawczyk image), inside (K(X) in int X), contraction
    (upper bound of sup |g'| over X and the parameters), verdict."""
    from flint import arb

    from rdyn.verification.proofs.balls import ball, hull, lower, upper
    from rdyn.verification.proofs.iterate import digits

    t0 = time.perf_counter()
    gs, k2, d = cst.gamma_star, qball(cst.kappa2), cst.d
    c = 2 * k2 / d
    x_lo, x_hi = lower(gs * (1 - arb(rel_width))), upper(gs * (1 + arb(rel_width)))
    X = ball(x_lo, x_hi)
    m = arb(X.mid())
    # split the S0 interval and, for each piece, the S range (geometrically) so the parameter
    # boxes stay narrow; the main term eta c S of h' is enclosed from its (positive) endpoints
    pieces, s_pieces, lo, hi = 16, 16, float(s0[0]), float(s0[1])
    inside, q_max, K_hull, boxes = True, 0.0, None, 0

    def h(gam, S_, eta_):
        F = c * (gam - gs)
        return eta_ * F * (S_ - eta_ * gam * F)

    def dh(gam, S_lo: float, S_hi: float, eta_):   # d/dgamma of eta F (S - eta gamma F), F' = c
        F = c * (gam - gs)
        ec = eta_ * c
        main = ball(lower(ec) * S_lo * (1 - 2.0 ** -50), upper(ec) * S_hi * (1 + 2.0 ** -50))
        return main - ec * eta_ * gam * F + eta_ * F * (-eta_ * F - eta_ * gam * c)

    def piece(a: float, b: float):
        """(inside, q, hull of K(X), boxes) over S0 in [a, b] and the S range it allows."""
        S0 = ball(a, b)
        k, _ = _bmin(k_terms(form, S0, gs, k2, d))
        eta = eta_of_k(k, gs, k2, d)
        eta_m = arb(eta.mid())
        s_lo, s_hi = 2 * x_lo, upper((S0 * S0 + 4 * arb(x_hi) ** 2).sqrt())
        ratio = (s_hi / s_lo) ** (1.0 / s_pieces)
        ok, q, Kh = True, 0.0, None
        for j in range(s_pieces):
            p_lo, p_hi = s_lo * ratio ** j, (s_hi if j == s_pieces - 1 else s_lo * ratio ** (j + 1))
            S = ball(p_lo, p_hi)
            Sm = arb(S.mid())
            C = 1 / dh(m, float(Sm), float(Sm), eta_m).mid()
            KX = m - C * h(m, S, eta) + (1 - C * dh(X, p_lo, p_hi, eta)) * (X - m)
            ok = ok and bool(KX.lower() > X.lower()) and bool(KX.upper() < X.upper())
            q = max(q, upper(abs(1 - dh(X, p_lo, p_hi, eta))))
            Kh = KX if Kh is None else hull(Kh, KX)
        return ok, q, Kh, s_pieces

    # S0 pieces: geometric (eta_max ~ 1/S0), bisected (geometric mean) where the test fails
    work = [(lo * (hi / lo) ** (i / pieces), hi if i == pieces - 1 else lo * (hi / lo) ** ((i + 1) / pieces), 0)
            for i in range(pieces)]
    while work:
        a, b, depth = work.pop()
        ok, q, Kh, nb = piece(a, b)
        boxes += nb
        if not (ok and q < 1) and depth < 12 and b > a:
            mid = math.sqrt(a * b)
            work += [(a, mid, depth + 1), (mid, b, depth + 1)]
            continue
        inside = inside and ok
        q_max = max(q_max, q)
        K_hull = Kh if K_hull is None else hull(K_hull, Kh)
    verdict = "certified" if inside and q_max < 1 else "undecided"
    return {"label": "Theorem 4.2 (gamma*)", "form": form, "side": None,
            "statement": f"gamma* is the unique fixed point of the collapsed GD map in the box X and attracts it "
                         f"(|g'| <= q < 1 on X), for every S0 in [{s0[0]!r}, {s0[1]!r}] at eta = eta_max ({form})",
            "quantity": "fixed_point", "verdict": verdict,
            "certificate": None if verdict != "certified" else {
                "box": [x_lo, x_hi], "width": x_hi - x_lo, "krawczyk_image": [lower(K_hull), upper(K_hull)],
                "contraction": q_max, "gamma_star": digits(gs), "gamma_star_radius": float(gs.rad()),
                "S0": [lo, hi], "boxes": boxes, "min_margin": min(lower(K_hull) - x_lo, x_hi - upper(K_hull)) / (x_hi - x_lo),
                "seconds": round(time.perf_counter() - t0, 3)},
            "counterexample": None,
            "reason": None if verdict == "certified" else
            f"Krawczyk image inside X: {inside}; contraction bound {q_max!r} (needs < 1)"}


# --------------------------------------------------------------------------- contraction factor
def top_levels(spectrum):
    """lambda_1 (the largest eigenvalue of S = diag(m)), its multiplicity r and lambda_{r+1}."""
    levels = sorted(set(spectrum), reverse=True)
    if len(levels) < 2:
        return levels[0], len(spectrum), None
    return levels[0], sum(1 for m in spectrum if m == levels[0]), levels[1]


def contraction_factor(spectrum, gamma_lo, gamma_hi, *, label: str, L: int | None = None, what: str = "gamma",
                       strictly_above_power: bool = False):
    """Certified enclosure of R(gamma) = (1 + gamma l_{r+1})/(1 + gamma l_1) for gamma in
    [gamma_lo, gamma_hi] (balls or floats; R decreases in gamma: dR/dgamma = (l_{r+1} - l_1)/(1 + gamma l_1)^2),
    and the certified statement R < 1 (with R^L for a looped model)."""
    from flint import arb

    from rdyn.verification.proofs.balls import lower, upper
    from rdyn.verification.proofs.iterate import digits

    t0 = time.perf_counter()
    l1, r, l2 = top_levels(spectrum)
    g_lo = gamma_lo if isinstance(gamma_lo, arb) else arb(gamma_lo)
    g_hi = gamma_hi if isinstance(gamma_hi, arb) else arb(gamma_hi)
    R_hi = (1 + g_lo * l2) / (1 + g_lo * l1)     # at the smallest gamma
    R_lo = (1 + g_hi * l2) / (1 + g_hi * l1)
    power = arb(l2) / l1
    ok = bool(R_hi < 1)
    # Theorem 4.6 (2) also states R* > l_(r+1)/l_1 (gamma* finite): certified when asked for
    above = bool(R_lo > power) if strictly_above_power else None
    gamma_pair = [float(gamma_lo), float(gamma_hi)] if not isinstance(gamma_lo, arb) else [lower(g_lo), upper(g_hi)]
    cert = {"gamma": gamma_pair, "R": [lower(R_lo), upper(R_hi)], "R_max": digits(R_hi),
            "R_min": digits(R_lo), "lambda_1": l1, "r": r, "lambda_r_plus_1": l2,
            "power_method_ratio": digits(power), "min_margin": lower(1 - R_hi),
            "boxes": 1, "seconds": round(time.perf_counter() - t0, 3)}
    if strictly_above_power:
        cert["min_margin"] = min(cert["min_margin"], lower(R_lo - power))
        ok = ok and above
    if L is not None:
        cert["R_max_L"] = digits(R_hi ** L)
        cert["L"] = L
    return {"label": label, "form": "printed", "side": "upper",
            "statement": f"per-layer contraction factor R = (1 + {what} l_(r+1))/(1 + {what} l_1) < 1"
                         f"{' and > l_(r+1)/l_1 (the power method)' if strictly_above_power else ''} for {what} in "
                         f"the stated range: tan psi_(l+1) <= R tan psi_l on every cone tan psi <= tau (each invariant)",
            "quantity": "contraction", "verdict": "certified" if ok else "refuted",
            "certificate": cert if ok else None,
            "counterexample": None if ok else {"gamma": digits(g_lo), "lhs": digits(R_hi), "rhs": "1",
                                               "ratio": digits(R_hi), "ratio_radius": float(R_hi.rad()),
                                               "step": 0, "S0": None},
            "reason": None}


# --------------------------------------------------------------------------- certified training
TRAIN_PREC_BITS = 128


def two_level_F(model: str, spectrum, d: int, L: int | None = None):
    """F(x) = L'(x)/d of the LN layer (x = gamma: ``E[a^T S g_h]/d`` with
    ``a^T S g_h = -2 (m2 - m1^2)/(sqrt(m2) r^3)``, ``r^2 = 1 + 2 x m1 + x^2 m2``; C.2.1,
    rdyn.derivations.model_b.ln_per_sample) or of the looped model (x = rho: the derivative of
    ``Dist^2 = P/(w + P)``, ``P = (1 - w) z^{2L}``, ``z = (1 + x l_2)/(1 + x l_1)``; Appendix A,
    looped_per_sample) for a spectrum with two distinct eigenvalues ``l_1 > l_2`` of multiplicities
    ``k_1, k_2``: the mass ``w`` of ``a`` on the top eigenspace is Beta(k_1/2, k_2/2), and with
    ``w = sin^2 theta`` the expectation is ``(2/B) int_0^{pi/2} f sin^{k_1-1} cos^{k_2-1} d theta``
    of an analytic integrand, enclosed by ``acb.integral`` (rigorous error bound). Returns the
    function x (a ball) -> F (a ball)."""
    from flint import acb, arb

    l1, _r, l2 = top_levels(spectrum)
    k1 = sum(1 for m in spectrum if m == l1)
    k2 = len(spectrum) - k1
    a, b = arb(k1) / 2, arb(k2) / 2
    beta_ab = a.gamma() * b.gamma() / (a + b).gamma()

    def F(x):
        def integrand(th, analytic):
            sn, cs = th.sin(), th.cos()
            w = sn * sn
            if model == "ln":
                m1 = l1 * w + l2 * (1 - w)
                m2 = l1 * l1 * w + l2 * l2 * (1 - w)
                r2 = 1 + 2 * x * m1 + x * x * m2
                val = -2 * (m2 - m1 * m1) / (m2.sqrt(analytic=analytic) * r2 * r2.sqrt(analytic=analytic))
            else:
                den = 1 + x * l1
                z = (1 + x * l2) / den
                P = (1 - w) * z ** (2 * L)
                dP = (1 - w) * (2 * L) * z ** (2 * L - 1) * (l2 - l1) / (den * den)
                val = w * dP / ((w + P) * (w + P))
            return val * sn ** (k1 - 1) * cs ** (k2 - 1)

        I = acb.integral(integrand, 0, acb.pi() / 2, rel_tol=arb(2) ** -(TRAIN_PREC_BITS - 24))
        return 2 * I.real / beta_ab / d

    return F


def certified_training(model: str, spectrum, d: int, eta: float, steps: int, L: int | None = None,
                       alpha0: float = 0.0, beta0: float = 1.0, progress=None):
    """The GD recursion alpha' = alpha - eta beta F(gamma), beta' = beta - eta alpha F(gamma)
    (looped: w, v, rho) for ``steps`` steps on arb balls with F from :func:`two_level_F`; eta is
    the exact decimal of its float's repr. Returns (gamma_T ball, increasing: gamma_{t+1} > gamma_t
    certified at every step, seconds)."""
    import flint
    from flint import arb

    t0 = time.perf_counter()
    old = flint.ctx.prec
    flint.ctx.prec = TRAIN_PREC_BITS
    try:
        F = two_level_F(model, spectrum, d, L)
        e = arb(repr(float(eta)))
        alpha, beta = arb(repr(float(alpha0))), arb(repr(float(beta0)))
        gam = alpha * beta
        increasing = True
        import signal
        import threading

        # F is an acb.integral whose integrand is a Python callback: a KeyboardInterrupt raised inside it
        # (Ctrl-C, or SIGTERM through rdyn/signals.py) crashed the process (exit 139). The signals are
        # held during each step's integral and taken between steps.
        held = {signal.SIGINT, signal.SIGTERM}
        main = threading.current_thread() is threading.main_thread()
        for t in range(steps):
            mask = signal.pthread_sigmask(signal.SIG_BLOCK, held) if main else None
            try:
                Fg = F(gam)
            finally:
                if mask is not None:
                    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            alpha, beta = alpha - e * beta * Fg, beta - e * alpha * Fg
            new = alpha * beta
            increasing = increasing and bool(new > gam)
            gam = new
            if progress is not None:
                progress(t + 1)
        return gam, increasing, time.perf_counter() - t0
    finally:
        flint.ctx.prec = old


# --------------------------------------------------------------------------- the whole report
def prove_model_b(inst: BInstance, *, max_boxes: int = 200_000, prec: int = PREC_BITS, progress=None) -> dict:
    """Every Model B statement that applies to ``inst.model`` (noln: Theorem B.3 at both eta_max
    forms, Theorem 4.2's gamma* by Krawczyk, Theorem 4.6 (2)'s R* with spectrum data; ln and looped:
    the contraction factor over ``inst.gamma_range``). A dict in the ``rdyn prove --paper B --json``
    shape (rdyn/schemas/prove.schema.json, model_b). ``progress(t)``: after each certified GD step
    of ``inst.steps``."""
    import flint

    t0 = time.perf_counter()
    old = flint.ctx.prec
    flint.ctx.prec = prec
    try:
        statements, constants = [], {}
        if inst.model == "noln":
            cst = noln_constants(inst)
            from rdyn.verification.proofs.iterate import digits

            constants = {"kappa1": str(cst.kappa1), "kappa2": str(cst.kappa2), "gamma_star": digits(cst.gamma_star),
                         "gamma_star_exact": None if cst.gamma_star_exact is None else str(cst.gamma_star_exact),
                         "kappa3": None if cst.kappa3 is None else digits(cst.kappa3)}
            if tuple(inst.eta_fraction) == (1.0, 1.0):
                statements += prove_b3(cst, inst.s0, max_boxes=max_boxes)
            else:
                statements += prove_b3_theta(cst, inst.s0, inst.eta_fraction, max_boxes=max_boxes)
            statements += [krawczyk_gamma_star(cst, inst.s0, form) for form in FORMS]
            if inst.data == "spectrum" and top_levels(inst.spectrum)[2] is not None:
                statements.append(contraction_factor(inst.spectrum, cst.gamma_star, cst.gamma_star,
                                                     label="Theorem 4.6 (2)", what="gamma*", strictly_above_power=True))
        else:
            label = "Theorem 4.6 (1)" if inst.model == "ln" else "Theorem 4.7 (looped contraction)"
            what = "gamma" if inst.model == "ln" else "rho"
            if inst.steps is None:
                statements.append(contraction_factor(inst.spectrum, inst.gamma_range[0], inst.gamma_range[1],
                                                     label=label, L=inst.L, what=what))
            else:
                from rdyn.verification.proofs.iterate import digits

                gT, increasing, secs = certified_training(inst.model, inst.spectrum, inst.d, inst.eta, inst.steps,
                                                          inst.L, progress=progress)
                st = contraction_factor(inst.spectrum, gT, gT, label=label, L=inst.L, what=f"{what}_T")
                st["statement"] += (f"; {what}_T after {inst.steps} GD steps at eta = {inst.eta!r} from "
                                    f"alpha0 = 0, beta0 = 1, by certified iteration (two-level spectrum)")
                if st["certificate"] is not None:
                    st["certificate"].update(steps=inst.steps, gamma_T=digits(gT), gamma_T_radius=float(gT.rad()),
                                             increasing=increasing, seconds=round(secs, 3))
                statements.append(st)
        return {"paper": "B", "instance": inst.to_dict(), "constants": constants, "statements": statements,
                "prec_bits": prec, "seconds": round(time.perf_counter() - t0, 3)}
    finally:
        flint.ctx.prec = old
