"""Model A with a smooth activation in float64, the fast route: the moments of the
collapsed map tabulated once per run as piecewise Chebyshev interpolants of the state, each
step a tile lookup and a small polynomial inside a compiled event loop.

What is tabulated. At fixed D, K, M, ||V*||^2 and node count n, the moments the map needs each
step, ``m1 = E[h Y1] / r``, ``m2 = E[h Y2] / r`` and ``dm2/dC1``
(:mod:`rdyn.reduced_dynamics.model_a.smooth`), are functions of two scalars only: C1 and
``e = exp(-(C2 + C3)/scale)`` (the attention geometry ``p, s2, s_res, rho`` is a function of e;
:mod:`rdyn.derivations.model_a.collapsed_general`). The table holds, for each tile
``[c0, c1] x [e0, e1]`` of a lattice in (C1, e), the tensor Chebyshev interpolant of degree
:data:`DEGREE` in each variable of the three moments, built from the values of the exact
Gauss-Hermite tensor rule (the n-point rule of ``model_a.smooth.choose_rule``, the same
formulas as ``Expectations.level`` / ``.moments``, evaluated with numpy) at the tile's
(DEGREE+1)^2 Chebyshev points of the first kind. p, the logit gradients and the events are
computed by the same event loop as the compiled rule's (one source,
:mod:`rdyn.reduced_dynamics.model_a.event_loop`): only the three moments come from the table.

The lattice. In each variable ``x >= 0`` (C1 < 0 mirrored, e > 0 always) the tiles are
``[0, h 2^-J)``, then ``[h 2^(j-1-J), h 2^(j-J))`` for j = 1..J (graded towards 0), then
``[m h, (m+1) h)`` for m >= 1. The grading is needed because the moments are smooth but not
analytic at C1 = 0 and e = 0: there the Gaussian scale of sigma's argument vanishes
(``C1 r s2`` for the student, ``r s_res ~ e`` for the teacher's inner average), and a
Gaussian average ``E[f(c Z)]`` of a sigma with complex singularities (tanh: poles at
``i pi/2``) is analytic only in the wedge ``|arg c| < pi/4``; on a tile ``[a, 2a]`` the
non-analytic part is of order ``exp(-const / a^2)``, negligible for the small tiles near 0.

Tiles are built lazily: the compiled loop stops at a step whose tile (or the t1 test's tile at
``C1 / fraction``) is missing, the driver builds it and the loop continues. A tile beyond
:data:`MAX_INDEX` lattice indices (a runaway C1) is not built: that one step runs on the exact
route (``model_a.smooth._compiled_advance``), so each step's route is a function of its state. A tile's
coefficients are a pure function of the run's constants and the tile's index, so a run is
the same bit for bit however it is cut into chunks or resumed.

Error budget. The tile widths (hC, hE) are chosen once per run (:func:`choose_widths`): from
(0.5, 0.25), halved in the direction whose estimate is larger until, on the probe tiles (those
holding the node-choice probe states of ``model_a.smooth.default_probes`` and the graded tiles
at C1 = 0, e = 0), both

* the coefficient-decay estimate ``tail = 2 (sum of |c_kl| with k = DEGREE or l = DEGREE)``
  (:func:`_tail`: the last row and column; for coefficients decaying geometrically by a factor
  below 1/2 per degree, this bounds the truncated series ``sum_{k or l > DEGREE} |c_kl|``, and
  the interpolant's error is at most twice that: aliasing), and
* the largest difference to the exact rule at 4 x 4 independent points inside the tile (not
  interpolation nodes)

are at most :data:`TABLE_TOLERANCE` times the output's scale (its largest magnitude over the
probe tiles). Every tile built later records its own tail estimate; the run reports the
largest (``table_error``). The exact rule's own error (the node ladder's 1e-13) is unchanged:
the table reproduces the rule, it does not replace its error estimate.

The route is used for float64 runs of the activations without closed Gaussian averages (tanh,
softplus, sigmoid, formulas) unless the run asks for the exact rule (``route="exact"``;
``rdyn teacher --smooth-route exact``); erf and GELU keep their compiled closed forms.
The compiled loop does not depend on the activation (it reads only the table), so numba
compiles it once per machine (:mod:`rdyn.reduced_dynamics.runs.kernel_cache`), not once per run.
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

DEGREE = 8                   # Chebyshev degree of a tile in each variable
GRADING = 24                 # J: graded tiles towards 0 in each variable
TABLE_TOLERANCE = 1e-14      # table error allowed, relative to each output's scale
START_WIDTHS = (0.5, 0.25)   # (hC, hE) before halving
MIN_WIDTH = 2.0 ** -9
OUTPUTS = 3                  # m1, m2, dm2/dC1
MAX_INDEX = 2048             # lattice indices a side; beyond: that step on the exact route


# --------------------------------------------------------------------------------------------
# The lattice (graded towards 0): index <-> interval
# --------------------------------------------------------------------------------------------

def tile_index(x: float, h: float, J: int) -> int:
    """The lattice index of ``x >= 0`` (module docstring; compiled into the table loop as it
    stands, :func:`_loop_template`)."""
    t = x / h
    if t >= 1.0:
        return J + int(t)
    if t < 2.0 ** -J:
        return 0
    return J + math.frexp(t)[1]


def tile_bounds(i: int, h: float, J: int) -> tuple[float, float]:
    """The interval ``[a, b)`` of lattice index ``i >= 0``."""
    if i == 0:
        return 0.0, h * 2.0 ** -J
    if i <= J:
        return h * 2.0 ** (i - 1 - J), h * 2.0 ** (i - J)
    m = i - J
    return m * h, (m + 1) * h


def chebyshev_points(d: int) -> np.ndarray:
    """The d+1 Chebyshev points of the first kind on [-1, 1] (descending)."""
    return np.cos(np.pi * (np.arange(d + 1) + 0.5) / (d + 1))


@lru_cache(maxsize=4)
def _values_to_coefficients(d: int) -> np.ndarray:
    """The matrix taking values at :func:`chebyshev_points` to Chebyshev coefficients (the
    discrete cosine transform of the first kind's points)."""
    x = chebyshev_points(d)
    k = np.arange(d + 1)
    T = np.cos(np.outer(k, np.arccos(x)))          # T[k, j] = T_k(x_j)
    out = 2.0 / (d + 1) * T
    out[0] /= 2.0
    return out


# --------------------------------------------------------------------------------------------
# Exact values (the Gauss-Hermite tensor rule, numpy)
# --------------------------------------------------------------------------------------------

class ExactMoments:
    """m1, m2, dm2/dC1 of the n-point rule at many (C1, e) at once: the formulas of
    ``model_a.smooth.Expectations.level`` and ``.moments``, vectorised over C1."""

    def __init__(self, expectations):
        """``expectations``: a float64 ``model_a.smooth.Expectations`` on the run's rule (the
        caller builds it: this module does not import model_a.smooth)."""
        self.num = expectations.num
        self.ex = expectations
        self.r = float(self.ex.r)
        self.w = np.asarray(self.ex.w, dtype=float)

    def level(self, e: float):
        return self.ex.level(float(e))

    def at_level(self, lvl, C1s: np.ndarray) -> np.ndarray:
        """(3, len(C1s)): m1, m2, dm2 at the level ``lvl`` and the C1 values."""
        num, w, r = self.num, self.w, self.r
        arg = np.outer(np.asarray(C1s, dtype=float) * r, lvl.y2)
        B, B1, B2 = num.sigma(arg), num.dsigma(arg), num.d2sigma(arg)
        resid = lvl.teacher_mean - B
        out = np.empty((OUTPUTS, arg.shape[0]))
        out[0] = (B1 * (lvl.teacher_y1 - B * lvl.mu)) @ w / r
        out[1] = (resid * B1 * lvl.y2) @ w / r
        out[2] = (lvl.y2 * lvl.y2 * (resid * B2 - B1 * B1)) @ w
        return out

    def grid(self, C1s, es) -> np.ndarray:
        """(3, len(C1s), len(es))."""
        out = np.empty((OUTPUTS, len(C1s), len(es)))
        for j, e in enumerate(es):
            out[:, :, j] = self.at_level(self.level(e), C1s)
        return out


# --------------------------------------------------------------------------------------------
# The table
# --------------------------------------------------------------------------------------------

def _tail(coefficients: np.ndarray) -> np.ndarray:
    """Per output: 2 x the sum of |c_kl| over the last row and column (k = d or l = d; module
    docstring)."""
    a = np.abs(coefficients)
    return 2.0 * (a[:, -1, :].sum(axis=1) + a[:, :, -1].sum(axis=1) - a[:, -1, -1])


# the stability test's dm2/dC1 (only the sign of 1 + eta D dm2 +- 1 matters) is allowed this
# factor more table error than m1, m2
DM2_SLACK = 100.0


class MomentTable:
    """The lazily built tiles of one run: ``slots`` maps (signed C1 index, e index) to a row of
    ``coefficients`` (rows x 3 x (d+1) x (d+1)) and ``geometry`` (rows x 4: C1 centre,
    1/half-width, e centre, 1/half-width). ``index`` is the dense int32 map the compiled loop
    reads (-1: not built), C1 indices offset by ``c_offset``."""

    def __init__(self, config, nodes: int, widths: tuple[float, float], exact: ExactMoments,
                 degree: int = DEGREE, grading: int = GRADING):
        self.config, self.nodes, self.degree, self.grading = config, nodes, degree, grading
        self.hc, self.he = widths
        self.exact = exact
        self.coefficients = np.zeros((0, degree + 1, degree + 1, OUTPUTS))
        self.geometry = np.zeros((0, 10))
        self.tails = np.zeros((0, OUTPUTS))
        self.slots: dict[tuple[int, int], int] = {}
        self.c_offset = 0
        self.index = np.full((0, 0), -1, dtype=np.int32)
        self._levels: dict[int, list] = {}

    # lattice
    def c_bounds(self, ic: int) -> tuple[float, float]:
        if ic >= 0:
            return tile_bounds(ic, self.hc, self.grading)
        a, b = tile_bounds(-1 - ic, self.hc, self.grading)
        return -b, -a

    def c_index(self, C1: float) -> int:
        i = tile_index(abs(C1), self.hc, self.grading)
        return i if C1 >= 0 else -1 - i

    def e_index(self, e: float) -> int:
        return tile_index(e, self.he, self.grading)

    def _e_levels(self, ie: int):
        """The attention levels at the e nodes of column ``ie`` (n^2 work each; shared by every
        tile of the column)."""
        if ie not in self._levels:
            a, b = tile_bounds(ie, self.he, self.grading)
            es = (a + b) / 2 + (b - a) / 2 * chebyshev_points(self.degree)
            self._levels[ie] = [self.exact.level(e) for e in es]
        return self._levels[ie]

    def tile_values(self, ic: int, ie: int) -> np.ndarray:
        """(3, d+1, d+1): the exact values at the tile's Chebyshev points."""
        a, b = self.c_bounds(ic)
        cs = (a + b) / 2 + (b - a) / 2 * chebyshev_points(self.degree)
        out = np.empty((OUTPUTS, self.degree + 1, self.degree + 1))
        for j, lvl in enumerate(self._e_levels(ie)):
            out[:, :, j] = self.exact.at_level(lvl, cs)
        return out

    def build(self, ic: int, ie: int) -> int:
        """Build tile (ic, ie) if missing; returns its row."""
        key = (int(ic), int(ie))
        if key in self.slots:
            return self.slots[key]
        V = _values_to_coefficients(self.degree)
        values = self.tile_values(*key)
        coefficients = np.einsum("ka,oab,lb->okl", V, values, V)
        a, b = self.c_bounds(key[0])
        ea, eb = tile_bounds(key[1], self.he, self.grading)
        row = len(self.slots)
        self.coefficients = np.concatenate([self.coefficients,
                                            coefficients.transpose(1, 2, 0)[None]])
        spread = np.abs(coefficients[2]).sum() - abs(coefficients[2, 0, 0])
        # margin: the loop evaluates at most a rounding outside [-1, 1]
        spread = spread * (1 + 1e-12) + 1e-300
        self.geometry = np.concatenate(
            [self.geometry, [[(a + b) / 2, 2 / (b - a), (ea + eb) / 2, 2 / (eb - ea),
                              coefficients[2, 0, 0] - spread, coefficients[2, 0, 0] + spread,
                              a + 1e-9 * (b - a), b - 1e-9 * (b - a),
                              ea + 1e-9 * (eb - ea), eb - 1e-9 * (eb - ea)]]])
        self.tails = np.concatenate([self.tails, _tail(coefficients)[None]])
        self.slots[key] = row
        self._place(key, row)
        return row

    def within(self, ic: int, ie: int) -> bool:
        """Whether tile (ic, ie) is within the lattice's reach (:data:`MAX_INDEX` tiles a
        side: the dense index the loop reads stays under 32 MB)."""
        return abs(ic) <= MAX_INDEX and 0 <= ie <= MAX_INDEX

    def _place(self, key, row):
        ic, ie = key
        rows, cols = self.index.shape
        lo, hi = -self.c_offset, rows - self.c_offset
        if not (lo <= ic < hi and ie < cols):
            new_lo, new_hi = min(lo, ic - 8), max(hi, ic + 9)
            new_cols = max(cols, ie + 9)
            grown = np.full((new_hi - new_lo, new_cols), -1, dtype=np.int32)
            grown[lo - new_lo:lo - new_lo + rows, :cols] = self.index
            self.index, self.c_offset = grown, -new_lo
        self.index[ic + self.c_offset, ie] = row

    def evaluate(self, C1: float, e: float) -> np.ndarray:
        """(m1, m2, dm2) from the table (Python; the compiled loop does the same)."""
        row = self.build(self.c_index(C1), self.e_index(e))
        g = self.geometry[row]
        u, v = (C1 - g[0]) * g[1], (e - g[2]) * g[3]
        k = np.arange(self.degree + 1)
        Tu = np.cos(k * np.arccos(np.clip(u, -1, 1))) if abs(u) <= 1 else np.polynomial.chebyshev.chebvander(u, self.degree)
        Tv = np.cos(k * np.arccos(np.clip(v, -1, 1))) if abs(v) <= 1 else np.polynomial.chebyshev.chebvander(v, self.degree)
        return np.einsum("klo,k,l->o", self.coefficients[row], np.ravel(Tu), np.ravel(Tv))

    def error_estimate(self, scales: np.ndarray) -> float:
        """The largest tail estimate of the built tiles relative to the output scales (dm2/dC1
        counted with 1/:data:`DM2_SLACK`)."""
        if len(self.tails) == 0:
            return 0.0
        return float((self.tails / (np.asarray(scales) * [1.0, 1.0, DM2_SLACK])).max())


def _probe_tiles(table: MomentTable, probes) -> list[tuple[int, int]]:
    """The tiles of the probe states (e, C1) and of their t1 test points, plus the graded
    tiles at C1 = 0 and e = 0 in the probes' columns and rows."""
    tiles = set()
    for e, c in probes:
        ic, ie = table.c_index(c), table.e_index(e)
        tiles |= {(ic, ie), (table.c_index(c / 0.95), ie), (0, ie), (ic, 0),
                  (min(table.grading, ic), ie), (ic, min(table.grading, ie))}
    return sorted(tiles)


def _check_points(table: MomentTable, key) -> float:
    """Largest |table - exact rule| / scale-free value at 4 x 4 points of the tile that are
    not interpolation nodes (the Gauss-Legendre points of degree 4, mapped)."""
    a, b = table.c_bounds(key[0])
    ea, eb = tile_bounds(key[1], table.he, table.grading)
    x = np.polynomial.legendre.leggauss(4)[0]
    cs = (a + b) / 2 + (b - a) / 2 * x
    es = (ea + eb) / 2 + (eb - ea) / 2 * x
    exact = table.exact.grid(cs, es)
    worst = np.zeros(OUTPUTS)
    for i, c in enumerate(cs):
        for j, e in enumerate(es):
            worst = np.maximum(worst, np.abs(table.evaluate(c, e) - exact[:, i, j]))
    return worst


_WIDTHS: dict = {}   # (config, nodes, probes) -> choose_widths' result (a pure function of them)


def choose_widths(config, nodes: int, probes: tuple, exact: ExactMoments):
    """((hC, hE), output scales, estimated error): the tile widths of the run (module
    docstring), a pure function of the config, node count and probes (``exact``: the rule on
    those). ValueError (one line) if :data:`MIN_WIDTH` is not enough."""
    key = (config, nodes, probes)
    if key not in _WIDTHS:
        if len(_WIDTHS) >= 8:
            _WIDTHS.clear()
        _WIDTHS[key] = _choose_widths(config, nodes, probes, exact)
    return _WIDTHS[key]


def _choose_widths(config, nodes, probes, exact):
    hc, he = START_WIDTHS
    while True:
        table = MomentTable(config, nodes, (hc, he), exact)
        keys = _probe_tiles(table, probes)
        for key in keys:
            table.build(*key)
        scales = np.maximum(np.abs(table.coefficients).max(axis=(0, 1, 2)), 1e-300)
        error = table.error_estimate(scales)
        if error <= TABLE_TOLERANCE:   # the independent check, once the tails pass
            checked = np.zeros(OUTPUTS)
            for key in keys:
                checked = np.maximum(checked, _check_points(table, key))
            error = max(error, float((checked / (scales * [1.0, 1.0, DM2_SLACK])).max()))
            if error <= TABLE_TOLERANCE:
                return (hc, he), tuple(float(v) for v in scales), error
        # halve the direction whose last coefficients are larger
        c_part = np.abs(table.coefficients[:, -2:, :, :]).sum()
        e_part = np.abs(table.coefficients[:, :, -2:, :]).sum()
        if c_part >= e_part and hc > MIN_WIDTH:
            hc /= 2
        elif he > MIN_WIDTH:
            he /= 2
        elif hc > MIN_WIDTH:
            hc /= 2
        else:
            from rdyn.derivations.fields import FieldError

            raise FieldError("activation", f"{{activation}} {config.activation.label}: no table "
                             f"of degree {DEGREE} with tiles down to {MIN_WIDTH} reaches "
                             f"{TABLE_TOLERANCE} (estimated {error:.1e}); use {{route}} exact",
                             "route")


# --------------------------------------------------------------------------------------------
# The compiled loop (activation-free: cached on disk once per machine)
# --------------------------------------------------------------------------------------------

def _loop_template():
    """Source of the compiled functions (a template: ``GRAD_IN`` / ``GRAD_OUT`` are replaced by
    the derived logit gradients, ``TILE_INDEX`` by the source of :func:`tile_index`)."""
    return '''
import math

import numpy as np

from rdyn.reduced_dynamics.runs.kernel_cache import njit


@njit(inline="always")
def grad_in(C1, e, K, N, V, hY1, hY2):
    return GRAD_IN


@njit(inline="always")
def grad_out(C1, e, K, N, V, hY1, hY2):
    return GRAD_OUT


@njit(inline="always")
TILE_INDEX

@njit(inline="always")
def find(C1, e, hc, he, J, index, c_offset):
    if C1 >= 0.0:
        ic = tile_index(C1, hc, J)
    else:
        ic = -1 - tile_index(-C1, hc, J)
    ie = tile_index(e, he, J)
    row = ic + c_offset
    if row < 0 or row >= index.shape[0] or ie >= index.shape[1]:
        return -1, ic, ie
    return index[row, ie], ic, ie


@njit(inline="always")
def chebyshev(x, T):
    T[0] = 1.0
    T[1] = x
    for k in range(2, DEGREE + 1):
        T[k] = 2.0 * x * T[k - 1] - T[k - 2]


@njit(inline="always")
def evaluate(slot, C1, e, coefficients, geometry, Tu, Tv):
    """(m1, m2) of the tile's interpolant at (C1, e)."""
    chebyshev((C1 - geometry[slot, 0]) * geometry[slot, 1], Tu)
    chebyshev((e - geometry[slot, 2]) * geometry[slot, 3], Tv)
    m1 = 0.0
    m2 = 0.0
    for k in range(DEGREE + 1):
        a0 = 0.0
        a1 = 0.0
        for l in range(DEGREE + 1):
            a0 += coefficients[slot, k, l, 0] * Tv[l]
            a1 += coefficients[slot, k, l, 1] * Tv[l]
        m1 += Tu[k] * a0
        m2 += Tu[k] * a1
    return m1, m2


@njit(inline="always")
def evaluate_one(slot, C1, e, coefficients, geometry, Tu, Tv, o):
    """Output o (1: m2, 2: dm2/dC1) of the tile's interpolant at (C1, e)."""
    chebyshev((C1 - geometry[slot, 0]) * geometry[slot, 1], Tu)
    chebyshev((e - geometry[slot, 2]) * geometry[slot, 3], Tv)
    total = 0.0
    for k in range(DEGREE + 1):
        a = 0.0
        for l in range(DEGREE + 1):
            a += coefficients[slot, k, l, o] * Tv[l]
        total += Tu[k] * a
    return total


'''


def _table_iterate_source() -> str:
    """The event loop (:func:`rdyn.reduced_dynamics.model_a.event_loop.loop_source`) with the
    moments from the table: status 2 when tile ``need[0], need[1]`` is missing (nothing of the
    step done); dm2/dC1 evaluated only where the tile's bounds on it do not decide the
    stability test."""
    from rdyn.reduced_dynamics.model_a.event_loop import loop_source

    return '\n@njit' + loop_source(
        args="hc, he, J, index, c_offset, coefficients, geometry, need",
        setup='''
            Tu = np.empty(DEGREE + 1)
            Tv = np.empty(DEGREE + 1)
            slot = -1
            # the current tile's box shrunk by 1e-9 of its widths (geometry[slot, 6:10]): inside
            # it find() returns the same tile for certain, so the shortcut never changes a result
            c_lo = c_hi = e_lo = e_hi = 0.0
            ''',
        moments='''
            if not (slot >= 0 and c_lo <= C1 < c_hi and e_lo <= e < e_hi):
                slot, ic, ie = find(C1, e, hc, he, J, index, c_offset)
                if slot < 0:
                    need[0] = ic
                    need[1] = ie
                    status = 2
                    break
                c_lo = geometry[slot, 6]
                c_hi = geometry[slot, 7]
                e_lo = geometry[slot, 8]
                e_hi = geometry[slot, 9]
            test = t1 < 0 and t >= 1
            slot_t = 0
            if test:
                slot_t, ic, ie = find(C1 / fraction, e, hc, he, J, index, c_offset)
                if slot_t < 0:
                    need[0] = ic
                    need[1] = ie
                    status = 2
                    break
            p = 1.0 / (K + N * e)
            m1, m2 = evaluate(slot, C1, e, coefficients, geometry, Tu, Tv)
            ''',
        t1='''
            if test:
                m2f = evaluate_one(slot_t, C1 / fraction, e, coefficients, geometry, Tu, Tv, 1)
                if m2f <= 0.0:
                    t1 = t
            ''',
        lost='''
            # dm2/dC1 only where the tile's bounds on it (geometry[slot, 4:6]) do not
            # already put the multiplier 1 + eta D dm2 inside (-1, 1)
            low = 1.0 + eta * D * geometry[slot, 4]
            high = 1.0 + eta * D * geometry[slot, 5]
            if not (-1.0 < low and high < 1.0):
                dm2 = evaluate_one(slot, C1, e, coefficients, geometry, Tu, Tv, 2)
                mult = 1.0 + eta * D * dm2
                if not (-1.0 < mult < 1.0):
                    lost = t
            ''')


def _gradient_sources() -> tuple[str, str]:
    """The derived logit gradients (:func:`rdyn.derivations.model_a.collapsed.logit_gradients_symbolic`)
    printed as Python expressions in (C1, e, K, N, V, hY1, hY2)."""
    import sympy as sp

    from rdyn.derivations.model_a import collapsed as ma

    lg = ma.logit_gradients_symbolic()
    names = {ma.C1: sp.Symbol("C1"), ma.out_group_ratio: sp.Symbol("e"), ma.K: sp.Symbol("K"),
             ma.N: sp.Symbol("N"), ma.vstar_norm2: sp.Symbol("V")}
    return tuple(sp.pycode(x.subs(names)) for x in (lg.in_group, lg.out_group))


@lru_cache(maxsize=1)
def compiled_table_loop():
    """The compiled ``iterate`` (numba, cached on disk by :mod:`rdyn.reduced_dynamics.
    kernel_cache`; the gradients' source is cached too, so a warm process imports no sympy)."""
    from rdyn.reduced_dynamics.runs import kernel_cache

    def generate():
        g_in, g_out = _gradient_sources()
        import inspect

        return ((_loop_template() + _table_iterate_source()).replace("GRAD_IN", g_in)
                .replace("GRAD_OUT", g_out).replace("DEGREE", str(DEGREE))
                .replace("TILE_INDEX\n", inspect.getsource(tile_index) + "\n"))

    source = kernel_cache.cached_source("smooth_table_loop", (DEGREE,), generate)
    return kernel_cache.load_module("smooth_table_loop", source, "the smooth-activation table loop").iterate


# --------------------------------------------------------------------------------------------
# The run's advance (model_a.smooth._run drives it)
# --------------------------------------------------------------------------------------------

class TableRoute:
    """A run's table: widths, scales, the lazily built tiles, and ``advance(loop, chunk_end)``
    with the interface of ``model_a.smooth._compiled_advance``."""

    def __init__(self, config, nodes: int, probes, expectations, exact_advance):
        """``expectations``: the float64 ``Expectations`` of the run's n-point rule;
        ``exact_advance(eta, t1_fraction, level, default_run, min_default_steps, end, grid)``:
        the exact route's advance (``model_a.smooth``, for states beyond the lattice)."""
        probes = tuple((float(e), float(c)) for e, c in probes)
        exact = ExactMoments(expectations)
        widths, scales, self.chosen_error = choose_widths(config, nodes, probes, exact)
        self.scales = np.array(scales)
        self.table = MomentTable(config, nodes, widths, exact)
        self.config = config
        self._exact_advance = exact_advance

    @property
    def error(self) -> float:
        return max(self.chosen_error, self.table.error_estimate(self.scales))

    def advancer(self, eta_f, t1_fraction, level, default_run, min_default_steps, end, grid):
        from rdyn.reduced_dynamics.model_a import compiled as mc
        from rdyn.reduced_dynamics.runs.divergence import STATE_BOUND

        iterate = compiled_table_loop()
        capture_steps = np.array(sorted(grid), dtype=np.int64)
        cfg, table = self.config, self.table
        need = np.zeros(2, dtype=np.int64)

        exact = []

        def exact_step():
            if not exact:
                exact.append(self._exact_advance(eta_f, t1_fraction, level, default_run,
                                                 min_default_steps, end, grid))
            return exact[0]

        def _counters(loop):
            return mc.loop_counters(loop, capture_steps)

        def _sync(loop, state, ev, out):
            """Copy the compiled loop's state, counters and captures into ``loop``."""
            mc.sync_loop(loop, state, ev, out, capture_steps)

        def advance(loop, chunk_end):
            state = np.array([float(v) for v in loop.state])
            ev = _counters(loop)
            out = np.full((capture_steps.shape[0], 3), np.nan)
            while True:
                status = iterate(state, ev, int(chunk_end), float(eta_f), float(cfg.D),
                                 float(cfg.K), float(cfg.M), float(cfg.vstar_norm2),
                                 float(cfg.scale), float(t1_fraction), float(level),
                                 bool(default_run), int(min_default_steps), int(end),
                                 capture_steps, out, float(STATE_BOUND), table.hc, table.he,
                                 int(table.grading), table.index, int(table.c_offset),
                                 table.coefficients, table.geometry, need)
                if status != 2:
                    break
                if table.within(int(need[0]), int(need[1])):
                    table.build(int(need[0]), int(need[1]))
                    continue
                # a state beyond the lattice's reach (a runaway C1): this one step on the
                # exact route (model_a_smooth's compiled advance), then the table again
                _sync(loop, state, ev, out)
                exact_step()(loop, loop.t + 1)
                if loop.done:
                    return
                state = np.array([float(v) for v in loop.state])
                ev = _counters(loop)
                out = np.full((capture_steps.shape[0], 3), np.nan)
            _sync(loop, state, ev, out)
            loop.done = status == 1

        return advance
