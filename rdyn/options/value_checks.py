"""Checks of one option's value beyond its type and range (:attr:`Option.check_value
<rdyn.options.option.Option.check_value>`): each raises :class:`ValueError` with a one-line
message, which the validation reports as the refusal, before any work.

* ``--vstar-row-norms``: a non-empty list of finite numbers > 0 (:func:`parse_row_norms`,
  also the API's reader of the option);
* ``--activation-expr``: a formula that :func:`rdyn.derivations.activations.parse_expression`
  accepts (the whitelist parser: the text is never evaluated as code), whose sigma, sigma' and
  sigma'' have no Dirac delta and evaluate to finite reals with both backends (numpy for
  float64, mpmath for ``--dps``), and with sigma'(0) != 0;
* ``--scheduler``: a Dask scheduler address ``[PROTOCOL://]HOST:PORT``;
* ``--record``: steps in ``0..--steps`` (:func:`parse_steps_list`, a check of two options that
  the cross-option checks and the API's readers share; it raises UsageError).
"""
from __future__ import annotations

import math
import numbers

from rdyn.options.shown_values import shown
from rdyn.output import UsageError


def parse_row_norms(value) -> list[float]:
    """--vstar-row-norms: positive finite numbers (comma-separated text, or a list)."""
    items = value if isinstance(value, (list, tuple)) else str(value).split(",")
    try:
        norms = [float(v) for v in items]
    except (TypeError, ValueError):
        raise ValueError(f"--vstar-row-norms: not a comma-separated list of numbers: {value!r}") from None
    if not norms or not all(math.isfinite(v) and v > 0 for v in norms):
        raise ValueError("--vstar-row-norms: every norm must be a finite number > 0")
    return norms


def check_row_norms(value) -> None:
    """``check_value`` of --vstar-row-norms: :func:`parse_row_norms` succeeds."""
    parse_row_norms(value)


def check_activation_expr(text) -> None:
    """A formula that parses (derivations.activations.parse_expression) and has sigma'(0) != 0:
    Model A starts from W_V = 0, so with sigma'(0) = 0 nothing ever moves (C1 stays 0). The
    named smooth activations all have sigma'(0) > 0."""
    import sympy as sp

    from rdyn.derivations.activations import (FORMULA_SECONDS, derivatives, parse_expression,
                                              x as symbol_x)
    from rdyn.derivations.formula import time_budget

    expr = parse_expression(text)   # the whitelist parser: the text is never evaluated as code
    with time_budget(FORMULA_SECONDS, "--activation-expr"):
        forms = derivatives(expr)
        for name, form in zip(("sigma", "sigma'", "sigma''"), forms):
            if form.has(sp.DiracDelta):
                raise ValueError(f"--activation-expr {text}: {name} = {form} contains a Dirac "
                                 "delta (a kink of sigma'); the smooth route needs sigma'' as a "
                                 "function (use --activation relu or leaky for piecewise-linear "
                                 "sigma)")
        _check_evaluable(text, forms)
    if forms[1].subs(symbol_x, 0) == 0:
        raise ValueError(f"--activation-expr {text}: sigma'(0) = 0, so nothing moves from "
                         "W_V = 0 (C1 stays 0)")


def _check_evaluable(text: str, forms) -> None:
    """sigma, sigma', sigma'' print for the float64 (numpy) and the --dps (mpmath) backends and
    give finite numbers at a few points (a function numpy or mpmath lacks, e.g. besselj in
    numpy, is found here, not in the middle of a run)."""
    from rdyn.derivations.activations import lambdify_for, x as symbol_x

    for backend in ("numpy", "mpmath"):
        for name, form in zip(("sigma", "sigma'", "sigma''"), forms):
            try:
                f = lambdify_for(symbol_x, form, backend)
                values = [complex(f(v)) for v in (-1.7, -0.3, 0.4, 2.1)]
            except Exception as exc:   # a printer or evaluation failure: say which and why
                why = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
                if "<class" in why:   # a printer's message names its internal class: not shown
                    why = f"{backend} has no function for a part of it"
                raise ValueError(f"--activation-expr {text}: {name} = {form} cannot be evaluated "
                                 f"with {backend} ({why})") from None
            if not all(math.isfinite(v.real) and v.imag == 0 for v in values):
                raise ValueError(f"--activation-expr {text}: {name} is not a finite real number "
                                 f"at every test point (-1.7, -0.3, 0.4, 2.1)")


def check_scheduler(value) -> None:
    """A Dask scheduler address [PROTOCOL://]HOST:PORT (reduced_dynamics/runs/dask_client.py)."""
    from rdyn.reduced_dynamics.runs.dask_client import check_address

    check_address(value)


def parse_steps_list(text, flag: str, steps: int | None) -> list[int]:
    """``--record``: comma-separated steps (or an iterable of ints) in 0..steps, sorted."""
    if text is None or text == "":
        return []
    if isinstance(text, str):
        try:
            values = [int(v) for v in text.split(",") if v.strip()]
        except ValueError:
            raise UsageError(f"{flag} must be comma-separated integers, got {shown(text)}") from None
    else:
        values = list(text)
        if not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in values):
            raise UsageError(f"{flag} must be integers, got {shown(text)}")
        values = [int(v) for v in values]
    for v in values:
        if not (v >= 0 and (steps is None or v <= steps)):
            raise UsageError(f"--record: step {v} outside 0..{steps if steps is not None else 'N'}")
    return sorted(set(values))
