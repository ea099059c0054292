"""Issue 21, item 3: every API function has a real signature (keyword-only, defaults and
annotations from the option table) and a numpy-style docstring generated from the same table;
unknown keywords are still a ValueError naming them."""
import inspect
import typing

import pytest

import rdyn
from rdyn.api import FUNCTIONS
from rdyn.options import COMMANDS


def _api_options(name):
    return [o for o in COMMANDS[name].options if not o.cli_only]


@pytest.mark.parametrize("name", FUNCTIONS)
def test_signature_is_the_option_table(name):
    sig = inspect.signature(getattr(rdyn, name))
    options = _api_options(name)
    assert list(sig.parameters) == [o.name for o in options]
    for o in options:
        p = sig.parameters[o.name]
        assert p.kind is inspect.Parameter.KEYWORD_ONLY
        assert p.default == o.default, o.name
        assert p.annotation is not inspect.Parameter.empty
    assert sig.return_annotation is rdyn.Result


def test_teacher_signature_lists_the_model_options_with_types():
    params = inspect.signature(rdyn.teacher).parameters
    assert {"D", "K", "eta", "steps", "dps", "vstar_norm2"} <= set(params)
    assert params["D"].annotation == (int | None) and params["D"].default is None
    assert params["eta"].annotation == (float | None)
    assert params["vstar_norm2"].annotation is float and params["vstar_norm2"].default == 1.0
    assert typing.get_args(params["activation"].annotation) == (
        "identity", "relu", "leaky", "erf", "tanh", "gelu", "softplus", "sigmoid", "expr")
    assert params["activation"].default == "relu" and params["quiet"].annotation is bool
    assert "json" not in params  # the CLI's only


def test_signature_binds_valid_calls_and_rejects_positional_ones():
    sig = inspect.signature(rdyn.ln)
    sig.bind(model="ln", data="spectrum", spectrum=(4, 1, 1), d=3, eta=0.5, dps=30)
    with pytest.raises(TypeError):
        sig.bind(3)
    with pytest.raises(TypeError):
        rdyn.teacher(20)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_docstring_is_numpy_style_and_lists_every_option(name):
    doc = getattr(rdyn, name).__doc__
    assert "\nParameters\n----------\n" in doc and "\nRaises\n------\nValueError\n" in doc
    assert doc.index("Parameters") < doc.index("Raises")
    if "\nReturns\n" in doc:
        assert doc.index("Parameters") < doc.index("Returns\n-------") < doc.index("Raises")
    for o in _api_options(name):
        head = [line for line in doc.splitlines() if line.startswith(f"{o.name} : ")]
        assert len(head) == 1, o.name
        assert ("optional" in head[0]) == (o.default is None)
        assert f"(CLI: ``{o.flag}``)" in " ".join(doc.split())


def test_docstring_carries_units_and_ranges():
    doc = " ".join(rdyn.teacher.__doc__.split())
    assert "checkpoint_every : float, optional seconds between checkpoints" in doc
    assert "eta : float, optional GD step size (dimensionless; default: half of eta_limit) " \
           "[> 0, finite]" in doc
    assert ("activation : {'identity', 'relu', 'leaky', 'erf', 'tanh', 'gelu', 'softplus', "
            "'sigmoid', 'expr'}, default 'relu'") in doc
    assert "steps : int, optional GD steps N" in doc and "[in 0..1000000000000]" in doc


@pytest.mark.parametrize("name", FUNCTIONS)
def test_unknown_keyword_is_a_value_error_naming_it(name):
    with pytest.raises(ValueError, match=f"unknown option 'no_such_option' for rdyn {name}"):
        getattr(rdyn, name)(no_such_option=1)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_returns_section_is_indented(name):
    doc = getattr(rdyn, name).__doc__
    if "\nReturns\n-------\n" not in doc:
        return
    section = doc.split("\nReturns\n-------\n", 1)[1].split("\n\n", 1)[0].splitlines()
    assert section[0] == "rdyn.result.Result"
    assert section[1:] and all(line.startswith("    ") for line in section[1:]), section
