"""The pipeline's layering (derivations -> reduced_dynamics -> verify -> rdyn): lower layers
never import upper ones, and the CLI modules hold no library logic imports of their own."""
import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ORDER = ("derivations", "reduced_dynamics", "verify", "rdyn")


def imported_packages(path):
    tree = ast.parse(open(path).read())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name.split(".")[0]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.module.split(".")[0]


def test_lower_layers_never_import_upper_ones():
    for rank, package in enumerate(ORDER):
        upper = set(ORDER[rank + 1:])
        folder = os.path.join(ROOT, package)
        for name in sorted(os.listdir(folder)):
            if name.endswith(".py"):
                bad = upper & set(imported_packages(os.path.join(folder, name)))
                assert not bad, f"{package}/{name} imports {sorted(bad)}"


def test_notebooks_and_library_do_not_import_cli_modules():
    for folder in ("notebooks", "verify", "reduced_dynamics", "bench", "rdyn/api"):
        for name in sorted(os.listdir(os.path.join(ROOT, folder))):
            path = os.path.join(ROOT, folder, name)
            if os.path.isfile(path) and name.endswith((".py", ".ipynb")):
                assert "rdyn.cmd_" not in open(path).read(), path
