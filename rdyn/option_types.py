"""Typed options: one frozen dataclass per subcommand, built by the shared validation
(:func:`rdyn.options.typed_options`) and passed from the API to the drivers.

Generated from the option table :data:`rdyn.options.COMMANDS` by
``python -c 'from rdyn.options import write_option_types; write_option_types()'``;
do not edit (tests/rdyn/test_option_types.py fails when this file is out of date)."""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Literal, Union


@dataclass(frozen=True)
class TeacherOptions:
    """The validated options of ``rdyn teacher`` (every option, defaults filled in)."""

    json: bool
    dps: int | None
    task: Literal['cnn', 'gcn', 'sts', 'gslp'] | None
    D: int | None
    K: int | None
    groups: str | os.PathLike[str] | list[Any] | tuple[Any, ...] | None
    activation: Literal['identity', 'relu', 'leaky', 'erf', 'tanh', 'gelu', 'softplus', 'sigmoid', 'expr']
    activation_expr: str | None
    kappa: float | None
    eta: float | None
    vstar_norm2: float
    steps: int | None
    record: str | list[Any] | tuple[Any, ...] | range | None
    sigma_prime_zero: float
    logit_scale: Literal['D', 'sqrtD']
    M: int | None
    t1_fraction: float
    tstar_attention: float | None
    quiet: bool
    method: Literal['map', 'flow', 'slow']
    smooth_route: Literal['auto', 'table', 'exact'] | None
    precision: Literal['float64', 'dd', 'arb'] | None
    certify: bool
    checkpoint: str | os.PathLike[str] | None
    checkpoint_every: float | None
    resume: str | os.PathLike[str] | None


@dataclass(frozen=True)
class CrosscheckOptions:
    """The validated options of ``rdyn crosscheck`` (every option, defaults filled in)."""

    json: bool
    dps: int | None
    task: Literal['cnn', 'gcn', 'sts', 'gslp'] | None
    D: int | None
    K: int | None
    groups: str | os.PathLike[str] | list[Any] | tuple[Any, ...] | None
    activation: Literal['identity', 'relu', 'leaky', 'erf', 'tanh', 'gelu', 'softplus', 'sigmoid', 'expr']
    activation_expr: str | None
    kappa: float | None
    eta: float | None
    vstar_norm2: float
    steps: int | None
    record: str | list[Any] | tuple[Any, ...] | range | None
    sigma_prime_zero: float
    logit_scale: Literal['D', 'sqrtD']
    d: int
    M: int
    vstar_row_norms: str | list[Any] | tuple[Any, ...] | None
    mode: Literal['population', 'sgd']
    batch: int | None
    noise_std: float | None
    seed: int
    P: Literal['identity', 'random']
    quiet: bool


@dataclass(frozen=True)
class FiguresOptions:
    """The validated options of ``rdyn figures`` (every option, defaults filled in)."""

    json: bool
    dps: int | None
    paper: Literal['A', 'B']
    out: str | os.PathLike[str]
    steps: int | None
    quick: bool
    vstar_norm2: float | None
    batch: int | None
    noise_std: float | None
    activation: Literal['erf', 'tanh', 'gelu', 'softplus', 'sigmoid', 'expr'] | None
    activation_expr: str | None
    seed: int


@dataclass(frozen=True)
class LnOptions:
    """The validated options of ``rdyn ln`` (every option, defaults filled in)."""

    json: bool
    dps: int | None
    quiet: bool
    model: Literal['ln', 'noln', 'looped']
    target: Literal['normalized', 'unnormalized'] | None
    data: Literal['sphere', 'spectrum'] | None
    d: int
    n: int | None
    spectrum: str | list[Any] | tuple[Any, ...] | None
    L: int | None
    eta: float
    steps: int
    alpha0: float
    beta0: float
    samples: int
    seed: int
    expectation: Literal['auto', 'exact', 'qmc', 'monte_carlo']
    replicas: int | None
    record: str | None
    checkpoint: str | os.PathLike[str] | None
    checkpoint_every: float | None
    resume: str | os.PathLike[str] | None


@dataclass(frozen=True)
class VerifyOptions:
    """The validated options of ``rdyn verify`` (every option, defaults filled in)."""

    json: bool
    dps: int | None
    model: Literal['A', 'B', 'all']
    quick: bool
    only: list[str] | None


@dataclass(frozen=True)
class SweepOptions:
    """The validated options of ``rdyn sweep`` (every option, defaults filled in)."""

    json: bool
    dps: int | None
    grid: str
    steps: int
    activation: Literal['erf', 'tanh', 'gelu', 'softplus', 'sigmoid', 'expr'] | None
    activation_expr: str | None
    M: int | None
    out: str | os.PathLike[str] | None
    t1_fraction: float
    tstar_attention: float | None
    threads: int | None
    skip_invalid: bool
    scheduler: str | None
    fast: bool
    checkpoint: str | os.PathLike[str] | None
    checkpoint_every: float | None
    resume: str | os.PathLike[str] | None
    quiet: bool


@dataclass(frozen=True)
class ScalingOptions:
    """The validated options of ``rdyn scaling`` (every option, defaults filled in)."""

    json: bool
    dps: int | None
    model: Literal['A', 'B', 'all']
    activation: str | list[Any] | tuple[Any, ...] | None
    kappa: float | None
    logit_scale: Literal['D', 'sqrtD'] | None
    quick: bool
    runner: Literal['run', 'batch']
    extend: bool
    out: str | os.PathLike[str] | None


@dataclass(frozen=True)
class ClaimsOptions:
    """The validated options of ``rdyn claims`` (every option, defaults filled in)."""

    json: bool
    dps: int | None
    paper: Literal['A', 'B'] | None
    report: str | os.PathLike[str] | None
    errata: str | os.PathLike[str] | None
    full: bool


@dataclass(frozen=True)
class AsymptoticsOptions:
    """The validated options of ``rdyn asymptotics`` (every option, defaults filled in)."""

    json: bool
    dps: int | None
    activation: Literal['identity', 'relu', 'leaky', 'erf', 'tanh', 'gelu', 'softplus', 'sigmoid', 'expr']
    activation_expr: str | None
    logit_scale: Literal['D', 'sqrtD']
    K: int
    vstar_norm2: float
    M: int | None
    kappa: float | None
    no_check: bool


@dataclass(frozen=True)
class ProveOptions:
    """The validated options of ``rdyn prove`` (every option, defaults filled in)."""

    json: bool
    dps: int | None
    paper: Literal['A', 'B']
    D: int | tuple[int, int | None]
    K: int
    activation: Literal['identity', 'relu', 'leaky']
    kappa: float | None
    vstar_norm2: float
    eta: float | tuple[float, float] | None
    logit_scale: Literal['D', 'sqrtD']
    statement: list[str] | list[Any] | tuple[Any, ...] | None
    max_steps: int | None
    route: Literal['float', 'arb']
    max_boxes: int
    checkpoint: str | os.PathLike[str] | None
    checkpoint_every: float | None
    resume: str | os.PathLike[str] | None
    grid: str | None
    max_tstar: int | None
    out: str | os.PathLike[str] | None
    scheduler: str | None
    model: Literal['ln', 'noln', 'looped'] | None
    target: Literal['normalized', 'unnormalized'] | None
    data: Literal['sphere', 'spectrum'] | None
    d: int | None
    n: int | None
    spectrum: str | list[Any] | tuple[Any, ...] | None
    L: int | None
    s0: str | list[Any] | tuple[Any, ...] | None
    eta_fraction: str | list[Any] | tuple[Any, ...] | None
    gamma: str | list[Any] | tuple[Any, ...] | None
    steps: int | None


AnyOptions = Union[TeacherOptions, CrosscheckOptions, FiguresOptions, LnOptions, VerifyOptions, SweepOptions, ScalingOptions, ClaimsOptions, AsymptoticsOptions, ProveOptions]

CLASSES: dict[str, type] = {
    'teacher': TeacherOptions,
    'crosscheck': CrosscheckOptions,
    'figures': FiguresOptions,
    'ln': LnOptions,
    'verify': VerifyOptions,
    'sweep': SweepOptions,
    'scaling': ScalingOptions,
    'claims': ClaimsOptions,
    'asymptotics': AsymptoticsOptions,
    'prove': ProveOptions,
}
