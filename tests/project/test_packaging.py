"""pyproject.toml ships every package of the pipeline inside the one namespace ``rdyn`` (a
missing subpackage only shows up in a fresh `pip install .`, where the CLI then fails on
import), and the repository's top-level folders map to ``rdyn.<folder>``."""
import tomllib

import pytest
from pathlib import Path

from checkout import ROOT
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
        == {**rdyn.SUBPACKAGE_FOLDERS, **rdyn.DATA_FOLDERS}


# ---------------------------------------------------------------------------------------------
# Distribution metadata (issue 21, item 2)
# ---------------------------------------------------------------------------------------------

PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def _version_in_source() -> str:
    import ast

    tree = ast.parse((ROOT / "reduced_dynamics" / "_version.py").read_text())
    (value,) = [node.value.value for node in tree.body if isinstance(node, ast.Assign)
                and [t.id for t in node.targets] == ["__version__"]]
    return value


def test_distribution_name_is_not_the_taken_rdyn():
    # "rdyn" on the public index is an unrelated 2017 graph-benchmark project; the import name
    # and the command stay rdyn.
    assert PROJECT["name"] == "rdyn-theory"
    assert PROJECT["scripts"] == {"rdyn": "rdyn.cli:main"}


def test_version_has_one_source():
    import subprocess
    import sys

    import rdyn

    assert "version" not in PROJECT and PROJECT["dynamic"] == ["version"]
    dynamic = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["dynamic"]
    assert dynamic == {"version": {"attr": "rdyn.reduced_dynamics._version.__version__"}}
    version = _version_in_source()
    assert rdyn.__version__ == version
    out = subprocess.run([sys.executable, "-m", "rdyn", "--version"], cwd=ROOT,
                         capture_output=True, text=True, check=True).stdout
    assert out == f"rdyn {version}\n"


def test_metadata_is_complete():
    assert (ROOT / "LICENSE").is_file() and PROJECT["license-files"] == ["LICENSE"]
    assert PROJECT["license"] == "MIT" and "MIT License" in (ROOT / "LICENSE").read_text()
    assert PROJECT["authors"] and PROJECT["description"] and PROJECT["readme"] == "README.md"
    minimum = tuple(int(x) for x in PROJECT["requires-python"].removeprefix(">=").split("."))
    versions = [tuple(int(x) for x in c.rsplit(" ", 1)[1].split("."))
                for c in PROJECT["classifiers"] if c.startswith("Programming Language :: Python :: 3.")]
    assert versions and min(versions) == minimum, "classifiers and requires-python disagree"
    assert any(c.startswith("License ::") for c in PROJECT["classifiers"]) is False, \
        "the SPDX license expression replaces license classifiers (PEP 639)"


@pytest.mark.slow
def test_sdist_and_wheel_build_and_pass_twine_check(tmp_path):
    """`python -m build` (isolated: fetches the build backend) and `twine check --strict`; the
    wheel holds one top-level package, rdyn, and carries the source version (~25 s)."""
    import subprocess
    import sys
    import zipfile

    subprocess.run([sys.executable, "-m", "build", "--outdir", str(tmp_path), str(ROOT)],
                   check=True, capture_output=True)
    wheels, sdists = list(tmp_path.glob("*.whl")), list(tmp_path.glob("*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1
    check = subprocess.run([sys.executable, "-m", "twine", "check", "--strict",
                            str(wheels[0]), str(sdists[0])], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    version = _version_in_source()
    with zipfile.ZipFile(wheels[0]) as wheel:
        names = wheel.namelist()
        info = f"rdyn_theory-{version}.dist-info"
        assert {n.split("/")[0] for n in names} == {"rdyn", info}
        metadata = wheel.read(f"{info}/METADATA").decode()
        assert wheel.read(f"{info}/top_level.txt").decode().split() == ["rdyn"]
    assert f"\nVersion: {version}\n" in metadata and "\nName: rdyn-theory\n" in metadata
    assert "\nLicense-Expression: MIT\n" in metadata
    for sub in ("derivations", "reduced_dynamics", "verification"):
        assert f"rdyn/{sub}/__init__.py" in names
    # every module of every subpackage (a package missing from [tool.setuptools] packages
    # would leave its modules out of the wheel)
    expected = {_installed_name(p.parent).replace(".", "/") + "/" + p.name
                for top in ("derivations", "reduced_dynamics", "verify", "rdyn")
                for p in (ROOT / top).rglob("*.py") if "__pycache__" not in p.parts}
    assert expected <= set(names), sorted(expected - set(names))
    # the documentation `rdyn --help` points to is in the wheel (issue 32): every page, and
    # the unpacked wheel's `rdyn --help` names its own rdyn/docs folder, which holds them
    pages = {p.name for p in (ROOT / "docs").glob("*.md")}
    assert "interface.md" in pages and {f"rdyn/docs/{p}" for p in pages} <= set(names)
    unpacked = tmp_path / "unpacked"
    with zipfile.ZipFile(wheels[0]) as wheel:
        wheel.extractall(unpacked)
    shown = subprocess.run([sys.executable, "-m", "rdyn", "--help"], cwd=tmp_path,
                           env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(unpacked)},
                           capture_output=True, text=True)
    assert shown.returncode == 0, shown.stderr
    folder = str(unpacked / "rdyn" / "docs")
    assert f"\n  {folder}\n" in shown.stdout and (unpacked / "rdyn/docs/interface.md").is_file()
