"""Every notebook in notebooks/ executes from a clean state (once), and says what it should.

Each notebook runs exactly once per test session; ``EXPECTED`` holds, per notebook, a check
of its printed output (values that could be wrong, not just "it ran").
"""
import re
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = sorted((Path(__file__).resolve().parent.parent / "notebooks").glob("*.ipynb"))


def _stream_text(nb) -> str:
    return "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code"
                   for o in c.get("outputs", []) if o.get("output_type") == "stream")


def _has_figure(nb) -> bool:
    return any(o.get("output_type") == "display_data" and "image/png" in o.get("data", {})
               for c in nb.cells for o in c.get("outputs", []))


def _model_a_figures(nb) -> None:
    """The collapse holds at round-off in all eight population cross-checks; figures drawn."""
    devs = [float(x) for x in re.findall(r"max_rel_dev = ([0-9.e+-]+)", _stream_text(nb))]
    assert len(devs) == 8 and max(devs) <= 1e-8
    assert _has_figure(nb)


def _model_b(nb) -> None:
    text = _stream_text(nb)
    assert "ln_gamma" in text and "power-method ratio" in text
    assert _has_figure(nb)


def _model_b_figures(nb) -> None:
    text = _stream_text(nb)
    assert text.count("slope ") == 4 and text.count("final loss ") == 6
    assert _has_figure(nb)


EXPECTED = {"model_a_figures.ipynb": _model_a_figures, "model_b.ipynb": _model_b,
            "model_b_figures.ipynb": _model_b_figures}


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_executes(path, tmp_path):
    nb = nbformat.read(path, as_version=4)
    client = NotebookClient(nb, timeout=600, kernel_name="python3",
                            resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors
    EXPECTED.get(path.name, lambda nb: None)(nb)
