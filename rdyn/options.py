"""The options of every subcommand, declared once: the CLI parsers and the API's keyword
validation are both generated from :data:`COMMANDS`, so ``rdyn CMD --opt`` and
``rdyn.CMD(opt=...)`` accept and refuse exactly the same values with the same one-line message.

Adding an option: append one :class:`Option` to the command's tuple below and regenerate the
typed options (rdyn/option_types.py, one frozen dataclass per subcommand that the drivers read
as ``v.name``: :func:`write_option_types`). Adding a subcommand:
add a :class:`Command` entry (options tuple + help) to :data:`COMMANDS`, a module
``rdyn/cli/<name>.py`` (``run(result, args)`` printing the text form) and an API function in
:mod:`rdyn.api` (see docs/api.md).

What the table checks, before any work (:func:`validate`):

* type: ``int`` options take integers (not bools or 2.5), ``float`` options real numbers, and
  every float must be finite (nan and +-inf are refused);
* range: ``lo``/``hi`` bounds, open or closed (``lo_open``/``hi_open``); ``choices``;
* applicability: an option whose ``applies`` predicate is false for the other values is
  refused when it is given (e.g. ``--kappa`` without ``--activation leaky``);
* output paths (``output="file"`` or ``"dir"``): the folder exists, is a directory and is
  writable, and the path itself is not a directory (files) / not a file (folders);
* optional dependencies (``needs=(module, extra)``): importable, else an install hint.

Checks that involve several options of one model (K < D, a spectrum of length d, memory
estimates) live with the model's configuration in :mod:`rdyn.api` and raise the same
:class:`~rdyn.output.UsageError`.
"""
from __future__ import annotations

import dataclasses
import math
import numbers
import os
from dataclasses import dataclass, field
from typing import Any, Callable, SupportsInt, cast

from rdyn.derivations.atomic_files import output_target, reaches_descriptor, unwritable_reason
from rdyn.output import UsageError

DPS_MIN = 5
DPS_MAX = 4000  # Python's int <-> str conversion limit is 4300 digits; 4000 leaves guard digits
# rdyn ln at --dps: `ln --data spectrum --d 3 --spectrum 4,1,1 --steps 100` took 22 s at
# --dps 100 and 82 s at --dps 1000 (2 shared cores); at 4000 an ln run did not finish in 15
# minutes (issue 20)
LN_DPS_MAX = 1000
# narrower --dps ranges of two routes (their constants live with the routes and are tested equal:
# reduced_dynamics.model_b.gaussian.GAUSSIAN_DPS_MAX, reduced_dynamics.model_a.smooth.SMOOTH_DPS_MAX)
GAUSSIAN_ROUTE_DPS_MAX = 200
SMOOTH_DPS_MAX = 300
MAX_TEACHER_STEPS = 10**9
MAX_MODEL_A_STEPS = 10**12  # rdyn teacher: 64-bit step counters everywhere (docs/long_horizons.md)
SEED_MAX = 2**63 - 1
# ||V*||_F^2 scales every Model A loss (W_V = C1 V*, C1 = O(1)): above this the losses leave the
# float64-safe range of reduced_dynamics/runs/divergence.py (STATE_BOUND) before the first step
VSTAR_NORM2_MAX = 1e100
# Model B's alpha0, beta0: |alpha0 beta0| = |gamma0| <= 1e100, the float64-safe range
INITIAL_MAX = 1e50
# label noise of online SGD (crosscheck --mode sgd, figures): the loss holds noise_std^2, so
# above 1e50 it leaves the float64-safe range (1e100) before the first step
NOISE_STD_MAX = 1e50
# the most tokens D (and group size K) of Model A: the collapsed map, the eta -> 0 limits and the
# step counters take D as a 64-bit integer and as a float64 (sqrt(D), log D); 10^18 < 2^63
D_MAX = 10**18
# every other integer option: a 64-bit integer at most (numba loops, numpy seeds, step counters)
INT_OPTION_MAX = 2**63 - 1


@dataclass(frozen=True)
class Option:
    """One option of one subcommand.

    ``name`` is the Python keyword (``vstar_norm2``); the CLI flag is ``--`` + name with
    ``_`` -> ``-`` (``--vstar-norm2``). ``kind``: "int", "float", "str", "choice", "flag"
    (store_true), "path" (an input file), "out" (an output path; ``output`` says "file" or
    "dir"). ``default`` is the value when the option is not given (``None`` = "not given",
    the effective default is stated in ``help``). ``applies(values) -> bool`` (values: every
    option of the command, given or default) says whether the option makes sense; ``applies_text``
    completes the refusal "--X applies only <applies_text>" (or ``refusal`` replaces it).
    """

    name: str
    kind: str
    default: Any = None
    help: str = ""
    lo: float | None = None
    hi: float | None = None
    lo_open: bool = False
    hi_open: bool = False
    choices: tuple = ()
    output: str | None = None
    applies: Callable[[dict], bool] | None = None
    applies_text: str = ""
    refusal: str | None = None
    # the refusal when it depends on the other values (e.g. which of two conditions failed); None: ``refusal``
    refusal_for: Callable[[dict], str] | None = None
    needs: tuple[str, str] | None = None
    required: bool = False
    metavar: str | None = None
    cli_only: bool = False
    api_types: tuple = ()  # extra Python types the API accepts (e.g. a tuple for --spectrum)
    repeatable: bool = False  # "str" options only: given several times, the value is a list
    siblings: tuple[str, ...] = ()  # "out" files: suffixes of files written next to it (FILE.tmp)
    # a check of the value alone beyond type and range (raises ValueError with a one-line
    # message, e.g. a formula that does not parse); run after coercion, before any work
    check_value: Callable[[Any], None] | None = None
    # (name, values): refused when the option ``name`` is also *given* (CLI or API, not its
    # default) with a value outside ``values`` (e.g. --activation-expr with an explicit
    # --activation relu: the default relu is no conflict, an explicit one is)
    exclusive_with: tuple | None = None

    @property
    def flag(self) -> str:
        return "--" + self.name.replace("_", "-")

    def range_text(self) -> str:
        """The documented range, e.g. "> 0", "in [0, 1)", "in 0..1000000000"."""
        lo, hi = self.lo, self.hi
        if self.kind == "int":
            lo = None if lo is None else (int(lo) + 1 if self.lo_open else int(lo))
            hi = None if hi is None else (int(hi) - 1 if self.hi_open else int(hi))
            if lo is not None and hi is not None:
                return f"in {lo}..{hi}"
            if lo is not None:
                return f">= {lo}"
            return f"<= {hi}" if hi is not None else ""
        if lo is not None and hi is not None:
            return f"in {'(' if self.lo_open else '['}{_num(lo)}, {_num(hi)}{')' if self.hi_open else ']'}"
        if lo is not None:
            return f"{'>' if self.lo_open else '>='} {_num(lo)}"
        if hi is not None:
            return f"{'<' if self.hi_open else '<='} {_num(hi)}"
        return ""


def integral(value) -> int | None:
    """The one rule for integers, CLI and API alike: an int, or a finite real number or
    numeric string whose value is an integer ("20", 20.0, "1e3", 1e9 -> 1000000000); else
    None (2.5, "2.5", nan, inf, True, "abc"). Strings are read exactly (decimal), never
    through a float, so "12345678901234567890" stays exact."""
    from decimal import Decimal, InvalidOperation

    if isinstance(value, bool):
        return None
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, str):
        try:
            value = Decimal(value.strip())
        except InvalidOperation:
            return None
        if not value.is_finite() or value != value.to_integral_value():
            return None
        return int(value)
    if isinstance(value, numbers.Real) and math.isfinite(value) and float(value).is_integer():
        return int(cast(SupportsInt, value))  # an integral Real
    return None


def integer_argument(text: str) -> int:
    """argparse type of "int" options: :func:`integral` ("1e9" and "20.0" are integers). A
    number of more than 100000 digits (``--D 1e1000000``) is refused before it is converted:
    building it exactly takes minutes (the conversion is quadratic), and no option comes near."""
    import argparse
    from decimal import Decimal, InvalidOperation

    try:
        number = Decimal(text.strip())
        digits = number.adjusted() + 1 if number.is_finite() else 0
    except (InvalidOperation, ValueError, AttributeError):
        digits = 0
    if digits > 100000:
        raise argparse.ArgumentTypeError(f"{shown(text)} has {digits} digits, beyond the range "
                                         "of every integer option")
    value = integral(text)
    if value is None:
        raise ValueError(text)
    return value


integer_argument.__name__ = "integer"  # argparse: "invalid integer value: '2.5'"


def shown_integer(value: int) -> str:
    """An integer in a message: as is up to 24 digits, else in scientific form with its digit
    count (``--D 1e300`` -> "1.000e+300 (an integer of 301 digits)"): one short line."""
    from decimal import ROUND_DOWN, Decimal

    value = int(value)
    if value.bit_length() <= 79:   # below 10^24: as is
        return str(value)
    exact = Decimal(abs(value))   # not str(): Python refuses int -> str above 4300 digits
    digits = exact.adjusted() + 1
    if digits <= 24:
        return str(value)
    lead = str(int(exact.scaleb(4 - digits).to_integral_value(rounding=ROUND_DOWN)))
    sign = "-" if value < 0 else ""
    return f"{sign}{lead[0]}.{lead[1:4]}e+{digits - 1} (an integer of {digits} digits)"


def _num(x) -> str:
    return str(int(x)) if float(x).is_integer() and abs(x) < 1e16 else repr(x)


@dataclass(frozen=True)
class Command:
    name: str
    help: str
    options: tuple[Option, ...]
    check: Callable[[dict], None] | None = field(default=None)

    def option(self, name: str) -> Option:
        for o in self.options:
            if o.name == name:
                return o
        raise KeyError(name)


# ---------------------------------------------------------------------------------------------
# Shared pieces
# ---------------------------------------------------------------------------------------------

def _json() -> Option:
    return Option("json", "flag", False, "print exactly one JSON object on stdout (logs go to "
                  "stderr)", cli_only=True)


def _dps(applies=None, applies_text="", refusal=None, help_text=None, hi=DPS_MAX) -> Option:
    return Option("dps", "int", None, help_text or "working precision in decimal digits "
                  "(default: float64)", lo=DPS_MIN, hi=hi, applies=applies,
                  applies_text=applies_text, refusal=refusal)


def _never(_values) -> bool:
    return False


def _checkpoint_options(folder_help: str = "", resume_help: str = "") -> tuple[Option, ...]:
    return (
        Option("checkpoint", "out", None, "write the complete loop state to FILE (.npz) every "
               "--checkpoint-every seconds, at the end and on Ctrl-C (then exit 130 and print "
               "the command that resumes)" + folder_help, output="file", metavar="FILE",
               siblings=(".tmp",)),
        Option("checkpoint_every", "float", None, "seconds between checkpoints (with "
               "--checkpoint only; default 60)", lo=0, metavar="SECONDS",
               applies=lambda v: v["checkpoint"] is not None, applies_text="with --checkpoint"),
        Option("resume", "path", None, "continue from a checkpoint written with the same "
               "options (else exit 2 naming the differing option); the result is "
               "bit-identical to an uninterrupted run. --steps may be raised on resume "
               "(the run is extended, bit-identical to one longer run)" + resume_help,
               metavar="FILE"),
    )


def _teacher_model_options(steps_hi: int, steps_help: str) -> tuple[Option, ...]:
    """The Model A options shared by ``teacher`` and ``crosscheck``."""
    return (
        Option("task", "choice", None, "preset teacher (default: sts if --D/--K are given, "
               "else cnn)", choices=("cnn", "gcn", "sts", "gslp")),
        Option("D", "int", None, "number of tokens D (default: the preset's)", lo=2, hi=D_MAX),
        Option("K", "int", None, "group size K (1 <= K < D; default: the preset's)", lo=1,
               hi=D_MAX - 1),
        Option("groups", "path", None, "JSON file: list of D index lists (group G^i of each "
               "query column i), all of size K; indices are integers in 0..D-1 (the API also "
               "takes the list itself)", api_types=(list, tuple)),
        Option("activation", "choice", "relu", "sigma: identity, relu (default), leaky = "
               "max(x, kappa x), or a smooth activation (V* with --M rows of equal norm): erf, "
               "tanh, gelu = x Phi(x), softplus, sigmoid, expr (--activation-expr)",
               choices=("identity", "relu", "leaky") + SMOOTH_ACTIVATIONS),
        Option("activation_expr", "str", None, "sigma as a formula in x, e.g. "
               "'x*tanh(x)' (implies --activation expr): decimal numbers, x, pi, E, + - * / **, "
               "and exp log sqrt sin cos tan sinh cosh tanh atan asinh erf erfc abs Max Min "
               "besselj(n, x) (integer n); read "
               "as data, never run as code (docs/input_rules.md, Security); refused unless finite "
               "with finite sigma', sigma'' on [-40, 40] and |sigma| <= 1e6 (1 + x^2) there", metavar="EXPR",
               applies=lambda v: v["activation"] in ("relu", "expr"),
               refusal="--activation-expr goes with --activation expr (or no --activation)",
               check_value=_check_activation_expr, exclusive_with=("activation", ("expr",))),
        Option("kappa", "float", None, "LeakyReLU negative slope (leaky only; default 0.1)",
               lo=0, hi=1, hi_open=True, applies=lambda v: v["activation"] == "leaky",
               applies_text="to --activation leaky",
               refusal="--kappa applies to --activation leaky only"),
        Option("eta", "float", None, "GD step size (dimensionless; default: half of eta_limit)",
               lo=0, lo_open=True),
        Option("vstar_norm2", "float", 1.0, "||V*||_F^2, squared Frobenius norm of the "
               "teacher's value matrix (default 1)", lo=0, lo_open=True, hi=VSTAR_NORM2_MAX),
        Option("steps", "int", None, steps_help, lo=0, hi=steps_hi),
        Option("record", "str", None, "comma-separated steps in 0..N whose state to report",
               api_types=(list, tuple, range)),
        Option("sigma_prime_zero", "float", 1.0, "sigma'(0), used at the first step where "
               "W_V = 0 (default 1; identity, relu, leaky: a smooth activation has its own)",
               applies=lambda v: not _smooth(v),
               refusal="--sigma-prime-zero applies to identity, relu and leaky only (a smooth "
               "activation's sigma'(0) is its derivative)"),
        Option("logit_scale", "choice", "D", "softmax(P^T W_KQ P / D) (seed, default) or "
               "/ sqrt(D) (conference)", choices=("D", "sqrtD")),
    )


SMOOTH_ACTIVATIONS = ("erf", "tanh", "gelu", "softplus", "sigmoid", "expr")


def _smooth(v: dict) -> bool:
    return v["activation"] in SMOOTH_ACTIVATIONS[:-1] or v["activation"] == "expr" or (
        v.get("activation_expr") is not None)


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


def _check_row_norms(value) -> None:
    parse_row_norms(value)


def _check_activation_expr(text) -> None:
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
    import math

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


# ---------------------------------------------------------------------------------------------
# The table
# ---------------------------------------------------------------------------------------------

TEACHER = Command("teacher", "Model A collapsed dynamics: C1, C2, C3, phases t1 and T*", (
    _json(),
    _dps(help_text="working precision in decimal digits: iterate on arb balls (python-flint) "
         f"at this precision; JSON reals become strings of this many digits "
         f"({DPS_MIN}..{DPS_MAX}; at most {SMOOTH_DPS_MAX} for the smooth activations erf, tanh, "
         "gelu, softplus, sigmoid, expr; default: float64 fast path)"),
    *_teacher_model_options(MAX_MODEL_A_STEPS, "GD steps N (64-bit step counters; default: "
                            "run to T*, then as many steps again)"),
    Option("M", "int", None, "smooth activations: number of rows of V*, all of norm "
           "sqrt(vstar_norm2 / M) (default 1; the homogeneous activations do not depend on it)",
           lo=1, hi=10**6, applies=_smooth, refusal="--M applies to the smooth activations only "
           "(erf, tanh, gelu, softplus, sigmoid, expr)"),
    Option("t1_fraction", "float", 0.95, "t1 threshold: first t >= 1 with C1 >= fraction * C1* "
           "(default 0.95)", lo=0, lo_open=True),
    Option("tstar_attention", "float", None, "T* threshold on the attention p of an in-group "
           "key (default 1/(2K))", lo=0, hi=1, lo_open=True),
    Option("quiet", "flag", False, "no progress bar or time estimate on stderr"),
    Option("method", "choice", "map", "map: iterate the exact collapsed map (default); flow: "
           "gradient-flow limit eta -> 0 (float64, scipy Radau; also its first-order modified "
           "equation at --eta); slow: flow through t1, then slow-manifold quadrature (any D; "
           "--dps for mpmath). flow/slow report tau1, tau_star and t1, T_star = tau/eta as reals "
           "(limits, not step counts). Smooth activations: both, float64 only, C1* solved "
           "numerically per s, derivatives without closed form by central differences "
           "(docs/any_activation.md)", choices=("map", "flow", "slow")),
    Option("smooth_route", "choice", None, "smooth activations, float64: how each step's "
           "moments are computed. auto (default) or table: tabulated (piecewise Chebyshev tiles "
           "built from the Gauss-Hermite rule, docs/any_activation.md); exact: the compiled "
           "closed forms (erf, gelu) or Gauss-Hermite rule (the others) at every step",
           choices=("auto", "table", "exact"),
           applies=lambda v: _smooth(v) and v["dps"] is None and v["method"] == "map",
           refusal="--smooth-route applies to float64 map runs of the smooth activations "
           "(erf, tanh, gelu, softplus, sigmoid, expr) only"),
    Option("precision", "choice", None, "arithmetic: float64 (default without --dps), arb "
           "(python-flint, --dps digits; default with --dps) or dd: compiled double-double, 106 "
           "bits (~31 digits), about 17x the arb speed, for long runs; reported with --dps "
           "digits (at most 31, default 31). Never chosen automatically (docs/long_horizons.md)",
           choices=("float64", "dd", "arb")),
    Option("certify", "flag", False, "also iterate with rigorous enclosures: outward-rounded "
           "float64 intervals (compiled; default, also with --precision dd) or, with --dps "
           "(arb), arb balls; --activation erf|gelu: arb balls always (closed-form "
           "expectations; working precision adapted to certify --dps digits, default 30); "
           "tanh|softplus|sigmoid and formulas analytic on a strip (tanh, erf, erfc, sin, cos, "
           "besselj, exp of a concave quadratic of affine arguments, sums, products, "
           "non-negative integer powers): arb balls with a strip quadrature of proved remainder "
           "(radii about 1e-15, 10^-N with --dps N <= 40); other formulas (abs, Max, Min, sqrt, "
           "log, atan, asinh, tan, sinh, cosh, quotients) are refused, saying why. JSON gains "
           "'certified' (t1 and T* proven), 'radius' (relative, final step), "
           "'certified_backend' (interval64 | arb) and 'certificate' (with the final "
           "enclosure). With --checkpoint FILE the interval64 pass checkpoints to FILE's "
           "sibling NAME.certify.npz and --resume continues it (bit-identical certificate)"),
    *_checkpoint_options(resume_help="; a smooth --activation (erf, tanh, ...: identity "
                         "includes the activation, formula, node count and --dps) keeps --steps"),
))

CROSSCHECK = Command("crosscheck", "Model A: full-matrix GD (population or SGD) vs the "
                     "collapsed (C1, C2, C3) map", (
    _json(),
    _dps(applies=_never, refusal="crosscheck runs in float64 only; --dps does not apply"),
    *_teacher_model_options(10**6, "GD steps N (default 300)"),
    Option("d", "int", 8, "input dimension d (default 8)", lo=1),
    Option("M", "int", 4, "output dimension M (default 4)", lo=1),
    Option("vstar_row_norms", "str", None, "comma-separated norms of the M rows of V* (then "
           "rescaled to ||V*||_F^2 = --vstar-norm2; default: a Gaussian V*, or equal norms for a "
           "smooth activation). Unequal norms with a smooth activation break the ansatz "
           "W_V = C1 V*: reported as row_norms_equal = false)", metavar="R1,R2,...",
           api_types=(list, tuple), applies=_smooth, check_value=_check_row_norms,
           refusal="--vstar-row-norms applies to the smooth activations only (the homogeneous "
           "ones depend on V* only through ||V*||_F^2)"),
    Option("mode", "choice", "population", "exact population gradient (default) or online SGD",
           choices=("population", "sgd")),
    Option("batch", "int", None, "SGD batch size N (sgd only; default 100)", lo=1,
           applies=lambda v: v["mode"] == "sgd", refusal="--batch applies to --mode sgd only"),
    Option("noise_std", "float", None, "label noise standard deviation (sgd only; default 1)",
           lo=0, hi=NOISE_STD_MAX, applies=lambda v: v["mode"] == "sgd",
           refusal="--noise-std applies to --mode sgd only"),
    Option("seed", "int", 0, "seed of V*, P and batches (default 0)", lo=0, hi=SEED_MAX),
    Option("P", "choice", "identity", "positional matrix: identity (default) or Haar-random "
           "orthogonal", choices=("identity", "random")),
    Option("quiet", "flag", False, "no progress bar or time estimate on stderr (shown for long runs)"),
))

LN = Command("ln", "Model B: alpha/beta recursions of attention with/without layer "
             "normalisation", (
    _json(),
    _dps(help_text="working precision in decimal digits; only when the expectation is exact "
         "(--data spectrum and, for ln and looped, alpha0*beta0 >= 0; or --model noln --target unnormalized) "
         f"({DPS_MIN}..{LN_DPS_MAX}; at most {GAUSSIAN_ROUTE_DPS_MAX} on the Gaussian route: 5 or "
         "more distinct eigenvalues, looped with 3 or more; default: float64)", hi=LN_DPS_MAX),
    Option("quiet", "flag", False, "no progress lines or time estimate on stderr"),
    Option("model", "choice", "ln", "ln: one LN layer (default); noln: one layer without LN; "
           "looped: L looped LN layers", choices=("ln", "noln", "looped")),
    Option("target", "choice", None, "no-LN layer only (default normalized)",
           choices=("normalized", "unnormalized"), applies=lambda v: v["model"] == "noln",
           refusal="--target applies only to --model noln"),
    Option("data", "choice", None, "Task 1 (sphere, default) or Task 2 (fixed spectrum)",
           choices=("sphere", "spectrum")),
    Option("d", "int", 16, "dimension d of the tokens (default 16)", lo=2),
    Option("n", "int", None, "number n of data columns of X (default 32, or sum of --spectrum)",
           lo=1),
    Option("spectrum", "str", None, "Task 2: multiplicities m1,...,md (positive integers; S "
           "has eigenvalues m_i); the API also takes a tuple", api_types=(list, tuple)),
    Option("L", "int", None, "number of looped layers (looped only; default 10)", lo=1,
           applies=lambda v: v["model"] == "looped", refusal="--L applies only to --model looped"),
    Option("eta", "float", 0.1, "GD step size (default 0.1)", lo=0, lo_open=True),
    Option("steps", "int", 2000, "GD steps (default 2000)", lo=0, hi=MAX_TEACHER_STEPS),
    Option("alpha0", "float", 0.0, "initial alpha (looped: w) (default 0)", lo=-INITIAL_MAX, hi=INITIAL_MAX),
    Option("beta0", "float", 1.0, "initial beta (looped: v) (default 1)", lo=-INITIAL_MAX, hi=INITIAL_MAX),
    Option("samples", "int", 100000, "points, when the expectation is not exact (default "
           "100000; qmc: in total over the replicas, each rounded up to a power of 2)", lo=2),
    Option("seed", "int", 0, "seed of the Monte Carlo sample / QMC scrambles (default 0)", lo=0,
           hi=SEED_MAX),
    Option("expectation", "choice", "auto", "auto (default): exact where available, else qmc; "
           "exact; qmc (R scrambled-Sobol replicas, each a full trajectory, with standard "
           "errors); monte_carlo (one fixed sample)",
           choices=("auto", "exact", "qmc", "monte_carlo")),
    Option("replicas", "int", None, "qmc only: number R of independent replicas (default 16)",
           lo=2, hi=4096),
    Option("record", "str", None, "qmc only: comma-separated steps at which to report replica "
           "means and standard errors (JSON key record)"),
    *_checkpoint_options(),
))

VERIFY = Command("verify", "check derived identities and printed constants of both papers", (
    _json(),
    _dps(help_text="print JSON reals as strings of this many significant digits "
         f"({DPS_MIN}..{DPS_MAX})"),
    Option("model", "choice", "all", "which paper's checks to run (default all)",
           choices=("A", "B", "all")),
    Option("quick", "flag", False, "skip the Theta-claim exponent runs and use fewer Monte "
           "Carlo samples"),
    Option("only", "str", None, "run only the checks whose id matches PATTERN (* and ? "
           "wildcards, every other character literal); repeatable", metavar="PATTERN",
           repeatable=True),
))


def _check_scheduler(value) -> None:
    """A Dask scheduler address [PROTOCOL://]HOST:PORT (reduced_dynamics/runs/dask_client.py)."""
    from rdyn.reduced_dynamics.runs.dask_client import check_address

    check_address(value)


_NO_SCHEDULER = "with --scheduler"

SWEEP = Command("sweep", "Model A collapsed dynamics over a grid of configurations (batched "
                "float64)", (
    _json(),
    _dps(applies=_never, refusal="rdyn sweep is float64 only; --dps is not supported"),
    Option("grid", "str", None, "configurations, e.g. 'D=20,36;K=2,4;eta=0.1,0.2' (see above)",
           required=True),
    Option("steps", "int", None, "GD steps N per configuration", lo=0, hi=MAX_TEACHER_STEPS,
           required=True),
    Option("activation", "choice", None, "a smooth activation for every grid point (erf, tanh, "
           "gelu, softplus, sigmoid, expr with --activation-expr): one float64 quadrature run "
           "per point, as rdyn teacher --activation (the grid then has no activation, kappa or "
           "sigma_prime_zero key; default: the grid's activation key)",
           choices=SMOOTH_ACTIVATIONS),
    Option("activation_expr", "str", None, "sigma as a formula in x for every grid "
           "point (implies --activation expr; checks as rdyn teacher --activation-expr)",
           metavar="EXPR", applies=lambda v: v["activation"] in (None, "expr"),
           refusal="--activation-expr goes with --activation expr (or no --activation)",
           check_value=_check_activation_expr),
    Option("M", "int", None, "smooth --activation: number of rows of V*, all of norm "
           "sqrt(vstar_norm2 / M) (default 1)", lo=1, hi=10**6, applies=_smooth,
           refusal="--M applies to a smooth --activation only (erf, tanh, gelu, softplus, "
           "sigmoid, expr)"),
    Option("out", "out", None, "output file (.csv, or .json for {\"rows\": [...]})",
           output="file"),
    Option("t1_fraction", "float", 0.95, "t1 threshold: C1 >= fraction * C1* (default 0.95)",
           lo=0, lo_open=True),
    Option("tstar_attention", "float", None, "T* threshold on p (default 1/(2K))", lo=0, hi=1,
           lo_open=True),
    Option("threads", "int", None, "numba threads (default: all cores)", lo=1, hi=4096),
    Option("skip_invalid", "flag", False, "drop grid points that are not valid configurations "
           "(e.g. K >= D) instead of refusing"),
    Option("scheduler", "str", None, "Dask distributed scheduler address (e.g. "
           "tcp://host:8786): run chunks of configurations on its workers (needs the dask "
           "extra: pip install 'rdyn-theory[dask]'; not with a smooth --activation)",
           needs=("distributed", "dask"), applies=lambda v: not _smooth(v), check_value=_check_scheduler,
           refusal="--scheduler is not supported with a smooth --activation (its runs are "
           "quadrature loops, not the batch kernel)"),
    Option("fast", "flag", False, "vectorised exp/atan: about 3x faster, rows agree with single "
           "runs to 1e-12 relative instead of bit for bit (not with --scheduler or a smooth "
           "--activation)",
           applies=lambda v: v["scheduler"] is None and not _smooth(v),
           refusal="--fast is not supported with --scheduler or a smooth --activation"),
    Option("checkpoint", "out", None, "save the complete state to FILE (.npz) every "
           "--checkpoint-every seconds, at the end and on Ctrl-C (not with --scheduler)",
           output="file", metavar="FILE", applies=lambda v: v["scheduler"] is None,
           refusal="--checkpoint/--resume are not supported with --scheduler"),
    Option("checkpoint_every", "float", None, "seconds between checkpoints (with --checkpoint "
           "only; default 60)", lo=0, metavar="SECONDS",
           applies=lambda v: v["checkpoint"] is not None, applies_text="with --checkpoint"),
    Option("resume", "path", None, "continue from a checkpoint of the same grid and options "
           "(bit-identical rows; not with --scheduler)", metavar="FILE",
           applies=lambda v: v["scheduler"] is None,
           refusal="--checkpoint/--resume are not supported with --scheduler"),
    Option("quiet", "flag", False, "no progress bar on stderr"),
))

_MODEL_A_ONLY = "(not with --model B)"

SCALING = Command("scaling", "fit the exponents and constants of the papers' Theta-claims from "
                  "sweeps (95% intervals)", (
    _json(),
    _dps(applies=_never, refusal="rdyn scaling is float64 only; --dps is not supported"),
    Option("model", "choice", "all", "which paper's claims (default all)",
           choices=("A", "B", "all")),
    Option("activation", "str", None, "Model A activations, comma list of identity, relu, leaky "
           "or 'all' (default all)", applies=lambda v: v["model"] != "B",
           refusal="--activation applies to Model A only (not with --model B)",
           api_types=(list, tuple)),
    Option("kappa", "float", None, "LeakyReLU slope (leaky only; default 0.1)", lo=0, hi=1,
           hi_open=True, applies=lambda v: v["model"] != "B",
           refusal="--kappa applies to the leaky activation only"),
    Option("logit_scale", "choice", None, "softmax divisor for Model A (default D, the seed's "
           "convention)", choices=("D", "sqrtD"), applies=lambda v: v["model"] != "B",
           refusal="--logit-scale applies to Model A only (not with --model B)"),
    Option("quick", "flag", False, "small sizes (about 30 s)"),
    Option("runner", "choice", "run", "Model A iterator: 'run' (single-configuration event "
           "loop, the default) or 'batch' (run_batch; same numbers bit for bit, slower to "
           "compile)", choices=("run", "batch")),
    Option("extend", "flag", False, "continue the Model A T* D-lines beyond iteration, to "
           "D = 2^20 (--quick 2^14), by the slow-manifold limit T* = tau_star/eta (reals, "
           "marked per point; fit over the extension reported apart; about 5 s per activation)",
           applies=lambda v: v["model"] != "B",
           refusal="--extend applies to Model A only (not with --model B)"),
    Option("out", "out", None, "write the report to FILE (.json: JSON, otherwise the table)",
           output="file"),
))

def _paper_a(values: dict) -> bool:
    return values.get("paper", "A") == "A"


FIGURES = Command("figures", "Figures 2 and 3 of the teacher-model paper (SGD vs collapsed "
                  "prediction), as PNGs", (
    _json(),
    _dps(applies=_never, refusal="figures run in float64 only; --dps does not apply"),
    Option("paper", "choice", "A", "A (default): Figures 2-3 of seed 000; B: the Model B "
           "figures of seed 003 (--out, --steps, --quick, --seed apply)", choices=("A", "B")),
    Option("out", "out", "figures", "output directory (default ./figures; created if missing)",
           output="dir"),
    Option("steps", "int", None, "training steps per experiment (A: SGD steps, default 20000, "
           "--quick 1500, at least 10; B: GD steps, default 2000, --quick 60, at most 100000)",
           lo=2, hi=10**6),
    Option("quick", "flag", False, "small sizes (A: D=12; B: d=4), few steps"),
    Option("vstar_norm2", "float", None, "||V*||_F^2 (A only; default 256, with a smooth "
           "--activation 2)", lo=0,
           lo_open=True, hi=VSTAR_NORM2_MAX, applies=_paper_a, refusal="--vstar-norm2 applies only to --paper A"),
    Option("batch", "int", None, "SGD batch size N (A only; default 100)", lo=1,
           applies=_paper_a, refusal="--batch applies only to --paper A"),
    Option("noise_std", "float", None, "label noise standard deviation (A only; default 1)",
           lo=0, hi=NOISE_STD_MAX, applies=_paper_a,
           refusal="--noise-std applies only to --paper A"),
    Option("activation", "choice", None, "A only: sigma of teacher and student beyond the "
           "paper: erf, tanh, gelu = x Phi(x), softplus, sigmoid, expr (--activation-expr); the "
           "four teachers (CNN, GCN, STS, GSLP) with it, V* rows of equal norm, dashed = the "
           "smooth collapsed map (default: the paper's six ReLU / Leaky ReLU experiments)",
           choices=SMOOTH_ACTIVATIONS, applies=_paper_a,
           refusal="--activation applies only to --paper A"),
    Option("activation_expr", "str", None, "A only: sigma as a formula in x (implies "
           "--activation expr; checks as rdyn teacher --activation-expr)", metavar="EXPR",
           applies=lambda v: _paper_a(v) and v["activation"] in (None, "expr"),
           refusal="--activation-expr applies only to --paper A, with --activation expr (or "
           "no --activation)", check_value=_check_activation_expr),
    Option("seed", "int", 0, "seed (default 0)", lo=0, hi=SEED_MAX),
))

def _report_suffix(values: dict) -> bool:
    return values.get("report") is None or \
        str(values["report"]).lower().endswith((".md", ".html", ".htm"))


def _errata_suffix(values: dict) -> bool:
    return values.get("errata") is None or \
        str(values["errata"]).lower().endswith((".tex", ".md", ".html", ".htm"))


CLAIMS = Command("claims", "the papers' statements, each with a verdict from the checks that "
                 "decide it", (
    _json(),
    _dps(applies=_never, refusal="--dps does not apply to rdyn claims"),
    Option("paper", "choice", None, "one paper only (default both)", choices=("A", "B")),
    Option("report", "out", None, "also write a readable ledger: FILE.md (Markdown) or FILE.html "
           "(self-contained)", output="file", metavar="FILE", applies=_report_suffix,
           refusal="--report must end in .md or .html"),
    Option("errata", "out", None, "also write the erratum (per paper, grouped by root cause, printed and "
           "corrected statements side by side, deciding numbers, log-log plots): FILE.tex (standalone "
           "LaTeX), FILE.md or FILE.html (self-contained)", output="file", metavar="FILE",
           applies=_errata_suffix, refusal="--errata must end in .tex, .md or .html"),
    Option("full", "flag", False, "run the checks at full sizes (slower) instead of the quick "
           "sizes"),
))

ASYMPTOTICS = Command("asymptotics", "Model A: large-D asymptotics of tau1, tau_star and the "
                      "late loss (derived)", (
    _json(),
    _dps(applies=_never, refusal="--dps does not apply (constants are printed to 30 digits)"),
    Option("activation", "choice", "relu", "activation (default relu); the smooth ones (erf, "
           "tanh, gelu, softplus, sigmoid, expr with --activation-expr): leading constant of "
           "tau_star, tau1's limit and c_L derived, the (D-K)^(-1/2) term not",
           choices=("identity", "relu", "leaky") + SMOOTH_ACTIVATIONS),
    Option("activation_expr", "str", None, "sigma as a formula in x (implies --activation expr; "
           "checked as rdyn teacher --activation-expr)", metavar="EXPR",
           applies=lambda v: v["activation"] in ("relu", "expr"),
           refusal="--activation-expr goes with --activation expr (or no --activation)",
           check_value=_check_activation_expr, exclusive_with=("activation", ("expr",))),
    Option("logit_scale", "choice", "D", "softmax scale: D (default, the seed's) or sqrtD",
           choices=("D", "sqrtD")),
    Option("K", "int", 4, "group size K (default 4)", lo=1, hi=10**6),
    Option("vstar_norm2", "float", 1.0, "||V*||_F^2 (default 1)", lo=0, lo_open=True, hi=VSTAR_NORM2_MAX),
    Option("M", "int", None, "smooth activations: number of rows of V*, all of norm "
           "sqrt(vstar_norm2 / M) (default 1)", lo=1, hi=10**6, applies=_smooth,
           refusal="--M applies to the smooth activations only (erf, tanh, gelu, softplus, "
           "sigmoid, expr)"),
    Option("kappa", "float", None, "LeakyReLU negative slope (leaky only; default 0.1)", lo=0,
           hi=1, hi_open=True, applies=lambda v: v["activation"] == "leaky",
           refusal="--kappa applies only to --activation leaky"),
    Option("no_check", "flag", False, "skip the slow-manifold comparison at D = 10^3..10^6"),
))

def _NOT_WITH_GRID(name: str) -> dict:
    """``applies``/``refusal`` of a single-instance option of rdyn prove: refused with --grid."""
    flag = "--" + name.replace("_", "-")
    return {"applies": lambda v: v["grid"] is None,
            "refusal": f"{flag} applies only to a single instance, not with --grid (the grid's {name} key sets it)"}


PROVE_LABELS = ("Lemma D.5", "Lemma D.13 (attention)", "Lemma D.15", "Lemma D.17 (C1 band)", "Lemma D.18", "Lemma D.19",
                "Lemma D.4", "Lemma D.8", "Lemma D.9", "Lemma D.9 (increment)", "Lemma D.10", "Lemma D.11",
                "Lemma D.12", "Lemma D.13 (C1 step)", "Lemma D.15 (proof)", "Lemma D.16")


_PROVE_RESUME_HELP = ("continue an interrupted proof: one instance from its --checkpoint FILE, written "
                      "with the same options (else exit 2 naming the differing option), keeping every step "
                      "certified before the interruption; with --grid, from the --out FILE of an interrupted "
                      "sweep (its \"complete\": false) for the same grid and options: the instances it holds "
                      "are kept, the rest are proved, and FILE is rewritten after each (unless --out names "
                      "another file)")


def _check_prove_grid(text) -> None:
    """``rdyn prove --grid``: the grid's syntax and size (at most 10^4 points, counted before any
    value list is combined; an empty specification such as ';;' refused), and every value checked
    as the single-instance option would be (``D=1e18`` is refused as ``--D 1e18`` is)."""
    from rdyn.verification.proofs.sweep import check_grid

    cmd = COMMANDS["prove"]

    def check(key, value):
        try:
            _coerce(cmd.option(key), value)
        except UsageError as exc:
            raise ValueError(f"--grid: {key}={value}: {exc}") from None
    check_grid(text, check)


def _check_prove_label(value) -> None:
    for v in (value if isinstance(value, (list, tuple)) else [value]):
        if v not in PROVE_LABELS:
            raise ValueError(f"--statement must be one of {', '.join(repr(x) for x in PROVE_LABELS)}, got {v!r}")


PROVE = Command("prove", "Model A: prove or refute the papers' induction statements (printed and "
                "corrected) for one instance, by certified iteration and an invariant region", (
    _json(),
    _dps(applies=_never, refusal="--dps does not apply to rdyn prove (arb balls at 200 bits; "
         "counterexamples are printed to 40 digits)"),
    Option("D", "int", 12, "number of tokens D (default 12)", lo=2, hi=10**4, **_NOT_WITH_GRID("D")),
    Option("K", "int", 3, "group size K (1 <= K < D; default 3)", lo=1, hi=10**4, **_NOT_WITH_GRID("K")),
    Option("activation", "choice", "relu", "sigma: identity, relu (default) or leaky",
           choices=("identity", "relu", "leaky"), **_NOT_WITH_GRID("activation")),
    Option("kappa", "float", None, "LeakyReLU negative slope (leaky only; default 0.1)",
           lo=0, hi=1, hi_open=True, applies=lambda v: v["activation"] == "leaky" and v["grid"] is None,
           refusal="--kappa applies to --activation leaky only (with --grid: the grid's kappa key)"),
    Option("vstar_norm2", "float", 1.0, "||V*||_F^2 (default 1)", lo=0, lo_open=True, hi=1e6,
           **_NOT_WITH_GRID("vstar_norm2")),
    Option("eta", "float", None, "GD step size (default: the papers' step-size condition, "
           "min(K/D, K^3 (D-K)/(||V*||^2 D^3 (D+1))) of Lemmas D.5 and D.9); must be below "
           "eta_limit (the C1 update contracts)", lo=0, lo_open=True, **_NOT_WITH_GRID("eta")),
    Option("logit_scale", "choice", "D", "softmax(P^T W_KQ P / D) (seed, default) or / sqrt(D)",
           choices=("D", "sqrtD"), **_NOT_WITH_GRID("logit_scale")),
    Option("statement", "str", None, "decide only this statement (the ledger's label: 'Lemma D.4', 'Lemma D.5', "
           "'Lemma D.8', 'Lemma D.9', 'Lemma D.9 (increment)', 'Lemma D.10', 'Lemma D.11', 'Lemma D.12', "
           "'Lemma D.13 (attention)', 'Lemma D.13 (C1 step)', 'Lemma D.15', 'Lemma D.15 (proof)', 'Lemma D.16', "
           "'Lemma D.17 (C1 band)', 'Lemma D.18' or 'Lemma D.19'; repeatable; default all)", repeatable=True,
           api_types=(list, tuple), check_value=_check_prove_label, metavar="LABEL"),
    Option("max_steps", "int", None, "step budget of the certified iteration, honoured exactly: it "
           "stops at step N at the latest (default: max(2 T*, T0)). A budget below T0 (estimated from "
           "the float64 T* before any work) is refused, since the region needs the state at T0; with "
           "--grid such instances are skipped. A statement neither refuted nor carried by the region "
           "by then is undecided", lo=1, hi=10**9),
    Option("max_boxes", "int", 200000, "box budget of the branch and bound (Model A: the invariant "
           "region's boxes; --paper B: region and S0 boxes together; default 200000)", lo=1, hi=10**8),
    *(o if o.applies is not None else
      dataclasses.replace(o, help=_PROVE_RESUME_HELP) if o.name == "resume" else dataclasses.replace(
        o, applies=lambda v: v["grid"] is None, refusal=f"{o.flag} does not apply with --grid (use --out: it is "
                                                         "rewritten after every instance; --resume FILE continues it)")
      for o in _checkpoint_options()),
    Option("grid", "str", None, "prove every instance of a grid instead of one (docs/proofs.md, \"Proof "
           "sweep\"): the syntax of rdyn sweep --grid over the keys D, K, activation, kappa, vstar_norm2, "
           "eta (numbers, or the words paper and half_limit) and logit_scale, e.g. "
           "'D=3:24:22;K=1:11:11;activation=relu,identity;eta=paper,half_limit'; points outside the "
           "papers' hypotheses are listed as skipped. At most 10000 points; each value is checked "
           "as the single-instance option would be (D in 2..10000, ...)", metavar="GRID",
           check_value=_check_prove_grid),
    Option("max_tstar", "int", None, "with --grid: skip instances whose float64 T* exceeds N (the cost "
           "cap; each instance iterates about T* certified steps at 30,000-90,000 steps/s)", lo=1,
           hi=10**9, metavar="N", applies=lambda v: v["grid"] is not None, applies_text="with --grid"),
    Option("out", "out", None, "with --grid: also write the JSON result to FILE, rewritten after every "
           "instance (an interrupted sweep keeps what it proved)", output="file", metavar="FILE",
           applies=lambda v: v["grid"] is not None, applies_text="with --grid"),
    Option("scheduler", "str", None, "with --grid: a Dask distributed scheduler address (e.g. "
           "tcp://host:8786): one task per instance on its workers (needs the dask extra: pip install "
           "'rdyn-theory[dask]' where the scheduler and workers run too)", needs=("distributed", "dask"),
           check_value=_check_scheduler, applies=lambda v: v["grid"] is not None, applies_text="with --grid"),
))


def _paper_a_prove(values: dict) -> bool:
    return values.get("paper", "A") == "A"


def _a_only(o: Option) -> Option:
    """A Model A option of ``rdyn prove``, refused with --paper B."""
    import dataclasses

    inner = o.applies

    def applies(v, inner=inner):
        return _paper_a_prove(v) and (inner is None or inner(v))

    refusal = o.refusal if o.refusal is not None else (
        f"{o.flag} applies only {o.applies_text}" if o.applies_text else None)
    refusal_b = f"{o.flag} applies only to --paper A (Model A)"
    summary = refusal_b
    if refusal is not None:   # "--K applies only to --paper A (Model A) and, there, only to a single instance..."
        head = f"{o.flag} applies "
        rest = refusal[len(head):] if refusal.startswith(head) else refusal
        summary = f"{refusal_b} and, there, {rest}"

    def refusal_for(v, refusal=refusal):   # name the condition that failed
        return refusal_b if not _paper_a_prove(v) or refusal is None else refusal

    return dataclasses.replace(o, applies=applies, applies_text="", refusal=summary, refusal_for=refusal_for)


def _paper_b(values: dict) -> bool:
    return values.get("paper") == "B"


def _b_model(values: dict) -> str:
    return values.get("model") or "noln"


_PROVE_B = (
    Option("model", "choice", None, "--paper B: noln (default): the layer without LN (Theorem B.3, "
           "gamma*, R*); ln: one LN layer and looped: the looped model (the contraction factor R over "
           "--gamma)", choices=("ln", "noln", "looped"), applies=_paper_b,
           refusal="--model applies only to --paper B"),
    Option("target", "choice", None, "--paper B, noln only: unnormalized (default; gamma* = 1 - "
           "kappa1/kappa2 exactly) or normalized (gamma* = (kappa3 - kappa1)/kappa2, with --data spectrum: "
           "kappa3 = E||S a|| by a rigorous integral)", choices=("normalized", "unnormalized"),
           applies=lambda v: _paper_b(v) and _b_model(v) == "noln",
           refusal="--target applies only to --paper B --model noln"),
    Option("data", "choice", None, "--paper B: Task 1 (sphere, default) or Task 2 (fixed spectrum)",
           choices=("sphere", "spectrum"), applies=_paper_b, refusal="--data applies only to --paper B"),
    Option("d", "int", None, "--paper B: dimension d (default 16)", lo=2, hi=10**6, applies=_paper_b,
           refusal="--d applies only to --paper B"),
    Option("n", "int", None, "--paper B: number n of data columns (default 32, or sum of --spectrum)",
           lo=1, hi=10**12, applies=_paper_b, refusal="--n applies only to --paper B"),
    Option("spectrum", "str", None, "--paper B, Task 2: multiplicities m1,...,md (S has eigenvalues "
           "m_i); the API also takes a tuple", api_types=(list, tuple), applies=_paper_b,
           refusal="--spectrum applies only to --paper B"),
    Option("L", "int", None, "--paper B, looped only: number of looped layers (default 10; R^L is "
           "reported)", lo=1, hi=10**6, applies=lambda v: _paper_b(v) and _b_model(v) == "looped",
           refusal="--L applies only to --paper B --model looped"),
    Option("s0", "str", None, "--paper B, noln only: the interval LO,HI of S0 = beta_0^2 (alpha_0 = 0) "
           "covered by Theorem B.3's proof (default 0.25,16)", metavar="LO,HI",
           api_types=(list, tuple), applies=lambda v: _paper_b(v) and _b_model(v) == "noln",
           refusal="--s0 applies only to --paper B --model noln"),
    Option("eta_fraction", "str", None, "--paper B, noln only: decide Theorem B.3 for every step size eta = "
           "theta eta_max(S0) with theta in LO,HI (0 < LO <= HI <= 1; default 1,1: eta_max itself)",
           metavar="LO,HI", api_types=(list, tuple), applies=lambda v: _paper_b(v) and _b_model(v) == "noln",
           refusal="--eta-fraction applies only to --paper B --model noln"),
    Option("gamma", "str", None, "--paper B, ln and looped: the interval LO,HI of gamma (looped: "
           "rho = w v) over which the contraction factor R is enclosed (default 1,100)", metavar="LO,HI",
           api_types=(list, tuple),
           applies=lambda v: _paper_b(v) and _b_model(v) in ("ln", "looped") and v.get("steps") is None,
           refusal="--gamma applies only to --paper B --model ln or looped, without --steps"),
    Option("steps", "int", None, "--paper B, ln and looped, a spectrum with two distinct eigenvalues: "
           "certify this many GD steps from alpha0 = 0, beta0 = 1 at --eta (arb balls, the expectation by "
           "a rigorous 1-D integral; about 30 ms per step) and enclose R at the trained gamma_T",
           lo=1, hi=20000, applies=lambda v: _paper_b(v) and _b_model(v) in ("ln", "looped"),
           refusal="--steps applies only to --paper B --model ln or looped"),
)


def _with_paper_b(cmd: Command) -> Command:
    """``rdyn prove`` with ``--paper B`` (docs/proofs.md, Model B): ``--paper`` after ``--dps``, every
    Model A option refused with --paper B (``--eta`` also applies to --paper B with ``--steps``;
    ``--max-boxes`` to both), the Model B options appended."""
    import dataclasses

    paper = Option("paper", "choice", "A", "A (default): Model A's Appendix D statements (seed 000); B: "
                   "Model B (seed 003): Theorem B.3 at the printed and corrected eta_max over an S0 range, "
                   "gamma* by a Krawczyk test, the contraction factor R (docs/proofs.md, Model B)",
                   choices=("A", "B"))
    out = []
    for o in cmd.options:
        if o.name in ("json", "dps", "max_boxes"):
            out.append(o)
        elif o.name == "eta":
            out.append(dataclasses.replace(
                o, help=o.help + ". --paper B: with --steps only (default 0.1)",
                applies=lambda v: (_paper_a_prove(v) and v.get("grid") is None) or v.get("steps") is not None,
                refusal="--eta applies to --paper A without --grid (the grid's eta key sets it), or to --paper B "
                        "with --steps (Theorem B.3 runs at eta_max)"))
        else:
            out.append(_a_only(o))
        if o.name == "dps":
            out.append(paper)
    return dataclasses.replace(cmd, help=cmd.help + "; --paper B: Model B's Theorem B.3, gamma* (Krawczyk) and "
                               "the looped contraction factor", options=tuple(out) + _PROVE_B)


PROVE = _with_paper_b(PROVE)


COMMANDS: dict[str, Command] = {c.name: c for c in (TEACHER, CROSSCHECK, FIGURES, LN, VERIFY,
                                                    SWEEP, SCALING, CLAIMS, ASYMPTOTICS, PROVE)}


# ---------------------------------------------------------------------------------------------
# Parsers
# ---------------------------------------------------------------------------------------------

def help_text(option: Option) -> str:
    """The option's help with its accepted range, e.g. "GD step size ... [> 0, finite]" (the
    text of ``--help``, docs/cli.md and the API docstrings)."""
    if option.applies is _never:   # refused whatever the other options: no range to offer
        return f"not accepted here: {option.refusal or option.help}"
    text = option.help
    rng = option.range_text()
    if rng and option.kind in ("int", "float"):
        text += f" [{rng}{', finite' if option.kind == 'float' else ''}]"
    elif option.kind == "float":
        text += " [finite]"
    return text


def _help(option: Option) -> str:
    return help_text(option).replace("%", "%%")  # argparse formats help strings with %


def add_arguments(parser, command: Command) -> None:
    """Add every option of ``command`` to an argparse parser (values are checked later by
    :func:`validate`, so CLI and API share the checks)."""
    for o in command.options:
        kwargs: dict[str, Any] = {"help": _help(o), "dest": o.name}
        if o.metavar:
            kwargs["metavar"] = o.metavar
        if o.kind == "flag":
            parser.add_argument(o.flag, action="store_true", **kwargs)
            continue
        if o.kind == "int":
            kwargs["type"] = integer_argument
        elif o.kind == "float":
            kwargs["type"] = float
        elif o.kind == "choice":
            kwargs["choices"] = o.choices
        if o.repeatable:
            kwargs["action"] = "append"
        parser.add_argument(o.flag, default=None, required=o.required, **kwargs)


def given_from_args(command: Command, args) -> dict:
    """The options given on the command line (name -> value; not given -> None/False)."""
    return {o.name: getattr(args, o.name) for o in command.options}


# ---------------------------------------------------------------------------------------------
# Validation
# ---------------------------------------------------------------------------------------------

def shown(value: Any) -> str:
    """A given value in a refusal: one line, at most about 80 characters (a numpy array is
    named by its shape: its repr spans many lines; a long list by its first items and its
    size, "[1, 2, ...] (100000 values)": rdyn.derivations.messages.summarised)."""
    from rdyn.derivations.messages import summarised

    if hasattr(value, "shape") and hasattr(value, "dtype"):
        return f"a numpy array of shape {tuple(value.shape)} (pass array.tolist())"
    return summarised(value, repr, limit=80)


def _coerce(o: Option, value: Any) -> Any:
    if o.api_types and isinstance(value, o.api_types):
        return value
    if o.kind == "flag":
        if not isinstance(value, bool):
            raise UsageError(f"{o.flag} must be True or False, got {shown(value)}")
        return value
    if o.kind == "int":
        if isinstance(value, str) or integral(value) is None:  # the API takes numbers only
            raise UsageError(f"{o.flag} must be an integer, got {shown(value)}")
        value = integral(value)   # an exact Python int: compared as an integer, never a float
        if o.lo is not None and (value < o.lo or (o.lo_open and value == o.lo)) or \
                o.hi is not None and (value > o.hi or (o.hi_open and value == o.hi)):
            if o.name == "dps" and o.hi is not None and value > o.hi:
                raise UsageError(f"--dps {shown_integer(value)} is above the supported maximum "
                                 f"{int(o.hi)}")
            raise UsageError(f"{o.flag} must be {o.range_text()}, got {shown_integer(value)}")
        if o.hi is None and value > INT_OPTION_MAX:
            raise UsageError(f"{o.flag} must be at most {INT_OPTION_MAX} (a 64-bit integer), got "
                             f"{shown_integer(value)}")
        return value
    if o.kind == "float":
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise UsageError(f"{o.flag} must be a real number, got {shown(value)}")
        value = float(value)
        if not math.isfinite(value):
            raise UsageError(f"{o.flag} must be a finite number, got {value}")
        if o.lo is not None and (value < o.lo or (o.lo_open and value == o.lo)) or \
                o.hi is not None and (value > o.hi or (o.hi_open and value == o.hi)):
            raise UsageError(f"{o.flag} must be {o.range_text()}, got {shown(value)}")
        return value
    if o.kind == "choice":
        if value not in o.choices:
            raise UsageError(f"{o.flag} must be one of {', '.join(map(str, o.choices))}, "
                             f"got {shown(value)}")
        return value
    if o.kind in ("path", "out"):
        if not isinstance(value, (str, os.PathLike)) or str(value) == "":
            raise UsageError(f"{o.flag} must be a file path, got {shown(value)}")
        return value
    if o.repeatable:
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, (list, tuple)) or not items or \
                not all(isinstance(v, str) and v.strip() for v in items):
            raise UsageError(f"{o.flag} must be a non-empty string (or a list of them), "
                             f"got {shown(value)}")
        return list(items)
    if not isinstance(value, str):
        raise UsageError(f"{o.flag} must be a string, got {shown(value)}")
    return value


def check_output_path(flag: str, path, kind: str = "file") -> None:
    """Refuse (UsageError) an output path that cannot be written: its folder missing, not a
    directory or not writable; a file path that is a directory; a folder path that is a file;
    a file path that names a stream (``/dev/stdout``) or an existing device, FIFO or socket
    (the output-path rule of :mod:`rdyn.derivations.atomic_files`, which the write applies
    again). A symbolic link is followed: its target is checked, and later written.
    ``kind="dir"``: the folder is created with its parents, so the nearest existing ancestor
    must be a writable directory."""
    given = os.fspath(path)
    if reaches_descriptor(given):
        raise UsageError(f"{flag} {shown_path(given)} names a file descriptor (a stream such as "
                         "standard output), not a file; give a regular file's path")
    if kind == "file":
        reason = unwritable_reason(given)
        if reason is not None and not os.path.isdir(given):
            raise UsageError(f"{flag} {shown_path(given)} {reason}; rdyn never replaces a device, "
                             "FIFO or socket")
    path = output_target(given)
    if kind == "dir":
        if os.path.exists(path):
            if not os.path.isdir(path):
                raise UsageError(f"{flag}: {path} is not a directory")
            if not os.access(path, os.W_OK):
                raise UsageError(f"{flag}: folder {path} is not writable")
            return
        folder = os.path.dirname(path)
        while not os.path.exists(folder):
            folder = os.path.dirname(folder)
    else:
        if os.path.isdir(path):
            raise UsageError(f"{flag}: {path} is a directory, not a file")
        folder = os.path.dirname(path)
        if not os.path.exists(folder):
            ancestor = folder
            while not os.path.exists(ancestor):
                ancestor = os.path.dirname(ancestor)
            if not os.path.isdir(ancestor):
                raise UsageError(f"{flag}: {ancestor} is not a directory")
            raise UsageError(f"{flag}: folder {folder} does not exist")
    if not os.path.isdir(folder):
        raise UsageError(f"{flag}: {folder} is not a directory")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"{flag}: folder {folder} is not writable")
    if kind == "dir":
        probe_folder(flag, path)
    else:
        probe_file(flag, path)


def probe_file(flag: str, path: str) -> None:
    """Open ``path`` for appending (created if missing, then removed again): refuses, before
    any work, a file that exists read-only or a folder where files cannot be created (e.g.
    /proc), which the permission bits alone do not show."""
    existed = os.path.exists(path)
    try:
        with open(path, "a"):
            pass
    except OSError as exc:
        raise UsageError(f"{flag}: cannot write {path}: {exc.strerror or exc}") from None
    if not existed:
        try:
            os.remove(path)
        except OSError:
            pass


def probe_folder(flag: str, path: str) -> None:
    """Create the folder ``path`` (with its parents) and a probe file in it, then remove the
    probe and every folder the probe created: validation leaves nothing behind, so a check
    that refuses later leaves no folder (the job creates the folder when it writes, after
    every check has passed)."""
    import tempfile

    created = []   # the folders the probe creates, deepest first
    missing = path
    while not os.path.exists(missing):
        created.append(missing)
        missing = os.path.dirname(missing)
    try:
        os.makedirs(path, exist_ok=True)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".rdyn-probe-"):
            pass
    except OSError as exc:
        raise UsageError(f"{flag}: cannot write in {path}: {exc.strerror or exc}") from None
    finally:
        for folder in created:
            try:
                os.rmdir(folder)
            except OSError:
                pass


def check_input_file(flag: str, path) -> None:
    """Refuse (UsageError) an input path that is missing or not a regular file."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise UsageError(f"{flag}: file {path} does not exist")
    if not os.path.isfile(path):
        raise UsageError(f"{flag}: {path} is not a file")


def check_dependency(flag: str, module: str, extra: str) -> None:
    import importlib.util

    try:
        found = importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise UsageError(f"{flag} needs the optional dependency '{module}': "
                         f"install rdyn-theory[{extra}] (pip install 'rdyn-theory[{extra}]')")


def validate(command: str | Command, given: dict, *, api: bool = False) -> dict:
    """Check the options ``given`` (name -> value; None/False = not given) of ``command``
    against the table and return every option's value (defaults filled in). Raises
    :class:`~rdyn.output.UsageError` with a one-line message naming the option. With
    ``api=True`` an unknown keyword is refused as well."""
    cmd = COMMANDS[command] if isinstance(command, str) else command
    names = {o.name for o in cmd.options if not (api and o.cli_only)}
    unknown = [k for k in given if k not in names]
    if unknown:
        raise UsageError(f"unknown option {unknown[0]!r} for rdyn {cmd.name} (options: "
                         f"{', '.join(o.name for o in cmd.options if not o.cli_only)})")
    values = {}
    for o in cmd.options:
        value = given.get(o.name)
        if value is None or (o.kind == "flag" and value is False):
            if o.required:
                raise UsageError(f"{o.flag} is required")
            values[o.name] = o.default
            continue
        values[o.name] = _coerce(o, value)
        if o.check_value is not None:
            try:
                o.check_value(values[o.name])
            except ValueError as exc:
                raise UsageError(str(exc).splitlines()[0]) from None
    for o in cmd.options:
        value = given.get(o.name)
        if value is None or value is False or o.applies is None:
            continue
        if not o.applies(values):
            raise UsageError((o.refusal_for(values) if o.refusal_for is not None else None)
                             or o.refusal or f"{o.flag} applies only {o.applies_text}")
        if o.exclusive_with is not None:
            other, allowed = o.exclusive_with
            if given.get(other) is not None and values[other] not in allowed:
                other_flag = "--" + other.replace("_", "-")
                raise UsageError(o.refusal or f"{o.flag} conflicts with {other_flag} "
                                 f"{values[other]}")
    for o in cmd.options:
        if o.needs is not None and given.get(o.name) is not None:
            check_dependency(o.flag, *o.needs)
    for o in cmd.options:
        if o.output is not None and values[o.name] is not None:
            check_output_path(o.flag, values[o.name], o.output)
            for suffix in o.siblings:   # e.g. a checkpoint's FILE.tmp, beside the link's target
                check_output_path(o.flag, output_target(values[o.name]) + suffix, o.output)
        if o.kind == "path" and isinstance(values[o.name], (str, os.PathLike)):
            check_input_file(o.flag, values[o.name])
    check_distinct_outputs(cmd, values)
    return values


# the one output that may name its command's input file: a run resumed from a checkpoint
# goes on saving to it (the command line that an interruption prints does exactly that)
OUTPUT_MAY_BE_INPUT = {("checkpoint", "resume")}


def check_distinct_outputs(cmd: Command, values: dict) -> None:
    """Refuse two output options naming the same file (``rdyn claims --report same.md --errata
    same.md``: the second write would replace the first), and an output naming an input file
    (``rdyn teacher --groups g.json --checkpoint g.json`` would replace the groups with a
    checkpoint; only ``--checkpoint F --resume F`` is allowed, :data:`OUTPUT_MAY_BE_INPUT`),
    compared after resolving symbolic links and relative paths; an output's sibling
    (``FILE.tmp`` of a checkpoint) counts as that output."""
    inputs: dict[str, Option] = {}
    for o in cmd.options:
        if o.kind == "path" and isinstance(values.get(o.name), (str, os.PathLike)):
            inputs.setdefault(output_target(values[o.name]), o)
    seen: dict[str, str] = {}
    for o in cmd.options:
        if o.output != "file" or values.get(o.name) is None:
            continue
        real = output_target(values[o.name])
        if real in seen:
            raise UsageError(f"{o.flag} {shown_path(values[o.name])} names the same file as "
                             f"{seen[real]}; give each output its own file")
        seen[real] = o.flag
        for name in [real] + [real + suffix for suffix in o.siblings]:
            source = inputs.get(name)
            if source is not None and (o.name, source.name) not in OUTPUT_MAY_BE_INPUT:
                raise UsageError(f"{o.flag} {shown_path(values[o.name])} names the input file of "
                                 f"{source.flag}; the output would replace it: give the output "
                                 "its own file")


def shown_path(path, limit: int = 160) -> str:
    """A user's path for a one-line message: as given, shortened in the middle when long."""
    text = os.fspath(path)
    return text if len(text) <= limit else f"{text[:limit // 2]}...{text[-limit // 2:]}"


# ---------------------------------------------------------------------------------------------
# Memory estimates
# ---------------------------------------------------------------------------------------------

def available_memory() -> int | None:
    """MemAvailable of /proc/meminfo in bytes (None where it cannot be read)."""
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _gb(n: float) -> str:
    return f"{n / 1e9:.3g} GB"


def check_memory(what: str, needed: float, available: int | None = None) -> None:
    """Refuse (UsageError) a job whose estimated memory ``needed`` (bytes) exceeds the
    machine's available memory; ``what`` names the option(s) that set the size."""
    available = available_memory() if available is None else available
    if available is not None and needed > available:
        raise UsageError(f"{what}: this job needs about {_gb(needed)} of memory, "
                         f"{_gb(available)} available")


# ---------------------------------------------------------------------------------------------
# Documentation
# ---------------------------------------------------------------------------------------------

def markdown() -> str:
    """The option tables of docs/input_rules.md (regenerate with
    ``python -c "from rdyn.options import markdown; print(markdown())"``)."""
    lines = []
    for name, cmd in COMMANDS.items():
        lines += [f"### rdyn {name}", "", "| option | kind | default | accepted values | "
                  "refused when |", "| --- | --- | --- | --- | --- |"]
        for o in cmd.options:
            if o.cli_only:
                continue
            if o.applies is _never:   # always refused (e.g. --dps of a float64-only command)
                accepted = "none (always refused)"
            elif o.kind in ("int", "float"):
                accepted = o.range_text()
                if o.kind == "float":
                    accepted = f"{accepted}, finite" if accepted else "finite"
                accepted = accepted or "any integer"
            elif o.choices:
                accepted = ", ".join(o.choices)
            elif o.kind == "out":
                accepted = ("file; its folder exists and is writable" if o.output == "file"
                            else "folder (created); nearest existing parent writable")
            elif o.kind == "path":
                accepted = "an existing file"
            elif o.kind == "flag":
                accepted = "flag"
            else:
                accepted = "see --help"
            refused = ""
            if o.applies is not None:
                refused = (o.refusal or f"{o.flag} applies only {o.applies_text}").replace("|", "/")
            if o.needs is not None:
                refused = f"the optional dependency is missing (install rdyn-theory[{o.needs[1]}])"
            if o.required:
                refused = "missing (required)"
            default = "" if o.default in (None, False) else f"`{o.default}`"
            lines.append(f"| `{o.flag}` | {o.kind} | {default} | {accepted} | {refused} |")
        lines.append("")
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# Typed options (rdyn/option_types.py, generated from the table)
# ---------------------------------------------------------------------------------------------

OPTION_TYPES_MODULE = "option_types.py"   # beside this file: rdyn/option_types.py


def option_class_name(command: str) -> str:
    """The typed-options class of a subcommand: "teacher" -> "TeacherOptions"."""
    return command[:1].upper() + command[1:] + "Options"


def _field_type(o: Option) -> str:
    """The annotation of an option's field in its validated form (after :func:`validate`):
    ``None`` is part of it when the option may be left out (no default, not required)."""
    if o.kind == "flag":
        types = ["bool"]
    elif o.kind == "choice":
        types = ["Literal[" + ", ".join(repr(c) for c in o.choices) + "]"]
    elif o.kind in ("path", "out"):
        types = ["str", "os.PathLike[str]"]
    elif o.repeatable:
        types = ["list[str]"]
    else:
        types = [{"int": "int", "float": "float", "str": "str"}[o.kind]]
    extra = {list: "list[Any]", tuple: "tuple[Any, ...]", range: "range"}
    types += [extra[t] for t in o.api_types if extra[t] not in types]
    if o.default is None and not o.required:   # a required option is never None once validated
        types.append("None")
    return " | ".join(types)


def option_types_source() -> str:
    """The source of rdyn/option_types.py: one frozen dataclass per subcommand, one field per
    option (named as the option, typed by its kind; ``None`` where "not given" is possible),
    so that the drivers read ``v.steps`` and a type checker names a misspelt option."""
    lines = ['"""Typed options: one frozen dataclass per subcommand, built by the shared validation',
             "(:func:`rdyn.options.typed_options`) and passed from the API to the drivers.",
             "",
             "Generated from the option table :data:`rdyn.options.COMMANDS` by",
             "``python -c 'from rdyn.options import write_option_types; write_option_types()'``;",
             'do not edit (tests/test_option_types.py fails when this file is out of date)."""',
             "from __future__ import annotations", "", "import os", "from dataclasses import dataclass",
             "from typing import Any, Literal, Union", "", ""]
    names = []
    for name, cmd in COMMANDS.items():
        cls = option_class_name(name)
        names.append(cls)
        lines += ["@dataclass(frozen=True)", f"class {cls}:",
                  f'    """The validated options of ``rdyn {name}`` (every option, defaults filled in)."""',
                  ""]
        for o in cmd.options:
            lines.append(f"    {o.name}: {_field_type(o)}")
        lines += ["", ""]
    lines.append("AnyOptions = Union[" + ", ".join(names) + "]")
    lines += ["", "CLASSES: dict[str, type] = {"]
    lines += [f"    {name!r}: {option_class_name(name)}," for name in COMMANDS]
    lines += ["}", ""]
    return "\n".join(lines)


def write_option_types(path: str | None = None) -> str:
    """(Re)write rdyn/option_types.py from the table (a temporary sibling, then renamed);
    returns the path."""
    from rdyn.reduced_dynamics.runs.atomic_files import write_text_atomic

    path = path or os.path.join(os.path.dirname(os.path.abspath(__file__)), OPTION_TYPES_MODULE)
    write_text_atomic(path, option_types_source())   # the one helper of every writer
    return path


def typed_options(command: str | Command, values: dict):
    """The validated ``values`` of ``command`` (from :func:`validate`) as the command's frozen
    dataclass of :mod:`rdyn.option_types` (attribute access: ``v.steps``)."""
    from rdyn.option_types import CLASSES

    cmd = COMMANDS[command] if isinstance(command, str) else command
    return CLASSES[cmd.name](**values)
