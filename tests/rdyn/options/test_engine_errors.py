"""rdyn/options/engine_errors.py: an engine's refusal shown with option names."""
from __future__ import annotations

import pytest

from rdyn.options.engine_errors import error_text, option_name, usage_errors
from rdyn.output import UsageError
from rdyn.derivations.fields import FieldError


def test_fields_map_to_their_options():
    assert option_name("K") == "--K"
    assert option_name("vstar_norm2") == "--vstar-norm2"
    assert option_name("route") == "--smooth-route"          # the one field named otherwise


def test_a_field_error_names_the_option_and_any_other_error_keeps_its_first_line():
    assert error_text(FieldError("K", "{K} must be < {D}", "D")) == "--K must be < --D"
    assert error_text(ValueError("first line\nsecond line")) == "first line"
    with pytest.raises(UsageError, match=r"^--M must be >= 1, got 0$"):
        with usage_errors():
            raise FieldError("M", "{M} must be >= 1, got 0")
    with pytest.raises(UsageError) as caught:   # a UsageError passes through unchanged
        with usage_errors():
            raise UsageError("--D already refused")
    assert str(caught.value) == "--D already refused"
