"""A Model B run's configuration and the choice of its expectation (exact / qmc / monte_carlo)."""
from __future__ import annotations

from dataclasses import dataclass

from rdyn.reduced_dynamics.model_b.exact import ExactUnavailable, exact_supported

MODELS = ("ln", "noln", "looped")


@dataclass(frozen=True)
class Config:
    model: str = "ln"
    target: str | None = None       # noln: normalized / unnormalized
    data: str = "sphere"
    d: int = 16
    n: int = 32
    spectrum: tuple[int, ...] | None = None
    L: int = 10
    eta: float = 0.1
    steps: int = 2000
    alpha0: float = 0.0
    beta0: float = 1.0
    dps: int | None = None
    samples: int = 100000
    seed: int = 0
    expectation: str = "auto"      # auto / exact / qmc / monte_carlo (EXPECTATIONS)
    replicas: int = 16             # qmc: independent scrambled-Sobol replicas


EXPECTATIONS = ("auto", "exact", "qmc", "monte_carlo")


def exact_gamma_range(cfg: Config) -> bool:
    """Whether the run stays where the exact Task 2 rules are accurate: ``gamma >= 0``.

    The LN and looped per-sample terms have branch points where ``1 + gamma lambda_i = 0``
    (``h = a + gamma S a`` can vanish), i.e. on the real axis at ``gamma = -1/lambda_i``; the
    rules are built and checked for ``gamma >= 0`` only (measured for spectrum (4,3,2,1): float64
    errors up to 1e-4 near ``gamma = -1/4``). Since ``L'(gamma) < 0``, ``gamma_{t+1} - gamma_t =
    eta |F| (alpha^2 + beta^2) + eta^2 F^2 gamma_t >= 0`` when ``gamma_t >= 0``: a run from
    ``alpha0 beta0 >= 0`` never leaves the range. The no-LN layer needs only kappa1..kappa4.
    """
    return cfg.model == "noln" or cfg.alpha0 * cfg.beta0 >= 0


def resolve_expectation(cfg: Config) -> str:
    """The expectation a run uses: ``exact`` for the unnormalised no-LN layer (rational kappa1,
    kappa2 only) and for Task 2 spectra in :func:`exact_supported` that start in
    :func:`exact_gamma_range`; otherwise ``qmc`` (auto) or
    the one asked for. Asking for ``exact`` where it does not exist raises :class:`ExactUnavailable`."""
    if exact_moments_only(cfg):
        return "exact"
    if cfg.expectation in ("qmc", "monte_carlo"):
        return cfg.expectation
    if cfg.data == "spectrum" and exact_supported(cfg.spectrum, cfg.model) and exact_gamma_range(cfg):
        return "exact"
    if cfg.expectation == "exact" and not exact_gamma_range(cfg):
        raise ExactUnavailable(
            f"exact expectations of the {cfg.model} model hold for gamma = alpha*beta >= 0 (a "
            f"trajectory from alpha0*beta0 >= 0 stays there); alpha0*beta0 = "
            f"{cfg.alpha0 * cfg.beta0:g} < 0 may cross the kinks at gamma = -1/lambda_i")
    if cfg.expectation == "exact":
        raise ExactUnavailable(
            f"exact expectations exist for --data spectrum (Task 2), not for sphere data (model {cfg.model})")
    return "qmc"



def exact_moments_only(cfg: Config) -> bool:
    """The unnormalised no-LN run needs only the rational kappa1, kappa2."""
    return cfg.model == "noln" and cfg.target == "unnormalized"

