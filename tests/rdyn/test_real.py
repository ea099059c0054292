"""Issue 21, item 4: numbers carry their precision. Text output at --dps N prints N significant
digits (the digits of the --json strings); API values of a --dps run print at N digits while
float() and mpmath still take them; float64 runs are unchanged."""
import json
import pickle
import re
from decimal import Decimal
from fractions import Fraction

import mpmath

import rdyn
from rdyn.cli import main
from rdyn.output import format_real, jsonable
from rdyn.real import Real, at_precision, digits_text


def _significant(text: str) -> str:
    """The significant digits of a decimal string ('0.0261e-3' -> '261')."""
    mantissa = text.lstrip("-").split("e")[0].replace(".", "")
    return mantissa.lstrip("0")


def _third(digits):
    with mpmath.workdps(digits):
        return mpmath.mpf(1) / 3


def test_real_prints_at_its_precision_and_converts():
    x = _third(60)
    r = Real(x, 40)
    assert str(r) == repr(r) == f"{r}" == "0." + "3" * 40
    assert r == x and r._mpf_ == x._mpf_  # the same binary value, never rounded
    assert float(r) == 1 / 3 and isinstance(r, mpmath.mpf)
    with mpmath.workdps(60):
        assert mpmath.mpf(r) == x and mpmath.nstr(r, 55) == "0." + "3" * 55
    assert type(r + 1) is mpmath.mpf  # arithmetic: plain mpf
    assert format(r, ".45f") == "0." + "3" * 45  # from the value's digits, not via float64
    assert format(r, ".3e") == "3.333e-1"
    assert r.digits(5) == "0.33333" and r.dps == 40
    back = pickle.loads(pickle.dumps(r))
    assert isinstance(back, Real) and back == r and str(back) == str(r)


def test_digits_text_rounds_exact_values_once():
    assert digits_text(Fraction(2, 3), 20) == "0." + "6" * 19 + "7"
    assert digits_text(Fraction(1, 4), 5) == "0.25000"
    assert digits_text(0, 4) == "0.000"
    # a float64 input is its binary value: 0.1 is not 1/10
    assert digits_text(0.1, 20) == "0.10000000000000000555"


def test_format_real_keeps_float64_digits_and_shows_dps_digits_of_mpf():
    assert format_real(1 / 3, 15) == "0.333333333333333"
    assert format_real(1 / 3, 15, dps=30) == "0.333333333333333"  # float64: no invented digits
    assert format_real(_third(50), 15, dps=30) == "0." + "3" * 30
    assert format_real(Fraction(1, 3), dps=30) == "0." + "3" * 30


def test_at_precision_only_wraps_mpf_of_dps_runs():
    assert at_precision(0.5, 30) == 0.5 and type(at_precision(0.5, 30)) is float
    assert type(at_precision(_third(20), None)) is mpmath.mpf
    assert type(at_precision(_third(20), 30)) is Real


def test_api_values_print_at_the_run_precision():
    r = rdyn.teacher(D=10, K=3, steps=50, dps=40, quiet=True)
    c1 = r.final.C1
    assert isinstance(c1, Real) and c1.dps == 40
    assert len(_significant(str(c1))) == 40
    shown = r.to_dict()["final"]["C1"]  # the --json string of the same run
    assert _significant(str(c1)) == _significant(shown)
    assert Decimal(str(c1)) == Decimal(shown)
    assert abs(float(c1) - 1.1723910240235791) < 1e-15
    assert str(r.eta) == "0.6" + "0" * 39
    float_run = rdyn.teacher(D=10, K=3, steps=50, quiet=True)
    assert type(float_run.final.C1) is float
    assert abs(float_run.final.C1 - float(c1)) < 1e-13


def test_teacher_text_prints_dps_digits(capsys):
    argv = ["teacher", "--D", "10", "--K", "3", "--steps", "50", "--dps", "30", "--quiet"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert main(argv + ["--json"]) == 0
    final = json.loads(capsys.readouterr().out)["final"]
    for key in ("C1", "C2", "C3", "p", "C1_star"):
        label = {"C1_star": "C1\\*"}.get(key, key)
        shown = re.search(rf"\b{label} = (\S+)", text).group(1)
        assert len(_significant(shown)) == 30, (key, shown)
        assert Decimal(shown) == Decimal(final[key]), key
    assert "(1/K = 0." + "3" * 30 + ")" in text  # exact 1/3, not a float's 30 digits
    assert "eta = 0.6" + "0" * 29 + "  (eta_limit = 1.2" + "0" * 28 + ";" in text


def test_ln_text_at_dps(capsys):
    argv = ["ln", "--model", "ln", "--data", "spectrum", "--spectrum", "4,1,1", "--d", "3",
            "--eta", "0.5", "--steps", "20", "--dps", "30"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert re.search(r"kappa1 +2\.0{29}\n", text)  # the exact moment E[a^T S a] = 2
    for name in ("alpha", "beta", "gamma", "loss", "kappa3"):
        shown = re.search(rf"\b{name} +(\S+)", text).group(1)
        assert len(_significant(shown)) == 30, (name, shown)


def test_json_rounds_exact_rationals_once():
    # e.g. the claimed growth exponents of rdyn ln: 1/3 to 30 digits, not float64's 1/3
    assert jsonable({"x": Fraction(1, 3)}, 30) == {"x": "3." + "3" * 29 + "e-1"}
    assert jsonable({"x": Fraction(1, 3)}) == {"x": 1 / 3}
