"""The erratum (``rdyn claims --errata FILE.tex|FILE.md|FILE.html``; issue 19).

Per paper, grouped by root cause (:data:`rdyn.verification.claims.errata.ROOT_CAUSES`): every
discrepancy with the printed statement and the corrected one side by side (typeset from the
``tex`` fields), its kind, the deciding checks with their numbers, and a log-log plot wherever a
rate is involved (the measured quantity along each validation trajectory, solid, and the
derived asymptote, dashed; for entries without a derived correction, the measured points of
their checks). :func:`errata_data` is the same content as data (``rdyn.claims(...).detail``).

* ``.tex``: a standalone LaTeX document (article, amsmath, graphicx); plots are written as PNG
  files next to it (``<stem>_fig<N>.png``);
* ``.md``: Markdown with ``$$...$$`` formulas; plots as PNG files next to it;
* ``.html``: self-contained (formulas as inline SVG rendered offline by matplotlib mathtext,
  plots as inline PNG).
"""
from __future__ import annotations

import base64
import html
import io
import os
from typing import Any

from rdyn.verification.claims.ledger import Ledger
from rdyn.verification.claims.errata import ROOT_CAUSES

PAPERS = {"A": "Model A (seed 000): Zhang, Zhao, Gu, Cao",
          "B": "Model B (seed 003): Wu, Zhang, Cao"}


def errata_data(ledger: Ledger) -> dict[str, list[dict[str, Any]]]:
    """{paper: [{"root_cause", "description", "entries": [...]}, ...]} over the discrepancies."""
    out: dict[str, list[dict[str, Any]]] = {}
    for c in ledger.claims:
        if c.verdict != "discrepancy":
            continue
        groups = out.setdefault(c.entry.paper, [])
        group = next((g for g in groups if g["root_cause"] == c.root_cause), None)
        if group is None:
            group = {"root_cause": c.root_cause, "description": ROOT_CAUSES.get(c.root_cause, ""), "entries": []}
            groups.append(group)
        fix = c.correction
        deciding = c.correction_records
        group["entries"].append({
            "label": c.entry.label, "kind": c.kind, "printed": c.entry.statement, "printed_tex": c.entry.tex,
            "reason": c.reason, "correction": fix,
            "deciding": list({r.id: {"id": r.id, "status": r.status, "claim": r.claim} for r in [*deciding, *(
                r for r in c.records if c.evidence["checks"].get(r.id, {}).get("role") == "decides")]}.values()),
            # a plot wherever a rate is involved: asymptotes (T -> oo) and the Theta(T^-1/2) two-sided bounds
            "rate": c.entry.rate or bool(fix and (fix["limit"] == "T->oo" or "upper_expression" in fix)),
        })
    return out


def _plot_png(ledger: Ledger, paper: str, label: str) -> bytes | None:
    """Log-log PNG for one entry: measured (solid) and derived asymptote (dashed) along each
    validation trajectory, from the correction's first deciding check with ``per_config`` rows;
    else the ledger report's plot of the entry's measured points."""
    result = next(c for c in ledger.claims if (c.entry.paper, c.entry.label) == (paper, label))
    fix = result.correction
    rows = []
    candidates = [[row for row in r.detail["per_config"] if isinstance(row, dict) and "measured_values" in row]
                  for r in result.correction_records if isinstance(r.detail.get("per_config"), list)]
    candidates = [c for c in candidates if c]
    # a two-sided bound is drawn with its bounds (dotted); else the first derived asymptote
    bounded = [c for c in candidates if "bound_lower_values" in c[0]]
    if bounded or candidates:
        rows = (bounded or candidates)[0]
    if not rows:
        from rdyn.verification.claims.report import rate_plot_png

        png = rate_plot_png(result)
        return None if png is None else base64.b64decode(png)
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.2, 3.0), dpi=110, layout="constrained")
    ax = fig.add_subplot(111)
    for row in rows[:6]:
        T = [t - row["T_star"] for t in row["T"]]
        line, = ax.loglog(T, row["measured_values"], "-", lw=1.2, label=row["config"])
        if "derived_values" in row:
            ax.loglog(T, row["derived_values"], "--", lw=0.9, color=line.get_color())
        for key in ("bound_lower_values", "bound_upper_values"):  # corrected two-sided bounds
            if key in row:
                ax.loglog(T, row[key], ":", lw=0.9, color=line.get_color())
    ax.set_xlabel("T - T*", fontsize=8)
    ax.set_ylabel(rows[0].get("measured_quantity", fix["quantity"] if fix else ""), fontsize=8)
    ax.tick_params(labelsize=7)
    ax.legend(fontsize=6, frameon=False, loc="center left", bbox_to_anchor=(1.0, 0.5))  # outside: full labels
    bounds = any("bound_lower_values" in row for row in rows)
    ax.set_title("solid: collapsed map; " + ("dotted: corrected bounds" if bounds else "dashed: derived asymptote"),
                 fontsize=8)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    return buf.getvalue()


def expression_items(fix: dict) -> list[tuple[str, str]]:
    """(label, expression) per activation; a two-sided bound lists its lower then its upper side."""
    out = []
    two_sided = "upper_expression" in fix
    for key, side in (("expression", "lower side" if two_sided else ""), ("upper_expression", "upper side")):
        value = fix.get(key)
        if isinstance(value, dict):
            out += [(f"{a} ({side})" if side else a, x) for a, x in value.items()]
        elif isinstance(value, str) and two_sided:
            out.append((side, value))
    return out


# ------------------------------------------------------------------------------ LaTeX
_TEX_ESCAPES = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def tex_escape(text: str) -> str:
    return "".join(_TEX_ESCAPES.get(ch, ch) for ch in text)


def latex(ledger: Ledger, figure_path=None) -> str:
    """The standalone document; ``figure_path(n, png_bytes) -> file name`` stores a plot."""
    lines = [r"\documentclass[11pt]{article}", r"\usepackage[margin=2cm]{geometry}",
             r"\usepackage{amsmath,amssymb,graphicx}", r"\title{Erratum (rdyn claims)}", r"\date{}",
             r"\begin{document}", r"\maketitle",
             tex_escape("Every discrepancy of the claims ledger, grouped by root cause, with the printed and the "
                        "corrected statement. Corrections are derived (sympy) and checked against the collapsed "
                        "map at sizes, step sizes and activations other than those used to derive them.")]
    n = 0
    for paper, groups in errata_data(ledger).items():
        lines.append(r"\section*{" + tex_escape(PAPERS[paper]) + "}")
        for g in groups:
            lines.append(r"\subsection*{" + tex_escape(f"Root cause: {g['root_cause']}") + "}")
            lines.append(tex_escape(g["description"]))
            for e in g["entries"]:
                lines.append(r"\paragraph{" + tex_escape(f"{e['label']} ({e['kind']})") + "}")
                lines.append(r"\textbf{Printed.} " + tex_escape(e["printed"]))
                if e["printed_tex"]:
                    lines += [r"\[", e["printed_tex"], r"\]"]
                fix = e["correction"]
                if fix is None:
                    lines.append(r"\textbf{Corrected.} " + tex_escape("no derived correction yet; ") +
                                 tex_escape(e["reason"] or ""))
                else:
                    lines.append(r"\textbf{Corrected} " + tex_escape(f"({fix['relation']}"
                                 + (f", {fix['limit']}" if fix["limit"] else "") + f"; check verdict {fix['verdict']}, "
                                 f"strength {fix.get('strength')}). ")
                                 + tex_escape(fix["statement"]))
                    if fix["tex"]:
                        lines += [r"\[", fix["tex"], r"\]"]
                    lines.append(tex_escape(f"Valid: {fix['valid']}."))
                    if expression_items(fix):
                        lines.append(r"\begin{itemize}")
                        lines += [r"\item " + tex_escape(f"{a}: {x}") for a, x in expression_items(fix)]
                        lines.append(r"\end{itemize}")
                lines.append(r"\begin{itemize}")
                lines += [r"\item " + tex_escape(f"{d['id']} [{d['status']}]: {d['claim']}") for d in e["deciding"]]
                lines.append(r"\end{itemize}")
                if e["rate"] and figure_path is not None:
                    png = _plot_png(ledger, paper, e["label"])
                    if png is not None:
                        n += 1
                        name = figure_path(n, png)
                        lines += [r"\begin{center}", r"\includegraphics[width=0.6\textwidth]{" + name + "}",
                                  r"\end{center}"]
    lines.append(r"\end{document}")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------ Markdown / HTML
def markdown(ledger: Ledger, figure_path=None) -> str:
    out = ["# Erratum (rdyn claims)", ""]
    n = 0
    for paper, groups in errata_data(ledger).items():
        out += [f"## {PAPERS[paper]}", ""]
        for g in groups:
            out += [f"### Root cause `{g['root_cause']}`", "", g["description"], ""]
            for e in g["entries"]:
                fix = e["correction"]
                out += [f"#### {e['label']} ({e['kind']})", "", "| printed | corrected |", "|---|---|",
                        f"| {e['printed']} | " + (fix["statement"] if fix else "no derived correction yet") + " |", ""]
                if e["printed_tex"]:
                    out += ["Printed: $$" + e["printed_tex"] + "$$", ""]
                if fix and fix["tex"]:
                    out += [f"Corrected ({fix['relation']}, check verdict **{fix['verdict']}**, strength "
                            f"**{fix.get('strength')}**): $$" + fix["tex"] + "$$", ""]
                if fix and expression_items(fix):
                    out += [f"- {a}: `{x}`" for a, x in expression_items(fix)] + [""]
                out += [f"- `{d['id']}` [{d['status']}]: {d['claim']}" for d in e["deciding"]] + [""]
                if e["rate"] and figure_path is not None:
                    png = _plot_png(ledger, paper, e["label"])
                    if png is not None:
                        n += 1
                        out += [f"![{e['label']}]({figure_path(n, png)})", ""]
    return "\n".join(out)


def html_page(ledger: Ledger) -> str:
    from rdyn.verification.claims.report import CSS, _formula_html

    out = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>Erratum (rdyn claims)</title>",
           f"<style>{CSS} table.side td{{vertical-align:top;width:50%;padding:4px 8px;border:1px solid #ddd}}</style>",
           "</head><body><h1>Erratum (rdyn claims)</h1>"]
    for paper, groups in errata_data(ledger).items():
        out.append(f"<h2>{html.escape(PAPERS[paper])}</h2>")
        for g in groups:
            out.append(f"<h3>Root cause <code>{html.escape(g['root_cause'])}</code></h3>"
                       f"<p class='small'>{html.escape(g['description'])}</p>")
            for e in g["entries"]:
                fix = e["correction"]
                left = f"<div class='stmt'>{html.escape(e['printed'])}</div>" + (
                    _formula_html(e["printed_tex"]) if e["printed_tex"] else "")
                right = ("<i>no derived correction yet</i>" if fix is None else
                         f"<div class='stmt'>{html.escape(fix['statement'])}</div>"
                         + (_formula_html(fix["tex"]) if fix["tex"] else "")
                         + f"<div class='small'>{html.escape(fix['relation'])}"
                         + (f", {html.escape(fix['limit'])}" if fix["limit"] else "")
                         + f"; valid: {html.escape(fix['valid'])}; check verdict <b>{fix['verdict']}</b>, "
                           f"strength <b>{html.escape(str(fix.get('strength')))}</b></div>")
                out.append(f"<div class='entry'><b>{html.escape(e['label'])}</b> "
                           f"<span class='small'>({html.escape(e['kind'])})</span>"
                           f"<table class='side'><tr><th>printed</th><th>corrected</th></tr>"
                           f"<tr><td>{left}</td><td>{right}</td></tr></table>")
                if fix and expression_items(fix):
                    out.append("<ul class='checks'>" + "".join(
                        f"<li>{html.escape(a)}: <code>{html.escape(x)}</code></li>" for a, x in expression_items(fix))
                        + "</ul>")
                out.append("<ul class='checks'>" + "".join(
                    f"<li><code>{html.escape(d['id'])}</code> [{d['status']}]: {html.escape(d['claim'])}</li>"
                    for d in e["deciding"]) + "</ul>")
                if e["rate"]:
                    png = _plot_png(ledger, paper, e["label"])
                    if png is not None:
                        out.append("<img class='plot' alt='log-log plot' src='data:image/png;base64,"
                                   + base64.b64encode(png).decode("ascii") + "'>")
                out.append("</div>")
    out.append("</body></html>")
    return "\n".join(out)


def write(ledger: Ledger, path: str) -> list[str]:
    """Write the erratum; returns the files written (the document first, then its plots)."""
    from rdyn.reduced_dynamics.runs.atomic_files import AtomicFiles

    written = [path]
    stem, _ = os.path.splitext(path)
    # the plots and the document are one group: all of them, complete, or none (a full disk
    # leaves no truncated FILE_figN.png and every earlier file as it was)
    with AtomicFiles() as files:

        def figure(n: int, png: bytes) -> str:
            name = f"{stem}_fig{n}.png"
            with open(files.path(name), "wb") as fh:
                fh.write(png)
            written.append(name)
            return os.path.basename(name)

        lower = path.lower()
        if lower.endswith((".html", ".htm")):
            text = html_page(ledger)
        elif lower.endswith(".tex"):
            text = latex(ledger, figure)
        else:
            text = markdown(ledger, figure)
        with open(files.path(path), "w", encoding="utf-8") as fh:
            fh.write(text)
    return written
