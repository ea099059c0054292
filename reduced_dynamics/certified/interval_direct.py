"""The direct form of the certified iteration of Model A's collapsed map (Lemma D.2) on
outward-rounded float64 intervals, compiled (numba): the float sibling of
:class:`rdyn.reduced_dynamics.certified.arb_iteration.ArbIteration`'s ``form="direct"`` (the map
``rdyn prove`` iterates), on the interval primitives of
:mod:`rdyn.reduced_dynamics.certified.interval` (those of the interval64 certified pass).

The state at step t is a box of two intervals ``C1 = [C1_lo, C1_hi]``, ``x = [x_lo, x_hi]``
(``x = C2 + C3``; ``C2 = x (D-K)/D``, ``C3 = x K/D`` along the trajectory from 0) that contains
the exact real-number iterate. The map, on the C1 > 0 branch, is

    e = exp(-x/scale),  C1' = C1 (1 + (alpha - 1)(e)) + beta(e),  x' = x + Delta x(C1, e),

printed from the same sympy expressions as the arb kernels by
:func:`rdyn.verification.proofs.kernels.interval_direct_source` (``direct_step``) together with its
Jacobian (``direct_jacobian``: dC1'/dC1, dC1'/dx, dDelta x/dC1, dDelta x/dx, and the x-derivatives
of alpha - 1 and beta; sympy derivatives). That source is an upper layer's: the caller hands it
in, as it hands :class:`~rdyn.reduced_dynamics.certified.arb_iteration.DirectKernels` to the arb
form. Step 0 -> 1 is exact input (C1 = x = 0, the C1 = 0 branch): the caller hands in an arb
ball of C1(1), enclosed here in floats; x(1) = 0.

Enclosure: the mean-value form. The plain interval evaluation of the map on the box does not
keep a float enclosure narrow: x enters its own update twice, and the dependency effect compounds
over the steps (at ReLU, D = 12, K = 3, eta = 0.01 the box was [-5, 10] x [-34, 118] by step
1.2e6). Within the branch C1 > 0 the map f is smooth, so for every point X of the box and its
float midpoint m (inside the box), f(X) = f(m) + J(xi)(X - m) with xi on the segment [m, X],
inside the box; for a box Y containing the box, J(xi) lies in the interval Jacobian J(Y). With
|X - m| <= r componentwise, f(X) lies in f([m]) + [-|J(Y)| r, |J(Y)| r] (|.| the largest
magnitude of each interval entry, r rounded up). The same bound encloses the by-products
Delta x (its Jacobian row without the 1 of x' = x + Delta x), alpha - 1 and beta (their
x-derivatives) and e (de/dx = -e/scale) over the box, from the point evaluation f([m]). J(Y) is
bounded once over a box Y around the state, widened in the direction of motion for about
``block`` steps, inside C1 > 0, and reused while the box stays inside Y (checked before every step
with exact float comparisons); then a new Y.

Rigour. Every operation is one of :mod:`rdyn.reduced_dynamics.certified.interval`'s primitives,
under the assumptions (A1)-(A3) stated there: IEEE binary64 ``+ - * / sqrt`` correctly rounded to
nearest, rounding mode never changed, no FMA contraction (tested on the machine code), no libm:
``exp`` is enclosed by a Cody-Waite reduction and a degree-7 Taylor polynomial with the Lagrange
remainder ``|r|^8/8! e^|r| <= 6e-21`` (|r| <= 0.011), ``atan`` by a table of arb enclosures of
atan(j/16) and the alternating series to degree 13 with remainder ``|u|^15/15`` (|u| <= 1/32);
``atan`` and ``exp`` of a non-point interval by
:func:`~rdyn.reduced_dynamics.certified.interval.iatan_narrow` and
:func:`~rdyn.reduced_dynamics.certified.interval.iexp_narrow` (one evaluation each:
``0 < atan' <= 1``, ``exp(d) <= 1 + d + d^2`` for ``0 <= d <= 1``). Every endpoint is rounded outward by ``up``/``down`` (at
least one float spacing). The constants ``c`` are the generated ``prepare`` on arb balls
(256 bits), enclosed by :func:`~rdyn.reduced_dynamics.certified.interval.arb_to_interval`
(exact comparisons). So every box contains the exact iterate, and every recorded by-product
interval contains the exact by-product of the step (Delta x = x(t+1) - x(t), e, alpha - 1,
beta at the exact state of step t).

Width. x is kept as a double-double centre ``xc = xc_hi + xc_lo`` and a radius ``xr``: the map is
evaluated at the float point ``m = xc_hi``; the centre moves by the centre ``gd`` of Delta x there,
added exactly (:func:`~rdyn.reduced_dynamics.certified.interval.dd_add`: the sum of the low parts is
rounded once, its error bounded and added to the radius), and

    x' - xc' = (1 + dDx/dx)(x - xc) + dDx/dx xc_lo + dDx/dC1 (C1 - m1) + (Delta x(m1, m) - gd),

so ``xr' = |1 + JD22| xr + |JD22| |xc_lo| + |J21| r1 + rad(Delta x(m1, m)) + that rounding``
(|.| the magnitudes over Y). The rounding of ``x + Delta x`` (a few ulp of x a step, which made a
plain float centre's width grow linearly: relative 3.5e-10 at 2.4e6 steps) no longer enters; what
is left is of the order of ulp(Delta x). C1's width stays near the rounding level divided by the
contraction (relative 2e-13 at T0 = 1177528 at the instance above). :meth:`IntervalDirect.relative_radius`
reports the widest relative half-width.

The loop is ``advance(st, n, c, rec)``: up to n steps, the state at each step and its by-products
written to ``rec`` (one row a step, :data:`COLUMNS`); it stops early, leaving the state at the
step it could not take, when ``C1 > 0`` is not certain (``st[S_STOPPED] = STOP_BRANCH``) or an
endpoint is not finite (``STOP_NONFINITE``).
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from rdyn.reduced_dynamics.certified.interval import PRIMITIVES, _jit, arb_to_interval

# the state st[...]: C1 and x intervals, the stop code; the block box Y and the magnitude bounds
# of the Jacobian over it (valid while the box stays inside Y), the last moves of C1 and x
S_C1LO, S_C1HI, S_XLO, S_XHI, S_STOPPED = 0, 1, 2, 3, 4
S_Y1LO, S_Y1HI, S_Y2LO, S_Y2HI, S_JVALID = 5, 6, 7, 8, 9
S_J11, S_J12, S_J21, S_J22, S_JD22, S_JA, S_JB = 10, 11, 12, 13, 14, 15, 16
S_DC1, S_DX, S_BLOCK, S_JACOBIANS, S_JE = 17, 18, 19, 20, 21
# x as a double-double centre xc_hi + xc_lo and a radius: x lies in [xc - xr, xc + xr]; S_XLO, S_XHI
# hold the float enclosure of that interval
S_XCHI, S_XCLO, S_XR = 22, 23, 24
N_STATE = 25
STOP_BRANCH, STOP_NONFINITE = 1, 2
# one row of the record per step t: the state at t and the by-products of the step t -> t + 1
COLUMNS = ("C1", "x", "dx", "e", "alpha_minus_1", "beta")   # each a (lo, hi) pair: 12 floats
N_REC = 2 * len(COLUMNS)


@_jit
def _magnitude(a):
    """max |v| over the interval a."""
    return max(-a[0], a[1])


def _direct_template(st, n, c, rec):
    """Up to n steps of the direct form from the box in ``st``; returns the number taken.

    A template: its source is copied into each generated kernel module (where ``direct_step``
    and ``direct_jacobian`` are that configuration's functions) and compiled there by numba.
    ``rec`` has at least n rows, or 0 rows (nothing recorded).
    """
    keep = rec.shape[0] > 0
    for i in range(n):
        C1 = (st[S_C1LO], st[S_C1HI])
        x = (st[S_XLO], st[S_XHI])
        if not (C1[0] > 0):
            st[S_STOPPED] = STOP_BRANCH
            return i
        m1, r1 = centre_radius(C1)
        xc_hi, xc_lo, xr = st[S_XCHI], st[S_XCLO], st[S_XR]
        m2 = xc_hi   # the point of evaluation: x - m2 = (x - xc) + xc_lo
        r2 = up(xr + abs(xc_lo))
        if not (st[S_JVALID] > 0 and C1[0] >= st[S_Y1LO] and C1[1] <= st[S_Y1HI]
                and x[0] >= st[S_Y2LO] and x[1] <= st[S_Y2HI]):
            # a new block box Y around X, widened in the direction of motion, inside C1 > 0
            block = st[S_BLOCK]
            w1 = min(max(block * abs(st[S_DC1]) * 2.0, 1e-9 * m1), 1e-3 * m1) + 16.0 * r1
            Y1 = (down(C1[0] - w1), up(C1[1] + w1))
            if not (Y1[0] > 0):
                Y1 = C1
            w2 = min(max(block * abs(st[S_DX]) * 2.0, 1e-12 * (abs(m2) + 1.0)), 1e-2) + 16.0 * r2
            if st[S_DX] >= 0:
                Y2 = (down(x[0] - 1e-3 * w2), up(x[1] + w2))
            else:
                Y2 = (down(x[0] - w2), up(x[1] + 1e-3 * w2))
            J11, J12, J21, JD22, JA, JB = direct_jacobian(Y1, Y2, c)
            st[S_J11] = _magnitude(J11)
            st[S_J12] = _magnitude(J12)
            st[S_J21] = _magnitude(J21)
            st[S_J22] = _magnitude(iadd((1.0, 1.0), JD22))
            st[S_JD22] = _magnitude(JD22)
            st[S_JA] = _magnitude(JA)
            st[S_JB] = _magnitude(JB)
            c0 = (c[0, 0], c[0, 1])   # -1/scale (the generated source's first constant)
            st[S_JE] = _magnitude(imul(iexp(imul(Y2, c0)), c0))   # |de/dx| = e/scale over Y
            st[S_Y1LO] = Y1[0]
            st[S_Y1HI] = Y1[1]
            st[S_Y2LO] = Y2[0]
            st[S_Y2HI] = Y2[1]
            st[S_JVALID] = 1.0
            st[S_JACOBIANS] += 1.0
        # the mean-value form: f(X) in f(m) + J(Y) (X - m), m the midpoint (a float inside X),
        # X - m in [-r, r] componentwise, so J (X - m) in [-|J| r, |J| r]
        G1, G2, Gd, Ge, Ga, Gb = direct_step((m1, m1), (m2, m2), c)
        rC1 = up(up(st[S_J11] * r1) + up(st[S_J12] * r2))
        rd = up(up(st[S_J21] * r1) + up(st[S_JD22] * r2))
        ra = up(st[S_JA] * r2)
        rb = up(st[S_JB] * r2)
        re = up(st[S_JE] * r2)
        C1n = (down(G1[0] - rC1), up(G1[1] + rC1))
        # x' = x + Delta x(C1, x): the centre moves by gd, the centre of Delta x at the point (m1, m2),
        # added in double-double (two_sum exact; the low parts' sum rounded, its error in the radius);
        # x' - xc' = (1 + dDx/dx)(x - xc) + dDx/dx xc_lo + dDx/dC1 (C1 - m1) + (Delta x(m1, m2) - gd)
        gd, rgd = centre_radius(Gd)
        new_hi, new_lo, low_err = dd_add(xc_hi, xc_lo, gd)
        new_r = up(up(up(up(st[S_J22] * xr) + up(st[S_JD22] * abs(xc_lo))) + up(st[S_J21] * r1))
                   + up(rgd + low_err))
        xn = (down(new_hi - up(new_r + abs(new_lo))), up(new_hi + up(new_r + abs(new_lo))))
        if not (abs(C1n[0]) < INF and abs(C1n[1]) < INF and abs(xn[0]) < INF and abs(xn[1]) < INF):
            st[S_STOPPED] = STOP_NONFINITE
            return i
        if keep:
            rec[i, 0] = C1[0]
            rec[i, 1] = C1[1]
            rec[i, 2] = x[0]
            rec[i, 3] = x[1]
            rec[i, 4] = down(Gd[0] - rd)
            rec[i, 5] = up(Gd[1] + rd)
            rec[i, 6] = max(down(Ge[0] - re), 0.0)
            rec[i, 7] = up(Ge[1] + re)
            rec[i, 8] = down(Ga[0] - ra)
            rec[i, 9] = up(Ga[1] + ra)
            rec[i, 10] = down(Gb[0] - rb)
            rec[i, 11] = up(Gb[1] + rb)
        st[S_C1LO] = C1n[0]
        st[S_C1HI] = C1n[1]
        st[S_XLO] = xn[0]
        st[S_XHI] = xn[1]
        st[S_XCHI] = new_hi
        st[S_XCLO] = new_lo
        st[S_XR] = new_r
        st[S_DC1] = 0.5 * (G1[0] + G1[1]) - m1
        st[S_DX] = gd
    return n


def generated_module_source(source: str) -> str:
    """The text of the generated module: ``source`` (``prepare`` on arb balls and ``direct_step``
    on intervals, :func:`rdyn.verification.proofs.kernels.interval_direct_source`) with
    ``direct_step`` compiled, and the loop ``advance`` (the source of :func:`_direct_template`)."""
    from rdyn.reduced_dynamics.runs import kernel_cache

    arithmetic = sorted(set(PRIMITIVES) | {"INF"})   # up, iadd, imul, ...
    loop_names = sorted({"_magnitude"} | {n for n in globals() if n[:2] == "S_" or n.startswith("STOP_")})
    imports = [
        "from flint import arb as R",
        "from rdyn.derivations.codegen import arb_namespace",
        "from rdyn.reduced_dynamics.certified.interval import (" + ", ".join(arithmetic) + ")",
        "from rdyn.reduced_dynamics.certified.interval import iatan_narrow as iatan, iexp_narrow as iexp",
        "from rdyn.reduced_dynamics.certified.interval_direct import (" + ", ".join(loop_names) + ")",
        "F = arb_namespace()",
    ]
    return kernel_cache.assemble_module("rdyn.reduced_dynamics.certified.interval_direct", imports, source,
                                        ("direct_step", "direct_jacobian"), _direct_template)


@lru_cache(maxsize=None)
def direct_kernels(source: str):
    """The generated module of ``source`` (``prepare``, ``direct_step``, ``advance``), cached on
    disk with its machine code by :mod:`rdyn.reduced_dynamics.runs.kernel_cache`."""
    from rdyn.reduced_dynamics.runs import kernel_cache

    return kernel_cache.load_module("interval_direct", generated_module_source(source),
                                    "interval64 direct-form kernels")


def _set_x(st, x) -> None:
    """x (an arb ball) as the double-double centre and radius of ``st`` (and its float enclosure)."""
    from flint import arb

    mid = x.mid()
    hi = float(mid)
    lo = float(mid - arb(hi))
    rest = abs(mid - arb(hi) - arb(lo)) + x.rad()   # what the two floats leave out, plus the ball's radius
    st[S_XCHI], st[S_XCLO] = hi, lo
    st[S_XR] = arb_to_interval(rest)[1]
    st[[S_XLO, S_XHI]] = arb_to_interval(x)


class IntervalDirect:
    """The direct form on float64 intervals for one configuration.

    ``source``: :func:`rdyn.verification.proofs.kernels.interval_direct_source`'s text for the
    configuration's activation and logit scale; ``params``: the arguments of its ``prepare``
    (arb balls: sqrt(K), sqrt(D-K), eta, ||V*||^2, kappa, sigma'(0)); ``first_c1``: an arb ball
    containing C1(1) (the C1 = 0 branch from the exact initial state); ``block``: the Jacobian
    is bounded once over a box Y sized for about that many steps and reused while the state stays
    in Y (a speed setting only). After construction the box is the one of step 1 (``t = 1``)."""

    def __init__(self, source: str, params, first_c1, block: int = 4096):
        import flint
        from flint import arb

        self.module = direct_kernels(source)
        if "def direct_step(C1, x, c):\n    _c0 = (c[0, 0], c[0, 1])" not in source or "iexp(imul(x, _c0))" not in source:
            raise ValueError("the source's first constant is not -1/scale (the loop's e = exp(x c[0]))")
        old, flint.ctx.prec = flint.ctx.prec, 256
        try:
            self.c = np.array([arb_to_interval(arb(v)) for v in self.module.prepare(*params)])
        finally:
            flint.ctx.prec = old
        lo, hi = arb_to_interval(first_c1)
        self.st = np.zeros(N_STATE)
        self.st[[S_C1LO, S_C1HI]] = lo, hi
        self.st[S_BLOCK] = block
        self.t = 1

    def set_state(self, C1, x, t: int) -> None:
        """Continue from the box (C1, x) at step ``t`` (arb balls, enclosed outward in floats): the
        box of another route (the arb iteration) handed over; the Jacobian box is bounded afresh."""
        st = self.st
        st[[S_C1LO, S_C1HI]] = arb_to_interval(C1)
        _set_x(st, x)
        st[S_STOPPED] = 0.0
        st[S_JVALID] = 0.0
        self.t = t

    @property
    def stopped(self) -> int:
        return int(self.st[S_STOPPED])

    def state(self) -> tuple:
        """((C1_lo, C1_hi), (x_lo, x_hi)) at step ``t``."""
        st = self.st
        return (float(st[S_C1LO]), float(st[S_C1HI])), (float(st[S_XLO]), float(st[S_XHI]))

    def relative_radius(self) -> float:
        """max over C1, x of half-width / |midpoint| at step ``t`` (0 for a point)."""
        worst = 0.0
        for lo, hi in self.state():
            mid = 0.5 * lo + 0.5 * hi
            half = 0.5 * hi - 0.5 * lo
            if half > 0:
                worst = max(worst, half / abs(mid) if mid != 0 else math.inf)
        return worst

    def advance(self, n: int, record: bool = True):
        """Take up to n steps; returns the record (an (m, 12) array, row i the state at step
        t + i and the by-products of its step, :data:`COLUMNS`; None with ``record=False``),
        m < n when the iteration stopped (:attr:`stopped`)."""
        rec = np.empty((n, N_REC)) if record else np.empty((0, N_REC))
        m = int(self.module.advance(self.st, n, self.c, rec))
        self.t += m
        return rec[:m] if record else None
