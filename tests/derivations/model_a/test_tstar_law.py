"""Lemma D.17's law for the identity (rdyn.derivations.model_a.tstar_law): every obligation holds, the positivity tests
refuse false claims, the derived pieces have the values a hand computation gives, the explicit bounds contain
the gradient flow's tau_star computed independently (Radau, and mpmath at 30 digits), steps 4-6's inequalities
refuse mutated constants, and the law is not `proved` while a step is unchecked or an obligation is a sympy limit
(a mutated obligation fails)."""
import math

import pytest
import sympy as sp

from rdyn.derivations.model_a import collapsed as ma
from rdyn.derivations.model_a import tstar_law as tl

D, K, v = ma.D, ma.K, ma.vstar_norm2
x, sigma = tl.x, tl.sigma


@pytest.mark.parametrize("scale", tl.SCALES)
def test_every_obligation_holds(scale):
    law = tl.prove(scale)
    assert law.checked, [o.name for o in law.obligations if not o.holds]
    assert not law.proved
    assert len(law.obligations) == 28
    assert [o.name for o in law.obligations if o.method == "limit_rules"] == ["hypothesis_eventually",
                                                                             "leading_order", "no_I1"]
    assert not [o for o in law.obligations if o.method == "sympy_limit"]
    assert len(law.exact_obligations) == 28          # limit_rules obligations count as machine-checked
    assert law.limits == {"tau_lo": K / v, "tau_lo_I1": 0, "tau_hi": K / v, "tau_hi_I1": 0}


def test_derived_pieces_match_a_hand_computation():
    """mu = v/(K^2 D^2) (logits/D) and v/(K^2 D) (logits/sqrtD); J = int_{K/N}^1 de/(e H0) equals
    D^a (K/v)(N^2 - K^2 + 2 K N log(N/K)) (integrated by hand: K (K + N e^2)^2/(v e^3) termwise)."""
    N = D - K
    by_hand = K / v * (N**2 - K**2 + 2 * K * N * sp.log(N / K))
    for scale, mu, a in (("D", v / (K**2 * D**2), 1), ("sqrtD", v / (K**2 * D), 0)):
        law = tl.prove(scale)
        assert sp.simplify(law.mu - mu) == 0
        values = {D: 37, K: 3, v: sp.Rational(7, 5)}
        assert abs(sp.N((law.J - D**a * by_hand).subs(values), 40)) < 1e-30
        assert sp.simplify(law.leading - D**a * N**2) == 0


def test_positivity_tests_refuse_false_claims():
    # the true sup of psi is 0.5197 and of psi/x^2 is 0.7184: constants just below are refused
    assert tl.nonnegative_on(sp.Rational(53, 100) - tl.PSI, x, 0)
    assert not tl.nonnegative_on(sp.Rational(51, 100) - tl.PSI, x, 0)
    assert not tl.nonnegative_on(sp.Rational(7, 10) - tl.PSI / x**2, x, 0)
    # an even root is allowed, an odd one inside the interval is not, one outside is
    assert tl.nonnegative_on((x - 1)**2, x, 0)
    assert not tl.nonnegative_on(x - 1, x, 0)
    assert tl.nonnegative_on(x - 1, x, 1)
    assert tl.nonnegative_on(x - 1, x, 2, 3) and not tl.nonnegative_on(x - 1, x, 0, 3)
    # a pole inside the interval is refused even when the expression keeps its sign around it
    assert not tl.nonnegative_on(1 / (x - 1)**2, x, 0) and tl.nonnegative_on(1 / (x - 1)**2, x, 2)
    # the bivariate test: true with sigma <= 1, refused when a coefficient has the wrong sign
    assert tl.coefficient_nonnegative(1 + x - sigma)
    assert not tl.coefficient_nonnegative(sigma - x)
    assert not tl.coefficient_nonnegative(tl.PSI / 2 - x**3 * (sigma + x) / (1 + x**2)**4)


BAND_STEPS = ["edge_rate", "edge_repels", "transient_contraction", "x_speed", "start_stretch", "band_ratio"]


def _band_checks(bounds) -> dict:
    obligations = tl._Obligations()
    tl.band_obligations(obligations.claim, bounds)
    return {o.name: o.holds for o in obligations}


def test_steps_four_to_six_are_exact_obligations(monkeypatch):
    """Steps 4-6's inequalities hold for both laws' constants, and each refuses a mutation: (H1) without its
    (1 + c mu Z) factor (the lower edge needs it), an edge rate with the sign of its x' term flipped, a band
    factor c = 1 (the transient no longer contracts) and a constant of step 5 that step 3 does not prove."""
    import dataclasses

    from rdyn.derivations.model_a import tstar_law_relu as tr

    assert [o.name for o in tl.prove("D").obligations if o.name in BAND_STEPS] == BAND_STEPS
    assert _band_checks(tl.IDENTITY_BOUNDS) == dict.fromkeys(BAND_STEPS, True)
    assert _band_checks(tr.BOUNDS) == dict.fromkeys(BAND_STEPS, True)
    b = tl.IDENTITY_BOUNDS
    with monkeypatch.context() as patch:
        patch.setattr(tl, "_repelling", lambda b, m: (1 + m * b.psi_sup) * ((1 + m * b.psi_sup) + m * b.xi_w_sup)
                      - tl.BAND_FACTOR)
        assert _band_checks(b)["edge_repels"] is False
    edge_rate = tl.edge_rate
    with monkeypatch.context() as patch:
        patch.setattr(tl, "edge_rate", lambda side: edge_rate(side).subs(tl._ell, -tl._ell))
        assert _band_checks(b)["edge_rate"] is False
    with monkeypatch.context() as patch:
        patch.setattr(tl, "BAND_FACTOR", 1)
        assert _band_checks(b)["transient_contraction"] is False
        # (H1) then bounds the edges' rate still, but no m >= 0 satisfies it
        assert tl._repelling(b, sp.Integer(0)) == 0
    # psi(1/sigma) >= 3 sigma^2/5 is false near sigma = 1 (psi(1/sigma)/sigma^2 falls to 1/2 there): step 3 refuses
    # the constant T0 would use
    with monkeypatch.context() as patch:
        patch.setattr(tl, "IDENTITY_BOUNDS", dataclasses.replace(b, psi_start=sp.Rational(3, 5)))
        law = tl.prove.__wrapped__("D")
        assert [o.name for o in law.obligations if not o.holds] == ["psi_at_start"]


def test_hypothesis_threshold():
    """(H) holds at every D >= D0 and fails at D0 - 1 (||V*||^2 = 1): pinned values; "every D >= D0" decided exactly
    (``hypothesis_from``: the conditions at a rational s below s(D0), then decreasing in D), and a condition that
    grows with D, or is positive at D0, is refused."""
    for scale, K_value, D0 in (("D", 1, 16), ("D", 2, 16), ("D", 3, 18), ("sqrtD", 2, 41), ("sqrtD", 3, 38)):
        law = tl.prove(scale)
        assert tl.hypothesis_holds(law, D0, K_value, 1.0)
        assert not tl.hypothesis_holds(law, D0 - 1, K_value, 1.0)
        assert tl.hypothesis_from(law, D0, K_value, 1) and not tl.hypothesis_from(law, D0 - 1, K_value, 1)
        assert tl.threshold(law, K_value, 1, start=D0 - 3) == D0
    import types

    grows = types.SimpleNamespace(conditions=(("X", D / K - 10**6),))          # negative at D = 10, grows with D
    assert tl.hypothesis_holds(grows, 10, 1, 1) and not tl.hypothesis_from(grows, 10, 1, 1)
    falls = types.SimpleNamespace(conditions=(("X", 4 + sp.log(D) / D - (D - K) / K),))
    assert tl.hypothesis_from(falls, 7, 1, 1) and not tl.hypothesis_from(falls, 5, 1, 1)
    negative_log = types.SimpleNamespace(conditions=(("X", -sp.log(D) - 1),))   # Q < 0: not decided
    assert tl.hypothesis_holds(negative_log, 10, 1, 1) and not tl.hypothesis_from(negative_log, 10, 1, 1)
    with pytest.raises(ValueError, match="hypothesis"):
        tl.bounds(tl.prove("D"), 10, 2, 1.0)


@pytest.mark.parametrize("scale,D_value,K_value,v_value", [("D", 40, 2, 1.0), ("D", 120, 3, 2.0),
                                                           ("sqrtD", 120, 2, 0.5)])
def test_bounds_contain_the_flow(scale, D_value, K_value, v_value):
    """The float64 flow (Radau, with its events) and the 30-digit slow-manifold route give tau_star inside
    [tau_lo, tau_hi]; the upper bound is within 1% of it (the lower one carries the crude transient term)."""
    from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig
    from rdyn.reduced_dynamics.model_a.limits.flow import phase_limits

    law = tl.prove(scale)
    lo, hi = (float(b) for b in tl.bounds(law, D_value, K_value, v_value))
    config = TeacherConfig(D_value, K_value, "identity", vstar_norm2=v_value, logit_scale=scale)
    for method, dps in (("flow", None), ("slow", 30)):
        tau = float(phase_limits(config, method, dps=dps).tau_star)
        assert lo < tau < hi
        assert hi / tau - 1 < 0.01


def test_bounds_tighten_with_D():
    law = tl.prove("D")
    widths = []
    for D_value in (50, 500, 5000):
        lo, hi = (float(b) for b in tl.bounds(law, D_value, 2, 1.0))
        leading = D_value * (D_value - 2)**2 * 2
        widths.append((hi - lo) / leading)
        # the ratios approach 1 at the rate of J's 2 K N log(N/K) term
        for ratio in (lo / leading, hi / leading):
            assert abs(ratio - 1) < 3 * 2 * math.log(D_value) / (D_value - 2)
    assert widths[0] > widths[1] > widths[2] and widths[2] < 1e-3


def test_obligations_are_recomputed_not_looked_up():
    """A wrong band constant makes its obligation fail (the constants are checked, not trusted)."""
    assert not tl.nonnegative_on(sp.Rational(4) - sp.cancel(tl.XI * tl.W_BAR), x, 0)
    assert tl.nonnegative_on(tl.CONSTANTS["Xi"] - sp.cancel(tl.XI * tl.W_BAR), x, 0)


def test_proved_needs_every_step_checked_exactly():
    """``proved`` is False while a step is unchecked, an obligation is a sympy limit, or one fails; with every
    step exact and none unchecked it would be True (the mutations below)."""
    import dataclasses

    exact = tl.Obligation("a", "a holds", True)
    limit = tl.Obligation("b", "a limit", True, "sympy_limit")
    by_rules = tl.Obligation("c", "a limit by rdyn.derivations.limits", True, "limit_rules")

    @dataclasses.dataclass(frozen=True)
    class Law(tl._Proof):
        obligations: tuple
        unchecked_steps: tuple = ()

    assert Law((exact,)).proved and Law((exact,)).checked
    assert not Law((exact, limit)).proved and Law((exact, limit)).checked
    assert Law((exact, by_rules)).proved
    assert not Law((exact,), tl.UNCHECKED_STEPS).proved
    assert not Law((dataclasses.replace(exact, holds=False),)).checked
    assert [name for name, _ in tl.UNCHECKED_STEPS] == ["flow_limit", "calculus_frame"]
    with pytest.raises(ValueError, match="method"):
        tl._Obligations().claim("c", "text", True, "by inspection")


@pytest.mark.parametrize("scale,D_value,K_value,j_error,lead_error", [
    ("D", 8, 2, -1.4e-3, -0.384), ("D", 12, 3, -2.8e-4, -0.383), ("D", 50, 3, -4.6e-6, -0.258),
    ("sqrtD", 8, 2, -1.1e-2, -0.390), ("sqrtD", 12, 3, -3.3e-3, -0.385), ("sqrtD", 50, 3, -2.3e-4, -0.258)])
def test_exact_integral_J_against_the_flow(scale, D_value, K_value, j_error, lead_error):
    """The accuracy the D.17 erratum states (verify/claims/errata.py): J/tau_star - 1 and the leading term's
    D^a (D-K)^2 K/v over tau_star, minus 1, with tau_star from the float64 flow (Radau), v = 1."""
    from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig
    from rdyn.reduced_dynamics.model_a.limits.flow import phase_limits

    law = tl.prove(scale)
    values = {D: D_value, K: K_value, v: 1}
    J = float(law.J.subs(values))
    lead = float((law.leading * K / v).subs(values))
    tau = float(phase_limits(TeacherConfig(D_value, K_value, "identity", logit_scale=scale), "flow").tau_star)
    assert J / tau - 1 == pytest.approx(j_error, rel=0.05)
    assert lead / tau - 1 == pytest.approx(lead_error, abs=0.001)


def test_certified_map_T_star_lies_inside_the_flow_bounds():
    """An independent route for the explicit bounds: the papers'-eta proof sweep certified the map's T* at every
    grid instance (tests/verify/proofs/sweep_paper_verdicts.json, interval arithmetic). For K <= 4, ||V*||^2 = 1 and
    every D >= D0 of that grid (55 instances, identity and ReLU, logits/D), eta T* lies between tau_lo and tau_hi.
    That is the map at a finite eta, not the flow, so this is evidence beside the law, not a step of it; the upper
    bound is 0.13% to 2.8% above eta T* for the identity, the lower bound is below 0 at all but three (identity,
    D = 23, 24)."""
    import json
    import pathlib

    import mpmath

    from rdyn.derivations.model_a import tstar_law_relu as tr
    from rdyn.verification.proofs.sweep import paper_eta

    record = json.loads((pathlib.Path(__file__).parents[2] / "verify" / "proofs" / "sweep_paper_verdicts.json")
                        .read_text())
    laws = {"identity": tl.prove("D"), "relu": tr.prove("relu", "D")}
    thresholds = {(act, k): tl.threshold(laws[act], k, 1) for act in laws for k in (1, 2, 3, 4)}
    assert thresholds == {("identity", 1): 16, ("identity", 2): 16, ("identity", 3): 18, ("identity", 4): 22,
                          ("relu", 1): 17, ("relu", 2): 16, ("relu", 3): 18, ("relu", 4): 22}
    inside, identity_gaps, positive_lower = [], [], 0
    for row in record["instances"]:
        D_text, K_text, activation = row["id"].split("-")
        D_value, K_value = int(D_text), int(K_text)
        if K_value > 4 or D_value < thresholds[(activation, K_value)]:
            continue
        lo, hi = tl.bounds(laws[activation], D_value, K_value, 1.0)
        eta_T = mpmath.mpf(paper_eta(D_value, K_value, 1.0)) * row["T_star"]
        inside.append(lo <= eta_T <= hi)
        positive_lower += lo > 0
        if activation == "identity":
            identity_gaps.append(float(hi / eta_T - 1))
    assert len(inside) == 55 and all(inside)
    assert 0.0013 < min(identity_gaps) < 0.00133 and 0.0277 < max(identity_gaps) < 0.0278   # docs/claims.md
    assert positive_lower == 3
