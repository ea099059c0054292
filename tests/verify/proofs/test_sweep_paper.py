"""The proof sweep at the papers' step size over the whole grid K < D <= 24, D > 2K, ReLU and identity,
logits/D (264 instances, T* up to 5e8; docs/proofs.md, "Proof sweep"): every instance proved again by the
float route (the library's ``max_steps=1``, iteration to T0) reaches the recorded T*, t1, verdicts and
counterexample steps (sweep_paper_verdicts.json, written from ``bench/prove_sweep.py``'s output). Half of
the instances here, half in test_sweep_paper_b.py (balanced by T*: the slow suite runs test files on two
workers). Every corrected statement must be certified or proved there.

Re-record (only when a verdict is meant to change, saying why in the commit):

    PYTHONPATH=. python bench/prove_sweep.py OUT.json --eta paper
    python tests/verify/proofs/test_sweep_paper.py OUT.json
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

DATA = Path(__file__).with_name("sweep_paper_verdicts.json")
GRID = "D=3:24:22;K=1:11:11;activation=relu,identity;eta=paper"
LETTER = {"certified": "c", "proved": "p", "refuted": "r", "undecided": "u"}


def recorded() -> dict:
    return json.loads(DATA.read_text(encoding="utf-8"))


def _ids(part: int) -> list[str]:
    if not DATA.exists():   # only while the record is written (``write``); test_the_record_covers_the_grid needs it
        return []
    return [row["id"] for row in recorded()["instances"] if row["part"] == part]


def summary(row: dict, keys: list[str]) -> dict:
    """T*, t1, one letter per statement (``keys``' order) and the counterexample steps of a sweep row."""
    every = {x["key"]: x for x in row["statements"] + row["superseded"]}
    return {"T_star": row["T_star"], "t1": row["t1"],
            "verdicts": "".join(LETTER[every[k]["verdict"]] for k in keys),
            "steps": {k: every[k]["counterexample"]["step"] for k in keys if every[k]["counterexample"]}}


def check(instance_id: str) -> None:
    from rdyn.verification.proofs import sweep as sw

    data = recorded()
    want = next(row for row in data["instances"] if row["id"] == instance_id)
    D, K, activation = instance_id.split("-")
    (point,), _ = sw.parse(f"D={D};K={K};activation={activation};eta=paper")
    row = sw.prove_point(point, max_steps=1)
    assert row["error"] is None, row["error"]
    got = summary(row, data["keys"])
    assert got == {k: want[k] for k in got}, instance_id
    for x in row["statements"]:
        if x["form"] == "corrected":
            assert x["verdict"] in ("certified", "proved"), (instance_id, x["key"], x["reason"])


@pytest.mark.slow
@pytest.mark.parametrize("instance_id", _ids(0))
def test_the_papers_eta_sweep_half_a(instance_id):
    check(instance_id)


def test_the_record_covers_the_grid():
    """The recorded instances are exactly the grid's 264 points, split in two parts of similar cost."""
    from rdyn.verification.proofs import sweep as sw

    points, _ = sw.parse(GRID)
    data = recorded()
    assert sorted(row["id"] for row in data["instances"]) == sorted(
        f"{p.instance.D}-{p.instance.K}-{p.instance.activation}" for p in points)
    cost = [sum(row["T_star"] for row in data["instances"] if row["part"] == part) for part in (0, 1)]
    assert 0.8 < cost[0] / cost[1] < 1.25


def write(sweep_file: str) -> None:
    """sweep_paper_verdicts.json from a sweep file of ``GRID`` (the parts balanced greedily by T*)."""
    sweep = json.loads(Path(sweep_file).read_text(encoding="utf-8"))
    assert sweep["grid"] == GRID and sweep.get("complete", True), "a complete sweep of the grid"
    rows = sweep["instances"]
    keys = [x["key"] for x in rows[0]["statements"] + rows[0]["superseded"]]
    out, load = [], [0, 0]
    for row in sorted(rows, key=lambda r: -(r["T_star"] or 0)):
        part = 0 if load[0] <= load[1] else 1
        load[part] += row["T_star"] or 0
        inst = row["instance"]
        out.append({"id": f"{inst['D']}-{inst['K']}-{inst['activation']}", "part": part, **summary(row, keys)})
    out.sort(key=lambda r: [int(r["id"].split("-")[0]), int(r["id"].split("-")[1]), r["id"]])
    text = json.dumps({"grid": GRID, "keys": keys, "instances": out}, indent=0) + "\n"
    tmp = DATA.with_suffix(".json.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(DATA)


if __name__ == "__main__":
    write(sys.argv[1])
