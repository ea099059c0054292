"""Generated kernels against direct sympy evaluation of the derived expressions at 50 digits.

This catches printer or backend mistakes (an integer division turning into a float, a
constant at the wrong precision) that comparing two generated backends would miss.
"""
import mpmath
import pytest
import sympy as sp

from rdyn.derivations.model_a import collapsed as ma
from rdyn.derivations.model_a.catalog import model_a_expressions
from rdyn.reduced_dynamics.model_a.kernels import kernels

PARAMS = {ma.D: 20, ma.K: 3, ma.eta: sp.Rational(3, 10), ma.vstar_norm2: sp.Rational(7, 5),
          ma.kappa: sp.Rational(1, 10), ma.s0: sp.Rational(1, 2)}


def exact(expr, state, scale):
    e = sp.exp(-(state[ma.C2] + state[ma.C3]) / ma.logit_scale(scale))
    value = expr.subs(ma.out_group_ratio, e).subs(PARAMS).subs(state)
    return mpmath.mpf(str(sp.N(value.subs(PARAMS), 60)))


@pytest.mark.parametrize("activation", ["identity", "relu", "leaky"])
@pytest.mark.parametrize("scale", ["D", "sqrtD"])
@pytest.mark.parametrize("backend", ["arb", "mpmath", "float64"])
def test_kernels_match_sympy(activation, scale, backend):
    import flint

    flint.ctx.prec = 200
    x = model_a_expressions(activation, scale)
    k = kernels(activation, scale, backend)
    make = {"arb": lambda v: flint.arb(str(v)), "mpmath": lambda v: mpmath.mpf(sp.Rational(v).p) / sp.Rational(v).q,
            "float64": lambda v: float(sp.Rational(v))}[backend]
    tolerance = mpmath.mpf(10) ** (-14 if backend == "float64" else -45)
    with mpmath.workdps(60):
        c = k.prepare(*(make(PARAMS[s]) for s in (ma.D, ma.K, ma.eta, ma.vstar_norm2, ma.kappa, ma.s0)))
        for branch, C1 in (("positive", sp.Rational(13, 10)), ("zero", sp.Integer(0)), ("negative", sp.Rational(-2, 5))):
            state = {ma.C1: C1, ma.C2: sp.Rational(37, 10), ma.C3: sp.Rational(37, 170)}
            got = k.step(make(C1), make(state[ma.C2]), make(state[ma.C3]), c)
            for i, value in enumerate(got, start=1):
                want = exact(x[f"C{i}_next_{branch}"], state, scale)
                value = mpmath.mpf(value.mid().str(60, radius=False)) if backend == "arb" else mpmath.mpf(value)
                assert abs(value - want) <= tolerance * max(abs(want), 1), (branch, i)
        state = {ma.C1: sp.Rational(13, 10), ma.C2: sp.Rational(37, 10), ma.C3: sp.Rational(37, 170)}
        args = (make(state[ma.C2]), make(state[ma.C3]), c)
        for name, fn in (("p", k.attention), ("C1_star", k.c1_star), ("C1_multiplier", k.multiplier)):
            value = fn(*args)
            value = mpmath.mpf(value.mid().str(60, radius=False)) if backend == "arb" else mpmath.mpf(value)
            want = exact(x[name], state, scale)
            assert abs(value - want) <= tolerance * max(abs(want), 1), name


@pytest.mark.parametrize("backend", ["arb", "mpmath"])
def test_driver_iterates_at_full_precision(backend):
    """run() itself (parameter conversion included) against three exact sympy steps."""
    from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig, run

    x = model_a_expressions("relu", "D")
    params = {ma.D: 20, ma.K: 3, ma.eta: sp.Rational(3, 10), ma.vstar_norm2: 1, ma.kappa: 0, ma.s0: 1}
    state = {ma.C1: sp.Integer(0), ma.C2: sp.Integer(0), ma.C3: sp.Integer(0)}
    with mpmath.workdps(70):
        for _ in range(3):
            branch = "zero" if state[ma.C1] == 0 else "positive"
            e = sp.exp(-(state[ma.C2] + state[ma.C3]) / ma.D).subs(params)
            state = {s: sp.N(x[f"{s}_next_{branch}"].subs(ma.out_group_ratio, e).subs(params).subs(state), 70)
                     for s in (ma.C1, ma.C2, ma.C3)}
        result = run(TeacherConfig(D=20, K=3, eta=0.3), steps=3, backend=backend, dps=40).final
        for s in (ma.C1, ma.C2, ma.C3):
            want = mpmath.mpf(str(state[s]))
            assert abs(getattr(result, str(s)) - want) <= mpmath.mpf(10) ** -38 * abs(want)
