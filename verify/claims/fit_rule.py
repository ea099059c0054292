"""The one decision rule for a rate known only from a finite-size fit (claims ledger).

Where a rate can be derived (late-phase law, slow manifold, Model B's gamma^3 and rho^2
increments) the ledger decides by the derivation and shows fits as evidence only. Where only
a fit exists, every entry is decided by :func:`decide`:

1. **Stabilised window.** The points are ordered towards the asymptotic regime (``x``
   increasing for T, t, D; decreasing for a step size, eta -> 0). The local slopes
   ``s_i = dlog y/dlog x`` between consecutive points are computed; the window is the last
   ``max(3, ceil(n/2))`` points of that order (the asymptotic end). The slope has
   stabilised when the local slopes inside the window span at most
   :data:`STABLE_SPREAD` (absolute). The fit (least squares in log-log, 95% t-interval) uses
   the window only.
2. ``pass`` if the printed exponent lies in the window's 95% interval;
3. ``discrepancy`` if it is excluded **and** the slope has stabilised **and** the interval is
   at most :data:`MAX_WIDTH` wide (absolute) **and** the local slopes are not moving towards
   the printed value: a slope that drifts towards the printed exponent, as ``t^(1/3)`` growth
   with a slowly decaying correction does, is not yet a measurement of the asymptotic
   exponent, however narrow its interval. "Moving towards" means: the last local slope of the
   window is closer to the printed value than the first by more than :data:`TREND_TOLERANCE`,
   and the drift, extrapolated linearly in ``log x`` (which overestimates how far a decaying
   correction can carry it), reaches the printed value within :data:`REACH_EFOLDS` e-folds of
   ``x`` beyond the window; and the gap between the printed and the fitted exponent is at least
   :data:`MIN_GAP` (a smaller gap is below what a finite-range fit resolves: corrections to
   scaling shift a local exponent by that much — Model B's looped ``v`` has slope 0.2509 with a
   95% interval [0.2504, 0.2512] against the derived asymptotic 1/4);
4. else ``inconclusive``, with what would decide it (a longer range, more points).

The intervals come from deterministic data: they measure departure from a pure power law
over the window, not noise; the stabilisation criterion is what makes a narrow interval
meaningful.

Every fitted rate in ``rdyn verify`` and ``rdyn claims`` goes through :func:`decide` (no check
compares a fitted exponent with a threshold of its own; tests/verify/claims/test_claims.py greps for that).
A check stores the fit that decides it under ``fit_decision`` (:func:`fit_detail`): the
ledger counts it by the rule's verdict wherever it sits in the check's detail. A fit that is
evidence only (the entry is decided by a derivation) is stored by :func:`context_fit` under a
key starting with ``context`` and is never counted; its text says "context". A statement
that is neither derived nor decidable by a fit marks its check with :func:`undecided`
(counted ``inconclusive``, with what would decide it).
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Sequence

STABLE_SPREAD = 0.05  # largest spread of the local slopes in the window for "stabilised"
MAX_WIDTH = 0.10      # widest 95% interval that may exclude a printed exponent
#: ``rdyn verify``'s status for each verdict of the rule (verify has no ``inconclusive``: docs/interface.md)
VERIFY_STATUS = {"pass": "pass", "discrepancy": "discrepancy", "inconclusive": "info"}
TREND_TOLERANCE = 1e-3  # approach towards the printed exponent (absolute) that counts as a drift
MIN_GAP = 0.01          # smallest |printed - fitted| exponent gap a fit may call a discrepancy
REACH_EFOLDS = 10.0     # e-folds of x beyond the window within which a drift may reach the printed value


def verify_status(verdicts: Sequence[str]) -> str:
    """``rdyn verify``'s status of one claim decided by one or more fits (verdicts of :func:`decide`):
    ``discrepancy`` if any fit is one, ``pass`` if all pass, else the status of ``inconclusive``."""
    verdicts = list(verdicts)
    if "discrepancy" in verdicts:
        return "discrepancy"
    return "pass" if verdicts and all(v == "pass" for v in verdicts) else VERIFY_STATUS["inconclusive"]


@dataclass(frozen=True)
class FitDecision:
    verdict: str                 # pass / discrepancy / inconclusive
    claimed_exponent: float
    exponent: float              # fitted over the window
    exponent_ci95: tuple[float, float]
    window_x: tuple[float, float]
    window_points: int
    local_slopes: tuple[float, ...]   # in the window
    stabilised: bool
    interval_width: float
    reason: str
    towards_printed: bool = False    # the local slopes drift towards the printed exponent

    def as_dict(self) -> dict:
        out = asdict(self)
        out["exponent_ci95"] = list(self.exponent_ci95)
        out["window_x"] = list(self.window_x)
        out["local_slopes"] = list(self.local_slopes)
        out["rule"] = (f"window = last max(3, n/2) points; stabilised if local slopes span <= "
                       f"{STABLE_SPREAD}; pass if printed in 95% CI; discrepancy if excluded, "
                       f"stabilised, CI width <= {MAX_WIDTH} and the local slopes not moving towards "
                       f"the printed value (by more than {TREND_TOLERANCE}, reaching it within "
                       f"{REACH_EFOLDS:g} e-folds by linear extrapolation) and a gap >= {MIN_GAP}; "
                       "else inconclusive")
        return out


def local_slopes(x: Sequence[float], y: Sequence[float]) -> list[float]:
    return [math.log(y[i + 1] / y[i]) / math.log(x[i + 1] / x[i]) for i in range(len(x) - 1)]


def decide(claimed: float, x: Sequence[float], y: Sequence[float]) -> FitDecision:
    """The rule of the module docstring for ``y ~ C x^claimed`` (``x``, ``y`` positive; ``x``
    strictly monotone and ordered towards the asymptotic regime: increasing for T, t, D,
    decreasing for a step size eta -> 0). The window is the *last* points of that order."""
    from rdyn.verification.references.scaling import fit_power_law

    pts = [(float(a), float(b)) for a, b in zip(x, y) if a > 0 and b > 0]
    steps = [b[0] - a[0] for a, b in zip(pts, pts[1:])]
    if not (all(s > 0 for s in steps) or all(s < 0 for s in steps)):
        raise ValueError("fit_rule.decide: x must be strictly monotone, ordered towards the asymptotic regime")
    n = len(pts)
    if n < 3:
        return FitDecision("inconclusive", claimed, math.nan, (-math.inf, math.inf), (math.nan, math.nan),
                           n, (), False, math.inf, f"only {n} positive points: at least 3 are needed")
    w = max(3, math.ceil(n / 2))
    xs, ys = [p[0] for p in pts[-w:]], [p[1] for p in pts[-w:]]
    slopes = local_slopes(xs, ys)
    spread = max(slopes) - min(slopes)
    stable = spread <= STABLE_SPREAD
    fit = fit_power_law(xs, ys)
    lo, hi = (float(v) for v in fit.exponent_ci[0])
    width = hi - lo
    inside = lo - 1e-9 <= claimed <= hi + 1e-9
    approach = abs(slopes[0] - claimed) - abs(slopes[-1] - claimed)
    efolds_needed = (abs(slopes[-1] - claimed) * abs(math.log(xs[-1] / xs[0])) / approach
                     if approach > 0 else math.inf)
    towards = approach > TREND_TOLERANCE and efolds_needed <= REACH_EFOLDS
    gap = abs(claimed - float(fit.exponents[0]))
    if inside:
        verdict, reason = "pass", f"printed {claimed:g} inside the 95% interval [{lo:.4g}, {hi:.4g}]"
    elif stable and width <= MAX_WIDTH and not towards and gap >= MIN_GAP:
        verdict, reason = "discrepancy", (f"printed {claimed:g} outside the 95% interval [{lo:.4g}, {hi:.4g}] "
                                          f"(width {width:.3g} <= {MAX_WIDTH}; local slopes stabilised, "
                                          f"spread {spread:.3g})")
    else:
        needs = []
        if not stable:
            needs.append(f"the local slope still drifts (spread {spread:.3g} > {STABLE_SPREAD} over the window): "
                         "a longer range of the varied factor")
        if width > MAX_WIDTH:
            needs.append(f"the 95% interval is {width:.3g} wide (> {MAX_WIDTH}): more points in the "
                         "stabilised range")
        if gap < MIN_GAP:
            needs.append(f"the gap to the printed value, {gap:.2g}, is below the resolution of a finite-range "
                         f"fit ({MIN_GAP}): the derived asymptotic exponent")
        if towards:
            needs.append(f"the local slope moves towards the printed value ({slopes[0]:.4g} -> "
                         f"{slopes[-1]:.4g}; linearly extrapolated it reaches it {efolds_needed:.2g} "
                         "e-folds further): a longer range, or the derived asymptotic exponent")
        verdict = "inconclusive"
        reason = (f"printed {claimed:g} outside [{lo:.4g}, {hi:.4g}] but undecided; would be decided by "
                  + "; ".join(needs))
    return FitDecision(verdict, float(claimed), float(fit.exponents[0]), (lo, hi), (xs[0], xs[-1]), w,
                       tuple(slopes), stable, width, reason, towards)


def fit_detail(claimed: float, x: Sequence[float], y: Sequence[float]) -> dict:
    """The detail of a check decided by a fit: the window's fit (``exponent``, ``exponent_ci95``:
    the interval that decides), ``fit_decision``, the points, and the least-squares fit over
    every point as context (``context_full_range_fit``; it never decides)."""
    from rdyn.verification.references.scaling import fit_power_law

    d = decide(claimed, x, y)
    full = fit_power_law(list(x), list(y))
    return {"claimed_exponent": float(claimed), "exponent": d.exponent, "exponent_ci95": list(d.exponent_ci95),
            "fit_decision": d.as_dict(), "x": [float(v) for v in x], "y": [float(v) for v in y],
            "context_full_range_fit": {"role": "context", "exponent": float(full.exponents[0]),
                                       "exponent_ci95": [float(v) for v in full.exponent_ci[0]]}}


def context_fit(claimed: float, x: Sequence[float], y: Sequence[float], decided_by: str) -> dict:
    """A fit shown as evidence only: the entry is decided by ``decided_by`` (a derivation). Store
    it under a key starting with ``context``; the ledger never counts it."""
    d = decide(claimed, x, y)
    return {"role": "context", "decided_by": decided_by, "claimed": float(claimed), "fitted": d.exponent,
            "window_ci95": list(d.exponent_ci95), "window_x": list(d.window_x), "rule_would_say": d.verdict,
            "x": [float(v) for v in x], "y": [float(v) for v in y]}


def text(d: FitDecision | dict, context: bool = False) -> str:
    """``fitted e [lo, hi] over x in [a, b]: verdict`` for a claim line (the deciding interval);
    ``context``: labelled as evidence only."""
    g = (lambda k: d[k]) if isinstance(d, dict) else (lambda k: getattr(d, k))  # noqa: E731
    lo, hi = g("exponent_ci95")
    a, b = g("window_x")
    body = f"fitted {g('exponent'):.3f} [{lo:.3f}, {hi:.3f}] over x in [{a:.4g}, {b:.4g}]"
    return f"context fit (does not decide): {body}" if context else f"{body}: fit rule {g('verdict')}"


def context_text(ctx: dict) -> str:
    """The claim-line text of a :func:`context_fit`."""
    lo, hi = ctx["window_ci95"]
    a, b = ctx["window_x"]
    return (f"context fit (does not decide; decided by {ctx['decided_by']}): fitted {ctx['fitted']:.3f} "
            f"[{lo:.3f}, {hi:.3f}] over x in [{a:.4g}, {b:.4g}]")


def undecided(reason: str) -> dict:
    """Detail entry of a check whose statement rdyn can neither derive nor decide by a fit: the
    ledger counts the check ``inconclusive`` with ``reason`` (what would decide it)."""
    return {"verdict": "inconclusive", "reason": reason}


def deciding_fits(detail, path: str = ""):
    """Every ``fit_decision`` in a check's detail that decides (not under a ``context*`` key),
    as (path, decision dict)."""
    if isinstance(detail, dict):
        for k, v in detail.items():
            if str(k).startswith("context"):
                continue
            if k == "fit_decision" and isinstance(v, dict) and "verdict" in v:
                yield path + "fit_decision", v
            else:
                yield from deciding_fits(v, f"{path}{k}.")
    elif isinstance(detail, (list, tuple)):
        for i, v in enumerate(detail):
            yield from deciding_fits(v, f"{path}{i}.")


def excluding_intervals(detail, path: str = ""):
    """Every deciding interval in a check's detail (a dict with ``claimed_exponent`` and
    ``exponent_ci95``, not under a ``context*`` key) that excludes the claimed exponent:
    (path, claimed, interval)."""
    if isinstance(detail, dict):
        ci, claimed = detail.get("exponent_ci95"), detail.get("claimed_exponent")
        if (isinstance(claimed, (int, float)) and isinstance(ci, (list, tuple)) and len(ci) == 2
                and all(isinstance(v, (int, float)) for v in ci)
                and not (ci[0] - 1e-9 <= claimed <= ci[1] + 1e-9)):
            yield path.rstrip("."), claimed, list(ci)
        for k, v in detail.items():
            if not str(k).startswith("context"):
                yield from excluding_intervals(v, f"{path}{k}.")
    elif isinstance(detail, (list, tuple)):
        for i, v in enumerate(detail):
            yield from excluding_intervals(v, f"{path}{i}.")
