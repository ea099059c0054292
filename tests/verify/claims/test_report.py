"""The readable ledger (verify/claims/report.py): typeset prose, readable plots, and docs/claims.md's
counts equal to the ledger's."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from claims_runs import leftovers
from rdyn.verification.checks.record import Check
from rdyn.verification.claims import ledger as claims
from rdyn.verification.claims import report

DOCS = Path(__file__).resolve().parents[3] / "docs" / "claims.md"


def _small_ledger() -> claims.Ledger:
    labels = ("Theorem 3.1 (proof: S identity)", "Theorem 3.2", "Lemma D.17", "Theorem 3.1 (Step 3)")
    entries = [e for e in claims.entries("A") if e.label in labels]
    curve = {"x": [10.0, 20.0, 40.0], "y": [1.0, 0.5, 0.25], "claimed_exponent": -1.0,
             "config": "D=8, K=2, relu, eta=0.5 (default)"}
    steps = {"per_config": {"D=8, K=2, relu, eta=0.01042 (paper)": {"x": [1.0, 2.0, 4.0], "y": [1.0, 0.7, 0.5],
                                                                     "claimed_exponent": -1.0}}}
    run = [Check("A.claim.S_identity", "s", "printed S_error_F = D*(1 - K*p)/(K*(D - K)) at T_star", "discrepancy",
                 None, None, {"printed": "D*(1 - K*p)/(K*(D - K))", "derived": "D*(1 - K*p)/sqrt(K*(D - K))",
                              "worst_ratio": 2.0, "where": {"t_over_Tstar": 1.5, "config": "D=8"}}),
           Check("A.claim.thm32.ood", "s", "excess_loss ~ 1/T as e -> 0 with vstar_norm2 = 1", "pass", None, None, curve),
           Check("A.claim.step3.S_exponent.paper", "s", "||S^(T) - S*||_F exponent at eta = eta_limit/2", "pass",
                 None, None, steps),
           Check("A.flow.Tstar_exponent.D", "s", "eta T_star ~ K*D**3/vstar_norm2", "pass", None, None,
                 {"factor_values": [8.0, 16.0, 32.0], "measured_values": [1.0, 8.0, 64.0], "factor": "D",
                  "measured_quantity": "T_star", "claimed_exponent": 2.0})]
    return claims.Ledger([claims.judge(e, run) for e in entries], 1.0, True, "A")


def test_report_has_no_raw_sympy_or_code_names():
    ledger = _small_ledger()
    md, page = report.markdown(ledger), report.html_report(ledger)
    assert not leftovers(md, "md"), leftovers(md, "md")[:5]
    assert not leftovers(page, "html"), leftovers(page, "html")[:5]
    assert r"$T^*$" in md and "worst ratio $=$ 2" in md and "t / T" in md   # keys in words
    assert "<span class='m'>" in page and "<code>A.claim.S_identity</code>" in page


def test_report_plot_names_its_axes_and_series(monkeypatch):
    from matplotlib.axes import Axes

    seen: dict = {}
    for name in ("set_xlabel", "set_ylabel"):
        original = getattr(Axes, name)

        def spy(self, label, *args, _name=name, _original=original, **kwargs):
            seen.setdefault(_name, []).append(label)
            return _original(self, label, *args, **kwargs)
        monkeypatch.setattr(Axes, name, spy)
    series = report._series({"factor_values": [8.0, 16.0], "measured_values": [1.0, 8.0], "factor": "D",
                             "measured_quantity": "T_star"}, "A.flow.Tstar_exponent.D")
    assert [s[0] for s in series] == ["$T^*$ against $D$"]
    series = report._series({"x": [1.0, 2.0], "y": [1.0, 0.5], "config": "D=8, K=2, relu, eta=0.5 (default)"},
                            "A.claim.sec4.ood_slope")
    assert series[0][0] == r"ReLU, $D = 8$, $K = 2$, $\eta = 0.5$ ($\eta_{\lim}/2$)"
    ledger = _small_ledger()
    step3 = next(c for c in ledger.claims if c.entry.label == "Theorem 3.1 (Step 3)")
    assert report.rate_plot_png(step3)
    assert seen["set_xlabel"][-1] == "$T - T^*$" and seen["set_ylabel"][-1] == r"$\|S^{(T)} - S^*\|_F$"
    assert not any("x / x_last" in label or "A.claim" in label for label in seen["set_xlabel"] + seen["set_ylabel"])


def docs_counts(text: str) -> dict:
    """The numbers docs/claims.md states about the ledger's output."""
    m = re.search(r"So every one of the (\d+) corrections .*?, (\d+) \+ (\d+)\) is `proved` \((\d+)\), "
                  r"`certified` \((\d+)\) or `sampled` \((\d+)\)", text)
    rows = dict(re.findall(r"^\| ([AB]) \| ((?:\d+ \| )+\d+) \|$", text, flags=re.MULTILINE))
    return {"corrections": int(m.group(1)), "corrected": (int(m.group(2)), int(m.group(3))),
            "proved": int(m.group(4)), "certified": int(m.group(5)), "sampled": int(m.group(6)),
            "table": {p: [int(x) for x in row.split(" | ")] for p, row in rows.items()}}


def test_docs_counts_are_read():
    counts = docs_counts(DOCS.read_text(encoding="utf-8"))
    assert counts["corrections"] == sum(counts["corrected"])
    assert counts["proved"] + counts["certified"] + counts["sampled"] == counts["corrections"]
    assert set(counts["table"]) == {"A", "B"}
    assert all(row[-1] == sum(row[:-1]) for row in counts["table"].values())


@pytest.mark.slow
def test_docs_counts_equal_the_ledgers():
    """docs/claims.md's summary table and correction counts are the ledger's (quick sizes)."""
    ledger = claims.evaluate("all", quick=True)
    counts = docs_counts(DOCS.read_text(encoding="utf-8"))
    table = {p: [row[v] for v in claims.VERDICTS] + [sum(row.values())] for p, row in ledger.counts().items()}
    assert counts["table"] == table
    fixes = [c.correction for c in ledger.claims if c.correction]
    summary = ledger.summary()
    assert counts["corrected"] == (summary["A"]["corrected"], summary["B"]["corrected"])
    assert counts["corrections"] == len(fixes)
    assert counts["proved"] == sum(f["strength"] == "proved" for f in fixes)
    assert counts["certified"] == sum(f["strength"] == "certified" for f in fixes)
    assert counts["sampled"] == sum(f["strength"] == "sampled" for f in fixes)
