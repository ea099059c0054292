"""Issue 22: the compiled (numba) Gauss-Hermite tensor rule of tanh, softplus, sigmoid and
formulas (reduced_dynamics/model_a/compiled_rule.py) against the numpy step it replaced (the
generic quadrature loop of model_a.smooth, still the --dps route and the fallback), and the
exponential separation derived by sympy (derivations/activations.py)."""
from __future__ import annotations

import math

import pytest
import sympy as sp

from rdyn import cli
from rdyn.derivations import activations as act
from rdyn.reduced_dynamics.model_a import smooth as ms
from rdyn.reduced_dynamics.model_a.gauss_hermite import float64_rule
from rdyn.reduced_dynamics.model_a.compiled_rule import compiled_rule_iterate, compiled_rule_loop
from rdyn.reduced_dynamics.runs.smooth_checkpoint import SmoothLoop

STEPS = 400


def _config(name, formula=None, **kw):
    base = dict(D=8, K=2, activation=act.Activation(name, formula), eta=0.2, M=2)
    base.update(kw)
    return ms.SmoothConfig(**base)


def numpy_trajectory(config, n, steps):
    """The numpy Gauss-Hermite step loop (model_a.smooth._quadrature_advance, float64) with
    every state captured: (loop, {t: (C1, C2, C3)})."""
    num = ms.Numbers(config.activation, None)
    ex = ms.Expectations(config, num, float64_rule(n))
    advance = ms._quadrature_advance(ex, num, config, False, set(range(steps + 1)), config.eta,
                                     0.95, 1 / (2 * config.K), 1000, 10**7)
    loop = SmoothLoop(0, [0.0, 0.0, 0.0], stop_at=steps)
    advance(loop, steps + 1)
    assert loop.done and loop.diverged is None
    return loop


@pytest.mark.parametrize("name,formula", [
    ("tanh", None), ("softplus", None), ("sigmoid", None),
    ("expr", "x*tanh(x) + x/3"),      # separated: 2x(2E^2 - 1)/(3(E^2 + 1))
    ("expr", "sin(x) + x"),           # no separation: sigma on every lattice point
])
def test_compiled_rule_run_equals_the_numpy_step(name, formula):
    """400 steps: every state of the compiled run within 1e-14 relative of the numpy loop's
    (1e-300 absolute at the zero start), the same t1, T* and lost_at_step."""
    config = _config(name, formula)
    run = ms.run(config, STEPS, record=range(STEPS + 1), route="exact")   # not the tables
    assert compiled_rule_loop(config.activation, run.nodes) is not None   # the compiled route
    ref = numpy_trajectory(config, run.nodes, STEPS)
    assert (run.t1, run.T_star, run.lost_at_step) == (ref.t1, ref.T_star, ref.lost)
    assert run.t1 is not None
    worst = 0.0
    for t in range(STEPS + 1):
        got = run.record[t]
        for a, b in zip((got.C1, got.C2, got.C3), ref.captured[t]):
            assert abs(float(a) - b) <= 1e-14 * abs(b) + 1e-300, (t, a, b)
            worst = max(worst, abs(float(a) - b) / abs(b) if b else 0.0)
    assert worst > 0.0 or name == "sigmoid"   # a different summation order: not the same code


@pytest.mark.parametrize("name,vstar_norm2", [("tanh", 1.0), ("tanh", 2e4), ("softplus", 1.0)])
def test_compiled_moments_equal_numpy_moments_on_both_lattice_branches(name, vstar_norm2):
    """m1, m2, dm2/dC1 and the loss sums of the compiled rule equal Expectations.moments (numpy)
    at states of small arguments (exponential separation) and of arguments beyond exp(600)
    (||V*||^2 = 2e4: |r y1| beyond 300 on the lattice, sigma evaluated directly)."""
    import numpy as np

    config = _config(name, vstar_norm2=vstar_norm2)
    n = 64
    rule = float64_rule(n)
    z, w = np.ascontiguousarray(rule.nodes), np.ascontiguousarray(rule.weights)
    _, moments = compiled_rule_iterate(config.activation)
    ex = ms.Expectations(config, ms.Numbers(config.activation, None), rule)
    for C1, e in ((0.0, 1.0), (0.4, 0.7), (1.3, 0.05), (0.02, 0.3)):
        lvl = ex.level(e)
        m1, m2, dm2, loss = ex.moments(C1, lvl)
        p, M1, M2, DM2, cross, square = moments(C1, e, 8.0, 2.0, config.row_norm, z, w,
                                                np.empty((2, n)))
        assert p == pytest.approx(float(lvl.p), rel=1e-15)
        assert (M1, M2, DM2) == pytest.approx((m1, m2, dm2), rel=1e-13, abs=1e-15)
        # the loss sums sum_i w_i B_i T_i, sum_i w_i B_i^2 (the compiled loop does not use
        # them; the reported loss is Expectations.moments' cancellation-free form, below)
        B = ex.num.sigma(lvl.y2 * (C1 * config.row_norm))
        assert (cross, square) == pytest.approx((np.dot(w, B * lvl.teacher_mean), np.dot(w, B * B)),
                                                rel=1e-12, abs=1e-15)
        # the reported loss: the rule's own E[(sigma(r y1_ij) - B_i)^2], summed directly on
        # the lattice y1_ij = mu_i + s_res z_j (D = 8, K = 2)
        K, N = 2.0, 6.0
        s2 = np.sqrt(K * lvl.p ** 2 + N * lvl.q ** 2)
        s_res = lvl.q * np.sqrt(N / K) / s2
        A = ex.num.sigma(np.add.outer(lvl.mu, z * s_res) * config.row_norm)
        direct = config.M * 8.0 / 2 * np.dot(w, ((A - B[:, None]) ** 2) @ w)
        assert float(loss) == pytest.approx(direct, rel=1e-12, abs=1e-15)


def test_exponential_separation_is_derived_and_exact():
    """tanh, sigmoid, softplus: the forms R(x, E) of the docstring; R(x, exp(x/L)) equals sigma
    symbolically; erf, GELU and sin have none (no function of x may remain in R)."""
    E, x = act.growth, act.x
    assert act.exponential_separation("tanh") == ((E**2 - 1) / (E**2 + 1), 1, 2)
    assert act.exponential_separation("sigmoid") == (E / (E + 1), 1, 1)
    assert act.exponential_separation("softplus") == (sp.log(E + 1), 1, 1)
    form, L, _ = act.exponential_separation("expr", "x*log(1 + exp(x/2))")
    assert L == 2
    for name, formula in (("tanh", None), ("sigmoid", None), ("softplus", None),
                          ("expr", "x*log(1 + exp(x/2))"), ("expr", "x*tanh(x) + x/3")):
        R, L, _ = act.exponential_separation(name, formula)
        sigma = act.Activation(name, formula).expression
        back = R.subs(E, sp.exp(x / L))
        assert sp.simplify((back - sigma).rewrite(sp.exp)) == 0, name
    for name, formula in (("erf", None), ("gelu", None), ("expr", "sin(x) + x"),
                          ("expr", "x*exp(-x**2)")):
        assert act.exponential_separation(name, formula) is None


def test_formula_numba_cannot_compile_runs_on_the_numpy_step(capsys, monkeypatch):
    """A formula numba cannot compile (besselj is not in the math module) has no compiled
    route; when there is none, the run writes one stderr line and goes on with the numpy step
    (its trajectory exactly)."""
    from rdyn.reduced_dynamics.model_a import compiled_rule as mcr

    assert compiled_rule_iterate(act.Activation("expr", "x/2 + besselj(0, x)/4")) is None
    # the driver's fallback, on a formula the numpy printer knows
    formula = "x/2 + tanh(x)/4"
    monkeypatch.setattr(mcr, "compiled_rule_loop", lambda activation, nodes: None)
    rc = cli.main(["teacher", "--activation-expr", formula, "--D", "8", "--K", "2", "--M", "2",
                   "--eta", "0.2", "--steps", "30", "--quiet", "--smooth-route", "exact"])
    out, err = capsys.readouterr()
    assert rc == 0 and "Traceback" not in err and "t1 = " in out
    assert "does not compile under numba" in err and len(err.strip().splitlines()) == 1
    config = _config("expr", formula)
    run = ms.run(config, 30, route="exact")
    capsys.readouterr()
    ref = numpy_trajectory(config, run.nodes, 30)
    assert (float(run.final.C1), float(run.final.C2), float(run.final.C3)) == tuple(ref.captured[30])
    assert math.isfinite(float(run.final.C1))
