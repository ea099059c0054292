"""rdyn.verification.references.scaling: the power-law fit and its intervals, the quick Model A report, rdyn scaling."""
import json
import math

import numpy as np
import pytest

import rdyn.schemas
from rdyn.cli import main
from rdyn.verification.checks import scaling as checks_scaling
from rdyn.verification.references import scaling


# ------------------------------------------------------------------------------ the fit
def test_fit_recovers_exact_two_factor_power_law():
    x1 = np.array([1, 2, 4, 8, 1, 1, 1, 3.0])
    x2 = np.array([1, 1, 1, 1, 2, 4, 8, 5.0])
    y = 3.5 * x1**-1.2 * x2**2.5
    fit = scaling.fit_power_law(np.column_stack([x1, x2]), y)
    assert fit.exponents == pytest.approx((-1.2, 2.5), abs=1e-12)
    assert fit.constant == pytest.approx(3.5, rel=1e-12)
    assert fit.n == 8 and fit.dof == 5
    for (lo, hi), a in zip(fit.exponent_ci, (-1.2, 2.5)):
        assert hi - lo < 1e-10 and scaling.in_interval(a, (lo, hi), a)
    assert not scaling.in_interval(-1.19, fit.exponent_ci[0], -1.2)


def test_fit_matches_textbook_regression_and_t_quantile():
    x = np.array([1.0, 2, 3, 4, 5])
    y = np.exp(np.array([0.1, 0.9, 1.05, 1.6, 1.7]))  # log y against log x
    fit = scaling.fit_power_law(x, y)
    slope, intercept = np.polyfit(np.log(x), np.log(y), 1)
    assert fit.exponents[0] == pytest.approx(slope, rel=1e-12)
    assert fit.log_constant == pytest.approx(intercept, rel=1e-12)
    lx = np.log(x)
    resid = np.log(y) - (intercept + slope * lx)
    se = math.sqrt(resid @ resid / 3 / ((lx - lx.mean()) @ (lx - lx.mean())))
    lo, hi = fit.exponent_ci[0]
    assert (hi - lo) / 2 == pytest.approx(3.182446305284263 * se, rel=1e-9)  # t_{3, 0.975}


def test_interval_coverage_on_noisy_power_laws():
    rng = np.random.default_rng(5)
    x = 2.0 ** np.arange(8)
    hits_a = hits_c = 0
    reps = 1000
    for _ in range(reps):
        y = 0.7 * x**-0.8 * np.exp(rng.normal(0, 0.1, x.size))
        fit = scaling.fit_power_law(x, y)
        hits_a += fit.exponent_ci[0][0] <= -0.8 <= fit.exponent_ci[0][1]
        hits_c += fit.constant_ci[0] <= 0.7 <= fit.constant_ci[1]
    assert 0.93 <= hits_a / reps <= 0.97
    assert 0.93 <= hits_c / reps <= 0.97


def test_fit_edge_cases():
    fit = scaling.fit_power_law([1.0, 2.0], [3.0, 12.0])  # two points, one exponent: dof 0
    assert fit.exponents[0] == pytest.approx(2.0) and fit.dof == 0
    assert fit.exponent_ci[0] == (-math.inf, math.inf)
    with pytest.raises(ValueError):
        scaling.fit_power_law([1.0, 2.0, 3.0], [1.0, -1.0, 2.0])
    with pytest.raises(ValueError):
        scaling.fit_power_law([1.0], [1.0])


def test_verdict_and_local_exponent():
    x = [1.0, 2.0, 4.0, 8.0]
    y = [1.0, 2.0**2.5, 4.0**2.5 * 1.5, 8.0**2.5 * 1.5 * 2**2.05 / 2**2.5]
    assert scaling.local_exponent(x, y) == pytest.approx(2.05)
    assert scaling.verdict(2.0, 2.6, (2.3, 2.9), 2.05) == ("confirmed", "local")
    assert scaling.verdict(2.0, 2.6, (2.3, 2.9), 2.5) == ("not confirmed", "")
    assert scaling.verdict(2.0, 2.1, (1.9, 2.2), 2.5) == ("confirmed", "interval")
    assert scaling.verdict(2.0, 2.1, (1.5, 2.7), 2.5) == ("not confirmed", "")  # too wide


def test_analyse_constant_in_claimed_form_and_checks():
    """T* = 40 K D^2 / (eta V) exactly: the eta line gives C = 40, and D^3 gives a discrepancy."""
    fixed = (("D", 16), ("K", 2), ("activation", "relu"), ("kappa", 0.1), ("logit_scale", "D"),
             ("vstar_norm2", 1.0))
    line = scaling.Line("A.Tstar", "eta", (0.2, 0.1, 0.05, 0.025), fixed, "relu")
    r = scaling.analyse(line, line.values, [40 * 2 * 16**2 / e for e in line.values])
    assert r.constant == pytest.approx(40.0, rel=1e-10) and r.verdict == "confirmed"
    exp_check, const_check = checks_scaling.line_checks(r)
    assert exp_check.status == "pass" and const_check.status == "info"
    assert const_check.detail["constant"] == pytest.approx(40.0, rel=1e-10)
    dline = scaling.Line("A.Tstar", "D", (8, 16, 32, 64), (("K", 2), ("eta", 0.1), ("vstar_norm2", 1.0)), "relu")
    r = scaling.analyse(dline, dline.values, [3.0 * D**3 for D in dline.values])
    assert r.exponent == pytest.approx(3.0) and r.verdict == "not confirmed"
    assert checks_scaling.line_checks(r)[0].status == "discrepancy"
    assert r.constant == pytest.approx(3.0 * 0.1 / 2, rel=1e-10)  # T* = C K D^a / (eta V)


# ------------------------------------------------------------------------------ measured
@pytest.fixture(scope="module")
def quick_relu():
    return {(r.line.claim, r.line.factor): r
            for r in scaling.report(model="A", activations=("relu",), quick=True)}


def test_quick_report_model_a_relu(quick_relu):
    t1 = quick_relu[("A.t1", "eta")]
    assert abs(t1.exponent + 1) < 0.05 and abs(t1.local_exponent + 1) < 0.02
    assert t1.verdict == "confirmed"
    assert abs(quick_relu[("A.Tstar", "eta")].exponent + 1) < 0.01
    assert abs(quick_relu[("A.Tstar", "vstar_norm2")].exponent + 1) < 0.01
    d = quick_relu[("A.Tstar", "D")]  # softmax scale 1/D: about D^3, not the printed D^2
    assert 2.6 < d.local_exponent < 3.3 and d.verdict == "not confirmed"
    T = quick_relu[("A.loss", "T")]
    assert -1.15 < T.exponent < -1.0 and abs(T.local_exponent + 1) < 0.05
    # constants of confirmed lines of one claim agree: T* = C K D^2 / (eta V)
    c_eta = quick_relu[("A.Tstar", "eta")].constant
    assert quick_relu[("A.Tstar", "vstar_norm2")].constant == pytest.approx(c_eta, rel=1e-3)


def test_exponent_check_uses_scaling_fit():
    from rdyn.verification.checks import model_a as c

    claim = next(x for x in c.EXPONENT_CLAIMS if x.id == "A.t1.eta_exponent")
    check = c.exponent_check(claim, "D")
    assert check.status == "pass" and abs(check.detail["measured_exponent"] + 1) < 0.1
    lo, hi = check.detail["exponent_ci95"]
    assert lo <= check.detail["measured_exponent"] <= hi


# ------------------------------------------------------------------------------ extension
@pytest.mark.parametrize("scale, derived", [("D", 3), ("sqrtD", 2)])
def test_extension_agrees_with_map_and_tends_to_derived_exponent(scale, derived):
    """The T* D-line continued by the slow-manifold limit to D = 2^20: where the map also runs
    the real limit T* = tau_star/eta sits inside the map's last step (the map's integer T* is
    the first step at or past the crossing; documented flow error at these eta <= 4e-5
    relative, slaving <= 3e-8), and the local exponent approaches the derived one from below
    (the next term of the expansion is a relative (D-K)^(-1/2) correction)."""
    import dataclasses

    line = next(x for x in scaling.design_model_a("relu", quick=True, logit_scale=scale)
                if (x.claim, x.factor) == ("A.Tstar", "D"))
    line = dataclasses.replace(line, values=(8, 16, 32))
    r = scaling.run_line(line, extend=True)
    e = r.extension
    assert e.source == ("map",) * 3 + ("slow_manifold",) * 15 and e.x[3:] == tuple(2.0**k for k in range(6, 21))
    assert e.y[:3] == r.y and all(T == int(T) for T in r.y)
    for D, T_map, T_slow, rel in e.overlap:
        assert -0.5 < T_map - T_slow < 1.5 and abs(rel) < 1.5 / T_map + 4e-5
        assert rel == T_slow / T_map - 1
    assert e.derived_exponent == derived
    assert derived - 0.015 < e.local_exponent < derived
    assert abs(e.local_exponent - derived) < abs(r.local_exponent - derived) / 5
    ys = np.array(e.y[3:])
    local = np.diff(np.log(ys)) / np.log(2)
    assert np.all(np.diff(local) > 0)  # monotone approach
    assert derived - 0.2 < e.exponent < e.local_exponent
    d = r.as_dict()["extension"]
    assert d["source"][3] == "slow_manifold" and d["range"] == [64.0, 2.0**20]
    assert "not an iterated step count" in d["note"]


# ------------------------------------------------------------------------------ the CLI
def test_cli_json(capsys):
    assert main(["scaling", "--model", "B", "--quick", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    rdyn.schemas.validate("scaling", data)  # rdyn/schemas/scaling.schema.json
    assert data["quick"] is True and data["model"] == "B"
    rows = {r["claim"]: r for r in data["rows"]}
    assert set(rows) == {"B.ln.gamma", "B.ln.alpha", "B.ln.beta", "B.looped.rho", "B.looped.w",
                         "B.looped.v"}
    g = rows["B.ln.gamma"]
    for key in ("claimed_exponent", "exponent", "exponent_ci", "local_exponent", "constant",
                "constant_ci", "verdict", "x", "y", "factor", "derived_asymptotic_constant"):
        assert key in g
    assert g["claimed_exponent"] == pytest.approx(1 / 3)
    assert 1 / 3 < g["local_exponent"] < 0.37 and g["exponent_ci"][0] < g["exponent"] < g["exponent_ci"][1]
    assert g["verdict"] in ("confirmed", "not confirmed")


@pytest.mark.parametrize("argv", [
    ["--activation", "tanh"], ["--model", "B", "--activation", "relu"],
    ["--activation", "relu", "--kappa", "0.2"], ["--dps", "30"], ["--model", "C"],
    ["--model", "B", "--logit-scale", "sqrtD"], ["--model", "B", "--extend"],
])
def test_cli_bad_input_exits_2(argv, capsys):
    try:
        code = main(["scaling", "--quick", *argv])
    except SystemExit as exc:  # argparse choices
        code = exc.code
    assert code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "error" in err
