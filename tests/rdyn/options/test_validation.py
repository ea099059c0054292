"""rdyn/options/validation.py: the shared validation of the CLI and the API."""
from __future__ import annotations

import pytest

from rdyn.options import validation
from rdyn.output import UsageError


def test_defaults_filled_in_and_typed():
    values = validation.validate("teacher", {"D": 20.0, "eta": 1})
    assert values["D"] == 20 and values["eta"] == 1.0 and values["K"] is None
    typed = validation.typed_options("teacher", values)
    assert typed.D == 20 and type(typed).__name__ == "TeacherOptions"


@pytest.mark.parametrize("given,message", [
    ({"kappa": 0.2}, "--kappa applies to --activation leaky only"),
    ({"activation": "relu", "activation_expr": "x"}, "--activation-expr"),
    ({"no_such": 1}, "unknown option 'no_such' for rdyn teacher"),
])
def test_refusals(given, message):
    with pytest.raises(UsageError, match=message):
        validation.validate("teacher", given, api=True)


def test_a_missing_optional_dependency_names_its_extra():
    with pytest.raises(UsageError, match=r"--x needs the optional dependency 'no_such_module_rdyn': "
                                         r"install rdyn-theory\[dask\]"):
        validation.check_dependency("--x", "no_such_module_rdyn", "dask")
    validation.check_dependency("--x", "json", "dask")
