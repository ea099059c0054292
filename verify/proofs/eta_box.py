"""Lemma D.19 corrected (both sides), the lag lemma and Lemma D.18 derived for every step size of a
box ``LO < eta <= HI`` at once (seed 000, Appendix D; docs/proofs.md, "Every step size at once").

The map's eta-structure (:mod:`.symbolic`): ``Delta x``, ``1 - alpha`` and ``beta`` are eta times
eta-free functions and ``C1* = beta/(1 - alpha)`` is free of eta. The kernels are therefore prepared
at eta = 1 (``X1 = Delta x/(eta e^2)``, ``lam = (1 - alpha)/eta``, ``g2``), and eta enters the
conditions below only as a ball ``[LO, HI]`` multiplying them, never divided by.

Region (coordinates ``e = exp(-x/scale)``, ``w = (C1/C1* - 1)/e^3``, as in :mod:`.region`): the tube

    T = { 0 <= e <= 1,  lower(e) <= w <= upper(e) },

``[lower, upper] = [w_lo, w_hi]`` on ``[0, e_flat]``; above ``e_flat`` both edges are piecewise linear
through ``knots``, ``lower`` falling to ``-1`` at ``e = 1`` (C1 = 0) and ``upper`` rising as its mirror
image, so that the state at t = 1 (``x(1) = 0``, ``C1(1) = eta first_c1``) lies in T for every eta: ``T``
holds the whole trajectory from step 1, not only its late phase, and no iteration is needed. Points of
T are written ``w = lower(e) + nu (upper(e) - lower(e))``, ``0 <= nu <= 1``; branch and bound runs over
boxes in ``(e, nu)``, each inside one piece of the edges.

One step, exactly (``u = eta e^2 X1/scale``, ``r = exp(-u)``, ``1 - r = u phi(u)``,
``phi in [1 - u/2, 1]``, ``xi`` between ``e' = e r`` and ``e``, ``S = C1*``)::

    w' - w = eta G,  G = (w (-lam S(e) + e^2 X1 phi (S'(xi) e + S(e') (1 + r + r^2))/scale)
                          + S'(xi) X1 phi/scale) / (S(e') r^3)
    e - e' = eta H,  H = e^3 X1 phi/scale

(from ``C1' - C1*(e) = alpha (C1 - C1*(e))``). Invariance of T is then, on every box (``s_lo``,
``s_hi`` the hulls of the edges' slopes on the pieces that meet ``[e', e]``, so that
``lower(e) - lower(e') = s_lo (e - e')``, likewise ``upper``)::

    w' - lower(e') = nu (upper(e) - lower(e)) + eta (G + s_lo H)         >= 0
    upper(e') - w' = (1 - nu)(upper(e) - lower(e)) - eta (G + s_hi H)    >= 0

with ``X1 >= 0`` (``X1 = rho Y``, ``rho = 1 + w e^3 = C1/C1* >= 0`` on T since ``w >= -1``, ``e <= 1``,
and ``Y`` = :func:`~.kernels.Kernels.dx_e2_rho` certainly positive), ``lam > 0``,
``1 - HI lam >= 0`` and ``S > 0`` (then ``C1' = (1 - eta lam) C1 + eta lam S > 0``: the map's
``C1 > 0`` branch holds at every step t >= 1). Every term is a ball that contains its exact value for
every eta in the box, so a box passes for all of them at once.

The statements (for every eta in the box and every ``T >= T*``; ``e(T*) <= K/N``, and the states
from T* on have ``e <= K/N < e_flat``) are the region conditions of :mod:`.region` at eta = 1 on
``e <= K/N`` (``dx_upper`` on all of T: ``R_hi``'s first step needs it at ``T* - 1``, where
``e > K/N``): ``lag`` (``|w| <= c_lag``, ``c_lag = max(|w_lo|, |w_hi|)`` rounded up),
``dx_lower_qlag``, ``dx_upper``, ``increment_upper_psi`` (``e^m slack + eta P``, both parts > 0). Their derivation from
these conditions is :mod:`rdyn.derivations.model_a.late_phase_bounds` (docs/proofs.md, "Derived
late-phase bounds"), unchanged.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import flint
from flint import arb

from rdyn.verification.proofs import branch_bound as bb, region as rg, statements as st, phase_times
from rdyn.verification.proofs.balls import b_enclosure, ball, hull, lower, upper
from rdyn.verification.proofs.engine import StatementResult, turning_point
from rdyn.verification.proofs.kernels import kernels

PREC_BITS = 128
DEFAULT_MAX_BOXES = 200_000
KNOTS = 24                      # pieces of the lower edge between e_flat and 1
STATEMENT_KEYS = ("D19.derived.lag", "D19.derived.lower", "D19.corrected.upper", "D18.derived.lower",
                  "D18.derived.upper")
CONDITION_OF = {"D19.derived.lag": "lag", "D19.derived.lower": "dx_lower_qlag", "D19.corrected.upper": "dx_upper",
                "D18.derived.lower": "dx_lower_qlag", "D18.derived.upper": "increment_upper_psi"}
# Appendix D's statements for every step t >= 1 (window "from_1"): the tube holds every such state, so each is
# its region condition of :mod:`.region` on all of T (eta a ball in the step's e', p', xi). C1 > 0 and
# Delta(C2+C3) > 0 at every t >= 1 are part of the invariance proof itself ("structural": C1(1) > 0,
# C1' = (1 - eta lam) C1 + eta lam C1* > 0, Delta x = eta e^2 rho Y with Y > 0 certified on every box).
ALL_STEPS_CONDITION_OF = {"D4.printed.lower": "structural", "D4.printed.upper": "d4_upper",
                          "D8.corrected.monotone": "structural", "D9.printed.lower": "dp_lower",
                          "D9.printed.upper": "dp_upper", "D9.printed.increment": "dx_increment",
                          "D10.printed": "d10_vacuous", "D10.corrected": "d10_corrected", "D11.printed": "d11",
                          "D16.printed": "d16", "D5.printed.upper": "d5_upper_regular", "D12.printed": "d12_regular"}
# Lemma D.17's band after t1 and D.13's attention bound up to t1 (t1 = the first t >= 1 with C1 >= 0.95 C1*):
# "band_lower_kept": rho = C1/C1* >= 0.95 is kept by every step (rho' - 0.95 = r^3 (rho - 0.95) +
# eta (0.05 e^2 X1 phi (1 + r + r^2)/scale + G e^3 r^3)), so it holds from t1 on; "band_upper": rho <= 4 pi + 1
# on all of T; "attention_before_t1": wherever rho < 0.95 is possible (every step t < t1 and the next one, t1
# itself), p and p' are below (1 + D^(-1/4))/D (at t <= 1, p = 1/D).
# Lemma D.13's C1 step, C1(t+1) - C1(t) >= eta D F3(t)/(40 K p(t)) for 0 <= t < t1 ("c1_step"): on the C1 > 0
# branch C1' - C1 = beta (1 - rho), and beta = eta D F3/(K p) exactly (sympy, kernels.facts), so the slack is
# beta (39/40 - rho) > 0 wherever rho < 0.95 (every t with 1 <= t < t1) and beta > 0 (lam > 0 and C1* > 0 on every
# box of the invariance proof); t = 0 is the one comparison first_c1 >= D^2 F3(e = 1)/(40 K) (p(0) = 1/D)
T1_CONDITION_OF = {"D17.printed.band_lower": "band_lower_kept", "D17.printed.band_upper": "band_upper",
                   "D13.printed.attention": "attention_before_t1", "D13.printed.step": "c1_step"}
T1_CONDITIONS = ("band_lower_kept", "attention_before_t1")   # decided by :meth:`BoxField._t1_condition`
# The phase times themselves, t1 (Lemma D.13) and T* (Lemma D.17's eta-dependence) = Theta(1/eta): statements about
# every eta at once (so decided over a range only, never per instance), explicit 0 < a <= eta t <= b on the box from
# the tube's invariance (:mod:`.phase_times`; T* also from band_lower_kept, RANGE_NEEDS)
RANGE_STATEMENTS = (
    st.Statement("D13.range.t1", "Lemma D.13 (t1)", "printed", None,
                 "there exists t1 = Theta(1/eta) with C1(t1) >= 0.95 C1*(t1): the first t >= 1 with C1(t) >= "
                 "0.95 C1*(t) satisfies a <= eta t1 <= b for every eta of the box (a > 0 and b the certificate's "
                 "constants eta_t1, free of eta)", "eta_t1", "ge", 0, "t1_scaling", "range"),
    st.Statement("D17.range.tstar", "Lemma D.17", "printed", None,
                 "T* = Theta(1/eta) at this configuration (the eta-dependence of T* = Theta(K D^2/(eta ||V*||^2)), "
                 "not its law in D): the first T with p(T) >= 1/(2K) satisfies a <= eta T* <= b for every eta of the "
                 "box (a > 0 and b the certificate's constants eta_tstar, free of eta)", "eta_tstar", "ge", 0,
                 "tstar_scaling", "range"),
)
RANGE_CONDITION_OF = {"D13.range.t1": "t1_scaling", "D17.range.tstar": "tstar_scaling"}
PHASE_TIMES = tuple(RANGE_CONDITION_OF.values())   # decided after the branch and bound, from its invariance
RANGE_NEEDS = {"tstar_scaling": ("band_lower_kept", "tstar_scaling")}   # T* also rests on band_lower_kept
CONDITION_OF = {**CONDITION_OF, **ALL_STEPS_CONDITION_OF, **T1_CONDITION_OF, **RANGE_CONDITION_OF}
STATEMENT_KEYS = STATEMENT_KEYS + tuple(ALL_STEPS_CONDITION_OF) + tuple(T1_CONDITION_OF) + tuple(RANGE_CONDITION_OF)
LATE = ("lag", "dx_lower_qlag", "increment_upper_psi")          # on T with e <= K/N (the states from T* on)
ALL_STEPS = ("dx_upper", "d4_upper", "dp_lower", "dp_upper", "dx_increment", "d10_vacuous", "d10_corrected",
             "d11", "d16", "d5_upper_regular", "d12_regular", "band_lower_kept", "band_upper",
             "attention_before_t1")   # on all of T
MIN_WIDTH = 2.0 ** -36
E_SCALE = 1 / 64                # e-widths are compared with nu-widths relative to this (or a narrower piece)


@dataclass(frozen=True)
class Tube:
    """The region of the module docstring: ``w_lo <= w <= w_hi`` for ``e <= knots_e[0]`` (``e_flat``);
    above it both edges are linear between the knots: ``lower`` through ``(knots_e[i], lower_w[i])`` down
    to ``lower_w[-1] = -1`` at ``e = 1`` (C1 = 0), ``upper`` through ``(knots_e[i], upper_w[i])``."""

    knots_e: tuple
    lower_w: tuple
    upper_w: tuple

    @property
    def w_lo(self) -> float:
        return self.lower_w[0]

    @property
    def w_hi(self) -> float:
        return self.upper_w[0]

    @property
    def e_flat(self) -> float:
        return self.knots_e[0]

    def pieces(self):
        """(e_lo, e_hi, lower at e_lo, lower at e_hi, upper at e_lo, upper at e_hi) of every piece, the
        flat one first."""
        out = [(0.0, self.knots_e[0], self.w_lo, self.w_lo, self.w_hi, self.w_hi)]
        out += [(self.knots_e[i], self.knots_e[i + 1], self.lower_w[i], self.lower_w[i + 1], self.upper_w[i],
                 self.upper_w[i + 1]) for i in range(len(self.knots_e) - 1)]
        return out

    def to_dict(self) -> dict:
        return {"coordinates": "e = exp(-(C2+C3)/scale), w = (C1/C1*(e) - 1)/e^3",
                "e": [0.0, 1.0], "w_lo": self.w_lo, "w_hi": self.w_hi, "e_flat": self.e_flat,
                "lower_edge": [[a, b] for a, b in zip(self.knots_e, self.lower_w)],
                "upper_edge": [[a, b] for a, b in zip(self.knots_e, self.upper_w)]}


@dataclass(frozen=True)
class EtaBox:
    """One Model A configuration (D, K, activation, kappa, ||V*||^2, logit scale) and the step sizes
    ``lo < eta <= hi`` (``lo`` may be 0)."""

    D: int
    K: int
    activation: str
    kappa: float
    vstar_norm2: float
    logit_scale: str
    lo: float
    hi: float

    def to_dict(self) -> dict:
        return {"D": self.D, "K": self.K, "activation": self.activation,
                "kappa": self.kappa if self.activation == "leaky" else None, "vstar_norm2": self.vstar_norm2,
                "eta": None, "eta_box": [self.lo, self.hi], "logit_scale": self.logit_scale}


@dataclass
class BoxProof:
    """The branch and bound's outcome on one eta box."""

    lo: float
    hi: float
    invariant: bool
    decided: dict
    margins: dict
    boxes: int
    seconds: float
    reason: str | None
    constants: dict = field(default_factory=dict)


class BoxField:
    """The conditions of the module docstring on one (e, nu) box, eta a ball (python-flint ``arb``)."""

    def __init__(self, cfg: EtaBox, tube: Tube, eta_lo: float, eta_hi: float, *, c_lag: float | None = None,
                 mutate: dict | None = None):
        self.arb, self.cfg, self.tube = arb, cfg, tube
        self.k = k = kernels(cfg.activation, cfg.logit_scale)
        kappa = cfg.kappa if cfg.activation == "leaky" else 0.0
        self.c = k.prepare(arb(cfg.K).sqrt(), arb(cfg.D - cfg.K).sqrt(), arb(1), arb(repr(float(cfg.vstar_norm2))),
                           arb(repr(float(kappa))), arb(1))
        self.m = k.facts["slack_power"]
        self.cz = arb(cfg.D - cfg.K).sqrt() / arb(cfg.K).sqrt() if k.facts["atan"] else None
        self.scale = arb(cfg.D) if cfg.logit_scale == "D" else arb(cfg.D).sqrt()
        self.K, self.N = arb(cfg.K), arb(cfg.D - cfg.K)
        self.eta = ball(eta_lo, eta_hi)
        self.eta_lo = eta_lo
        self.g2 = k.eta_g2(self.c)                           # the eta-free g2
        mutate = mutate or {}                                # a mutation test's factors on g2, q_lag
        self.g2_claim = self.g2 * arb(repr(mutate["g2"])) if "g2" in mutate else self.g2
        self.e_star = self.K / self.N                        # e(T*) <= K/N
        e0 = self.e_star
        self.q_min = k.dx_e2(e0, arb(0), self._bz(e0, e0), self.c) / self.g2
        self.c_lag = c_lag if c_lag is not None else _round_up(max(abs(tube.w_lo), abs(tube.w_hi)) * (1 + 2.0**-24))
        self.q_lag = self.q_min * (1 - arb(self.c_lag) * (self.K / self.N) ** 2)
        if "q_lag" in mutate:
            self.q_lag = self.q_lag * arb(repr(mutate["q_lag"]))
        D, K = cfg.D, cfg.K
        # the per-instance region's conditions at eta = 1 (X = X1, eta g2 = g2, Lemma D.9's increment over eta)
        self.bm = rg.BoxMap(k, self.c, {"scale": self.scale, "eta_g2": self.g2, "q_min": self.q_min, "K": self.K,
                                        "N": self.N, "e_c": turning_point(k, self.c),
                                        "d9_increment": arb(repr(float(cfg.vstar_norm2))) * D * (D + 1)
                                        / (arb(K) ** 3 * (D - K))}, self.cz, self.m)
        self.pieces = tube.pieces()
        self.slopes = [((arb(la2) - arb(la)) / (arb(b) - arb(a)), (arb(ha2) - arb(ha)) / (arb(b) - arb(a)))
                       if b > a else (arb(0), arb(0)) for a, b, la, la2, ha, ha2 in self.pieces]

    def _bz(self, E_lo, E_hi):
        if self.cz is None:
            return self.arb(0)
        return b_enclosure(max(0.0, lower(self.cz * self.arb(E_lo))), upper(self.cz * self.arb(E_hi)))

    def _edges(self, piece: int, E):
        """(lower(E), upper(E)) on one piece (linear there)."""
        arb = self.arb
        a, _, la, _, ha, _ = self.pieces[piece]
        s_lo, s_hi = self.slopes[piece]
        return arb(la) + s_lo * (E - arb(a)), arb(ha) + s_hi * (E - arb(a))

    def _slope_hulls(self, e_lo: float, e_hi: float):
        """The hulls of the lower and upper edges' slopes over the pieces that meet [e_lo, e_hi]."""
        lo = hi = None
        for (a, b, *_), (s_lo, s_hi) in zip(self.pieces, self.slopes):
            if b >= e_lo and a <= e_hi:
                lo = s_lo if lo is None else hull(lo, s_lo)
                hi = s_hi if hi is None else hull(hi, s_hi)
        return lo, hi

    def evaluate(self, piece, e_lo, e_hi, nu_lo, nu_hi, pending):
        """{condition: (sign, lower bound)}: sign 1 certainly positive (>= 0 for ``increment_upper_psi``,
        see :meth:`_condition`) on the box, -1 certainly negative, 0 undecided; the lower bound a float
        (None for ``invariant``, which covers the invariance and validity tests together)."""
        k, c = self.k, self.c
        E, Nu = ball(e_lo, e_hi), ball(nu_lo, nu_hi)
        L, U = self._edges(piece, E)
        width = U - L
        W = L + Nu * width
        Bz = self._bz(e_lo, e_hi)
        rho = 1 + W * E * E * E
        rho = ball(max(0.0, lower(rho)), upper(rho))          # rho >= 0 on T exactly (w >= -1, e <= 1)
        Y = k.dx_e2_rho(E, W, Bz, c)
        X1 = rho * Y
        # shared by every condition of the box: C1*(e), lam(e), the next step's quantities and the motion (G, H)
        S, lam = k.star(E, c), 1 - k.alpha(E, c)
        q = self.bm._step(E, self.eta * X1)
        moved = []

        def motion():
            if not moved:
                moved.append(self.step(E, W, X1, self.eta, S, lam, q))
            return moved[0]
        out = {}
        for cond in pending:
            if cond == "invariant":
                out[cond] = self._invariant(E, width, X1, Y, S, lam, q, motion, e_hi, nu_lo, nu_hi)
            elif cond in T1_CONDITIONS:
                out[cond] = self._t1_condition(cond, E, W, X1, q, motion)
            else:
                v = self._condition(cond, E, W, Bz, X1, q)
                out[cond] = v if isinstance(v, tuple) else (1 if v > 0 else (-1 if v < 0 else 0), lower(v))
        return out

    def step(self, E, W, X1, eta, S=None, lam=None, q=None):
        """One step of the map on balls (module docstring): ``(G, H, q)`` with ``w' - w = eta G``,
        ``e - e' = eta H`` and ``q`` the next step's quantities of :meth:`.region.BoxMap._step` at
        ``Delta x/e^2 = eta X1`` (``u``, ``r``, ``phi``, ``p``, ``pn``, ``xi``; ``e' = e r``); None where C1*(e')
        is not certainly > 0. ``S = C1*(e)``, ``lam = (1 - alpha(e))/eta`` and ``q`` when the caller has them."""
        k, c = self.k, self.c
        S = k.star(E, c) if S is None else S
        lam = 1 - k.alpha(E, c) if lam is None else lam
        q = self.bm._step(E, eta * X1) if q is None else q
        r, phi = q["r"], q["phi"]             # 1 - r = u phi
        S_next = k.star(E * r, c)
        if not S_next > 0:
            return None
        Sp = k.star_prime(q["xi"], c)         # C1*(e) - C1*(e') = C1*'(xi) (e - e'), xi between them
        G = (W * (-lam * S + E * E * X1 * phi * (Sp * E + S_next * (1 + r + r * r)) / self.scale)
             + Sp * X1 * phi / self.scale) / (S_next * r * r * r)
        H = E * E * E * X1 * phi / self.scale
        return G, H, q

    def _invariant(self, E, width, X1, Y, S, lam, q, motion, e_hi, nu_lo, nu_hi):
        arb, eta = self.arb, self.eta
        contracting = 1 - arb(upper(eta)) * lam
        if contracting < 0:      # C1' = (1 - eta lam) C1 + eta lam S may leave C1 > 0: this tube cannot hold
            return (-1, None)
        if not (Y > 0 and S > 0 and lam > 0 and contracting >= 0):
            return (0, None)
        stepped = motion()
        if stepped is None:
            return (0, None)
        G, H, _ = stepped
        s_lo, s_hi = self._slope_hulls(lower(E * q["r"]), e_hi)
        # w' - lower(e') = nu width + eta (G + s_lo H) >= nu_lo min(width) + HI min(0, G + s_lo H), and
        # upper(e') - w' = (1 - nu) width - eta (G + s_hi H) >= (1 - nu_hi) min(width) + HI min(0, -(G + s_hi H)):
        # the bounds are formed from the exact ends nu_lo, nu_hi, HI (a ball of nu or eta with an end at 0 would
        # reach below it)
        hi = arb(upper(eta))
        low = arb(nu_lo) * width + hi * _negative_part(G + s_lo * H)
        high = (1 - arb(nu_hi)) * width + hi * _negative_part(-(G + s_hi * H))
        if width > 0 and low >= 0 and high >= 0:
            return (1, None)
        return (0, None)

    def _condition(self, cond, E, W, Bz, X1, step=None):
        if cond == "band_upper":
            return self.bm._condition(cond, E, W, Bz, X1)
        if cond in ("d5_upper_regular", "d12_regular"):
            return self._regular(cond, E, W, step)
        more = self.bm._condition_more(cond, E, W, X1, step)
        if more is not None:
            return more
        g2 = self.g2
        if cond == "lag":
            return (self.arb(self.c_lag) - abs(W)) / self.c_lag
        if cond == "dx_lower_qlag":
            return (X1 - self.q_lag * g2) / g2
        if cond == "dx_upper":          # (g2 - X1)/e^m >= 0; a mutated g2 (g2_claim) adds (g2_claim - g2)/e^m
            return self._slack(E, W, Bz) / g2
        if cond == "increment_upper_psi":
            # (g2 psi_* - X1 psi(v))/g2 = e^m slack/g2 + eta P, v = 2 eta e^2 X1/scale, psi(v) - 1 = v chi(v):
            # P = (2/scale)(g2_claim a chi(v_*) - e^2 X1^2 chi(v))/g2, a = g2_claim (K/N)^2. Both parts > 0
            # give >= 0 for every e >= 0, eta >= 0 (the sum itself is 0 at e = 0, eta = 0)
            arb = self.arb
            v = 2 * self.eta * E * E * X1 / self.scale
            chi = hull(arb(1) / 2, v.exp() / 2)
            v_star = 2 * self.eta * self.g2_claim * (self.K / self.N) ** 2 / self.scale
            chi_star = hull(arb(1) / 2, v_star.exp() / 2)
            em = E if self.m == 1 else E * E
            slack = self._slack(E, W, Bz) / g2
            P = 2 * (self.g2_claim ** 2 * (self.K / self.N) ** 2 * chi_star - E * E * X1 * X1 * chi) / (self.scale * g2)
            total = em * slack + self.eta * P
            if slack > 0 and P > 0:   # a certified lower bound: min(e^m) min(slack) + LO min(P) >= 0
                floor = arb(max(0.0, lower(em))) * arb(lower(slack)) + arb(self.eta_lo) * arb(lower(P))
                return (1, max(0.0, lower(floor)))
            return (1 if total > 0 else (-1 if total < 0 else 0), lower(total))
        raise KeyError(cond)

    def _regular(self, cond, E, W, q):
        """Lemmas D.5 and D.12 multiplied by ``(1 - e)`` and ``(1 - e)^2``: the per-instance conditions
        (:mod:`.region`'s ``d5_upper``, ``d12``) have ``Dp - 1 = N (1 - e) p`` in a denominator, which vanishes at
        the tube's start ``e = 1`` (t = 1, where D.5's bound is infinite and D.12 does not apply). For ``e < 1``
        the signs agree. D.12's ``(1 - e)^2 g'(xi) = rho^2 h(xi)`` with ``h = (1 - xi)^2 g'(xi)`` (the kernel's
        ``g_prime_regular``) and ``rho = (1 - e)/(1 - xi)`` in ``[(1 - e)/(1 - e r), 1]`` (``e' = e r <= xi <= e``;
        decreasing in e, increasing in r: its least value at the box's largest e and least r)."""
        arb, k, c, K, N = self.arb, self.k, self.c, self.K, self.N
        ratio = k.a_over_f3(E, c)
        if cond == "d5_upper_regular":   # (1 - e)(4/5 (A/F3)(K + N e)/(K (1 - e)) - w e^2)
            return 4 * ratio * (K + N * E) / (5 * K) - W * E * E * (1 - E)
        e_top, r_low = arb(upper(E)), arb(lower(q["r"]))
        rho_low = (1 - e_top) / (1 - e_top * r_low)
        rho_low = max(0.0, lower(rho_low)) if rho_low.is_finite() else 0.0
        rho2 = hull(arb(rho_low) ** 2, arb(1))
        D = self.cfg.D
        return 2 * D * q["pn"] * ratio / (K * N * q["p"] * q["p"]) - k.g_prime_regular(q["xi"], c) * rho2

    def _t1_condition(self, cond, E, W, X1, q, motion):
        """(sign, lower bound) of the conditions around t1 (:data:`T1_CONDITION_OF`) on one box; ``q`` the next
        step's quantities and ``motion()`` the step's ``(G, H, q)`` (:meth:`step`), shared with invariance."""
        arb = self.arb
        rho = 1 + W * E * E * E
        if cond == "band_lower_kept":
            if rho < arb("0.95"):          # no point of the box has rho >= 0.95: nothing to keep
                return (1, None)
            stepped = motion()
            if stepped is None:
                return (0, None)
            G = stepped[0]
            r, phi = q["r"], q["phi"]   # e' = e r, 1 - r = u phi
            bracket = arb("0.05") * E * E * X1 * phi * (1 + r + r * r) / self.scale + G * E * E * E * r * r * r
            above = max(0.0, lower(rho - arb("0.95")))   # rho - 0.95 >= this at every point that must keep it
            value = arb(above) * r * r * r + arb(upper(self.eta)) * _negative_part(bracket)
            return (1 if value >= 0 else 0, None)
        # attention_before_t1
        if rho >= arb("0.95"):              # every point has rho >= 0.95: not a step before t1
            return (1, None)
        D = self.cfg.D
        bound = (1 + arb(D) ** arb("-0.25")) / D
        v = (bound - q["pn"]) / bound   # p' >= p (e' <= e)
        return (1 if v > 0 else (-1 if v < 0 else 0), lower(v))

    def _slack(self, E, W, Bz):
        """(g2_claim - X1)/e^m: the kernel's slack, plus a mutation's (g2_claim - g2)/e^m (unbounded, so
        never positive, on a box that reaches e = 0)."""
        base = self.k.slack_upper(E, W, Bz, self.c)
        if self.g2_claim is self.g2:
            return base
        return base + (self.g2_claim - self.g2) / (E if self.m == 1 else E * E)

    def alpha_negative(self, e_lo: float, e_hi: float) -> bool:
        """1 - HI lam(e) < 0 somewhere on [e_lo, e_hi] (certainly, at the box's ends)."""
        arb = self.arb
        return any(bool(1 - arb(upper(self.eta)) * (1 - self.k.alpha(arb(e), self.c)) < 0) for e in (e_lo, e_hi))

    def c1_step_start(self):
        """Lemma D.13's C1 step at t = 0, relative: ``(first_c1 - D^2 F3(1)/(40 K))/(D^2 F3(1)/(40 K))``
        (``C1(1) = eta first_c1``, ``p(0) = 1/D``, ``e = 1``)."""
        arb, D = self.arb, self.cfg.D
        bound = arb(D) ** 2 * self.k.f3(arb(1), self.c) / (40 * self.K)
        return (self.k.first_c1(self.c) - bound) / bound

    def start_inside(self):
        """The state at t = 1 (e = 1, C1(1) = eta first_c1) in T for every eta in the box:
        nu(1) = C1(1)/(C1*(1) (upper(1) + 1)) in [0, 1] and C1(1) > 0 for eta > 0."""
        arb, k, c = self.arb, self.k, self.c
        f1 = k.first_c1(c)           # C1(1)/eta
        S1 = k.star(arb(1), c)
        nu1 = self.eta * f1 / (S1 * (1 + arb(self.tube.upper_w[-1])))
        return bool(f1 > 0 and S1 > 0 and nu1 <= 1)


def _negative_part(x):
    """min(0, x) as a ball (0 when x is certainly >= 0)."""
    if x >= 0:
        return arb(0)
    return x if x.upper() <= 0 else hull(x, arb(0))


def k_facts(cfg: EtaBox) -> dict:
    """The sympy facts of ``cfg``'s kernels (:func:`rdyn.verification.proofs.kernels.kernels`)."""
    return kernels(cfg.activation, cfg.logit_scale).facts


def _round_up(v: float) -> float:
    """A float with few digits at or above v (so c_lag prints short)."""
    for digits in range(6, 17):
        t = float(f"{v:.{digits}g}")
        if t >= v:
            return t
    return math.nextafter(v, math.inf)


def choose_tube(cfg: EtaBox, pad: float = 0.5, grid: int = 256) -> Tube:
    """A tube around the slow-manifold lag ``w*(e)``, the zero in w of ``G`` at eta = 0 (``X1`` at
    w = 0; ``C1*'(e) X1/(scale C1*(e) lam(e))`` for small e), on a grid of [0, 1]: ``[w_lo, w_hi]`` is
    the range of w* widened by ``pad`` times the larger of its width and its largest |w*|; the lower edge
    rises from -1 at e = 1 to w_lo at ``e_flat = 1 - delta``
    like ``w_lo - g0 (exp(kappa (e - e_flat)) - 1)`` (g0 the gap between w* and w_lo), a barrier that
    the field crosses upward, the upper edge its mirror image above w_hi; delta (at least 0.02, at most
    half the way down to K/N) keeps kappa below a quarter of lam/H, the steepest barrier the field
    crosses (any tube may be tried; invariance is what is proved). Computed at :data:`PREC_BITS`, as
    :func:`prove_box`'s balls, whatever the caller's precision (the tube is then the same in every process)."""
    with flint.ctx.workprec(PREC_BITS):
        return _choose_tube(cfg, pad, grid)


def _choose_tube(cfg: EtaBox, pad: float, grid: int) -> Tube:
    f = BoxField(cfg, Tube((0.5, 1.0), (0.0, -1.0), (1.0, 1.0)), 0.0, 0.0)   # its kernels and constants only
    k, c = f.k, f.c
    room = (1 - cfg.K / (cfg.D - cfg.K)) / 2     # the barrier stays above (1 + K/N)/2 > K/N
    values, rates = [], []
    for i in range(grid + 1):   # the zero in w of G at eta = 0 (X1 at w = 0): G = a w + b
        e = arb(i / grid)
        X1 = k.dx_e2(e, arb(0), f._bz(i / grid, i / grid), c)
        S, Sp, lam = k.star(e, c), k.star_prime(e, c), 1 - k.alpha(e, c)
        a = -lam + e * e * X1 * (Sp * e + 3 * S) / (f.scale * S)
        values.append(float((-Sp * X1 / (f.scale * S * a)).mid()))
        if i / grid >= 1 - room:   # how steep a barrier the field still crosses: lam/H, H = e^3 X1/scale
            rates.append(float((lam * f.scale / (e * e * e * X1)).mid()) if X1 > 0 else math.inf)
    lo, hi = min(values), max(values)
    width = max(hi - lo, abs(lo), abs(hi), 1e-30)
    w_lo, w_hi = lo - pad * width, hi + pad * width
    g0 = pad * width
    # the barrier's growth rate kappa at most a quarter of the smallest lam/H (the edges move C1 by up to
    # a factor 2, and with it H), so that G + s H keeps its sign at both edges
    steepest = min(rates, default=math.inf) / 4
    delta = min(room, max(0.02, math.log((1 + w_lo) / g0 + 1) / steepest))
    e_flat = 1.0 - delta
    kappa = math.log((1 + w_lo) / g0 + 1) / delta
    knots_e = [e_flat + delta * i / KNOTS for i in range(KNOTS)] + [1.0]
    rise = [g0 * math.expm1(kappa * (e - e_flat)) for e in knots_e[:-1]]
    lower_w = [max(-1.0, w_lo - r) for r in rise] + [-1.0]
    upper_w = [w_hi + r for r in rise] + [w_hi + 1 + w_lo]   # the mirror image: the field crosses it downward
    return Tube(tuple(knots_e), tuple(lower_w), tuple(upper_w))


PADS = (0.5, 2.0, 8.0, 32.0)    # tubes tried, narrowest first (choose_tube's pad)
MAX_SPLITS = 3                  # an eta box that fails is bisected down to 1/8 of its width


def prove_box(cfg: EtaBox, tube: Tube, *, max_boxes: int = DEFAULT_MAX_BOXES, c_lag: float | None = None,
              mutate: dict | None = None, progress=None, conditions=None) -> BoxProof:
    """Branch and bound over ``tube`` for every eta in ``(cfg.lo, cfg.hi]``: invariance on all of T and
    the start inside it, the statements' conditions on ``e <= K/N`` (``dx_upper`` on all of T).
    ``c_lag``: the lag lemma's constant to decide instead of the tube's ``max(|w_lo|, |w_hi|)``;
    ``mutate``: factors on ``g2`` and ``q_lag`` (tests: a constant made 1e-6 tighter is refused);
    ``conditions``: those of :data:`LATE`, :data:`ALL_STEPS` and :data:`PHASE_TIMES` to decide (default all)."""
    with flint.ctx.workprec(PREC_BITS):
        return _prove_box(cfg, tube, max_boxes, c_lag, mutate, progress, conditions)


def _prove_box(cfg, tube, max_boxes, c_lag, mutate, progress, wanted):
    t0 = time.perf_counter()
    f = BoxField(cfg, tube, cfg.lo, cfg.hi, c_lag=c_lag, mutate=mutate)
    conditions = tuple(c for c in LATE + ALL_STEPS if c in (wanted or LATE + ALL_STEPS))
    e_star = upper(f.e_star)
    # Delta x <= eta g2 e^2 on all of T (every step t >= 1): also at T* - 1, which R_hi's first step needs
    reach = {**{c: e_star for c in LATE}, **{c: 1.0 for c in ALL_STEPS}}
    constants = {"c_lag": f.c_lag, "q_min": [lower(f.q_min), upper(f.q_min)],
                 "q_lag": [lower(f.q_lag), upper(f.q_lag)], "g2": [lower(f.g2), upper(f.g2)]}

    def failed(why):
        return BoxProof(cfg.lo, cfg.hi, False, {c: False for c in conditions}, {c: None for c in conditions}, 0,
                        time.perf_counter() - t0, why, constants)
    if not f.start_inside():
        return failed("the state at t = 1 is not inside the tube for every eta of the box")
    if not f.q_lag > 0:
        return failed(f"q_lag = q_min (1 - c_lag (K/(D-K))^2) > 0 is not certain (c_lag = {f.c_lag!r})")
    roots = []
    for i, (a, b, *_) in enumerate(tube.pieces()):
        edges = [a] + [x for x in (e_star,) if a < x < b] + [b]
        roots += [(i, lo, hi, 0.0, 1.0) for lo, hi in zip(edges, edges[1:])]

    def evaluate(box, pending):   # a condition is only asked on e < its reach (shown elsewhere, nothing recorded)
        asked = tuple(c for c in pending if c == "invariant" or box[1] < reach[c])
        res = f.evaluate(*box, asked)
        return {c: (res[c][0], res[c][1], None) if c in res else (bb.SHOWN, None, None) for c in pending}

    def too_small(box):
        _, e_lo, e_hi, nu_lo, nu_hi = box
        return e_hi - e_lo <= MIN_WIDTH and nu_hi - nu_lo <= 2.0**-30

    def split(box, left, results):
        piece, e_lo, e_hi, nu_lo, nu_hi = box
        e_rel = (e_hi - e_lo) / max(min(f.pieces[piece][1] - f.pieces[piece][0], E_SCALE), 1e-300)
        if e_rel >= (nu_hi - nu_lo) * 0.25 and e_hi - e_lo > MIN_WIDTH:
            m = (e_lo + e_hi) / 2
            return [((piece, e_lo, m, nu_lo, nu_hi), None), ((piece, m, e_hi, nu_lo, nu_hi), None)], 0
        m = (nu_lo + nu_hi) / 2
        return [((piece, e_lo, e_hi, nu_lo, m), None), ((piece, e_lo, e_hi, m, nu_hi), None)], 0

    rules = bb.Rules(evaluate, split, too_small, fatal=frozenset({"invariant"}), carry="all")
    found = bb.search(roots, ("invariant",) + conditions, rules, max_boxes=max_boxes, progress=progress,
                      progress_every=5000)
    boxes = found.boxes
    decided = {c: found.shown[c] for c in conditions}
    margins = {c: found.low[c] for c in conditions}
    invariant, reason = found.shown["invariant"], None
    if found.exhausted is not None:
        (_, e_lo, e_hi, nu_lo, nu_hi), _ = found.exhausted
        reason = (f"the box budget ran out ({max_boxes} boxes left for this eta box) at e in [{e_lo:.6g}, "
                  f"{e_hi:.6g}], nu in [{nu_lo:.4g}, {nu_hi:.4g}]")
        invariant = False
    elif found.failures:
        n, ((_, e_lo, e_hi, nu_lo, nu_hi), sign, _) = next(iter(found.failures.items()))
        where = f"e in [{e_lo:.6g}, {e_hi:.6g}], nu in [{nu_lo:.4g}, {nu_hi:.4g}]"
        reason = f"{'invariance' if n == 'invariant' else n} {'fails' if sign < 0 else 'not shown'} on the box {where}"
    if found.ended_by is not None:
        _, (_, e_lo, e_hi, _, _), _ = found.ended_by
        if f.alpha_negative(e_lo, e_hi):
            reason = (f"alpha = 1 - eta lam(e) < 0 for eta near {cfg.hi!r} at e in [{e_lo:.6g}, {e_hi:.6g}]: C1's "
                      f"update no longer keeps C1 > 0 (the map's branch); the tube needs eta lam <= 1")
    if not invariant:
        decided = {c: False for c in conditions}
    decided["structural"] = invariant   # C1 > 0 and Delta(C2+C3) > 0 at every t >= 1: part of the invariance proof
    margins["structural"] = math.inf
    start = f.c1_step_start()          # Lemma D.13's C1 step (T1_CONDITION_OF): t >= 1 by the identity, t = 0 here
    decided["c1_step"] = bool(invariant and k_facts(cfg)["beta_is_eta_D_F3_over_Kp"] and start > 0)
    margins["c1_step"] = lower(start) if decided["c1_step"] else math.inf
    asked = set(wanted or PHASE_TIMES)   # the phase times only when a statement needs them (T* needs t1's)
    scaling = None                       # both need the invariance
    if invariant and asked & set(PHASE_TIMES):
        scaling = phase_times.t1_bounds(f.k, f.c, f.scale, f._bz, cfg.hi)
    decided["t1_scaling"] = scaling is not None
    margins["t1_scaling"] = scaling.a if scaling is not None else math.inf
    crossing = None   # T*: also needs rho >= 0.95 kept from t1 on
    if scaling is not None and "tstar_scaling" in asked and decided.get("band_lower_kept"):
        crossing = phase_times.tstar_bounds(f.k, f.c, f.scale, f._bz, tube, cfg.K, cfg.D - cfg.K, cfg.hi, scaling)
    decided["tstar_scaling"] = crossing is not None
    margins["tstar_scaling"] = crossing.a if crossing is not None else math.inf
    for shown in (scaling, crossing):
        if shown is not None:
            constants.update(shown.to_dict())
    return BoxProof(cfg.lo, cfg.hi, invariant, decided,
                    {c: (v if decided[c] and v != math.inf else None) for c, v in margins.items()}, boxes,
                    time.perf_counter() - t0, reason, constants)


@dataclass
class BoxReport:
    """``rdyn prove --eta LO:HI``: the statements of :data:`STATEMENT_KEYS` for every eta of the box."""

    cfg: EtaBox
    results: list
    proofs: list              # [(BoxProof, Tube)] of the sub-boxes tried last
    seconds: float
    interrupted: bool = False  # stopped by SIGINT/SIGTERM: the eta not reached are open boxes of each statement

    def to_dict(self) -> dict:
        boxes = sum(p.boxes for p, _ in self.proofs)
        data = {"instance": self.cfg.to_dict(), "T_star": None, "statements": [r.to_dict() for r in self.results],
                "superseded": [], "region": {"tubes": [{"eta": [p.lo, p.hi], **t.to_dict(), "invariant": p.invariant,
                                                        "boxes": p.boxes, "seconds": round(p.seconds, 3),
                                                        "reason": p.reason} for p, t in self.proofs],
                                             "boxes": boxes},
                "t1": None, "box": {"eta": [self.cfg.lo, self.cfg.hi], "D": [self.cfg.D, self.cfg.D]},
                "seconds": round(self.seconds, 3)}
        if self.interrupted:
            data["complete"] = False
        return data

    @property
    def all_corrected_certified(self) -> bool:
        """Every corrected statement decided is certified (the exit status, as for one instance)."""
        return all(r.verdict == "certified" for r in self.results if r.statement.form == "corrected")


def prove(cfg: EtaBox, labels=None, *, max_boxes: int = DEFAULT_MAX_BOXES, c_lag: float | None = None,
          mutate: dict | None = None, pads=PADS, progress=None, done=None) -> BoxReport:
    """Decide the statements of :data:`STATEMENT_KEYS` (those whose label is in ``labels``) for every eta
    of ``(cfg.lo, cfg.hi]``. Each tube of ``pads`` (:func:`choose_tube`) is tried on the whole box; a box that no tube
    decides is bisected (at most :data:`MAX_SPLITS` times) and the sub-boxes left open are listed with
    why. ``--max-boxes`` is one budget for all of it. ``done(proof, tube)`` after each eta sub-box is final
    (a caller interrupted in between keeps those: :func:`box_report` with ``interrupted=True``)."""
    t0 = time.perf_counter()
    structure = k_facts(cfg)["eta_structure"]   # decided by sympy, cached with the kernels
    chosen = _chosen(labels)
    tubes = [choose_tube(cfg, pad) for pad in pads]
    needed = tuple(dict.fromkeys(c for s in chosen for c in RANGE_NEEDS.get(CONDITION_OF[s.key], (CONDITION_OF[s.key],))
                                 if c not in ("structural", "c1_step")))
    proofs, used = [], 0
    if not all(structure.values()):
        why = "the map is not eta times an eta-free field: " + ", ".join(k for k, v in structure.items() if not v)
        proofs = [(BoxProof(cfg.lo, cfg.hi, False, {}, {}, 0, 0.0, why), tubes[0])]
    todo = [] if proofs else [(cfg.lo, cfg.hi, 0)]
    while todo:
        lo, hi, depth = todo.pop(0)
        sub = EtaBox(**{**cfg.__dict__, "lo": lo, "hi": hi})
        for i, tube in enumerate(tubes):   # each tube a fair share of what is left (the last one all of it);
            share = max(1, (max_boxes - used) // (len(tubes) - i))   # a wider one only when invariance failed
            p = prove_box(sub, tube, max_boxes=share, c_lag=c_lag, mutate=mutate, progress=progress,
                          conditions=needed)
            used += p.boxes
            if p.invariant or used >= max_boxes:
                break
        if not all(p.decided.get(CONDITION_OF[s.key], False) for s in chosen) and depth < MAX_SPLITS \
                and used < max_boxes and p.invariant is False:
            mid = (lo + hi) / 2
            todo += [(lo, mid, depth + 1), (mid, hi, depth + 1)]
            continue
        proofs.append((p, tube))
        if done is not None:
            done(p, tube)
    return box_report(cfg, proofs, labels, time.perf_counter() - t0)


def box_report(cfg: EtaBox, proofs: list, labels=None, seconds: float = 0.0, *,
               interrupted: bool = False) -> BoxReport:
    """The :class:`BoxReport` of the eta sub-boxes in ``proofs`` (``[(BoxProof, Tube)]``); with
    ``interrupted``, the parts of ``(cfg.lo, cfg.hi]`` they do not cover are open boxes of every statement."""
    proofs = sorted(proofs, key=lambda pt: pt[0].lo) if interrupted else list(proofs)
    gaps = _uncovered(cfg.lo, cfg.hi, [(p.lo, p.hi) for p, _ in proofs]) if interrupted else []
    results = [_verdict(s, cfg, proofs, gaps) for s in _chosen(labels)]
    return BoxReport(cfg, results, proofs, seconds, interrupted)


def _chosen(labels) -> list:
    return [s for s in st.STATEMENTS + RANGE_STATEMENTS if s.key in STATEMENT_KEYS
            and (labels is None or s.label in labels)]


def _uncovered(lo: float, hi: float, done: list) -> list:
    """The sub-intervals of ``(lo, hi]`` that no ``(a, b]`` of ``done`` covers, in order."""
    gaps, at = [], lo
    for a, b in sorted(done):
        if a > at:
            gaps.append((at, a))
        at = max(at, b)
    if at < hi:
        gaps.append((at, hi))
    return gaps


def _verdict(s, cfg: EtaBox, proofs, gaps=()):
    cond = CONDITION_OF[s.key]
    proved = [(p, t) for p, t in proofs if p.invariant and p.decided.get(cond)]
    open_ = [{"D": [cfg.D, cfg.D], "eta": [p.lo, p.hi], "reason": p.reason or f"{cond} not shown"} for p, _ in proofs
             if not (p.invariant and p.decided.get(cond))]
    open_ += [{"D": [cfg.D, cfg.D], "eta": [a, b], "reason": f"interrupted before eta in ({a!r}, {b!r}] was decided"}
              for a, b in gaps]
    if gaps:
        open_.sort(key=lambda b: b["eta"][0])
    margins = [p.margins[cond] for p, _ in proved if p.margins.get(cond) is not None]
    cert = {"box": {"eta": [cfg.lo, cfg.hi], "D": [cfg.D, cfg.D]},
            "proved_boxes": [{"D": [cfg.D, cfg.D], "eta": [p.lo, p.hi], "boxes": p.boxes,
                              "margin_on_region": p.margins.get(cond), "constants": p.constants,
                              "tube": {"w_lo": t.w_lo, "w_hi": t.w_hi}} for p, t in proved],
            "undecided_boxes": open_, "region_condition": cond,
            "margin_on_region": min(margins) if margins else None,
            "seconds": round(sum(p.seconds for p, _ in proofs), 3)}
    if open_:
        first = open_[0]
        return StatementResult(s, "undecided", certificate=cert,
                               reason=f"not shown for eta in ({first['eta'][0]!r}, {first['eta'][1]!r}]: "
                                      f"{first['reason']}")
    return StatementResult(s, "certified", certificate=cert)


@dataclass
class RangeReport:
    """``rdyn prove --D LO:HI --eta LO:HI``: the statements of :data:`STATEMENT_KEYS` for every D in
    ``[cfg.D, d_hi]``, each D by its own :func:`prove`. A statement is certified when it is certified at
    every D; the D not reached by an interrupted run are one open box."""

    cfg: EtaBox               # the configuration at D = LO
    d_hi: int
    reports: list             # [BoxReport], one per D decided, in order of D
    chosen: tuple             # the statements decided
    seconds: float
    interrupted: bool = False

    @property
    def results(self) -> list:
        return [self._merged(i, s) for i, s in enumerate(self.chosen)]

    def _merged(self, i: int, statement):
        certs = [rep.results[i].certificate for rep in self.reports]
        proved = [b for c in certs for b in c["proved_boxes"]]
        open_ = [b for c in certs for b in c["undecided_boxes"]]
        first = self.cfg.D + len(self.reports)   # the last report may be a D interrupted part way (its own gaps)
        if self.interrupted and first <= self.d_hi:
            open_.append({"D": [first, self.d_hi], "eta": [self.cfg.lo, self.cfg.hi],
                          "reason": f"interrupted before D = {first} was decided"})
        margins = [c["margin_on_region"] for c in certs if c["margin_on_region"] is not None]
        cert = {"box": {"eta": [self.cfg.lo, self.cfg.hi], "D": [self.cfg.D, self.d_hi]},
                "proved_boxes": proved, "undecided_boxes": open_, "region_condition": CONDITION_OF[statement.key],
                "margin_on_region": min(margins) if margins else None,
                "seconds": round(sum(c["seconds"] for c in certs), 3)}
        if not open_:
            return StatementResult(statement, "certified", certificate=cert)
        b = open_[0]
        where = f"D = {b['D'][0]}" if b["D"][0] == b["D"][1] else f"D in [{b['D'][0]}, {b['D'][1]}]"
        return StatementResult(statement, "undecided", certificate=cert,
                               reason=f"not shown for {where}, eta in ({b['eta'][0]!r}, {b['eta'][1]!r}]: "
                                      f"{b['reason']}")

    def to_dict(self) -> dict:
        tubes = [{"D": rep.cfg.D, **t} for rep in self.reports for t in rep.to_dict()["region"]["tubes"]]
        return {"instance": {**self.cfg.to_dict(), "D": None, "D_box": [self.cfg.D, self.d_hi]}, "T_star": None,
                "statements": [r.to_dict() for r in self.results], "superseded": [],
                "region": {"tubes": tubes, "boxes": sum(t["boxes"] for t in tubes)}, "t1": None,
                "box": {"eta": [self.cfg.lo, self.cfg.hi], "D": [self.cfg.D, self.d_hi]},
                "complete": not self.interrupted, "seconds": round(self.seconds, 3)}

    @property
    def all_corrected_certified(self) -> bool:
        """Every corrected statement certified at every D of the range (the exit status)."""
        return all(r.verdict == "certified" for r in self.results if r.statement.form == "corrected")


def prove_d_range(cfg: EtaBox, d_hi: int, labels=None, *, max_boxes: int = DEFAULT_MAX_BOXES, progress=None,
                  done=None, box_done=None) -> RangeReport:
    """:func:`prove` at every ``D`` in ``[cfg.D, d_hi]`` (each with the full ``max_boxes``), merged into one
    :class:`RangeReport`; ``done(D, report)`` after each D and ``box_done(D, proof, tube)`` after each eta
    sub-box of it (a caller interrupted in between keeps those: :func:`box_report` of the D in progress and
    :func:`range_report`, both with ``interrupted=True``)."""
    t0 = time.perf_counter()
    reports = []
    for D in range(cfg.D, d_hi + 1):
        sub_done = None if box_done is None else (lambda p, t, D=D: box_done(D, p, t))
        reports.append(prove(EtaBox(**{**cfg.__dict__, "D": D}), labels, max_boxes=max_boxes, progress=progress,
                             done=sub_done))
        if done is not None:
            done(D, reports[-1])
    return range_report(cfg, d_hi, reports, labels, time.perf_counter() - t0)


def range_report(cfg: EtaBox, d_hi: int, reports: list, labels=None, seconds: float = 0.0, *,
                 interrupted: bool = False) -> RangeReport:
    """The :class:`RangeReport` of the D in ``reports`` (those of ``[cfg.D, d_hi]`` decided, in order; the
    last one may be an interrupted :func:`box_report`)."""
    return RangeReport(cfg, d_hi, list(reports), tuple(_chosen(labels)), seconds, interrupted)


def sweep(configs, *, max_boxes: int = DEFAULT_MAX_BOXES, progress=None) -> dict:
    """:func:`prove` with ``(0 or lo, hi]`` at every configuration of ``configs`` (dicts with activation, D,
    K, kappa, vstar_norm2, logit_scale and ``eta = (lo, hi)``, e.g.
    :func:`rdyn.verification.claims.strength.eta_box_configs`): ``{(activation, D, K): BoxReport}``."""
    out = {}
    for i, c in enumerate(configs):
        cfg = EtaBox(D=c["D"], K=c["K"], activation=c["activation"], kappa=c.get("kappa", 0.0),
                     vstar_norm2=c["vstar_norm2"], logit_scale=c["logit_scale"], lo=c["eta"][0], hi=c["eta"][1])
        out[(c["activation"], c["D"], c["K"])] = prove(cfg, max_boxes=max_boxes)
        if progress is not None:
            progress(i + 1, len(configs))
    return out


def c_lag_table(reports: dict, activation: str) -> str:
    """The markdown table of the certified c_lag (three significant digits) of one activation's reports of
    :func:`sweep`: D down, K across (docs/proofs.md, "Every step size at once")."""
    Ds = sorted({D for a, D, _ in reports if a == activation})
    Ks = sorted({K for a, _, K in reports if a == activation})
    lines = [f"| {activation}: D \\ K | " + " | ".join(str(K) for K in Ks) + " |", "| --- |" + " --- |" * len(Ks)]
    for D in Ds:
        cells = []
        for K in Ks:
            rep = reports.get((activation, D, K))
            proved = [] if rep is None else rep.results[0].certificate["proved_boxes"]
            cells.append(f"{proved[0]['constants']['c_lag']:.3g}" if proved else "")
        lines.append(f"| {D} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
