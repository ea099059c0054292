"""The pipeline's layering (derivations -> reduced_dynamics -> verify -> rdyn): lower layers
never import upper ones, and the CLI modules hold no library logic imports of their own."""
import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
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


def imported_packages(path):
    tree = ast.parse(open(path).read())
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield _layer(alias.name)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "rdyn":  # from rdyn import x: x may be a layer's package
                yield from ("rdyn" if a.name not in ("derivations", "reduced_dynamics", "verification")
                            else _layer(f"rdyn.{a.name}") for a in node.names)
            else:
                yield _layer(node.module)


def test_layer_of_module_names():
    assert _layer("rdyn.reduced_dynamics.model_a") == "reduced_dynamics"
    assert _layer("rdyn.verification.figures") == "verify"
    assert _layer("rdyn.api._teacher") == "rdyn" and _layer("rdyn.output") == "rdyn"
    assert _layer("numpy.linalg") == "numpy"


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
