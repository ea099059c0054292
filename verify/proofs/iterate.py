"""Steps 0 .. T0 (and beyond, for statements no region argument carries): the certified arb
iteration of Model A's collapsed map (seed 000, Lemma D.2) with every statement of
:mod:`.statements` decided at every step.

The box advances by the one certified arb iteration,
:class:`rdyn.reduced_dynamics.certified.arb_iteration.ArbIteration` (the one ``rdyn teacher
--certify --dps`` runs), in its direct form: the interval evaluation of the map on the box, with
the generated ``advance`` and ``first_c1`` of :mod:`.kernels` (``C1' = C1 (1 + (alpha - 1)) +
beta``: ``C1`` enters its own update once, so the ball contracts with the map instead of growing
by the dependency effect; no Jacobian per step, a quarter of the mean-value form's cost), from the
exact initial state (step 0 -> 1 is the ``C1 = 0`` branch); every ball provably contains the
exact real-number iterate. The statements read the state as ``(C1, x)`` with ``x = C2 + C3``
(``C2 = x (D-K)/D``, ``C3 = x K/D`` exactly, since ``C3 = K/(D-K) C2`` along the whole trajectory
from 0); ``C1 > 0`` (the branch of the map, which their forms assume) is checked at every step,
and the per-step quantities (Delta x, e, alpha - 1, beta, hence C1*) are the by-products of the
step's ``advance``.
``t1 = min{t >= 1 : C1(t) >= 0.95 C1*(t)}`` (Lemma D.13) and
``T* = min{t : p(t) >= 1/(2K)}`` are certified likewise; T* is certified as the first step whose ``x`` is certainly at or
above ``scale log((D-K)/K)`` with every earlier step certainly below.
"""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass, field

import numpy as np
from flint import arb, arf

from rdyn.reduced_dynamics.certified.arb_iteration import ArbIteration, DIRECT, DirectKernels
from rdyn.reduced_dynamics.runs.checkpoint import exact_text, from_exact_text, signals_blocked
from rdyn.reduced_dynamics.runs.driver import StepLines, drive
from rdyn.verification.proofs.balls import ball, hull, lower, upper
from rdyn.verification.proofs.float_route import X_HI, block_bounds, row_quantities, row_state
from rdyn.verification.proofs.region import BLOCK_CONDITIONS
from rdyn.verification.proofs.statements import PAIR


@dataclass
class Outcome:
    """What the iteration established about one statement."""

    key: str
    checked_from: int | None = None
    checked_to: int | None = None
    min_margin: float | None = None         # smallest certified relative slack over the checked steps
    counterexample: dict | None = None
    undecided_step: int | None = None       # first step whose enclosure straddles the bound
    blocks: int = 0                         # blocks of steps decided at once (region condition on a box)
    block_margin: float | None = None       # smallest normalised slack over those blocks
    fallback_steps: int = 0                 # steps of blocks not decided at once (decided one by one)


@dataclass
class Iteration:
    T_star: int | None
    T0: int | None
    state_T0: tuple | None                  # (C1, x, e) balls at T0
    last_step: int
    stopped: str | None
    outcomes: dict = field(default_factory=dict)
    seconds: float = 0.0
    radius_T0: float | None = None
    t1: int | None = None


def _hull_max(a, b):
    """A ball containing max(x, y) for every x in a, y in b (when neither is certainly larger)."""
    return hull(a, b) if a.upper() >= b.upper() else hull(b, a)


def digits(ball, n: int = 40) -> str:
    """The ball's midpoint to n significant digits (printed beside the ball's radius)."""
    return ball.mid().str(n, radius=False)


def certified_digits(ball, n: int = 40) -> str:
    """The ball's value to at most n significant digits, each one certified (the ball lies within
    a unit of the last digit): n digits from the 200-bit arb route, fewer (about 12 to 16) from the
    float route's intervals (a counterexample's state and sides)."""
    return ball.str(n, radius=False)


class Evaluator:
    """Per-step lhs/rhs of every statement (arb balls), from the state at step T."""

    def __init__(self, inst, k, c, consts):
        self.k, self.c, self.cn = k, c, consts
        D, K = inst.D, inst.K
        N = D - K
        self.N, self.K = arb(N), arb(K)
        self.R0 = (arb(N) / K) ** 2
        self.scale = consts["scale"]
        self.eg2 = consts["eta_g2"]
        self.qmin = consts["q_min"]
        eta, M = consts["eta"], consts["M"]
        self.printed_d18_lower = arb(20) * D * N / (eta * K * M)
        self.printed_d18_upper = arb(D) * N / (2 * arb.const_e() * eta * K * M)
        self.printed_d19_lower = eta * M / (arb(200) * arb(K) ** 3 * arb(D) ** 3)
        self.printed_d19_upper = eta * 8 * arb.pi() * M / (arb(K) ** 3 * arb(D) ** 3)
        self.logits_D = inst.logit_scale == "D"
        self.D = arb(D)
        self.attention_bound = (1 + 1 / arb(D).root(4)) / D
        self.band_lo = arb("0.95")
        self.four_fifths = arb(4) / 5
        # min of A/(A+B) over 0 <= e <= 1 (64 boxes; a rigorous lower bound, e.g. 0.66 for ReLU)

        self.d5_ratio_min = arb(max(0.0, min(lower(k.a_over_f3(ball(i / 64, (i + 1) / 64), c)) for i in range(64))))
        self.band_hi = 4 * arb.pi() + 1
        self.inc_hi = 2 * self.eg2 / self.scale
        self.inc_lo = 2 * self.qmin * self.eg2 / self.scale
        # Appendix D's remaining statements
        self.Dn = D
        self.d9_lo = 1 / (2 * arb(D))                      # Lemma D.9: p(1-Kp)/(2D)
        self.d9_hi = arb(D) / (arb(D) ** 2 - 1)             # D^2/(D (D^2 - 1))
        self.d9_increment = eta * M * D * (D + 1) / (arb(K) ** 3 * N)
        self.d10_bound = 1 / (2 * arb.pi() * D * K)
        self.e_c = consts.get("e_c")                        # Lemma D.10 corrected: (lo, hi) floats or None
        self.d13_coefficient = eta * D / (40 * arb(K))
        self.d15_lhs, self.d15_rhs = 3 * arb(N) / arb(D) ** 2, arb("0.025")
        self.zero = arb(0)

    def sides(self, key: str, T: int, T_star: int, C1, x, dx, e, star=None, exact: bool = False):
        """(lhs, rhs) of statement ``key`` at step T (``star``: C1*(T)). For Lemma D.5 the rhs uses
        a certified lower bound of A/(A+B) over 0 <= e <= 1 unless ``exact`` (a smaller rhs: a
        step it passes passes the statement, and its relative slack is a lower bound)."""
        if key == "D13.printed.attention":
            return 1 / (self.K + self.N * e), self.attention_bound
        if key == "D4.printed.lower":        # C1 >= 0, slack relative to C1*
            return C1, self.zero, star
        if key == "D4.printed.upper":
            return C1, self.D
        if key == "D8.printed.monotone":     # (F4/p - F3)/K >= C1 (F2_1 + p F1)
            left, right = self.k.d8_printed(e, self.c)
            return left, C1 * right
        if key == "D8.corrected.monotone":   # Delta x >= 0, slack relative to eta g2 e^2
            return dx, self.zero, self.eg2 * e * e
        if key == "D9.printed.increment":
            return dx, self.d9_increment
        if key == "D10.printed":             # the hypothesis p <= 1/(2 pi D K) fails
            return 1 / (self.K + self.N * e), self.d10_bound
        if key == "D15proof.printed":
            return self.d15_lhs, self.d15_rhs
        if key == "D17.printed.band_lower":
            return C1, self.band_lo * star
        if key == "D17.printed.band_upper":
            return C1, self.band_hi * star
        if key == "D15.printed.lower":  # max(0.95, 1 - 4/5 A/(A+B) (1-Kp)/(Kp(Dp-1))) C1*
            ratio = self.k.a_over_f3(e, self.c) if exact else self.d5_ratio_min   # r_min: a larger rhs
            inner = 1 - self.four_fifths * ratio * e * (self.K + self.N * e) / (self.K * (1 - e))
            return C1, (inner if inner > self.band_lo else self.band_lo if inner < self.band_lo
                        else _hull_max(inner, self.band_lo)) * star
        if key == "D5.printed.upper":   # (1-Kp)/(Kp(Dp-1)) = e (K + N e)/(K (1 - e)) exactly
            ratio = self.k.a_over_f3(e, self.c) if exact else self.d5_ratio_min
            return C1, (1 + self.four_fifths * ratio * e * (self.K + self.N * e) / (self.K * (1 - e))) * star
        e2 = e * e
        if key.startswith("D19"):
            if key.startswith("D19.printed"):   # printed with exp(-2(C2+C3)/D) whatever the logit scale
                factor = e2 if self.logits_D else (-2 * x / self.D).exp()
                rhs = (self.printed_d19_lower if key.endswith("lower") else self.printed_d19_upper) * factor
            elif key == "D19.corrected.upper":
                rhs = self.eg2 * e2
            elif key == "D19.corrected.lower":   # factor 1 - |C1/C1* - 1|/e
                rhs = self.qmin * self.eg2 * e2 * (1 - abs(C1 / self.k.star(e, self.c) - 1) / e)
            elif key == "D19.corrected.lower.lag1":   # superseded: factor 1 - |C1/C1* - 1|
                rhs = self.qmin * self.eg2 * e2 * (1 - abs(C1 / self.k.star(e, self.c) - 1))
            else:   # superseded: no factor
                rhs = self.qmin * self.eg2 * e2
            return dx, rhs
        gap = self.N * e / (self.K * (self.K + self.N * e))
        tau = T - T_star
        if key == "D18.printed.lower":
            return gap, self.printed_d18_lower / tau
        if key == "D18.printed.upper":
            return gap, self.printed_d18_upper / tau
        # R-(T) = (N/K)^2 + 2 q_min g2 eta (T - T* - 1)/scale (one step of delay: the lag of C1 at T*),
        # R+(T) = (N/K)^2 + 2 g2 eta (T - T* + 1)/scale
        R = self.R0 + (self.inc_lo * (tau - 1) if key == "D18.corrected.lower" else self.inc_hi * (tau + 1))
        return gap, self.N / (self.K * (self.N + self.K * R.sqrt()))


    def pair_sides(self, key: str, P, Q):
        """(lhs, rhs) of the one-step statement ``key`` at step t from the states P (step t) and Q
        (step t + 1) (:class:`State`); None: the statement makes no claim at this step (Lemma
        D.10 corrected, a step across p_c); "ambiguous": whether it makes one is undecided.
        ``p(t+1) - p(t) = N (e - e') p p' = -N e expm1(-Delta x/scale) p p'`` from the step's own
        Delta x: no cancellation between the two p balls (whose width, on the float route, is
        1e-4 of the difference late in the run)."""
        dp = -self.N * P.e * (-P.dx / self.scale).expm1() * P.p * Q.p
        if key == "D9.printed.lower":
            return dp, P.p * (1 - self.K * P.p) * self.d9_lo * P.dx
        if key == "D9.printed.upper":
            return dp, P.p * (1 - self.K * P.p) * self.d9_hi * P.dx
        if key == "D11.printed":
            den = self.D * self.K * P.p * P.p - 2 * self.K * P.p + 1
            return Q.star, P.star * (1 - 3 * self.D * self.K * P.p * dp / den)
        if key == "D16.printed":
            den = self.D * self.K * P.p * P.p - 2 * self.K * P.p + 1 - self.K * dp
            return Q.star - P.star, 3 * (self.N + self.K * P.star) * dp / (2 * den)
        if key == "D12.printed":
            aP, aQ = P.ratio(self), Q.ratio(self)
            gP = aP * P.e * (self.K + self.N * P.e) / (self.K * (1 - P.e))
            gQ = aQ * Q.e * (self.K + self.N * Q.e) / (self.K * (1 - Q.e))
            Dp1 = self.D * P.p - 1
            return gQ, gP - aP * 2 * self.D * self.K * P.p * dp / (self.K * self.K * P.p * P.p * Dp1 * Dp1)
        if key == "D13.printed.step":
            return Q.C1 - P.C1, self.d13_coefficient * self.k.f3(P.e, self.c) / P.p
        if key == "D10.corrected":
            if self.e_c is None:
                return "ambiguous"
            lo, hi = self.e_c
            if Q.e > hi:            # p(t+1) < p_c: C1* increases
                return Q.star, P.star
            if P.e < lo:            # p(t) > p_c: C1* decreases (C1*(t) >= C1*(t+1))
                return P.star, Q.star
            if Q.e < lo and P.e > hi:
                return None         # p(t) < p_c < p(t+1): no claim
            return "ambiguous"
        raise KeyError(key)


class State:
    """The certified state at one step, with the values the one-step statements share."""

    __slots__ = ("t", "C1", "x", "e", "star", "p", "dx", "_ratio")

    def __init__(self, t, C1, x, e, star, dx, K, N):
        self.t, self.C1, self.x, self.e, self.star, self.dx = t, C1, x, e, star, dx
        self.p = 1 / (K + N * e)
        self._ratio = None

    def ratio(self, ev):
        """A/(A+B) at this step (evaluated once)."""
        if self._ratio is None:
            self._ratio = ev.k.a_over_f3(self.e, ev.c)
        return self._ratio


BLOCK = 512   # steps per block (t1 .. T0)
CHUNK = 10000   # steps per chunk of the driver (checkpoints fall between chunks)
REPORT_EVERY = 100000   # progress(t) at every multiple of this (a multiple of CHUNK)
RHO_RADIUS = 1e-30   # C1/C1* balls narrower than this take the cheap hull of a block
WAITING_FOR_T_STAR = ("after_T_star", "observed")   # windows of statements with nothing to check before T*
SAMPLE = 1024   # a counterexample search on the float route checks every SAMPLE-th step first
SUPER = 8     # the float route tries SUPER blocks as one before deciding them one block at a time


def _state_text(b) -> list:
    return [b[0]] + [ball_text(v) for v in b[1:]]


def _state_from_text(b) -> tuple:
    return (b[0],) + tuple(ball_from_text(v) for v in b[1:])


def ball_text(x) -> list:
    """An arb ball as exact text [midpoint, radius] (``man p exp``; see
    :func:`rdyn.reduced_dynamics.runs.checkpoint.exact_text`)."""
    return [exact_text(x), exact_text(x.rad())]


def ball_from_text(pair):
    """Inverse of :func:`ball_text` (the radius may round up to arb's radius precision: the ball
    still contains the saved one)."""
    mid, rad = (from_exact_text(t, "arb") for t in pair)
    return arb(arf(mid.mid().man_exp()), arf(rad.mid().man_exp())) if rad != 0 else mid


def run(inst, statements, *, k, c, consts, T0_of, budget_of, after_T0=None, progress=None,
        hard_cap: int = 10**9, saver=None, checkpoint: str | None = None, checkpoint_every: float = 60.0,
        restored: dict | None = None, bm=None, block: int = BLOCK, exact_budget: bool = False, route=None,
        observe=None) -> Iteration:
    """Iterate from step 0. Statements are checked at every step ``T >= T* + offset`` up to T0
    (``T0_of(T_star)``); the state at T0 is handed to ``after_T0(state) -> keys still open`` (the
    region proof), and the iteration continues, checking only those keys, until each is refuted,
    undecided at a step, or the step budget ``budget_of(T_star)`` is reached (``hard_cap`` before
    T* is known). With ``bm`` (a :class:`.region.BoxMap`), the statements whose region condition is
    in :data:`.region.BLOCK_CONDITIONS` are decided one step at a time up to t1 and then ``block``
    steps at a time up to T0: the condition is shown on a box in (e, w) that contains the block's
    states (and the next one), and a block on which it is not shown is decided step by step.
    The loop is :func:`rdyn.reduced_dynamics.runs.driver.drive`'s (chunks of :data:`CHUNK` steps;
    ``progress(t)`` at every multiple of :data:`REPORT_EVERY`): ``saver(loop_state)`` (optional; it
    writes the file ``checkpoint``) is called between chunks every ``checkpoint_every`` seconds,
    at the end and on KeyboardInterrupt with the loop state (:meth:`_Proof.loop_state`); ``restored`` (a
    loop state read back) continues from it. ``exact_budget``: ``hard_cap`` is the step budget itself, never raised to T0
    (``rdyn prove --max-steps N``: the iteration stops at step N at the latest, T0 reached or not).
    ``route`` (a :class:`.float_route.FloatRoute`, optional) takes every step after t1 + 1 (from
    the arb route's box there): a stretch on which every open statement is decided a block at a
    time, up to the first step whose x is not certainly below T*'s level, without arb arithmetic
    (:mod:`.float_route`), the steps after it one at a time from their rows; the arb route takes
    over for good where the float route cannot take a step. ``observe(t, C1, x, Delta x, e,
    alpha - 1, beta)`` (optional) sees every step taken one at a time (the lag pass; the block
    stretch is before T*)."""
    proof = _Proof(inst, statements, k=k, c=c, consts=consts, T0_of=T0_of, budget_of=budget_of, after_T0=after_T0,
                   hard_cap=hard_cap, saver=saver, bm=bm, block=block, exact_budget=exact_budget, route=route,
                   observe=observe)
    if restored is None:
        proof.begin()
    else:
        proof.restore(restored)
    bar = None if progress is None else StepLines(progress, REPORT_EVERY, start=proof.t)
    drive(proof, chunk=CHUNK, checkpoint=checkpoint if saver is not None else None,
          checkpoint_every=checkpoint_every, bar=bar)
    return proof.result()


def _arb_bounds(states, nxt):
    """(e_lo, e_hi, rho_lo, rho_hi) over the arb states of a block and the state after it."""
    pts = states + [nxt]
    if all(b[5] > 0 for b in states):   # x increases along the block: e(first) >= e >= e(next)
        e_lo, e_hi = lower(nxt[3]), upper(states[0][3])
    else:
        e_lo, e_hi = min(lower(b[3]) for b in pts), max(upper(b[3]) for b in pts)
    rhos = [b[1] / b[4] for b in pts]   # C1/C1*: float midpoints, padded by the rounding and the radii
    if all(r.rad() < RHO_RADIUS for r in rhos):
        mids = [float(r.mid()) for r in rhos]
        lo, hi = min(mids), max(mids)
        pad = 4 * 2.0**-53 * max(abs(lo), abs(hi)) + 2 * RHO_RADIUS
        return e_lo, e_hi, lo - pad, hi + pad
    return e_lo, e_hi, min(lower(r) for r in rhos), max(upper(r) for r in rhos)


class _Proof:
    """One run of :func:`run`: the loop state (the box at step ``t``, T*, t1, T0, the open statements, the
    block being filled, the float route's rows) and the steps that advance it. It is the engine of
    :func:`rdyn.reduced_dynamics.runs.driver.drive` (``advance``, ``done``, ``position``, ``save``).

    A state of the iteration is ``(t, C1, x, e, C1*, Delta x)`` (arb balls but t): ``last`` is the
    previous step's (the one-step statements read the pair), ``buffer`` the states of the current block,
    ``pending`` the float route's rows of the current block after them."""

    finished = False

    def __init__(self, inst, statements, *, k, c, consts, T0_of, budget_of, after_T0, hard_cap, saver, bm, block,
                 exact_budget, route, observe):
        self.t_start = time.perf_counter()
        self.D, self.K = inst.D, inst.K
        self.k, self.c = k, c
        self.T0_of, self.budget_of, self.after_T0 = T0_of, budget_of, after_T0
        self.hard_cap, self.exact_budget, self.saver = hard_cap, exact_budget, saver
        self.bm, self.block, self.route, self.observe = bm, block, route, observe
        self.level = consts["scale"] * (arb(self.D - self.K) / self.K).log()   # p >= 1/(2K) <=> x >= scale log((D-K)/K)
        self.level_lo = lower(self.level)
        self.out = {s.key: Outcome(s.key) for s in statements}
        self.open_keys = list(statements)
        self.by_key = {s.key: s for s in statements}
        self.blockable = frozenset(s.key for s in statements if bm is not None and s.region in BLOCK_CONDITIONS)
        self.iteration = ArbIteration(inst.config(), forms=(DIRECT,), direct=DirectKernels(k.advance, k.first_c1, c))
        self.box = self.iteration.step(self.iteration.start(), DIRECT)   # step 0 -> 1 (exact input: the C1 = 0 branch)
        self.C1, self.x = self.box[0], self.box[3]
        self.t = 1
        self.T_star = self.T0 = self.t1 = None
        self.state_T0 = self.radius_T0 = self.stopped = None
        self.max_steps = hard_cap
        self.ev = Evaluator(inst, k, c, consts)
        self.fraction = arb("0.95")
        self.last = None
        self.active_of, self.active, self.waiting = None, [], []   # the open statements split by blockable, cached
        self.buffer = []
        self.pending = np.empty((0, 12))
        self.route_on, self.route_done = False, route is None
        self.ahead = None   # the float route's quantities of the next step, read off its row once

    # ---------------------------------------------------------------- start, resume, result
    def begin(self):
        """Step 0 (exact: C1 = x = 0, p = 1/D) for the statements that start there."""
        self.last = (0, arb(0), arb(0), arb(1), self.k.star(arb(1), self.c), arb(0))
        self.open_keys = [s for s in self.open_keys
                          if s.window != "until_t1" or self.check(s, 0, arb(0), arb(0), None, arb(1), None)]

    def restore(self, restored: dict):
        """Continue from a saved loop state read back (:meth:`loop_state`)."""
        self.t, self.T_star, self.T0, self.t1, self.max_steps = (
            restored[k_] for k_ in ("t", "T_star", "T0", "t1", "max_steps"))
        self.C1, self.x = ball_from_text(restored["C1"]), ball_from_text(restored["x"])
        self.box = (self.C1, None, None, self.x)   # the direct form's box (a checkpoint's C2, C3, if any, are x's split)
        self.open_keys = [self.by_key[k_] for k_ in restored["open"]]
        for k_, o in restored["outcomes"].items():
            self.out[k_] = Outcome(**o)
        if restored.get("state_T0") is not None:
            self.state_T0 = tuple(ball_from_text(b) for b in restored["state_T0"])
            self.radius_T0 = restored["radius_T0"]
        self.t_start -= restored["seconds"]
        if restored.get("last") is not None:
            self.last = _state_from_text(restored["last"])
        self.buffer = [_state_from_text(b) for b in restored.get("buffer", [])]
        if restored.get("pending"):
            self.pending = np.array(restored["pending"], dtype=float)
        if restored.get("route") is not None and self.route is not None:
            self.route.restore(restored["route"])
            self.route_on = True
        else:   # no float route to finish the block with: its rows as arb states
            self.unpend()

    def loop_state(self) -> dict:
        _, C2, C3 = self.iteration.components(self.box)   # the box's C2, C3 (read off x); a resume reads C1, x
        return {"t": self.t, "T_star": self.T_star, "T0": self.T0, "t1": self.t1, "max_steps": self.max_steps,
                "C1": ball_text(self.C1), "x": ball_text(self.x), "C2": ball_text(C2), "C3": ball_text(C3),
                "open": [s_.key for s_ in self.open_keys],
                "outcomes": {k_: dataclasses.asdict(o) for k_, o in self.out.items()},
                "state_T0": None if self.state_T0 is None else [ball_text(b) for b in self.state_T0],
                "radius_T0": self.radius_T0, "seconds": time.perf_counter() - self.t_start,
                "last": None if self.last is None else _state_text(self.last),
                "buffer": [_state_text(b) for b in self.buffer], "pending": self.pending.tolist(),
                "route": self.route.save(self.t) if self.route_on and not self.route_done else None}

    def result(self) -> Iteration:
        return Iteration(self.T_star, self.T0, self.state_T0, self.t, self.stopped, self.out,
                         time.perf_counter() - self.t_start, self.radius_T0, self.t1)

    # ---------------------------------------------------------------- the driver's engine
    def advance(self, _, n):
        self.finished = self.chunk(n)

    def done(self, _):
        return self.finished

    def position(self, _):
        return self.t

    def save(self, path, _):
        self.saver(self.loop_state())
        return self.t

    # ---------------------------------------------------------------- deciding statements
    def decide(self, s, t, sides, C1, x, e):
        """Decide statement s at step t from ``sides`` = (lhs, rhs[, norm]); the state (C1, x, e)
        of step t goes into a counterexample. Returns True when the step passes."""
        o = self.out[s.key]
        if sides is None:          # no claim at this step
            return True
        if o.checked_from is None:
            o.checked_from = t
        o.checked_to = t
        if isinstance(sides, str):
            o.undecided_step = t
            return False
        lhs, rhs = sides[0], sides[1]
        slack = (rhs - lhs) if s.relation == "le" else (lhs - rhs)
        rel = slack / abs(sides[2] if len(sides) > 2 else rhs)
        if rel > 0:
            low = float(rel.lower())
            if o.min_margin is None or low < o.min_margin:
                o.min_margin = low
            return True
        if rel < 0:
            D, K = self.D, self.K
            ratio = lhs / rhs if rhs != 0 else None
            o.counterexample = {"step": t, "C1": certified_digits(C1), "C2": certified_digits(x * (D - K) / D),
                                "C3": certified_digits(x * K / D), "p": certified_digits(1 / (K + (D - K) * e)),
                                "lhs": certified_digits(lhs), "rhs": certified_digits(rhs),
                                "ratio": certified_digits(ratio) if ratio is not None else "0",
                                "ratio_radius": float(ratio.rad()) if ratio is not None else 0.0,
                                "quantity": s.quantity}
            if ratio is None:
                o.counterexample["ratio_note"] = "rhs = 0: ratio undefined"
        else:
            o.undecided_step = t
        return False

    def sides_at(self, s, t, C1, x, dx, e, star):
        lhs_rhs = self.ev.sides(s.key, t, self.T_star, C1, x, dx, e, star)
        if s.key in ("D5.printed.upper", "D15.printed.lower"):   # the cheap bound first; the exact one decides
            lhs, rhs = lhs_rhs
            rel = ((rhs - lhs) if s.relation == "le" else (lhs - rhs)) / abs(rhs)
            if not rel > 0:
                lhs_rhs = self.ev.sides(s.key, t, self.T_star, C1, x, dx, e, star, exact=True)
        return lhs_rhs

    def check(self, s, t, C1, x, dx, e, star):
        return self.decide(s, t, self.sides_at(s, t, C1, x, dx, e, star), C1, x, e)

    def check_pair(self, s, P, Q):
        return self.decide(s, P.t, self.ev.pair_sides(s.key, P, Q), P.C1, P.x, P.e)

    def passes(self, s, P, Q):
        """Whether statement s certainly holds at the step of state P (Q: the next state), recording
        nothing."""
        sides = self.ev.pair_sides(s.key, P, Q) if s.key in PAIR else self.sides_at(s, P.t, P.C1, P.x, P.dx, P.e, P.star)
        if sides is None:
            return True
        if isinstance(sides, str):
            return False
        lhs, rhs = sides[0], sides[1]
        return bool((rhs - lhs if s.relation == "le" else lhs - rhs) > 0)

    def closed(self, s):
        o = self.out[s.key]
        return o.counterexample is not None or o.undecided_step is not None

    def _states(self, *states):
        return tuple(State(*b, self.K, self.D - self.K) for b in states)

    # ---------------------------------------------------------------- blocks of steps (t1 .. T0)
    def flush(self, states, nxt):
        """Decide the open block statements on the block ``states`` (nxt: the state after it)."""
        if states:
            self.decide_block(_arb_bounds(states, nxt), states[0][0], states[-1][0], lambda: (states, states + [nxt]))

    def decide_block(self, bounds, first, final, arb_states, whole=False):
        """Decide the open block statements on a block of steps ``first .. final`` whose states (and
        the state after it) have e and C1/C1* within ``bounds``; a statement not shown on the block
        is decided step by step on ``arb_states() -> (states, states + [next state])``. ``whole``:
        only if every statement is shown on the block (then True); else nothing is recorded (False)."""
        keys = [s_ for s_ in self.open_keys if s_.key in self.blockable]
        if not keys:
            return True
        e_lo, e_hi, r_lo, r_hi = bounds
        E = ball(e_lo, e_hi)
        W = (ball(r_lo, r_hi) - 1) / (E * E * E)
        res = self.bm.evaluate(e_lo, e_hi, lower(W), upper(W),
                               ("valid",) + tuple(dict.fromkeys(s_.region for s_ in keys)), None)
        valid = res["valid"][0] > 0
        if whole and not (valid and all(res[s_.region][0] > 0 for s_ in keys)):
            return False
        listed = None
        for s_ in keys:
            o = self.out[s_.key]
            sign, value = res[s_.region]
            if valid and sign > 0:
                v = lower(value)
                o.block_margin = v if o.block_margin is None else min(o.block_margin, v)
                o.blocks += 1
                o.checked_from = first if o.checked_from is None else o.checked_from
                o.checked_to = final
                continue
            if listed is None:
                listed = arb_states()
            states, pts = listed
            o.fallback_steps += len(states)
            for i, b in enumerate(states):   # step by step
                if b[0] < (2 if s_.window == "from_2" else 1):
                    continue
                if s_.key in PAIR:
                    ok = self.check_pair(s_, *self._states(b, pts[i + 1]))
                else:
                    ok = self.check(s_, b[0], b[1], b[2], b[5], b[3], b[4])
                if not ok:
                    break
        return True

    # ---------------------------------------------------------------- the float route (after t1 + 1)
    def on_route(self):
        """The step t is the float route's: it took over after t1 + 1 (from the arb route's box)
        and has a row for t. Once it cannot take a step, the arb route goes on for good."""
        if self.route_done:
            return False
        if not self.route_on:
            if self.t1 is None or self.t <= self.t1 + 1:
                return False
            self.route.start(self.C1, self.x, self.t)
            self.route_on = True
        if self.route.ended:
            self.route_done = True
            self.C1, self.x = self.route.box()
            self.box = (self.C1, None, None, self.x)
            self.unpend()
            return False
        return True

    def searched(self, s_):
        """Statement s_ can only be refuted from here on (nothing the iteration checks from now on
        can certify it: no region argument carries it, or T0 is behind), so the float stretch only
        looks for a counterexample of it."""
        return (self.T0 is not None and self.t > self.T0) or (
            s_.region is None and s_.window not in ("until_t1", "before_t1"))

    def stretch_ok(self):
        """Every open statement is decided a block at a time (before T*), waits for T* (not
        reached), or is only searched for a counterexample (:meth:`searched`)."""
        return all((self.T_star is None and (s_.key in self.blockable or s_.window in WAITING_FOR_T_STAR))
                   or self.searched(s_) for s_ in self.open_keys)

    def float_stretch(self, n):
        """The float route's steps, many at a time, until t is a multiple of n (True) or a step that
        must be taken one at a time (False: before T*, the first whose x is not certainly below T*'s
        level; the unfinished block's rows become its states). Block statements are decided a block
        at a time; a statement only searched for a counterexample is checked, without recording, at
        every :data:`SAMPLE`-th step, and at the first where it does not certainly hold it is
        decided at every step since the previous check, in order (the step reported is the first
        failure after the last check where it held)."""
        with signals_blocked():   # the stretch changes the loop's state in many places: a signal waits for its end
            return self._float_stretch(n)

    def _float_stretch(self, n):
        t, block = self.t, self.block
        m = min(n - t % n, self.max_steps - t)   # the budget's last step is taken one at a time (it ends the run)
        rows = self.route.peek(m + 1) if m > 0 else self.route.peek(0)   # and the state after the last (pair statements)
        stop = min(m, len(rows) - 1)
        if self.T_star is None and stop > 0:
            below = rows[:stop, X_HI] < self.level_lo
            stop = stop if below.all() else int(np.argmin(below))
        if stop <= 0:
            self.unpend()
            return False
        memo = {}

        def state(i):
            if i not in memo:
                memo[i] = self._states(row_state(t + i, rows[i]))[0]
            return memo[i]
        search = [s_ for s_ in self.open_keys
                  if self.searched(s_) and not (self.T_star is None and s_.window in WAITING_FOR_T_STAR)]
        previous, last_closed = -1, 0
        for j in sorted({*range(SAMPLE - 1, stop, SAMPLE), stop - 1}) if search else ():
            for s_ in search:
                if self.closed(s_) or self.passes(s_, state(j), state(j + 1)):
                    continue
                for i in range(previous + 1, j + 1):
                    P, Q = state(i), state(i + 1)
                    ok = (self.check_pair(s_, P, Q) if s_.key in PAIR
                          else self.check(s_, P.t, P.C1, P.x, P.dx, P.e, P.star))
                    if not ok:
                        last_closed = max(last_closed, i)
                        break
            previous = j
            if self.T0 is not None and t > self.T0 and all(self.closed(s_) for s_ in self.open_keys):
                stop = last_closed   # the run ends at the step that closed the last statement
                break
        base = t - len(self.pending)   # the step of pending's first row
        if self.T_star is None:
            self.pending = np.vstack((self.pending, rows[:stop])) if len(self.pending) else rows[:stop]
        while len(self.buffer) + len(self.pending) > block:   # a whole block and the state after it
            if not self.buffer and len(self.pending) > SUPER * block:   # SUPER blocks at once, if every statement holds
                bounds = block_bounds(self.pending[:SUPER * block], self.pending[SUPER * block])
                if bounds is not None and self.decide_block(bounds, base, base + SUPER * block - 1, None, whole=True):
                    self.pending = self.pending[SUPER * block:]
                    base += SUPER * block
                    continue
            need = block - len(self.buffer)
            part, nxt = self.pending[:need], self.pending[need]
            bounds = block_bounds(part, nxt) if need else None

            def listed(part=part, nxt=nxt, base=base, need=need, head=list(self.buffer)):
                mine = [row_state(base + i, r) for i, r in enumerate(part)]
                return head + mine, head + mine + [row_state(base + need, nxt)]
            if bounds is None:
                states, pts = listed()
                bounds = _arb_bounds(states, pts[-1])
            elif self.buffer:
                head = _arb_bounds(self.buffer, row_state(base, part[0]))
                bounds = (min(head[0], bounds[0]), max(head[1], bounds[1]), min(head[2], bounds[2]),
                          max(head[3], bounds[3]))
            self.decide_block(bounds, self.buffer[0][0] if self.buffer else base, base + need - 1, listed)
            self.buffer = []
            self.pending = self.pending[need:]
            base += need
        self.open_keys = [s_ for s_ in self.open_keys if not self.closed(s_)]
        if stop:
            self.last = row_state(t + stop - 1, rows[stop - 1])
            self.route.consume(stop)
            self.t = t + stop
            self.C1, self.x = self.route.box()
            self.box = (self.C1, None, None, self.x)
        if stop < m or self.t % n or not self.stretch_ok():   # the steps from here are taken one at a time
            self.unpend()
            return False
        return True

    def unpend(self):
        """The float rows of the unfinished block join its arb states (the steps after them are
        taken one at a time)."""
        if len(self.pending):
            self.buffer = self.buffer + [row_state(self.t - len(self.pending) + i, r)
                                         for i, r in enumerate(self.pending)]
            self.pending = self.pending[:0]

    # ---------------------------------------------------------------- one step at a time
    def chunk(self, n):
        """Steps until t is a multiple of n (the driver's chunk; progress lines fall on its
        ends) or the iteration ends (True)."""
        while True:
            floating = self.on_route()
            if floating and self.stretch_ok() and (
                    self.T_star is None or (self.T0 is not None and self.t > self.T0 and self.open_keys)):
                if self.float_stretch(n):
                    return not self.open_keys and self.T0 is not None and self.t >= self.T0
                if self.T0 is not None and self.t > self.T0 and not self.open_keys:
                    return True
            if not self.C1 > 0:
                self.stopped = f"C1 > 0 not certified at step {self.t} (branch of the map undetermined): C1 = {self.C1}"
                return True
            nxt, here, a1, b0 = self._this_step(floating)
            t, C1, x, e, star, dx = here
            if self.observe is not None:
                self.observe(t, C1, x, dx, e, a1, b0)
            if not self._phase_times(here):
                return True
            self._check_statements(here)
            self.last = here
            if self.T0 is not None and t == self.T0:
                self.state_T0 = (C1, x, e)
                self.radius_T0 = max(float(C1.rad() / C1), float(x.rad() / x))
                if self.after_T0 is not None:
                    keep = set(self.after_T0(self.state_T0, self.out))
                    self.open_keys = [s for s in self.open_keys if s.key in keep]
            if self.T0 is not None and t >= self.T0 and not self.open_keys:
                return True
            if t >= self.max_steps:
                self.stopped = f"step budget {self.max_steps} reached" + (
                    f" before T0 = {self.T0}" if self.T0 is not None and t < self.T0 else
                    " before T* (not reached)" if self.T_star is None and self.exact_budget else "")
                return True
            self._step_to(nxt, floating)
            if self.t % n == 0:
                return False

    def _this_step(self, floating):
        """(the next box or None, this step's state, alpha - 1, beta): on the float route from its row
        (the next box is read later, :meth:`_step_to`), else by the arb route's ``advance``."""
        if floating:   # this step's quantities from its row; the next box from the next row
            if self.ahead is None or self.ahead[0] != self.t:
                self.ahead = row_quantities(self.t, self.route.peek(1)[0])
            _, self.C1, self.x, e, star, dx, a1, b0 = self.ahead
            nxt = None
        else:
            nxt, (dx, e, a1, b0) = self.iteration.advance(self.box, DIRECT)   # the next box and this step's quantities
            star = b0 / (-a1)
        return nxt, (self.t, self.C1, self.x, e, star, dx), a1, b0

    def _phase_times(self, here) -> bool:
        """Certify t1 and T* at this step (the first step where each holds, every earlier one failing); False
        (and ``stopped``) where the ball cannot decide."""
        t, C1, x, e, star, dx = here
        if self.t1 is None:
            test = C1 - self.fraction * star
            if test >= 0:
                self.t1 = t
            elif not test < 0:
                self.stopped = f"t1 not certified: C1 - 0.95 C1* straddles 0 at step {t}"
                return False
        if self.T_star is None:
            if x >= self.level:
                self.T_star = t
                self.T0 = self.T0_of(t)
                self.max_steps = self.hard_cap if self.exact_budget else max(self.T0, self.budget_of(t))
            elif not x < self.level:
                self.stopped = f"T* not certified: p(t) - 1/(2K) straddles 0 at step {t}"
                return False
        return True

    def _check_statements(self, here):
        """Decide the open statements at this step; between t1 and T0 the block statements wait for their block
        (``buffer``), which is decided when it is full or when the blocks end."""
        t = here[0]
        defer = bool(self.blockable) and self.t1 is not None and t > self.t1 and (self.T0 is None or t < self.T0)
        if self.buffer and (len(self.buffer) >= self.block or not defer):
            self.flush(self.buffer, here)
            self.buffer = []
            self.open_keys = [s_ for s_ in self.open_keys if not self.closed(s_)]
        if not self.open_keys:
            return
        if defer:   # the block statements wait for their block; the others are decided now
            if self.active_of is not self.open_keys:
                self.active_of = self.open_keys
                self.active = [s_ for s_ in self.open_keys if s_.key not in self.blockable]
                self.waiting = [s_ for s_ in self.open_keys if s_.key in self.blockable]
            todo, still, deferred = self.active, list(self.waiting), bool(self.waiting)
        else:
            todo, still, deferred = self.open_keys, [], False
        pair = None
        for s in todo:
            if s.key in PAIR:    # the step t - 1 -> t
                if pair is None:
                    pair = self._states(self.last, here)
                if self._pair_stays_open(s, *pair):
                    still.append(s)
            elif self._stays_open(s, here):
                still.append(s)
        if len(still) != len(self.open_keys) or not defer:
            self.open_keys = still
        if deferred:
            if not self.buffer and self.last[0] == self.t1:   # the step t1 -> t1 + 1 of the one-step statements
                self.buffer.append(self.last)
            self.buffer.append(here)

    def _pair_stays_open(self, s, P, Q) -> bool:
        """Decide the one-step statement s on the step P -> Q where its window claims it; whether it stays open."""
        if s.window == "before_t1":
            return self.check_pair(s, P, Q) and (self.t1 is None or self.t1 > P.t + 1)
        start = 2 if s.window == "from_2" else 1
        return P.t < start or self.check_pair(s, P, Q)

    def _stays_open(self, s, here) -> bool:
        """Decide statement s at this step where its window claims it; whether it stays open."""
        t, C1, x, e, star, dx = here
        if s.window == "until_t1":
            return self.check(s, t, C1, x, dx, e, star) and self.t1 is None
        if s.window == "after_1" and x == 0:   # p = 1/D exactly (step 1): D p - 1 = 0, the bound is vacuous
            return True
        if s.window == "after_t1" and self.t1 is None:
            return True
        if s.window not in ("until_t1", "from_1", "after_1", "after_t1") and (
                self.T_star is None or t < self.T_star + s.offset):
            return True
        return self.check(s, t, C1, x, dx, e, star)

    def _step_to(self, nxt, floating):
        """Move to step t + 1 (``nxt``: its box; None on the float route: read off the next row)."""
        if nxt is None:   # the next row (consumed after the assignment; a checkpoint saves the route at t)
            following = self.route.peek(2)
            if len(following) == 2:
                self.ahead = row_quantities(self.t + 1, following[1])
                nxt = (self.ahead[1], None, None, self.ahead[2])
            else:   # the route stopped: its box, where the arb route takes over
                C1n, xn = self.route.box_after()
                nxt = (C1n, None, None, xn)
        self.box, self.C1, self.x, self.t = nxt, nxt[0], nxt[3], self.t + 1   # plain stores: no signal between them
        if floating:
            self.route.consume(1)
