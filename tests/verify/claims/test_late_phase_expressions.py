"""The corrected Lemmas D.18 and D.19 as machine-readable statements: their ``expression`` /
``upper_expression`` strings (the correction objects' JSON, from
``rdyn.verification.checks.errata_a.bound_expressions``), read by the whitelist parser and evaluated
on 40-digit trajectories of ``rdyn teacher --dps 40 --record`` at T* .. T*+10 and 2T*, with c_lag from
the correction's ``constants`` (certified by rdyn prove at these instances, which no other test uses).
A violation at any of these steps fails."""
from __future__ import annotations

import json

import mpmath
import pytest
import sympy as sp

ALLOWED = {"D", "K", "M", "eta", "kappa", "T", "T_star", "t1", "C1", "C2", "C3", "p"}
# (rdyn teacher options, the CERTIFIED_C_LAG row): a ReLU and a Leaky ReLU instance used nowhere else
INSTANCES = [
    (["--activation", "relu", "--D", "5", "--K", "2", "--eta", "0.5"],
     {"D": 5, "K": 2, "activation": "relu", "eta": 0.5}),
    (["--activation", "leaky", "--kappa", "0.2", "--D", "6", "--K", "2"],
     {"D": 6, "K": 2, "activation": "leaky", "eta": None}),
]


def _teacher(options, steps, record):
    from cli_runs import run_captured

    code, out, err = run_captured(["teacher", "--task", "sts", *options, "--dps", "40", "--steps", str(steps),
                                   "--record", ",".join(map(str, record)), "--json"])
    assert code == 0, err
    return json.loads(out)


def _correction(lemma: str) -> dict:
    """The correction object of Lemma D.18 or D.19 as ``rdyn claims --json`` writes it (from the
    A.errata.bound check's statement fields; the trajectories of that check are not needed here)."""
    from rdyn.verification.checks import errata_a as ea
    from rdyn.verification.checks.record import Check
    from rdyn.verification.claims import errata

    cls = errata.CLASSIFICATION[("A", {"D18": "Lemma D.18", "D19": "Lemma D.19"}[lemma])]
    check = Check(f"A.errata.bound.{lemma}", "test", "the corrected bounds", "pass", None, None,
                  ea.bound_statement(lemma))
    return errata.correction_object(cls.correction, cls, [check])


def _expressions(activation):
    """The correction objects' strings parsed back (never sympified), and the constants' names."""
    from rdyn.derivations.formula import parse, symbols_in

    out = {}
    for lemma, lower, upper in (("D18", "p_lower", "p_upper"), ("D19", "dx_lower", "dx_upper")):
        fix = _correction(lemma)
        assert set(fix["constants"]) == {"c_lag", "q_lag"} and fix["superseded"]
        for key, text in ((lower, fix["expression"][activation]), (upper, fix["upper_expression"][activation])):
            names = symbols_in(text)
            assert set(names) <= ALLOWED | set(fix["constants"]), names
            out[key] = (parse(text, names, what="correction", symbolic_exponents=True, max_length=8000,
                              max_nodes=4000), names)
    return out


def test_correction_objects_carry_the_constants_and_validate():
    """c_lag, the one symbol beyond the contract's, is defined in the correction (``constants``) with its
    certified values and their instances; the superseded forms are listed; the object validates against
    the claims schema's correction definition."""
    jsonschema = pytest.importorskip("jsonschema")
    import rdyn

    schema = rdyn.schema("claims")
    for lemma in ("D18", "D19"):
        fix = _correction(lemma)
        jsonschema.validate(fix, {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": "#/$defs/correction"})
        rows = fix["constants"]["c_lag"]["certified"]
        assert all(r["c_lag"] > 0 and {"D", "K", "activation", "eta", "logit_scale"} <= set(r) for r in rows)
        assert "c_lag" in fix["expression"]["relu"] and "c_lag" not in fix["upper_expression"]["relu"] or lemma == "D18"
        assert any("delay" in x or "lag" in x for x in fix["superseded"])


def _value(expr_names, values):
    expr, names = expr_names
    sub = {names[n]: sp.Float(values[n], 50) for n in names}
    return mpmath.mpf(str(sp.N(expr.xreplace(sub), 45)))


@pytest.mark.parametrize("options,row", INSTANCES, ids=["relu-D5-K2", "leaky-D6-K2"])
def test_corrected_d18_d19_hold_on_40_digit_trajectories(options, row):
    rows = _correction("D19")["constants"]["c_lag"]["certified"]
    certified = next(r for r in rows if all(r.get(k) == v for k, v in row.items()) and r["logit_scale"] == "D")
    from cli_runs import run_captured

    code, out, err = run_captured(["teacher", "--task", "sts", *options, "--json"])   # float64: T* to record at
    assert code == 0, err
    T_star = json.loads(out)["T_star"]
    assert T_star is not None and T_star > 100
    steps = list(range(T_star, T_star + 12)) + [2 * T_star, 2 * T_star + 1]
    data = _teacher(options, 2 * T_star + 1, steps)
    assert data["T_star"] == T_star
    exprs = _expressions(row["activation"])
    kappa = options[options.index("--kappa") + 1] if "--kappa" in options else "0"
    checked = 0
    for T in list(range(T_star, T_star + 11)) + [2 * T_star]:
        now, nxt = data["record"][str(T)], data["record"][str(T + 1)]
        values = {"D": str(row["D"]), "K": str(row["K"]), "M": "1", "eta": data["eta"], "kappa": kappa,
                  "T": str(T), "T_star": str(T_star), "C1": now["C1"], "C2": now["C2"], "C3": now["C3"],
                  "p": now["p"], "c_lag": repr(certified["c_lag"])}
        with mpmath.workdps(45):
            p = mpmath.mpf(now["p"])
            dx = (mpmath.mpf(nxt["C2"]) + mpmath.mpf(nxt["C3"])) - (mpmath.mpf(now["C2"]) + mpmath.mpf(now["C3"]))
            assert _value(exprs["p_lower"], values) <= p <= _value(exprs["p_upper"], values), (T, "D.18")
            assert _value(exprs["dx_lower"], values) <= dx <= _value(exprs["dx_upper"], values), (T, "D.19")
        checked += 1
    assert checked == 12


@pytest.mark.slow
def test_the_lower_side_without_the_lag_fails_where_the_referee_found_it():
    """The expression can fail: the D.19 lower side with c_lag = 0 (q_lag = q_min, the first
    correction) evaluated on the 40-digit trajectory of ReLU, D = 12, K = 3, eta = 0.01 at T* is
    above Delta(C2+C3) (ratio 0.99999897, the certified counterexample of rdyn prove)."""
    options = ["--activation", "relu", "--D", "12", "--K", "3", "--eta", "0.01"]
    T_star = 1165870
    data = _teacher(options, T_star + 1, [T_star, T_star + 1])
    assert data["T_star"] == T_star
    exprs = _expressions("relu")
    now, nxt = data["record"][str(T_star)], data["record"][str(T_star + 1)]
    values = {"D": "12", "K": "3", "M": "1", "eta": data["eta"], "kappa": "0", "T": str(T_star),
              "T_star": str(T_star), "C1": now["C1"], "C2": now["C2"], "C3": now["C3"], "p": now["p"], "c_lag": "0"}
    with mpmath.workdps(45):
        dx = (mpmath.mpf(nxt["C2"]) + mpmath.mpf(nxt["C3"])) - (mpmath.mpf(now["C2"]) + mpmath.mpf(now["C3"]))
        ratio = dx / _value(exprs["dx_lower"], values)
        assert abs(ratio - mpmath.mpf("0.99999897238854602983")) < 1e-15
