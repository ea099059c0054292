"""rdyn.verification.checks.registry: id patterns, group selection, --only, the stderr summary; and the
process-state hygiene that makes verdicts pure (issue 9)."""
import mpmath
import pytest
import sympy as sp

from rdyn.derivations import gaussian as g
from rdyn.derivations.numeric import at_correlation, evaluate
from rdyn.cli import main
from rdyn.verification.checks import registry
from rdyn.verification.checks.record import Check


def test_patterns_are_literal_except_star_and_question_mark():
    assert registry.id_matches("A.F.E[x s(x) s'(x)].relu", "A.F.E[x s(x)*.relu")
    assert not registry.id_matches("A.F.E[x s(x) s'(x)].relu", "A.F.E[xy]*")
    assert registry.id_matches("A.gauss.s_s.leaky", "A.gauss.?_s.*")
    assert not registry.id_matches("A.gauss.s_s.leaky", "A.gauss")


def test_overlap_is_conservative():
    assert registry.may_overlap("A.gauss.*", "A.*")
    assert registry.may_overlap("A.g*", "A.gauss.*")
    assert not registry.may_overlap("B.*", "A.gauss.*")
    assert not registry.may_overlap("A.lemmaD5.factor", "A.lemmaD13.*")


def test_every_group_declares_its_paper_prefix():
    for group in registry.GROUPS:
        for pattern in group.ids:
            assert pattern.startswith((f"{group.paper}.", f"S.{group.paper}."))


def test_only_selects_groups_and_filters_ids():
    names = [g.name for g in registry.select_groups(only=["A.F.printed.*"])]
    assert names == ["A.printed_appendix_f"]
    checks = registry.run_checks(only=["A.F.printed.E[x s(x)*"])
    assert [c.id for c in checks] == ["A.F.printed.E[x s(x) s'(x)]"]
    assert checks[0].status == "pass"


def test_undeclared_id_is_an_error(monkeypatch):
    group = registry.CheckGroup("X", "A", "rdyn.verification.checks.model_a", "printed_appendix_f_checks",
                                ("A.something_else.*",))
    with pytest.raises(RuntimeError, match="not declared"):
        group.call(quick=True)


def test_counts_line():
    checks = [Check("A.x", "s", "c", "pass"), Check("S.B.ln.gamma.t.exponent", "s", "c", "info"),
              Check("B.y", "s", "c", "fail")]
    line = registry.counts_line(checks)
    assert line == ("`rdyn verify --quick`: Model A 1 pass, 0 fail, 0 discrepancy, 0 info; "
                    "Model B 0 pass, 1 fail, 0 discrepancy, 1 info (3 checks).")


def test_cli_only_and_stderr_summary(capsys):
    assert main(["verify", "--only", "A.F.printed.*"]) == 0
    captured = capsys.readouterr()
    assert "A.F.printed.E[x s(x) s'(x)]" in captured.out
    assert "rdyn verify: 2 pass, 0 fail, 0 discrepancy, 0 info (2 checks)" in captured.err
    assert main(["verify", "--only", "Z.*"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["rdyn verify: error: --only: no check id can match Z.*"]


def test_failing_ids_are_listed_on_stderr(monkeypatch, capsys):
    bad = [Check("A.bad.one", "s", "c", "fail"), Check("A.good", "s", "c", "pass")]
    monkeypatch.setattr(registry, "run_checks", lambda **kw: bad)
    assert main(["verify", "--only", "A.*"]) == 1
    err = capsys.readouterr().err
    assert "rdyn verify: 1 pass, 1 fail" in err and "failing: A.bad.one" in err


# --------------------------------------------------------------------- purity of evaluation

def test_at_correlation_near_one_is_exact_where_sympy_subs_is_not():
    """E[s(u) s(v)] (ReLU, unit variances) at rho = 1 - 1e-10: the value from cos/sin replaced
    structurally agrees with an independent 50-digit evaluation through atan2; sympy's
    auto-evaluated cos(acos(r)) (process-dependent, sympy #23086) is not used."""
    expr = g.bivariate_form("s_s", "relu")
    value = at_correlation(expr, g.theta, "0.9999999999", dps=40, sd1=1, sd2=1)
    with mpmath.workdps(60):
        rho = mpmath.mpf(9999999999) / 10**10
        s = mpmath.sqrt((1 - rho) * (1 + rho))
        th = mpmath.atan2(s, rho)
        ref = (-th * rho + s + mpmath.pi * rho) / (2 * mpmath.pi)
        assert abs(value - ref) / ref < mpmath.mpf(10) ** -38


def test_evaluate_restores_precision_and_is_independent_of_it():
    x = sp.Symbol("x", positive=True)
    expr = sp.acos(sp.sqrt(x) / sp.sqrt(x + 1))
    before = mpmath.mp.dps
    with mpmath.workdps(5):
        low = evaluate(expr, {x: sp.Rational(1, 3)}, dps=30)
    high = evaluate(expr, {x: sp.Rational(1, 3)}, dps=30)
    assert mpmath.mp.dps == before and low == high
    with mpmath.workdps(50):
        assert abs(high - mpmath.pi / 3) < mpmath.mpf(10) ** -30


def test_teacher_run_does_not_touch_global_precision():
    import flint

    from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig, run

    mp_before, flint_before = mpmath.mp.prec, flint.ctx.prec
    cfg = TeacherConfig(D=8, K=2)
    with mpmath.workdps(80):
        high = run(cfg, steps=50, backend="mpmath", dps=20).final
    low = run(cfg, steps=50, backend="mpmath", dps=20).final
    run(cfg, steps=50, backend="arb", dps=20)
    assert (mpmath.mp.prec, flint.ctx.prec) == (mp_before, flint_before)
    assert (high.C1, high.C2, high.C3) == (low.C1, low.C2, low.C3)
