"""rdyn/options/table.py: one Command per subcommand, its options in --help order."""
from __future__ import annotations

from rdyn.cli import SUBCOMMANDS
from rdyn.options import table


def test_one_command_per_subcommand():
    assert set(table.COMMANDS) == set(SUBCOMMANDS)
    for name, cmd in table.COMMANDS.items():
        assert cmd.name == name
        names = [o.name for o in cmd.options]
        assert len(names) == len(set(names)), name
        assert names[0] == "json", name                                    # every command has --json first


def test_teacher_options():
    D, K = table.TEACHER.option("D"), table.TEACHER.option("K")
    assert (D.kind, D.range_text()) == ("int", "in 2..1000000000000000000")
    assert K.kind == "int"
    activation = table.TEACHER.option("activation")
    assert set(table.SMOOTH_ACTIVATIONS) <= set(activation.choices)
    assert {"identity", "relu", "leaky"} <= set(activation.choices)
