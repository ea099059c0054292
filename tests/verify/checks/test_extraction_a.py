"""The restored readings of statements whose symbols the extraction plausibly lost
(verify/checks/extraction_a.py): each holds as restored and refuses a wrong restoration."""
from __future__ import annotations

from rdyn.verification.checks import extraction_a as xa


def test_s_identity_restored_holds_and_a_wrong_root_is_refused():
    c = xa.s_identity_restored_check()
    assert c.status == "pass"
    assert c.detail["restored_squared_equals_sum"] and not c.detail["extracted_squared_equals_sum"]
    # the line's own D^{5/2} follows from the restored identity with Lemma D.18's rate, not from the extracted one
    assert c.detail["D_exponent_with_lemma_D18_restored"] == "5/2"
    assert c.detail["D_exponent_with_lemma_D18_extracted"] == "2"
    wrong = xa.s_identity_restored_check("D*(1 - K*p)/(K*sqrt(D - K))")     # the root on the wrong factor
    assert wrong.status == "discrepancy" and not wrong.detail["restored_squared_equals_sum"]
    assert xa.s_identity_restored_check(xa.S_EXTRACTED).status == "discrepancy"


def test_d6_arctan_argument_restored_and_the_sin_2beta_term_still_missing():
    extracted, restored = xa.d6_arctan_checks()
    assert extracted.status == "discrepancy" and restored.status == "pass"
    assert extracted.detail["derived_over_form"] == "1/(sqrt(K)*sqrt(D - K))"
    assert [c.status for c in xa.d6_arctan_checks("sqrt(K)*(D - K)*p/(1 - K*p)")] == ["discrepancy", "discrepancy"]
    # with the root restored A(t) still differs from the derived expectation, by exactly the sin(2 beta) term
    rows = xa.d6_restored_a_checks(points=8)
    assert [c.status for c in rows] == ["discrepancy", "discrepancy"]
    assert all(c.detail["relative_difference"] > 1e-3 and c.detail["residual_after_missing_term"] < 1e-25 for c in rows)
    # a different argument leaves a residual that is not that term: rdyn's reading of the statement fails
    assert [c.status for c in xa.d6_restored_a_checks("sqrt(K*(D - K))*p/(1 - K*p) + p", points=4)] == ["fail", "fail"]


def test_d10_restored_condition_is_true_and_non_vacuous_for_large_D():
    c = xa.d10_restored_check()
    assert c.status == "pass" and c.detail["threshold_below_p_c_identity"]
    assert c.detail["non_vacuous_iff_D_ge_4_pi2_K"] and c.detail["p_c_identity"] == "1/(sqrt(D)*sqrt(K))"
    rows = {(r["D"], r["K"], r["activation"]): r for r in c.detail["per_size"]}
    assert abs(rows[(8, 2, "relu")]["p_c"] - 0.2364) < 1e-4            # A.errata.D10's p_c
    assert not rows[(20, 4, "relu")]["non_vacuous"] and rows[(160, 4, "relu")]["non_vacuous"]   # 4 pi^2 K = 157.9
    assert all(r["C1star_increasing_up_to_threshold"] and r["threshold_below_p_c"] for r in rows.values())
    # above p_c the restored condition would be false; as extracted it is never met: both refused
    assert xa.d10_restored_check("2/sqrt(D*K)").status == "discrepancy"
    assert xa.d10_restored_check(xa.D10_EXTRACTED).status == "discrepancy"


def test_step3_restored_rate_is_the_derived_one_and_makes_the_step_self_consistent():
    c = xa.step3_restored_check()
    assert c.status == "pass"
    rows = c.detail["T_exponent_of_derived_over_restored"]
    assert all(r["loss_over_extracted_rate_squared"] == "1" for r in rows.values())
    assert xa.step3_restored_check("1/T**(1/3)").status == "discrepancy"


def test_d18_and_d52_restored_have_the_right_rate_but_an_order_in_D_too_large():
    d18, d52 = xa.d18_restored_checks()
    assert d18.status == d52.status == "discrepancy"          # the paper's error remains: the order in D
    relu = d18.detail["per_activation"]["relu"]
    assert relu["T_exponent_lower"] == relu["T_exponent_upper"] == "0" and relu["D_exponent_of_limit_upper"] == "-1/2"
    assert relu["upper_side_holds_as_T_to_oo_iff_D_at_most"] == ["4*exp(2)"]
    # internal evidence for the root: D.18 (p C1)'s 400 D^2 (D-K)^2 term is the square of the restored bound
    assert d18.detail["p_C1_term_is_the_square_of_the_restored_bound"]
    assert not d18.detail["p_C1_term_is_the_square_of_the_extracted_bound"]
    assert d52.detail["exponents_of_derived_over_restored"]["relu"] == {"T_exponent": "0", "D_exponent": "-1/2"}
    # bounds of the derived order pass: the check can come out either way
    right = "(D - K)*sqrt(D)/sqrt(eta*K*M*T)"
    ok18, ok52 = xa.d18_restored_checks(right, right, "D**(3/2)*sqrt(D - K)/sqrt(eta*M*T)")
    assert ok18.status == ok52.status == "pass"


def test_ood_rate_restored_is_the_derived_worst_case_and_the_printed_slope():
    c = xa.ood_rate_restored_check()
    assert c.status == "pass" and c.detail["exponent_restored"] == "-1/2" and c.detail["exponent_extracted"] == "-1"
    assert all(r["worst_case_over_extracted"] == "1/2" for r in c.detail["T_exponent_of_derived_over_form"].values())
    assert xa.ood_rate_restored_check("1/T**(1/4)").status == "discrepancy"
