"""rdyn prove --eta 0:paper at the Leaky ReLU (kappa = 0.1) configurations of the ledger's grid
(test_eta_box_grid.py has the others and the helper)."""
from __future__ import annotations

import pytest


@pytest.mark.slow
def test_every_leaky_configuration_of_the_grid_is_certified_for_every_eta():
    from test_eta_box_grid import check_grid

    check_grid("leaky")
