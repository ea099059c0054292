"""The option table: every subcommand's options, declared once (:data:`COMMANDS`, name ->
:class:`~rdyn.options.option.Command`). The CLI parsers, the API signatures and docstrings, the
shared validation, ``--help``, docs/cli.md, the tables of docs/input_rules.md and the typed
options of rdyn/option_types.py are all derived from it.

Each :class:`~rdyn.options.option.Option` states its kind, default, range (bounds in
:mod:`rdyn.options.limits`), choices, the check of its value alone
(:mod:`rdyn.options.value_checks`) and when it applies: ``applies(values)`` is a predicate on
the values of all the command's options (given or default), e.g. ``--kappa`` applies to
``--activation leaky`` only. Options shared by several commands (``--json``, ``--dps``, the
checkpoint options, the Model A options of ``teacher`` and ``crosscheck``) are built by the
helpers below. ``rdyn prove`` is built in two steps: its Model A options, then
``--paper B`` (:func:`_with_paper_b`), which makes every Model A option refused with
``--paper B`` and appends the Model B options.

A command's ``check`` is its cross-option check (several options of one model: K < D, ``--record``
against ``--steps``, ...), run by the validation after every check of one option: ``teacher`` and
``crosscheck`` have theirs in :mod:`rdyn.options.model_a_checks`.

Adding an option: append one ``Option`` to the command's tuple and regenerate
rdyn/option_types.py (``write_option_types``); adding a subcommand: docs/api.md.
"""
from __future__ import annotations

import dataclasses

from rdyn.options.coercion import coerce
from rdyn.options.limits import (D_MAX, DPS_MAX, DPS_MIN, GAUSSIAN_ROUTE_DPS_MAX, INITIAL_MAX,
                                 LN_DPS_MAX, MAX_MODEL_A_STEPS, MAX_TEACHER_STEPS,
                                 NOISE_STD_MAX, SEED_MAX, SMOOTH_DPS_MAX, VSTAR_NORM2_MAX)
from rdyn.options.model_a_checks import SMOOTH_ACTIVATIONS, check_crosscheck, check_teacher
from rdyn.options.option import Command, Option, never
from rdyn.options.value_checks import check_activation_expr, check_row_norms, check_scheduler
from rdyn.output import UsageError


# ---------------------------------------------------------------------------------------------
# Shared pieces
# ---------------------------------------------------------------------------------------------

def _json() -> Option:
    """``--json`` (CLI only: the API returns the result object)."""
    return Option("json", "flag", False, "print exactly one JSON object on stdout (logs go to "
                  "stderr)", cli_only=True)


def _dps(applies=None, applies_text="", refusal=None, help_text=None, hi=DPS_MAX) -> Option:
    """``--dps``: the working precision in decimal digits, ``DPS_MIN..hi`` (refused where
    ``applies`` is :func:`~rdyn.options.option.never`)."""
    return Option("dps", "int", None, help_text or "working precision in decimal digits "
                  "(default: float64)", lo=DPS_MIN, hi=hi, applies=applies,
                  applies_text=applies_text, refusal=refusal)


def _smooth(v: dict) -> bool:
    """The values name a smooth activation (by name, or a formula by --activation-expr)."""
    return v["activation"] in SMOOTH_ACTIVATIONS[:-1] or v["activation"] == "expr" or (
        v.get("activation_expr") is not None)


def _checkpoint_options(folder_help: str = "", resume_help: str = "") -> tuple[Option, ...]:
    """``--checkpoint``, ``--checkpoint-every`` and ``--resume`` of the long-running commands."""
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
               check_value=check_activation_expr, exclusive_with=("activation", ("expr",))),
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
), check=check_teacher)

CROSSCHECK = Command("crosscheck", "Model A: full-matrix GD (population or SGD) vs the "
                     "collapsed (C1, C2, C3) map", (
    _json(),
    _dps(applies=never, refusal="crosscheck runs in float64 only; --dps does not apply"),
    *_teacher_model_options(10**6, "GD steps N (default 300)"),
    Option("d", "int", 8, "input dimension d (default 8)", lo=1),
    Option("M", "int", 4, "output dimension M (default 4)", lo=1),
    Option("vstar_row_norms", "str", None, "comma-separated norms of the M rows of V* (then "
           "rescaled to ||V*||_F^2 = --vstar-norm2; default: a Gaussian V*, or equal norms for a "
           "smooth activation). Unequal norms with a smooth activation break the ansatz "
           "W_V = C1 V*: reported as row_norms_equal = false)", metavar="R1,R2,...",
           api_types=(list, tuple), applies=_smooth, check_value=check_row_norms,
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
), check=check_crosscheck)

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


SWEEP = Command("sweep", "Model A collapsed dynamics over a grid of configurations (batched "
                "float64)", (
    _json(),
    _dps(applies=never, refusal="rdyn sweep is float64 only; --dps is not supported"),
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
           check_value=check_activation_expr),
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
           needs=("distributed", "dask"), applies=lambda v: not _smooth(v), check_value=check_scheduler,
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


SCALING = Command("scaling", "fit the exponents and constants of the papers' Theta-claims from "
                  "sweeps (95% intervals)", (
    _json(),
    _dps(applies=never, refusal="rdyn scaling is float64 only; --dps is not supported"),
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
    _dps(applies=never, refusal="figures run in float64 only; --dps does not apply"),
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
           "no --activation)", check_value=check_activation_expr),
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
    _dps(applies=never, refusal="--dps does not apply to rdyn claims"),
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
    _dps(applies=never, refusal="--dps does not apply (constants are printed to 30 digits)"),
    Option("activation", "choice", "relu", "activation (default relu); the smooth ones (erf, "
           "tanh, gelu, softplus, sigmoid, expr with --activation-expr): leading constant of "
           "tau_star, tau1's limit and c_L derived, the (D-K)^(-1/2) term not",
           choices=("identity", "relu", "leaky") + SMOOTH_ACTIVATIONS),
    Option("activation_expr", "str", None, "sigma as a formula in x (implies --activation expr; "
           "checked as rdyn teacher --activation-expr)", metavar="EXPR",
           applies=lambda v: v["activation"] in ("relu", "expr"),
           refusal="--activation-expr goes with --activation expr (or no --activation)",
           check_value=check_activation_expr, exclusive_with=("activation", ("expr",))),
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


D_RANGE_MAX = 256   # values of D in one --D LO:HI (each D is a box proof of seconds to minutes)


def d_range(values: dict) -> bool:
    """rdyn prove's ``--D`` is a range LO:HI or LO: (a box of sizes), not one D."""
    return isinstance(values.get("D"), (tuple, list, str))


def eta_range(values: dict) -> bool:
    """rdyn prove's ``--eta`` is a range LO:HI (a box of step sizes), not one step size."""
    return isinstance(values.get("eta"), (tuple, list, str))


def d_open_range(values: dict) -> bool:
    """rdyn prove's ``--D`` is ``LO:`` (every D >= LO), as text or the API's ``(lo, None)``."""
    D = values.get("D")
    if isinstance(D, str):
        return D.partition(":")[1] == ":" and D.partition(":")[2].strip() == ""
    return isinstance(D, (tuple, list)) and len(D) == 2 and D[1] is None


def box_run(values: dict) -> bool:
    """rdyn prove decides a box of parameters (an --eta range, or --D LO:), with no iteration."""
    return eta_range(values) or d_open_range(values)


def _NOT_WITH_ETA_RANGE(name: str, why: str) -> dict:
    """``applies``/``refusal`` of an option of rdyn prove that has no meaning for a box of parameters."""
    flag = "--" + name.replace("_", "-")
    return {"applies": lambda v: not box_run(v),
            "refusal": f"{flag} applies only to one eta, not to an --eta range LO:HI or --D LO: ({why})"}


def _not_with_eta_range(o: Option, why: str) -> Option:
    """``o`` also refused with an --eta range (its own condition and refusal kept otherwise)."""
    inner, own = o.applies, o.refusal or (f"{o.flag} applies only {o.applies_text}" if o.applies_text else None)
    extra = _NOT_WITH_ETA_RANGE(o.name, why)

    def refusal_for(v):
        return extra["refusal"] if box_run(v) else own

    return dataclasses.replace(o, applies=lambda v: not box_run(v) and (inner is None or inner(v)),
                               refusal=own or extra["refusal"], refusal_for=refusal_for)


PROVE_LABELS = ("Lemma D.5", "Lemma D.13 (attention)", "Lemma D.15", "Lemma D.17 (C1 band)", "Lemma D.18", "Lemma D.19",
                "Lemma D.4", "Lemma D.8", "Lemma D.9", "Lemma D.9 (increment)", "Lemma D.10", "Lemma D.11",
                "Lemma D.12", "Lemma D.13 (C1 step)", "Lemma D.15 (proof)", "Lemma D.16", "Lemma D.13 (t1)",
                "Lemma D.17")


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
    from rdyn.reduced_dynamics.model_a.grid import grid_error
    from rdyn.verification.proofs.sweep import check_grid

    cmd = COMMANDS["prove"]

    def check(key, value):
        try:
            coerce(cmd.option(key), value)
        except UsageError as exc:
            raise grid_error(f"{{grid}}: {key}={value}: {exc}") from None
    check_grid(text, check)


def _check_prove_label(value) -> None:
    for v in (value if isinstance(value, (list, tuple)) else [value]):
        if v not in PROVE_LABELS:
            raise ValueError(f"--statement must be one of {', '.join(repr(x) for x in PROVE_LABELS)}, got {v!r}")


PROVE = Command("prove", "Model A: prove or refute the papers' induction statements (printed and "
                "corrected) for one instance, by certified iteration and an invariant region", (
    _json(),
    _dps(applies=never, refusal="--dps does not apply to rdyn prove (arb balls at 200 bits up to t1, "
         "then float64 intervals; --route arb: arb throughout, counterexamples to 40 digits)"),
    Option("D", "int", 12, "number of tokens D (default 12). With an --eta range, also a range LO:HI: the "
           f"statements for every D in [LO, HI] (at most {D_RANGE_MAX} values), each D by its own tube "
           "(docs/proofs.md, \"Every D of a range\"). LO: without --eta: Lemma D.19 corrected, the lag lemma and D.18's "
           "lower side on the late-phase band, for every D >= LO and every eta <= K/D at once (logits/D; docs/proofs.md, \"Every "
           "D: the late phase\"); with an --eta range it is refused: eta_limit(D) falls like 1/D, below any fixed HI",
           lo=2, hi=10**4, range_ok=True, metavar="D|LO:HI|LO:", applies=lambda v: v["grid"] is None and (
               not d_range(v) or eta_range(v) or d_open_range(v)),
           refusal="--D applies only to a single instance, not with --grid (the grid's D key sets it); a range "
                   "LO:HI only with an --eta range LO:HI (LO: also without)",
           refusal_for=lambda v: _NOT_WITH_GRID("D")["refusal"] if v["grid"] is not None else (
               "a --D range LO:HI applies only with an --eta range LO:HI (one eta at many D is a sweep: "
               "--grid 'D=LO:HI:N;eta=...')")),
    Option("K", "int", 3, "group size K (1 <= K < D; default 3)", lo=1, hi=10**4, **_NOT_WITH_GRID("K")),
    Option("activation", "choice", "relu", "sigma: identity, relu (default) or leaky",
           choices=("identity", "relu", "leaky"), **_NOT_WITH_GRID("activation")),
    Option("kappa", "float", None, "LeakyReLU negative slope (leaky only; default 0.1)",
           lo=0, hi=1, hi_open=True, applies=lambda v: v["activation"] == "leaky" and v["grid"] is None,
           refusal="--kappa applies to --activation leaky only (with --grid: the grid's kappa key)"),
    Option("vstar_norm2", "float", 1.0, "||V*||_F^2 (default 1)", lo=0, lo_open=True, hi=1e6,
           **_NOT_WITH_GRID("vstar_norm2")),
    Option("eta", "float", None, "GD step size (default: the papers' step-size condition, "
           "min(K/D, K^3 (D-K)/(||V*||^2 D^3 (D+1))) of Lemmas D.5 and D.9, as the largest float whose decimal "
           "form satisfies it exactly); must be below "
           "eta_limit (the C1 update contracts). A range LO:HI (the API: a (lo, hi) pair) proves the statements "
           "for every step t >= 1 (Lemmas D.4, D.5, D.8 corrected, D.9, D.10, D.11, D.12 from t = 2, D.16), up "
           "to and after t1 (D.13's attention bound and C1 step, D.17's band) and from T* on (the lag lemma, the corrected D.18 and D.19) for every "
           "eta in (LO, HI] at once, LO >= 0 (docs/proofs.md, \"Every step size at once\")", lo=0, lo_open=True, range_ok=True,
           metavar="ETA|LO:HI", **_NOT_WITH_GRID("eta")),
    Option("logit_scale", "choice", "D", "softmax(P^T W_KQ P / D) (seed, default) or / sqrt(D)",
           choices=("D", "sqrtD"), **_NOT_WITH_GRID("logit_scale")),
    Option("statement", "str", None, "decide only this statement (the ledger's label: 'Lemma D.4', 'Lemma D.5', "
           "'Lemma D.8', 'Lemma D.9', 'Lemma D.9 (increment)', 'Lemma D.10', 'Lemma D.11', 'Lemma D.12', "
           "'Lemma D.13 (attention)', 'Lemma D.13 (C1 step)', 'Lemma D.15', 'Lemma D.15 (proof)', 'Lemma D.16', "
           "'Lemma D.17 (C1 band)', 'Lemma D.18', 'Lemma D.19' or, with an --eta range only, 'Lemma D.13 (t1)' and "
           "'Lemma D.17' (t1 and T* = Theta(1/eta)); "
           "repeatable; default all)", repeatable=True,
           api_types=(list, tuple), check_value=_check_prove_label, metavar="LABEL"),
    Option("max_steps", "int", None, "step budget of the certified iteration, honoured exactly: it "
           "stops at step N at the latest (default: max(2 T*, T0)). A budget below T0 (estimated from "
           "the float64 T* before any work) is refused, since the region needs the state at T0; with "
           "--grid such instances are skipped. A statement neither refuted nor carried by the region "
           "by then is undecided", lo=1, hi=10**9, **_NOT_WITH_ETA_RANGE("max_steps", "no iteration runs")),
    Option("route", "choice", "float", "the certified iteration after t1 + 1: float (default; compiled float64 "
           "intervals, outward rounding, about 2.7e6 steps/s at D = 12; a counterexample shows only its certified "
           "digits, about 12 to 16 past t1) or arb (200-bit balls from step 0, about 6e4 steps/s; counterexamples to "
           "40 digits). Steps 0 .. t1 + 1 are arb's in both (docs/proofs.md, \"The float route\")",
           choices=("float", "arb"), **_NOT_WITH_ETA_RANGE("route", "no iteration runs")),
    Option("max_boxes", "int", 200000, "box budget of the branch and bound (Model A: the invariant "
           "region's boxes, every band tried, and as much again for the derived late-phase statements on "
           "that region; --paper B: region and S0 boxes together; default 200000)", lo=1, hi=10**8),
    *(_not_with_eta_range(o, "the box proof takes seconds") for o in (
        o if o.applies is not None else
        dataclasses.replace(o, help=_PROVE_RESUME_HELP) if o.name == "resume" else dataclasses.replace(
            o, applies=lambda v: v["grid"] is None, refusal=f"{o.flag} does not apply with --grid (use --out: it is "
                                                            "rewritten after every instance; --resume FILE continues it)")
        for o in _checkpoint_options())),
    Option("grid", "str", None, "prove every instance of a grid instead of one (docs/proofs.md, \"Proof "
           "sweep\"): the syntax of rdyn sweep --grid over the keys D, K, activation, kappa, vstar_norm2, "
           "eta (numbers, or the words paper and half_limit) and logit_scale, e.g. "
           "'D=3:24:22;K=1:11:11;activation=relu,identity;eta=paper,half_limit'; points outside the "
           "papers' hypotheses are listed as skipped. At most 10000 points; each value is checked "
           "as the single-instance option would be (D in 2..10000, ...)", metavar="GRID",
           check_value=_check_prove_grid),
    Option("max_tstar", "int", None, "with --grid: skip instances whose float64 T* exceeds N (the cost "
           "cap; each instance iterates about T* certified steps: about 1.5e6 steps/s on the float route, "
           "30,000-90,000 with --route arb)", lo=1,
           hi=10**9, metavar="N", applies=lambda v: v["grid"] is not None, applies_text="with --grid"),
    Option("out", "out", None, "with --grid: also write the JSON result to FILE, rewritten after every "
           "instance (an interrupted sweep keeps what it proved)", output="file", metavar="FILE",
           applies=lambda v: v["grid"] is not None, applies_text="with --grid"),
    Option("scheduler", "str", None, "with --grid: a Dask distributed scheduler address (e.g. "
           "tcp://host:8786): one task per instance on its workers (needs the dask extra: pip install "
           "'rdyn-theory[dask]' where the scheduler and workers run too)", needs=("distributed", "dask"),
           check_value=check_scheduler, applies=lambda v: v["grid"] is not None, applies_text="with --grid"),
))


def _paper_a_prove(values: dict) -> bool:
    return values.get("paper", "A") == "A"


def _a_only(o: Option) -> Option:
    """A Model A option of ``rdyn prove``, refused with --paper B."""
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

    def refusal_for(v, refusal=refusal, inner_for=o.refusal_for):   # name the condition that failed
        if not _paper_a_prove(v) or refusal is None:
            return refusal_b
        return inner_for(v) if inner_for is not None else refusal

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
    Option("steps", "int", None, "--paper B, ln and looped, a spectrum with two or more distinct eigenvalues: "
           "certify this many GD steps from alpha0 = 0, beta0 = 1 at --eta (arb balls, the expectation by "
           "a rigorous integral over the eigenspace masses: 1-D for two levels, about 10-25 ms per step; the "
           "looped model 1-D for any number r of levels, about 6r ms; the LN layer nested 2-D, about 2 s per "
           "step for three levels, 0.6 r^2 s for r >= 4) and enclose R at the trained gamma_T",
           lo=1, hi=20000, applies=lambda v: _paper_b(v) and _b_model(v) in ("ln", "looped"),
           refusal="--steps applies only to --paper B --model ln or looped"),
)


def _with_paper_b(cmd: Command) -> Command:
    """``rdyn prove`` with ``--paper B`` (docs/proofs.md, Model B): ``--paper`` after ``--dps``, every
    Model A option refused with --paper B (``--eta`` also applies to --paper B with ``--steps``;
    ``--max-boxes`` to both), the Model B options appended."""
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
                applies=lambda v: (_paper_a_prove(v) and v.get("grid") is None) or (
                    v.get("steps") is not None and not eta_range(v)),
                refusal="--eta applies to --paper A without --grid (the grid's eta key sets it), or to --paper B "
                        "with --steps (Theorem B.3 runs at eta_max)",
                refusal_for=lambda v: ("an --eta range LO:HI applies only to --paper A (Model A's lag lemma and "
                                       "Lemmas D.18, D.19)") if eta_range(v) and not _paper_a_prove(v) else None))
        else:
            out.append(_a_only(o))
        if o.name == "dps":
            out.append(paper)
    return dataclasses.replace(cmd, help=cmd.help + "; --paper B: Model B's Theorem B.3, gamma* (Krawczyk) and "
                               "the looped contraction factor", options=tuple(out) + _PROVE_B)


PROVE = _with_paper_b(PROVE)


COMMANDS: dict[str, Command] = {c.name: c for c in (TEACHER, CROSSCHECK, FIGURES, LN, VERIFY,
                                                    SWEEP, SCALING, CLAIMS, ASYMPTOTICS, PROVE)}
