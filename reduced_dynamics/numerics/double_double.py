"""Double-double arithmetic in numba: error-free transformations, + - * / sqrt, exp, atan.

A double-double (dd) number is a pair ``(hi, lo)`` of float64 with ``hi = fl(hi + lo)``: the
unevaluated sum hi + lo carries 106 significant bits (about 31.9 decimal digits). This is
the arithmetic of ``rdyn teacher --precision dd`` (:mod:`rdyn.reduced_dynamics.model_a.double_double_run`): the
generated Model A kernels call ``dadd, dsub, dneg, dmul, ddiv, dsqr, dpow, dsqrt, dexp,
datan, dpoint, dpi`` (names printed by :func:`rdyn.derivations.codegen.emit_interval_ssa` with
``op="d"``).

Assumptions: IEEE 754 binary64, round to nearest, no FMA contraction and no reassociation
(numba without ``fastmath``), no overflow inside the splitting (|x| < 2^996) — the Model A
quantities are far inside that range. u = 2^-53 below.

Error-free transformations (exact for all finite floats in range):

* ``two_sum(a, b) -> (s, e)``: s = fl(a + b), s + e = a + b exactly (Knuth; 6 flops).
* ``quick_two_sum(a, b)`` (needs |a| >= |b| or a = 0): the same in 3 flops (Dekker).
* ``two_prod(a, b) -> (p, e)``: p = fl(a b), p + e = a b exactly, with Dekker's split by
  2^27 + 1 (Veltkamp) instead of an FMA.

Arithmetic (error bounds relative to the exact result of the dd operands, from Joldes,
Muller and Popescu, "Tight and rigorous error bounds for basic building blocks of
double-word arithmetic", ACM TOMS 44 (2017)): ``dadd`` is their AccurateDWPlusDW,
<= 3u^2 / (1 - 4u); ``dmul`` is Dekker's product (DWTimesDW1 without FMA, the lo*lo term
dropped), a few u^2; ``ddiv`` computes three quotient digits with exact remainders (QD
library's accurate division); ``dsqrt`` is one Newton step from the float64 root
(Karp-Markstein). Measured worst cases on 4000 random arguments against 50-digit mpmath
(u^2 = 2^-106 = 1.23e-32): dadd 1.1 u^2, dmul 2.6 u^2, ddiv 1.5 u^2, dsqrt 5.5 u^2.

exp (``dexp``). Reduction: n = round(64 x / ln2), j = n mod 64, m = (n - j) / 64;
r = x - n (ln2/64) with ln2/64 = E1 + E2 + E3 (E1 has 36 bits, so n E1 is exact for
|n| < 2^17, which covers every x in [-745.2, 709.78]; n E2 is taken exactly by two_prod;
|n E3| < 2^-88), so |r| <= ln2/128 + 1e-16 <= 5.42e-3 and the reduction error is a few
u^2 |r|. exp(x) = 2^m * 2^(j/64) * exp(r), 2^(j/64) from a dd table (50-digit mpmath,
rounded to dd: <= u^2/2 relative), 2^m applied exactly as two powers of two (a subnormal
result is rounded once). exp(r) = 1 + r P(r), P(r) = sum_{k=1}^{12} r^(k-1)/k!:
* truncation: the omitted terms k >= 13 of expm1(r) are at most |r|^13/13! e^|r|, relative
  to |expm1(r)| >= |r| (1 - |r|/2): <= |r|^12/13! * 1.006 / 0.997 <= 1.1e-37 (< 1e-5 u^2);
* the terms k = 7..12 are summed in float64 (Horner in fl(r)): their share of P is at most
  |r|^6/7! * 1.01 <= 5.1e-18 and float64 gets it to ~8u relative, i.e. <= 4.6e-33
  (0.4 u^2) of P; the terms k <= 6 use dd Horner (6 dmul + 6 dadd, each a few u^2).
Measured worst case on 2e4 random arguments in [-50, 50] against 50-digit mpmath: 3.5 u^2
(tests/reduced_dynamics/test_long_horizons.py asserts 1e-31 = 8 u^2). x > 709.78: (inf, 0); x < -745.2:
(0, 0) (the true value is below 2^-1074).

atan (``datan``). atan(-x) = -atan(x); for x > 1, atan(x) = pi/2 - atan(1/x) (pi/2 as a
dd; the result is >= pi/4, so no cancellation); for y in [0, 1], j = round(64 y),
c = j/64 (exact), u = (y - c) / (1 + c y), |u| <= 1/128 (plus rounding), atan(y) =
atan(c) + atan(u) with atan(c) from a dd table (50-digit mpmath) and
atan(u) = u Q(u^2), Q(v) = sum_{k=0}^{7} (-1)^k v^k / (2k+1):
* truncation: alternating series with decreasing terms, so the remainder is at most
  |u|^17/17 <= |u| 2^-112/17, relative to atan(u) >= |u| (1 - u^2/3): <= 1.2e-35
  (< 1e-3 u^2);
* the terms k = 4..7 are summed in float64: their share of Q is at most v^4/9 <= 2^-56/9
  = 1.5e-18, to ~6u relative: <= 2e-33 (0.2 u^2); k <= 3 in dd.
Measured worst case against 50-digit mpmath: 1.9 u^2 on [-3, 3], 3.1 u^2 on |x| in
[1e-8, 1e8] (asserted: 1e-31).
"""
from __future__ import annotations

import math
import sys

import numba
import numpy as np

_jit = numba.njit(cache=True)

SPLITTER = 134217729.0        # 2^27 + 1
EXP_TERMS = 12                # Taylor degree of expm1(r), |r| <= ln2/128 (+ rounding)
ATAN_TABLE_STEP = 64          # atan(j/64), j = 0..64
ATAN_TERMS = 7                # u - u^3/3 + ... - u^15/15


def dd_of(value) -> tuple[float, float]:
    """The dd pair nearest to an mpmath number / decimal string / python-flint arb midpoint:
    hi = fl(value), lo = fl(value - hi)."""
    import mpmath

    with mpmath.workprec(240):
        flint = sys.modules.get("flint")   # an arb exists only once flint is loaded
        if flint is not None and isinstance(value, flint.arb):
            value = mpmath.mpf(value.mid().str(80, radius=False))
        x = mpmath.mpf(value)
        hi = float(x)
        lo = float(x - hi)
    return hi, lo


def dd_to_mpf(pair):
    """hi + lo exactly as an mpmath number (needs working precision >= 106 bits to keep it)."""
    import mpmath

    return mpmath.mpf(float(pair[0])) + mpmath.mpf(float(pair[1]))


def _tables():
    import mpmath

    with mpmath.workdps(60):
        inv_fact = np.array([dd_of(1 / mpmath.factorial(k)) for k in range(EXP_TERMS + 1)])
        exp_c = np.array([float(1 / mpmath.factorial(k)) for k in range(EXP_TERMS + 1)])
        two_j = np.array([dd_of(mpmath.mpf(2) ** (mpmath.mpf(j) / 64)) for j in range(64)])
        ln2_64 = mpmath.log(2) / 64
        e1 = math.floor(float(ln2_64) * 2.0 ** 42) / 2.0 ** 42     # 36 bits: n * e1 exact
        e2 = float(ln2_64 - e1)
        e3 = float(ln2_64 - e1 - e2)
        atan_j = np.array([dd_of(mpmath.atan(mpmath.mpf(j) / ATAN_TABLE_STEP))
                           for j in range(ATAN_TABLE_STEP + 1)])
        atan_c = np.array([dd_of(mpmath.mpf((-1) ** k) / (2 * k + 1))
                           for k in range(ATAN_TERMS + 1)])
        atan_cf = np.array([(-1) ** k / (2 * k + 1) for k in range(ATAN_TERMS + 1)])
        pi = dd_of(mpmath.pi)
        pi_2 = dd_of(mpmath.pi / 2)
    pow2 = np.array([math.ldexp(1.0, k) for k in range(-600, 601)])
    return (inv_fact, exp_c, two_j, (e1, e2, e3), atan_j, atan_c, atan_cf, pi, pi_2, pow2)


(inv_fact, exp_c, two_j, (LN2_64_1, LN2_64_2, LN2_64_3), atan_j, atan_c, atan_cf, PI, PI_2,
 pow2) = _tables()
INV_LN2_64 = 64.0 / math.log(2.0)     # only chooses n; not part of the error bound


# ------------------------------------------------------------------ error-free transformations

@_jit
def two_sum(a, b):
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)

@_jit
def quick_two_sum(a, b):
    s = a + b
    return s, b - (s - a)

@_jit
def split(a):
    t = SPLITTER * a
    hi = t - (t - a)
    return hi, a - hi

@_jit
def two_prod(a, b):
    p = a * b
    ah, al = split(a)
    bh, bl = split(b)
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


# ------------------------------------------------------------------ arithmetic on (hi, lo)

@_jit
def dpoint(x):
    return (x, 0.0)

@_jit
def dpi():
    return PI

@_jit
def dneg(a):
    return (-a[0], -a[1])

@_jit
def dadd(a, b):
    s, e = two_sum(a[0], b[0])
    t, f = two_sum(a[1], b[1])
    e += t
    s, e = quick_two_sum(s, e)
    e += f
    return quick_two_sum(s, e)

@_jit
def dsub(a, b):
    return dadd(a, (-b[0], -b[1]))

@_jit
def dmul(a, b):
    p, e = two_prod(a[0], b[0])
    e += a[0] * b[1] + a[1] * b[0]
    return quick_two_sum(p, e)

@_jit
def dmul_d(a, b):
    """dd times a float."""
    p, e = two_prod(a[0], b)
    e += a[1] * b
    return quick_two_sum(p, e)

@_jit
def dsqr(a):
    return dmul(a, a)

@_jit
def dpow(a, n):
    result = a
    for _ in range(n - 1):
        result = dmul(result, a)
    return result

@_jit
def ddiv(a, b):
    q1 = a[0] / b[0]
    r = dsub(a, dmul_d(b, q1))
    q2 = r[0] / b[0]
    r = dsub(r, dmul_d(b, q2))
    q3 = r[0] / b[0]
    q1, q2 = quick_two_sum(q1, q2)
    return dadd((q1, q2), (q3, 0.0))

@_jit
def dsqrt(a):
    if a[0] <= 0.0:
        return (0.0, 0.0) if a[0] == 0.0 else (math.nan, math.nan)
    x = 1.0 / math.sqrt(a[0])
    ax = a[0] * x
    p, e = two_prod(ax, ax)
    diff = dsub(a, (p, e))[0] * (x * 0.5)
    return dadd((ax, 0.0), (diff, 0.0))

@_jit
def dge(a, b):
    """a >= b for normalised dd numbers (lexicographic on (hi, lo))."""
    return a[0] > b[0] or (a[0] == b[0] and a[1] >= b[1])


# ------------------------------------------------------------------ exp and atan

@_jit
def dexp(a):
    x = a[0]
    if x != x:
        return (math.nan, math.nan)
    if x > 709.78:
        return (math.inf, 0.0)
    if x < -745.2:
        return (0.0, 0.0)
    n = math.floor(x * INV_LN2_64 + 0.5)
    r = dadd(a, (-n * LN2_64_1, 0.0))              # n * LN2_64_1 exact (|n| < 2^17, 36 bits)
    r = dadd(r, two_prod(-n, LN2_64_2))            # exact product
    r = dadd(r, (-n * LN2_64_3, 0.0))              # |n LN2_64_3| < 2^-88: rounding ~2^-141
    rh = r[0]
    # expm1(r) = r (c1 + r (c2 + ... r (c6 + r T))), T = c7 + ... + c12 r^5 in float64
    tail = exp_c[12]
    for k in range(11, 6, -1):
        tail = exp_c[k] + rh * tail
    p = dadd((inv_fact[6, 0], inv_fact[6, 1]), (rh * tail, 0.0))
    for k in range(5, 0, -1):
        p = dadd(dmul(p, r), (inv_fact[k, 0], inv_fact[k, 1]))
    y = dadd((1.0, 0.0), dmul(p, r))
    ni = np.int64(n)
    j = ni % 64
    y = dmul(y, (two_j[j, 0], two_j[j, 1]))
    m = (ni - j) // 64
    m1 = m // 2
    f1 = pow2[m1 + 600]
    f2 = pow2[m - m1 + 600]
    return ((y[0] * f1) * f2, (y[1] * f1) * f2)

@_jit
def _atan_unit(y):
    """atan(y) for a dd y in [0, 1]."""
    j = np.int64(math.floor(ATAN_TABLE_STEP * y[0] + 0.5))
    j = min(max(j, 0), ATAN_TABLE_STEP)
    cj = j / ATAN_TABLE_STEP
    u = ddiv(dsub(y, (cj, 0.0)), dadd((1.0, 0.0), dmul_d(y, cj)))
    v = dmul(u, u)
    vh = v[0]
    # atan(u) = u (c0 + v (c1 + v (c2 + v (c3 + v T)))), T = c4 + ... + c7 v^3 in float64
    tail = atan_cf[ATAN_TERMS]
    for k in range(ATAN_TERMS - 1, 3, -1):
        tail = atan_cf[k] + vh * tail
    p = dadd((atan_c[3, 0], atan_c[3, 1]), (vh * tail, 0.0))
    for k in range(2, -1, -1):
        p = dadd(dmul(p, v), (atan_c[k, 0], atan_c[k, 1]))
    return dadd((atan_j[j, 0], atan_j[j, 1]), dmul(u, p))

@_jit
def datan(a):
    if a[0] != a[0]:
        return (math.nan, math.nan)
    negative = a[0] < 0
    y = (-a[0], -a[1]) if negative else a
    if y[0] > 1.0 or (y[0] == 1.0 and y[1] > 0):
        res = dsub(PI_2, _atan_unit(ddiv((1.0, 0.0), y)))
    else:
        res = _atan_unit(y)
    return (-res[0], -res[1]) if negative else res


PRIMITIVES = ("dpoint", "dpi", "dneg", "dadd", "dsub", "dmul", "dmul_d", "dsqr", "dpow",
              "ddiv", "dsqrt", "dexp", "datan", "dge")
