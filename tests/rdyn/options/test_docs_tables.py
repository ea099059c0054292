"""rdyn/options/docs_tables.py: the option tables of docs/input_rules.md."""
from __future__ import annotations

from checkout import ROOT
from rdyn.options.docs_tables import markdown


def test_one_table_per_subcommand_with_the_refusals():
    md = markdown()
    assert md.count("### rdyn ") == 10
    assert "| `--dps` | int |  | in 5..4000 |  |" in md
    assert "| `--dps` | int |  | none (always refused) | crosscheck runs in float64 only; --dps does not apply |" in md


def test_the_page_holds_the_tables():
    page = (ROOT / "docs" / "input_rules.md").read_text()
    missing = [line for line in markdown().splitlines() if line.startswith("| `") and line not in page]
    assert not missing, missing[:3]
