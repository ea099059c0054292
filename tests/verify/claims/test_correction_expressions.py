"""Every correction's machine-readable ``expression`` (and ``upper_expression``, ``expression_sqrtD``) carries its
statement: parsed with rdyn.derivations.formula.parse (never sympify), in the vocabulary of docs/interface.md
(D, K, M, eta, kappa, T, T_star, t1, C1, C2, C3, p) plus what ``rdyn teacher --record`` writes (C1_star, loss),
and evaluated at 40 digits on recorded trajectories (``rdyn.teacher(..., dps=40, record=...)``) at steps
T*-1 .. T*+10 and 2 T* of one ReLU and one Leaky ReLU instance used by no other test, with logits/D and
logits/sqrt(D) where the correction has both.

What each relation can decide on a finite trajectory:

* ``equal`` (the S identity): the expression equals ||S - S*||_F of the explicit attention matrix;
* ``condition`` (D.17's threshold, D.10's p_c, D.15's step): the condition holds as stated at the steps;
* ``asymptotic`` as ``T -> oo`` (the late-phase rates): not a finite-T statement; the expression must decay
  from T*+10 to 2 T* and measured/expression at 2 T* lie within [1/4, 4] (a wrong power of D, or a constant
  off by 4, fails; measured 0.38 to 1.6 there);
* ``asymptotic`` as ``D -> oo`` (D.17's law): at D = 7, 9 the law is far from T* (the (D-K)^(-1/2) term is
  large); T*/expression must lie in [1/20, 20] (a power of D off fails).

The derived late-phase and T* expressions take about a minute of sympy: that part is marked slow.
"""
from __future__ import annotations

import mpmath
import pytest
import sympy as sp

import rdyn
from rdyn.derivations.formula import parse, symbols_in
from rdyn.verification.checks.record import Check
from rdyn.verification.claims import errata

VOCABULARY = {"D", "K", "M", "eta", "kappa", "T", "T_star", "t1", "C1", "C2", "C3", "p", "C1_star", "loss"}
# D.18 and D.19 carry the certified constant c_lag beyond this vocabulary: their expressions are evaluated on
# 40-digit trajectories by tests/verify/claims/test_late_phase_expressions.py
OTHER_OWNER = {("A", "Lemma D.18"), ("A", "Lemma D.19")}
# ReLU and Leaky ReLU instances of no other test (eta: rdyn teacher's default, eta_limit/2)
INSTANCES = (("relu", 7, 3, 0.0), ("leaky", 9, 4, 0.2))
DIGITS = 40


def _parse(text: str) -> sp.Expr:
    names = symbols_in(text)
    assert set(names) <= VOCABULARY, set(names) - VOCABULARY
    return parse(text, names, what="correction", symbolic_exponents=True, max_length=4000, max_nodes=2000)


def _value(text: str, values: dict) -> mpmath.mpf:
    expr = _parse(text)
    subs = {s: sp.Float(str(values[s.name]), DIGITS) for s in expr.free_symbols}
    out = sp.N(expr.subs(subs), DIGITS)
    assert out.is_real, (text, out)
    return mpmath.mpf(str(out))


_RUNS: dict = {}


def _run(activation: str, D: int, K: int, kappa: float, scale: str) -> dict:
    """T* (float64) and the 40-digit states at T*-1 .. T*+10 and 2 T* (cached per instance)."""
    key = (activation, D, K, kappa, scale)
    if key not in _RUNS:
        kw = {"kappa": kappa} if activation == "leaky" else {}
        T_star = rdyn.teacher(D=D, K=K, activation=activation, logit_scale=scale, steps=100000, **kw).T_star
        steps = list(range(T_star - 1, T_star + 11)) + [2 * T_star]
        run = rdyn.teacher(D=D, K=K, activation=activation, logit_scale=scale, steps=2 * T_star, dps=DIGITS,
                           record=",".join(map(str, steps)), **kw).to_dict()
        assert run["T_star"] == T_star
        with mpmath.workdps(DIGITS):
            states = {int(t): {k: mpmath.mpf(v) for k, v in s.items() if k != "t"} for t, s in run["record"].items()}
            _RUNS[key] = {"T_star": T_star, "eta": mpmath.mpf(run["eta"]), "states": states}
    return _RUNS[key]


def _values(activation, D, K, kappa, run, T) -> dict:
    return {"D": D, "K": K, "M": 1, "kappa": kappa, "eta": run["eta"], "T": T, "T_star": run["T_star"],
            **run["states"][T]}


def _expression(fix: dict, activation: str, key: str = "expression"):
    value = fix.get(key)
    return value.get(activation) if isinstance(value, dict) else value


def _fix(label: str, records: list) -> dict:
    cls = errata.CLASSIFICATION[("A", label)]
    return errata.correction_object(cls.correction, cls, records)


def _passing(ids, **detail) -> list[Check]:
    return [Check(i, "test", "expression source", "pass", detail=dict(detail)) for i in ids]


CASES = [(a, D, K, kappa, scale) for a, D, K, kappa in INSTANCES for scale in ("D", "sqrtD")]
CASE_IDS = [f"{a}-D{D}-K{K}-{scale}" for a, D, K, kappa, scale in CASES]


def test_every_correction_expression_is_in_the_vocabulary():
    """Every literal expression of a correction parses in the vocabulary (the derived ones: the slow test)."""
    for key, cls in errata.CLASSIFICATION.items():
        spec = cls.correction
        if spec is None or key in OTHER_OWNER or key[0] != "A":
            continue
        for text in ([spec.expression] if isinstance(spec.expression, str) else
                     list((spec.expression or {}).values())):
            _parse(text)


@pytest.mark.parametrize("activation,D,K,kappa,scale", CASES, ids=CASE_IDS)
def test_literal_and_cheap_corrections_hold_on_the_trajectory(activation, D, K, kappa, scale):
    """The S identity, D.17's threshold, D.10's p_c (identity only: see below) and D.15's condition."""
    from rdyn.verification.checks import errata_a as ea

    run = _run(activation, D, K, kappa, scale)
    T_star, steps = run["T_star"], sorted(run["states"])
    with mpmath.workdps(DIGITS):
        # Theorem 3.1 (proof: S identity), equal: the explicit matrix S has, per column, K entries p and D-K
        # entries (1 - K p)/(D-K); S* has 1/K and 0
        fix = _fix("Theorem 3.1 (proof: S identity)", _passing(["A.errata.S_identity"]))
        for T in steps:
            v = _values(activation, D, K, kappa, run, T)
            p, q = v["p"], (1 - K * v["p"]) / (D - K)
            explicit = mpmath.sqrt(D * (K * (v["p"] - mpmath.mpf(1) / K) ** 2 + (D - K) * q**2))
            assert abs(_value(fix["expression"], v) - explicit) <= mpmath.mpf(10) ** (5 - DIGITS) * explicit
            assert p < mpmath.mpf(1) / K
        # Lemma D.17 (threshold), condition p(T*) >= 1/(2K): first reached at T*
        fix = _fix("Lemma D.17 (threshold)", _passing(["A.errata.p_threshold"]))
        level = lambda T: _value(fix["expression"], _values(activation, D, K, kappa, run, T))  # noqa: E731
        assert run["states"][T_star]["p"] >= level(T_star)
        assert run["states"][T_star - 1]["p"] < level(T_star - 1)
        # Lemma D.15 (proof): 3(D-K)/D^2 <= 0.025 iff D^2 - 120 (D-K) >= 0, at this D, K
        fix = _fix("Lemma D.15 (proof)", _passing(["A.errata.D15_condition"]))
        lhs = mpmath.mpf(3 * (D - K)) / D**2 <= mpmath.mpf("0.025")
        assert lhs == (_value(fix["expression"], _values(activation, D, K, kappa, run, T_star)) >= 0)
    # Lemma D.10: the JSON carries p_c for the identity only (ReLU's and Leaky ReLU's p_c are numeric roots,
    # per instance); the correction must say so rather than carry a wrong expression
    fix = _fix("Lemma D.10", [ea.d10_condition_check(True)])
    assert set(fix["expression"]) == {"identity"} and "numeric, per instance" in fix["valid"]


@pytest.mark.slow   # ~70 s of sympy: the derived late-phase and T* expressions
@pytest.mark.parametrize("activation,D,K,kappa,scale", CASES, ids=CASE_IDS)
def test_derived_asymptotic_corrections_on_the_trajectory(activation, D, K, kappa, scale):
    from rdyn.verification.checks import errata_a as ea

    run = _run(activation, D, K, kappa, scale)
    T_star = run["T_star"]
    acts = ("identity", "relu", "leaky")
    with mpmath.workdps(DIGITS):
        measured = {
            "excess_loss": lambda v: v["loss"],
            "S_error_F": lambda v: D * (1 - K * v["p"]) / mpmath.sqrt(K * (D - K)),
            "WV_error_F": lambda v: abs(v["C1"] - 1),      # ||W_V - V*||_F = |C1 - 1| ||V*||_F, M = 1
        }
        labels = {"excess_loss": "Theorem 3.1 (loss)", "S_error_F": "Theorem 3.1 (Step 3)",
                  "WV_error_F": "Theorem 3.1 (Step 3, W_V)"}
        for quantity, label in labels.items():
            records = [Check(f"A.errata.late.{quantity}" + ("" if s == "D" else ".sqrtD"), "test", "derived", "pass",
                             detail={"expression": {a: sp.sstr(ea.asymptote(quantity, a, s)) for a in acts}})
                       for s in ("D", "sqrtD")]
            fix = _fix(label, records)
            text = _expression(fix, activation, "expression" if scale == "D" else "expression_sqrtD")
            assert text is not None, (label, scale)
            early, late = (_values(activation, D, K, kappa, run, T) for T in (T_star + 10, 2 * T_star))
            assert 0 < _value(text, late) < _value(text, early)          # a decay in T
            ratio = measured[quantity](late) / _value(text, late)
            assert mpmath.mpf(1) / 4 <= ratio <= 4, (label, scale, ratio)
        detail = {"expression": {a: sp.sstr(ea.tstar_expression(a)) for a in acts},
                  "expression_sqrtD": {a: sp.sstr(ea.tstar_expression(a, "sqrtD")) for a in acts}}
        fix = _fix("Lemma D.17", [Check("A.errata.Tstar", "test", "derived", "pass", detail=detail)])
        text = _expression(fix, activation, "expression" if scale == "D" else "expression_sqrtD")
        ratio = T_star / _value(text, _values(activation, D, K, kappa, run, T_star))
        assert mpmath.mpf(1) / 20 <= ratio <= 20, (scale, ratio)
