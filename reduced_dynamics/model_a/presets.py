"""Model A's preset teachers and user group families (docs/models_and_conventions.md, "Model A conventions" (preset teachers)).

For every query column ``i`` the teacher averages the tokens of a group ``G^i`` of exactly ``K``
token indices (``S*[j, i] = 1{j in G^i} / K``). The presets are the paper's Section 4
experiments; any family of ``D`` groups of equal size ``K`` is accepted as well.
"""
from __future__ import annotations

import numbers

from rdyn.derivations.fields import FieldError

PRESETS = {  # task: (default D, default K, K fixed?)
    "cnn": (36, 4, False),
    "gcn": (20, 3, True),
    "sts": (20, 4, False),
    "gslp": (20, 1, True),
}


def preset_groups(task: str, D: int, K: int) -> list[list[int]]:
    """The group G^i of every query column i for a preset teacher (docs/models_and_conventions.md, preset teachers):
    cnn: consecutive blocks of K; gcn: {i-1, i, i+1} mod D; sts: {0..K-1} for every i;
    gslp: {0} for every i."""
    if task == "cnn":
        return [list(range((i // K) * K, (i // K) * K + K)) for i in range(D)]
    if task == "gcn":
        return [sorted({(i - 1) % D, i, (i + 1) % D}) for i in range(D)]
    if task == "sts":
        return [list(range(K)) for _ in range(D)]
    if task == "gslp":
        return [[0] for _ in range(D)]
    raise ValueError(f"unknown task {task!r}")


def check_preset(task: str, D: int | None, K: int | None) -> tuple[int, int]:
    """(D, K) of preset ``task`` with the given overrides; ValueError (one line) if the
    preset cannot have them (gcn/gslp fix K; cnn needs K | D; 1 <= K < D): a FieldError
    naming the field (K, D)."""
    D0, K0, k_fixed = PRESETS[task]
    D = D0 if D is None else D
    K = K0 if K is None else K
    if k_fixed and K != K0:
        raise FieldError("K", f"task {task} has K = {K0}; {{K}} cannot change it")
    if K < 1:
        raise FieldError("K", f"K must be >= 1, got {K}")
    if K >= D:
        raise FieldError("K", f"need K < D, got K={K}, D={D}")
    if task == "cnn" and D % K != 0:
        raise FieldError("D", f"cnn needs D to be a multiple of K, got D={D}, K={K}")
    return D, K


def validate_groups(groups, D: int | None = None) -> tuple[int, int]:
    """Check a user family of groups: D lists of K distinct integer indices in 0..D-1.
    Returns (D, K); a FieldError (field ``groups``) with a one-line message otherwise."""
    if not (isinstance(groups, (list, tuple)) and groups
            and all(isinstance(g, (list, tuple)) for g in groups)):
        raise FieldError("groups", "{groups} must be a JSON list of D index lists")
    n = len(groups)
    if D is not None and D != n:
        raise FieldError("groups", f"{{groups}} has {n} groups but {{D}} is {D}", "D")
    for i, g in enumerate(groups):
        bad = [j for j in g if isinstance(j, bool) or not isinstance(j, numbers.Integral)]
        if bad:
            raise FieldError("groups", f"{{groups}}: indices must be integers; group {i} has "
                             f"{bad[0]!r}")
    sizes = {len(g) for g in groups}
    if len(sizes) != 1:
        raise FieldError("groups", f"every group must have the same size K; got sizes "
                         f"{sorted(sizes)}")
    (K,) = sizes
    for i, g in enumerate(groups):
        if not all(0 <= j < n for j in g):
            raise FieldError("groups", f"group {i} has an index outside 0..{n - 1}")
        if len(set(g)) != len(g):
            raise FieldError("groups", f"group {i} repeats an index")
    if not 1 <= K < n:
        raise FieldError("groups", f"need 1 <= K < D, got K={K}, D={n}")
    return n, K
