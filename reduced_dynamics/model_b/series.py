"""Checkpoints of a Model B trajectory: the run identity and the saved series (kind "ln")."""
from __future__ import annotations

import numpy as np

from rdyn.reduced_dynamics.model_b.config import Config
from rdyn.reduced_dynamics.model_b.rule import SpectralRule


def run_identity(cfg: Config, rule: SpectralRule) -> dict:
    """Everything that determines a run (the checkpoint identity): every :class:`Config` field
    (named as the ``rdyn ln`` options; Monte Carlo ``seed`` and ``samples`` included, the
    sample being rebuilt from them) and the kind and size of the expectation rule."""
    identity = {name: getattr(cfg, name) for name in Config.__dataclass_fields__}
    identity["spectrum"] = None if cfg.spectrum is None else [int(m) for m in cfg.spectrum]
    identity["rule"] = {"kind": rule.kind, "nodes": int(rule.nodes), "mp": bool(rule.mp)}
    if getattr(rule, "route", None):
        identity["rule"]["route"] = rule.route
    return identity


SERIES = ("alpha", "beta", "gamma", "loss", "F")


def _consistent_length(series: dict) -> int:
    """The last step p such that alpha, beta, gamma hold steps 0..p and loss, F 0..p-1
    (values are a deterministic function of the step, so truncating to p is consistent)."""
    return min(len(series["alpha"]) - 1, len(series["beta"]) - 1, len(series["gamma"]) - 1,
               len(series["loss"]), len(series["F"]))


def save_series(path: str, identity: dict, series: dict, exact: bool) -> int:
    """Save the trajectory up to the last consistent step p (loss and F at p are recomputed
    on resume); returns p."""
    from rdyn.reduced_dynamics._version import __version__
    from rdyn.reduced_dynamics.runs import checkpoint

    p = _consistent_length(series)
    arrays = {}
    for name in SERIES:
        values = series[name][:p + 1] if name in ("alpha", "beta", "gamma") else series[name][:p]
        arrays[name] = checkpoint.exact_array(values) if exact else np.array(values, dtype=np.float64)
    checkpoint.save(path, "ln", identity, arrays, {"t": p, "rdyn_version": __version__})
    return p


def load_series(path: str, identity: dict, exact: bool) -> dict:
    from rdyn.reduced_dynamics.runs import checkpoint
    from rdyn.reduced_dynamics.runs.divergence import is_diverged

    # steps may be raised on resume (the run is extended, bit-identical to one longer run)
    arrays, meta = checkpoint.load(path, "ln", identity, ignore=("steps",))
    try:
        series = {name: (list(checkpoint.from_exact_array(arrays[name], "mpmath")) if exact
                         else np.asarray(arrays[name], dtype=np.float64).tolist())
                  for name in SERIES}
    except (KeyError, TypeError, ValueError) as exc:
        if isinstance(exc, checkpoint.CheckpointError):
            raise
        raise checkpoint.CheckpointError(f"checkpoint {path} is incomplete ({exc})") from None
    p = int(meta.get("t", -1))
    if p > identity["steps"]:
        raise checkpoint.CheckpointError(
            f"checkpoint {path} is at step {p}, beyond --steps {identity['steps']}")
    if p < 0 or _consistent_length(series) != p \
            or len(series["alpha"]) != p + 1 or len(series["loss"]) != p:
        raise checkpoint.CheckpointError(f"checkpoint {path} has series of the wrong length")
    if is_diverged([series["alpha"][-1], series["beta"][-1]]):
        raise checkpoint.CheckpointError(
            f"checkpoint {path} holds a non-finite or diverged state (alpha, beta); not resumable")
    return series

