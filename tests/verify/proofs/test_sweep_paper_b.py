"""The other half of the papers'-eta proof sweep (test_sweep_paper.py has the check and the record,
loaded from its file: test modules are not a package)."""
from __future__ import annotations

import pytest
from siblings import load


def _sweep_module():
    return load(__file__, "test_sweep_paper.py", "sweep_paper_check")


@pytest.mark.slow
@pytest.mark.parametrize("instance_id", _sweep_module()._ids(1))
def test_the_papers_eta_sweep_half_b(instance_id):
    _sweep_module().check(instance_id)
