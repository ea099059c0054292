"""verify/proofs/model_b/training.py: certified GD training of the LN layer and the looped model on spectra with
two and three distinct eigenvalues."""
from __future__ import annotations

import pytest

from rdyn.reduced_dynamics.model_b.config import Config
from rdyn.reduced_dynamics.model_b.iterate import iterate
from rdyn.verification.proofs.model_b.training import certified_training


def test_the_certified_gamma_contains_the_float64_iteration():
    gamma, increasing, _ = certified_training("ln", (4, 1, 1), 3, 0.1, 50)
    trajectory = iterate(Config(model="ln", data="spectrum", d=3, spectrum=(4, 1, 1), eta=0.1, steps=50))
    float64 = float(trajectory.gamma[-1])
    assert increasing
    assert abs(float(gamma.mid()) - float64) < 1e-12 * float64 and float(gamma.rad()) < 1e-30


# rdyn ln --model ln --data spectrum --d 3 --spectrum 3,2,1 --steps T --dps 30 (the exact Dirichlet rule, an
# independent route): gamma_T at T = 3 (ln) and T = 2 (looped, --L 2)
THREE_LEVELS = {("ln", None, 3): "0.0363961847257554436034778639277",
                ("looped", 2, 2): "0.0508282182313059537018206424480"}


@pytest.mark.parametrize("model,L,steps", sorted(THREE_LEVELS, key=str))
def test_three_levels_contain_the_exact_rule(model, L, steps):
    """Three distinct eigenvalues (nested rigorous integrals): the ball of gamma_T (rho_T) holds the exact
    Dirichlet rule's 30-digit value, and gamma increases at every step."""
    from decimal import Decimal

    gamma, increasing, _ = certified_training(model, (3, 2, 1), 3, 0.1, steps, L=L)
    mid, rad = Decimal(gamma.mid().str(40, radius=False)), Decimal(gamma.rad().str(5, radius=False))
    assert increasing and rad < Decimal("1e-30")
    assert abs(mid - Decimal(THREE_LEVELS[(model, L, steps)])) <= rad + Decimal("1e-30")


def test_two_level_integral_is_the_one_dimensional_one():
    """level_F on two levels is the 1-D integral (w_2 = 1 - w_1): F at one gamma, against mpmath quadrature
    of (2/B) int f sin^(k1-1) cos^(k2-1) at 30 digits."""
    import flint
    import mpmath
    from flint import arb

    from rdyn.verification.proofs.model_b.training import level_F

    old = flint.ctx.prec
    flint.ctx.prec = 128
    try:
        value = level_F("ln", (4, 1, 1), 3)(arb("0.05"))
    finally:
        flint.ctx.prec = old
    with mpmath.workdps(30):
        x, l1, l2 = mpmath.mpf("0.05"), 4, 1

        def f(th):
            w = mpmath.sin(th) ** 2
            m1, m2 = l1 * w + l2 * (1 - w), l1 ** 2 * w + l2 ** 2 * (1 - w)
            r2 = 1 + 2 * x * m1 + x * x * m2
            return -2 * (m2 - m1 ** 2) / (mpmath.sqrt(m2) * r2 ** mpmath.mpf(1.5)) * mpmath.cos(th)
        reference = 2 * mpmath.quad(f, [0, mpmath.pi / 2]) / mpmath.beta(mpmath.mpf(1) / 2, 1) / 3
        assert abs(float(value.mid()) - float(reference)) < 1e-25 * abs(float(reference)) + 1e-30
