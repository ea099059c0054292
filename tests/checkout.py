"""Paths of the source checkout, for test modules at any depth of tests/ (the folders mirror the
package tree: tests/reduced_dynamics/model_b/test_gaussian.py, ...), so that no test counts
``.parent`` steps from its own file."""
from __future__ import annotations

from pathlib import Path

TESTS = Path(__file__).resolve().parent   # tests/
ROOT = TESTS.parent                       # the checkout: pyproject.toml, README.md, docs/, rdyn/, ...
ROOT_DIR = str(ROOT)                      # the same as a str (for os.path code)
