"""The notation of the erratum and the report (verify/claims/notation.py): prose with plain-text
mathematics split into text, formulas and references, and typeset for LaTeX and HTML."""
from __future__ import annotations

import re

from rdyn.verification.claims import notation, strength


def _plain(html: str) -> str:
    """The text a reader sees in an HTML fragment (tags dropped)."""
    import html as _html

    return _html.unescape(re.sub(r"<[^>]+>", "", html))


def test_an_instance_of_rdyn_prove_is_a_list_of_its_parts():
    first = next(i for i in strength.PROVE_INSTANCES if i.get("activation") == "relu" and i["eta"] is None
                 and i["logit_scale"] == "D")
    text = strength.instance_text(first)   # the ledger's words: relu D=9 K=3 the papers' eta logits/D
    d, k = first["D"], first["K"]
    assert notation.tex(text) == rf"ReLU, $D = {d}$, $K = {k}$, $\eta = \eta_{{\mathrm{{paper}}}}$, logits/$D$"
    assert _plain(notation.html(text)) == f"ReLU, D = {d}, K = {k}, η = ηpaper, logits/D"   # paper: a subscript
    leaky = next(i for i in strength.PROVE_INSTANCES if "kappa" in i and i["eta"] == "half_limit")
    assert notation.tex(strength.instance_text(leaky)).startswith(
        rf"Leaky ReLU, $\kappa = {leaky['kappa']}$, $D = {leaky['D']}$, $K = {leaky['K']}$, $\eta = \eta_{{\lim}}/2$, ")
    # the scope sentence of a certified verdict: every instance separated, none run into the next
    scope = strength.scope("certified", {"instances": list(strength.PROVE_INSTANCES)})["text"]
    typeset = notation.tex(scope)
    one = r"(?:ReLU|identity)(?:, \$\\kappa = [0-9.]+\$)?, \$D = \d+\$, \$K = \d+\$, \$\\eta = [^$]+\$, logits/\$(?:D|\\sqrt\{D\})\$"
    assert len(re.findall(one, typeset)) == len(strength.PROVE_INSTANCES)
    assert not re.search(r"\$[^$]*=[^$]*\d [A-Za-z\\][^$]*=[^$]*\$", typeset)   # no "D=9 K=3" in one formula


def test_a_space_between_two_formulas_stays_a_space():
    """In LaTeX's and HTML's mathematics a space separates nothing: two formulas side by side are two
    formulas, and a possessive 's is text."""
    assert notation.tex("Step 3's Theta(1/T) rate") == r"Step 3's $\Theta (1/T)$ rate"
    assert _plain(notation.html("Step 3's Theta(1/T) rate")) == "Step 3's Θ(1/T) rate"
    assert notation.tex("T >= T* (p >= 1/(2K))") == r"$T \ge T^*$ $(p \ge 1/(2K))$"
    assert notation.tex("kappa=0.1 D=9") == r"$\kappa =0.1$ $D=9$"
    assert notation.tex("identity D = 18, K = 2 (eta_limit/2)") == r"identity $D = 18$, $K = 2$ $(\eta_{\lim}/2)$"
    # products written with a space stay one formula
    assert notation.tex("1/K - p = N e/(K (K + N e)) > 0") == r"$1/K - p = N \xi /(K (K + N \xi )) > 0$"
    assert notation.tex("Delta C2 + Delta C3 <= 8 pi eta") == r"$\Delta C_2 + \Delta C_3 \le 8 \pi \eta$"
    assert notation.tex("tildealpha_1 = eta tildebeta_0 (2kappa_2/d) gamma* > 0") == (
        r"$\tilde{\alpha}_1 = \eta \tilde{\beta}_0 (2\kappa_2/d) \gamma^\star > 0$")


def test_brackets_hold_a_formula_together():
    # a comma inside an inner product <X, Y>_F is part of it
    assert notation.segments("iff E<Y - f*(X), z_out>_F = 0 holds") == (
        ("text", "iff "), ("math", r"E\langle Y - f^*(X),\ z_{\mathrm{out}}\rangle_F = 0"), ("text", " holds"))
    assert _plain(notation.html("C = E<r, u>_F")) == "C = E⟨r, u⟩F"
    assert notation.tex("the cross term E<Y - f*, TF - f*> is linear") == (
        r"the cross term $E\langle Y - f^*,\ \mathrm{TF} - f^*\rangle$ is linear")
    # T*(...) is T* followed by a bracket, not T times a number
    assert notation.tex("T* ~ T*(1 + 64) at D") == r"$T^* \sim T^*(1 + 64)$ at $D$"
    assert notation.tex("x < y and a > b") == r"$x < y$ and $a > b$"
    # C1*(t) is the fixed point at step t (Lemma D.10), not C1 times t
    assert notation.tex("C1*(t+1) >= C1*(t) whenever p(t) <= 1/(2 pi D K)") == (
        r"$C_1^*(t+1) \ge C_1^*(t)$ whenever $p(t) \le 1/(2 \pi D K)$")
    # the model's letter is a name, while B alone is the bound of Theorem 3.2
    assert notation.tex("Model B: 3 discrepancies, B^2 <= 1") == r"Model B: 3 discrepancies, $B^{2} \le 1$"


def test_references_and_symbols_of_the_ledger():
    # statement ids of rdyn prove and its command lines are references, not subscripted letters
    assert notation.segments("statements D18.derived.lower/upper, F6.restored.conditional") == (
        ("text", "statements "), ("code", "D18.derived.lower/upper"), ("text", ", "),
        ("code", "F6.restored.conditional"))
    assert notation.segments("F6_restored.conditional: every a") == (
        ("code", "F6_restored.conditional"), ("text", ": every a"))
    assert notation.tex("q_min, c_lag, S_error_F") == r"$q_{\min}$, $c_{\mathrm{lag}}$, $\|S^{(T)} - S^*\|_F$"
    assert notation.tex("(a certified counterexample of rdyn prove --paper B)") == (
        r"(a certified counterexample of \texttt{rdyn prove --paper B})")
    # sum and int without their index are the operators
    assert notation.tex("eta sum||v*||^2") == r"$\eta \sum \|v^*\|^{2}$"
    assert notation.tex("J = int_{K/(D-K)}^1 de/(e H0) = D^a") == r"$J = \int_{K/(D-K)}^{1} d\xi/(\xi H_0) = D^{a}$"
    assert notation.tex("the sum of two") == "the sum of two"
    # a check's exponents of derived/printed, as the order of the ratio
    assert notation.tex("orders differ: exponents of derived/printed T 1/2, D -1/2") == (
        r"orders differ: derived/printed of order $T^{1/2} D^{-1/2}$")


def test_names_paths_and_products_of_symbols():
    assert notation.tex("(DKp^2 - 2Kp + 1)") == r"$(DKp^{2} - 2Kp + 1)$"
    assert notation.tex("equals 1-D quadrature") == "equals 1-D quadrature"
    assert notation.tex("p < 1/(1-D) here") == r"$p < 1/(1-D)$ here"
    assert notation.segments("(docs/models_and_conventions.md)") == (
        ("text", "("), ("code", "docs/models_and_conventions.md"), ("text", ")"))
    assert notation.tex("sum_{i' notin G^i} p_i'") == r"$\sum_{i' \notin G^{i}} p_i'$"
    assert notation.tex("relative error 0.0e+00 and 1.5e-27") == r"relative error $0$ and $1.5 \times 10^{-27}$"
    assert notation.tex("E[a^T XX^T a] here and (see a)") == r"$E[a^{T} XX^{T} a]$ here and (see a)"
    assert notation.tex("decreases to L_L^(inf) > 0") == r"decreases to $L_L^{(\infty)} > 0$"
