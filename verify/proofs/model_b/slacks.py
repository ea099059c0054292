"""Outward-rounded interval arithmetic on floats (:class:`Iv`) and the normalised slacks of Theorem
B.3's three statements on a box of states (g, sigma) (:func:`interval_slacks`)."""
from __future__ import annotations

from rdyn.reduced_dynamics.certified.interval import iadd1, idiv1, imul1, isqrt1, isub1

# the primitives' Python source (``.py_func``): the same IEEE operations as the compiled code
# (rdyn.reduced_dynamics.certified.interval, "Sharp outward rounding"), without numba's start-up
_add, _sub, _mul, _div, _sqrt = iadd1.py_func, isub1.py_func, imul1.py_func, idiv1.py_func, isqrt1.py_func


def _pair(o) -> tuple:
    return (o.lo, o.hi) if isinstance(o, Iv) else (float(o), float(o))


class Iv:
    """A closed interval [lo, hi] of floats: Python operators over the outward-rounded primitives of
    :mod:`rdyn.reduced_dynamics.certified.interval` (``iadd1``, ``isub1``, ``imul1``, ``idiv1``,
    ``isqrt1``, run as their Python source: each endpoint correctly rounded in IEEE double, then
    widened by one ulp, the rounding argument of that module), so it contains every real result. A
    float operand is the point interval [x, x]."""

    __slots__ = ("lo", "hi")

    def __init__(self, lo: float, hi: float | None = None):
        self.lo = float(lo)
        self.hi = self.lo if hi is None else float(hi)

    @staticmethod
    def _of(pair: tuple) -> "Iv":
        out = Iv.__new__(Iv)
        out.lo, out.hi = pair
        return out

    def pair(self) -> tuple:
        return (self.lo, self.hi)

    def __add__(self, o):
        return Iv._of(_add((self.lo, self.hi), _pair(o)))

    __radd__ = __add__

    def __neg__(self):
        return Iv._of((-self.hi, -self.lo))

    def __sub__(self, o):
        return Iv._of(_sub((self.lo, self.hi), _pair(o)))

    def __rsub__(self, o):
        return Iv._of(_sub(_pair(o), (self.lo, self.hi)))

    def __mul__(self, o):
        return Iv._of(_mul((self.lo, self.hi), _pair(o)))

    __rmul__ = __mul__

    def __pow__(self, n: int):
        assert n == 2 and self.lo >= 0
        return self * self

    def __truediv__(self, o):
        return Iv._of(_div((self.lo, self.hi), _pair(o)))   # (-inf, inf) if the divisor contains 0

    def sqrt(self) -> "Iv":
        """The square roots of the non-negative part (a lower end <= 0 gives 0)."""
        return Iv._of(_sqrt((self.lo, self.hi)))

    def mag(self) -> float:
        """max |x| over the interval (exact)."""
        return max(abs(self.lo), abs(self.hi))


def _g_one_minus_g(a: float, b: float) -> Iv:
    """The range of g (1 - g) over [a, b] (concave, largest at g = 1/2)."""
    qa, qb = Iv(a) * (1 - Iv(a)), Iv(b) * (1 - Iv(b))
    hi = 0.25 if a <= 0.5 <= b else max(qa.hi, qb.hi)
    return Iv(min(qa.lo, qb.lo), hi)


def interval_slacks(k: Iv, sigma: Iv, a: float, b: float, loss_per_k_sigma: bool = False, ks: Iv | None = None):
    """The normalised slacks of the three statements at the states (g, sigma) of a box, with
    step factor ``f = 1 - u``, ``u = k sigma + k^2 g (1 - g)`` (``g' - 1 = f (g - 1)``):
    loss ``1 - f^2 = u (2 - u)`` (> 0: L decreases; monotone in u on [0, 1]), descent lemma
    ``(1 - k sigma - f^2)/(k sigma) = (1 - k sigma) + (k g (1-g)/sigma)(2 (1 - k sigma) - eps)``,
    ``eps = k^2 g (1 - g)`` (>= 0; written so that no two large terms cancel near sigma = 0),
    gamma ``f`` (>= 0 with g <= 1: no overshoot). k > 0, sigma > 0, g in [a, b]. With
    ``loss_per_k_sigma`` (``--eta-fraction``: k = theta k_max can be small) the loss slack is
    normalised as Part 1's, ``(1 - f^2)/(k sigma) = (1 + k g (1 - g)/sigma)(2 - u)``, which tends to 2
    (not 0) as k -> 0. ``ks``: an enclosure of k sigma (default k.lo sigma.lo .. k.hi sigma.hi).
    Returns (f, {name: slack}, 1 - k^2 (g - 1)^2)."""
    q = _g_one_minus_g(a, b)
    if ks is None:
        ks = k * sigma    # both positive: [k.lo sigma.lo, k.hi sigma.hi], rounded outward
    eps = k * k * q
    u = ks + eps
    f = 1 - u
    if loss_per_k_sigma:
        loss = (1 + k * q / sigma) * (2 - u)
    elif 0 <= u.lo and u.hi <= 1:
        loss = Iv((Iv(u.lo) * (2 - Iv(u.lo))).lo, (Iv(u.hi) * (2 - Iv(u.hi))).hi)
    else:
        loss = u * (2 - u)
    lemma = (1 - ks) + (k * q / sigma) * (2 * (1 - ks) - eps)
    gm1 = Iv(a) - 1.0
    gm1.hi = (Iv(b) - 1.0).hi
    sq = Iv(0.0, (Iv(max(abs(gm1.lo), abs(gm1.hi))) ** 2).hi) if gm1.lo < 0 < gm1.hi else gm1 * gm1
    out = {"loss": loss, "descent_lemma": lemma, "gamma": f}
    if loss_per_k_sigma:
        out["u"] = u     # 1 - f, without the cancellation of 1 - (1 - u) when u is tiny
    return f, out, 1 - k * k * sq
