"""Steps t >= T0: an invariant region and interval branch and bound (python-flint ``arb``).

Coordinates: ``e = exp(-x/scale)`` (``x = C2 + C3``; e decreases to 0 as t -> oo) and
``w = (C1/C1*(e) - 1)/e^3`` (the lag of C1 behind the slow manifold, of order 1 because C1 relaxes
to C1* at the rate lambda while C1* moves by O(e^3) per step). The region is the box

    R = { 0 <= e <= e_top, w_lo <= w <= w_hi },

``e_top`` the upper end of the certified ball of e(T0), the band ``[w_lo, w_hi]`` chosen around
the slow-manifold lag ``w*(e)`` and the certified w(T0). One step of the map in these coordinates
(no 0/0 anywhere, so e = 0 is a point of R like any other):

    Delta x = e^2 X(e, w)                      X = dx_e2 of :mod:`.kernels` (atan(c e) = z - z^3 B)
    e' = e r,  r = exp(-u),  u = e^2 X/scale
    w' = (alpha(e) C1*(e) w + C1*'(xi) X phi(u)/scale) / (C1*(e') r^3),

with ``1 - r = u phi(u)``, ``phi(u)`` in ``[1 - u/2, 1]`` for u >= 0, ``xi`` between e' and e
(mean value theorem for ``C1*(e) - C1*(e')``), and ``B`` enclosed over the box
(:func:`.balls.b_enclosure`). ``map(R)`` inside ``R`` holds when, on every box of a finite cover of
R, ``X > 0`` (so e' <= e <= e_top) and the ball of w' lies in ``[w_lo, w_hi]``. Each statement's
region condition (:data:`CONDITIONS`) must be certainly positive on every box; a box on which some
pending condition is undecided is bisected (in e, or in w when its e-width is already small),
down to a minimum width; the number of boxes is bounded by a budget.

Region conditions (normalised by eta g2):
  dx_upper          (eta g2 - X)/(e^m eta g2) >= 0        Delta x <= eta g2 e^2 (divided by e^m, m = 1, or 2
                                                          for identity: 0 at e = 0 otherwise)
  dx_lower          (X - q_min eta g2)/(eta g2) >= 0
  dx_lower_factor   (X - q_min eta g2 (1 - |w| e^3))/(eta g2) >= 0   (|C1/C1* - 1| = |w| e^3)
  dx_lower_lag      (X - q_min eta g2 (1 - |w| e^2))/(eta g2) >= 0   (|C1/C1* - 1|/e = |w| e^2)
  dx_printed_lower  (X - c_printed)/(eta g2) >= 0 (logits/D)
  dx_printed_upper  (c_printed - X)/(eta g2) >= 0 (logits/D)
  increment_upper   e^-2 grows by at most 2 g2 eta/scale per step: e'^-2 - e^-2 = (2 X/scale) psi(v),
                    v = 2 u, psi(v) = (exp(v) - 1)/v = 1 + v chi(v), chi in [1/2, exp(v)/2]; the condition
                    (eta g2 - X)/e^m - X^2 (2 e^(2-m)/scale) chi >= 0
  increment_lower   e^-2 grows by at least 2 q_min g2 eta/scale per step: implied by dx_lower (psi >= 1)
  lag               (c_lag - |w|)/c_lag >= 0               the lag lemma |C1/C1* - 1| <= c_lag e^3 (c_lag set by
                                                          the engine before the proof: :attr:`BoxMap.c_lag`)
  dx_lower_qlag     (X - q_lag eta g2)/(eta g2) >= 0       Lemma D.19 derived, q_lag = q_min (1 - c_lag (K/N)^2)
  increment_lower_qlag  the same: e^-2 grows by at least 2 q_lag eta g2/scale per step (psi >= 1)
  increment_upper_psi   e^-2 grows by at most (2 eta g2/scale) psi_* per step, psi_* = psi(2 eta g2 (K/N)^2/scale):
                    (eta g2 psi_* - X psi(v))/(eta g2) >= 0, v = 2 e^2 X/scale, psi(v) = 1 + v chi(v), evaluated
                    as (psi_* - 1) + e^m slack_upper/(eta g2) - X v chi/(eta g2) (no cancellation at e = 0)
  band_lower        1 + w e^3 - 0.95 >= 0                 C1 >= 0.95 C1* (Lemma D.17's band; not normalised)
  band_upper        4 pi - w e^3 >= 0                     C1 <= (4 pi + 1) C1*
  d5_upper          4/5 (A/F3)(K + N e)/(K (1 - e)) - w e^2 >= 0   Lemma D.5 (divided by e C1*; e_top < 1)
  d15_lower         min(1 + w e^3 - 0.95, w e^2 + 4/5 (A/F3)(K + N e)/(K (1 - e))) >= 0   Lemma D.15

Appendix D's remaining statements (p = 1/(K + N e), p' = 1/(K + N e r) the next step's, xi = hull(e', e);
the one-step differences are divided by e (1 - r) > 0, using Delta p = p p' N e (1 - r),
p (1 - K p) = N e p^2, 1 - r = u phi(u), C1*(e') - C1*(e) = -C1*'(xi) e (1 - r)):
  c1_positive       1 + w e^3                              C1/C1* > 0 (Lemma D.4 lower)
  d4_upper          (D - C1*(e)(1 + w e^3))/D              C1 <= D (Lemma D.4 upper)
  monotone          X/(eta g2)                             Delta(C2+C3) >= 0 (Lemma D.8 corrected)
  dp_lower          (p'/p) phi D/scale - 1/2               Lemma D.9, Delta p >= p(1-Kp) Delta x/(2D)
  dp_upper          D^2/(D^2-1) - (p'/p) phi D/scale       Lemma D.9, Delta p <= D p(1-Kp) Delta x/(D^2-1)
  dx_increment      (c - e^2 X)/c, c = eta M D(D+1)/(K^3 (D-K))   Lemma D.9 (increment)
  d10_vacuous       (p - b)/b, b = 1/(2 pi D K)            Lemma D.10 as printed: its hypothesis never holds
  d10_corrected     C1*'(e) > 0 below e_c, < 0 above, C1*'' < 0 on a box meeting [e_c]   Lemma D.10 corrected
                    (value: C1*'(e)/C1*(e) with the sign it must have; on a box meeting e_c's enclosure,
                    -C1*''(box and e_c)/C1*)
  d11               (3 D K p^2 p' N C1*(e)/(D K p^2 - 2 K p + 1) - C1*'(xi))/C1*(e)     Lemma D.11
  d12               2 D p' (A/F3)(e)/(K N p^2 (1-e)^2) - g'(xi)                          Lemma D.12
  d16               (3 (N + K C1*(e)) p p' N/(2 (D K p^2 - 2 K p + 1 - K Delta p)) + C1*'(xi))/C1*(e)  Lemma D.16
  d15_step          (0.025 - 3 N/D^2)/0.025                Lemma D.15's proof step (a constant)
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

from flint import arb

from rdyn.verification.proofs import branch_bound as bb
from rdyn.verification.proofs.balls import b_enclosure, ball, hull, lower, upper

CONDITIONS = ("dx_upper", "dx_lower", "dx_lower_factor", "dx_lower_lag", "dx_printed_lower", "dx_printed_upper",
              "increment_upper", "increment_lower", "band_lower", "band_upper", "d5_upper", "d15_lower",
              "lag", "dx_lower_qlag", "increment_lower_qlag", "increment_upper_psi",
              "c1_positive", "d4_upper", "monotone", "dp_lower", "dp_upper", "dx_increment", "d10_vacuous",
              "d10_corrected", "d11", "d12", "d16", "d15_step")
BLOCK_CONDITIONS = frozenset({"c1_positive", "d4_upper", "monotone", "dp_lower", "dp_upper", "dx_increment",
                              "d10_vacuous", "d10_corrected", "d11", "d12", "d16", "d15_step",
                              "d5_upper", "d15_lower", "band_lower", "band_upper"})
STEP_CONDITIONS = frozenset({"dp_lower", "dp_upper", "d11", "d12", "d16"})   # need e', p', xi
MIN_E_WIDTH = 2.0 ** -40


@dataclass(frozen=True)
class Region:
    e_top: float
    w_lo: float
    w_hi: float

    def to_dict(self) -> dict:
        return {"coordinates": "e = exp(-(C2+C3)/scale), w = (C1/C1*(e) - 1)/e^3",
                "e": [0.0, self.e_top], "w": [self.w_lo, self.w_hi]}


@dataclass
class RegionResult:
    region: Region
    invariant: bool
    decided: dict          # condition -> bool (certified on all of R)
    margins: dict          # condition -> smallest certified normalised slack on R
    boxes: int
    seconds: float
    reason: str | None     # where the budget ran out / what failed
    sups: dict | None = None   # condition -> largest upper end of its certified ball over R (None if not decided)


class BoxMap:
    """Evaluates the map and the conditions on one box (arb balls)."""

    def __init__(self, k, c, consts, atan_coefficient, slack_power: int = 1):
        self.k, self.c = k, c
        self.scale = consts["scale"]
        self.eg2 = consts["eta_g2"]
        self.qmin = consts["q_min"]
        self.printed_lower = consts.get("printed_d19_lower")
        self.printed_upper = consts.get("printed_d19_upper")
        self.cz = atan_coefficient   # ball or None
        self.m = slack_power         # slack_upper is (eta g2 - X)/e^m
        self.K, self.N = consts["K"], consts["N"]
        self.arb = arb
        self.D = consts["K"] + consts["N"]
        self.d9_increment = consts.get("d9_increment")
        self.psi_star = consts.get("psi_star")   # psi(2 eta g2 (K/N)^2/scale) (ball)
        self.c_lag = None                     # the lag lemma's constant (float) and q_lag (ball): set by the
        self.q_lag = None                     # engine once the band is chosen (conditions lag, *_qlag)
        self.e_c = consts.get("e_c")          # (lo, hi) floats: the enclosure of C1*'s turning point, or None
        if self.e_c is not None and not (k.star_prime(arb(self.e_c[0]), c) > 0 > k.star_prime(arb(self.e_c[1]), c)):
            self.e_c = None                   # not an enclosure of a sign change: Lemma D.10 corrected undecided

    def evaluate(self, e_lo, e_hi, w_lo, w_hi, pending, band):
        arb = self.arb
        E, W = ball(e_lo, e_hi), ball(w_lo, w_hi)
        if self.cz is None:
            Bz = arb(0)
        else:
            Bz = b_enclosure(max(0.0, lower(self.cz * arb(e_lo))), upper(self.cz * arb(e_hi)))
        X = self.k.dx_e2(E, W, Bz, self.c)
        res = {}
        step = None
        for cond in pending:
            if cond == "invariant":
                res[cond] = self._invariant(E, W, X, band)
                continue
            if cond == "valid":     # the map's branch and e' <= e on the box (no invariance)
                ok = X > 0 and self.k.star(E, self.c) > 0 and 1 + W * E * E * E > 0
                res[cond] = (1 if ok else 0, None)
                continue
            if cond in STEP_CONDITIONS and step is None:
                step = self._step(E, X)
            v = self._condition(cond, E, W, Bz, X, step)
            res[cond] = (1 if v > 0 else (-1 if v < 0 else 0), v)
        return res

    def _step(self, E, X):
        """The next step's quantities on a box: u, r, phi, p, p', xi = hull(e', e)."""
        arb = self.arb
        u = E * E * X / self.scale
        r = (-u).exp()
        phi = hull(1 - u / 2, arb(1))
        p = 1 / (self.K + self.N * E)
        pn = 1 / (self.K + self.N * E * r)
        return {"u": u, "r": r, "phi": phi, "p": p, "pn": pn, "xi": hull(E * r, E)}

    def _condition(self, cond, E, W, Bz, X, step=None):
        out = self._condition_more(cond, E, W, X, step)
        if out is not None:
            return out
        eg2 = self.eg2
        if cond == "dx_upper":
            return self.k.slack_upper(E, W, Bz, self.c) / eg2
        if cond in ("dx_lower", "increment_lower"):
            return (X - self.qmin * eg2) / eg2
        if cond == "dx_lower_lag":      # factor 1 - |C1/C1* - 1|/e = 1 - |w| e^2
            return (X - self.qmin * eg2 * (1 - abs(W) * E * E)) / eg2
        if cond == "lag":               # |C1/C1* - 1| <= c_lag e^3
            return (self.arb(self.c_lag) - abs(W)) / self.c_lag
        if cond in ("dx_lower_qlag", "increment_lower_qlag"):
            return (X - self.q_lag * eg2) / eg2
        if cond == "increment_upper_psi":   # (2 X/scale) psi(2 e^2 X/scale) <= (2 eta g2/scale) psi_*, as
            v = 2 * E * E * X / self.scale  # (psi_* - 1) + e^m (eta g2 - X)/(e^m eta g2) - X v chi/(eta g2)
            chi = hull(self.arb(1) / 2, v.exp() / 2)
            em = E if self.m == 1 else E * E
            return (self.psi_star - 1) + em * self.k.slack_upper(E, W, Bz, self.c) / eg2 - X * v * chi / eg2
        if cond == "dx_lower_factor":   # factor 1 - |C1/C1* - 1| = 1 - |w| e^3
            return (X - self.qmin * eg2 * (1 - abs(W) * E * E * E)) / eg2
        if cond == "dx_printed_lower":
            return (X - self.printed_lower) / eg2
        if cond == "dx_printed_upper":
            return (self.printed_upper - X) / eg2
        if cond == "d5_upper":        # (C1*-factor - C1/C1*)/e: 4/5 (A/F3) (K + N e)/(K (1 - e)) - w e^2
            K, N = self.K, self.N
            return (4 * self.k.a_over_f3(E, self.c) * (K + N * E) / (5 * K * (1 - E)) - W * E * E)
        if cond == "d15_lower":       # 1 + w e^3 >= max(0.95, 1 - 4/5 (A/F3) e (K + N e)/(K (1 - e))): the
            K, N = self.K, self.N     # smaller of the two slacks (the second divided by e)
            second = W * E * E + 4 * self.k.a_over_f3(E, self.c) * (K + N * E) / (5 * K * (1 - E))
            first = 1 + W * E * E * E - self.arb("0.95")
            return first if first < second else (second if second < first else hull(first, second))
        if cond == "band_lower":      # C1/C1* = 1 + w e^3 >= 0.95
            return 1 + W * E * E * E - self.arb("0.95")
        if cond == "band_upper":      # C1/C1* <= 4 pi + 1
            return 4 * self.arb.pi() - W * E * E * E
        if cond == "increment_upper":
            v = 2 * E * E * X / self.scale
            chi = hull(self.arb(1) / 2, v.exp() / 2)
            tail = X * X * 2 * chi / self.scale * (E if self.m == 1 else 1)   # X (psi - 1)/e^m
            return (self.k.slack_upper(E, W, Bz, self.c) - tail) / eg2
        raise KeyError(cond)

    def _condition_more(self, cond, E, W, X, step):
        """The conditions of Appendix D's remaining statements (module docstring); None for the others."""
        arb, k, c, K, N, D = self.arb, self.k, self.c, self.K, self.N, self.D
        if cond == "c1_positive":
            return 1 + W * E * E * E
        if cond == "d4_upper":
            return (D - k.star(E, c) * (1 + W * E * E * E)) / D
        if cond == "monotone":
            return X / self.eg2
        if cond == "dx_increment":
            return (self.d9_increment - E * E * X) / self.d9_increment
        if cond == "d10_vacuous":
            b = 1 / (2 * arb.pi() * D * K)
            return (1 / (K + N * E) - b) / b
        if cond == "d15_step":
            return (arb("0.025") - 3 * N / (D * D)) / arb("0.025")
        if cond == "d10_corrected":
            if self.e_c is None:
                return arb(0, 1)       # undecided: no turning point enclosed
            lo, hi = self.e_c
            S = k.star(E, c)
            if E.upper() < lo or E.lower() > hi:
                v = (k.star_prime(E, c) if E.upper() < lo else -k.star_prime(E, c)) / S
                if v > 0:
                    return v
            # near e_c: C1*'' < 0 on the hull of the box and e_c's enclosure, where C1*' changes sign once
            return -k.star_second(hull(E, ball(lo, hi)), c) / S
        if cond in ("dp_lower", "dp_upper"):   # p'/p = 1 + N e (1 - r)/(K + N e r), 1 - r = u phi
            ratio = 1 + N * E * step["u"] * step["phi"] / (K + N * E * step["r"])
            q = ratio * step["phi"] * D / self.scale
            return q - arb(1) / 2 if cond == "dp_lower" else D * D / (D * D - 1) - q
        if cond == "d11":
            p, pn, S = step["p"], step["pn"], k.star(E, c)
            den = D * K * p * p - 2 * K * p + 1
            return (3 * D * K * p * p * pn * N * S / den - k.star_prime(step["xi"], c)) / S
        if cond == "d16":
            p, pn, S = step["p"], step["pn"], k.star(E, c)
            dp = pn - p
            den = D * K * p * p - 2 * K * p + 1 - K * dp
            return (3 * (N + K * S) * p * pn * N / (2 * den) + k.star_prime(step["xi"], c)) / S
        if cond == "d12":
            p, pn = step["p"], step["pn"]
            return (2 * D * pn * k.a_over_f3(E, c) / (K * N * p * p * (1 - E) ** 2)
                    - k.g_prime(step["xi"], c))
        return None

    def _invariant(self, E, W, X, band):
        arb = self.arb
        k, c = self.k, self.c
        S = k.star(E, c)
        # X > 0: e' <= e; C1*(e) > 0 and 1 + w e^3 > 0: C1 > 0, the branch of the map used
        if not (X > 0 and S > 0 and 1 + W * E * E * E > 0):
            return (0, None)
        u = E * E * X / self.scale
        r = (-u).exp()
        phi = hull(1 - u / 2, arb(1))
        Ep = E * r
        xi = hull(Ep, E)
        Wp = (k.alpha(E, c) * W * S + k.star_prime(xi, c) * X * phi / self.scale) / (k.star(Ep, c) * r * r * r)
        inside = Wp.lower() >= band[0] and Wp.upper() <= band[1]
        if inside:
            return (1, Wp)
        outside = Wp.upper() < band[0] or Wp.lower() > band[1]
        return (-1 if outside else 0, Wp)


def prove_region(bm: BoxMap, region: Region, conditions, *, max_boxes: int) -> RegionResult:
    """Branch and bound over R for invariance and every condition (see the module docstring): a box is
    bisected in e, or in w when its e-width is already small relative to R's, until each condition is
    shown on it or the box reaches the minimum width (a condition not shown there fails)."""
    t0 = time.perf_counter()
    band = (region.w_lo, region.w_hi)

    def evaluate(box, pending):
        out = {}
        for p, (sign, value) in bm.evaluate(*box, pending, band).items():
            out[p] = (sign, None, None) if p == "invariant" or value is None else (sign, lower(value), upper(value))
        return out

    def too_small(box):
        e_lo, e_hi, w_lo, w_hi = box
        return e_hi - e_lo <= MIN_E_WIDTH * max(region.e_top, 1e-300) and w_hi - w_lo <= 2.0**-30 * (band[1] - band[0])

    def split(box, left, results):
        e_lo, e_hi, w_lo, w_hi = box
        e_rel = (e_hi - e_lo) / region.e_top
        w_rel = (w_hi - w_lo) / (band[1] - band[0])
        if e_rel >= w_rel * 0.25 and e_hi - e_lo > MIN_E_WIDTH * region.e_top:
            m = (e_lo + e_hi) / 2
            return [((e_lo, m, w_lo, w_hi), None), ((m, e_hi, w_lo, w_hi), None)], 0
        m = (w_lo + w_hi) / 2
        return [((e_lo, e_hi, w_lo, m), None), ((e_lo, e_hi, m, w_hi), None)], 0

    rules = bb.Rules(evaluate, split, too_small, negative_fails=False)
    found = bb.search([(0.0, region.e_top, region.w_lo, region.w_hi)], ("invariant",) + tuple(conditions), rules,
                      max_boxes=max_boxes)
    shown = dict(found.shown)
    reason = None
    if found.exhausted is not None:   # the budget ran out: nothing open then is shown
        (e_lo, e_hi, w_lo, w_hi), pending = found.exhausted
        reason = (f"box budget {max_boxes} exhausted at e in [{e_lo:.6g}, {e_hi:.6g}], "
                  f"w in [{w_lo:.6g}, {w_hi:.6g}] (pending: {', '.join(pending)})")
        for p in pending + tuple(q for _, open_ in found.stack for q in open_):
            shown[p] = False
    elif found.failures:
        p, ((e_lo, e_hi, w_lo, w_hi), _, _) = next(iter(found.failures.items()))
        what = "invariance" if p == "invariant" else p
        reason = f"{what} not shown on the box e in [{e_lo:.6g}, {e_hi:.6g}], w in [{w_lo:.6g}, {w_hi:.6g}]"
    invariant = shown.pop("invariant")
    decided = {c: invariant and shown[c] for c in conditions}
    margins = {c: (found.low[c] if decided[c] and found.low[c] != math.inf else None) for c in conditions}
    sups = {c: (found.high[c] if decided[c] and math.isfinite(found.high[c]) else None) for c in conditions}
    return RegionResult(region, invariant, decided, margins, found.boxes, time.perf_counter() - t0, reason, sups)


def choose_region(bm: BoxMap, e_top: float, w_T0, pad: float = 0.5, grid: int = 64) -> Region:
    """A band around the slow-manifold lag: w*(e) = C1*'(e) X/(scale C1*(e) (1 - alpha(e))) at
    midpoints on a grid of [0, e_top], and the certified w(T0); widened by ``pad`` times the
    larger of its width and its largest |w|. (Any band may be tried; invariance is what is proved.)"""
    k, c = bm.k, bm.c
    values = [float(w_T0.lower()), float(w_T0.upper())]
    for i in range(grid + 1):
        e = arb(e_top * i / grid)
        z = None if bm.cz is None else bm.cz * e
        Bz = arb(0) if z is None else (arb(1) / 3 if i == 0 else arb(b_enclosure(lower(z), upper(z)).mid()))
        X = k.dx_e2(e, arb(0), Bz, c)
        ws = k.star_prime(e, c) * X / (bm.scale * k.star(e, c) * (1 - k.alpha(e, c)))
        values.append(float(ws.mid()))
    lo, hi = min(values), max(values)
    width = max(hi - lo, abs(lo), abs(hi), 1e-30)
    return Region(math.nextafter(e_top, math.inf), lo - pad * width, hi + pad * width)
