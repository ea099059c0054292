"""One typed request for a collapsed Model A run: what to iterate (:class:`Model`), in which
numbers (:class:`Numerics`), and how to drive the loop (:class:`Control`).

The API (``rdyn.api._teacher``, ``rdyn.api._crosscheck``) maps its validated options into a
:class:`Request` once, with every ``None`` default resolved there (eta included, by
:func:`resolve_eta`, the one rule for "no step size given"; :func:`model_of` builds the Model of
a config); the engines receive the request
(:func:`rdyn.reduced_dynamics.model_a.dynamics.run_request`,
:func:`rdyn.reduced_dynamics.model_a.smooth.run_request`) and :func:`execute` picks the engine by
the model's moment provider (a dict, not attribute probing).

An engine refuses an input with a :class:`FieldError` (:mod:`.fields`): a ValueError naming the
request field it came from (``exc.field``), worded with field names (``K``); the API shows it
with its option names (``--K``) through :meth:`FieldError.message`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from rdyn.derivations.fields import FieldError  # (re-exported)

if TYPE_CHECKING:   # pragma: no cover
    from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig, Thresholds
    from rdyn.reduced_dynamics.model_a.smooth import SmoothConfig

__all__ = ["FieldError", "Model", "Numerics", "Control", "Request", "resolve_eta",
           "moment_provider", "model_of", "execute", "ENGINES", "MOMENT_PROVIDERS"]


# --------------------------------------------------------------------------------------------
# The three parts
# --------------------------------------------------------------------------------------------

# which moments the iteration evaluates (the moment provider), and the engine of each
HOMOGENEOUS = "homogeneous closed form"   # relu / leaky / identity: model_a.dynamics
SMOOTH_CLOSED_FORM = "smooth closed form"  # erf, GELU in float64 (--smooth-route exact)
TENSOR_RULE = "tensor rule"               # Gauss-Hermite tensor rule (any smooth, any --dps)
TABLES = "tables"                         # Chebyshev tiles of the rule (float64, default)
MOMENT_PROVIDERS = (HOMOGENEOUS, SMOOTH_CLOSED_FORM, TENSOR_RULE, TABLES)


@dataclass(frozen=True)
class Model:
    """What is iterated: ``config`` (a TeacherConfig or a SmoothConfig), the moment provider
    (one of :data:`MOMENT_PROVIDERS`), ``eta`` (the step size, resolved: never None) and the
    phase ``thresholds``. ``groups``: the D groups of the teacher when built (crosscheck), else
    None."""

    config: TeacherConfig | SmoothConfig
    moments: str
    eta: float
    thresholds: Thresholds
    groups: Any = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        if self.moments not in MOMENT_PROVIDERS:
            raise FieldError("moments", f"unknown moment provider {self.moments!r}")
        if self.eta is None:
            raise FieldError("eta", "the request's eta must be resolved (resolve_eta)")

    @property
    def kind(self) -> str:
        """"homogeneous" or "smooth": the family of the configuration."""
        return self.config.kind


@dataclass(frozen=True)
class Numerics:
    """In which numbers: ``backend`` ("float64", "dd", "arb", "mpmath"), ``precision`` (as
    asked, or None), ``dps`` (digits; None: float64), ``route`` of a smooth run ("auto",
    "table", "exact")."""

    backend: str = "float64"
    precision: str | None = None
    dps: int | None = None
    route: str = "auto"


@dataclass(frozen=True)
class Control:
    """How the loop is driven: ``steps`` (None: the default run, to 2 T*, at least
    ``min_default_steps``, at most ``max_default_steps``), ``record`` (steps, sorted),
    ``checkpoint``/``checkpoint_every``/``resume``, ``progress`` (a bar on stderr),
    ``expected_steps`` (the bar's total of a default run), ``on_rule`` (a smooth run's
    callback once its node count is chosen), ``method`` ("map", or the eta -> 0 limits "flow"
    / "slow") and ``certify`` (a certified pass after the run)."""

    steps: int | None = None
    record: tuple = ()
    checkpoint: str | None = None
    checkpoint_every: float = 60.0
    resume: str | None = None
    progress: bool = False
    min_default_steps: int = 1000
    max_default_steps: int | None = None
    expected_steps: int | None = None
    on_rule: Callable | None = field(default=None, compare=False)
    method: str = "map"
    certify: bool = False


@dataclass(frozen=True)
class Request:
    """One collapsed Model A run: :class:`Model`, :class:`Numerics`, :class:`Control`."""

    model: Model
    numerics: Numerics = Numerics()
    control: Control = Control()


# --------------------------------------------------------------------------------------------
# Resolution and dispatch
# --------------------------------------------------------------------------------------------

def resolve_eta(config) -> float:
    """The step size of ``config``: its ``eta``, or, when None, half of its eta_limit (the
    homogeneous activations: ``TeacherConfig.step_size``, the exact eta_limit in float64 halved;
    the smooth ones: the float64 grid maximum of :func:`rdyn.reduced_dynamics.model_a.smooth.
    eta_limit` halved, as the smooth engine takes it). The one place the API gives a missing eta
    its value."""
    if config.eta is not None:
        return config.eta
    if config.kind == "homogeneous":
        return config.step_size
    import numpy as np

    from rdyn.reduced_dynamics.model_a.smooth import eta_limit

    with np.errstate(all="ignore"):   # as the smooth engine: no RuntimeWarning leaks
        return eta_limit(config) / 2


def moment_provider(config, dps: int | None = None, route: str = "auto") -> str:
    """Which moments a run of ``config`` evaluates at ``dps`` with smooth ``route``."""
    if config.kind == "homogeneous":
        return HOMOGENEOUS
    from rdyn.reduced_dynamics.model_a.smooth import COMPILED, table_route

    if table_route(config, dps, route):
        return TABLES
    return SMOOTH_CLOSED_FORM if dps is None and config.activation.name in COMPILED else TENSOR_RULE


def model_of(config, thresholds: Thresholds, dps: int | None = None, route: str = "auto",
             groups=None) -> Model:
    """The :class:`Model` of ``config``: its moment provider at ``dps`` and ``route``
    (:func:`moment_provider`), its eta resolved (:func:`resolve_eta`)."""
    return Model(config, moment_provider(config, dps, route), resolve_eta(config), thresholds,
                 groups)


def _homogeneous_engine(request: Request):
    from rdyn.reduced_dynamics.model_a.dynamics import run_request

    return run_request(request)


def _smooth_engine(request: Request):
    from rdyn.reduced_dynamics.model_a.smooth import run_request

    return run_request(request)


ENGINES = {HOMOGENEOUS: _homogeneous_engine, SMOOTH_CLOSED_FORM: _smooth_engine,
           TENSOR_RULE: _smooth_engine, TABLES: _smooth_engine}


def execute(request: Request):
    """Run ``request`` on the engine of its moment provider (a RunResult or SmoothRun)."""
    return ENGINES[request.model.moments](request)
