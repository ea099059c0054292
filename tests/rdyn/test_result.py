"""rdyn/result.py: the API's read-only results, attributes named as the JSON keys."""
from __future__ import annotations

import json

import mpmath
import pytest

from rdyn.result import Result


def test_attributes_items_and_nested_results():
    r = Result({"t1": 12, "final": {"C1": 0.5}, "record": {"100": {"p": 0.25}}}, detail="run")
    assert r.t1 == 12 and r["t1"] == 12
    assert isinstance(r.final, Result) and r.final.C1 == 0.5
    assert r.record[100].p == 0.25                     # non-identifier keys by item, ints as their text
    assert "final" in r and list(r) == ["t1", "final", "record"] and r.detail == "run"
    with pytest.raises(AttributeError, match=r"no key 'T_star' \(keys: t1, final, record\)"):
        r.T_star
    with pytest.raises(AttributeError, match="read-only"):
        r.t1 = 3


def test_dps_values_print_at_the_run_precision_and_to_dict_is_the_json_object(capsys):
    with mpmath.workdps(40):
        third = mpmath.mpf(1) / 3
    r = Result({"C1": third, "series": [third, third], "nan": float("nan")}, dps=20)
    assert str(r.C1) == "0.33333333333333333333"         # 20 significant digits
    assert [str(v) for v in r.series] == ["0.33333333333333333333"] * 2
    assert float(r.C1) == 1 / 3
    d = r.to_dict()
    assert d["nan"] is None and d["C1"] == "3.3333333333333333333e-1"   # the --json string: 20 digits
    assert json.loads(r.to_json()) == d
    assert "non-finite value at nan reported as null" in capsys.readouterr().err


def test_equality_needs_the_same_data_and_precision_and_results_are_unhashable():
    assert Result({"a": 1}) == Result({"a": 1}) != Result({"a": 1}, dps=20)
    assert Result({"a": 1}) != {"a": 1}
    with pytest.raises(TypeError):
        hash(Result({"a": 1}))
    assert repr(Result({str(i): i for i in range(8)})) == "Result(0=0, 1=1, 2=2, 3=3, 4=4, 5=5, ...)"
