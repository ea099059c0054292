"""A test module loaded from its file by a sibling test file (test modules are not a package): the slow
checks split across files for the slow suite's two workers share one module's code this way."""
from __future__ import annotations

import importlib.util
from pathlib import Path


def load(here: str, filename: str, name: str):
    """The module in ``filename`` beside the file ``here`` (a test module's ``__file__``), as ``name``."""
    spec = importlib.util.spec_from_file_location(name, Path(here).with_name(filename))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
