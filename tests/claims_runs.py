"""Shared by the claims tests (tests/verify/claims/test_claims.py) and the full-disk test of
the erratum (tests/rdyn/cli/test_hostile_inputs.py): a fake errata run."""
from __future__ import annotations

from rdyn.verification.checks.record import Check


def _fake_errata_run():
    rows = [{"config": "D=8, K=2, identity", "T": [200.0, 400.0, 800.0], "T_star": 100,
             "measured_values": [0.5, 0.25, 0.125], "derived_values": [0.45, 0.24, 0.124]}]
    late = {"expression": {"identity": "D**2*K*(D - K)/(4*T*eta)", "relu": "D**2*K*(D - K)/(4*T*eta)",
                           "leaky": "D**2*K*(D - K)/(4*T*eta)"},
            "tex": r"\frac{D^{2} K \left(D - K\right)}{4 T \eta}", "per_config": rows, "measured": 0.001}
    return [Check("A.errata.derived.loss_theorem31", "s", "printed vs derived", "discrepancy", None, None,
                  {"printed": "K*D**4/(eta*T)", "derived": {"relu": "D**2*K*(D - K)/(4*T*eta)"}}),
            Check("A.errata.late.excess_loss", "s", "late", "pass", 0.001, None, late),
            Check("A.errata.late.excess_loss.sqrtD", "s", "late", "pass", 0.001, None, late),
            Check("A.claim.D10", "s", "D10", "discrepancy", None, None, {"printed": "p <= 1/(2 pi D K)"})]


# ------------------------------------------------------------------------------ what a referee must not see
#: identifiers of the code that the erratum and the report write as symbols or words
CODE_NAMES = ("excess_loss", "one_over_K_minus_p", "one_minus_Kp", "T_star", "eta_limit", "vstar_norm2",
              "S_error_F", "WV_error_F", "delta_C2_plus_C3", "ood_excess_loss", "gamma_star", "measured_values",
              "per_config", "x_last", "y_last", "Tstar_logit_scale", "loss_D_order", "late_rate_1_minus_Kp",
              "wrong_rate", "papers' eta")


def leftovers(text: str, fmt: str) -> list[str]:
    """Raw sympy (``**``, ``*`` products) and identifiers of the code in the prose and formulas of a
    rendered erratum or report (``fmt``: tex, md or html), outside references to checks (typewriter,
    code spans), image data and the formulas' SVG."""
    import re

    if fmt == "html":
        text = re.sub(r"<svg.*?</svg>|<code>.*?</code>|<style>.*?</style>|data:image/png;base64,[A-Za-z0-9+/=]+|"
                      r"title=\"[^\"]*\"|<[^>]*>", " ", text, flags=re.DOTALL)
        import html
        text = html.unescape(text)
    elif fmt == "md":
        text = re.sub(r"`[^`]*`|\(data:image/png;base64,[^)]*\)|\*\*(?=[A-Z(])|(?<=[.:a-z)])\*\*", " ", text)
    else:
        text = re.sub(r"\\texttt\{(?:[^{}]|\{[^{}]*\})*\}", " ", text)
    found = []
    for pattern in (r"\w\*\*\w|\)\*\*", r"[A-Za-z0-9)]\*[A-Za-z(]", r"\\_"):
        found += re.findall(".{0,30}(?:" + pattern + ").{0,30}", text)
    found += [name for name in CODE_NAMES if name in text or name.replace("_", r"\_") in text]
    return found
