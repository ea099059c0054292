"""verify/references/quadrature.py: the forms computed together (shared nodes) equal each form's
own quadrature bit for bit, and the values are the Gaussian expectations."""
from __future__ import annotations

import mpmath
import pytest

from rdyn.verification.references import quadrature as q

NAMES = ("s_s", "u_s_ds", "v_s_ds", "ds_ds", "u_s")


def _alone(name, sd1, sd2, rho, kappa):
    """One form by its own mpmath.quad, the integrand evaluated afresh at every node."""
    sd1, sd2, rho, kappa = (mpmath.mpf(v) for v in (sd1, sd2, rho, kappa))
    s = sd2 * mpmath.sqrt(max(1 - rho * rho, 0))

    def conditional(mu):   # (E[sigma'(Y2)], E[sigma(Y2)]), Y2 ~ N(mu, s^2)
        if s == 0:
            return q._slope(mu, kappa), q._act(mu, kappa)
        z = mu / s
        cdf = mpmath.ncdf(z)
        relu_mean = mu * cdf + s * mpmath.npdf(z)
        return kappa + (1 - kappa) * cdf, kappa * mu + (1 - kappa) * relu_mean

    def integrand(y):
        slope2, value2 = conditional(rho * sd2 * y / sd1)
        density = mpmath.npdf(y, 0, sd1)
        act, slope = q._act(y, kappa), q._slope(y, kappa)
        return {"s_s": density * act * value2, "u_s_ds": density * y * act * slope2,
                "v_s_ds": density * act * value2, "ds_ds": density * slope * slope2,
                "u_s": density * y * value2}[name]

    points = [-mpmath.inf, 0, mpmath.inf]
    if rho != 0 and s > 0:
        width = s * sd1 / (abs(rho) * sd2)
        if width < sd1:
            points = [-mpmath.inf, -8 * width, -width, 0, width, 8 * width, mpmath.inf]
    return mpmath.quad(integrand, points)


@pytest.mark.parametrize("sd1, sd2, rho", [("1.5", "0.7", "-0.6"), ("0.5", "2", "0.999"), ("1", "2", "1")])
def test_forms_together_equal_each_alone_bit_for_bit(sd1, sd2, rho):
    kappas = ("0.1", "0", "1")
    with mpmath.workdps(20):
        together = q.bivariate_quadratures(NAMES, sd1, sd2, rho, kappas)
        assert len(together) == len(NAMES) * len(kappas)
        for kappa in kappas:
            for name in NAMES:
                alone = _alone(name, sd1, sd2, rho, kappa)
                assert together[name, kappa]._mpf_ == alone._mpf_, (name, kappa)
        assert q.bivariate_quadrature("s_s", sd1, sd2, rho, "0.1")._mpf_ == together["s_s", "0.1"]._mpf_


def test_values_are_the_gaussian_expectations():
    # identity activation (kappa = 1): E[u v] = rho sd1 sd2, E[s'(u) s'(v)] = 1
    with mpmath.workdps(20):
        got = q.bivariate_quadratures(("s_s", "ds_ds", "u_s"), "1.5", "0.7", "-0.6", ("1",))
        assert abs(got["s_s", "1"] - mpmath.mpf("-0.63")) < mpmath.mpf(10) ** -18
        assert abs(got["u_s", "1"] - mpmath.mpf("-0.63")) < mpmath.mpf(10) ** -18
        assert abs(got["ds_ds", "1"] - 1) < mpmath.mpf(10) ** -18
    # ReLU: E[s(u) s(v)] = sd1 sd2 (sin t + (pi - t) cos t) / (2 pi), t = acos(rho)
    with mpmath.workdps(20):
        t = mpmath.acos(mpmath.mpf("0.3"))
        want = (mpmath.sin(t) + (mpmath.pi - t) * mpmath.cos(t)) / (2 * mpmath.pi)
        got = q.bivariate_quadratures(("s_s",), "1", "1", "0.3", ("0",))["s_s", "0"]
        assert abs(got - want) < mpmath.mpf(10) ** -18
    with pytest.raises(ValueError):
        q.bivariate_quadratures(("s_t",), "1", "1", "0.3", ("0",))
