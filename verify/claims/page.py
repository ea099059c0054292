"""The look of the HTML pages of the claims ledger (the report and the erratum): their style
sheet, and displayed formulas as inline SVG rendered offline by matplotlib mathtext (prose
mathematics is :func:`rdyn.verification.claims.notation.html`)."""
from __future__ import annotations

import html
import io
import re
from functools import lru_cache

from rdyn.verification.claims import notation

CSS = """
body{font-family:Georgia,serif;max-width:1100px;margin:2em auto;color:#222;line-height:1.35}
h1{font-size:1.6em} h2{border-bottom:2px solid #444;margin-top:2em} h3{color:#444;margin-top:1.6em}
.entry{border:1px solid #ddd;border-left:6px solid #999;padding:.6em 1em;margin:1em 0;background:#fcfcfc}
.verdict{font-family:sans-serif;font-weight:bold;color:#fff;padding:1px 8px;border-radius:3px;font-size:.8em}
.stmt{font-style:italic;margin:.4em 0} .formula{margin:.3em 0 .3em 1em} .formula svg{vertical-align:middle;max-width:100%;height:auto}
table.counts{border-collapse:collapse} table.counts td,table.counts th{border:1px solid #bbb;padding:3px 10px;text-align:right}
ul.checks{font-size:.85em;font-family:sans-serif} code{font-size:.9em;background:#f1f1f1;padding:0 3px}
.small{font-size:.85em;color:#555} img.plot{margin:.4em 0 0 1em;border:1px solid #eee;max-width:calc(100% - 1em);height:auto}
.m{font-family:"Times New Roman",Times,serif;font-size:1.05em} .m sub,.m sup{font-size:.75em}
"""


@lru_cache(maxsize=None)
def mathtext_svg(tex: str, fontsize: int = 13) -> str | None:
    """Inline SVG of ``$tex$`` rendered by matplotlib mathtext (None if mathtext cannot parse it)."""
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    for plain, supported in ((r"\le ", r"\leq "), (r"\ge ", r"\geq "), (r"\lVert", r"\|"), (r"\rVert", r"\|")):
        tex = tex.replace(plain, supported)
    fig = Figure(figsize=(0.01, 0.01))
    fig.text(0, 0, f"${tex}$", fontsize=fontsize)
    buf = io.StringIO()
    try:
        with matplotlib.rc_context({"svg.hashsalt": "rdyn", "svg.fonttype": "path"}):
            fig.savefig(buf, format="svg", bbox_inches="tight", pad_inches=0.03, transparent=True,
                        metadata={"Date": None, "Creator": None, "Format": None, "Type": None})
    except Exception:  # noqa: BLE001 - mathtext parse errors come in several types
        return None
    svg = buf.getvalue()
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg[svg.index("<svg"):], flags=re.DOTALL)
    return svg


def formula_html(tex: str) -> str:
    """A displayed formula: mathtext's SVG (its LaTeX as the tooltip), or, where mathtext cannot
    parse it, :func:`rdyn.verification.claims.notation.tex_to_html`."""
    svg = mathtext_svg(tex)
    if svg is None:
        return f'<div class="formula"><span class="m">{notation.tex_to_html(tex)}</span></div>'
    return f'<div class="formula" title="{html.escape(tex)}">{svg}</div>'
