"""Independent numerical route for the bivariate forms: 1-D mpmath quadrature.

Conditioning on ``Y1 = y`` leaves ``Y2 ~ N(mu(y), s^2)`` with ``mu = rho sd2 y / sd1`` and
``s^2 = sd2^2 (1 - rho^2)``, for which ``E[sigma'(Y2)]`` and ``E[sigma(Y2)]`` are elementary
(normal CDF and density). The remaining integral over ``y`` is split at the kink ``y = 0``
and done by ``mpmath.quad`` at the working precision. Nothing here uses the polar-sector
derivation of :mod:`rdyn.derivations.gaussian`, so agreement is a real check.
"""
from __future__ import annotations

import mpmath


def _slope(x, kappa):
    return 1 if x >= 0 else kappa


def _act(x, kappa):
    return x if x >= 0 else kappa * x


def _conditional(mu, s, kappa):
    """(E[sigma'(Y2)], E[sigma(Y2)]) for Y2 ~ N(mu, s^2), activation with negative slope kappa."""
    if s == 0:
        return _slope(mu, kappa), _act(mu, kappa)
    z = mu / s
    cdf = mpmath.ncdf(z)
    relu_mean = mu * cdf + s * mpmath.npdf(z)
    return kappa + (1 - kappa) * cdf, kappa * mu + (1 - kappa) * relu_mean


def bivariate_quadrature(name: str, sd1, sd2, rho, kappa) -> mpmath.mpf:
    """E of the named form (see rdyn.derivations.gaussian.BIVARIATE_INTEGRANDS) by quadrature.

    ``kappa`` is the negative slope: 1 identity, 0 ReLU, kappa LeakyReLU.
    """
    sd1, sd2, rho, kappa = (mpmath.mpf(v) for v in (sd1, sd2, rho, kappa))
    s = sd2 * mpmath.sqrt(max(1 - rho * rho, 0))

    def integrand(y):
        slope2, value2 = _conditional(rho * sd2 * y / sd1, s, kappa)
        density = mpmath.npdf(y, 0, sd1)
        if name == "s_s":
            return density * _act(y, kappa) * value2
        if name in ("u_s_ds",):
            return density * y * _act(y, kappa) * slope2
        if name == "v_s_ds":
            return density * _act(y, kappa) * value2  # v sigma'(v) = sigma(v)
        if name == "ds_ds":
            return density * _slope(y, kappa) * slope2
        if name == "u_s":
            return density * y * value2
        raise ValueError(name)

    # The conditional mean crosses the kink of sigma(Y2) at y = 0 over a width
    # s sd1 / (|rho| sd2), tiny as |rho| -> 1: split there too so the quadrature resolves it.
    points = [-mpmath.inf, 0, mpmath.inf]
    if rho != 0 and s > 0:
        width = s * sd1 / (abs(rho) * sd2)
        if width < sd1:
            points = [-mpmath.inf, -8 * width, -width, 0, width, 8 * width, mpmath.inf]
    return mpmath.quad(integrand, points)
