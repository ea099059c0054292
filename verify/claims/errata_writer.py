"""The erratum (``rdyn claims --errata FILE.tex|FILE.md|FILE.html``).

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
import re
from typing import Any

from rdyn.verification.claims.ledger import Ledger
from rdyn.verification.claims.errata import ROOT_CAUSES, cause_text

PAPERS = {"A": "Model A (seed 000): Zhang, Zhao, Gu, Cao",
          "B": "Model B (seed 003): Wu, Zhang, Cao"}

#: every symbol the erratum uses, per paper, as (symbol in LaTeX, definition in words); defined
#: once in the preamble of the paper's section (checked by tests/verify/claims/test_claims.py)
SYMBOLS = {
    "A": (
        (r"D,\ K", "number of tokens, size of each attention group (K < D)"),
        (r"M = \|V^*\|_F^2 = \sum_m \|v_m^*\|_2^2", "squared Frobenius norm of the teacher's value matrix"),
        (r"\kappa", "Leaky ReLU slope (ReLU: kappa = 0; kappa = 1 is the identity)"),
        (r"C_1, C_2, C_3", "the coefficients of Lemma D.2: W_V = C1 V*, W_KQ = C2 (in-group) - C3 (out-group)"),
        (r"p(T) = \frac{1}{K + (D-K)e},\ e = \exp\left(-\frac{C_2+C_3}{D}\right)",
         "attention weight of a query on each key of its own group after T steps (logits/D); "
         "q = (1 - Kp)/(D-K) on the other keys"),
        (r"C_1^* = \frac{F_3}{K p F_1}", "the fixed point of C1 at the current p (Lemma D.2)"),
        (r"t_1,\ T^*", "end of phase 1 (Lemma D.13); first step with p(T) >= 1/(2K) (Lemma D.17, corrected "
                       "threshold)"),
        (r"L_{opt} = \frac{1}{2}E\|E\|_F^2", "the noise floor: L(T) - L_opt is the excess loss"),
        (r"g_2 = \frac{M(1+\kappa^2)}{2K^3}", "the late-phase increment constant (identity: M/K^3; ReLU: M/(2K^3))"),
        (r"s = \sqrt{\frac{K}{D-K}},\ b = \arctan s,\ c = \frac{(1-\kappa)^2}{1+\kappa^2}",
         "named parts of q_min (identity: c = 0; ReLU: c = 1)"),
        (r"q_{\min} = \left(\frac{D-K}{D}\right)^2\left(1 - \frac{cb}{\pi}\right)"
         r"\left(1 - \frac{cb}{\pi} + \frac{cs}{\pi}\right)",
         "the smallest ratio of the increment of C2 + C3 to eta g2 e^2 over phase 3 (identity: ((D-K)/D)^2)"),
        (r"R_\pm(T)", "R+ = ((D-K)/K)^2 + 2 g2 eta (T - T* + 1)/D and R- = ((D-K)/K)^2 + 2 q_min g2 eta (T - T* - 1)/D"),
        (r"[\nabla_{W_{KQ}} L]_{\mathrm{in}};\ F_1, F_{2,1}, F_3, F_4",
         "the in-group coefficient of the gradient of the loss in W_KQ (Lemma D.8); the Appendix F expectations "
         "of the activation at the current p that D.8 combines (F1 = E[y s(y) s'(y)], F2_1 = E[x1 s(x1+x2) "
         "s'(x1+x2)] for one in-group token, F3 = E[s(x1) s(x1+x2)], F4 = E[x1 s(x1+x2) s'(x1+x2+x3)])"),
        (r"L_{OOD} - L^*_{OOD}", "excess loss on the out-of-distribution inputs of Section 4.1 (iid Exp(1) entries, "
                                 "STS teacher, v* = (1/2)(1, 1, 1, 1), so M = 1)"),
    ),
    "B": (
        (r"d,\ n", "dimension and number of columns of X"),
        (r"S = XX^\top,\ a", "the data matrix's Gram matrix and the query vector (unit norm)"),
        (r"\kappa_1 = E[a^\top S a],\ \kappa_2 = E\|Sa\|_2^2", "the moments of B.2"),
        (r"\gamma^\star,\ S_0 = \alpha_0^2 + \beta_0^2", "the optimum of B.2 and the initial scale"),
        (r"\Upsilon(n,d),\ \Upsilon_1,\ \Upsilon_3", "E[1/lambda_d(X)] (Assumption 3.2) and the growth constants "
                                                       "of Theorems 4.1 and 4.3 (the paper defines no Upsilon_2)"),
    ),
}

NOTES = {
    "A": ("Numbering: the extraction of seed 000 dropped the labels of the lemmas after D.13; D.14-D.19 are "
          "numbered by the order in which the statements appear in Appendix D.2.",
          "Theorem 3.1 (loss): the theorem's display is missing from the extraction; its printed rate "
          "Theta(K D^4/(eta T)) is quoted from the discussion that follows the theorem in Section 3.",
          "Logits: the seed's softmax scale is 1/D; corrections are stated for it (the conference version's "
          "1/sqrt(D) is in each check's detail)."),
    "B": ("Theorem B.3 Part 3 uses Upsilon_2, which the paper defines nowhere; the correction reads kappa2.",),
}

ACTIVATION_NAMES = {"identity": "identity", "relu": "ReLU", "leaky": "Leaky ReLU (slope kappa)"}

#: the corrected quantity and the relation sign, in LaTeX
QUANTITY_TEX = {"excess_loss": r"L(T) - L_{opt}", "S_error_F": r"\|S^{(T)} - S^*\|_F",
                "WV_error_F": r"\|W_V^{(T)} - V^*\|_F", "one_minus_Kp": r"1 - Kp(T)", "p": r"p(T)",
                "T_star": r"T^*", "t1": r"t_1", "delta_C2_plus_C3": r"\Delta(C_2 + C_3)",
                "eta_max": r"\eta_{\max}", "ood_excess_loss": r"L_{OOD} - L^*_{OOD}"}
RELATION_TEX = {"asymptotic": r"\sim", "equal": "=", "upper_bound": r"\le", "lower_bound": r"\ge"}

#: readable axis labels of the plotted quantities (matplotlib mathtext)
AXIS_LABELS = {"one_over_K_minus_p": r"$1/K - p(T)$", "delta_C2_plus_C3": r"$\Delta(C_2 + C_3)$ per step",
               "excess_loss": r"excess loss $L(T) - L_{opt}$", "S_error_F": r"$\|S^{(T)} - S^*\|_F$",
               "WV_error_F": r"$\|W_V^{(T)} - V^*\|_F$", "ood_excess_loss": r"excess OOD loss",
               "p": r"$p(T)$"}
MAX_FORMULA = 500  # characters of LaTeX worth typesetting in the erratum


def _parse(text: str):
    """A derived formula string of a correction as sympy (the whitelist parser of
    :mod:`rdyn.derivations.formula`; never ``sympify``), every symbol positive."""
    import sympy as sp

    from rdyn.derivations.formula import parse, symbols_in

    table = {name: sp.Symbol(name, positive=True) for name in symbols_in(text)}
    return parse(text, table, what="correction", symbolic_exponents=True, max_length=4000, max_nodes=2000)


def _tidy(expr):
    """One square root for the product of square roots in numerator and denominator (display only)."""
    import sympy as sp

    num, den = sp.fraction(sp.together(expr))

    def merge(part):
        factors = sp.Mul.make_args(part)
        roots = [f for f in factors if f.is_Pow and f.exp == sp.Rational(1, 2)]
        if len(roots) < 2:
            return part
        rest = [f for f in factors if f not in roots]
        return sp.Mul(*rest) * sp.sqrt(sp.Mul(*[r.base for r in roots]), evaluate=False)

    return merge(num) / merge(den)


def _kappa_form(expr: dict):
    """The Leaky ReLU expression when it gives the identity's at kappa = 1 and ReLU's at kappa = 0
    (one formula for the three activations), else None."""
    import sympy as sp

    try:
        parsed = {a: _parse(x) for a, x in expr.items()}
    except ValueError:
        return None
    k = sp.Symbol("kappa", positive=True)
    leaky = parsed["leaky"]
    ok = (sp.simplify(leaky.subs(k, 0) - parsed["relu"]) == 0
          and sp.simplify(leaky.subs(k, 1) - parsed["identity"]) == 0)
    return leaky if ok else None


#: corrections whose JSON expression is one closed form (a string) but whose statement holds for every
#: activation in a named form: (which activations, LaTeX) shown before the closed form, and the case the
#: closed form covers
GENERAL_FORMS = {
    "Lemma D.8": (("every activation (F1..F4: that activation's Appendix F expectations; checked against the "
                   "derived ReLU and Leaky ReLU gradients at 30 digits)",
                   r"[\nabla_{W_{KQ}} L]_{\mathrm{in}} = -\frac{C_1 M}{D}\left(\frac{1}{K}\left(\frac{F_4}{p} - F_3"
                   r"\right) - C_1\left(F_{2,1} - p F_1\right)\right)"),
                  "identity (closed form)", r"[\nabla_{W_{KQ}} L]_{\mathrm{in}}"),
}


def corrected_formulas(fix: dict | None, label: str | None = None) -> list[tuple[str, str]]:
    """(which activations, LaTeX) of a correction: one formula with kappa when it covers every
    activation, else one per activation; a two-sided bound as its ``tex`` (named sub-expressions
    of the preamble). Long forms (> MAX_FORMULA characters) are left to the JSON."""
    import sympy as sp

    if fix is None:
        return []
    lhs = QUANTITY_TEX.get(fix["quantity"])
    rel = RELATION_TEX.get(fix["relation"])
    expr = fix.get("expression")
    if "upper_expression" in fix or not isinstance(expr, dict) or lhs is None or rel is None:
        if not fix.get("tex"):
            return []
        general = GENERAL_FORMS.get(label or "")
        if general is not None:   # the statement for every activation, then the closed form of its case
            (which, tex), case, left = general
            return [(which, tex), (case, f"{left} = {fix['tex']}")]
        body = fix["tex"].replace(r"\gamma_{star}^{2}", r"(\gamma^{\star})^{2}").replace(r"\gamma_{star}", r"\gamma^{\star}")
        if (lhs is not None and rel is not None and "upper_expression" not in fix and isinstance(expr, str)
                and not re.search(r"=|<|>|\\(?:le|ge|leq|geq|sim)(?![a-zA-Z])", body)):
            # one closed form with no relation of its own: give it its left-hand side
            body = f"{lhs} {rel} {body}"
        return [("", body)]
    if {"identity", "relu", "leaky"} <= set(expr):
        one = _kappa_form(expr)
        if one is not None:
            return [("every activation (identity: kappa = 1, ReLU: kappa = 0)", f"{lhs} {rel} {sp.latex(_tidy(one))}")]
    out = []
    if fix["quantity"] == "T_star":  # the two-term form with its constants named (defined in the statement)
        out.append(("every activation (I0, I1 as in the statement)",
                    r"T^* \sim \frac{D(D-K)^2}{\eta}\left(I_0 + \frac{I_1}{\sqrt{D-K}}\right)"))
    for act, text in expr.items():
        try:
            body = sp.latex(_tidy(_parse(text)))
        except ValueError:
            continue
        if len(body) <= MAX_FORMULA:
            out.append((ACTIVATION_NAMES.get(act, act), f"{lhs} {rel} {body}"))
        elif fix["quantity"] != "T_star":  # (T*: the named two-term form above covers it)
            out.append((ACTIVATION_NAMES.get(act, act), ""))
    return out


def errata_data(ledger: Ledger) -> dict[str, list[dict[str, Any]]]:
    """{paper: [{"root_cause", "description", "derivation", "entries": [...]}, ...]} over the
    discrepancies; each entry with its ``formulas`` (:func:`corrected_formulas`), ``valid`` and
    every root cause it has."""
    out: dict[str, list[dict[str, Any]]] = {}
    for c in ledger.claims:
        if c.verdict != "discrepancy":
            continue
        groups = out.setdefault(c.entry.paper, [])
        group = next((g for g in groups if g["root_cause"] == c.root_cause), None)
        if group is None:
            rc = ROOT_CAUSES.get(c.root_cause)
            group = {"root_cause": c.root_cause, "description": cause_text(c.root_cause),
                     "derivation": rc.derivation if rc is not None else "", "entries": []}
            groups.append(group)
        fix = c.correction
        deciding = c.correction_records
        group["entries"].append({
            "label": c.entry.label, "kind": c.kind, "root_causes": list(c.root_causes or [c.root_cause]),
            "printed": c.entry.statement, "printed_tex": c.entry.tex,
            "reason": c.reason, "correction": fix, "formulas": corrected_formulas(fix, c.entry.label),
            "valid": fix["valid"] if fix else None,
            "deciding": list({r.id: {"id": r.id, "status": r.status, "claim": r.claim} for r in [*deciding, *(
                r for r in c.records if c.evidence["checks"].get(r.id, {}).get("role") == "decides")]}.values()),
            # a plot wherever a rate is involved: asymptotes (T -> oo) and the Theta(T^-1/2) two-sided bounds
            "rate": c.entry.rate or bool(fix and (fix["limit"] == "T->oo" or "upper_expression" in fix)),
        })
    return out


def _plot_key(ledger: Ledger, paper: str, label: str) -> str | None:
    """What a plot of the entry draws (the correction's check with per-configuration rows): one
    figure per quantity, shared by the entries that draw the same one."""
    result = next(c for c in ledger.claims if (c.entry.paper, c.entry.label) == (paper, label))
    for r in result.correction_records:
        rows = r.detail.get("per_config") if isinstance(r.detail, dict) else None
        if isinstance(rows, list) and any(isinstance(x, dict) and "measured_values" in x for x in rows):
            bounded = [q for q in result.correction_records if isinstance(q.detail.get("per_config"), list)
                       and any(isinstance(x, dict) and "bound_lower_values" in x for x in q.detail["per_config"])]
            return (bounded or [r])[0].id
    return None


def _plot_png(ledger: Ledger, paper: str, label: str) -> bytes | None:
    """Log-log PNG for one entry: measured (solid) and derived asymptote (dashed) or corrected
    bounds (dotted) along each validation trajectory, from the correction's checks with
    ``per_config`` rows (None when the correction has none). Axis labels in words."""
    key = _plot_key(ledger, paper, label)
    if key is None:
        return None
    result = next(c for c in ledger.claims if (c.entry.paper, c.entry.label) == (paper, label))
    record = next(r for r in result.correction_records if r.id == key)
    rows = [row for row in record.detail["per_config"] if isinstance(row, dict) and "measured_values" in row]
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.2, 3.0), dpi=110, layout="constrained")
    ax = fig.add_subplot(111)
    for row in rows[:6]:
        T = [t - row["T_star"] for t in row["T"]]
        keep = [i for i, t in enumerate(T) if t > 0]
        x = [T[i] for i in keep]
        line, = ax.loglog(x, [row["measured_values"][i] for i in keep], "-", lw=1.2, label=row["config"])
        if "derived_values" in row:
            ax.loglog(x, [row["derived_values"][i] for i in keep], "--", lw=0.9, color=line.get_color())
        for k in ("bound_lower_values", "bound_upper_values"):  # corrected two-sided bounds
            if k in row:
                ax.loglog(x, [row[k][i] for i in keep], ":", lw=0.9, color=line.get_color())
    ax.set_xlabel("GD steps after T*,  T - T*", fontsize=8)
    quantity = rows[0].get("measured_quantity") or (result.correction or {}).get("quantity", "")
    ax.set_ylabel(AXIS_LABELS.get(quantity, quantity.replace("_", " ")), fontsize=8)
    ax.tick_params(labelsize=7)
    ax.legend(fontsize=6, frameon=False, loc="center left", bbox_to_anchor=(1.0, 0.5))  # outside: full labels
    bounds = any("bound_lower_values" in row for row in rows)
    ax.set_title("solid: collapsed GD map (one line per configuration); "
                 + ("dotted: the corrected bounds" if bounds else "dashed: the derived leading term"), fontsize=8)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", metadata={"Software": None})
    return buf.getvalue()


def _figures(ledger: Ledger, figure_path=None):
    """A function entry -> (figure number, file name or PNG, first time drawn) giving each
    plotted quantity one figure; later entries that draw the same one refer to it."""
    seen: dict[str, tuple[int, Any]] = {}

    def get(paper: str, e: dict):
        if not e["rate"]:
            return None
        key = _plot_key(ledger, paper, e["label"])
        if key is None:
            return None
        if key in seen:
            return seen[key][0], seen[key][1], False
        png = _plot_png(ledger, paper, e["label"])
        if png is None:
            return None
        n = len(seen) + 1
        ref = figure_path(n, png) if figure_path is not None else png
        seen[key] = (n, ref)
        return n, ref, True
    return get


def _correction_lines(e: dict) -> tuple[str, list[tuple[str, str]]]:
    """(plain heading, formulas) of an entry's correction."""
    fix = e["correction"]
    if fix is None:
        return "no derived correction yet: " + (e["reason"] or ""), []
    where = ("two-sided bound" if "upper_expression" in fix else fix["relation"].replace("_", " ")) + (
        f", as {fix['limit']}" if fix["limit"] else "")
    strength = f"; strength: {fix['strength']}" if fix.get("strength") else ""
    proved_part = (fix.get("strength_basis") or {}).get("proved_part")
    if proved_part and fix.get("strength") != "proved":
        strength += f" (proved for the {proved_part['activation']} activation: {proved_part['by'].split(':')[0]})"
    return f"{fix['statement']} [{where}; checked: {fix['verdict']}{strength}]", e["formulas"]


# ------------------------------------------------------------------------------ LaTeX
_TEX_ESCAPES = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}"}


def tex_escape(text: str) -> str:
    return "".join(_TEX_ESCAPES.get(ch, ch) for ch in text)


INTRO = ("Every discrepancy of the claims ledger, grouped by root cause (one cause per distinct error; an entry "
         "with several causes names them all), with the printed and the corrected statement. Corrections are "
         "derived (sympy) and checked against the collapsed map at sizes, step sizes and activations other than "
         "those used to derive them; 'valid' says where each holds.")


def latex(ledger: Ledger, figure_path=None) -> str:
    """The standalone document; ``figure_path(n, png_bytes) -> file name`` stores a plot."""
    lines = [r"\documentclass[11pt]{article}", r"\usepackage[margin=2cm]{geometry}",
             r"\usepackage{amsmath,amssymb,graphicx}", r"\title{Erratum (rdyn claims)}", r"\date{}",
             r"\begin{document}", r"\maketitle", tex_escape(INTRO)]
    figure = _figures(ledger, figure_path)
    for paper, groups in errata_data(ledger).items():
        lines.append(r"\section*{" + tex_escape(PAPERS[paper]) + "}")
        lines += [r"\paragraph{Symbols.}", r"\begin{itemize}"]
        lines += [r"\item $" + sym + "$: " + tex_escape(words) for sym, words in SYMBOLS[paper]]
        lines += [r"\end{itemize}", r"\paragraph{Notes.}", r"\begin{itemize}"]
        lines += [r"\item " + tex_escape(n) for n in NOTES[paper]] + [r"\end{itemize}"]
        for g in groups:
            lines.append(r"\subsection*{" + tex_escape(f"Root cause: {g['root_cause']}") + "}")
            lines.append(tex_escape(g["description"]) + r"\\ \emph{Shown by:} " + tex_escape(g["derivation"]))
            for e in g["entries"]:
                lines.append(r"\paragraph{" + tex_escape(f"{e['label']} ({e['kind']}; root causes: "
                                                         f"{', '.join(e['root_causes'])})") + "}")
                lines.append(r"\textbf{Printed.} " + tex_escape(e["printed"]))
                if e["printed_tex"]:
                    lines += [r"\[", e["printed_tex"], r"\]"]
                head, formulas = _correction_lines(e)
                lines.append(r"\textbf{Corrected.} " + tex_escape(head))
                for which, tex in formulas:
                    if which:
                        lines.append(tex_escape(which + ":"))
                    lines += ([r"\[", tex, r"\]"] if tex else [tex_escape("(long: in words above; the full form is the correction in the JSON)")])
                if e["valid"]:
                    lines.append(r"\emph{Valid:} " + tex_escape(e["valid"]) + ".")
                lines.append(r"\begin{itemize}")
                lines += [r"\item " + tex_escape(f"{d['id']} [{d['status']}]: {d['claim']}") for d in e["deciding"]]
                lines.append(r"\end{itemize}")
                fig = figure(paper, e)
                if fig is not None:
                    n, name, first = fig
                    if first:
                        lines += [r"\begin{center}", r"\includegraphics[width=0.8\textwidth]{" + name + "}\\",
                                  tex_escape(f"Figure {n}."), r"\end{center}"]
                    else:
                        lines.append(tex_escape(f"Plotted in Figure {n}."))
    lines.append(r"\end{document}")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------ Markdown / HTML
def markdown(ledger: Ledger, figure_path=None) -> str:
    out = ["# Erratum (rdyn claims)", "", INTRO, ""]
    figure = _figures(ledger, figure_path)
    for paper, groups in errata_data(ledger).items():
        out += [f"## {PAPERS[paper]}", "", "**Symbols.**", ""]
        out += [f"- ${sym}$: {words}" for sym, words in SYMBOLS[paper]] + ["", "**Notes.**", ""]
        out += [f"- {n}" for n in NOTES[paper]] + [""]
        for g in groups:
            out += [f"### Root cause `{g['root_cause']}`", "", g["description"], "", f"*Shown by:* {g['derivation']}", ""]
            for e in g["entries"]:
                head, formulas = _correction_lines(e)
                out += [f"#### {e['label']} ({e['kind']}; root causes: {', '.join(e['root_causes'])})", "",
                        f"**Printed.** {e['printed']}", ""]
                if e["printed_tex"]:
                    out += ["$$" + e["printed_tex"] + "$$", ""]
                out += [f"**Corrected.** {head}", ""]
                for which, tex in formulas:
                    out += ([f"{which}:", ""] if which else []) + (["$$" + tex + "$$", ""] if tex else
                                                                   ["(long: in words above; the full form is the correction in the JSON)", ""])
                if e["valid"]:
                    out += [f"*Valid:* {e['valid']}.", ""]
                out += [f"- `{d['id']}` [{d['status']}]: {d['claim']}" for d in e["deciding"]] + [""]
                fig = figure(paper, e)
                if fig is not None:
                    n, name, first = fig
                    out += ([f"![Figure {n}: {e['label']}]({name})", "", f"*Figure {n}.*", ""] if first
                            else [f"Plotted in Figure {n}.", ""])
    return "\n".join(out)


def html_page(ledger: Ledger) -> str:
    from rdyn.verification.claims.report import CSS, _formula_html

    out = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>Erratum (rdyn claims)</title>",
           f"<style>{CSS} table.side td{{vertical-align:top;width:50%;padding:4px 8px;border:1px solid #ddd}}"
           " table.symbols td{vertical-align:middle;padding:2px 10px} table.symbols{border-collapse:collapse}</style>",
           "</head><body><h1>Erratum (rdyn claims)</h1>", f"<p class='small'>{html.escape(INTRO)}</p>"]
    figure = _figures(ledger)
    for paper, groups in errata_data(ledger).items():
        out.append(f"<h2>{html.escape(PAPERS[paper])}</h2><h3>Symbols</h3><table class='symbols'>")
        out += [f"<tr><td>{_formula_html(sym)}</td><td class='small'>{html.escape(words)}</td></tr>"
                for sym, words in SYMBOLS[paper]]
        out.append("</table><h3>Notes</h3><ul class='small'>" + "".join(f"<li>{html.escape(n)}</li>" for n in NOTES[paper])
                   + "</ul>")
        for g in groups:
            out.append(f"<h3>Root cause <code>{html.escape(g['root_cause'])}</code></h3>"
                       f"<p class='small'>{html.escape(g['description'])}<br><i>Shown by:</i> "
                       f"{html.escape(g['derivation'])}</p>")
            for e in g["entries"]:
                head, formulas = _correction_lines(e)
                left = f"<div class='stmt'>{html.escape(e['printed'])}</div>" + (
                    _formula_html(e["printed_tex"]) if e["printed_tex"] else "")
                right = f"<div class='stmt'>{html.escape(head)}</div>" + "".join(
                    (f"<div class='small'>{html.escape(which)}:</div>" if which else "")
                    + (_formula_html(tex) if tex else "<div class='small'>(long: in words above; the full form is the correction in the JSON)</div>")
                    for which, tex in formulas)
                if e["valid"]:
                    right += f"<div class='small'><b>Valid:</b> {html.escape(e['valid'])}</div>"
                out.append(f"<div class='entry'><b>{html.escape(e['label'])}</b> "
                           f"<span class='small'>({html.escape(e['kind'])}; root causes: "
                           f"{html.escape(', '.join(e['root_causes']))})</span>"
                           f"<table class='side'><tr><th>printed</th><th>corrected</th></tr>"
                           f"<tr><td>{left}</td><td>{right}</td></tr></table>")
                out.append("<ul class='checks'>" + "".join(
                    f"<li><code>{html.escape(d['id'])}</code> [{d['status']}]: {html.escape(d['claim'])}</li>"
                    for d in e["deciding"]) + "</ul>")
                fig = figure(paper, e)
                if fig is not None:
                    n, png, first = fig
                    out.append(f"<figure><img class='plot' alt='Figure {n}: {html.escape(e['label'])}' "
                               "src='data:image/png;base64," + base64.b64encode(png).decode("ascii")
                               + f"'><figcaption class='small'>Figure {n}.</figcaption></figure>" if first
                               else f"<p class='small'>Plotted in Figure {n}.</p>")
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
