"""sympy's own random state, fixed for the duration of a derivation.

sympy draws random numbers inside deterministic-looking operations: Wang's multivariate
factorisation (``factor``) picks random evaluation points from ``sympy.core.random.rng``, and
assumption queries shuffle with ``_assumptions_rng``. Both generators are seeded from the
operating system when sympy is imported and advance with every use, so the path a derivation
takes (and its run time: measured 10 s in one process, over 8 minutes in another for the same
``factor``) depends on the process and on what ran before. :func:`fixed_sympy_random` seeds
both generators with a constant for the block and restores their previous states afterwards,
so a derivation is a function of its inputs alone.
"""
from __future__ import annotations

import functools
from contextlib import contextmanager

SEED = 20261203


@contextmanager
def fixed_sympy_random(seed: int = SEED):
    """Run the block with sympy's generators seeded by ``seed``; restore them on exit."""
    import sympy.core.random as sympy_random

    generators = (sympy_random.rng, sympy_random._assumptions_rng)
    states = [g.getstate() for g in generators]
    try:
        for g in generators:
            g.seed(seed)
        yield
    finally:
        for g, state in zip(generators, states):
            g.setstate(state)


def seeded(function):
    """Decorator: call ``function`` inside :func:`fixed_sympy_random`."""
    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        with fixed_sympy_random():
            return function(*args, **kwargs)
    return wrapper
