"""rdyn: exact, checkable collapsed training dynamics of two transformer theory papers.

The pipeline is ``rdyn.derivations`` (sympy) -> ``rdyn.reduced_dynamics`` (iterators, phases)
-> ``rdyn.verification`` (cross-checks, lemma report) -> ``rdyn`` itself (the Python API and the
``rdyn`` command). ``rdyn`` is the only top-level import name the package installs.

Python API (docs/api.md): one function per subcommand, keyword arguments named as the
options (dashes -> underscores), the same checks as the CLI (ValueError with its one-line
message), results whose attributes are the JSON keys and whose ``to_dict()`` is the
``--json`` object::

    import rdyn
    r = rdyn.teacher(D=20, K=4, eta=0.5, steps=200000)
    r.t1, r.T_star, r.final.C1, r.to_dict()
    b = rdyn.ln(model="ln", data="spectrum", spectrum=(4, 1, 1), d=3, eta=0.5, steps=200, dps=30)

Functions: teacher, crosscheck, ln, sweep, scaling, verify, figures, claims, asymptotics, prove;
``rdyn.schema(name)``: the JSON Schema of ``rdyn NAME --json`` (docs/schemas.md). Importing rdyn is cheap:
each function imports its machinery on first use.
"""
import os as _os

# Where each subpackage lives in a source checkout (the design card's layout: derivations/,
# reduced_dynamics/ and verify/ beside rdyn/). The build maps the same folders into this
# namespace (pyproject.toml, [tool.setuptools.package-dir]); verify/ becomes
# rdyn.verification because rdyn.verify is the API function of `rdyn verify`.
SUBPACKAGE_FOLDERS = {"rdyn.derivations": "derivations",
                      "rdyn.reduced_dynamics": "reduced_dynamics",
                      "rdyn.verification": "verify"}

# Folders the build ships as data, without Python code: the documentation pages (docs/*.md,
# installed as rdyn/docs/; docs/interface.md states the command-line and JSON contract).
DATA_FOLDERS = {"rdyn.docs": "docs"}


def docs_folder() -> str:
    """The folder of the documentation pages: ``rdyn/docs`` inside an installed package (the
    wheel ships them), else ``docs/`` of the source checkout."""
    here = _os.path.dirname(_os.path.abspath(__file__))
    installed = _os.path.join(here, "docs")
    return installed if _os.path.isdir(installed) else _os.path.join(_os.path.dirname(here), "docs")


def _find_checkout_subpackages() -> None:
    """When rdyn is imported from a source checkout (tests run from the repository, the
    notebooks), find the three subpackages in their folders beside rdyn/."""
    import importlib.abc
    import importlib.util
    import sys

    here = _os.path.dirname(_os.path.abspath(__file__))
    checkout = _os.path.dirname(here)
    if _os.path.isdir(_os.path.join(here, "derivations")) or not _os.path.isfile(
            _os.path.join(checkout, "pyproject.toml")):
        return  # an installed rdyn: the subpackages are inside it
    folders = {name: _os.path.join(checkout, folder) for name, folder in SUBPACKAGE_FOLDERS.items()}
    if not all(_os.path.isfile(_os.path.join(f, "__init__.py")) for f in folders.values()):
        return

    class CheckoutFinder(importlib.abc.MetaPathFinder):
        def find_spec(self, fullname, path=None, target=None):
            folder = folders.get(fullname)
            if folder is None:
                return None
            return importlib.util.spec_from_file_location(
                fullname, _os.path.join(folder, "__init__.py"), submodule_search_locations=[folder])

    # First in line: an editable install of another checkout (its finder in site-packages)
    # must not shadow the folders beside this rdyn/.
    if not any(type(f).__name__ == "CheckoutFinder" for f in sys.meta_path):
        sys.meta_path.insert(0, CheckoutFinder())


_find_checkout_subpackages()
from rdyn.reduced_dynamics._version import __version__  # noqa: E402

__all__ = ["teacher", "crosscheck", "ln", "sweep", "scaling", "verify", "figures", "claims", "asymptotics", "prove", "Result",
           "schema", "__version__"]


_FUNCTIONS = ("teacher", "crosscheck", "ln", "sweep", "scaling", "verify", "figures", "claims",
              "asymptotics", "prove")


def __getattr__(name: str):
    import importlib

    if name == "Result":
        return importlib.import_module("rdyn.result").Result
    if name in ("schema", "schemas"):  # JSON Schemas of the --json outputs (docs/schemas.md)
        module = importlib.import_module("rdyn.schemas")
        return module.schema if name == "schema" else module
    if name in _FUNCTIONS:
        return getattr(importlib.import_module(f"rdyn.api._{name}"), name)
    raise AttributeError(f"module 'rdyn' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(__all__))
