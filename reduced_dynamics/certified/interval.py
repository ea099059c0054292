"""Outward-rounded float64 interval arithmetic (numba): the primitives of the interval64
certified pass and of the direct form's loop, and :class:`Interval`, the same sharp operations behind
Python operators (the Model B prover's branch and bound, :mod:`rdyn.verification.proofs.model_b`): one
interval arithmetic, one rounding argument.

The certified iteration itself (state layout, events, the loop, checkpoints, the generated
kernel module) is :mod:`rdyn.reduced_dynamics.certified.interval_pass`, a fast sibling of
:func:`rdyn.reduced_dynamics.certified.arb_pass.certified_run` (python-flint ``arb``):
same enclosure (mean-value form), same event definitions and certification rule, same
:class:`~rdyn.reduced_dynamics.certified.certificate.CertifiedResult`; about 100-500x faster, so a 10^8-step
certified run takes minutes. Entry point: :func:`~rdyn.reduced_dynamics.certified.interval_pass.certified_run_interval`
(or ``certified_run(..., backend="interval64")``).

Rigour: what is assumed, exactly
--------------------------------
(A1) float64 is IEEE 754 binary64 and ``+ - * /`` and ``sqrt`` are correctly rounded to
     nearest (ties to even); the rounding mode is never changed. numba compiles with
     ``fastmath`` off (no reassociation, no FMA contraction; x86-64 SSE2/AVX scalar code, no
     x87 extended precision). ``test_no_fma_contraction`` checks the machine code.
(A2) Nothing else from libm is used: ``exp`` and ``atan`` are NOT trusted (not correctly
     rounded in glibc); they are enclosed below from ``+ - * /`` only.
(A3) The constants (hoisted parameter-only subexpressions, 1/k!, atan(j/16), 2^(j/32), pi/2,
     ln2/32, the thresholds) are computed as python-flint ``arb`` balls (rigorous) and
     converted to float pairs [lo, hi] by exact comparison of the float with the ball's
     endpoint (:func:`arb_to_interval`).

Outward rounding. If z is the exact result of an operation on floats and x = RN(z), then
pred(x) <= z <= succ(x) (z lies within half a spacing of x). ``up(x) = (x + |x| 2^-52) +
2^-1074`` is >= succ(x) for every float x (and = +inf for x = +inf): with 2^k <= |x| <
2^(k+1) the spacing of floats next to x is <= 2^(k-52) <= |x| 2^-52, the product |x| 2^-52
is rounded to nearest from a value >= the representable 2^(k-52), hence stays >= it, and
rounding to nearest is monotone, so fl(x + fl(|x| 2^-52)) >= fl(x + spacing) = succ(x);
adding 2^-1074 covers x = 0 and subnormal x (spacing 2^-1074). ``down(x) = -up(-x)``.
Every interval operation computes its endpoints in round-to-nearest and applies ``down``
to the lower and ``up`` to the upper one: the result contains the exact real result for
all real arguments in the operand intervals (for * and /, the extreme values are among the
four endpoint products/quotients). A NaN anywhere makes every later test fail (never
succeed): products and quotients check for NaN before taking min/max, and division by an
interval containing 0 returns (-inf, inf).

Sharp outward rounding. ``pred(x)`` and ``succ(x)`` are the neighbouring floats of x themselves
(``math.nextafter``: IEEE 754 nextDown / nextUp, exact; pred(-inf) = -inf, succ(inf) = inf), the
bounds of the argument above: pred(x) <= z <= succ(x) also when x = RN(z) overflowed to +-inf
(then |z| > MAXF, and pred(inf) = MAXF, succ(-inf) = -MAXF). ``up``/``down`` may be one spacing
wider (they need no library call: the hot loop of the certified pass uses them). The operations
with suffix 1 (``iadd1``, ``isub1``, ``imul1``, ``idiv1``, ``isqrt1``) are ``iadd``, ``isub``,
``imul``, ``idiv``, ``isqrt``, with the same round-to-nearest endpoints, NaN and zero-divisor rules,
rounded outward by exactly one spacing with ``pred``/``succ``; the Model B prover's ``Interval`` is
these operations behind Python operators (its recorded margins are to the last digit of this
rounding). ``pred`` and ``succ`` are plain functions compiled inline into the numba code
(``register_jitable``), so the sharp operations also run uncompiled (``.py_func``) on Python
floats: CPython evaluates each operator as one IEEE binary64 operation, correctly rounded as in
(A1), so both give the same endpoints; ``Interval`` calls them that way (a few thousand calls do not
pay numba's start-up of about 0.5 s).

exp. For a float x: n = round(32 x / ln2) (any integer works: the remainder bound below
is checked on the computed r), r = (x - n L_hi) - n L_lo in interval arithmetic, where
ln2/32 = L_hi + L_lo, L_hi has 37 bits (so n L_hi, |n| < 2^16, is exact) and L_lo is
enclosed; exp(x) = 2^(n div 32) * 2^((n mod 32)/32) * exp(r); exp(r) = sum_{k<=7} r^k/k!
+ R with |R| <= |r|^8/8! e^|r| <= 6e-21 for |r| <= 0.011 (checked; otherwise the
enclosure is [0, inf]); 2^(j/32) from a table of enclosures; the power of two is applied
as two multiplications by exact powers of two (so subnormal results are rounded, and
widened, once each). x > 709: [lower bound of exp(709), inf]; x < -746: [0, 2^-1074]
(exp(-746) < 2^-1074): the underflow region of e = exp(-(C2+C3)/scale) gives [0, tiny],
valid. exp is increasing, so exp([a, b]) is contained in [lower(a), upper(b)].

exp and atan of a narrow interval [a0, a1] from one evaluation (``iexp_narrow``,
``iatan_narrow``; the direct-form loop of :mod:`rdyn.reduced_dynamics.certified.interval_direct`
uses them, the interval64 pass does not): the lower end is the lower bound at a0; the upper end
is the upper bound at a0 times 1 + d + d^2 (exp; d = a1 - a0 rounded up, d <= 1, since
exp(d) <= 1 + d + d^2 (e - 2) there) resp. plus d (atan; 0 < atan' <= 1), rounded up.

atan. atan(-x) = -atan(x); for x > 1, atan(x) = pi/2 - atan(1/x); for y in [0, 1],
atan(y) = atan(j/16) + atan(u), u = (y - j/16)/(1 + y j/16), j = round(16 y), |u| <= 1/32,
and atan(u) = sum_{k<=6} (-1)^k u^(2k+1)/(2k+1) + R, |R| <= |u|^15/15 <= |u| 2^-73 (the
alternating-series / integral bound, checked on the computed |u| <= 0.0313). atan is
increasing: atan([a, b]) is contained in [lower(a), upper(b)].
"""
from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

TINY = 5e-324            # 2^-1074, the least positive subnormal
EPS = 2.0 ** -52
MAXF = 1.7976931348623157e308
INF = math.inf
NAN = math.nan
EXP_TERMS = 7            # Taylor degree for exp(r), |r| <= ln2/64 (+ rounding)
EXP_R_MAX = 0.011
EXP_REMAINDER = 6e-21    # >= 0.011^8 / 8! * e^0.011 = 5.3e-21
ATAN_TERMS = 6           # u - u^3/3 + ... + u^13/13, |u| <= 1/32 (+ rounding)
ATAN_U_MAX = 0.0313
ATAN_REMAINDER_SCALE = 2.0 ** -73   # |u|^15/15 <= |u| 2^-73 for |u| <= 0.0313

# --------------------------------------------------------------------------------------------
# Rigorous float enclosures of arb balls (constants)
# --------------------------------------------------------------------------------------------


def interval_ball(lo: float, hi: float):
    """An arb ball containing [lo, hi]: the float midpoint m (exact) and the radius
    max(m - lo, hi - m) rounded up (one float spacing above the rounded-to-nearest difference); a
    point interval is its exact value."""
    from flint import arb

    if not (math.isfinite(lo) and math.isfinite(hi)):
        return arb("nan")
    if lo == hi:   # a point: exact
        return arb(lo)
    mid = 0.5 * lo + 0.5 * hi
    return arb(mid, math.nextafter(max(mid - lo, hi - mid), math.inf))


def arb_to_interval(x) -> tuple[float, float]:
    """[lo, hi] floats with lo <= every point of the arb ball x <= hi (exact comparisons)."""
    from flint import arb

    if not x.is_finite():
        return (-INF, INF)
    lo_exact, hi_exact = x.lower(), x.upper()
    lo = float(lo_exact.mid())
    while arb(lo) > lo_exact:
        lo = float(np.nextafter(lo, -INF))
    hi = float(hi_exact.mid())
    while arb(hi) < hi_exact:
        hi = float(np.nextafter(hi, INF))
    return lo, hi


@lru_cache(maxsize=None)
def _tables():
    """(1/k! for k <= 7, 2^(j/32) for j < 32, atan(j/16) for j <= 16, (-1)^k/(2k+1),
    ln2/32, pi/2, pi) as float enclosures computed with arb at 200 bits."""
    import flint
    from flint import arb

    with flint.ctx.workprec(200):
        inv_fact = np.array([arb_to_interval(arb(1) / arb(math.factorial(k)))
                             for k in range(EXP_TERMS + 1)])
        two_j = np.array([arb_to_interval((arb(j) / 32 * arb(2).log()).exp()) for j in range(32)])
        atan_j = np.array([arb_to_interval((arb(j) / 16).atan()) for j in range(17)])
        atan_c = np.array([arb_to_interval(arb((-1) ** k) / (2 * k + 1))
                           for k in range(ATAN_TERMS + 1)])
        ln2_32 = arb(2).log() / 32
        ln2_32_hi = math.floor(float(ln2_32.mid()) * 2.0 ** 42) / 2.0 ** 42  # 37 bits
        misc = np.array([arb_to_interval(ln2_32 - ln2_32_hi), arb_to_interval(arb.pi() / 2),
                         arb_to_interval(arb.pi()), (ln2_32_hi, ln2_32_hi)])
    pow2 = np.array([math.ldexp(1.0, k) for k in range(-600, 601)])
    return inv_fact, two_j, atan_j, atan_c, misc, pow2


# --------------------------------------------------------------------------------------------
# Interval primitives (numba)
# --------------------------------------------------------------------------------------------


import numba  # noqa: E402
from numba.extending import register_jitable  # noqa: E402

_jit = numba.njit(cache=True)
_INV_FACT, _TWO_J, _ATAN_J, _ATAN_C, _MISC, _POW2 = _tables()
inv_fact, two_j, atan_j, atan_c, pow2 = _INV_FACT, _TWO_J, _ATAN_J, _ATAN_C, _POW2
LN2_32_HI = float(_MISC[3, 0])      # ln2/32 = LN2_32_HI + LN2_32_LO, the high part with 37 bits
LN2_32_LO = (float(_MISC[0, 0]), float(_MISC[0, 1]))
PI_2 = (float(_MISC[1, 0]), float(_MISC[1, 1]))
PI = (float(_MISC[2, 0]), float(_MISC[2, 1]))
SCALE_32_LN2 = 32.0 / math.log(2.0)   # only chooses n; not part of the enclosure


@_jit
def up(x):
    return (x + abs(x) * EPS) + TINY

@_jit
def down(x):
    return (x - abs(x) * EPS) - TINY

@_jit
def ipoint(x):
    return (x, x)

@_jit
def ipi():
    return PI

@_jit
def iadd(a, b):
    return (down(a[0] + b[0]), up(a[1] + b[1]))

@_jit
def isub(a, b):
    return (down(a[0] - b[1]), up(a[1] - b[0]))

@_jit
def ineg(a):
    return (-a[1], -a[0])

@_jit
def _extremes(v1, v2, v3, v4):
    """(min, max, nan): the extreme values of four rounded endpoint products or quotients, and
    whether one of them is NaN (0*inf, inf-inf, inf/inf: then no enclosure is claimed)."""
    return (min(min(v1, v2), min(v3, v4)), max(max(v1, v2), max(v3, v4)),
            (v1 + v2 + v3 + v4) != (v1 + v2 + v3 + v4))

@_jit
def _products(a, b):
    return _extremes(a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1])

@_jit
def _quotients(a, b):   # b does not contain 0
    return _extremes(a[0] / b[0], a[0] / b[1], a[1] / b[0], a[1] / b[1])

@_jit
def imul(a, b):
    lo, hi, nan = _products(a, b)
    return (-INF, INF) if nan else (down(lo), up(hi))

@_jit
def idiv(a, b):
    if b[0] > 0 or b[1] < 0:
        lo, hi, nan = _quotients(a, b)
        return (-INF, INF) if nan else (down(lo), up(hi))
    return (-INF, INF)

@_jit
def isqr(a):
    if a[0] >= 0:
        return (max(down(a[0] * a[0]), 0.0), up(a[1] * a[1]))
    if a[1] <= 0:
        return (max(down(a[1] * a[1]), 0.0), up(a[0] * a[0]))
    if a[0] < 0 and a[1] > 0:
        return (0.0, up(max(a[0] * a[0], a[1] * a[1])))
    return (NAN, NAN)

@_jit
def ipow(a, n):
    result = a
    for _ in range(n - 1):
        result = imul(result, a)
    if n % 2 == 0 and result[0] < 0:   # even power: non-negative
        result = (0.0, result[1])
    return result

@_jit
def isqrt(a):
    lo = 0.0 if a[0] <= 0 else max(down(math.sqrt(a[0])), 0.0)
    return (lo, up(math.sqrt(a[1])))

@_jit
def exp_bounds(x):
    """(lo, hi) with lo <= exp(x) <= hi, from + - * / only."""
    if x != x:
        return (NAN, NAN)
    if x < -746.0:
        return (0.0, TINY)
    top = False
    if x > 709.0:
        x = 709.0
        top = True
    n = math.floor(x * SCALE_32_LN2 + 0.5)
    # Cody-Waite: n * LN2_32_HI is exact (|n| < 2^16, 37-bit constant)
    r = isub(isub((x, x), (n * LN2_32_HI, n * LN2_32_HI)), imul((n, n), LN2_32_LO))
    if not (max(-r[0], r[1]) <= EXP_R_MAX):
        return (0.0, INF)
    p = (inv_fact[EXP_TERMS, 0], inv_fact[EXP_TERMS, 1])
    for k in range(EXP_TERMS - 1, -1, -1):
        p = iadd(imul(p, r), (inv_fact[k, 0], inv_fact[k, 1]))
    p = iadd(p, (-EXP_REMAINDER, EXP_REMAINDER))
    ni = np.int64(n)
    j = ni % 32
    m = (ni - j) // 32
    m1 = m // 2
    m2 = m - m1
    y = imul(p, (two_j[j, 0], two_j[j, 1]))
    f1 = pow2[m1 + 600]
    f2 = pow2[m2 + 600]
    y = imul(imul(y, (f1, f1)), (f2, f2))
    if top:
        return (max(y[0], 0.0), INF)
    return (max(y[0], 0.0), y[1])

@_jit
def iexp(a):
    lo = exp_bounds(a[0])
    if a[1] == a[0]:
        return lo
    return (lo[0], exp_bounds(a[1])[1])

@_jit
def atan_unit(w):
    """Enclosure of atan over the interval w, 0 <= w <= 1 (narrow)."""
    j = np.int64(math.floor(16.0 * w[0] + 0.5))
    j = min(max(j, 0), 16)
    cj = j / 16.0
    u = idiv(isub(w, (cj, cj)), iadd((1.0, 1.0), imul(w, (cj, cj))))
    umax = max(-u[0], u[1])
    if not (umax <= ATAN_U_MAX):
        return (0.0, PI_2[1])
    v = isqr(u)
    p = (atan_c[ATAN_TERMS, 0], atan_c[ATAN_TERMS, 1])
    for k in range(ATAN_TERMS - 1, -1, -1):
        p = iadd(imul(p, v), (atan_c[k, 0], atan_c[k, 1]))
    rem = up(umax * ATAN_REMAINDER_SCALE)
    s = iadd(imul(u, p), (-rem, rem))
    return iadd((atan_j[j, 0], atan_j[j, 1]), s)

@_jit
def atan_bounds(x):
    """(lo, hi) with lo <= atan(x) <= hi, from + - * / only."""
    if x != x:
        return (NAN, NAN)
    y = abs(x)
    if y <= 1.0:
        res = atan_unit((y, y))
    else:
        res = isub(PI_2, atan_unit(idiv((1.0, 1.0), (y, y))))
    res = (max(res[0], 0.0), min(res[1], PI_2[1]))
    if x < 0:
        return (-res[1], -res[0])
    return res

@_jit
def iatan(a):
    lo = atan_bounds(a[0])
    if a[1] == a[0]:
        return lo
    return (lo[0], atan_bounds(a[1])[1])


@_jit
def iexp_narrow(a):
    """exp over the interval a from one evaluation: [lower(exp(a0)), upper(exp(a0)) (1 + d + d^2)]
    rounded up, d = a1 - a0 rounded up, valid for d <= 1 since exp(d) = 1 + d + d^2 (1/2 + d/6 +
    ...) <= 1 + d + d^2 (e - 2) <= 1 + d + d^2 (exp is increasing); :func:`iexp` for d > 1."""
    lo = exp_bounds(a[0])
    if a[1] == a[0]:
        return lo
    d = up(a[1] - a[0])
    if not (d <= 1.0):
        return (lo[0], exp_bounds(a[1])[1])
    return (lo[0], up(lo[1] * up(up(1.0 + d) + up(d * d))))


@_jit
def iatan_narrow(a):
    """atan over the interval a from one evaluation: [lower(atan(a0)), upper(atan(a0)) + (a1 - a0)]
    rounded up, valid since 0 < atan' <= 1 (atan(a1) - atan(a0) <= a1 - a0); as tight as
    :func:`iatan` to first order in the width for |a| << 1, wider by (a1 - a0) a^2/(1 + a^2) in
    general."""
    lo = atan_bounds(a[0])
    if a[1] == a[0]:
        return lo
    return (lo[0], min(up(lo[1] + up(a[1] - a[0])), PI_2[1]))


@register_jitable
def pred(x):
    """The largest float below x (-inf for -inf): the sharp lower end of the rounding argument."""
    return math.nextafter(x, -INF)

@register_jitable
def succ(x):
    """The smallest float above x (inf for inf): the sharp upper end (``up(x) >= succ(x)``)."""
    return math.nextafter(x, INF)

@_jit
def iadd1(a, b):
    return (pred(a[0] + b[0]), succ(a[1] + b[1]))

@_jit
def isub1(a, b):
    return (pred(a[0] - b[1]), succ(a[1] - b[0]))

@_jit
def imul1(a, b):
    lo, hi, nan = _products(a, b)
    return (-INF, INF) if nan else (pred(lo), succ(hi))

@_jit
def idiv1(a, b):
    if b[0] > 0 or b[1] < 0:
        lo, hi, nan = _quotients(a, b)
        return (-INF, INF) if nan else (pred(lo), succ(hi))
    return (-INF, INF)

@_jit
def isqrt1(a):
    lo = 0.0 if a[0] <= 0 else max(pred(math.sqrt(a[0])), 0.0)
    return (lo, succ(math.sqrt(a[1])))


@_jit
def centre_radius(a):
    """(m, r): the float midpoint m of the interval a (inside it) and r >= max(m - lo, hi - m)."""
    m = 0.5 * a[0] + 0.5 * a[1]
    return m, max(up(m - a[0]), up(a[1] - m))


@_jit
def dd_add(hi, lo, d):
    """(hi + lo) + d as a double-double (hi', lo') and a bound of its one rounding: two_sum(hi, d) is
    exact, the low parts' sum is rounded once (error <= its size times 2^-52, at least the least
    subnormal), and the renormalising two_sum is exact."""
    s1 = hi + d
    bb = s1 - hi
    err = (hi - (s1 - bb)) + (d - bb)
    l1 = lo + err
    rounding = up(up(abs(l1) * EPS) + TINY)
    s2 = s1 + l1
    bb = s2 - s1
    return s2, (s1 - (s2 - bb)) + (l1 - bb), rounding


# the sharp operations' Python source (``.py_func``): the same IEEE operations as the compiled code ("Sharp
# outward rounding" above), without numba's start-up
_add, _sub, _mul, _div, _sqrt = iadd1.py_func, isub1.py_func, imul1.py_func, idiv1.py_func, isqrt1.py_func


def _pair(o) -> tuple:
    return (o.lo, o.hi) if isinstance(o, Interval) else (float(o), float(o))


class Interval:
    """A closed interval [lo, hi] of floats: Python operators over the outward-rounded primitives of
    this module (``iadd1``, ``isub1``, ``imul1``, ``idiv1``, ``isqrt1``, run as their Python source: each endpoint correctly rounded in IEEE double, then
    widened by one ulp, the rounding argument of that module), so it contains every real result. A
    float operand is the point interval [x, x]."""

    __slots__ = ("lo", "hi")

    def __init__(self, lo: float, hi: float | None = None):
        self.lo = float(lo)
        self.hi = self.lo if hi is None else float(hi)

    @staticmethod
    def _of(pair: tuple) -> "Interval":
        out = Interval.__new__(Interval)
        out.lo, out.hi = pair
        return out

    def pair(self) -> tuple:
        return (self.lo, self.hi)

    def __add__(self, o):
        return Interval._of(_add((self.lo, self.hi), _pair(o)))

    __radd__ = __add__

    def __neg__(self):
        return Interval._of((-self.hi, -self.lo))

    def __sub__(self, o):
        return Interval._of(_sub((self.lo, self.hi), _pair(o)))

    def __rsub__(self, o):
        return Interval._of(_sub(_pair(o), (self.lo, self.hi)))

    def __mul__(self, o):
        return Interval._of(_mul((self.lo, self.hi), _pair(o)))

    __rmul__ = __mul__

    def __pow__(self, n: int):
        assert n == 2 and self.lo >= 0
        return self * self

    def __truediv__(self, o):
        return Interval._of(_div((self.lo, self.hi), _pair(o)))   # (-inf, inf) if the divisor contains 0

    def sqrt(self) -> "Interval":
        """The square roots of the non-negative part (a lower end <= 0 gives 0)."""
        return Interval._of(_sqrt((self.lo, self.hi)))

    def mag(self) -> float:
        """max |x| over the interval (exact)."""
        return max(abs(self.lo), abs(self.hi))


# the names the generated code of the certified pass imports (the sharp operations are not among them)
PRIMITIVES = ("up", "down", "ipoint", "ipi", "iadd", "isub", "ineg", "imul", "idiv", "isqr",
              "ipow", "isqrt", "exp_bounds", "iexp", "atan_unit", "atan_bounds", "iatan", "centre_radius", "dd_add")


def primitives() -> dict:
    """The numba-compiled interval operations (namespace of the generated code)."""
    return {name: globals()[name] for name in PRIMITIVES}
