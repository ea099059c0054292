"""Every notebook in notebooks/ executes from a clean state (once, at its quick sizes), and says
what it should; the committed notebooks carry their outputs.

Each notebook runs exactly once per test session, in a fresh kernel with ``RDYN_QUICK=1`` and a
scratch working directory, through the same code as ``python notebooks/run_all.py``; the
executed copy lives only in memory (the committed file is checked to be unchanged).
``EXPECTED`` holds, per notebook, a check of its printed output (values that could be wrong,
not just "it ran").
"""
import importlib.util
import re
from pathlib import Path

import mpmath
import pytest
from checkout import ROOT

nbformat = pytest.importorskip("nbformat")
pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

NOTEBOOK_DIR = ROOT / "notebooks"
NOTEBOOKS = sorted(NOTEBOOK_DIR.glob("*.ipynb"))


def _runner():
    spec = importlib.util.spec_from_file_location("rdyn_notebooks_run_all", NOTEBOOK_DIR / "run_all.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _stream_text(nb) -> str:
    return "".join(o.get("text", "") for c in nb.cells if c.cell_type == "code"
                   for o in c.get("outputs", []) if o.get("output_type") == "stream"
                   and o.get("name") == "stdout")


def _figures(nb) -> int:
    return sum(o.get("output_type") in ("display_data", "execute_result") and "image/png" in o.get("data", {})
               for c in nb.cells for o in c.get("outputs", []))


def _errors(nb) -> list:
    return [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
            if o.get("output_type") == "error"]


def _asymptotics(nb) -> None:
    """eta T*/D^3 (ReLU, logits/D, K = 4, v = 1): the map's integer T* lies within its last step
    of the slow-manifold limit tau_star/eta at every iterated D; the derived I0 = K/v = 4; at the
    largest D (2^14 quick, 2^20 full) the limit is within 2% of the two-term asymptote
    D N^2 (I0 + I1 N^-1/2) (measured -1.5e-2 at 2^14, -4.5e-4 at 2^20), above I0, and the
    local exponent is within 0.1 below the derived 3."""
    text = _stream_text(nb)
    assert re.search(r"I0 = K/vstar_norm2 = 4,", text)
    rows = re.findall(r"^\s+(\d+)\s+([0-9.]+)\s+(\d+)\s+[0-9.]+\s+([0-9.]+)\s+\S+$", text, re.M)
    assert len(rows) >= 4
    for D, eta, T, tau in rows:
        assert -1.5 < float(tau) / float(eta) - int(T) < 0.5, (D, eta, T, tau)
    m = re.search(r"largest D = (\d+): eta T\*/D\^3 = ([0-9.]+); ratio to I0 = ([0-9.]+); ratio to "
                  r"the two-term asymptote = ([0-9.]+); local exponent = ([0-9.]+)", text)
    D, y, lead, two, local = int(m.group(1)), *map(float, m.group(2, 3, 4, 5))
    assert D >= 2**14 and abs(lead - y / 4) < 1e-5 and lead > 1
    assert abs(two - 1) < 0.02 and 2.9 < local < 3
    assert _figures(nb) == 1


def _model_a_figures(nb) -> None:
    """The collapse holds at round-off in all eight population cross-checks; figures drawn."""
    devs = [float(x) for x in re.findall(r"max_rel_dev = ([0-9.e+-]+)", _stream_text(nb))]
    assert len(devs) == 8 and max(devs) <= 1e-8
    assert _figures(nb) >= 2


def _model_a_dynamics(nb) -> None:
    """Both activations reach T* within the run; t1 is tens of steps, far below T*."""
    rows = re.findall(r"(relu|leaky)\s*: eta=\S+\s+t1=(\d+)\s+T\*=(\d+)", _stream_text(nb))
    assert [r[0] for r in rows] == ["relu", "leaky"]
    for _, t1, t_star in rows:
        assert 1 <= int(t1) <= 200 and int(t_star) > 1000 * int(t1)
    assert _figures(nb) == 1


def _model_b(nb) -> None:
    text = _stream_text(nb)
    assert "ln_gamma" in text and "power-method ratio" in text
    assert _figures(nb) == 3


def _model_b_figures(nb) -> None:
    text = _stream_text(nb)
    assert text.count("slope ") == 4 and text.count("final loss ") == 6
    assert _figures(nb) >= 1


def _scaling(nb) -> None:
    text = _stream_text(nb)
    assert re.search(r"^\d+ lines", text, re.M)
    # the t1 ~ 1/eta line: fitted exponent within 0.05 of -1 (also asserted in the notebook)
    fitted = float(re.search(r"^A\.t1\s+relu\s+eta\s+-1\s+(-?[0-9.]+) \[", text, re.M).group(1))
    assert abs(fitted + 1) < 0.05
    assert _figures(nb) == 1


def _tour(nb) -> None:
    """The 50-digit lemma constant equals the arc-cosine kernel value 1/6 + sqrt(3)/(4 pi) (an
    independent closed form), both routes agree, the crosscheck is at round-off, Model A's
    phases are ordered and T* grows with D, and Model B's gamma grows faster than t^(1/3)
    early on but below t^(1/2)."""
    text = _stream_text(nb)
    with mpmath.workdps(60):
        textbook = mpmath.mpf(1) / 6 + mpmath.sqrt(3) / (4 * mpmath.pi)
        for route in ("closed form", "quadrature "):
            digits = re.search(route + r" at rho = 1/2: ([0-9.]+)", text).group(1)
            assert len(digits) >= 51 and abs(mpmath.mpf(digits) - textbook) < mpmath.mpf(10) ** -49
    differences = [float(x) for x in re.findall(r"\|difference\| = ([0-9.e+-]+)", text)]
    assert len(differences) == 2 and max(differences) < 1e-45
    assert float(re.search(r"max_rel_dev = ([0-9.e+-]+)", text).group(1)) < 1e-12
    phases = [tuple(map(int, m)) for m in re.findall(r"^\s*(\d+)\s+2\s+\S+\s+(\d+)\s+(\d+)\s", text, re.M)]
    assert len(phases) >= 3 and all(t1 < t_star for _, t1, t_star in phases)
    assert [t_star for *_, t_star in phases] == sorted(t_star for *_, t_star in phases)
    exponent = float(re.search(r"fitted exponents \(second half of the run\): gamma ([0-9.]+)", text).group(1))
    assert 1 / 3 < exponent < 1 / 2
    assert _figures(nb) == 2


def _any_activation(nb) -> None:
    """Issue 22: every activation has t1 < T* (both reached), and late in the run 1 - K p falls
    with a log-log slope within 0.1 of -1/2 and the excess loss with a slope below -0.9."""
    rows = re.findall(r"^(\w+)\s+eta=\S+\s+t1=\s*(\d+)\s+T\*=\s*(\d+)\s+eta T\*=\s*\S+\s+late slope: "
                      r"loss (\S+)\s+1-Kp (\S+)", _stream_text(nb), re.M)
    assert [r[0] for r in rows] == ["identity", "relu", "leaky", "erf", "tanh", "gelu", "softplus",
                                    "sigmoid"]
    for _, t1, t_star, loss_slope, gap_slope in rows:
        assert 1 <= int(t1) < int(t_star)
        assert abs(float(gap_slope) + 0.5) < 0.1 and float(loss_slope) < -0.9
    assert _figures(nb) == 1


EXPECTED = {"any_activation.ipynb": _any_activation, "asymptotics.ipynb": _asymptotics, "model_a_dynamics.ipynb": _model_a_dynamics, "model_a_figures.ipynb": _model_a_figures,
            "model_b.ipynb": _model_b, "model_b_figures.ipynb": _model_b_figures,
            "scaling.ipynb": _scaling, "tour.ipynb": _tour}


def test_every_notebook_has_a_check():
    assert {p.name for p in NOTEBOOKS} == set(EXPECTED)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_committed_with_outputs(path):
    """What a reader sees on a code host: every code cell executed, no errors, figures, and no
    volatile metadata (run_all.py strips it)."""
    nb = nbformat.read(path, as_version=4)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(c.execution_count is not None for c in code)
    assert [c.execution_count for c in code] == list(range(1, len(code) + 1))
    assert not _errors(nb) and _figures(nb) >= 1
    assert not any("execution" in c.metadata for c in nb.cells)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.name for p in NOTEBOOKS])
def test_notebook_executes(path, tmp_path):
    before = path.read_bytes()
    nb = nbformat.read(path, as_version=4)
    _runner().execute(nb, str(tmp_path), quick=True, timeout=600)
    assert not _errors(nb)
    EXPECTED[path.name](nb)
    assert path.read_bytes() == before  # the committed notebook is not overwritten
