"""pyproject.toml ships every package of the pipeline inside the one namespace ``rdyn`` (a
missing subpackage only shows up in a fresh `pip install .`, where the CLI then fails on
import), and the repository's top-level folders map to ``rdyn.<folder>``."""
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


FOLDER_TO_PACKAGE = {folder: name for name, folder in SETUPTOOLS["package-dir"].items()}


def _installed_name(package_dir: Path) -> str:
    parts = package_dir.relative_to(ROOT).parts
    return ".".join((FOLDER_TO_PACKAGE[parts[0]],) + parts[1:])


def test_every_package_is_listed_in_pyproject():
    listed = set(SETUPTOOLS["packages"])
    found = {_installed_name(p.parent)
             for top in ("derivations", "reduced_dynamics", "verify", "rdyn")
             for p in (ROOT / top).rglob("__init__.py")}
    assert found <= listed, f"add to [tool.setuptools] packages: {sorted(found - listed)}"


def test_only_top_level_import_name_is_rdyn():
    assert {name.split(".")[0] for name in SETUPTOOLS["packages"]} == {"rdyn"}
    import rdyn

    assert {name: folder for name, folder in SETUPTOOLS["package-dir"].items() if name != "rdyn"} \
        == rdyn.SUBPACKAGE_FOLDERS
