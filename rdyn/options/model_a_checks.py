"""The cross-option checks of Model A's commands: the :attr:`Command.check
<rdyn.options.option.Command.check>` of ``rdyn teacher`` (:func:`check_teacher`) and ``rdyn
crosscheck`` (:func:`check_crosscheck`), run by :func:`rdyn.options.validation.validate` after
every check of one option, for the command line and the API alike. Each refusal is one
:class:`~rdyn.output.UsageError` naming the options (an engine's
:class:`~rdyn.derivations.fields.FieldError` worded with option names); where
several problems exist, the first one in the order below is reported.

``rdyn teacher``:

1. the model's size (:func:`checked_size`): ``--groups`` (read from their file, checked against
   ``--D``, ``--K``; not with ``--task``) or a preset's D and K; ``--activation expr`` needs
   ``--activation-expr``;
2. a homogeneous activation (relu, leaky, identity): ``--record`` (without ``--steps``: steps up
   to :data:`MIN_DEFAULT_STEPS`); ``--method flow|slow`` (:func:`check_limits`); a default run
   (no ``--steps``) must reach T*; ``--precision`` with ``--dps``; the ``--certify`` pass's
   checkpoint beside ``--checkpoint`` writable;
3. a smooth activation: ``--method flow|slow``; ``--certify`` and ``--precision`` available for
   the activation; ``--dps`` within its Gauss-Hermite ladder; ``--record``; a default run must
   reach T*.

``rdyn crosscheck``: ``--vstar-row-norms`` against ``--M``; the model's size with the memory of
the full matrices (a preset's before its groups are read or built); then ``--record`` of a
homogeneous activation, or ``--mode``, ``--record`` and the memory of the expectations of a
smooth one.

The helpers that resolve the size and the activation (:func:`preset_task`, :func:`model_size`,
:func:`smooth_activation`) serve the API as well, which maps the checked options into the
request (``rdyn.api._teacher.teacher_request``) and checks nothing again.
"""
from __future__ import annotations

import json
import os

from rdyn.options.engine_errors import usage_errors
from rdyn.options.memory import check_memory
from rdyn.options.paths import check_output_path
from rdyn.options.value_checks import parse_row_norms, parse_steps_list
from rdyn.output import UsageError, require

SMOOTH_ACTIVATIONS = ("erf", "tanh", "gelu", "softplus", "sigmoid", "expr")
MIN_DEFAULT_STEPS = 1000  # rdyn teacher's default run (no --steps) runs to max(2 T*, 1000)
SLOW_DPS_MAX = 100  # --method slow at --dps N: 3.6 s at 30, 43 s at 100, > 120 s at 200 (D = 20)
CROSSCHECK_STEPS = 300  # rdyn crosscheck's default --steps
CROSSCHECK_BATCH = 100  # rdyn crosscheck's default --batch

# reading a JSON file of N bytes into Python lists of ints takes at most about this many
# bytes per byte of file (a one-digit index and its comma, "0,", become an 8-byte list slot and
# a cached small int; a 20-digit index a 36-byte int): the memory estimate made before reading
GROUPS_BYTES_PER_FILE_BYTE = 32
GROUPS_INDEX_DIGITS = 19   # an index of a 64-bit D (D <= 10^18 - 1 has at most 18 digits)


# --------------------------------------------------------------------------------------------
# The model: its size and its activation (also the API's)
# --------------------------------------------------------------------------------------------

def is_smooth(v) -> bool:
    """The options name a smooth activation (by name, or a formula by --activation-expr)."""
    return v.activation_expr is not None or v.activation in SMOOTH_ACTIVATIONS


def preset_task(v) -> str | None:
    """The preset of the options (default: sts if --D/--K are given, else cnn); None with
    --groups."""
    if v.groups is not None:
        return None
    return v.task or ("sts" if (v.D is not None or v.K is not None) else "cnn")


def model_size(v) -> tuple[int, int, list | None]:
    """(D, K, groups) of the Model A options ``v``: the user's groups (read from their file,
    checked, as lists), or a preset's D and K (groups None: ``preset_groups`` builds them).
    UsageError otherwise (:func:`checked_size` adds the checks against --task and --K)."""
    from rdyn.reduced_dynamics.model_a.presets import check_preset, validate_groups

    with usage_errors():
        if v.groups is None:
            D, K = check_preset(preset_task(v), v.D, v.K)
            return D, K, None
        groups = read_groups_file(v.groups) if isinstance(v.groups, (str, os.PathLike)) \
            else v.groups
        D, K = validate_groups(groups, v.D)
        return D, K, [list(g) for g in groups]


def checked_size(v) -> tuple[int, int, list | None]:
    """:func:`model_size`, with --groups checked against --task and --K."""
    require(v.groups is None or v.task is None, "--groups and --task are exclusive")
    D, K, groups = model_size(v)
    require(v.groups is None or v.K is None or v.K == K, f"--groups have size {K} but --K is {v.K}")
    return D, K, groups


def _resolved(groups) -> dict:
    """The values a check read from files (``--groups``: its lists), which
    :func:`~rdyn.options.validation.validate` puts in place of the path: every file is read once."""
    return {} if groups is None else {"groups": groups}


def read_groups_file(path) -> list:
    """The JSON value of a ``--groups`` file, read as data: its memory estimated from its size
    before it is read (refused above the machine's available memory), an integer of more than
    19 digits refused before it is converted, and nesting too deep for the parser refused, each
    in one line naming the file (docs/input_rules.md, rule 4); the value is checked by
    ``validate_groups`` (non-integers, sizes, ranges)."""
    flag = f"--groups {os.fspath(path)}"
    try:
        size = os.path.getsize(path)
    except OSError as exc:
        raise UsageError(f"cannot read {flag}: {exc.strerror or exc}") from None
    check_memory(f"{flag} ({size} bytes)", GROUPS_BYTES_PER_FILE_BYTE * size)

    def index(text):
        if len(text.lstrip("-")) > GROUPS_INDEX_DIGITS:
            raise ValueError(f"{flag}: an index of {len(text.lstrip('-'))} digits; indices are "
                             "0..D-1 (at most 19 digits)")
        return int(text)

    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh, parse_int=index)
    except RecursionError:
        raise UsageError(f"cannot read {flag}: lists nested too deeply (expected a list of D "
                         "lists of integers)") from None
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        reason = getattr(exc, "strerror", None) or str(exc).splitlines()[0]
        raise UsageError(f"cannot read {flag}: {reason}") from None


def smooth_activation(v):
    """The :class:`~rdyn.derivations.activations.Activation` of smooth options ``v`` (a formula
    by --activation-expr, else the named one); None for a homogeneous activation."""
    if not is_smooth(v):
        return None
    from rdyn.derivations.activations import Activation

    formula = v.activation_expr
    return Activation("expr" if formula is not None else v.activation, formula)


def _checked_activation(v):
    """:func:`smooth_activation`, after ``--activation expr`` is checked to have its formula."""
    require(not (v.activation == "expr" and v.activation_expr is None),
            "--activation expr needs --activation-expr EXPR")
    with usage_errors():
        return smooth_activation(v)


# --------------------------------------------------------------------------------------------
# rdyn teacher
# --------------------------------------------------------------------------------------------

def check_teacher(v) -> dict:
    """The cross-option checks of ``rdyn teacher`` (the module docstring's order); returns the
    values read from files (:func:`_resolved`)."""
    from rdyn.reduced_dynamics.model_a.dynamics import Thresholds

    _, K, groups = checked_size(v)
    activation = _checked_activation(v)
    reached = Thresholds(v.t1_fraction, v.tstar_attention).attention(K) < 1 / K
    if activation is None:
        _check_homogeneous(v, reached)
    else:
        _check_smooth(v, activation, reached)
    return _resolved(groups)


def _check_homogeneous(v, reached: bool) -> None:
    """A relu / leaky / identity teacher."""
    record = parse_steps_list(v.record, "--record", v.steps)
    if v.steps is None:  # the default run stops at max(2 T*, 1000): unknown in advance
        for s in record:
            require(s <= MIN_DEFAULT_STEPS, f"--record: step {s} needs --steps (the default run "
                    f"may stop at step {MIN_DEFAULT_STEPS})")
    if v.method != "map":
        check_limits(v, reached)
        return
    if v.steps is None:  # the default run stops at 2 T*: refuse runs that cannot reach T*
        require(reached, "T* is never reached when --tstar-attention >= 1/K; give --steps")
        require(v.sigma_prime_zero != 0,
                "with --sigma-prime-zero 0 nothing moves from W_V = 0 (T* is never reached); "
                "give --steps")
    _check_precision(v.precision, v.dps)
    if v.certify and v.checkpoint is not None and (v.precision or (
            "float64" if v.dps is None else "arb")) != "arb":
        from rdyn.derivations.atomic_files import output_target
        from rdyn.reduced_dynamics.certified.arb_pass import companion_path

        # the interval64 pass's file, beside the checkpoint (a symbolic link's target)
        companion = companion_path(output_target(v.checkpoint))
        check_output_path("--checkpoint", companion)
        check_output_path("--checkpoint", companion + ".tmp")


def _check_precision(precision: str | None, dps: int | None) -> None:
    """``--precision`` with ``--dps`` (a homogeneous map run)."""
    from rdyn.reduced_dynamics.model_a.dynamics import DD_DIGITS

    if precision == "float64":
        require(dps is None, "--precision float64 takes no --dps")
    elif precision == "dd":
        require(dps is None or dps <= DD_DIGITS,
                f"--precision dd carries about {DD_DIGITS} digits: --dps must be <= {DD_DIGITS}")
    elif precision is not None:
        require(dps is not None, "--precision arb needs --dps N")


def _check_smooth(v, activation, reached: bool) -> None:
    """A smooth activation (rdyn.reduced_dynamics.model_a.smooth)."""
    from rdyn.reduced_dynamics.certified.smooth import certifiable
    from rdyn.reduced_dynamics.certified.strip import why_not_certifiable
    from rdyn.reduced_dynamics.model_a.smooth import PRECISE_LADDER, SMOOTH_DPS_MAX

    if v.method != "map":
        check_limits(v, reached, activation)
        return
    for flag, given, why in (
            ("--certify", v.certify and not certifiable(activation),
             why_not_certifiable(activation) or "no certified iteration"),
            ("--precision", v.precision not in (None, "float64", "arb"), "use --dps N")):
        require(not given, f"{flag} is not available with --activation {activation.label}: {why}")
    require(v.precision != "arb" or v.dps is not None, "--precision arb needs --dps N")
    require(v.dps is None or v.dps <= SMOOTH_DPS_MAX,
            f"--dps {v.dps}: --activation {activation.label} runs at most --dps "
            f"{SMOOTH_DPS_MAX} (its Gauss-Hermite ladder ends at {PRECISE_LADDER[-1]} nodes, about "
            "what 300 digits need)")
    parse_steps_list(v.record, "--record", v.steps)
    if v.steps is None:
        require(reached, "T* is never reached when --tstar-attention >= 1/K; give --steps")


def check_limits(v, reached: bool, activation=None) -> None:
    """``--method flow|slow``, the eta -> 0 phase limits (``activation``: a smooth one's)."""
    for flag, given in (("--record", v.record), ("--steps", v.steps),
                        ("--certify", v.certify), ("--checkpoint", v.checkpoint),
                        ("--resume", v.resume), ("--precision", v.precision)):
        require(not given, f"{flag} applies to --method map only")
    require(v.method != "flow" or v.dps is None,
            "--method flow is float64 (scipy); use --method slow with --dps")
    require(v.dps is None or v.dps <= SLOW_DPS_MAX,
            f"--dps must be at most {SLOW_DPS_MAX} with --method slow (its quadratures at N "
            f"digits: measured 3.6 s at --dps 30, 43 s at 100, over 120 s at 200), got {v.dps}")
    require(activation is None or v.dps is None,
            f"--method slow with --activation {activation.label if activation else ''} is "
            "float64 (its moments are float64 Gauss-Hermite sums): --dps is not available")
    require(reached, "T* is never reached when --tstar-attention >= 1/K")
    require(activation is not None or v.sigma_prime_zero != 0,
            "with --sigma-prime-zero 0 nothing moves from W_V = 0 (T* is never reached)")


# --------------------------------------------------------------------------------------------
# rdyn crosscheck
# --------------------------------------------------------------------------------------------

def check_crosscheck(v) -> dict:
    """The cross-option checks of ``rdyn crosscheck`` (the module docstring's order); returns the
    values read from files (:func:`_resolved`)."""
    from rdyn.reduced_dynamics.model_a.presets import check_preset
    from rdyn.verification.references.crosscheck import memory_driver, memory_estimate

    if v.vstar_row_norms is not None:
        norms = parse_row_norms(v.vstar_row_norms)
        require(len(norms) == v.M, f"--vstar-row-norms: {len(norms)} norms for --M {v.M} rows")
    steps = CROSSCHECK_STEPS if v.steps is None else v.steps

    def check_size(D: int) -> None:
        sizes = (D, v.M, v.d, steps, CROSSCHECK_BATCH if v.batch is None else v.batch, v.mode)
        check_memory(memory_driver(*sizes), memory_estimate(*sizes))

    if v.groups is None:   # a preset's size is checked before its groups are built
        with usage_errors():
            D, _ = check_preset(preset_task(v), v.D, v.K)
        check_size(D)
    D, _, groups = checked_size(v)
    activation = _checked_activation(v)
    if v.groups is not None:
        check_size(D)
    if activation is None:
        parse_steps_list(v.record, "--record", steps)
        return _resolved(groups)
    from rdyn.verification.references.full_matrix_smooth import memory_estimate as smooth_memory

    require(v.mode == "population", "--mode sgd is not available for the smooth activations "
            "(population GD only)")
    require(v.record is None, "--record is not available for the smooth activations")
    check_memory(f"--M {v.M} (with --D {D}, --activation {activation.label}: "
                 f"the expectations of all M x D entries at once)", smooth_memory(v.M, D, v.d))
    return _resolved(groups)
