"""derivations/fields.py: an engine's refusal names its request field; the API
shows the option instead."""
from __future__ import annotations

from rdyn.derivations.fields import FieldError


def test_message_with_field_names_and_with_option_names():
    exc = FieldError("K", "need {K} < {D}, got {K}=5", "D")
    assert isinstance(exc, ValueError) and exc.fields == ("K", "D")
    assert str(exc) == "need K < D, got K=5"
    assert exc.message(lambda f: "--" + f) == "need --K < --D, got --K=5"


def test_text_is_verbatim_and_a_prefix_keeps_the_fields():
    exc = FieldError("eta", "{eta} must be > 0 (not {x:.3f})")       # no format specifiers read
    assert str(exc) == "eta must be > 0 (not {x:.3f})"
    prefixed = exc.prefixed("grid point 3: ")
    assert prefixed.field == "eta" and prefixed.message(str.upper) == "grid point 3: ETA must be > 0 (not {x:.3f})"
