"""Execute notebooks/model_b.ipynb (must run cleanly; it is kept under a minute)."""
from pathlib import Path

import nbformat
from nbclient import NotebookClient

NB = Path(__file__).resolve().parent.parent / "notebooks" / "model_b.ipynb"


def test_model_b_notebook_executes():
    nb = nbformat.read(NB, as_version=4)
    NotebookClient(nb, kernel_name="python3", timeout=300,
                   resources={"metadata": {"path": str(NB.parent)}}).execute()
    text = "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []))
    assert "ln_gamma" in text and "power-method ratio" in text
