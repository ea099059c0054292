"""Checkpoints of a smooth-activation Model A run (``rdyn teacher --activation erf|tanh|...
--checkpoint FILE --resume FILE``): the loop state between two chunks, its identity, and
saving / loading it with :mod:`rdyn.reduced_dynamics.runs.checkpoint` (kind "teacher").

The identity (:func:`run_identity`) holds everything that determines the trajectory and the
report: the activation and its formula, D, K, M, eta, ||V*||_F^2, the logit scale, steps,
record, the t1 / T* thresholds, the backend and ``dps``, the Gauss-Hermite node count and the
default-run step bounds. A ReLU checkpoint (``model_a.run_identity``) differs from it in
``activation``, so either resume refuses the other's file with one line naming the key.
States are stored exactly (``"<man>p<exp>"``, :func:`rdyn.reduced_dynamics.runs.checkpoint.
exact_text`): float64 numbers, mpmath ``mpf`` and arb midpoints (the loop keeps point balls).
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

KIND = "teacher"


@dataclass
class SmoothLoop:
    """The state of a smooth run between two chunks: step ``t`` (its state not yet processed:
    events at ``t`` not checked, not captured), the state (C1, C2, C3) as backend numbers,
    the events so far, the step the run stops at, the captured states of earlier steps,
    ``done`` (the run has ended) and ``diverged`` (first step whose state diverged)."""

    t: int
    state: list
    t1: int | None = None
    T_star: int | None = None
    lost: int | None = None
    stop_at: int = 0
    captured: dict = field(default_factory=dict)
    done: bool = False
    diverged: int | None = None

    def copy(self) -> "SmoothLoop":
        return SmoothLoop(self.t, list(self.state), self.t1, self.T_star, self.lost,
                          self.stop_at, dict(self.captured), self.done, self.diverged)


def run_identity(config, steps, record, t1_fraction: float, tstar_attention, dps, backend: str,
                 nodes: int, min_default_steps: int, max_default_steps: int) -> dict:
    """Everything that determines a smooth run's trajectory and report (keys named after the
    ``rdyn teacher`` options where there is one)."""
    return {"D": config.D, "K": config.K, "activation": config.activation.name,
            "activation_expr": config.activation.formula, "M": config.M, "eta": config.eta,
            "vstar_norm2": config.vstar_norm2, "logit_scale": config.logit_scale,
            "steps": steps, "record": sorted({int(s) for s in record}),
            "t1_fraction": t1_fraction, "tstar_attention": tstar_attention,
            "backend": backend, "dps": dps, "nodes": int(nodes),
            "min_default_steps": int(min_default_steps),
            "max_default_steps": int(max_default_steps)}


def _event(value) -> int:
    return -1 if value is None else int(value)


def _from_event(value) -> int | None:
    return None if int(value) < 0 else int(value)


def save_loop(path: str, identity: dict, loop: SmoothLoop, quadrature_error: float,
              table_error: float | None = None) -> None:
    """Write ``loop`` to ``path`` atomically (signals blocked meanwhile). ``table_error``: the
    tabulated route's largest tile error so far (None off that route), so that a resumed run reports
    the error of the whole run, the tiles built before the interruption included."""
    from rdyn.reduced_dynamics.runs import checkpoint
    from rdyn.reduced_dynamics._version import __version__

    steps = sorted(s for s in loop.captured if s < loop.t or loop.done)
    arrays = {"state": checkpoint.exact_array(list(loop.state)),
              "capture_steps": np.asarray(steps, dtype=np.int64),
              "capture_out": checkpoint.exact_array([list(loop.captured[s]) for s in steps])
              if steps else np.zeros((0, 3), dtype="U1")}
    meta = {"t": int(loop.t), "t1": _event(loop.t1), "T_star": _event(loop.T_star),
            "lost": _event(loop.lost), "stop_at": int(loop.stop_at), "done": bool(loop.done),
            "diverged": _event(loop.diverged), "quadrature_error": float(quadrature_error),
            "table_error": None if table_error is None else float(table_error),
            "rdyn_version": __version__}
    checkpoint.save(path, KIND, identity, arrays, meta)


def saved_rule(path: str, identity: dict) -> tuple[int, float]:
    """(node count, estimated quadrature error) of the checkpoint at ``path``, whose identity
    must agree with ``identity`` except for the node count (CheckpointError otherwise)."""
    from rdyn.reduced_dynamics.runs import checkpoint

    _, meta = checkpoint.load(path, KIND, identity, ignore=("nodes",))
    try:
        return int(meta["saved_identity"]["nodes"]), float(meta["quadrature_error"])
    except (KeyError, TypeError, ValueError):
        raise checkpoint.CheckpointError(f"checkpoint {path} is incomplete (no node count)") from None


def saved_table_error(path: str, identity: dict) -> float | None:
    """The tabulated route's largest tile error up to the checkpoint at ``path`` (None when the saved
    run was not on that route, or was saved before the field existed)."""
    from rdyn.reduced_dynamics.runs import checkpoint

    _, meta = checkpoint.load(path, KIND, identity)
    value = meta.get("table_error")
    return None if value is None else float(value)


def load_loop(path: str, identity: dict, backend: str) -> SmoothLoop:
    """The loop saved at ``path`` (CheckpointError, one line, if it does not fit ``identity``
    or is incomplete / holds a diverged state)."""
    from rdyn.reduced_dynamics.runs import checkpoint

    arrays, meta = checkpoint.load(path, KIND, identity)

    def parse():
        state = list(checkpoint.from_exact_array(arrays["state"], backend))
        steps = [int(s) for s in np.asarray(arrays["capture_steps"]).ravel()]
        out = checkpoint.from_exact_array(arrays["capture_out"], backend) if steps else None
        loop = SmoothLoop(int(meta["t"]), state, _from_event(meta["t1"]),
                          _from_event(meta["T_star"]), _from_event(meta["lost"]),
                          int(meta["stop_at"]), {}, bool(meta["done"]),
                          _from_event(meta["diverged"]))
        return state, steps, out, loop

    state, steps, out, loop = checkpoint.parsed(path, parse)
    checkpoint.check_state(path, len(state) == 3 and not (steps and out.shape != (len(steps), 3)),
                           state, "C1, C2, C3")
    loop.captured = {s: tuple(out[i]) for i, s in enumerate(steps)}
    return loop
