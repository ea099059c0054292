"""rdyn/api: each function's private module (rdyn/api/_NAME.py) is what ``rdyn.NAME`` calls, and
returns the values of its subcommand (the long runs, prove/claims/figures, only up to their
up-front refusals here; their results are tested through ``rdyn.NAME`` elsewhere)."""
from __future__ import annotations

import inspect

import pytest

import rdyn
from rdyn.api import (_asymptotics, _claims, _crosscheck, _figures, _ln, _prove, _scaling, _sweep,
                      _teacher, _verify)
from rdyn.api import _signature
from rdyn.options import COMMANDS

MODULES = {"asymptotics": _asymptotics, "claims": _claims, "crosscheck": _crosscheck,
           "figures": _figures, "ln": _ln, "prove": _prove, "scaling": _scaling, "sweep": _sweep,
           "teacher": _teacher, "verify": _verify}


def test_every_api_function_is_its_private_modules_function():
    assert set(MODULES) == set(rdyn.api.FUNCTIONS)
    for name, module in MODULES.items():
        assert getattr(rdyn, name) is getattr(module, name) is getattr(rdyn.api, name), name


def test_signature_is_keyword_only_from_the_option_table():
    sig = _signature.signature(COMMANDS["sweep"])
    assert all(p.kind is inspect.Parameter.KEYWORD_ONLY for p in sig.parameters.values())
    assert list(sig.parameters) == [o.name for o in _signature.api_options(COMMANDS["sweep"])]
    assert sig.return_annotation is rdyn.Result
    assert inspect.signature(_sweep.sweep) == sig


def test_asymptotics_relu_constants():
    r = _asymptotics.asymptotics(activation="relu", no_check=True)   # 16 s of sympy
    assert r.tau_star.exponent == 3 and r.tau_star.I0 == "K/vstar_norm2" and r.tau_star.I0_value == 4.0
    assert r.late_loss.c_L == "D**2*K*(D - K)/4"          # Theorem 3.1's loss constant, corrected


def test_ln_spectrum_contraction_is_the_eigenvalue_ratio():
    r = _ln.ln(model="ln", data="spectrum", spectrum=(4, 1, 1), d=3, steps=50, quiet=True)
    assert r.contraction.lambda_1 == 4.0 and r.contraction.lambda_r_plus_1 == 1.0
    assert r.contraction.power_method_ratio == 0.25 and r.steps == 50 and r.expectation == "exact"


def test_crosscheck_collapsed_equals_the_full_model():
    r = _crosscheck.crosscheck(D=8, K=2, steps=50, quiet=True)
    assert r.max_rel_dev < 1e-14 and r.mode == "population"
    assert r.final_loss.full == pytest.approx(r.final_loss.collapsed, rel=1e-14)


def test_sweep_rows_in_grid_order_with_the_default_step_size():
    r = _sweep.sweep(grid="D=20,24;K=2", steps=100, quiet=True)
    assert [(row["D"], row["K"]) for row in r.rows] == [(20, 2), (24, 2)]
    assert [row["eta"] for row in r.rows] == pytest.approx([4 / 20, 4 / 24])   # eta = 4/D


def test_verify_only_selects_and_an_unmatched_id_is_refused():
    r = _verify.verify(only=["A.precision.*"], quick=True)
    assert r.checks and all(c["id"].startswith("A.precision.") for c in r.checks)
    assert all(c["status"] != "fail" for c in r.checks)
    with pytest.raises(ValueError, match="--only: no check id can match Z.nothing"):
        _verify.verify(only=["Z.nothing"])


@pytest.mark.parametrize("module,kwargs,needle", [
    (_prove, {"D": 5, "K": 5}, "--K must satisfy 1 <= K < D"),
    (_claims, {"paper": "C"}, "--paper must be one of A, B"),
    (_figures, {"no_such_option": 1}, "no_such_option"),
    (_scaling, {"no_such_option": 1}, "no_such_option"),
    (_teacher, {"D": 5, "K": 5}, "need K < D"),
])
def test_long_runs_refuse_bad_input_before_any_work(module, kwargs, needle):
    name = module.__name__.rsplit("._", 1)[1]
    with pytest.raises(ValueError, match=needle):
        getattr(module, name)(**kwargs)
