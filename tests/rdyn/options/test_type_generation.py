"""rdyn/options/type_generation.py: rdyn/option_types.py is generated from the table."""
from __future__ import annotations

from checkout import ROOT
from rdyn.options import type_generation as tg


def test_class_names():
    assert tg.option_class_name("crosscheck") == "CrosscheckOptions"
    assert tg.option_class_name("teacher") == "TeacherOptions"


def test_written_file_equals_the_source_and_the_checked_in_module(tmp_path):
    source = tg.option_types_source()
    assert "class TeacherOptions" in source and "class ProveOptions" in source
    target = tmp_path / tg.OPTION_TYPES_MODULE
    tg.write_option_types(str(target))
    assert target.read_text() == source == (ROOT / "rdyn" / tg.OPTION_TYPES_MODULE).read_text()
