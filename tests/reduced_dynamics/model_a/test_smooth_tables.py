"""Issue 31: the tabulated route of the smooth activations (reduced_dynamics/model_a/smooth_tables.py):
piecewise Chebyshev tiles of m1, m2, dm2/dC1 built from the exact Gauss-Hermite tensor rule,
against that rule (the independent check: ``route="exact"``, the compiled tensor rule of
model_a_compiled_rule.py, or the numpy step for the moments)."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest

from rdyn import cli
from rdyn.derivations.activations import Activation
from rdyn.reduced_dynamics.model_a import smooth as ms
from rdyn.reduced_dynamics.model_a import smooth_tables as st
from rdyn.reduced_dynamics.model_a.engine import log_grid
from rdyn.reduced_dynamics.runs.smooth_checkpoint import SmoothLoop

FORMULA = "x*tanh(x) + x/3"


def _config(name, formula=None, **kw):
    base = dict(D=8, K=2, activation=Activation(name, formula), eta=0.2, M=2)
    base.update(kw)
    return ms.SmoothConfig(**base)


def _rel(a, b):
    return abs(float(a) - float(b)) / max(abs(float(b)), 1e-300)


@pytest.mark.parametrize("h, J", [(0.25, 24), (0.03125, 24), (1.0, 3)])
def test_lattice_index_and_bounds_agree(h, J):
    """Every point maps to the tile whose bounds hold it; the graded tiles halve towards 0."""
    points = [0.0, 1e-300, h * 2.0 ** -J * 0.999, h * 2.0 ** -J, h * 0.3, h * 0.5, h * 0.999999,
              h, 1.5 * h, 7.25 * h, 12345.678 * h]
    for x in points:
        i = st.tile_index(x, h, J)
        a, b = st.tile_bounds(i, h, J)
        assert a <= x < b, (x, i, a, b)
    assert st.tile_bounds(J, h, J) == (h / 2, h)
    assert st.tile_bounds(J - 1, h, J) == (h / 4, h / 2)
    assert st.tile_bounds(J + 3, h, J) == (3 * h, 4 * h)


def test_chebyshev_transform_reproduces_a_polynomial():
    """The values -> coefficients matrix recovers T_3(x) + 2 T_5(x) exactly (to rounding)."""
    d = st.DEGREE
    x = st.chebyshev_points(d)
    values = np.cos(3 * np.arccos(x)) + 2 * np.cos(5 * np.arccos(x))
    c = st._values_to_coefficients(d) @ values
    want = np.zeros(d + 1)
    want[3], want[5] = 1, 2
    assert np.max(np.abs(c - want)) < 1e-14


@pytest.mark.parametrize("name, formula", [("tanh", None), ("softplus", None), ("sigmoid", None),
                                           ("expr", FORMULA)])
def test_tiles_equal_the_rule_at_independent_points(name, formula):
    """The table's m1, m2, dm2 at points that are not interpolation nodes (a fixed
    pseudo-random set over C1 in [0, 1.6], e in [0, 1], both graded regions included) equal
    the exact rule's to 3e-14 of each output's scale (measured: at most ~1e-14)."""
    config = _config(name, formula)
    probes = ms.default_probes(config, None, 1 / (2 * config.K))
    n, _ = ms.choose_rule(config, None, probes)
    route = ms.make_table_route(config, n, probes)
    table, exact = route.table, route.table.exact
    rng = np.random.default_rng(31)
    points = list(zip(rng.uniform(0, 1.6, 40), rng.uniform(0, 1, 40)))
    points += [(1e-5, 0.5), (0.7, 1e-6), (0.0, 0.3), (0.9, 0.0)]
    worst = 0.0
    for c, e in points:
        want = exact.at_level(exact.level(e), np.array([c]))[:, 0]
        got = table.evaluate(c, e)
        worst = max(worst, float(np.max(np.abs(got - want) / route.scales)))
    assert worst < 3e-14
    assert route.error < 1e-13


@pytest.mark.parametrize("name, formula", [("tanh", None), ("softplus", None), ("sigmoid", None),
                                           ("expr", FORMULA), ("erf", None), ("gelu", None)])
def test_table_run_equals_the_rule(name, formula):
    """The issue's "Done when" runs (D = 8, K = 2, M = 2, eta = 0.2, 400 steps): the tabulated
    route's final C1, C2, C3, p and t1 equal the exact rule's to 1e-13 relative (measured
    1e-16 .. 4e-16)."""
    config = _config(name, formula)
    table = ms.run(config, 400, route="table")
    exact = ms.run(config, 400, route="exact")
    assert (table.route, exact.route) == ("table", "rule")
    assert table.t1 == exact.t1 and table.T_star == exact.T_star
    for key in ("C1", "C2", "C3", "p", "C1_star", "loss"):
        assert _rel(getattr(table.final, key), getattr(exact.final, key)) < 1e-13, key


def test_table_run_through_tstar_equals_the_rule():
    """tanh at D = 8 through T* (6757) and beyond: t1 and T* equal, the final state to 1e-13."""
    config = _config("tanh")
    table = ms.run(config, 9000, route="table")
    exact = ms.run(config, 9000, route="exact")
    assert (table.t1, table.T_star) == (exact.t1, exact.T_star) == (17, 6757)
    for key in ("C1", "C2", "C3", "p"):
        assert _rel(getattr(table.final, key), getattr(exact.final, key)) < 1e-13, key


def test_route_choice():
    """auto: tabulated for every smooth activation, float64 only; exact: never."""
    assert ms.table_route(_config("tanh"), None)
    assert ms.table_route(_config("expr", FORMULA), None)
    assert ms.table_route(_config("erf"), None) and ms.table_route(_config("gelu"), None)
    assert ms.table_route(_config("erf"), None, "table")
    assert not ms.table_route(_config("gelu"), None, "exact")
    assert not ms.table_route(_config("tanh"), 30)
    assert not ms.table_route(_config("tanh"), None, "exact")
    with pytest.raises(ValueError):
        ms.table_route(_config("tanh"), None, "fast")


def test_chunks_and_build_order_do_not_change_the_run():
    """A run cut into chunks of 97 steps on a fresh table (tiles built in another order)
    equals one call, bit for bit (a tile is a pure function of its index)."""
    config = _config("sigmoid")
    probes = ms.default_probes(config, None, 1 / (2 * config.K))
    n, _ = ms.choose_rule(config, None, probes)
    steps = 3000
    grid = set(int(s) for s in log_grid(steps))
    finals = []
    for chunk in (steps + 1, 97):
        route = ms.make_table_route(config, n, probes)
        advance = route.advancer(0.2, 0.95, 0.25, False, 1000, steps, grid)
        loop = SmoothLoop(0, [0.0, 0.0, 0.0], stop_at=steps)
        while not loop.done:
            advance(loop, loop.t + chunk)
        finals.append((tuple(loop.state), loop.t1, loop.T_star, sorted(loop.captured.items())))
    assert finals[0] == finals[1]


def test_cli_route_option(capsys):
    """--smooth-route exact gives the rule (JSON route "rule"), the default the table; the
    option is refused for ReLU and with --dps (one line, exit 2)."""
    base = ["teacher", "--activation", "softplus", "--D", "8", "--K", "2", "--M", "2", "--eta",
            "0.2", "--steps", "200", "--json", "--quiet"]
    outs = {}
    for extra in ([], ["--smooth-route", "exact"]):
        assert cli.main(base + extra) == 0
        outs[bool(extra)] = json.loads(capsys.readouterr().out)
    assert outs[False]["quadrature"]["route"] == "table"
    assert 0 <= outs[False]["quadrature"]["table_error"] < 1e-13
    assert outs[True]["quadrature"]["route"] == "rule"
    assert outs[True]["quadrature"]["table_error"] is None
    for key in ("C1", "C2", "C3"):
        assert _rel(outs[False]["final"][key], outs[True]["final"][key]) < 1e-13
    for argv in (["teacher", "--activation", "relu", "--D", "8", "--K", "2", "--smooth-route",
                  "exact"],
                 base[:-2] + ["--dps", "20", "--smooth-route", "table"]):
        assert cli.main(argv) == 2
        err = capsys.readouterr().err
        assert "--smooth-route applies" in err and len(err.strip().splitlines()) == 1


def test_states_beyond_the_lattice_reach_step_on_the_exact_route(monkeypatch):
    """With the reach cut to 36 C1 lattice indices (C1 up to 12 tile widths), the steps whose C1
    (or its t1 test point) lies beyond it run on the exact rule one at a time; the run still
    equals the exact route's (t1, final state to 1e-13) and no tile beyond the reach is built."""
    config = _config("tanh")
    ms.run(config, 2, route="table")   # the run's tile widths chosen (cached) before the cut
    monkeypatch.setattr(st.MomentTable, "within", lambda self, ic, ie: abs(ic) <= 36)
    built = []
    real = st.MomentTable.build

    def build(self, ic, ie):
        built.append((ic, ie))
        return real(self, ic, ie)

    monkeypatch.setattr(st.MomentTable, "build", build)
    exact_steps = []
    real_advance = ms._compiled_advance

    def compiled_advance(*args, **kwargs):
        advance = real_advance(*args, **kwargs)

        def counted(loop, chunk_end):
            exact_steps.append(chunk_end - loop.t)
            advance(loop, chunk_end)

        return counted

    monkeypatch.setattr(ms, "_compiled_advance", compiled_advance)
    table = ms.run(config, 400, route="table")
    assert len(exact_steps) > 100 and set(exact_steps) == {1}
    exact = ms.run(config, 400, route="exact")
    assert max(abs(ic) for ic, _ in built) <= 36
    assert table.t1 == exact.t1
    for key in ("C1", "C2", "C3", "p"):
        assert _rel(getattr(table.final, key), getattr(exact.final, key)) < 1e-13, key


def _python_event_loop(moments, grad_in, grad_out, config, eta, steps, fraction=0.95):
    """The event loop of model_a/event_loop.py written out in plain Python around the same
    compiled moments and gradients (float64 arithmetic step for step): the reference the one
    generated loop must equal bit for bit, whichever route fills in its moments."""
    D, K, V, scale = float(config.D), float(config.K), float(config.vstar_norm2), float(config.scale)
    N, level = D - K, 1 / (2 * config.K)
    C1 = C2 = C3 = 0.0
    t1 = t_star = None
    for t in range(steps + 1):
        e = math.exp(-(C2 + C3) / scale)
        p, m1, m2 = moments(C1, e)
        if t_star is None and p >= level:
            t_star = t
        if t1 is None and t >= 1 and moments(C1 / fraction, e)[2] <= 0.0:
            t1 = t
        if t == steps:
            break
        g_in = grad_in(C1, e, K, N, V, m1, m2)
        g_out = grad_out(C1, e, K, N, V, m1, m2)
        C1, C2, C3 = C1 + eta * D * m2, C2 - eta * g_in / scale, C3 + eta * g_out / scale
    return (C1, C2, C3), t1, t_star


@pytest.mark.parametrize("route", ["table", "closed"])
def test_generated_event_loop_equals_a_python_loop_bit_for_bit(route):
    """The one event loop (model_a/event_loop.py), filled in by the table route and by erf's
    compiled closed form, equals the same map written in Python around the same moments:
    final state bit for bit, t1 equal (600 steps, D = 8; the table's tiles all built first)."""
    from rdyn.reduced_dynamics.model_a import compiled as mc

    config = _config("erf")
    steps, eta = 600, 0.2
    grad_in, grad_out = mc.compiled_logit_gradients()
    if route == "closed":
        compiled = mc.compiled_iterate()[1]
        D, K, r = float(config.D), float(config.K), math.sqrt(config.vstar_norm2 / config.M)

        def moments(C1, e):
            p, m1, m2, *_ = compiled(C1, e, D, K, r)
            return p, m1, m2

        run = ms.run(config, steps, route="exact")
    else:
        run = ms.run(config, steps, route="table")
        probes = ms.default_probes(config, None, 1 / (2 * config.K))
        n, _ = ms.choose_rule(config, None, probes)
        table = ms.make_table_route(config, n, probes).table
        N = float(config.D - config.K)

        def chebyshev(x):
            T = [1.0, x]
            for _ in range(st.DEGREE - 1):
                T.append(2.0 * x * T[-1] - T[-2])
            return T

        def moments(C1, e):   # the loop's evaluate(): same recurrence, same summation order
            row = table.build(table.c_index(C1), table.e_index(e))
            g, c = table.geometry[row], table.coefficients[row]
            Tu, Tv = chebyshev((C1 - g[0]) * g[1]), chebyshev((e - g[2]) * g[3])
            m = [0.0, 0.0]
            for k in range(st.DEGREE + 1):
                for o in (0, 1):
                    a = 0.0
                    for l in range(st.DEGREE + 1):
                        a += float(c[k, l, o]) * Tv[l]
                    m[o] += Tu[k] * a
            return 1.0 / (config.K + N * e), m[0], m[1]

    state, t1, _ = _python_event_loop(moments, grad_in, grad_out, config, eta, steps)
    assert run.t1 == t1
    assert (run.final.C1, run.final.C2, run.final.C3) == state
