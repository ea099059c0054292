"""Grids of Model A configurations for batched sweeps (``rdyn sweep --grid``).

Grid syntax: ``'KEY=VALUES;KEY=VALUES;...'``. VALUES is a comma list (``'D=20,36'``), or for
real keys ``'LO:HI:N'`` (N equally spaced values, both ends included, computed in decimal so
``0.1:0.3:3`` gives 0.1, 0.2, 0.3 as written). Keys and defaults: :data:`KEYS`. The points
are the Cartesian product in the order given (the last key varies fastest). Errors are
:class:`~rdyn.derivations.fields.FieldError` of the field ``grid`` (one line; the API
words it as the option ``--grid``).
"""
from __future__ import annotations

import itertools
import math
from decimal import Decimal

from rdyn.derivations.messages import summarised
from rdyn.derivations.fields import FieldError

KEYS = {  # key: (parser, default)
    "D": (int, 36), "K": (int, 4), "eta": (float, None), "vstar_norm2": (float, 1.0),
    "activation": (str, "relu"), "kappa": (float, 0.1), "sigma_prime_zero": (float, 1.0),
    "logit_scale": (str, "D"),
}
# Largest number of grid points (configurations) a sweep takes: each holds its state, events
# and log-grid captures (about 1 kB), and the grid itself is built as Python dicts (about
# 1 kB each), so 10**6 points stay near 2 GB. Counted before any value list is built.
MAX_POINTS = 10**6

ALIASES = {"vstar-norm2": "vstar_norm2", "sigma-prime-zero": "sigma_prime_zero",
           "logit-scale": "logit_scale"}


def grid_error(template: str) -> FieldError:
    """A refusal of the grid text: ``template`` names the field as ``{grid}``."""
    return FieldError("grid", template)


def _require(condition: bool, template: str) -> None:
    if not condition:
        raise grid_error(template)


def _values(key: str, text: str) -> list:
    kind, _ = KEYS[key]
    text = text.strip()
    _require(text != "", f"{{grid}}: no values for {key}")
    if key == "eta" and text == "auto":
        return [None]
    if ":" in text and kind is not str:
        parts = text.split(":")
        _require(len(parts) == 3, f"{{grid}}: range for {key} must be LO:HI:N, got {text!r}")
        try:
            lo, hi, n = Decimal(parts[0]), Decimal(parts[1]), int(parts[2])
        except (ValueError, ArithmeticError):
            raise grid_error(f"{{grid}}: bad range {text!r} for {key}") from None
        _require(lo.is_finite() and hi.is_finite(), f"{{grid}}: {key} must be finite, got {text!r}")
        _require(n >= 1, f"{{grid}}: range for {key} needs N >= 1")
        _require(n <= MAX_POINTS, f"{{grid}}: range for {key} has {n} values; a sweep takes at "
                 f"most {MAX_POINTS} configurations")
        values = [float(lo + (hi - lo) * i / (n - 1)) for i in range(n)] if n > 1 else [float(lo)]
        if kind is int:
            _require(all(v == int(v) for v in values), f"{{grid}}: range for {key} is not integral")
            values = [int(v) for v in values]
        return values
    out = []
    for item in text.split(","):
        item = item.strip()
        if key == "eta" and item == "auto":
            out.append(None)
            continue
        try:
            value = kind(item)
        except ValueError:
            raise grid_error(f"{{grid}}: bad value {item!r} for {key}") from None
        _require(kind is not float or math.isfinite(value),
                 f"{{grid}}: {key} must be finite, got {item!r}")
        out.append(value)
    return out


def parse_grid(text: str, refused: dict[str, str] | None = None) -> list[dict]:
    """The grid string as a list of parameter dicts (Cartesian product, last key fastest).
    ``kappa`` is refused when no point of the grid is leaky (it would be ignored); a key of
    ``refused`` (key: reason) is refused with that reason (e.g. the keys a smooth sweep
    does not use)."""
    axes: dict[str, list] = {}
    for part in text.split(";"):
        if not part.strip():
            continue
        _require("=" in part, f"{{grid}}: expected KEY=VALUES, got {summarised(part.strip())}")
        key, values = part.split("=", 1)
        key = ALIASES.get(key.strip(), key.strip())
        _require(key in KEYS, f"{{grid}}: unknown key {key!r} (keys: {', '.join(KEYS)})")
        _require(key not in axes, f"{{grid}}: key {key} given twice")
        _require(key not in (refused or {}), f"{{grid}}: key {key} {(refused or {}).get(key)}")
        axes[key] = _values(key, values)
    _require(bool(axes), "{grid} is empty")
    size = math.prod(len(v) for v in axes.values())
    _require(size <= MAX_POINTS, f"{{grid}} has {size} points ("
             + " x ".join(f"{k}: {len(v)}" for k, v in axes.items())
             + f"); a sweep takes at most {MAX_POINTS} configurations")
    _require("kappa" not in axes or "leaky" in axes.get("activation", ())
             or "kappa" in (refused or {}),
             "{grid}: kappa applies to leaky rows only (add activation=leaky)")
    points = []
    seen = set()
    for combo in itertools.product(*axes.values()):
        point = {k: default for k, (_, default) in KEYS.items()}
        point.update(zip(axes, combo))
        if point["activation"] != "leaky":
            point["kappa"] = 0.1  # unused; rows differing only in kappa collapse into one
        key = tuple(sorted(point.items(), key=lambda kv: kv[0]))
        if key not in seen:
            seen.add(key)
            points.append(point)
    return points


def config(point: dict):
    """The TeacherConfig of one grid point (ValueError naming the point otherwise)."""
    from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig

    try:
        return TeacherConfig(**point)
    except (TypeError, ValueError) as exc:
        where = ", ".join(f"{k}={v}" for k, v in point.items()
                          if k in ("D", "K") or v != KEYS[k][1])
        if isinstance(exc, FieldError):   # the field keeps its name; the API shows its option
            raise exc.prefixed(f"{{grid}} point ({where or 'defaults'}): ", "grid") from None
        raise grid_error(f"{{grid}} point ({where or 'defaults'}): {exc}") from None


SMOOTH_UNUSED = ("activation", "kappa", "sigma_prime_zero")  # keys a smooth sweep refuses


def smooth_config(point: dict, activation, M: int):
    """The SmoothConfig of one grid point of a sweep of the smooth ``activation``
    (:class:`~rdyn.derivations.activations.Activation`, V* with ``M`` rows of equal norm);
    ValueError naming the point otherwise."""
    from rdyn.reduced_dynamics.model_a.smooth import SmoothConfig

    try:
        if point["eta"] is not None and not point["eta"] > 0:
            raise ValueError(f"eta must be > 0, got {point['eta']}")
        if point["logit_scale"] not in ("D", "sqrtD"):
            raise ValueError(f"logit scale must be D or sqrtD, got {point['logit_scale']!r}")
        return SmoothConfig(D=point["D"], K=point["K"], activation=activation, eta=point["eta"],
                            vstar_norm2=point["vstar_norm2"], M=M,
                            logit_scale=point["logit_scale"])
    except (TypeError, ValueError) as exc:
        where = ", ".join(f"{k}={point[k]}" for k in ("D", "K", "eta", "vstar_norm2",
                                                       "logit_scale")
                          if k in ("D", "K") or point[k] != KEYS[k][1])
        if isinstance(exc, FieldError):   # the field keeps its name; the API shows its option
            raise exc.prefixed(f"{{grid}} point ({where}): ", "grid") from None
        raise grid_error(f"{{grid}} point ({where}): {exc}") from None
