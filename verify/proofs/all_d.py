"""Lemma D.19 corrected (both sides), the lag lemma and D.18's lower side on the late phase, for every
``D >= D_1`` and every step size ``eta <= K/D`` at once (seed 000, Appendix D; docs/proofs.md, "Every D: the late phase").

In the chart of :mod:`.late_chart` (``y = sqrt(K/(D - K))``, ``v = (D - K) e/K``, ``omega = (D - K) w``,
``mu = eta D``) the late phase of every D is one compact box, ``0 <= v <= 1``, ``0 <= y <= y_1 =
sqrt(K/(D_1 - K))``, with ``y = 0`` the limit ``D -> oo``. The band

    L_D = { 0 < e <= K/(D - K),  omega_lo <= (D - K)(C1/C1* - 1)/e^3 <= omega_hi }

is shown to be mapped into itself by one step of the map, for every D >= D_1 and every mu in (0, K], and the
statements are shown at every point of it.

One step, exactly (``U = u_coefficient x_hat``, ``u = Delta x/scale = mu y^8 v^2 U``, ``r = exp(-u)``,
``v' = v r``; ``1 - r = u phi(u)``, ``1 - r^3 = 3 u phi(3u)``, ``phi(t) = (1 - exp(-t))/t`` in
``[1 - t/2, 1]`` for ``t >= 0``; ``Cs = C1*`` as a function of v at fixed y, ``xi`` between ``v r`` and ``v``;
``C1' = alpha C1 + (1 - alpha) Cs(v)`` with ``1 - alpha = mu lam``, since ``C1* = beta/(1 - alpha)``)::

    omega' - omega_lo = (alpha Cs(v) (omega - omega_lo) + mu (c + omega_lo E))/(r^3 Cs(v r))
    omega_hi - omega' = (alpha Cs(v) (omega_hi - omega) - mu (c + omega_hi E))/(r^3 Cs(v r))
    c = K Cs_v(xi) U phi(u),   E = -lam Cs(v) + y^8 v^2 U (3 Cs(v) phi(3u) + r^3 Cs_v(xi) v phi(u))

(``Cs(v) - Cs(v r) = Cs_v(xi) v u phi(u)``, ``rho - 1 = omega v^3 y^8/K``). With ``alpha >= 0`` (a fact of
the chart, exact) the band is kept when, on every box of ``(v, y, omega)`` (``mu`` a ball ``[0, K]``):
``lam > 0``, ``E < 0``, ``Cs > 0`` at v and on the hull of ``[v r, v]``, ``x_hat > 0`` (``Delta x > 0``: ``v' < v``, the
late phase is kept, and ``C1' > 0``), ``1 + omega v^3 y^8/K > 0`` (``C1 > 0``: the map's ``C1 > 0``
branch), and

    band_lower:  c + omega_lo E > 0        band_upper:  c + omega_hi E < 0,

decided (and their margins reported) divided by ``-E (omega_hi - omega_lo)``: with ``omega_fix = c/(-E)``, the
distance of each edge from ``omega_fix`` in band widths.

These do not involve mu except through ``u = O(y^8)``: the margin does not shrink with the step size. On the
band (so for every ``T >= T*`` once the state at T* lies in it, by induction):

* ``D19.all_D.lag``: ``|C1/C1* - 1| <= c_lag e^3/(D - K)``, ``c_lag = max(|omega_lo|, |omega_hi|)``;
* ``D19.all_D.upper``: ``Delta x <= eta g2 e^2`` (``1 - x_hat = v^a y^b slack``, ``slack > 0``);
* ``D18.all_D.lower``: ``1/K - p(T) <= N/(K (N + K sqrt(R_q(T))))``, ``R_q = (N/K)^2 + 2 q eta g2 (T - T*)/D``,
  for every ``T >= T*`` once the state at T* lies in the band: the lower side of D.19 summed from T*
  (``e(T*) <= K/N``, ``exp(y) >= 1 + y``), the derivation of :mod:`rdyn.derivations.model_a.late_phase_bounds`
  with ``q`` in place of ``q_lag``; certified with ``D19.all_D.lower``;
* ``D19.all_D.lower``: ``Delta x >= q eta g2 e^2``: ``x_hat - q > 0``, ``q`` the smallest ``x_hat`` on a grid of
  the band (float midpoints) less 0.1%, rounded down to six digits.

What is not shown: that the state at T* lies in ``L_D`` for every ``D >= D_1`` (the phases before T* live on
the scales ``e ~ 1/sqrt(D)`` and ``e ~ 1``, outside this chart; docs/proofs.md, "Why not every D at once"). So Lemmas
D.18 and D.19 themselves (:data:`ENTRY_OPEN`) stay undecided for every D at once; for one D or a
finite range, :mod:`.eta_box` shows the whole trajectory's tube.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass

import flint
from flint import arb

from rdyn.verification.proofs import branch_bound as bb, statements as st
from rdyn.verification.proofs.balls import b_enclosure, ball, lower, upper
from rdyn.verification.proofs.engine import StatementResult
from rdyn.verification.proofs.eta_box import BoxProof
from rdyn.verification.proofs.late_chart import MU_MAX_OVER_K, chart_kernels

PREC_BITS = 128
DEFAULT_MAX_BOXES = 200_000
PROGRESS_EVERY = 20_000        # boxes between two progress lines
MIN_WIDTH = 2.0 ** -30
UNKNOWN = arb(0, math.inf)   # a condition not evaluated on a box (a validity test failed there): neither sign
CONDITIONS = ("valid", "band_lower", "band_upper", "d19_upper", "d19_lower")
FATAL = ("valid", "band_lower", "band_upper")   # the band's invariance: a failure ends the proof
STATEMENTS = (
    st.Statement("D19.all_D.lag", "Lemma D.19", "corrected", None,
                 "for every D >= D_1 and every eta with eta D <= K (the certificate's box): one step maps the late-"
                 "phase band L_D = {e <= K/(D-K), omega_lo <= (D-K)(C1/C1* - 1)/e^3 <= omega_hi} into itself, and "
                 "|C1/C1* - 1| <= c_lag e^3/(D-K) on L_D (omega_lo, omega_hi, c_lag: the certificate's constants); so "
                 "at every T >= T* once the state at T* lies in L_D", "C1_over_C1star_minus_1", "le", 0, "band",
                 "late_band"),
    st.Statement("D19.all_D.lower", "Lemma D.19", "corrected", "lower",
                 "for every D >= D_1, every eta with eta D <= K and every state of L_D: Delta(C2+C3) >= q eta g2 "
                 "exp(-2(C2+C3)/D) (q: the certificate's constant)", "delta_x", "ge", 0, "d19_lower", "late_band"),
    st.Statement("D19.all_D.upper", "Lemma D.19", "corrected", "upper",
                 "for every D >= D_1, every eta with eta D <= K and every state of L_D: Delta(C2+C3) <= eta g2 "
                 "exp(-2(C2+C3)/D)", "delta_x", "le", 0, "d19_upper", "late_band"),
    st.Statement("D18.all_D.lower", "Lemma D.18", "corrected", "lower",
                 "for every D >= D_1 and every eta with eta D <= K, once the state at T* lies in L_D: 1/K - p(T) <= "
                 "(D-K)/(K (D-K + K sqrt(R_q(T)))) for every T >= T*, R_q(T) = ((D-K)/K)^2 + 2 q eta g2 (T - T*)/D "
                 "(D19.all_D.lower summed from T*, e(T*) <= K/(D-K): exp(y) >= 1 + y)", "one_over_K_minus_p", "le", 0,
                 "d18_lower_summed", "late_band"),
)
# D18.all_D.lower is D19.all_D.lower summed along the band (which the lag statement keeps): the summation of
# rdyn.derivations.model_a.late_phase_bounds (every step a sympy identity, q in place of q_lag; its own tests)
CONDITION_OF = {"D19.all_D.lag": "band", "D19.all_D.lower": "d19_lower", "D19.all_D.upper": "d19_upper",
                "D18.all_D.lower": "d18_lower_summed"}
# Lemmas D.18 and D.19 themselves for every D: the entry into L_D at T* is not shown (module docstring); D.18's
# upper side also needs the step T* - 1, outside the late phase
ENTRY_OPEN = ("D19.derived.lag", "D19.derived.lower", "D19.corrected.upper", "D18.derived.lower", "D18.derived.upper")


@dataclass(frozen=True)
class AllD:
    """One Model A configuration for every ``D >= d_lo`` (K, activation, kappa, ||V*||^2; logits/D) and every
    ``eta`` with ``0 < eta D <= K``."""

    d_lo: int
    K: int
    activation: str
    kappa: float
    vstar_norm2: float

    def __post_init__(self):
        if not (1 <= self.K and self.d_lo > 2 * self.K):
            raise ValueError(f"every D >= {self.d_lo} at K = {self.K}: the chart needs D > 2K (y <= 1, where alpha >= 0 "
                             f"is proved)")

    @property
    def mu_max(self) -> float:
        """The largest ``mu = eta D`` of the box, ``K``."""
        return float(MU_MAX_OVER_K * self.K)

    @property
    def eta_hi(self) -> float:
        """The largest eta of the box, ``K/LO`` (at D = LO; ``eta <= K/D`` at each D)."""
        return self.mu_max / self.d_lo

    @property
    def y_max(self) -> float:
        """An upper float bound of ``sqrt(K/(d_lo - K))`` (at :data:`PREC_BITS`, whatever the caller's precision)."""
        with flint.ctx.workprec(PREC_BITS):
            return upper((arb(self.K) / (self.d_lo - self.K)).sqrt())

    def to_dict(self) -> dict:
        return {"D": None, "D_box": [self.d_lo, None], "K": self.K, "activation": self.activation,
                "kappa": self.kappa if self.activation == "leaky" else None, "vstar_norm2": self.vstar_norm2,
                "eta": None, "eta_box": [0.0, self.eta_hi], "eta_times_D": [0.0, self.mu_max], "logit_scale": "D"}


@dataclass(frozen=True)
class Band:
    """The band ``[omega_lo, omega_hi]`` of ``omega`` and the constant ``q`` of D.19's lower side."""

    omega_lo: float
    omega_hi: float
    q: float = 0.0

    @property
    def c_lag(self) -> float:
        return math.nextafter(max(abs(self.omega_lo), abs(self.omega_hi)), math.inf)


class ChartField:
    """The conditions of the module docstring on one ``(v, y, nu)`` box (``omega = omega_lo + nu (omega_hi -
    omega_lo)``), python-flint ``arb`` balls."""

    def __init__(self, cfg: AllD, band: Band, mutate: dict | None = None):
        self.cfg, self.band = cfg, band
        self.k = k = chart_kernels(cfg.activation)
        kappa = cfg.kappa if cfg.activation == "leaky" else 0.0
        self.c = k.prepare(arb(cfg.K).sqrt(), arb(repr(float(cfg.vstar_norm2))), arb(repr(float(kappa))))
        self.K = arb(cfg.K)
        self.mu_hi = arb(repr(cfg.mu_max))
        self.lo, self.hi = arb(repr(band.omega_lo)), arb(repr(band.omega_hi))
        self.width = self.hi - self.lo
        self.atan = cfg.activation != "identity"
        self.mutate = mutate or {}      # a mutation test's factor on the claimed g2 (D.19 upper)

    def _B(self, v_lo, v_hi, y_lo, y_hi):
        """B(z) on ``z = v y`` over the box."""
        if not self.atan:
            return arb(0)
        return b_enclosure(max(0.0, lower(arb(max(v_lo, 0.0)) * arb(max(y_lo, 0.0)))), upper(arb(v_hi) * arb(y_hi)))

    def evaluate(self, v_lo, v_hi, y_lo, y_hi, nu_lo, nu_hi) -> dict:
        """{condition: ball}: each condition is shown on the box when its ball is > 0 (``valid``: 1 when every
        validity test of the module docstring passes; where one does not, ``valid`` and the band conditions are
        :data:`UNKNOWN`)."""
        k, c = self.k, self.c
        V, Y, Nu = ball(v_lo, v_hi), ball(y_lo, y_hi), ball(nu_lo, nu_hi)
        Om = self.lo + Nu * self.width
        B = self._B(v_lo, v_hi, y_lo, y_hi)
        X = k.x_hat(V, Y, Om, B, c)
        Y2 = Y * Y
        Y8 = Y2 * Y2 * Y2 * Y2
        rho = 1 + Om * V * V * V * Y8 / self.K
        S, lam = k.star(V, Y, c), k.lam(V, Y, c)
        U = k.u_coefficient(Y, c) * X
        u_hi = upper(self.mu_hi * Y8 * V * V * U) if U > 0 else math.inf
        out = {"d19_lower": X - arb(repr(self.band.q))}
        if "g2" in self.mutate:   # claimed Delta x <= eta (m g2) e^2 for a factor m: the slack 1 - x_hat/m
            out["d19_upper"] = 1 - X / arb(repr(float(self.mutate["g2"])))
        else:
            out["d19_upper"] = k.slack(V, Y, Om, B, c)
        out.update(valid=UNKNOWN, band_lower=UNKNOWN, band_upper=UNKNOWN)
        if not (u_hi < 1 and X > 0 and rho > 0 and S > 0 and lam > 0):
            return out
        r = ball(lower(arb(-u_hi).exp()), 1.0)
        phi = ball(max(0.0, 1 - u_hi / 2), 1.0)
        phi3 = ball(max(0.0, 1 - 3 * u_hi / 2), 1.0)
        xi = ball(lower(arb(v_lo) * r), v_hi)
        S_xi, Sv_xi = k.star(xi, Y, c), k.star_v(xi, Y, c)
        drift = self.K * Sv_xi * U * phi
        E = -lam * S + Y8 * V * V * U * (3 * S * phi3 + r * r * r * Sv_xi * V * phi)
        if not (S_xi > 0 and E < 0):
            return out
        # c + omega E = -E (omega_fix - omega): the conditions divided by -E (omega_hi - omega_lo) > 0, i.e. the
        # distance of each edge from the drift's fixed point in band widths
        scale = -E * self.width
        out.update(valid=arb(1), band_lower=(drift + self.lo * E) / scale, band_upper=-(drift + self.hi * E) / scale)
        return out


def choose_band(cfg: AllD, grid: int = 33, pad: float = 0.25) -> Band:
    """A band around the drift's fixed point ``omega_fix = K Cs_v U/(lam Cs)`` (``c + omega E = 0`` at
    ``mu -> 0``) over a grid of ``(v, y)`` (float midpoints; the proof decides whether it holds): its range,
    widened by ``pad`` of its width and 5% of its size on each side; and ``q``, the smallest ``x_hat`` on the
    grid at both edges of the band, less 0.1%, rounded down to six digits. At :data:`PREC_BITS`, whatever the
    caller's precision (the band is then the same in every process)."""
    with flint.ctx.workprec(PREC_BITS):
        return _choose_band(cfg, grid, pad)


def _choose_band(cfg: AllD, grid: int, pad: float) -> Band:
    k = chart_kernels(cfg.activation)
    f = ChartField(cfg, Band(0.0, 0.0))
    points = [(arb(i / grid), arb(cfg.y_max * j / grid), f._B(i / grid, i / grid, cfg.y_max * j / grid,
                                                              cfg.y_max * j / grid))
              for i in range(grid + 1) for j in range(grid + 1)]
    values = []
    for V, Y, B in points:
        X = k.x_hat(V, Y, arb(0), B, f.c)
        fix = f.K * k.star_v(V, Y, f.c) * k.u_coefficient(Y, f.c) * X / (k.lam(V, Y, f.c) * k.star(V, Y, f.c))
        values.append(float(fix.mid()))
    lo, hi = min(values), max(values)
    spread = (hi - lo) * pad + 0.05 * max(abs(lo), abs(hi))
    lo, hi = lo - spread, hi + spread
    x_min = min(float(k.x_hat(V, Y, arb(repr(omega)), B, f.c).mid()) for V, Y, B in points for omega in (lo, hi))
    return Band(lo, hi, _round_down(x_min * (1 - 1e-3), 6) if x_min > 0 else 0.0)


def prove_band(cfg: AllD, band: Band, *, max_boxes: int = DEFAULT_MAX_BOXES, mutate: dict | None = None,
               progress=None) -> BoxProof:
    """Branch and bound over ``(v, y, nu)`` in ``[0, 1] x [0, y_1] x [0, 1]``: a box is done when every
    condition is shown on it; otherwise it is bisected along the side whose halves leave the open conditions
    the largest lower end (the worse half's worst, ties by the sum of both, then by the widest side; each trial split
    counts two boxes). At :data:`PREC_BITS`, whatever the caller's precision."""
    with flint.ctx.workprec(PREC_BITS):
        return _prove_band(cfg, band, max_boxes, mutate, progress)


def _prove_band(cfg, band, max_boxes, mutate, progress) -> BoxProof:
    t0 = time.perf_counter()
    facts = chart_kernels(cfg.activation).facts
    missing = [name for name in ("x_hat_is_1_at_y_0", "u_identity", "alpha_nonnegative", "lam_free_of_mu")
               if not facts[name]]
    if missing:
        return BoxProof(0.0, cfg.eta_hi, False, {}, {}, 0, 0.0, "a fact of the chart does not hold: " + ", ".join(missing))
    f = ChartField(cfg, band, mutate)
    y1 = cfg.y_max

    def results_of(values):
        return {c: (1 if v > 0 else (-1 if v < 0 else 0), lower(v), None) for c, v in values.items()}

    def widths(box):
        v_lo, v_hi, y_lo, y_hi, nu_lo, nu_hi = box
        return v_hi - v_lo, (y_hi - y_lo) / y1, nu_hi - nu_lo

    def split(box, left, results):
        # bisect along the side whose halves improve the open conditions most (the conditions hardly depend on
        # nu, and on y only as much as y_1 is large: an equal split of all three would waste most boxes)
        best, evaluations = None, 0
        for axis, width in enumerate(widths(box)):
            if width < MIN_WIDTH:
                continue
            mid = (box[2 * axis] + box[2 * axis + 1]) / 2
            halves = []
            for side in (0, 1):
                half = list(box)
                half[2 * axis + 1 - side] = mid
                halves.append((tuple(half), f.evaluate(*half)))
            evaluations += 2
            worst = [min(_score(values[c]) for c in left) for _, values in halves]
            score = (min(worst), sum(worst), width)   # the worse half first, then both, then the widest
            if best is None or score > best[0]:
                best = (score, halves)
        return [(half, results_of(values)) for half, values in best[1]], evaluations

    rules = bb.Rules(lambda box, pending: results_of(f.evaluate(*box)), split,
                     lambda box: max(widths(box)) < MIN_WIDTH, fatal=frozenset(FATAL), carry="all", margins_at="leaf")
    found = bb.search([(0.0, 1.0, 0.0, y1, 0.0, 1.0)], CONDITIONS, rules, max_boxes=max_boxes, progress=progress,
                      progress_every=PROGRESS_EVERY)
    boxes = found.boxes
    if found.exhausted is not None:
        return BoxProof(0.0, cfg.eta_hi, False, {}, {}, boxes, time.perf_counter() - t0,
                        f"--max-boxes {max_boxes} reached with {len(found.stack) + 1} boxes open")
    if found.ended_by is not None:
        c, (v_lo, v_hi, y_lo, y_hi, nu_lo, nu_hi), _ = found.ended_by
        first = next(n for n, (b, _, _) in found.failures.items() if b is found.failures[c][0])
        how = "fails (certainly negative)" if found.failures[first][1] < 0 else "not shown"
        return BoxProof(0.0, cfg.eta_hi, False, {}, {}, boxes, time.perf_counter() - t0,
                        f"{first} {how} on v in [{v_lo!r}, {v_hi!r}], y in [{y_lo!r}, {y_hi!r}], "
                        f"nu in [{nu_lo!r}, {nu_hi!r}]")
    pending_all = tuple(c for c in CONDITIONS if found.shown[c])
    margins = found.low
    failed = {c: box for c, (box, _, _) in found.failures.items()}
    decided = {"band": True, "d19_upper": "d19_upper" in pending_all, "d19_lower": "d19_lower" in pending_all}
    decided["d18_lower_summed"] = decided["d19_lower"]
    constants = {"omega_lo": band.omega_lo, "omega_hi": band.omega_hi, "c_lag": band.c_lag, "q": band.q,
                 "y_max": y1, "g2": float(f.k.g2(f.c).mid())}
    reason = None
    if failed:
        c, b = next(iter(failed.items()))
        reason = f"{c} not shown on v in [{b[0]!r}, {b[1]!r}], y in [{b[2]!r}, {b[3]!r}]"
    return BoxProof(0.0, cfg.eta_hi, True, decided, {"band": min(margins["band_lower"], margins["band_upper"]),
                                            "d19_upper": margins["d19_upper"] if decided["d19_upper"] else None,
                                            "d19_lower": margins["d19_lower"] if decided["d19_lower"] else None,
                                            "d18_lower_summed": margins["d19_lower"] if decided["d19_lower"] else None},
                      boxes, time.perf_counter() - t0, reason, constants)


def _score(value) -> float:
    """How far a condition is from being shown on a box: its ball's lower end (the conditions are of order 1:
    -1e9 for a condition not evaluated, so that a split that makes a half valid still counts)."""
    low = value.lower()
    return max(float(low), -1e9) if low.is_finite() else -1e9


def _round_down(x: float, digits: int) -> float:
    """``x`` (> 0) rounded down to ``digits`` significant digits (the float nearest that decimal: the proofs
    decide the statement for the float itself)."""
    scale = 10.0 ** (digits - 1 - math.floor(math.log10(x)))
    return math.floor(x * scale) / scale


@dataclass
class AllDReport:
    """``rdyn prove --D LO:`` (no ``--eta``): the statements of :data:`STATEMENTS` for every D >= LO and every
    eta <= K/D, and the own statements of Lemmas D.18 and D.19 (:data:`ENTRY_OPEN`) undecided for want of the
    entry into the band."""

    cfg: AllD
    results: list
    band: Band
    proof: BoxProof
    seconds: float

    def to_dict(self) -> dict:
        p = self.proof
        return {"instance": self.cfg.to_dict(), "T_star": None, "statements": [r.to_dict() for r in self.results],
                "superseded": [],
                "region": {"chart": chart_dict(self.cfg, self.band), "invariant": p.invariant, "boxes": p.boxes,
                           "seconds": round(p.seconds, 3), "reason": p.reason},
                "t1": None, "box": box_dict(self.cfg), "complete": True, "seconds": round(self.seconds, 3)}

    @property
    def all_corrected_certified(self) -> bool:
        return all(r.verdict == "certified" for r in self.results if r.statement.form == "corrected")


def box_dict(cfg: AllD) -> dict:
    return {"eta": [0.0, cfg.eta_hi], "D": [cfg.d_lo, None], "eta_times_D": [0.0, cfg.mu_max]}


def chart_dict(cfg: AllD, band: Band) -> dict:
    return {"coordinates": "y = sqrt(K/(D - K)), v = (D - K) e/K, omega = (D - K)(C1/C1* - 1)/e^3, mu = eta D",
            "v": [0.0, 1.0], "y": [0.0, cfg.y_max], "omega": [band.omega_lo, band.omega_hi],
            "mu": [0.0, cfg.mu_max]}


def prove(cfg: AllD, labels=None, *, max_boxes: int = DEFAULT_MAX_BOXES, mutate: dict | None = None,
          band: Band | None = None, progress=None) -> AllDReport:
    """Decide :data:`STATEMENTS` (and list :data:`ENTRY_OPEN`, undecided: the entry at T*) for
    every D >= ``cfg.d_lo`` and every eta <= K/D (those whose label is in ``labels``), at :data:`PREC_BITS`
    whatever the caller's precision (the band and ``q`` are then the same in every process)."""
    t0 = time.perf_counter()
    band = choose_band(cfg) if band is None else band
    proof = prove_band(cfg, band, max_boxes=max_boxes, mutate=mutate, progress=progress)
    results = []
    for s in STATEMENTS:
        if labels is None or s.label in labels:
            results.append(_verdict(s, cfg, band, proof))
    for s in st.STATEMENTS:
        if s.key in ENTRY_OPEN and (labels is None or s.label in labels):
            on_band = ("D.18's upper side also needs the step from T* - 1, outside the late phase" if
                       s.key == "D18.derived.upper" else
                       f"on L_D its band form holds ({'D18.all_D.lower' if s.key.startswith('D18') else 'D19.all_D.*'})")
            entry = ("the state at T* is not shown to lie in the late-phase band L_D for every D (the phases before T* "
                     "live on the scales e ~ 1/sqrt(D - K) and e ~ 1, outside the late chart: docs/proofs.md, \"Why "
                     f"not every D at once\"); {on_band}; for a finite range give --D LO:HI --eta LO:HI")
            cert = {"box": box_dict(cfg), "proved_boxes": [],
                    "undecided_boxes": [{"D": [cfg.d_lo, None], "eta": [0.0, cfg.eta_hi], "reason": entry}],
                    "region_condition": None, "margin_on_region": None, "seconds": 0.0}
            results.append(StatementResult(s, "undecided", certificate=cert, reason=entry))
    return AllDReport(cfg, results, band, proof, time.perf_counter() - t0)


def _verdict(s, cfg: AllD, band: Band, p: BoxProof) -> StatementResult:
    cond = CONDITION_OF[s.key]
    shown = p.invariant and p.decided.get(cond, False)
    where = {"D": [cfg.d_lo, None], "eta": [0.0, cfg.eta_hi]}
    cert = {"box": box_dict(cfg),
            "proved_boxes": [{**where, "boxes": p.boxes, "margin_on_region": p.margins.get(cond),
                              "constants": p.constants, "chart": chart_dict(cfg, band)}] if shown else [],
            "undecided_boxes": [] if shown else [{**where, "reason": p.reason or f"{cond} not shown"}],
            "region_condition": cond, "margin_on_region": p.margins.get(cond) if shown else None,
            "seconds": round(p.seconds, 3)}
    if shown:
        return StatementResult(s, "certified", certificate=cert)
    return StatementResult(s, "undecided", certificate=cert, reason=cert["undecided_boxes"][0]["reason"])
