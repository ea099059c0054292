"""rdyn/options/coercion.py: the type and range of one given value, refused in one line naming
the option."""
from __future__ import annotations

import pytest

from rdyn.options.coercion import coerce
from rdyn.options.option import Option
from rdyn.output import UsageError

STEPS = Option("steps", "int", lo=0, hi=10 ** 9)
ETA = Option("eta", "float", lo=0, lo_open=True)
SIZES = Option("D", "int", lo=2, hi=10 ** 4, range_ok=True)


def test_accepted_values_in_their_validated_form():
    assert coerce(STEPS, 20.0) == 20 and type(coerce(STEPS, 20.0)) is int
    assert coerce(ETA, 1) == 1.0 and type(coerce(ETA, 1)) is float
    assert coerce(Option("only", "str", repeatable=True), "A.x") == ["A.x"]
    assert coerce(Option("spectrum", "str", api_types=(tuple,)), (4, 1)) == (4, 1)
    # an int range: [LO, HI] or every value from LO (text from the command line, a pair from the API)
    assert coerce(SIZES, "12:24") == (12, 24) and coerce(SIZES, (12, 24.0)) == (12, 24)
    assert coerce(SIZES, "12:") == (12, None) and coerce(SIZES, (12, None)) == (12, None)
    assert coerce(SIZES, "12:12") == (12, 12) and coerce(SIZES, 12) == 12


@pytest.mark.parametrize("option,value,message", [
    (STEPS, "20", "--steps must be an integer, got '20'"),             # the API takes numbers
    (STEPS, 2.5, "--steps must be an integer, got 2.5"),
    (STEPS, -1, "--steps must be in 0..1000000000, got -1"),
    (STEPS, 10 ** 30, "--steps must be in 0..1000000000, got 1.000e+30 (an integer of 31 digits)"),
    (Option("seed", "int"), 2 ** 64, "--seed must be at most 9223372036854775807 (a 64-bit integer)"),
    (Option("dps", "int", lo=5, hi=4000), 10 ** 5, "--dps 100000 is above the supported maximum 4000"),
    (ETA, 0.0, "--eta must be > 0, got 0.0"),
    (ETA, float("nan"), "--eta must be a finite number, got nan"),
    (ETA, True, "--eta must be a real number, got True"),
    (SIZES, "13:12", "--D as a range must be LO:HI or LO: (integers; every value in [LO, HI], or every value "
                     "from LO) with LO <= HI, got 13:12"),
    (SIZES, "1:12", "--D range: each end must be in 2..10000, got 1"),
    (SIZES, (12, 10 ** 5), "--D range: each end must be in 2..10000, got 100000"),
    (SIZES, "12:x", "--D as a range must be LO:HI or LO:"),
    (SIZES, (None, 12), "--D as a range must be LO:HI or LO:"),
    (SIZES, (12, 13, 14), "--D as a range must be LO:HI or LO:"),
    (SIZES, (12, 13.5), "--D as a range must be LO:HI or LO:"),
    (Option("json", "flag"), 1, "--json must be True or False, got 1"),
    (Option("model", "choice", choices=("ln", "noln")), "x", "--model must be one of ln, noln, got 'x'"),
    (Option("out", "out", output="file"), "", "--out must be a file path, got ''"),
])
def test_refusals_name_the_option(option, value, message):
    with pytest.raises(UsageError) as info:
        coerce(option, value)
    assert str(info.value).startswith(message), str(info.value)
