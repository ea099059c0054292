"""pyproject.toml ships every package of the pipeline (a missing subpackage only shows up in a
fresh `pip install .`, where the CLI then fails on import)."""
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_every_package_is_listed_in_pyproject():
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {str(p.parent.relative_to(ROOT)).replace("/", ".")
             for top in ("derivations", "reduced_dynamics", "verify", "rdyn")
             for p in (ROOT / top).rglob("__init__.py")}
    assert found <= listed, f"add to [tool.setuptools] packages: {sorted(found - listed)}"
