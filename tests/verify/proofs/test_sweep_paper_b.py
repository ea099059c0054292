"""The other half of the papers'-eta proof sweep (test_sweep_paper.py has the check and the record,
loaded from its file: test modules are not a package)."""
from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest


def _sweep_module():
    spec = importlib.util.spec_from_file_location("sweep_paper_check", Path(__file__).with_name("test_sweep_paper.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.slow
@pytest.mark.parametrize("instance_id", _sweep_module()._ids(1))
def test_the_papers_eta_sweep_half_b(instance_id):
    _sweep_module().check(instance_id)
