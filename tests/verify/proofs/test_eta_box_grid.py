"""rdyn prove --eta 0:paper at every configuration of the ledger's grid (strength.PROVE_ETA_GRID: every
D = 3..24, K >= 1 with D > 2K, logits/D, ||V*||^2 = 1): all twenty-three statements certified on the whole range
at once, and docs/proofs.md's tables of c_lag are the ones computed here (``python
tests/verify/proofs/test_eta_box_grid.py ACTIVATION`` prints one). Leaky ReLU is in
test_eta_box_grid_leaky.py (a file of its own, so that the slow suite's two workers share the grid)."""
from __future__ import annotations

import sys
from pathlib import Path

import pytest

from rdyn.verification.claims import strength
from rdyn.verification.proofs import eta_box as eb

DOC = Path(__file__).resolve().parents[3] / "docs" / "proofs.md"


def check_grid(activation: str, grid: dict = strength.PROVE_ETA_GRID, count: int = 132) -> None:
    """Every configuration of ``grid`` (``count`` of them) at ``activation``: all twenty-three statements certified
    on the whole range at once; T* at the papers' eta within the certified [a, b]/eta where the sweep record has
    it; docs/proofs.md's c_lag table of the grid is the one computed."""
    configs = [c for c in strength.eta_box_configs(grid) if c["activation"] == activation]
    assert len(configs) == count
    reports = eb.sweep(configs, max_boxes=grid.get("max_boxes", eb.DEFAULT_MAX_BOXES))
    for key, rep in reports.items():
        verdicts = {r.statement.key: r.verdict for r in rep.results}
        assert verdicts == {k: "certified" for k in eb.STATEMENT_KEYS}, (key, [r.reason for r in rep.results])
        for r in rep.results:   # proved on the whole range at once, no sub-box
            assert [b["eta"] for b in r.certificate["proved_boxes"]] == [r.certificate["box"]["eta"]]
    # T* = Theta(1/eta): the proof sweep's certified T* at the papers' eta (its record, an independent route: the
    # certified iteration) lies in every configuration's [a, b]/eta
    record = Path(__file__).with_name("sweep_paper_verdicts.json")
    if activation in ("relu", "identity") and grid is strength.PROVE_ETA_GRID:
        import json

        from rdyn.verification.claims.trajectories import paper_eta_within

        recorded = {row["id"]: row["T_star"] for row in json.loads(record.read_text(encoding="utf-8"))["instances"]}
        for (act, D, K), rep in reports.items():
            (tstar,) = [r for r in rep.results if r.statement.key == "D17.range.tstar"]
            a, b = tstar.certificate["proved_boxes"][0]["constants"]["eta_tstar"]
            assert a <= paper_eta_within(D, K) * recorded[f"{D}-{K}-{act}"] <= b, (D, K, act, a, b)
    assert eb.c_lag_table(reports, activation) in DOC.read_text(encoding="utf-8"), \
        f"docs/proofs.md's c_lag table of {activation} is stale: python {__file__} {activation} prints it"


@pytest.mark.slow
@pytest.mark.parametrize("activation", ["relu", "identity"])
def test_every_configuration_of_the_grid_is_certified_for_every_eta(activation):
    check_grid(activation)


def test_the_grid_is_the_ledgers():
    assert strength.PROVE_ETA_GRID["activations"] == ("relu", "identity", "leaky")
    assert len(strength.eta_box_configs()) == 3 * 132


if __name__ == "__main__":   # python test_eta_box_grid.py ACTIVATION [large_d]: the c_lag table of docs/proofs.md
    name = sys.argv[1]
    grid = strength.PROVE_ETA_GRID_LARGE_D if sys.argv[2:] == ["large_d"] else strength.PROVE_ETA_GRID
    print(eb.c_lag_table(eb.sweep([c for c in strength.eta_box_configs(grid) if c["activation"] == name],
                                  max_boxes=grid.get("max_boxes", eb.DEFAULT_MAX_BOXES)), name))
