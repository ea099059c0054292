"""The HTML pages' formulas (verify/claims/page.py): mathtext's SVG, or the notation's HTML where
mathtext cannot parse the LaTeX."""
from __future__ import annotations

from rdyn.verification.claims import page


def test_a_formula_is_svg_or_its_html_fallback():
    shown = page.formula_html(r"T^* \sim \frac{D(D-K)^2}{\eta}")
    assert "<svg" in shown and r'title="T^* \sim \frac{D(D-K)^2}{\eta}"' in shown
    fallback = page.formula_html(r"\nocommand{x} = \eta")
    assert "<svg" not in fallback and "<span class=\"m\">" in fallback and "η" in fallback
    assert ".formula" in page.CSS and ".m{" in page.CSS
