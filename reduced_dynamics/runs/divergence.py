"""Divergence of an iterated state: one rule for every iterator (Model A's collapsed map, Model
B's recursions, the full-matrix cross-checks).

A run *diverges* at the first step t whose state has a component that is not finite or whose
magnitude exceeds :data:`STATE_BOUND` = 1e100. The bound is where float64 stops being able to
evaluate the observables: the losses are quadratic in the state (Model A: ``C1**2`` times
||V*||_F^2 and attention factors; Model B: ``gamma**2`` moments), so a state component above
1e100 leaves an observable above 1e200 and a single further step overflows (float64's largest
number is about 1.8e308). The same bound applies at every precision, so whether a run diverged
does not depend on the backend. A diverged run reports ``diverged_at_step`` and its reason and
never phase boundaries (t1, T*), fitted slopes or agreement figures computed from it.
"""
from __future__ import annotations

from typing import Callable, Iterable

STATE_BOUND = 1e100


def is_diverged(values: Iterable) -> bool:
    """True when some value is not finite or exceeds :data:`STATE_BOUND` in magnitude (floats,
    numpy arrays, mpmath or python-flint numbers: ``abs(x) <= bound`` is False for nan)."""
    import numpy as np

    for x in values:
        if isinstance(x, np.ndarray):
            with np.errstate(invalid="ignore"):
                if not bool(np.all(np.abs(x) <= STATE_BOUND)):
                    return True
            continue
        try:
            inside = abs(x) <= STATE_BOUND
        except (TypeError, ValueError):
            return True
        if not bool(inside):
            return True
    return False


def first_diverged_step(diverged_after: Callable[[int], tuple[int, bool]], lo: int, hi: int) -> int:
    """The first step in (lo, hi] at which the state has diverged, given that it has not at
    step ``lo`` and has at step ``hi``. ``diverged_after(s)`` runs from step lo to step s and
    returns (the step reached, whether the state there has diverged). Bisection: O(log(hi - lo))
    calls; divergence is taken as permanent (an overflowed state stays non-finite)."""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        reached, bad = diverged_after(mid)
        if bad:
            hi = reached
        elif reached <= lo:
            break
        else:
            lo = reached
    return hi


def reason(what: str = "the state") -> str:
    """The one-line reason printed and stored with ``diverged_at_step``."""
    return (f"{what} left the float64-safe range (a component non-finite or above "
            f"{STATE_BOUND:.0e} in magnitude)")
