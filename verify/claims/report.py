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

from rdyn.verification.claims import notation
from rdyn.verification.claims.errata_writer import KIND_WORDS, cause_title
from rdyn.verification.claims.page import CSS, formula_html as _formula_html, mathtext_svg  # noqa: F401 (re-exported)
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

    if "_" in text:   # identifiers of the code: their notation (rdyn.verification.claims.notation)
        return notation.sympy_tex(text)
    try:
        expr = parse(text, symbols_in(text, as_symbols=("E",)), what="derived form", symbolic_exponents=True,
                     max_length=MAX_TYPESET, max_nodes=4 * MAX_TYPESET)
    except ValueError:  # any parse failure: shown as prose instead
        return None
    return sp.latex(expr)


# ------------------------------------------------------------------------------ plots
#: (check id pattern, x variable, y quantity) of the checks whose detail holds bare ``x``, ``y`` lists
PLOT_AXES = (("A.claim.step3.S_exponent.*", r"$T - T^*$", r"$\|S^{(T)} - S^*\|_F$"),
             ("A.claim.step3.WV_exponent.*", r"$T - T^*$", r"$\|W_V^{(T)} - V^*\|_F$"),
             ("A.claim.step3.loss_exponent.*", r"$T - T^*$", r"$L(T) - L_{\mathrm{opt}}$"),
             ("A.claim.Tstar_D_exponent.*", r"$D$", r"$T^*$"),
             ("A.claim.sec4.ood_slope*", r"$T - T^*$", r"$L_{OOD} - L^*_{OOD}$"),
             ("B.cover.thm43_Tstar_dn", r"$\epsilon$", r"$T^*(\epsilon)$"),
             ("A.claim.thm32.ood", r"$T$", r"$L_{OOD} - L^*_{OOD}$"))


def _axes_of(check_id: str) -> tuple[str, str]:
    from rdyn.verification.checks.registry import id_matches

    for pattern, x, y in PLOT_AXES:
        if id_matches(check_id, pattern):
            return x, y
    return "the check's variable", "the measured quantity"


def _series(detail: dict, check_id: str = "") -> list[tuple[str, list, list, float | None, str, str]]:
    """(legend, x, y, claimed exponent, x variable, y quantity) found in a check's detail; legends and
    axis names in words and symbols (matplotlib mathtext)."""
    out = []
    x_name, y_name = _axes_of(check_id)
    if isinstance(detail.get("x"), list) and isinstance(detail.get("y"), list):
        legend = notation.config_label(detail["config"]) if isinstance(detail.get("config"), str) else y_name
        out.append((legend, detail["x"], detail["y"], detail.get("claimed_exponent"), x_name, y_name))
    if isinstance(detail.get("per_config"), dict):
        for name, sub in detail["per_config"].items():
            if isinstance(sub, dict) and isinstance(sub.get("x"), list) and isinstance(sub.get("y"), list):
                out.append((notation.config_label(name), sub["x"], sub["y"], sub.get("claimed_exponent"),
                            x_name, y_name))
    if isinstance(detail.get("factor_values"), list) and isinstance(detail.get("measured_values"), list):
        x = notation.quantity_label(str(detail.get("factor")))
        y = notation.quantity_label(str(detail.get("measured_quantity")))
        out.append((f"{y} against {x}", detail["factor_values"], detail["measured_values"],
                    detail.get("claimed_exponent"), x, y))
    for key in ("eps", "t"):
        ykey = {"eps": "T_star", "t": "ratio_sum_minus_1"}[key]
        if isinstance(detail.get(key), list) and isinstance(detail.get(ykey), list):
            x, y = notation.quantity_label(key), notation.quantity_label(ykey)
            out.append((f"{y} against {x}", detail[key], detail[ykey], None, x, y))
    return [row for row in out
            if len(row[1]) == len(row[2]) and len(row[1]) >= 2
            and all(isinstance(v, (int, float)) and v > 0 for v in list(row[1]) + list(row[2]))]


#: the most curves one entry's plot draws (in the order of the checks' details)
MAX_SERIES = 9


def rate_plot_png(result: ClaimResult) -> str | None:
    """Base64 PNG: log-log plot of the measured points of the entry's checks (None if none). The
    axes are the variable and the quantity when every series shares them; else each series is
    divided by its value at its last point (so lines of different quantities share the axes)."""
    series = []
    for check in result.records:
        role = result.evidence["checks"].get(check.id, {}).get("role")
        for legend, x, y, claimed, xn, yn in _series(check.detail, check.id):
            series.append((legend + (" (context)" if role == "context" else ""), x, y, claimed, xn, yn))
    if any(not s[0].endswith(" (context)") for s in series):   # the deciding experiment, when it has points
        series = [s for s in series if not s[0].endswith(" (context)")]
    if not series:
        return None
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    from matplotlib.ticker import NullFormatter

    series = series[:MAX_SERIES]
    same_x = len({s[4] for s in series}) == 1
    same_y = len({s[5] for s in series}) == 1
    fig = Figure(figsize=(7.6, 2.9), dpi=150, layout="constrained")
    ax = fig.add_subplot(111)
    for legend, x, y, claimed, _, _ in series:
        xn = list(x) if same_x else [v / x[-1] for v in x]
        yn = list(y) if same_y else [v / y[-1] for v in y]
        line, = ax.loglog(xn, yn, "o-", ms=2.5, lw=1, label=legend)
        if claimed is not None and math.isfinite(claimed):
            xs = [min(xn), xn[-1]]
            ax.loglog(xs, [yn[-1] * (v / xn[-1]) ** claimed for v in xs], "--", color=line.get_color(), lw=0.8)
    ax.legend(fontsize=6.5, loc="center left", bbox_to_anchor=(1.0, 0.5), frameon=False)   # outside: no overlap
    ax.xaxis.set_minor_formatter(NullFormatter())
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.tick_params(labelsize=7)
    ax.set_xlabel(series[0][4] if same_x else "variable, relative to its last value", fontsize=7)
    ax.set_ylabel(series[0][5] if same_y else "measured, relative to its last value", fontsize=7)
    fig.suptitle("measured points (dashed: the printed exponent through the last point)", fontsize=7)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    return base64.b64encode(buf.getvalue()).decode("ascii")


# ------------------------------------------------------------------------------ numbers
def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list):
        return "[" + ", ".join(_fmt(v) for v in value[:8]) + (", ..." if len(value) > 8 else "") + "]"
    if isinstance(value, dict):   # keys in words: "t over Tstar" reads t/T*
        return "(" + "; ".join(f"{_key_words(k)}: {_fmt(v)}" for k, v in list(value.items())[:8]) + ")"
    return str(value)


def _key_words(key: str) -> str:
    return re.sub(r"\bover\b", "/", key.replace("_", " ")) if "_" in key else key


def _numbers(check) -> list[tuple[str, str]]:
    """(name in words, value) of the numbers a check's detail carries."""
    return [(NUMBER_WORDS.get(k, k.replace("_", " ")), _fmt(check.detail[k])) for k in NUMBER_KEYS if k in check.detail]


NUMBER_WORDS = {"worst_ratio": "worst ratio", "exponent_ci95": "95% interval of the exponent",
                "local_exponent": "local exponents", "claimed_exponent": "printed exponent",
                "measured_exponent": "measured exponent", "measured_slope": "measured slope",
                "constant_ci95": "95% interval of the constant", "max_z": "largest |z|",
                "derived_over_printed": "derived/printed", "max_ratio_to_bound": "largest ratio to the bound",
                "matrix_check_rel_error": "relative error against explicit matrices", "L_inf": "largest difference",
                "worst_ratio_late": "worst ratio, late steps", "holds_from_t": "holds from step",
                "upsilon3": "Upsilon_3", "where": "where"}


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


def _cause(cause: str | None) -> str:
    return cause_title(cause or "unclassified")


def _kind(kind: str | None) -> str:
    return KIND_WORDS.get(kind or "other", kind or "other")


def discrepancy_lines(ledger: Ledger) -> list[str]:
    return [f"{c.entry.paper} {c.entry.label} [{_kind(c.kind)}; root cause: {_cause(c.root_cause)}]: {c.reason}"
            for c in ledger.claims if c.verdict == "discrepancy"]


def root_cause_lines(ledger: Ledger) -> list[str]:
    """One line per paper and root cause: how many entries it explains and how many are corrected."""
    out = []
    for paper, causes in sorted(ledger.root_causes().items()):
        from rdyn.verification.claims.extraction import origin_counts_text

        s = ledger.summary()[paper]
        out.append(f"{origin_counts_text(paper, s)} ({s['corrected']} with a passing correction)")
        for cause, row in causes.items():
            out.append(f"{paper}, {_cause(cause)} ({', '.join(_kind(k) for k in row['kinds'])}): "
                       f"{len(row['entries'])} entries ({'; '.join(row['entries'])}), {row['corrected']} corrected")
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
    prose = notation.markdown
    out = ["# rdyn claims ledger", "", _header(ledger), "", counts_table_md(ledger), "",
           "Root causes:", ""] + [f"- {prose(line)}" for line in root_cause_lines(ledger)] + [
           "", "Discrepancies:", ""] + [f"- {prose(line)}" for line in discrepancy_lines(ledger)] + [""]
    paper = None
    for (p, section), results in _grouped(ledger).items():
        if p != paper:
            out += [f"## {PAPERS[p]}", ""]
            paper = p
        out += [f"### {prose(section)}", ""]
        for r in results:
            e = r.entry
            out += [f"#### {prose(e.label)} — **{r.verdict}** (strength: {r.strength()[0] or 'none'})", "",
                    f"> {prose(e.statement)}", ""]
            if e.tex:
                out += ["Printed:", "", "$$" + e.tex + "$$", ""]
            for cid, which, text in _forms(r):
                tex = derived_latex(text)
                out += [f"- {which} (`{cid}`): " + (f"$${tex}$$" if tex else prose(text))]
            if r.reason:
                out += ["", f"Reason: {prose(r.reason)}"]
            out += [""]
            for c in r.records:
                role = r.evidence["checks"].get(c.id, {}).get("role", "")
                nums = "; ".join(f"{k} = {v}" for k, v in _numbers(c))
                out += [f"- `{c.id}` [{c.status}, {role}]: {prose(c.claim)}" + (f" — {prose(nums)}" if nums else "")]
            if e.note:
                out += ["", f"Note: {prose(e.note)}"]
            if e.rate:
                png = rate_plot_png(r)
                if png:
                    out += ["", f"![measured points](data:image/png;base64,{png})"]
            out += [""]
    return "\n".join(out)


# ------------------------------------------------------------------------------ HTML
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
    prose = notation.html
    out.append("<p class='small'><b>Root causes</b></p><ul class='checks'>"
               + "".join(f"<li>{prose(line)}</li>" for line in root_cause_lines(ledger)) + "</ul>")
    paper = None
    for (p, section), results in _grouped(ledger).items():
        if p != paper:
            out.append(f"<h2>{html.escape(PAPERS[p])}</h2>")
            paper = p
        out.append(f"<h3>{prose(section)}</h3>")
        for r in results:
            e = r.entry
            colour = COLOURS[r.verdict]
            out.append(f"<div class='entry' style='border-left-color:{colour}'>")
            out.append(f"<b>{prose(e.label)}</b> <span class='verdict' style='background:{colour}'>"
                       f"{r.verdict}</span> <span class='small'>strength: {r.strength()[0] or 'none'}</span>")
            out.append(f"<div class='stmt'>{prose(e.statement)}</div>")
            if e.tex:
                out.append("<div class='small'>printed:</div>" + _formula_html(e.tex))
            for cid, which, text in _forms(r):
                tex = derived_latex(text)
                body = _formula_html(tex) if tex else f"<div class='formula'>{prose(text)}</div>"
                out.append(f"<div class='small'>{which} (<code>{html.escape(cid)}</code>):</div>{body}")
            if r.reason:
                out.append(f"<div class='small'><b>reason:</b> {prose(r.reason)}</div>")
            out.append("<ul class='checks'>")
            for c in r.records:
                role = r.evidence["checks"].get(c.id, {}).get("role", "")
                nums = "; ".join(f"{k} = {v}" for k, v in _numbers(c))
                out.append(f"<li><code>{html.escape(c.id)}</code> <span style='color:{COLOURS[c.status]}'>"
                           f"[{c.status}]</span> <i>{role}</i>: {prose(c.claim)}"
                           + (f"<br><span class='small'>{prose(nums)}</span>" if nums else "") + "</li>")
            out.append("</ul>")
            if e.note:
                out.append(f"<div class='small'>note: {prose(e.note)}</div>")
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
