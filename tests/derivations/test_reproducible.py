"""derivations/reproducible.py: sympy's random state fixed for a block, restored afterwards."""
from __future__ import annotations

import sympy.core.random as sympy_random

from rdyn.derivations import reproducible


def _draws():
    return (sympy_random.rng.random(), sympy_random._assumptions_rng.random())


def test_the_block_draws_the_same_numbers_every_time():
    with reproducible.fixed_sympy_random():
        first = _draws()
    _draws()                                   # the generators move on outside the block
    with reproducible.fixed_sympy_random():
        second = _draws()
    assert first == second
    with reproducible.fixed_sympy_random(reproducible.SEED + 1):
        assert _draws() != first


def test_the_previous_state_is_restored():
    states = sympy_random.rng.getstate(), sympy_random._assumptions_rng.getstate()
    expected = _draws()
    sympy_random.rng.setstate(states[0])
    sympy_random._assumptions_rng.setstate(states[1])
    with reproducible.fixed_sympy_random():
        _draws()
    assert _draws() == expected


def test_seeded_runs_the_function_inside_the_block():
    @reproducible.seeded
    def draw(n):
        return [sympy_random.rng.random() for _ in range(n)]

    assert draw(3) == draw(3) and draw.__name__ == "draw"
