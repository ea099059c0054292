"""Steps 0 .. T0 (and beyond, for statements no region argument carries): the certified arb
iteration of Model A's collapsed map (seed 000, Lemma D.2) with every statement of
:mod:`.statements` decided at every step.

The state is ``(C1, x)`` with ``x = C2 + C3`` (``C2 = x (D-K)/D``, ``C3 = x K/D`` exactly, since
``C3 = K/(D-K) C2`` along the whole trajectory from 0). Every ball provably contains the exact
real-number iterate: step 0 -> 1 is the ``C1 = 0`` branch at the exact initial state; after that
``C1 > 0`` is checked at every step (the branch of the map), and the update is the generated
``advance`` of :mod:`.kernels`, in which ``C1`` enters its own update once (``C1 (1 - lambda) +
beta``) so the ball contracts with the map instead of growing by the dependency effect.
``t1 = min{t >= 1 : C1(t) >= 0.95 C1*(t)}`` (Lemma D.13) and
``T* = min{t : p(t) >= 1/(2K)}`` are certified likewise; T* is certified as the first step whose ``x`` is certainly at or
above ``scale log((D-K)/K)`` with every earlier step certainly below.
"""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class Outcome:
    """What the iteration established about one statement."""

    key: str
    checked_from: int | None = None
    checked_to: int | None = None
    min_margin: float | None = None         # smallest certified relative slack over the checked steps
    counterexample: dict | None = None
    undecided_step: int | None = None       # first step whose enclosure straddles the bound


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
    from rdyn.verification.proofs.balls import hull

    return hull(a, b) if a.upper() >= b.upper() else hull(b, a)


def digits(ball, n: int = 40) -> str:
    """The ball's midpoint to n significant digits."""
    return ball.mid().str(n, radius=False)


class Evaluator:
    """Per-step lhs/rhs of every statement (arb balls), from the state at step T."""

    def __init__(self, inst, k, c, consts):
        from flint import arb

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
        from rdyn.verification.proofs.balls import ball

        from rdyn.verification.proofs.balls import lower

        self.d5_ratio_min = arb(max(0.0, min(lower(k.a_over_f3(ball(i / 64, (i + 1) / 64), c)) for i in range(64))))
        self.band_hi = 4 * arb.pi() + 1
        self.inc_hi = 2 * self.eg2 / self.scale
        self.inc_lo = 2 * self.qmin * self.eg2 / self.scale

    def sides(self, key: str, T: int, T_star: int, C1, x, dx, e, star=None, exact: bool = False):
        """(lhs, rhs) of statement ``key`` at step T (``star``: C1*(T)). For Lemma D.5 the rhs uses
        a certified lower bound of A/(A+B) over 0 <= e <= 1 unless ``exact`` (a smaller rhs: a
        step it passes passes the statement, and its relative slack is a lower bound)."""
        if key == "D13.printed.attention":
            return 1 / (self.K + self.N * e), self.attention_bound
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


def ball_text(x) -> list:
    """An arb ball as exact text [midpoint, radius] (``man p exp``; see
    :func:`rdyn.reduced_dynamics.runs.checkpoint.exact_text`)."""
    from rdyn.reduced_dynamics.runs.checkpoint import exact_text

    return [exact_text(x), exact_text(x.rad())]


def ball_from_text(pair):
    """Inverse of :func:`ball_text` (the radius may round up to arb's radius precision: the ball
    still contains the saved one)."""
    from flint import arb, arf

    from rdyn.reduced_dynamics.runs.checkpoint import from_exact_text

    mid, rad = (from_exact_text(t, "arb") for t in pair)
    return arb(arf(mid.mid().man_exp()), arf(rad.mid().man_exp())) if rad != 0 else mid


def run(inst, statements, *, k, c, consts, T0_of, budget_of, after_T0=None, progress=None,
        hard_cap: int = 10**9, saver=None, checkpoint_every: float = 60.0, restored: dict | None = None) -> Iteration:
    """Iterate from step 0. Statements are checked at every step ``T >= T* + offset`` up to T0
    (``T0_of(T_star)``); the state at T0 is handed to ``after_T0(state) -> keys still open`` (the
    region proof), and the iteration continues, checking only those keys, until each is refuted,
    undecided at a step, or the step budget ``budget_of(T_star)`` is reached (``hard_cap`` before
    T* is known). ``saver(snapshot)`` (optional) is called every ``checkpoint_every`` seconds and
    on KeyboardInterrupt with the loop state (:func:`snapshot`); ``restored`` (a snapshot read back)
    continues from it."""
    import time

    from flint import arb

    t_start = time.perf_counter()
    D, K = inst.D, inst.K
    level = consts["scale"] * (arb(D - K) / K).log()   # p >= 1/(2K)  <=>  x >= scale log((D-K)/K)
    out = {s.key: Outcome(s.key) for s in statements}
    open_keys = [s for s in statements]
    C1, x = k.first_c1(c), arb(0)
    t = 1
    T_star = None
    T0 = None
    state_T0 = None
    stopped = None
    advance = k.advance
    ev = Evaluator(inst, k, c, consts)
    radius_T0 = None
    max_steps = hard_cap
    next_report = 100000
    t1 = None
    fraction = arb("0.95")

    def check(s, t, C1, x, dx, e, star):
        o = out[s.key]
        lhs, rhs = ev.sides(s.key, t, T_star, C1, x, dx, e, star)
        slack = (rhs - lhs) if s.relation == "le" else (lhs - rhs)
        rel = slack / abs(rhs)
        if not rel > 0 and s.key in ("D5.printed.upper", "D15.printed.lower"):   # the exact one decides
            lhs, rhs = ev.sides(s.key, t, T_star, C1, x, dx, e, star, exact=True)
            slack = (rhs - lhs) if s.relation == "le" else (lhs - rhs)
            rel = slack / abs(rhs)
        if o.checked_from is None:
            o.checked_from = t
        o.checked_to = t
        if rel > 0:
            low = float(rel.lower())
            if o.min_margin is None or low < o.min_margin:
                o.min_margin = low
            return True
        if rel < 0:
            o.counterexample = {"step": t, "C1": digits(C1), "C2": digits(x * (D - K) / D),
                                "C3": digits(x * K / D), "p": digits(1 / (K + (D - K) * e)),
                                "lhs": digits(lhs), "rhs": digits(rhs), "ratio": digits(lhs / rhs),
                                "ratio_radius": float((lhs / rhs).rad()), "quantity": s.quantity}
        else:
            o.undecided_step = t
        return False

    by_key = {s.key: s for s in statements}
    if restored is None:
        # step 0 (exact: C1 = x = 0, p = 1/D) for the statements that start there
        open_keys = [s for s in open_keys if s.window != "until_t1" or check(s, 0, arb(0), arb(0), None, arb(1), None)]
    else:
        t, T_star, T0, t1, max_steps = (restored[k_] for k_ in ("t", "T_star", "T0", "t1", "max_steps"))
        C1, x = ball_from_text(restored["C1"]), ball_from_text(restored["x"])
        open_keys = [by_key[k_] for k_ in restored["open"]]
        for k_, o in restored["outcomes"].items():
            out[k_] = Outcome(**o)
        if restored.get("state_T0") is not None:
            state_T0 = tuple(ball_from_text(b) for b in restored["state_T0"])
            radius_T0 = restored["radius_T0"]
        t_start -= restored["seconds"]

    def snapshot():
        import dataclasses

        return {"t": t, "T_star": T_star, "T0": T0, "t1": t1, "max_steps": max_steps,
                "C1": ball_text(C1), "x": ball_text(x), "open": [s_.key for s_ in open_keys],
                "outcomes": {k_: dataclasses.asdict(o) for k_, o in out.items()},
                "state_T0": None if state_T0 is None else [ball_text(b) for b in state_T0],
                "radius_T0": radius_T0, "seconds": time.perf_counter() - t_start}

    last_save = time.perf_counter()
    try:
        while True:
            if not C1 > 0:
                stopped = f"C1 > 0 not certified at step {t} (branch of the map undetermined): C1 = {C1}"
                break
            C1n, xn, dx, e, a1, b0 = advance(C1, x, c)
            star = None
            if t1 is None:
                star = b0 / (-a1)
                test = C1 - fraction * star
                if test >= 0:
                    t1 = t
                elif not test < 0:
                    stopped = f"t1 not certified: C1 - 0.95 C1* straddles 0 at step {t}"
                    break
            if T_star is None:
                if x >= level:
                    T_star = t
                    T0 = T0_of(T_star)
                    max_steps = max(T0, budget_of(T_star))
                elif not x < level:
                    stopped = f"T* not certified: p(t) - 1/(2K) straddles 0 at step {t}"
                    break
            if open_keys:
                still = []
                for s in open_keys:
                    if s.window == "until_t1":
                        if check(s, t, C1, x, dx, e, star) and t1 is None:
                            still.append(s)
                        continue
                    if s.window == "after_1":
                        if x == 0:   # p = 1/D exactly (step 1): D p - 1 = 0, the bound is vacuous
                            still.append(s)
                            continue
                        if star is None:
                            star = b0 / (-a1)
                        if check(s, t, C1, x, dx, e, star):
                            still.append(s)
                        continue
                    if s.window == "after_t1":
                        if t1 is None:
                            still.append(s)
                            continue
                        if star is None:
                            star = b0 / (-a1)
                        if check(s, t, C1, x, dx, e, star):
                            still.append(s)
                        continue
                    if T_star is None or t < T_star + s.offset:
                        still.append(s)
                        continue
                    if check(s, t, C1, x, dx, e, star):
                        still.append(s)
                open_keys = still
            if T0 is not None and t == T0:
                state_T0 = (C1, x, e)
                radius_T0 = max(float(C1.rad() / C1), float(x.rad() / x))
                if after_T0 is not None:
                    keep = set(after_T0(state_T0, out))
                    open_keys = [s for s in open_keys if s.key in keep]
            if T0 is not None and t >= T0 and not open_keys:
                break
            if t >= max_steps:
                stopped = f"step budget {max_steps} reached"
                break
            C1, x, t = C1n, xn, t + 1   # one assignment: a signal never splits it
            if saver is not None and time.perf_counter() - last_save >= checkpoint_every:
                saver(snapshot())
                last_save = time.perf_counter()
            if progress is not None and t >= next_report:
                progress(t)
                next_report += 100000
    except KeyboardInterrupt:
        if saver is None:
            raise
        from rdyn.reduced_dynamics.runs.checkpoint import Interrupted

        path = saver(snapshot())
        raise Interrupted(t, path) from None
    if saver is not None:
        saver(snapshot())
    return Iteration(T_star, T0, state_T0, t, stopped, out, time.perf_counter() - t_start, radius_T0, t1)
