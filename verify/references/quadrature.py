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
    return _with_slope(mu, *_relu_parts(mu, s), kappa)


def _relu_parts(mu, s):
    """(P(Y2 >= 0), E[relu(Y2)]) for Y2 ~ N(mu, s^2), s > 0: what the slope does not change."""
    z = mu / s
    cdf = mpmath.ncdf(z)
    return cdf, mu * cdf + s * mpmath.npdf(z)


def _with_slope(mu, cdf, relu_mean, kappa):
    """:func:`_conditional` from :func:`_relu_parts` (sigma = kappa x + (1 - kappa) relu(x))."""
    return kappa + (1 - kappa) * cdf, kappa * mu + (1 - kappa) * relu_mean


def bivariate_quadrature(name: str, sd1, sd2, rho, kappa) -> mpmath.mpf:
    """E of the named form (see rdyn.derivations.gaussian.BIVARIATE_INTEGRANDS) by quadrature.

    ``kappa`` is the negative slope: 1 identity, 0 ReLU, kappa LeakyReLU.
    """
    return bivariate_quadratures((name,), sd1, sd2, rho, (kappa,))[name, kappa]


def bivariate_quadratures(names, sd1, sd2, rho, kappas) -> dict:
    """:func:`bivariate_quadrature` of several forms and negative slopes at one covariance:
    ``{(name, kappa): E}``.

    They share the nodes (the split points depend on the covariance only), so the density of
    ``Y1`` and the slope-free conditional moments (:func:`_relu_parts`) at a node are computed
    once for all of them; each result is the one :func:`bivariate_quadrature` gives alone.
    """
    sd1, sd2, rho = (mpmath.mpf(v) for v in (sd1, sd2, rho))
    s = sd2 * mpmath.sqrt(max(1 - rho * rho, 0))
    at_node = {}   # (working precision, y) -> (mu, P(Y2 >= 0), E[relu(Y2)], density of Y1 at y)

    def node_values(y):
        key = (mpmath.mp.prec, y)
        values = at_node.get(key)
        if values is None:
            mu = rho * sd2 * y / sd1
            parts = (None, None) if s == 0 else _relu_parts(mu, s)
            values = at_node[key] = (mu, *parts, mpmath.npdf(y, 0, sd1))
        return values

    def integrand_of(name, kappa):
        if name not in ("s_s", "u_s_ds", "v_s_ds", "ds_ds", "u_s"):
            raise ValueError(name)

        def integrand(y):
            mu, cdf, relu_mean, density = node_values(y)
            if s == 0:
                slope2, value2 = _conditional(mu, s, kappa)
            else:
                slope2, value2 = _with_slope(mu, cdf, relu_mean, kappa)
            if name == "s_s":
                return density * _act(y, kappa) * value2
            if name in ("u_s_ds",):
                return density * y * _act(y, kappa) * slope2
            if name == "v_s_ds":
                return density * _act(y, kappa) * value2  # v sigma'(v) = sigma(v)
            if name == "ds_ds":
                return density * _slope(y, kappa) * slope2
            return density * y * value2   # u_s
        return integrand

    # The conditional mean crosses the kink of sigma(Y2) at y = 0 over a width
    # s sd1 / (|rho| sd2), tiny as |rho| -> 1: split there too so the quadrature resolves it.
    points = [-mpmath.inf, 0, mpmath.inf]
    if rho != 0 and s > 0:
        width = s * sd1 / (abs(rho) * sd2)
        if width < sd1:
            points = [-mpmath.inf, -8 * width, -width, 0, width, 8 * width, mpmath.inf]
    return {(name, kappa): mpmath.quad(integrand_of(name, mpmath.mpf(kappa)), points)
            for kappa in kappas for name in names}
