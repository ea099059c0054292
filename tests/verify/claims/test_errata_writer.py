"""The erratum as a referee reads it (verify/claims/errata_writer.py, verify/claims/notation.py):
typeset prose, one notation, a .tex that pdflatex compiles, readable figures."""
from __future__ import annotations

import os
import re
import shutil
import subprocess

import pytest

from claims_runs import CODE_NAMES, leftovers
from rdyn.verification.checks.record import Check
from rdyn.verification.claims import errata, errata_writer, notation
from rdyn.verification.claims import ledger as claims

ROWS = [{"config": "D=8, K=2, relu, eta=0.01042 (paper)", "measured_quantity": "one_over_K_minus_p", "T": [200.0, 400.0, 800.0], "T_star": 100,
         "measured_values": [0.5, 0.25, 0.125], "derived_values": [0.45, 0.24, 0.124]},
        {"config": "D=12, K=3, leaky, kappa=0.1, eta=0.495 (default)", "T": [300.0, 600.0, 1200.0], "T_star": 150,
         "measured_values": [0.4, 0.2, 0.1], "derived_values": [0.41, 0.2, 0.1]}]


def _discrepant_ledger() -> claims.Ledger:
    """Every entry of the ledger with a correction, made a discrepancy by checks whose claims and details
    are written the way the real checks write them (code names, sympy strings, plain-text mathematics)."""
    run, seen = [], set()
    for (paper, label), cls in errata.CLASSIFICATION.items():
        entry = next(e for e in claims.LEDGER if (e.paper, e.label) == (paper, label))
        for pattern in entry.decide[:1]:
            cid = pattern.replace("*", "relu").replace("?", "x")
            if cid not in seen:
                seen.add(cid)
                run.append(Check(cid, "s", f"printed excess_loss = Theta(K*D**4/(eta*T)) against derived "
                                 f"(kappa + 1)**2/4; T_star at eta = eta_limit/2, vstar_norm2 = 1, 1 - K p <= 1/2", "discrepancy",
                                 None, None, {"printed": "K*D**4/(eta*T)", "derived": "D**2*K*(D - K)/(4*T*eta)"}))
        for pattern in cls.correction.checks if cls.correction else ():
            cid = pattern.replace("*", "relu")
            if cid not in seen:
                seen.add(cid)
                run.append(Check(cid, "s", "one_over_K_minus_p ~ derived asymptote (logits/D); measured/derived -> 1 "
                                 "as e -> 0: max |r0 - 1| = 0.0019 over 5 trajectories", "pass", 0.001, None,
                                 {"per_config": ROWS, "measured_quantity": "one_over_K_minus_p",
                                  "expression": "D**2*K*(D - K)/(4*T*eta)"}))
    entries = [e for e in claims.LEDGER if (e.paper, e.label) in errata.CLASSIFICATION]
    return claims.Ledger([claims.judge(e, run) for e in entries], 1.0, True, "all")


@pytest.fixture(scope="module")
def ledger():
    return _discrepant_ledger()


@pytest.fixture(scope="module")
def written(ledger, tmp_path_factory):
    folder = tmp_path_factory.mktemp("erratum")
    out = {}
    for ext in ("tex", "md", "html"):
        errata_writer.write(ledger, str(folder / f"erratum.{ext}"))
        out[ext] = (folder / f"erratum.{ext}").read_text(encoding="utf-8")
    return folder, out


def test_prose_is_typeset_with_one_notation():
    t = notation.tex
    assert t("||S^(T) - S*||_F = Theta(1/T)") == r"$\|S^{(T)} - S^*\|_F = \Theta (1/T)$"
    assert t("at eta = eta_limit/2 and T -> oo") == r"at $\eta = \eta_{\lim}/2$ and $T \to \infty$"
    assert t("printed Theta(K*D**4/(eta*T))") == r"printed $\Theta\left(\frac{D^{4} K}{T \eta}\right)$"
    assert t("A(t) = (kappa + 1)**2/4") == r"$A(t) = \frac{\left(\kappa + 1\right)^{2}}{4}$"
    # e as a variable is xi; Euler's number keeps e (before an exponent with a variable)
    assert t("O(e^2) and e^{-2(C2+C3)/D}") == r"$O(\xi^{2})$ and $e^{-2(C_2+C_3)/D}$"
    assert t("the papers' eta, T_star and vstar_norm2") == r"$\eta_{\mathrm{paper}}$, $T^*$ and $M$"
    # <, >, | in text mode are escaped (OT1 prints them as other glyphs); a check id is a reference
    assert notation.tex_escape("a < b > c | d") == r"a \textless{} b \textgreater{} c \textbar{} d"
    assert t("A.errata.late.excess_loss [pass]").startswith(r"\texttt{A.\allowbreak{}errata")
    assert notation.html("T >= T_star") == "<span class='m'><i>T</i> ≥ <i>T</i><sup>*</sup></span>"
    assert notation.markdown("1 - K p") == "$1 - K p$"
    with pytest.raises(AssertionError):   # the scan sees what it guards against
        assert not leftovers(r"x = K*D**4 and excess\_loss", "tex")


def test_notation_defines_eta_lim_and_the_papers_eta_as_the_code_computes_them():
    """The Notation section's eta_lim is the derived step-size supremum and eta_paper the papers' step
    size of verify/claims/trajectories.py, at several sizes."""
    from fractions import Fraction

    import sympy as sp

    from rdyn.reduced_dynamics.model_a.kernels import eta_limit_expression
    from rdyn.verification.claims.trajectories import paper_eta

    symbols = dict(errata_writer.SYMBOLS["A"])
    lim = next(s for s in symbols if s.startswith(r"\eta_{\lim}"))
    assert r"\frac{2K}{D\,E[\sigma(g)^2]}" in lim and "identity 2K/D, ReLU 4K/D" in symbols[lim]
    D, K, kappa = sp.symbols("D K kappa", positive=True)
    second_moment = {"identity": 1, "relu": sp.Rational(1, 2), "leaky": (1 + kappa**2) / 2}   # E[sigma(g)^2]
    for act, m2 in second_moment.items():
        derived = eta_limit_expression(act).subs({s: sp.Symbol(s.name, positive=True) for s in
                                                  eta_limit_expression(act).free_symbols})
        assert sp.simplify(derived - 2 * K / (D * m2)) == 0, act
    paper = next(s for s in symbols if s.startswith(r"\eta_{\mathrm{paper}}"))
    assert r"\frac{K}{D}, \frac{K^3(D-K)}{M D^3 (D+1)}" in paper
    for d, k, m in ((8, 2, 1.0), (20, 4, 2.5), (12, 3, 0.5)):
        assert paper_eta(d, k, m) == pytest.approx(min(Fraction(k, d), k**3 * (d - k) / (m * d**3 * (d + 1))), rel=1e-15)


def test_rendered_erratum_has_no_raw_sympy_or_code_names(written):
    _, out = written
    for ext, text in out.items():
        assert not leftovers(text, ext), (ext, leftovers(text, ext)[:5])
    tex = out["tex"]
    body = re.sub(r"\$[^$]*\$|\\texttt\{(?:[^{}]|\{[^{}]*\})*\}|^\\fitformula\{.*\}$", " ", tex, flags=re.MULTILINE)
    assert not re.search(r"(?<!\\)[<>|]", body.split(r"\begin{document}")[1])   # text mode: escaped
    # every symbol once, in a Notation section at the top of each paper; xi, not e, for exp(-(C2+C3)/D)
    for text in (tex, out["md"], out["html"]):
        assert text.count("Notation") == 2 and "Euler" in text
    assert r"\xi = \exp\left(-\frac{C_2+C_3}{D}\right)" in tex and r"p(T) = \frac{1}{K + (D-K)\xi}" in tex
    assert "Cause 1:" in tex and "root cause: cause" in tex and "wrong rate" in tex
    for name in CODE_NAMES:
        assert name not in out["html"].split("<body>")[1].replace("<code>", "\0").split("\0")[0]


@pytest.mark.skipif(shutil.which("pdflatex") is None, reason="pdflatex is not installed")
def test_the_tex_erratum_compiles_with_pdflatex(written):
    folder, _ = written
    run = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error", "erratum.tex"], cwd=folder,
                         capture_output=True, text=True, timeout=300)
    log = (folder / "erratum.log").read_text(encoding="latin-1")
    errors = [line for line in log.splitlines() if line.startswith("!")]
    assert run.returncode == 0 and not errors, errors[:5]
    assert "Missing character" not in log
    assert os.path.getsize(folder / "erratum.pdf") > 10000


def test_figure_legends_and_axes_say_what_is_drawn(ledger, monkeypatch):
    """The erratum's plots: a legend per configuration in words and symbols, axes in words."""
    from matplotlib.axes import Axes

    seen = {}
    for name in ("set_xlabel", "set_ylabel", "legend"):
        original = getattr(Axes, name)

        def spy(self, *args, _name=name, _original=original, **kwargs):
            if _name == "legend":
                seen["legend"] = [t.get_label() for t in self.get_lines() if not t.get_label().startswith("_")]
            else:
                seen[_name] = args[0]
            return _original(self, *args, **kwargs)
        monkeypatch.setattr(Axes, name, spy)
    entry = next(c for c in ledger.claims if c.entry.label == "Lemma D.18")
    assert errata_writer._plot_png(ledger, "A", entry.entry.label)[:4] == b"\x89PNG"
    assert seen["legend"] == [r"ReLU, $D = 8$, $K = 2$, $\eta = 0.01042$ ($\eta_{\mathrm{paper}}$)",
                              r"Leaky ReLU, $D = 12$, $K = 3$, $\kappa = 0.1$, $\eta = 0.495$ ($\eta_{\lim}/2$)"]
    assert seen["set_xlabel"] == r"GD steps after $T^*$: $T - T^*$" and seen["set_ylabel"] == r"$1/K - p(T)$"


def test_every_root_cause_has_a_title():
    assert set(errata.ROOT_CAUSES) <= set(errata_writer.CAUSE_TITLES)
    assert set(errata.KINDS) <= set(errata_writer.KIND_WORDS)


def test_the_Tstar_formula_carries_the_remainder_of_the_statement():
    """Lemma D.17's typeset two-term law has the o((D-K)^(-1/2)) of its corrected statement."""
    spec = errata.CLASSIFICATION[("A", "Lemma D.17")].correction
    assert "+ o((D-K)^(-1/2))" in spec.statement
    fix = {"quantity": spec.quantity, "relation": spec.relation,
           "expression": {"identity": "D*K*(D - K)**2/(vstar_norm2*eta)"}}
    which, law = errata_writer.corrected_formulas(fix, "Lemma D.17")[0]
    assert law.startswith(r"\eta T^* = D(D-K)^2") and r"+ o\left((D-K)^{-1/2}\right)" in law
    assert "every activation" in which
    from rdyn.verification.claims.page import mathtext_svg
    assert mathtext_svg(law) is not None
