"""No import circles inside the layers and their subpackages (issue 21, item 8; issue 29):
every import counts, also the ones inside functions (a function-level import hides a circle
from Python, not from a reader: the modules still cannot be understood or moved apart)."""
import ast
import os

import pytest

from checkout import ROOT_DIR as ROOT
PACKAGES = {"derivations": "rdyn.derivations", "reduced_dynamics": "rdyn.reduced_dynamics",
            "verify": "rdyn.verification"}
KNOWN: set[frozenset] = set()  # none left: model_b is split by concept


def _module_file(folder: str, dotted: str, root: str = ROOT) -> str | None:
    """The file (relative to ROOT) of ``dotted`` (a name below the folder's package, "" for the
    package itself): a module ``a/b.py`` or a package ``a/b/__init__.py``; None if neither."""
    base = os.path.join(folder, *dotted.split(".")) if dotted else folder
    for candidate in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(os.path.join(root, candidate)):
            return candidate
    return None


def _resolve(folder: str, dotted: str, root: str = ROOT) -> str | None:
    """The file of the module ``dotted`` names, or of its longest module prefix (the rest is an
    attribute: ``model_a.dynamics.run`` -> ``model_a/dynamics.py``)."""
    parts = dotted.split(".") if dotted else []
    for n in range(len(parts), -1, -1):
        found = _module_file(folder, ".".join(parts[:n]), root)
        if found:
            return found
    return None


def module_imports(folder: str, path: str, root: str = ROOT) -> set[str]:
    """The files of the same layer that ``path`` (relative to ROOT) imports, anywhere in it."""
    package = PACKAGES[folder]
    tree = ast.parse(open(os.path.join(root, path)).read())
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            # from P import x: x is a module of P if such a file exists, else a name in P
            names += [f"{node.module}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
    found = set()
    for name in names:
        if name == package or name.startswith(package + "."):
            target = _resolve(folder, name[len(package) + 1:], root)
            if target:
                found.add(target)
    return found - {path}


def graph(folder: str, root: str = ROOT) -> dict[str, set[str]]:
    """Import edges between the files of one layer, subpackages included."""
    out = {}
    for base, dirs, files in os.walk(os.path.join(root, folder)):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.relpath(os.path.join(base, name), root)
                out[path] = module_imports(folder, path, root)
    return out


def groups(folder: str, root: str = ROOT) -> list[str]:
    """The subpackages of a layer (folders with an ``__init__.py``)."""
    return sorted(os.path.join(folder, d) for d in os.listdir(os.path.join(root, folder))
                  if os.path.isfile(os.path.join(root, folder, d, "__init__.py")))


def cycles(edges: dict[str, set[str]]) -> list[frozenset]:
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = set()
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.add(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(frozenset(component))

    for v in edges:
        if v not in index:
            visit(v)
    return out


def test_cycle_finder_finds_a_circle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [frozenset("abc")]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_graph_sees_imports_into_subpackages(tmp_path):
    """A circle inside a group, written in each import form, is found."""
    layer = tmp_path / "reduced_dynamics"
    (layer / "grp").mkdir(parents=True)
    (layer / "__init__.py").write_text("")
    (layer / "grp" / "__init__.py").write_text('"""a group"""\n')
    (layer / "grp" / "one.py").write_text("from rdyn.reduced_dynamics.grp import two\n")
    (layer / "grp" / "two.py").write_text("def f():\n    import rdyn.reduced_dynamics.grp.three\n")
    (layer / "grp" / "three.py").write_text("from rdyn.reduced_dynamics.grp.one import g as h\n")
    (layer / "other.py").write_text("from rdyn.reduced_dynamics import grp\n")
    edges = graph("reduced_dynamics", str(tmp_path))
    assert edges["reduced_dynamics/other.py"] == {"reduced_dynamics/grp/__init__.py"}
    assert cycles(edges) == [frozenset({"reduced_dynamics/grp/one.py", "reduced_dynamics/grp/two.py",
                                        "reduced_dynamics/grp/three.py"})]
    assert groups("reduced_dynamics", str(tmp_path)) == ["reduced_dynamics/grp"]


def test_certified_interval_model_a_circle_is_gone():
    edges = graph("reduced_dynamics")
    assert "reduced_dynamics/certified/arb_pass.py" not in edges["reduced_dynamics/certified/interval.py"]
    assert "reduced_dynamics/certified/arb_pass.py" not in edges["reduced_dynamics/certified/interval_pass.py"]
    assert not ({"reduced_dynamics/certified/arb_pass.py", "reduced_dynamics/certified/interval.py",
                 "reduced_dynamics/certified/interval_pass.py"}
                & edges["reduced_dynamics/model_a/double_double_run.py"])


def test_every_group_has_a_docstring_and_imports_nothing():
    """Each subpackage says what it is, and its __init__ stays light (no imports: modules are
    imported by full path, so importing a group costs nothing and cannot close a circle)."""
    for folder in PACKAGES:
        for group in groups(folder):
            tree = ast.parse(open(os.path.join(ROOT, group, "__init__.py")).read())
            assert ast.get_docstring(tree), f"{group}/__init__.py has no docstring"
            assert not [n for n in ast.walk(tree) if isinstance(n, (ast.Import, ast.ImportFrom))], group


@pytest.mark.parametrize("folder", sorted(PACKAGES))
def test_no_import_circles(folder):
    found = [c for c in cycles(graph(folder)) if c not in KNOWN]
    assert not found, f"import circles: {[sorted(c) for c in found]}"


@pytest.mark.parametrize("group", [g for f in sorted(PACKAGES) for g in groups(f)])
def test_no_import_circles_inside_a_group(group):
    folder = group.split(os.sep)[0]
    edges = {m: {t for t in targets if t.startswith(group + os.sep)}
             for m, targets in graph(folder).items() if m.startswith(group + os.sep)}
    assert edges, f"{group}: no modules found"
    found = cycles(edges)
    assert not found, f"import circles in {group}: {[sorted(c) for c in found]}"
