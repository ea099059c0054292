"""rdyn prove --eta 0:paper at the Leaky ReLU (kappa = 0.1) configurations of the ledger's grid
(test_eta_box_grid.py has the others and the check, loaded from its file: test modules are not a package)."""
from __future__ import annotations

import pytest
from siblings import load


def _grid_module():
    return load(__file__, "test_eta_box_grid.py", "eta_box_grid_check")


@pytest.mark.slow
def test_every_leaky_configuration_of_the_grid_is_certified_for_every_eta():
    _grid_module().check_grid("leaky")


def test_the_check_loads_from_its_file():
    assert callable(_grid_module().check_grid)
