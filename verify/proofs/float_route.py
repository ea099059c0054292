"""The float route of ``rdyn prove``'s iteration (docs/proofs.md, "The float route"): every step after
t1 + 1 read off the rows of the compiled float64 interval iteration of the same map,
:class:`rdyn.reduced_dynamics.certified.interval_direct.IntervalDirect` (outward rounding; every
recorded interval contains the exact real-number quantity of its step).

A block of steps needs only the range of ``e`` and of ``rho = C1/C1*`` over its states and the
state after it (:func:`block_bounds`); those come from the recorded intervals without any arb
arithmetic. Where a step is decided on its own (a block on which a condition is not shown, the
steps from T* to T0, a counterexample search), its row is read as arb balls that contain the
recorded intervals (:func:`row_state`, :func:`row_quantities`).
"""
from __future__ import annotations

import math

import numpy as np

from rdyn.reduced_dynamics.certified.interval import interval_ball
from rdyn.reduced_dynamics.certified.interval_direct import IntervalDirect
from rdyn.verification.proofs.kernels import interval_direct_source

# columns of a record row (interval_direct.COLUMNS): C1, x, dx, e, alpha - 1, beta as (lo, hi)
C1_LO, C1_HI, X_LO, X_HI, DX_LO, DX_HI, E_LO, E_HI, A_LO, A_HI, B_LO, B_HI = range(12)
# a float product or quotient of two floats is within 2^-53 (relative) of the exact one: two
# operations and a pad of 2^-50 on each side enclose the exact rho with room to spare
ROUNDING_PAD = 2.0**-50
NORMAL = 1e-290    # below this a float quotient's relative error bound no longer holds (subnormals)


def block_bounds(rows: np.ndarray, nxt: np.ndarray):
    """(e_lo, e_hi, rho_lo, rho_hi): floats enclosing e and rho = C1/C1* at every step of the
    block ``rows`` and at the step after it (``nxt``, one row); ``C1* = beta/(1 - alpha)``. None
    when the recorded intervals do not make C1 > 0, 1 - alpha > 0 and beta > 0 certain (the caller
    then takes the arb route for the block)."""
    pts = np.vstack((rows, nxt[None, :]))
    c1_lo, c1_hi = pts[:, C1_LO], pts[:, C1_HI]
    contraction_lo, contraction_hi = -pts[:, A_HI], -pts[:, A_LO]   # 1 - alpha = -(alpha - 1)
    b_lo, b_hi = pts[:, B_LO], pts[:, B_HI]
    with np.errstate(all="ignore"):
        if not (np.all(c1_lo > NORMAL) and np.all(contraction_lo > NORMAL) and np.all(b_lo > NORMAL)
                and np.all(np.isfinite(pts))):
            return None
        rho_lo = (c1_lo * contraction_lo / b_hi).min() * (1 - ROUNDING_PAD)
        rho_hi = (c1_hi * contraction_hi / b_lo).max() * (1 + ROUNDING_PAD)
    if not (math.isfinite(rho_lo) and math.isfinite(rho_hi)):
        return None
    if np.all(rows[:, DX_LO] > 0):   # x increases along the block: e(first) >= e >= e(next)
        e_lo, e_hi = float(nxt[E_LO]), float(rows[0, E_HI])
    else:
        e_lo, e_hi = float(pts[:, E_LO].min()), float(pts[:, E_HI].max())
    return e_lo, e_hi, float(rho_lo), float(rho_hi)


def row_state(t: int, row: np.ndarray) -> tuple:
    """The state of step ``t`` in the arb route's form ``(t, C1, x, e, C1*, Delta x)``: balls that
    contain the recorded intervals (so the exact values), ``C1* = beta/(-(alpha - 1))`` in arb."""
    t_, C1, x, e, star, dx, _, _ = row_quantities(t, row)
    return (t_, C1, x, e, star, dx)


def row_quantities(t: int, row: np.ndarray) -> tuple:
    """``(t, C1, x, e, C1*, Delta x, alpha - 1, beta)`` of the row of step t, as arb balls."""
    C1, x, dx, e, a1, b0 = (interval_ball(float(row[2 * i]), float(row[2 * i + 1])) for i in range(6))
    return (t, C1, x, e, b0 / (-a1), dx, a1, b0)


FILL = 10000   # rows the route computes at a time


class FloatRoute:
    """The compiled float64 interval iteration of one instance, read as rows: the row of step t
    holds the (C1, x) box of step t and the enclosures of that step's by-products. Built on first
    use (the kernels' source and machine code are cached on disk; a first run compiles them, a few
    seconds).

    ``params``: the arguments of the kernels' ``prepare`` (arb balls, as the engine builds them);
    ``first_c1``: an arb ball containing C1(1). :meth:`start` hands the route the box of a step;
    :meth:`peek` shows the rows from the current step on, :meth:`consume` moves past them."""

    def __init__(self, activation: str, logit_scale: str, params, first_c1):
        self.activation, self.logit_scale, self.params, self.first_c1 = activation, logit_scale, params, first_c1
        self._route = None
        self.rows = np.empty((0, 12))
        self.t = None          # the step of rows[0] (and of :meth:`box`)
        self._anchors = []     # (loop state, its step) before each computation whose rows are still held

    def _iteration(self):
        if self._route is None:
            self._route = IntervalDirect(interval_direct_source(self.activation, self.logit_scale), self.params,
                                         self.first_c1)
        return self._route

    def start(self, C1, x, t: int) -> None:
        """Continue from the box (C1, x) (arb balls) at step t."""
        route = self._iteration()
        route.set_state(C1, x, t)
        self.rows, self.t, self._anchors = np.empty((0, 12)), t, [(route.st.copy(), t)]

    def peek(self, n: int) -> np.ndarray:
        """The rows of steps t .. t + n - 1 (fewer when the route stopped: C1 > 0 not certain at a
        step, or an endpoint not finite)."""
        route = self._route
        if len(self.rows) < n and not route.stopped:
            self._anchors.append((route.st.copy(), self.t + len(self.rows)))
            more = route.advance(max(n - len(self.rows), FILL))
            self.rows = np.vstack((self.rows, more)) if len(self.rows) else more
        return self.rows[:n]

    def consume(self, k: int) -> None:
        """Move past the first k rows."""
        self.rows, self.t = self.rows[k:], self.t + k
        while len(self._anchors) > 1 and self._anchors[1][1] < self.t:   # one step kept behind (save)
            self._anchors.pop(0)

    def save(self, step: int) -> dict:
        """The loop's state at ``step`` (the current step or the one before it; floats, exact in
        JSON): :meth:`restore` continues with the very rows this route computes from there (the loop
        is a function of that state)."""
        route = self._route
        st, t = next(((a, u) for a, u in reversed(self._anchors) if u <= step), (None, None))
        if st is None:
            raise ValueError(f"the float route holds no state at or before step {step}")
        held = route.st.copy()
        route.st[:] = st
        route.advance(step - t, record=False)
        state = route.st.tolist()
        route.st[:] = held
        return {"st": state, "t": step}

    def restore(self, saved: dict) -> None:
        """Continue from :meth:`save`'s state."""
        route = self._iteration()
        route.st[:] = np.array(saved["st"], dtype=float)
        route.t = saved["t"]
        self.rows, self.t, self._anchors = np.empty((0, 12)), saved["t"], [(route.st.copy(), saved["t"])]

    @property
    def ended(self) -> bool:
        """No row of the current step (the route stopped there)."""
        return len(self.peek(1)) == 0

    def box(self) -> tuple:
        """(C1, x) at the current step, as arb balls containing the float intervals."""
        rows = self.peek(1)
        if len(rows):
            return tuple(interval_ball(float(rows[0, 2 * i]), float(rows[0, 2 * i + 1])) for i in range(2))
        return self.box_after()

    def box_after(self) -> tuple:
        """(C1, x) where the route stopped (the step after its last row), as arb balls."""
        (a, b), (u, v) = self._route.state()
        return interval_ball(a, b), interval_ball(u, v)
