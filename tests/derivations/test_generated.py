"""derivations/generated.py: generated source runs in the namespace given, named in tracebacks."""
from __future__ import annotations

import traceback

import pytest

from rdyn.derivations.generated import run_generated


def test_functions_defined_by_the_source_use_the_namespace():
    ns = run_generated("def f(x):\n    return scale / x\n", "probe", {"scale": 3.0})
    assert ns["f"](4.0) == 0.75
    assert ns["scale"] == 3.0


def test_the_label_names_the_source_in_a_traceback():
    ns = run_generated("def f(x):\n    return 1 / x\n", "probe kernel", {})
    with pytest.raises(ZeroDivisionError) as info:
        ns["f"](0)
    frames = traceback.extract_tb(info.value.__traceback__)
    assert frames[-1].filename == "<rdyn probe kernel>" and frames[-1].lineno == 2
