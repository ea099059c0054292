"""rdyn/options/parsers.py: argparse parsers and --help texts from the option table."""
from __future__ import annotations

import argparse

from rdyn.options import parsers
from rdyn.options.table import TEACHER


def test_help_text_states_the_range():
    assert parsers.help_text(TEACHER.option("kappa")) == \
        "LeakyReLU negative slope (leaky only; default 0.1) [in [0, 1), finite]"


def test_parsed_values_are_the_given_ones_only():
    parser = argparse.ArgumentParser()
    parsers.add_arguments(parser, TEACHER)
    given = parsers.given_from_args(TEACHER, parser.parse_args(["--D", "1e3", "--eta", "0.5"]))
    assert {k: v for k, v in given.items() if v not in (None, False)} == {"D": 1000, "eta": 0.5}
    assert set(given) == {o.name for o in TEACHER.options if not o.cli_only} | set(given)


def test_an_int_range_is_parsed_as_a_pair():
    from rdyn.options.table import COMMANDS

    parser = argparse.ArgumentParser()
    parsers.add_arguments(parser, COMMANDS["prove"])
    for text, value in (("12", 12), ("1e3", 1000), ("12:24", (12, 24)), ("12:", (12, None))):
        assert parser.parse_args(["--D", text]).D == value
