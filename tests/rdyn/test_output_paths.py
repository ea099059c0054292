"""Output paths that fail for reasons root cannot bypass (issue 20; docs/input_rules.md rule 4):
a parent that is a regular file (NotADirectoryError), a folder removed between validation and
the write (simulated), and a refused `rdyn figures --out DIR` that must leave no folder."""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from cli_runs import FILE_OUTPUTS, assert_refused, run_main


UNDER_A_FILE = [  # (argv before the path, flag, name of the output under the regular file)
    *((argv, flag, f"out{suffix}") for argv, flag, suffix in FILE_OUTPUTS),
    (["figures", "--quick"], "--out", "figs"),
]


@pytest.mark.parametrize("argv,flag,name", UNDER_A_FILE,
                         ids=[f"{a[0]} {f}" for a, f, _ in UNDER_A_FILE])
@pytest.mark.parametrize("depth", [1, 2], ids=["parent", "grandparent"])
def test_output_under_a_regular_file_is_refused(tmp_path, capsys, argv, flag, name, depth):
    regular = tmp_path / "a-file"
    regular.write_text("not a folder\n")
    path = regular / ("sub/" * (depth - 1) + name)
    assert_refused(*run_main(capsys, argv + [flag, str(path)]), f"{regular} is not a directory")
    assert regular.read_text() == "not a folder\n"


# ------------------------------------------------------------------ refused figures leave no folder

@pytest.mark.parametrize("argv,needle", [
    (["figures", "--steps", "5"], "--steps must be in 10..1000000 for --paper A"),
    (["figures", "--paper", "B", "--steps", "200000"], "--steps must be in 2..100000"),
    (["figures", "--batch", "1e12"], "--batch 1000000000000"),
], ids=["steps-paper-A", "steps-paper-B", "batch-memory"])
def test_refused_figures_leave_no_folder(tmp_path, capsys, argv, needle):
    new = tmp_path / "new"
    assert_refused(*run_main(capsys, argv + ["--out", str(new / "deeper" / "figs")]), needle)
    assert list(tmp_path.iterdir()) == []            # neither new/ nor new/deeper/ nor figs/
    existing = tmp_path / "existing"
    existing.mkdir()
    (existing / "keep.txt").write_text("x")
    assert_refused(*run_main(capsys, argv + ["--out", str(existing)]), needle)
    assert sorted(os.listdir(existing)) == ["keep.txt"]   # an existing folder is left alone


def test_figure_folder_removed_or_replaced_after_validation(tmp_path, capsys):
    from rdyn.verification.figures.layout import output_folder

    removed = tmp_path / "figs"             # validated, then removed: created again
    assert output_folder(removed) == removed and removed.is_dir()
    parent = tmp_path / "parent"             # validated, then its parent replaced by a file
    parent.write_text("")
    rescue = output_folder(parent / "figs")
    err = capsys.readouterr().err
    try:
        assert rescue.is_dir() and rescue.name.startswith("rdyn-rescued-figures-")
        assert err.count("\n") == 1 and f"saved to {rescue} instead" in err
        assert str(parent / "figs") in err and "Not a directory" in err
    finally:
        shutil.rmtree(rescue)


# ------------------------------------------------------------------ a folder removed before the write

def _removing_folder_after(monkeypatch, module, name, folder: Path):
    """Make ``module.name`` (the job's computation) remove ``folder`` once it has finished:
    the folder passed validation and is gone when the result is written."""
    real = getattr(module, name)

    def computing_then_removing(*args, **kwargs):
        result = real(*args, **kwargs)
        shutil.rmtree(folder)
        return result

    monkeypatch.setattr(module, name, computing_then_removing)


def test_sweep_out_folder_removed_before_the_write(tmp_path, capsys, monkeypatch):
    from rdyn.reduced_dynamics.model_a import batch

    argv = ["sweep", "--grid", "D=20;K=2,4", "--steps", "100", "--quiet"]
    rc, reference, _ = run_main(capsys, argv)
    assert rc == 0
    folder = tmp_path / "out"
    folder.mkdir()
    _removing_folder_after(monkeypatch, batch, "run_batch", folder)
    rc, out, err = run_main(capsys, argv + ["--out", str(folder / "rows.csv")])
    assert rc == 0 and out == "" and "Traceback" not in err
    rescued = err.split("saved to ")[1].split(" instead")[0]
    try:
        assert "No such file or directory" in err and not folder.exists()
        assert Path(rescued).read_text() == reference      # the rows are all there
    finally:
        os.remove(rescued)


def test_checkpoint_folder_removed_before_the_write(tmp_path, capsys, monkeypatch):
    """teacher --checkpoint: the folder disappears during the run; the final save warns in
    one line and the result is printed, identical to a run without --checkpoint."""
    from rdyn.reduced_dynamics.model_a import dynamics as model_a

    argv = ["teacher", "--D", "20", "--K", "4", "--steps", "50", "--json", "--quiet"]
    rc, reference, _ = run_main(capsys, argv)
    folder = tmp_path / "ck"
    folder.mkdir()
    real_iterate = model_a._iterate

    def iterate_removing(advance, *args, **kwargs):
        def advance_then_remove(*a):   # the folder goes while the steps run
            t = advance(*a)
            shutil.rmtree(folder, ignore_errors=True)
            return t

        return real_iterate(advance_then_remove, *args, **kwargs)

    monkeypatch.setattr(model_a, "_iterate", iterate_removing)
    rc, out, err = run_main(capsys, argv + ["--checkpoint", str(folder / "c.npz")])
    assert rc == 0 and out == reference and json.loads(out)["final"]["t"] == 50
    assert err.count("\n") == 1 and "cannot write checkpoint" in err and "goes on" in err


# ------------------------------------------------------------ the derivations' catalogue regenerators

def _failing_write_text(monkeypatch):
    """Path.write_text that writes half of the text, then fails as a full disk does."""
    from pathlib import Path

    real = Path.write_text

    def half_then_enospc(self, text, *args, **kwargs):
        real(self, text[: len(text) // 2], *args, **kwargs)
        raise OSError(28, "No space left on device", str(self))

    monkeypatch.setattr(Path, "write_text", half_then_enospc)


@pytest.mark.parametrize("which", ["model_a", "activations"])
def test_catalogue_regenerators_write_whole_or_not_at_all(tmp_path, monkeypatch, which):
    """python -m rdyn.derivations.model_a.catalog / .activations write through the one atomic writer
    (rdyn.derivations.atomic_files, re-exported by reduced_dynamics/runs/atomic_files.py): the
    generated text is complete, and a write that fails leaves the previous catalogue
    untouched and no temporary beside it (the derivations' own sympy work is replaced by one
    small expression here)."""
    import sympy as sp

    from rdyn.derivations import activations
    from rdyn.derivations.model_a import catalog
    from rdyn.derivations import atomic_files as low
    from rdyn.reduced_dynamics.runs import atomic_files as high

    assert high.write_text_atomic is low.write_text_atomic and high.AtomicFiles is low.AtomicFiles
    target = tmp_path / "_catalog.py"
    if which == "model_a":
        monkeypatch.setattr(catalog, "derive_model_a", lambda a, s: {"p": sp.Rational(1, 3)})
        write = lambda: catalog.write_cache(target)   # noqa: E731
        first = "CATALOG = {"
    else:
        monkeypatch.setattr(activations, "derive_closed_forms", lambda: {("erf", "m"): sp.Integer(7)})
        write = lambda: activations.write_closed_forms_cache(target)   # noqa: E731
        first = "CLOSED_FORMS = {"
    write()
    text = target.read_text()
    assert first in text and text.endswith("}\n")
    assert "Rational(1, 3)" in text if which == "model_a" else "Integer(7)" in text
    compile(text, str(target), "exec")   # a whole module (a half-written one does not parse)
    target.write_text("previous catalogue\n")
    _failing_write_text(monkeypatch)
    with pytest.raises(OSError):
        write()
    monkeypatch.undo()
    assert target.read_text() == "previous catalogue\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["_catalog.py"]
