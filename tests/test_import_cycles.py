"""No import circles inside the subpackages (issue 21, item 8): every import counts, also the
ones inside functions (a function-level import hides a circle from Python, not from a reader:
the modules still cannot be understood or moved apart)."""
import ast
import os

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGES = {"derivations": "rdyn.derivations", "reduced_dynamics": "rdyn.reduced_dynamics",
            "verify": "rdyn.verification"}
KNOWN: set[frozenset] = set()  # none left: model_b.py is split by concept


def module_imports(folder: str, name: str) -> set[str]:
    """The modules of the same subpackage that ``folder/name`` imports (anywhere in it)."""
    prefix = PACKAGES[folder] + "."
    tree = ast.parse(open(os.path.join(ROOT, folder, name)).read())
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == PACKAGES[folder]:  # from rdyn.reduced_dynamics import x
                found |= {alias.name for alias in node.names}
            elif node.module.startswith(prefix):
                found.add(node.module[len(prefix):].split(".")[0])
        elif isinstance(node, ast.Import):
            found |= {a.name[len(prefix):].split(".")[0] for a in node.names
                      if a.name.startswith(prefix)}
    return {f"{folder}/{m}.py" for m in found
            if os.path.isfile(os.path.join(ROOT, folder, m + ".py"))} - {f"{folder}/{name}"}


def graph(folder: str) -> dict[str, set[str]]:
    return {f"{folder}/{n}": module_imports(folder, n)
            for n in sorted(os.listdir(os.path.join(ROOT, folder))) if n.endswith(".py")}


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


def test_certified_interval_model_a_circle_is_gone():
    edges = graph("reduced_dynamics")
    assert "reduced_dynamics/certified.py" not in edges["reduced_dynamics/certified_interval.py"]
    assert not ({"reduced_dynamics/certified.py", "reduced_dynamics/certified_interval.py"}
                & edges["reduced_dynamics/model_a_dd.py"])


@pytest.mark.parametrize("folder", sorted(PACKAGES))
def test_no_import_circles(folder):
    found = [c for c in cycles(graph(folder)) if c not in KNOWN]
    assert not found, f"import circles: {[sorted(c) for c in found]}"
