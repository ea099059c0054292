"""The pipeline's layering (derivations -> reduced_dynamics -> verify -> rdyn): lower layers
never import upper ones (every module of every subpackage, also imports inside functions), and
no library module imports the command line (rdyn.cli)."""
import ast
import os

from checkout import ROOT_DIR as ROOT
ORDER = ("derivations", "reduced_dynamics", "verify", "rdyn")


# The installed names of the layers' folders (pyproject.toml, [tool.setuptools.package-dir]).
LAYER_OF_PACKAGE = {"rdyn.derivations": "derivations", "rdyn.reduced_dynamics": "reduced_dynamics",
                    "rdyn.verification": "verify"}


def _layer(module: str) -> str:
    """The layer (folder) of an imported module name: rdyn.derivations.x -> derivations; any
    other rdyn.* -> rdyn; a third-party module -> its top-level name."""
    parts = module.split(".")
    if parts[0] == "rdyn" and len(parts) > 1:
        return LAYER_OF_PACKAGE.get(".".join(parts[:2]), "rdyn")
    return parts[0]


def imported_modules(path):
    """Every absolute module name ``path`` imports (``from P import x`` gives ``P.x``: x may be
    a module)."""
    tree = ast.parse(open(path).read())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


def imported_packages(path):
    for name in imported_modules(path):
        if name.startswith("rdyn.") and name.count(".") == 1:  # from rdyn import x
            yield _layer(name) if name in LAYER_OF_PACKAGE else "rdyn"
        else:
            yield _layer(name)


def python_files(folder):
    """Every .py file under ``folder`` (subpackages included), as paths relative to ROOT."""
    for base, dirs, files in os.walk(os.path.join(ROOT, folder)):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                yield os.path.relpath(os.path.join(base, name), ROOT)


def test_layer_of_module_names():
    assert _layer("rdyn.reduced_dynamics.model_a.dynamics") == "reduced_dynamics"
    assert _layer("rdyn.verification.figures.model_a") == "verify"
    assert _layer("rdyn.api._teacher") == "rdyn" and _layer("rdyn.output") == "rdyn"
    assert _layer("numpy.linalg") == "numpy"


def test_walk_reaches_the_subpackages():
    files = set(python_files("reduced_dynamics")) | set(python_files("verify"))
    for path in ("reduced_dynamics/model_a/dynamics.py", "reduced_dynamics/model_b/run.py",
                 "reduced_dynamics/certified/arb_pass.py", "reduced_dynamics/runs/checkpoint.py",
                 "reduced_dynamics/numerics/double_double.py", "verify/checks/registry.py",
                 "verify/claims/ledger.py", "verify/references/full_matrix.py",
                 "verify/figures/model_a.py"):
        assert path in files


def test_layer_finder_sees_an_upward_import(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("def f():\n    from rdyn.verification.checks import registry\n"
                   "    from rdyn import api\n")
    assert {"verify", "rdyn"} <= set(imported_packages(bad))


def test_lower_layers_never_import_upper_ones():
    for rank, package in enumerate(ORDER):
        upper = set(ORDER[rank + 1:])
        for path in python_files(package):
            bad = upper & set(imported_packages(os.path.join(ROOT, path)))
            assert not bad, f"{path} imports {sorted(bad)}"


def _imports_cli(name: str) -> bool:
    return name == "rdyn.cli" or name.startswith("rdyn.cli.")


def test_notebooks_and_library_do_not_import_cli_modules():
    import json

    for folder in ("verify", "reduced_dynamics", "derivations", "bench", "rdyn/api"):
        for path in python_files(folder):
            bad = [n for n in imported_modules(os.path.join(ROOT, path)) if _imports_cli(n)]
            assert not bad, f"{path} imports {bad}"
    for name in sorted(os.listdir(os.path.join(ROOT, "notebooks"))):
        if name.endswith(".ipynb"):
            cells = json.load(open(os.path.join(ROOT, "notebooks", name)))["cells"]
            code = "".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
            assert "rdyn.cli" not in code and "rdyn import cli" not in code, name


def test_no_library_folder_holds_more_than_18_modules():
    """One concept per module, a handful of concepts per folder: a folder that grows past 18
    modules is split into subpackages (as derivations/model_a/ and reduced_dynamics/model_a/limits/)."""
    crowded = {}
    for top in ("rdyn", "derivations", "reduced_dynamics", "verify"):
        for folder, _, files in os.walk(os.path.join(ROOT, top)):
            count = sum(f.endswith(".py") for f in files)
            if count > 18:
                crowded[os.path.relpath(folder, ROOT)] = count
    assert not crowded, crowded
