"""Readable claims ledger (``rdyn claims --report FILE.md|FILE.html``).

Grouped by paper and section: each entry shows its verdict, the statement as printed (and its
LaTeX), the derived form when a deciding check carries one (``detail["derived"]``, parsed by
sympy and typeset with sympy's LaTeX printer), the measured numbers of every check, and a small
log-log plot where a rate is claimed (points from the checks' details; dashed: the claimed
slope through the last point). HTML is self-contained: formulas are rendered offline with
matplotlib mathtext to inline SVG (the LaTeX source is kept in a ``title`` attribute; formulas
mathtext cannot parse are shown as code), plots are inline base64 PNG; nothing is loaded from
the network.
"""
from __future__ import annotations

import base64
import html
import io
import math
import re
from functools import lru_cache
from typing import Any

from rdyn.verification.claims.ledger import VERDICTS, ClaimResult, Ledger

PAPERS = {"A": "Model A: Zhang, Zhao, Gu, Cao, Transformers Trained via Gradient Descent Can Provably "
               "Learn a Class of Teacher Models (seed 000)",
          "B": "Model B: Wu, Zhang, Cao, Looped Transformers with Layer Normalization Provably Learn "
               "the Power Method (seed 003)"}
COLOURS = {"pass": "#1b7f3a", "discrepancy": "#b35c00", "inconclusive": "#7a5aa8", "fail": "#c0122c", "info": "#2461a8",
           "not_checkable": "#666666"}
MAX_TYPESET = 300  # characters of a sympy string worth typesetting
NUMBER_KEYS = ("worst_ratio", "where", "exponent", "exponent_ci95", "local_exponent", "claimed_exponent",
               "measured_exponent", "measured_slope", "constant", "constant_ci95", "max_z", "z",
               "derived_over_printed", "max_ratio_to_bound", "matrix_check_rel_error", "L_inf",
               "worst_ratio_late", "holds_from_t", "upsilon3", "C1", "C2", "tolerance")


# ------------------------------------------------------------------------------ formulas
@lru_cache(maxsize=None)
def derived_latex(text: str) -> str | None:
    """sympy's LaTeX of a derived form given as a sympy string (None if it does not parse or is
    too long to typeset usefully)."""
    import sympy as sp

    if len(text) > MAX_TYPESET:
        return None
    from rdyn.derivations.formula import parse, symbols_in

    try:
        expr = parse(text, symbols_in(text, as_symbols=("E",)), what="derived form", symbolic_exponents=True,
                     max_length=MAX_TYPESET, max_nodes=4 * MAX_TYPESET)
    except ValueError:  # any parse failure: show the text as code instead
        return None
    return sp.latex(expr)


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


# ------------------------------------------------------------------------------ plots
def _series(detail: dict) -> list[tuple[str, list, list, float | None]]:
    """(label, x, y, claimed exponent) found in a check's detail."""
    out = []
    if isinstance(detail.get("x"), list) and isinstance(detail.get("y"), list):
        out.append(("", detail["x"], detail["y"], detail.get("claimed_exponent")))
    if isinstance(detail.get("per_config"), dict):
        for name, sub in detail["per_config"].items():
            if isinstance(sub, dict) and isinstance(sub.get("x"), list) and isinstance(sub.get("y"), list):
                out.append((name, sub["x"], sub["y"], sub.get("claimed_exponent")))
    if isinstance(detail.get("factor_values"), list) and isinstance(detail.get("measured_values"), list):
        out.append((f"{detail.get('measured_quantity')} vs {detail.get('factor')}", detail["factor_values"],
                    detail["measured_values"], detail.get("claimed_exponent")))
    for key in ("eps", "t"):
        ykey = {"eps": "T_star", "t": "ratio_sum_minus_1"}[key]
        if isinstance(detail.get(key), list) and isinstance(detail.get(ykey), list):
            out.append((f"{ykey} vs {key}", detail[key], detail[ykey], None))
    return [(n, x, y, c) for n, x, y, c in out
            if len(x) == len(y) and len(x) >= 2 and all(isinstance(v, (int, float)) and v > 0 for v in list(x) + list(y))]


def rate_plot_png(result: ClaimResult) -> str | None:
    """Base64 PNG: log-log plot of the measured points of the entry's checks (None if none)."""
    series = []
    for check in result.records:
        for name, x, y, claimed in _series(check.detail):
            series.append((f"{check.id} {name}".strip(), x, y, claimed))
    if not series:
        return None
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    from matplotlib.ticker import NullFormatter

    fig = Figure(figsize=(4.4, 2.7), dpi=100)
    ax = fig.add_subplot(111)
    for k, (name, x, y, claimed) in enumerate(series[:6]):
        # each series normalised to its last point, so lines of different quantities share axes
        xn, yn = [v / x[-1] for v in x], [v / y[-1] for v in y]
        line, = ax.loglog(xn, yn, "o-", ms=2.5, lw=1, label=name[:52])
        if claimed is not None and math.isfinite(claimed):
            xs = [min(xn), 1.0]
            ax.loglog(xs, [v ** claimed for v in xs], "--", color=line.get_color(), lw=0.8)
    ax.legend(fontsize=5.5, loc="best" if sum(len(s[1]) for s in series) < 60 else "upper right", frameon=False)
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.tick_params(labelsize=7)
    ax.set_xlabel("x / x_last", fontsize=7)
    ax.set_ylabel("y / y_last", fontsize=7)
    ax.set_title("measured, normalised to the last point (dashed: claimed exponent)", fontsize=7)
    fig.subplots_adjust(left=0.14, right=0.97, bottom=0.15, top=0.9)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    return base64.b64encode(buf.getvalue()).decode("ascii")


# ------------------------------------------------------------------------------ numbers
def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list):
        return "[" + ", ".join(_fmt(v) for v in value[:8]) + (", ..." if len(value) > 8 else "") + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k}: {_fmt(v)}" for k, v in list(value.items())[:8]) + "}"
    return str(value)


def _numbers(check) -> list[tuple[str, str]]:
    return [(k, _fmt(check.detail[k])) for k in NUMBER_KEYS if k in check.detail]


def _forms(result: ClaimResult) -> list[tuple[str, str, str | None]]:
    """(check id, which, text) of the printed/derived forms carried by the deciding checks: a
    derived form always, a printed one when it is a sympy expression (plain-text printed
    inequalities repeat the entry's own printed formula)."""
    out = []
    for c in result.records:
        if result.evidence["checks"].get(c.id, {}).get("role") != "decides":
            continue
        for which in ("printed", "derived"):
            text = c.detail.get(which)
            if isinstance(text, str) and (which == "derived" or derived_latex(text) is not None):
                out.append((c.id, which, text))
    return out


def counts_table_md(ledger: Ledger) -> str:
    counts = ledger.counts()
    rows = ["| paper | " + " | ".join(VERDICTS) + " | total |", "|---|" + "---:|" * (len(VERDICTS) + 1)]
    for paper, row in sorted(counts.items()):
        rows.append(f"| {paper} | " + " | ".join(str(row[v]) for v in VERDICTS) + f" | {sum(row.values())} |")
    return "\n".join(rows)


def discrepancy_lines(ledger: Ledger) -> list[str]:
    return [f"{c.entry.paper} {c.entry.label} [{c.kind}; root cause {c.root_cause}]: {c.reason}"
            for c in ledger.claims if c.verdict == "discrepancy"]


def root_cause_lines(ledger: Ledger) -> list[str]:
    """One line per paper and root cause: how many entries it explains and how many are corrected."""
    out = []
    for paper, causes in sorted(ledger.root_causes().items()):
        s = ledger.summary()[paper]
        out.append(f"{paper}: {s['discrepancies']} discrepancies from {s['root_causes']} root causes "
                   f"({s['corrected']} with a passing correction)")
        for cause, row in causes.items():
            out.append(f"{paper} {cause} ({', '.join(row['kinds'])}): {len(row['entries'])} entries "
                       f"({'; '.join(row['entries'])}), {row['corrected']} corrected")
    return out


def _grouped(ledger: Ledger):
    groups: dict[tuple[str, str], list[ClaimResult]] = {}
    for c in ledger.claims:
        groups.setdefault((c.entry.paper, c.entry.section), []).append(c)
    return groups


def _header(ledger: Ledger) -> str:
    mode = "quick sizes" if ledger.quick else "full sizes"
    return f"checks run once in {ledger.seconds:.0f} s ({mode})"


# ------------------------------------------------------------------------------ Markdown
def markdown(ledger: Ledger) -> str:
    out = ["# rdyn claims ledger", "", _header(ledger), "", counts_table_md(ledger), "",
           "Root causes:", ""] + [f"- {line}" for line in root_cause_lines(ledger)] + [
           "", "Discrepancies:", ""] + [f"- {line}" for line in discrepancy_lines(ledger)] + [""]
    paper = None
    for (p, section), results in _grouped(ledger).items():
        if p != paper:
            out += [f"## {PAPERS[p]}", ""]
            paper = p
        out += [f"### {section}", ""]
        for r in results:
            e = r.entry
            out += [f"#### {e.label} — **{r.verdict}** (strength: {r.strength()[0] or 'none'})", "",
                    f"> {e.statement}", ""]
            if e.tex:
                out += ["Printed:", "", "$$" + e.tex + "$$", ""]
            for cid, which, text in _forms(r):
                tex = derived_latex(text)
                out += [f"- {which} ({cid}): `{text}`" + (f" → $${tex}$$" if tex else "")]
            if r.reason:
                out += ["", f"Reason: {r.reason}"]
            out += [""]
            for c in r.records:
                role = r.evidence["checks"].get(c.id, {}).get("role", "")
                nums = "; ".join(f"{k} = {v}" for k, v in _numbers(c))
                out += [f"- `{c.id}` [{c.status}, {role}]: {c.claim}" + (f" — {nums}" if nums else "")]
            if e.note:
                out += ["", f"Note: {e.note}"]
            if e.rate:
                png = rate_plot_png(r)
                if png:
                    out += ["", f"![measured points](data:image/png;base64,{png})"]
            out += [""]
    return "\n".join(out)


# ------------------------------------------------------------------------------ HTML
CSS = """
body{font-family:Georgia,serif;max-width:1100px;margin:2em auto;color:#222;line-height:1.35}
h1{font-size:1.6em} h2{border-bottom:2px solid #444;margin-top:2em} h3{color:#444;margin-top:1.6em}
.entry{border:1px solid #ddd;border-left:6px solid #999;padding:.6em 1em;margin:1em 0;background:#fcfcfc}
.verdict{font-family:sans-serif;font-weight:bold;color:#fff;padding:1px 8px;border-radius:3px;font-size:.8em}
.stmt{font-style:italic;margin:.4em 0} .formula{margin:.3em 0 .3em 1em} .formula svg{vertical-align:middle}
table.counts{border-collapse:collapse} table.counts td,table.counts th{border:1px solid #bbb;padding:3px 10px;text-align:right}
ul.checks{font-size:.85em;font-family:sans-serif} code{font-size:.9em;background:#f1f1f1;padding:0 3px}
.small{font-size:.85em;color:#555} img.plot{margin:.4em 0 0 1em;border:1px solid #eee}
"""


def _formula_html(tex: str) -> str:
    svg = mathtext_svg(tex)
    if svg is None:
        return f'<div class="formula"><code>{html.escape(tex)}</code></div>'
    return f'<div class="formula" title="{html.escape(tex)}">{svg}</div>'


def html_report(ledger: Ledger) -> str:
    counts = ledger.counts()
    out = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>rdyn claims ledger</title>",
           f"<style>{CSS}</style></head><body>", "<h1>rdyn claims ledger</h1>",
           f"<p class='small'>{html.escape(_header(ledger))}. Verdicts: pass, discrepancy (printed statement "
           "contradicted by derivation or measurement), inconclusive (a fitted rate the decision rule cannot "
           "settle), fail (rdyn disagrees with itself), info (measured, nothing printed), not_checkable "
           "(with a reason).</p>",
           "<table class='counts'><tr><th>paper</th>" + "".join(f"<th>{v}</th>" for v in VERDICTS) + "<th>total</th></tr>"]
    for paper, row in sorted(counts.items()):
        out.append(f"<tr><td>{paper}</td>" + "".join(f"<td>{row[v]}</td>" for v in VERDICTS)
                   + f"<td>{sum(row.values())}</td></tr>")
    out.append("</table>")
    out.append("<p class='small'><b>Root causes</b></p><ul class='checks'>"
               + "".join(f"<li>{html.escape(line)}</li>" for line in root_cause_lines(ledger)) + "</ul>")
    paper = None
    for (p, section), results in _grouped(ledger).items():
        if p != paper:
            out.append(f"<h2>{html.escape(PAPERS[p])}</h2>")
            paper = p
        out.append(f"<h3>{html.escape(section)}</h3>")
        for r in results:
            e = r.entry
            colour = COLOURS[r.verdict]
            out.append(f"<div class='entry' style='border-left-color:{colour}'>")
            out.append(f"<b>{html.escape(e.label)}</b> <span class='verdict' style='background:{colour}'>"
                       f"{r.verdict}</span> <span class='small'>strength: {r.strength()[0] or 'none'}</span>")
            out.append(f"<div class='stmt'>{html.escape(e.statement)}</div>")
            if e.tex:
                out.append("<div class='small'>printed:</div>" + _formula_html(e.tex))
            for cid, which, text in _forms(r):
                tex = derived_latex(text)
                body = _formula_html(tex) if tex else f"<div class='formula'><code>{html.escape(text)}</code></div>"
                out.append(f"<div class='small'>{which} ({html.escape(cid)}):</div>{body}")
            if r.reason:
                out.append(f"<div class='small'><b>reason:</b> {html.escape(r.reason)}</div>")
            out.append("<ul class='checks'>")
            for c in r.records:
                role = r.evidence["checks"].get(c.id, {}).get("role", "")
                nums = "; ".join(f"{k} = {v}" for k, v in _numbers(c))
                out.append(f"<li><code>{html.escape(c.id)}</code> <span style='color:{COLOURS[c.status]}'>"
                           f"[{c.status}]</span> <i>{role}</i>: {html.escape(c.claim)}"
                           + (f"<br><span class='small'>{html.escape(nums)}</span>" if nums else "") + "</li>")
            out.append("</ul>")
            if e.note:
                out.append(f"<div class='small'>note: {html.escape(e.note)}</div>")
            if e.rate:
                png = rate_plot_png(r)
                if png:
                    out.append(f"<img class='plot' alt='measured points' src='data:image/png;base64,{png}'>")
            out.append("</div>")
    out.append("</body></html>")
    return "\n".join(out)


def write(ledger: Ledger, path: str) -> None:
    text = html_report(ledger) if path.lower().endswith((".html", ".htm")) else markdown(ledger)
    from rdyn.reduced_dynamics.runs.atomic_files import write_text_atomic

    write_text_atomic(path, text)   # whole or not at all
