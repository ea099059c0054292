"""The options of every subcommand, declared once, and everything derived from them: the
command-line parsers and the API's keyword validation are both generated from one table, so
``rdyn CMD --opt`` and ``rdyn.CMD(opt=...)`` accept and refuse exactly the same values with
the same one-line :class:`~rdyn.output.UsageError`, before any work.

Modules, one concept each:

* :mod:`~rdyn.options.option`: what an option declares (:class:`Option`) and what a subcommand
  is (:class:`Command`);
* :mod:`~rdyn.options.table`: the table itself, :data:`COMMANDS` (with
  :data:`SMOOTH_ACTIVATIONS` and the applicability predicates);
* :mod:`~rdyn.options.limits`: the numeric bounds set by representation limits (``DPS_MIN``,
  ``DPS_MAX``, 64-bit integers, the float64-safe range);
* :mod:`~rdyn.options.value_checks`: checks of one value beyond type and range
  (``--activation-expr``, ``--vstar-row-norms``: :func:`parse_row_norms`, ``--scheduler``;
  ``--record`` against ``--steps``: ``parse_steps_list``);
* :mod:`~rdyn.options.integers`: the one rule for integers (:func:`integral`,
  :func:`integer_argument`);
* :mod:`~rdyn.options.shown_values`: given values quoted in one-line refusals (:func:`shown`,
  :func:`shown_integer`, :func:`shown_path`);
* :mod:`~rdyn.options.coercion`: the type and range of one given value;
* :mod:`~rdyn.options.paths`: the filesystem checks of input and output paths
  (:func:`check_output_path`, :func:`check_distinct_outputs`);
* :mod:`~rdyn.options.memory`: the memory check of a job (:func:`check_memory`);
* :mod:`~rdyn.options.validation`: the shared validation (:func:`validate`) and the typed
  options it feeds (:func:`typed_options`);
* :mod:`~rdyn.options.model_a_checks`: the cross-option checks of ``teacher`` and
  ``crosscheck`` (their ``Command.check``; the model's size: ``--groups``, presets);
* :mod:`~rdyn.options.engine_errors`: an engine's refusal as a one-line UsageError naming the
  option (:func:`usage_errors`, :func:`option_name`);
* :mod:`~rdyn.options.parsers`: argparse parsers and ``--help`` texts from the table
  (:func:`add_arguments`, :func:`help_text`);
* :mod:`~rdyn.options.docs_tables`: the option tables of docs/input_rules.md (:func:`markdown`);
* :mod:`~rdyn.options.type_generation`: the generator of rdyn/option_types.py
  (:func:`write_option_types`).

The names below are re-exported, so ``from rdyn.options import validate`` works as well as the
module path.
"""
from __future__ import annotations

from rdyn.options.coercion import coerce
from rdyn.options.docs_tables import markdown
from rdyn.options.integers import integer_argument, integral
from rdyn.options.limits import (D_MAX, DPS_MAX, DPS_MIN, GAUSSIAN_ROUTE_DPS_MAX, INITIAL_MAX,
                                 INT_OPTION_MAX, LN_DPS_MAX, MAX_MODEL_A_STEPS,
                                 MAX_TEACHER_STEPS, NOISE_STD_MAX, SEED_MAX, SMOOTH_DPS_MAX,
                                 VSTAR_NORM2_MAX)
from rdyn.options.memory import available_memory, check_memory
from rdyn.options.option import Command, Option
from rdyn.options.parsers import add_arguments, given_from_args, help_text
from rdyn.options.paths import (OUTPUT_MAY_BE_INPUT, check_distinct_outputs, check_input_file,
                                check_output_path, probe_file, probe_folder)
from rdyn.options.shown_values import shown, shown_integer, shown_path
from rdyn.options.table import (ASYMPTOTICS, CLAIMS, COMMANDS, CROSSCHECK, FIGURES, LN,
                                PROVE, PROVE_LABELS, SCALING, SMOOTH_ACTIVATIONS, SWEEP,
                                TEACHER, VERIFY)
from rdyn.options.type_generation import (OPTION_TYPES_MODULE, option_class_name,
                                          option_types_source, write_option_types)
from rdyn.options.validation import check_dependency, typed_options, validate
from rdyn.options.value_checks import parse_row_norms

__all__ = [
    "ASYMPTOTICS", "CLAIMS", "COMMANDS", "CROSSCHECK", "Command", "DPS_MAX", "DPS_MIN", "D_MAX",
    "FIGURES", "GAUSSIAN_ROUTE_DPS_MAX", "INITIAL_MAX", "INT_OPTION_MAX", "LN", "LN_DPS_MAX",
    "MAX_MODEL_A_STEPS", "MAX_TEACHER_STEPS", "NOISE_STD_MAX", "OPTION_TYPES_MODULE",
    "OUTPUT_MAY_BE_INPUT", "Option", "PROVE", "PROVE_LABELS", "SCALING", "SEED_MAX",
    "SMOOTH_ACTIVATIONS", "SMOOTH_DPS_MAX", "SWEEP", "TEACHER", "VERIFY", "VSTAR_NORM2_MAX",
    "add_arguments", "available_memory", "check_dependency", "check_distinct_outputs",
    "check_input_file", "check_memory", "check_output_path", "coerce", "given_from_args",
    "help_text", "integer_argument", "integral", "markdown", "option_class_name",
    "option_types_source", "parse_row_norms", "probe_file", "probe_folder", "shown",
    "shown_integer", "shown_path", "typed_options", "validate", "write_option_types",
]
