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
from rdyn.verification.claims import notation
from rdyn.verification.claims.page import CSS, formula_html as _formula_html
from rdyn.verification.claims.errata import ROOT_CAUSES, cause_text

PAPERS = {"A": "Model A (seed 000): Zhang, Zhao, Gu, Cao",
          "B": "Model B (seed 003): Wu, Zhang, Cao"}

#: every symbol the erratum uses, per paper, as (symbol in LaTeX, definition in prose); defined once in
#: the Notation section of the paper (checked by tests/verify/claims/test_errata_writer.py). Euler's
#: number is e; exp(-(C2+C3)/D) is xi (the checks' prose writes it e).
SYMBOLS = {
    "A": (
        (r"D,\ K", "number of tokens, size of each attention group (K < D)"),
        (r"M = \|V^*\|_F^2 = \sum_m \|v_m^*\|_2^2", "squared Frobenius norm of the teacher's value matrix"),
        (r"\kappa", "Leaky ReLU slope (ReLU: kappa = 0; kappa = 1 is the identity)"),
        (r"\eta", "step size of gradient descent; T the number of steps"),
        (r"\eta_{\lim} = \frac{2K}{D\,E[\sigma(g)^2]},\ g \sim N(0,1)",
         "identity 2K/D, ReLU 4K/D, Leaky ReLU 4K/(D (1 + kappa^2)): the supremum of the step sizes for which "
         "the multiplier of C1 in its update stays in (-1, 1) for every attention level p in [1/D, 1/K] "
         "(derived by sympy from the collapsed map); rdyn's default step size is eta_lim/2"),
        (r"\eta_{\mathrm{paper}} = \min\left(\frac{K}{D}, \frac{K^3(D-K)}{M D^3 (D+1)}\right)",
         "the papers' step size: the largest eta satisfying Lemma D.5's condition 1 - eta D/K >= 0 and Lemma "
         "D.9's eta M D (D+1)/(K^3 (D-K)) <= 1/D^2 (the D.9 term is the smaller one)"),
        (r"C_1, C_2, C_3", "the coefficients of Lemma D.2: W_V = C1 V*, W_KQ = C2 (in-group) - C3 (out-group)"),
        (r"\xi = \exp\left(-\frac{C_2+C_3}{D}\right)",
         "the small parameter of the late phase (e is Euler's number throughout)"),
        (r"p(T) = \frac{1}{K + (D-K)\xi}",
         "attention weight of a query on each key of its own group after T steps (logits/D); "
         "q = (1 - Kp)/(D-K) on the other keys"),
        (r"C_1^* = \frac{F_3}{K p F_1}", "the fixed point of C1 at the current p (Lemma D.2)"),
        (r"t_1,\ T^*", "end of phase 1 (Lemma D.13); first step with p(T) >= 1/(2K) (Lemma D.17, corrected "
                       "threshold)"),
        (r"L_{\mathrm{opt}} = \frac{1}{2}E\|E\|_F^2", "the noise floor: L(T) - L_opt is the excess loss"),
        (r"g_2 = \frac{M(1+\kappa^2)}{2K^3}", "the late-phase increment constant (identity: M/K^3; ReLU: M/(2K^3))"),
        (r"s = \sqrt{\frac{K}{D-K}},\ b = \arctan s,\ c = \frac{(1-\kappa)^2}{1+\kappa^2}",
         "named parts of q_min (identity: c = 0; ReLU: c = 1)"),
        (r"q_{\min} = \left(\frac{D-K}{D}\right)^2\left(1 - \frac{cb}{\pi}\right)"
         r"\left(1 - \frac{cb}{\pi} + \frac{cs}{\pi}\right)",
         "the smallest ratio of the increment of C2 + C3 to eta g2 xi^2 over phase 3 (identity: ((D-K)/D)^2)"),
        (r"c_{\mathrm{lag}},\ q_{\mathrm{lag}}",
         "the lag lemma's constant: |C1/C1* - 1| <= c_lag xi^3 for every T >= T* (C1* the fixed point of the C1 "
         "update at p(T)), certified by rdyn prove per instance (values in the correction's constants); "
         "q_lag = q_min (1 - c_lag (K/(D-K))^2)"),
        (r"\psi(v)", "(exp(v) - 1)/v"),
        (r"[\nabla_{W_{KQ}} L]_{\mathrm{in}};\ F_1, F_{2,1}, F_3, F_4",
         "the in-group coefficient of the gradient of the loss in W_KQ (Lemma D.8); the Appendix F expectations "
         "of the activation sigma at the current p that D.8 combines (F1 = E[y sigma(y) sigma'(y)], F2_1 = "
         "E[x1 sigma(x1+x2) sigma'(x1+x2)] for one in-group token, F3 = E[sigma(x1) sigma(x1+x2)], F4 = "
         "E[x1 sigma(x1+x2) sigma'(x1+x2+x3)])"),
        (r"L_{OOD} - L^*_{OOD}", "excess loss on the out-of-distribution inputs of Section 4.1 (iid Exp(1) entries, "
                                 "STS teacher, v* = (1/2)(1, 1, 1, 1), so M = 1)"),
    ),
    "B": (
        (r"d,\ n", "dimension and number of columns of X"),
        (r"S = XX^\top,\ a", "the data matrix's Gram matrix and the query vector (unit norm)"),
        (r"\kappa_1 = E[a^\top S a],\ \kappa_2 = E\|Sa\|_2^2", "the moments of B.2"),
        (r"\gamma^\star,\ S_0 = \alpha_0^2 + \beta_0^2", "the optimum of B.2 and the initial scale"),
        (r"\eta,\ \eta_{\max}", "the step size and the largest step size of Theorem B.3"),
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

#: a readable title of each root cause (ROOT_CAUSES holds what the error is and what shows it)
CAUSE_TITLES = {
    "late_rate_1_minus_Kp": "1 - Kp decays like T^(-1/2), not 1/T",
    "late_increment_D_power": "the late increment of C2 + C3 has no 1/D^3",
    "loss_D_order": "the excess loss has order D^3, not D^4",
    "Tstar_logit_scale": "eta T* grows like D^3 with logits/D",
    "S_norm_sqrt": "||S - S*||_F has sqrt(K (D-K)) in its denominator",
    "p_threshold_half": "p(t) < 1/K: the threshold 1/2 is unreachable",
    "D10_condition": "Lemma D.10's condition never holds",
    "D15_numeric_step": "3(D-K)/D^2 <= 0.025 fails at every preset",
    "ood_slope": "the population excess OOD loss falls like 1/T",
    "A_of_t_printed": "Lemma D.6's A(t) lacks the sin(2 beta) term",
    "D6_arctan_sqrt": "Lemma D.6: the arctan argument without its square root (extraction)",
    "step3_sqrt_T": "Step 3 of Section 5: Theta(1/T) for Theta(1/sqrt(T)) (extraction)",
    "D8_sign": "Lemma D.8's sign of p F1",
    "F34_variance_for_sd": "Lemmas F.3, F.4: variances for standard deviations",
    "F67_Phi_sqrt_c": "Lemmas F.6, F.7: Phi((x1+x2)/c) for Phi((x1+x2)/sqrt(c))",
    "F7_density_sqrt": "Lemma F.7: the normal density's square root",
    "B3_eta_max_S0": "Theorem B.3's eta_max has S0^2 for 1",
    "B3_Upsilon2": "Theorem B.3 Part 3: the undefined Upsilon_2 is kappa2",
    "ood_worst_case_rate": "Theorem 3.2 converges like T^(-1/2) in the worst case",
    "unclassified": "not yet classified",
}

#: the kinds of discrepancy, in words
KIND_WORDS = {"wrong_rate": "wrong rate", "wrong_constant": "wrong constant", "wrong_formula": "wrong formula",
              "sign": "wrong sign", "vacuous_condition": "vacuous condition", "false_step": "false step",
              "unreachable_threshold": "unreachable threshold", "notation": "notation",
              "extraction_suspect": "suspected text-extraction loss", "other": "other"}

ACTIVATION_NAMES = {"identity": "identity", "relu": "ReLU", "leaky": "Leaky ReLU (slope kappa)"}

#: the corrected quantity and the relation sign, in LaTeX
QUANTITY_TEX = {"excess_loss": r"L(T) - L_{\mathrm{opt}}", "S_error_F": r"\|S^{(T)} - S^*\|_F",
                "WV_error_F": r"\|W_V^{(T)} - V^*\|_F", "one_minus_Kp": r"1 - Kp(T)", "p": r"p(T)",
                "T_star": r"T^*", "t1": r"t_1", "delta_C2_plus_C3": r"\Delta(C_2 + C_3)",
                "eta_max": r"\eta_{\max}", "ood_excess_loss": r"L_{OOD} - L^*_{OOD}"}
RELATION_TEX = {"asymptotic": r"\sim", "equal": "=", "upper_bound": r"\le", "lower_bound": r"\ge"}

#: readable axis labels of the plotted quantities (matplotlib mathtext)
AXIS_LABELS = {"one_over_K_minus_p": r"$1/K - p(T)$", "delta_C2_plus_C3": r"$\Delta(C_2 + C_3)$ per step",
               "excess_loss": r"excess loss $L(T) - L_{\mathrm{opt}}$", "S_error_F": r"$\|S^{(T)} - S^*\|_F$",
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
        out.append(("every activation, logits/D, eta -> 0 then D -> oo (I0, I1 as in the statement)",
                    r"\eta T^* = D(D-K)^2\left(I_0 + \frac{I_1}{\sqrt{D-K}} + o\left((D-K)^{-1/2}\right)\right)"))
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

    fig = Figure(figsize=(7.2, 3.0), dpi=180, layout="constrained")   # legible once scaled to the text width
    ax = fig.add_subplot(111)
    for row in rows[:6]:
        T = [t - row["T_star"] for t in row["T"]]
        keep = [i for i, t in enumerate(T) if t > 0]
        x = [T[i] for i in keep]
        line, = ax.loglog(x, [row["measured_values"][i] for i in keep], "-", lw=1.2,
                          label=notation.config_label(row["config"]))
        if "derived_values" in row:
            ax.loglog(x, [row["derived_values"][i] for i in keep], "--", lw=0.9, color=line.get_color())
        for k in ("bound_lower_values", "bound_upper_values"):  # corrected two-sided bounds
            if k in row:
                ax.loglog(x, [row[k][i] for i in keep], ":", lw=0.9, color=line.get_color())
    ax.set_xlabel(r"GD steps after $T^*$: $T - T^*$", fontsize=8)
    quantity = rows[0].get("measured_quantity") or (result.correction or {}).get("quantity", "")
    ax.set_ylabel(AXIS_LABELS.get(quantity) or notation.quantity_label(quantity), fontsize=8)
    ax.tick_params(labelsize=7)
    ax.legend(fontsize=7, frameon=False, loc="center left", bbox_to_anchor=(1.0, 0.5))  # outside: full labels
    bounds = any("bound_lower_values" in row for row in rows)
    fig.suptitle("solid: the collapsed GD map (one line per configuration); "   # the figure's: wider than the axes
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
        strength += f" (exact obligations only, for the {proved_part['activation']} activations; see Valid)"
    return f"{fix['statement']} [{where}; checked: {fix['verdict']}{strength}]", e["formulas"]


# ------------------------------------------------------------------------------ prose and headings
INTRO = ("Every discrepancy of the claims ledger, grouped by root cause (one cause per distinct error; an entry "
         "with several causes names them all), with the printed and the corrected statement. Corrections are "
         "derived (sympy) and checked against the collapsed map at sizes, step sizes and activations other than "
         "those used to derive them; under Valid, each says where it holds. Check ids (in typewriter) name the "
         "checks of rdyn verify that decide each statement.")
LONG_FORM = "(long: in words above; the full form is the correction in the JSON)"

#: symbol spellings sympy's printer gives the code's identifiers, and their notation
_FORMULA_FIXES = ((r"\gamma_{star}^{2}", r"(\gamma^{\star})^{2}"), (r"\gamma_{star}", r"\gamma^{\star}"),
                  (r"T_{star}", r"T^*"), (r"\eta_{limit}", r"\eta_{\lim}"), (r"vstar_{norm2}", "M"),
                  (r"\tau_{star}", r"\tau^*"))


def formula_tex(tex: str) -> str:
    """A display formula with the code's identifiers in their notation."""
    for old, new in _FORMULA_FIXES:
        tex = tex.replace(old, new)
    return tex


def _origin_note(ledger: Ledger, paper: str) -> str:
    """The errors of the paper and the suspected extraction losses, counted separately."""
    from rdyn.verification.claims.extraction import origin_counts_text

    return origin_counts_text(paper, ledger.summary()[paper])


def cause_title(cause: str, number: int | None = None) -> str:
    title = CAUSE_TITLES.get(cause, "not yet classified")
    return f"Cause {number}: {title}" if number is not None else title


def _cause_numbers(data) -> dict[str, int]:
    out: dict[str, int] = {}
    for groups in data.values():
        for g in groups:
            out.setdefault(g["root_cause"], len(out) + 1)
    return out


def _entry_heading(e: dict, numbers: dict[str, int]) -> tuple[str, str]:
    """(label, what kind and which causes) of an entry, as prose."""
    causes = ", ".join(f"cause {numbers[c]}" if c in numbers else cause_title(c) for c in e["root_causes"])
    return e["label"], f"{KIND_WORDS.get(e['kind'], e['kind'])}; root cause{'s' if len(e['root_causes']) > 1 else ''}: {causes}"


def _check_line(d: dict) -> tuple[str, str]:
    return d["id"], f"[{d['status']}]: {d['claim']}"


def _figure_caption(n: int, e: dict) -> str:
    return (f"Figure {n}. {e['label']}: the collapsed map along each validation trajectory (solid) against the "
            "corrected statement (dashed: its leading term; dotted: its two bounds).")


# ------------------------------------------------------------------------------ LaTeX
tex_escape = notation.tex_escape

TEX_PREAMBLE = (r"\documentclass[11pt]{article}", r"\usepackage[margin=2cm]{geometry}",
                r"\usepackage{amsmath,amssymb,graphicx}", r"\usepackage[hidelinks]{hyperref}",
                r"\newsavebox{\fitbox}",
                # a display formula wider than the line is scaled to the line's width
                r"\newcommand{\fitformula}[1]{\par\noindent\sbox{\fitbox}{$\displaystyle #1$}\begin{center}"
                r"\ifdim\wd\fitbox>\linewidth\resizebox{\linewidth}{!}{\usebox{\fitbox}}\else\usebox{\fitbox}\fi"
                r"\end{center}}",
                r"\sloppy", r"\title{Erratum (rdyn claims)}", r"\date{}")


def _tex_display(tex: str) -> list[str]:
    return [r"\fitformula{" + formula_tex(tex) + "}"]


def latex(ledger: Ledger, figure_path=None) -> str:
    """The standalone document; ``figure_path(n, png_bytes) -> file name`` stores a plot."""
    p = notation.tex
    lines = [*TEX_PREAMBLE, r"\begin{document}", r"\maketitle", p(INTRO)]
    figure = _figures(ledger, figure_path)
    data = errata_data(ledger)
    numbers = _cause_numbers(data)
    for paper, groups in data.items():
        lines.append(r"\section*{" + tex_escape(PAPERS[paper]) + "}")
        lines += [r"\subsection*{Notation}", r"\begin{itemize}"]
        lines += [r"\item $" + sym + "$: " + p(words) for sym, words in SYMBOLS[paper]]
        lines += [r"\end{itemize}", r"\paragraph{Notes.}", r"\begin{itemize}"]
        lines += [r"\item " + p(n) for n in (*NOTES[paper], _origin_note(ledger, paper))] + [r"\end{itemize}"]
        for g in groups:
            lines.append(r"\subsection*{" + p(cause_title(g["root_cause"], numbers[g["root_cause"]])) + "}")
            lines += [p(g["description"]), r"\par\noindent\emph{Shown by:} " + p(g["derivation"])]
            for e in g["entries"]:
                label, kind = _entry_heading(e, numbers)
                lines.append(r"\paragraph{" + p(label) + r"} {\small (" + p(kind) + ")}")
                lines.append(r"\par\noindent\textbf{Printed.} " + p(e["printed"]))
                if e["printed_tex"]:
                    lines += _tex_display(e["printed_tex"])
                head, formulas = _correction_lines(e)
                lines.append(r"\par\noindent\textbf{Corrected.} " + p(head))
                for which, tex in formulas:
                    if which:
                        lines.append(r"\par\noindent " + p(which + ":"))
                    lines += _tex_display(tex) if tex else [p(LONG_FORM)]
                if e["valid"]:
                    lines.append(r"\par\noindent\emph{Valid:} " + p(e["valid"]) + ".")
                lines.append(r"\begin{itemize}")
                lines += [r"\item " + notation._breakable_code(cid) + " " + p(rest)
                          for cid, rest in map(_check_line, e["deciding"])]
                lines.append(r"\end{itemize}")
                fig = figure(paper, e)
                if fig is not None:
                    n, name, first = fig
                    if first:
                        lines += [r"\begin{center}", r"\includegraphics[width=\linewidth]{" + name + "}",
                                  r"\end{center}", r"{\small " + p(_figure_caption(n, e)) + "}"]
                    else:
                        lines.append(tex_escape(f"Plotted in Figure {n}."))
    lines.append(r"\end{document}")
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------ Markdown / HTML
def markdown(ledger: Ledger, figure_path=None) -> str:
    p = notation.markdown
    out = ["# Erratum (rdyn claims)", "", p(INTRO), ""]
    figure = _figures(ledger, figure_path)
    data = errata_data(ledger)
    numbers = _cause_numbers(data)
    for paper, groups in data.items():
        out += [f"## {PAPERS[paper]}", "", "### Notation", ""]
        out += [f"- ${sym}$: {p(words)}" for sym, words in SYMBOLS[paper]] + ["", "**Notes.**", ""]
        out += [f"- {p(n)}" for n in (*NOTES[paper], _origin_note(ledger, paper))] + [""]
        for g in groups:
            out += [f"### {p(cause_title(g['root_cause'], numbers[g['root_cause']]))}", "", p(g["description"]), "",
                    f"*Shown by:* {p(g['derivation'])}", ""]
            for e in g["entries"]:
                head, formulas = _correction_lines(e)
                label, kind = _entry_heading(e, numbers)
                out += [f"#### {p(label)} ({p(kind)})", "", f"**Printed.** {p(e['printed'])}", ""]
                if e["printed_tex"]:
                    out += ["$$" + formula_tex(e["printed_tex"]) + "$$", ""]
                out += [f"**Corrected.** {p(head)}", ""]
                for which, tex in formulas:
                    out += ([f"{p(which)}:", ""] if which else []) + (["$$" + formula_tex(tex) + "$$", ""] if tex else
                                                                      [LONG_FORM, ""])
                if e["valid"]:
                    out += [f"*Valid:* {p(e['valid'])}.", ""]
                out += [f"- `{cid}` {p(rest)}" for cid, rest in map(_check_line, e["deciding"])] + [""]
                fig = figure(paper, e)
                if fig is not None:
                    n, name, first = fig
                    out += ([f"![Figure {n}]({name})", "", f"*{p(_figure_caption(n, e))}*", ""] if first
                            else [f"Plotted in Figure {n}.", ""])
    return "\n".join(out)


def html_page(ledger: Ledger) -> str:

    p = notation.html
    out = ["<!DOCTYPE html><html><head><meta charset='utf-8'><title>Erratum (rdyn claims)</title>",
           f"<style>{CSS} table.side{{table-layout:fixed;width:100%}} table.side td{{vertical-align:top;width:50%;padding:4px 8px;border:1px solid #ddd;overflow-wrap:break-word}}"
           " table.symbols td{vertical-align:middle;padding:2px 10px} table.symbols{border-collapse:collapse}</style>",
           "</head><body><h1>Erratum (rdyn claims)</h1>", f"<p class='small'>{p(INTRO)}</p>"]
    figure = _figures(ledger)
    data = errata_data(ledger)
    numbers = _cause_numbers(data)
    for paper, groups in data.items():
        out.append(f"<h2>{html.escape(PAPERS[paper])}</h2><h3>Notation</h3><table class='symbols'>")
        out += [f"<tr><td>{_formula_html(sym)}</td><td class='small'>{p(words)}</td></tr>"
                for sym, words in SYMBOLS[paper]]
        out.append("</table><h3>Notes</h3><ul class='small'>" + "".join(f"<li>{p(n)}</li>" for n in (*NOTES[paper], _origin_note(ledger, paper)))
                   + "</ul>")
        for g in groups:
            out.append(f"<h3>{p(cause_title(g['root_cause'], numbers[g['root_cause']]))}</h3>"
                       f"<p class='small'>{p(g['description'])}<br><i>Shown by:</i> "
                       f"{p(g['derivation'])}</p>")
            for e in g["entries"]:
                head, formulas = _correction_lines(e)
                label, kind = _entry_heading(e, numbers)
                left = f"<div class='stmt'>{p(e['printed'])}</div>" + (
                    _formula_html(formula_tex(e["printed_tex"])) if e["printed_tex"] else "")
                right = f"<div class='stmt'>{p(head)}</div>" + "".join(
                    (f"<div class='small'>{p(which)}:</div>" if which else "")
                    + (_formula_html(formula_tex(tex)) if tex else f"<div class='small'>{LONG_FORM}</div>")
                    for which, tex in formulas)
                if e["valid"]:
                    right += f"<div class='small'><b>Valid:</b> {p(e['valid'])}</div>"
                out.append(f"<div class='entry'><b>{p(label)}</b> <span class='small'>({p(kind)})</span>"
                           f"<table class='side'><tr><th>printed</th><th>corrected</th></tr>"
                           f"<tr><td>{left}</td><td>{right}</td></tr></table>")
                out.append("<ul class='checks'>" + "".join(
                    f"<li><code>{html.escape(cid)}</code> {p(rest)}</li>" for cid, rest in map(_check_line, e["deciding"]))
                    + "</ul>")
                fig = figure(paper, e)
                if fig is not None:
                    n, png, first = fig
                    out.append(f"<figure><img class='plot' alt='Figure {n}' "
                               "src='data:image/png;base64," + base64.b64encode(png).decode("ascii")
                               + f"'><figcaption class='small'>{p(_figure_caption(n, e))}</figcaption></figure>"
                               if first else f"<p class='small'>Plotted in Figure {n}.</p>")
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
