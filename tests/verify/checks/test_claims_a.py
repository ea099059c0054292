"""Theorem 3.2 and Section 4.1's OOD entries (verify/checks/claims_a.py): decided by the derivation over the
theorem's class of Y and by the paper's noisy estimator, each with its own figure data."""
import numpy as np
import pytest

from rdyn.verification.checks import claims_a as ca
from rdyn.verification.checks.record import Check
from rdyn.verification.claims import ledger as claims


def _entry(label):
    return next(e for e in claims.LEDGER if (e.paper, e.label) == ("A", label))


@pytest.fixture(scope="module")
def thm32():
    return ca.thm32_checks(True)


def test_theorem_32_worst_case_rate_is_a_discrepancy_confirmed_by_monte_carlo(thm32):
    rate, worst = thm32
    assert (rate.id, rate.status) == ("A.claim.thm32.rate", "discrepancy")
    assert (worst.id, worst.status) == ("A.claim.thm32.worst_case", "pass")
    row = rate.detail["per_config"][0]
    assert max(row["monte_carlo_z"]) < ca.THM32_Z_MAX
    assert abs(row["extrapolated_ratio_at_e_0"] - 1) <= ca.THM32_EXTRAPOLATION_TOL
    # the attaining Y's excess falls like T^(-1/2): sqrt(T) x excess stays within a factor 2 over [4, 64] T*
    # (1/T would shrink it by 4 over T*(5 .. 65)), and the local slopes lie in (-0.7, -0.5)
    sqrtT = row["sqrt_T_times_excess"]
    assert max(sqrtT) / min(sqrtT) < 2
    assert all(-0.7 < s < -0.5 for s in row["local_slopes"])
    assert rate.detail["exponent_of_derived_over_printed"] == {"T": "1/2"}
    # the entry's figure: its deciding data, the printed exponent dashed
    assert rate.detail["claimed_exponent"] == -1.0 and rate.detail["y"] == row["measured_values"]


def test_y_with_vanishing_cross_term_falls_like_one_over_t():
    """The printed O(1/T) is what a Y whose cross term vanishes gives (Y = f* here): the same Monte Carlo
    with coef 0 is the noise-free population excess, whose local slopes are near -1."""
    tr = ca._trajectories(True, "default")[0]
    idx = ca._phase3(tr)[[0, -1]]
    mean, _ = ca.ood_attaining_excess(tr, idx, 0.0, 0.0, samples=4000)
    slope = np.log(mean[1] / mean[0]) / np.log((tr.t[idx[1]] - tr.T_star) / (tr.t[idx[0]] - tr.T_star))
    assert -1.15 < slope < -0.85


def test_theorem_32_entries_are_decided_by_the_derivation(thm32):
    for label in ("Theorem 3.2", "Section 4.1 (OOD rate)"):
        e = _entry(label)
        assert e.decide == ("A.claim.thm32.rate",) and "A.errata.ood" in e.context
    rate, worst = thm32
    result = claims.judge(_entry("Theorem 3.2"), [rate, worst])
    assert result.verdict == "discrepancy" and result.kind in ("wrong_rate", "extraction_suspect")
    assert result.root_causes == ["ood_worst_case_rate"] and result.correction["verdict"] == "pass"


def test_ood_slope_is_inconclusive_when_every_window_excludes_the_printed_slope():
    c = ca.ood_batch_check(True)
    assert c.status == "info" and "every measured window excludes" in c.detail["undecided"]["reason"]
    result = claims.judge(_entry("Section 4.1 (OOD slope)"), [c])
    assert result.verdict == "inconclusive"
    # the figure plots the deciding estimator: one curve per positive batch, with the printed -0.5
    series = c.detail["per_config"]
    assert series and all(s["claimed_exponent"] == -0.5 and min(s["y"]) > 0 for s in series.values())
    windows = [r["context_fit"] for r in c.detail["per_batch"] if "context_fit" in r]
    assert windows and all(not (w["window_ci95"][0] <= -0.5 <= w["window_ci95"][1]) for w in windows)
    # ... and the paper's own experiment: online SGD, its window from T - T* = T* on, drawn in the same figure
    sgd = c.detail["sgd_experiment"]
    assert sgd["steps"] == 3000 and sgd["eta"] == 0.5 and sgd["diverged_at_step"] is None
    assert sgd["T_star_collapsed"] == 96 and min(sgd["context_fit"]["x"]) >= sgd["T_star_collapsed"]
    assert any(k.startswith("online SGD") and v["y"] == sgd["context_fit"]["y"] for k, v in series.items())
    lo, hi = sgd["context_fit"]["window_ci95"]
    assert lo <= -1 and -0.5 <= hi      # it holds both slopes: context, it separates neither
    assert "does not separate" in c.detail["undecided"]["reason"]


@pytest.mark.parametrize("interval, status", [((-0.6, -0.4), "pass"), ((-1.2, -0.4), "info"), ((-1.2, -0.9), "info")])
def test_sgd_window_counts_only_when_it_excludes_the_population_slope(monkeypatch, interval, status):
    """The SGD experiment's window is an observation of -0.5 only when it holds -0.5 and excludes -1."""
    real = ca.sgd_ood_experiment(True)
    fake = {**real, "context_fit": {**real["context_fit"], "window_ci95": list(interval)}}
    monkeypatch.setattr(ca, "sgd_ood_experiment", lambda quick: fake)
    assert ca.ood_batch_check(True).status == status


def test_ood_slope_passes_when_a_measured_window_holds_the_printed_slope(monkeypatch):
    original = ca.fit_rule.context_fit

    def widened(claimed, x, y, decided_by):
        out = original(claimed, x, y, decided_by)
        return {**out, "window_ci95": [-2.0, 0.0]}

    monkeypatch.setattr(ca.fit_rule, "context_fit", widened)
    c = ca.ood_batch_check(True)
    assert c.status == "pass" and "undecided" not in c.detail


def test_ood_figures_plot_their_deciding_checks():
    """rate_plot_png draws the deciding checks' series, not a context check's, when the deciding ones have
    points: with and without the noise-free population curve as context the PNG is the same."""
    from rdyn.verification.claims import report

    batch = Check("A.claim.sec4.ood_slope_batch", "s", "c", "info", None, None,
                  {"per_config": {"batch": {"x": [1.0, 2.0, 4.0], "y": [3.0, 2.0, 1.5], "claimed_exponent": -0.5}}})
    context = Check("A.claim.sec4.ood_slope", "s", "c", "discrepancy", None, None,
                    {"x": [1.0, 2.0, 4.0], "y": [1.0, 0.5, 0.25], "claimed_exponent": -0.5})
    entry = _entry("Section 4.1 (OOD slope)")
    with_context = report.rate_plot_png(claims.judge(entry, [batch, context]))
    alone = report.rate_plot_png(claims.judge(entry, [batch]))
    assert with_context is not None and with_context == alone
    # a context curve is still drawn when the deciding checks have none
    empty = Check("A.claim.sec4.ood_slope_batch", "s", "c", "info", None, None, {})
    assert report.rate_plot_png(claims.judge(entry, [empty, context])) is not None
