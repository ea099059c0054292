"""The lag lemma and the derived Lemmas D.18/D.19 of ``rdyn prove`` (verify/proofs/engine.py's
LagPass, the region conditions lag, dx_lower_qlag, increment_lower_qlag, increment_upper_psi;
docs/proofs.md, "Derived late-phase bounds"): certified with the constants in the certificate, the
constant c_lag tight enough that 1e-6 less is refused, and the certified c_lag of the erratum's
``constants`` table re-proved."""
from __future__ import annotations

import math

import pytest

DERIVED = ("D18.derived.lower", "D18.derived.upper", "D19.derived.lag", "D19.derived.lower")


def _prove(inst, lag_constant=None):
    from rdyn.verification.proofs import engine as en

    return en.prove(inst, labels={"Lemma D.18", "Lemma D.19"}, lag_constant=lag_constant)


@pytest.fixture(scope="module")
def identity_d5():
    from rdyn.verification.proofs import engine as en

    return _prove(en.Instance(5, 1, activation="identity"))


def _by_key(report):
    return {r.statement.key: r for r in report.results + report.superseded}


def test_derived_statements_certified_with_their_constants(identity_d5):
    rs = _by_key(identity_d5)
    assert identity_d5.T_star == 660
    for key in DERIVED:
        assert rs[key].verdict == "certified", (key, rs[key].reason)
        assert rs[key].certificate["steps_checked"] == [660, identity_d5.region["T0"]]
    k = rs["D19.derived.lag"].certificate["constants"]
    # c_lag covers the steps T* .. T0 and the region's w band, and is within 2^-23 of the larger
    assert k["c_lag"] >= k["c_lag_steps"] and k["c_lag"] >= k["c_lag_band"]
    assert k["c_lag"] <= max(k["c_lag_steps"], k["c_lag_band"]) * (1 + 2.0**-23)
    assert k["c_lag"] == pytest.approx(0.2482138, rel=1e-6)
    # q_lag = q_min (1 - c_lag (K/(D-K))^2) > 0 (identity: q_min = ((D-K)/D)^2 = 0.64)
    assert k["q_min"][0] == pytest.approx(0.64, rel=1e-15)
    assert k["q_lag"][0] == pytest.approx(0.64 * (1 - k["c_lag"] / 16), rel=1e-12) and k["q_lag"][0] > 0
    # the superseded forms are still decided (certified here), apart
    assert {r.statement.key for r in identity_d5.superseded} >= {"D18.corrected.lower", "D19.corrected.lower"}


def test_c_lag_one_millionth_smaller_is_refused(identity_d5):
    from rdyn.verification.proofs import engine as en

    c_lag = _by_key(identity_d5)["D19.derived.lag"].certificate["constants"]["c_lag"]
    r = _by_key(_prove(en.Instance(5, 1, activation="identity"), lag_constant=c_lag * (1 - 1e-6)))
    assert r["D19.derived.lag"].verdict != "certified"
    assert "lag not shown" in r["D19.derived.lag"].reason


def test_relu_c_lag_of_the_erratum_table_is_the_certified_one():
    """The erratum's constants table (errata_a.CERTIFIED_C_LAG) at ReLU, D = 5, K = 2, eta = 0.5 is what
    rdyn prove certifies (the instance of tests/verify/claims/test_late_phase_expressions.py)."""
    from rdyn.verification.checks import errata_a as ea
    from rdyn.verification.proofs import engine as en

    row = next(r for r in ea.CERTIFIED_C_LAG if r["activation"] == "relu")
    rs = _by_key(_prove(en.Instance(row["D"], row["K"], activation="relu", eta=row["eta"])))
    assert all(rs[k].verdict == "certified" for k in DERIVED)
    assert rs["D19.derived.lag"].certificate["constants"]["c_lag"] == row["c_lag"]


@pytest.mark.slow
def test_leaky_c_lag_of_the_erratum_table_is_the_certified_one():
    from rdyn.verification.checks import errata_a as ea
    from rdyn.verification.proofs import engine as en

    row = next(r for r in ea.CERTIFIED_C_LAG if r["activation"] == "leaky")
    rs = _by_key(_prove(en.Instance(row["D"], row["K"], activation="leaky", kappa=row["kappa"])))
    assert all(rs[k].verdict == "certified" for k in DERIVED)
    assert rs["D19.derived.lag"].certificate["constants"]["c_lag"] == row["c_lag"]
    assert math.isfinite(row["c_lag"])
