"""rdyn prove --eta 0:paper beyond the proof sweep's D <= 24: every D = 25..48 at K = 3, ReLU and identity
(strength.PROVE_ETA_GRID_LARGE_D, within its --max-boxes 2000000: D = 48 takes about 250000 boxes, above the default
200000). All twenty-three statements are certified on the whole range of each configuration, and docs/proofs.md's
tables of c_lag are the ones computed here (``python tests/verify/proofs/test_eta_box_grid.py ACTIVATION large_d``
prints one). The check is test_eta_box_grid.py's, loaded from its file (test modules are not a package)."""
from __future__ import annotations

import pytest
from siblings import load

from rdyn.verification.claims import strength


def _grid_module():
    return load(__file__, "test_eta_box_grid.py", "eta_box_grid_check")


@pytest.mark.slow
@pytest.mark.parametrize("activation", ["relu", "identity"])
def test_every_large_d_configuration_is_certified_for_every_eta(activation):
    _grid_module().check_grid(activation, strength.PROVE_ETA_GRID_LARGE_D, count=24)


def test_the_large_d_grid_is_the_ledgers():
    """D = 25..48 at K = 3 only, ReLU and identity: 48 configurations, each eta range up to the papers' condition."""
    grid = strength.PROVE_ETA_GRID_LARGE_D
    configs = strength.eta_box_configs(grid)
    assert len(configs) == 48 and {c["K"] for c in configs} == {3} and {c["D"] for c in configs} == set(range(25, 49))
    assert strength.PROVE_ETA_GRIDS == (strength.PROVE_ETA_GRID, grid)
    assert "every D = 25..48 and K = 3, ReLU, identity (48 configurations)" in strength.eta_box_text(grid)
