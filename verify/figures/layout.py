"""Figures whose labels do not overlap.

Every figure of ``rdyn figures`` is laid out by matplotlib's constrained layout
(``plt.subplots(..., layout="constrained")``) and written by :func:`save_figure`, which draws
it, measures every label (titles, the figure title, axis labels, tick labels, legends) in
display pixels and warns with :class:`FigureLayoutWarning`, naming the texts, when two of them
overlap. The tests turn that warning into an error, so a figure whose axis labels run into the
next row's titles (Figure 3 did, with ``tight_layout``) fails the suite.
"""
from __future__ import annotations

import sys
import tempfile
import warnings
from pathlib import Path


class FigureLayoutWarning(UserWarning):
    """Two labels of a figure overlap."""


def _visible(text) -> bool:
    return text is not None and text.get_visible() and text.get_text().strip() != ""


def _tick_labels(axis):
    """The tick labels the axis draws (ticks inside the view interval; major and minor)."""
    for tick in axis._update_ticks():  # matplotlib has no public accessor for the drawn ticks
        for label in (tick.label1, tick.label2):
            if _visible(label):
                yield label


def labelled_boxes(fig) -> list[tuple[str, object]]:
    """(description, display-space Bbox) of every label of the drawn figure ``fig``."""
    renderer = fig.canvas.get_renderer()
    boxes = []

    def add(where: str, artist) -> None:
        boxes.append((where, artist.get_window_extent(renderer)))

    if _visible(getattr(fig, "_suptitle", None)):
        add(f"figure title {fig._suptitle.get_text()!r}", fig._suptitle)
    for k, ax in enumerate(fig.axes):
        name = f"axes {k}"
        for title in (ax.title, ax._left_title, ax._right_title):
            if _visible(title):
                add(f"{name} title {title.get_text()!r}", title)
        for axis, letter in ((ax.xaxis, "x"), (ax.yaxis, "y")):
            if _visible(axis.label):
                add(f"{name} {letter}-label {axis.label.get_text()!r}", axis.label)
            for label in _tick_labels(axis):
                add(f"{name} {letter}-tick {label.get_text()!r}", label)
        legend = ax.get_legend()
        if legend is not None and legend.get_visible():
            add(f"{name} legend", legend)
    return boxes


def label_overlaps(fig, tolerance_px: float = 0.5) -> list[tuple[str, str]]:
    """The pairs of labels of ``fig`` whose boxes overlap by more than ``tolerance_px`` pixels
    in both directions (draws the figure first)."""
    fig.canvas.draw()
    boxes = labelled_boxes(fig)
    overlaps = []
    for i, (a, box_a) in enumerate(boxes):
        for b, box_b in boxes[i + 1:]:
            dx = min(box_a.x1, box_b.x1) - max(box_a.x0, box_b.x0)
            dy = min(box_a.y1, box_b.y1) - max(box_a.y0, box_b.y0)
            if dx > tolerance_px and dy > tolerance_px:
                overlaps.append((a, b))
    return overlaps


def save_figure(fig, path: Path, dpi: int) -> Path:
    """Write ``fig`` to ``path`` whole or not at all (a temporary sibling renamed when
    complete); warn (FigureLayoutWarning) if any labels overlap. Returns the path written: if
    ``path`` cannot be written (a full disk), the figure goes to a new folder
    ``rdyn-rescued-figures-*`` in the temporary folder, with one warning line on stderr (no
    partial file is left at ``path``, and an earlier file there is untouched)."""
    fig.set_dpi(dpi)  # measure at the resolution that is written
    overlaps = label_overlaps(fig)
    if overlaps:
        shown = "; ".join(f"{a} / {b}" for a, b in overlaps[:5])
        warnings.warn(f"{Path(path).name}: {len(overlaps)} overlapping labels: {shown}",
                      FigureLayoutWarning, stacklevel=2)

    from rdyn.reduced_dynamics.runs.atomic_files import write_atomic

    try:
        write_atomic(path, lambda tmp: fig.savefig(tmp, dpi=dpi))
        return Path(path)
    except OSError as exc:
        reason = exc.strerror or str(exc)
    rescue = Path(tempfile.mkdtemp(prefix="rdyn-rescued-figures-")) / Path(path).name
    write_atomic(rescue, lambda tmp: fig.savefig(tmp, dpi=dpi))   # fails too: the error stands
    print(f"rdyn figures: warning: cannot write {path} ({reason}); saved to {rescue} instead",
          file=sys.stderr)
    return rescue


def output_folder(out: Path) -> Path:
    """The folder the figures are written to: ``out``, created with its parents now (after the
    work; ``rdyn figures`` probed it before any work). If it cannot be created any more (it
    was removed together with a parent that is now a file, a read-only mount, ...), a new
    folder ``rdyn-rescued-figures-*`` in the temporary folder, with a warning on stderr saying
    where: figures that took minutes to train are never lost to a late write failure."""
    out = Path(out)
    try:
        out.mkdir(parents=True, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=out, prefix=".rdyn-probe-"):
            pass
        return out
    except OSError as exc:
        reason = exc.strerror or str(exc)
    rescue = Path(tempfile.mkdtemp(prefix="rdyn-rescued-figures-"))
    print(f"rdyn figures: warning: cannot write --out {out} ({reason}); the figures are "
          f"saved to {rescue} instead", file=sys.stderr)
    return rescue
