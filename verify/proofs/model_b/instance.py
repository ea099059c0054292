"""The Model B instance and its constants: :class:`BInstance` (the data law and the target fix kappa1,
kappa2, gamma*), kappa1 and kappa2 as exact rationals, gamma* (exact, or a ball for the normalized
target through the rigorous ``kappa3 = E||S a||`` of :func:`kappa3_enclosure`), and eta_max's three
terms in units of ``k = 2 eta kappa2 gamma*/d`` in its printed and corrected forms (:func:`k_terms`)."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from fractions import Fraction

from flint import acb, arb

from rdyn.reduced_dynamics.model_b.constants import kappa_exact
from rdyn.verification.proofs.balls import ball, lower, upper

PREC_BITS = 200
FORMS = ("printed", "corrected")
ETA_MAX_TEXT = {
    "printed": "eta_max = min{d/(8 kappa2 sqrt(1 + 16 gamma*^2)), d/(2 kappa2 S0), d/(2 kappa2 sqrt(2 S0 gamma*))}",
    "corrected": "eta_max = min{d/(8 kappa2 sqrt(S0^2 + 16 gamma*^2)), d/(2 kappa2 S0), d/(2 kappa2 sqrt(2 S0 gamma*))}",
}


@dataclass(frozen=True)
class BInstance:
    """One Model B instance (seed 003): the data law and the target fix kappa1, kappa2, gamma*."""

    model: str = "noln"
    target: str = "unnormalized"
    data: str = "sphere"
    d: int = 16
    n: int = 32
    spectrum: tuple | None = None
    L: int | None = None
    s0: tuple = (0.25, 16.0)         # the interval of S0 = beta_0^2 (alpha_0 = 0)
    gamma_range: tuple | None = None  # ln / looped: the range of gamma (rho) for the contraction factor
    steps: int | None = None         # ln / looped: certify this many GD steps instead
    eta: float = 0.1                 # ln / looped with steps: the GD step size
    eta_fraction: tuple = (1.0, 1.0)  # noln: Theorem B.3 at eta = theta eta_max(S0) for theta in [LO, HI]

    def to_dict(self) -> dict:
        out = {"model": self.model, "data": self.data, "d": self.d, "n": self.n,
               "spectrum": None if self.spectrum is None else list(self.spectrum)}
        if self.model == "noln":
            out.update(target=self.target, S0=[self.s0[0], self.s0[1]])
            if tuple(self.eta_fraction) != (1.0, 1.0):
                out["eta_fraction"] = [self.eta_fraction[0], self.eta_fraction[1]]
        elif self.steps is None:
            out.update(gamma=[self.gamma_range[0], self.gamma_range[1]])
        else:
            out.update(steps=self.steps, eta=self.eta, alpha0=0.0, beta0=1.0)
        if self.model == "looped":
            out["L"] = self.L
        return out


def qball(x: Fraction):
    """The exact rational x as a ball (radius from the working precision only)."""
    return arb(x.numerator) / x.denominator


def kappa3_enclosure(spectrum):
    """A ball containing ``kappa3 = E||S a||`` for ``S = diag(m_i)`` and ``a`` uniform on S^{d-1}.

    ``E||S a|| = E sqrt(g^T S^2 g) / E||g||`` for ``g ~ N(0, I_d)`` (radius and direction of ``g``
    are independent), ``E||g|| = sqrt(2) Gamma((d+1)/2)/Gamma(d/2)``, and for ``Q = g^T S^2 g``,
    ``E sqrt(Q) = (1/(2 sqrt(pi))) int_0^oo (1 - E e^{-sQ}) s^{-3/2} ds`` with
    ``E e^{-sQ} = prod_i (1 + 2 s m_i^2)^{-1/2}``; with ``s = u^2``, ``int_0^oo 2 (1 - P(u))/u^2 du``.
    Head ``[0, eps]``: ``0 <= 1 - P <= u^2 sum m_i^2``; tail ``[U, oo)``: the integrand lies in
    ``[2 (1 - P(U))/u^2, 2/u^2]``; the middle by ``acb.integral`` (rigorous error bound)."""
    d = len(spectrum)
    mus = [(arb(m * m), c) for m, c in sorted(Counter(spectrum).items())]
    musum = sum((mu * c for mu, c in mus), arb(0))

    def P(u):
        out = acb(1) if isinstance(u, acb) else arb(1)
        for mu, c in mus:
            z = 1 + 2 * u * u * mu
            out *= (z.rsqrt(analytic=True) if isinstance(u, acb) else z.rsqrt()) ** c
        return out

    eps, U = arb(2) ** -120, arb(2) ** 120
    middle = acb.integral(lambda u, _analytic: 2 * (1 - P(u)) / (u * u), eps, U,
                          rel_tol=arb(2) ** -(PREC_BITS - 40)).real
    head = arb(0, float((2 * eps * musum).upper()) * 2)
    tail_lo, tail_hi = 2 * (1 - P(U)) / U, 2 / U
    tail = (tail_lo + tail_hi) / 2 + arb(0, float((tail_hi - tail_lo).upper()))
    e_sqrt_q = (middle + head + tail) / (2 * arb.pi().sqrt())
    e_norm = arb(2).sqrt() * (arb(d + 1) / 2).gamma() / (arb(d) / 2).gamma()
    return e_sqrt_q / e_norm


@dataclass(frozen=True)
class NolnConstants:
    d: int
    kappa1: Fraction
    kappa2: Fraction
    gamma_star: object        # a ball (exact rational for the unnormalized target)
    gamma_star_exact: Fraction | None
    kappa3: object | None


def noln_constants(inst: BInstance) -> NolnConstants:
    """kappa1, kappa2 (exact), gamma* = 1 - kappa1/kappa2 (unnormalized) or (kappa3 - kappa1)/kappa2
    (normalized; Theorem 4.2 as derived by rdyn.derivations.model_b.noln_collapsed)."""
    k1, k2 = kappa_exact(inst.data, inst.d, inst.n, inst.spectrum)
    if inst.target == "unnormalized":
        gs = 1 - k1 / k2
        return NolnConstants(inst.d, k1, k2, qball(gs), gs, None)
    k3 = kappa3_enclosure(inst.spectrum)
    return NolnConstants(inst.d, k1, k2, (k3 - qball(k1)) / qball(k2), None, k3)


# --------------------------------------------------------------------------- eta_max, one step
def bmin(balls):
    """A ball containing min(x_1, ..., x_n) for every choice x_i in ball i, and the index of the
    term that is certainly the smallest (None if that is not certain)."""
    for i, b in enumerate(balls):
        if all(i == j or bool(b < o) for j, o in enumerate(balls)):
            return b, i
    return ball(min(lower(b) for b in balls), min(upper(b) for b in balls)), None


def k_terms(form: str, S0, gs, kappa2, d):
    """The three terms of eta_max (B.2.3) in units of ``k = 2 eta kappa2 gamma*/d``:
    ``gamma*/(4 sqrt(c + 16 gamma*^2))`` with ``c = S0^2`` (corrected) or ``1`` (printed),
    ``gamma*/S0``, ``gamma*/sqrt(2 S0 gamma*)``. (The eta-terms are these times d/(2 kappa2 gamma*);
    tests/verify/proofs/model_b/test_prove.py checks them against rdyn.derivations.model_b.eta_max_derived.)"""
    c = S0 * S0 if form == "corrected" else 1
    return [gs / (4 * (c + 16 * gs * gs).sqrt()), gs / S0, gs / (2 * S0 * gs).sqrt()]


def eta_of_k(k, gs, kappa2, d):
    return k * d / (2 * kappa2 * gs)
