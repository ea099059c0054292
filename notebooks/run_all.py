"""Regenerate the committed notebooks: execute each one in place, with its outputs.

    python notebooks/run_all.py                 # every notebook in notebooks/, documented sizes
    python notebooks/run_all.py tour scaling    # only these (names with or without .ipynb)
    python notebooks/run_all.py --quick --out /tmp/nb   # test sizes (RDYN_QUICK=1), written elsewhere

Each notebook runs in a fresh ``python3`` kernel, one after another (2-core machines), with the
repository root on ``PYTHONPATH`` and a scratch working directory, so nothing but the notebook
file itself is written. Seeds are fixed inside the notebooks. Volatile metadata (execution
timestamps, kernel version details) is stripped and cell ids are made deterministic, so that
regenerating an unchanged notebook gives an empty or small diff (figures are re-encoded PNGs).

``--quick`` sets ``RDYN_QUICK=1`` in the kernel (the notebooks then use their small test
sizes); it refuses to overwrite the committed notebooks unless ``--out`` is given.
"""
from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent


def notebook_paths(names=()) -> list[Path]:
    """The notebooks of notebooks/ (sorted), or the named subset."""
    if not names:
        return sorted(HERE.glob("*.ipynb"))
    paths = []
    for name in names:
        path = HERE / (name if name.endswith(".ipynb") else name + ".ipynb")
        if not path.is_file():
            raise ValueError(f"no notebook {path.name} in {HERE}")
        paths.append(path)
    return paths


def strip_volatile(nb) -> None:
    """Remove what changes from run to run without the content changing."""
    nb.metadata.pop("widgets", None)
    nb.metadata["language_info"] = {"name": "python"}
    nb.metadata["kernelspec"] = {"display_name": "Python 3", "language": "python", "name": "python3"}
    for index, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{index:02d}"
        for key in ("execution", "ExecuteTime", "collapsed", "scrolled"):
            cell.metadata.pop(key, None)
        if cell.cell_type == "code":
            cell.outputs = merge_streams(cell.outputs)


def merge_streams(outputs: list) -> list:
    """Join consecutive stdout (stderr) chunks: how a print is split into messages depends on
    timing, not on the content."""
    merged = []
    for output in outputs:
        if (output.get("output_type") == "stream" and merged
                and merged[-1].get("output_type") == "stream" and merged[-1]["name"] == output["name"]):
            merged[-1]["text"] += output["text"]
        else:
            merged.append(output)
    return merged


def execute(nb, workdir: str, quick: bool, timeout: int = 1800):
    """Execute ``nb`` (a NotebookNode, modified in place) in a fresh kernel in ``workdir``."""
    from nbclient import NotebookClient

    env = {"PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])),
           "PYTHONHASHSEED": "0", "RDYN_QUICK": "1" if quick else "0"}
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)  # the kernel inherits the environment of this process
    try:
        client = NotebookClient(nb, timeout=timeout, kernel_name="python3", record_timing=False,
                                resources={"metadata": {"path": workdir}})
        client.execute()
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    return nb


def main(argv=None) -> int:
    import nbformat

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*", help="notebooks to run (default: all in notebooks/)")
    parser.add_argument("--quick", action="store_true", help="test sizes (RDYN_QUICK=1)")
    parser.add_argument("--out", type=Path, help="write the executed notebooks here instead")
    args = parser.parse_args(argv)
    if args.quick and args.out is None:
        parser.error("--quick needs --out (the committed notebooks keep the documented sizes)")
    try:
        paths = notebook_paths(args.names)
    except ValueError as exc:
        parser.error(str(exc))
    if args.out is not None:
        args.out.mkdir(parents=True, exist_ok=True)
    total = time.perf_counter()
    for path in paths:
        nb = nbformat.read(path, as_version=4)
        start = time.perf_counter()
        with tempfile.TemporaryDirectory(prefix="rdyn-nb-") as workdir:
            execute(nb, workdir, args.quick)
        strip_volatile(nb)
        target = path if args.out is None else args.out / path.name
        nbformat.write(nb, target)
        print(f"{path.name:28s} {time.perf_counter() - start:7.1f} s  -> {target}", flush=True)
    print(f"{'total':28s} {time.perf_counter() - total:7.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
