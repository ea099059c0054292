"""rdyn/options/option.py: an option's flag and documented range, a command's lookup."""
from __future__ import annotations

import pytest

from rdyn.options.option import Command, Option, never


@pytest.mark.parametrize("option,text", [
    (Option("steps", "int", lo=0, hi=10 ** 9), "in 0..1000000000"),
    (Option("D", "int", lo=1, lo_open=True), ">= 2"),                 # integers: open ends become closed
    (Option("n", "int", hi=5, hi_open=True), "<= 4"),
    (Option("eta", "float", lo=0, lo_open=True), "> 0"),
    (Option("kappa", "float", lo=0, hi=1, hi_open=True), "in [0, 1)"),
    (Option("x", "float", hi=1e100), "<= 1e+100"),                    # large bounds keep their exponent
    (Option("s", "str"), ""),
])
def test_range_text(option, text):
    assert option.range_text() == text


def test_flag_and_command_lookup():
    o = Option("vstar_norm2", "float")
    assert o.flag == "--vstar-norm2"
    cmd = Command("c", "help", (o,))
    assert cmd.option("vstar_norm2") is o
    with pytest.raises(KeyError):
        cmd.option("nope")
    assert never({}) is False
