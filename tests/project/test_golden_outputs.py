"""Identical outputs: the exit status and stdout (and a refusal's stderr) of a fixed set of commands,
run in-process, equal the recorded ones in tests/project/golden/outputs.json. A refactor must not move a digit.
The masked fields are wall-clock times (``"seconds"``, ``"iteration_seconds"`` in rdyn prove's JSON).

Byte for byte on the machine that recorded them. Another CPU may round the last bit of a float64 differently
(numpy's exp and log have AVX-512 kernels; a machine without AVX-512 takes libm's), so a JSON output that is not
byte-identical is compared value by value (:func:`same_values`): keys, list lengths, strings, integers, booleans
and nulls exactly, every float to 1e-9 relative, and the few floats that measure rounding noise itself
(:data:`NOISE`) to their scale.

Re-record only when an output is meant to change, and say why in the commit:

    python tests/project/test_golden_outputs.py
"""
from __future__ import annotations

import json
import pathlib
import re
import sys

import pytest

SPECTRUM = ["--data", "spectrum", "--d", "3", "--spectrum", "4,1,1"]
SMALL = ["--D", "12", "--K", "3"]

COMMANDS = {
    "teacher_cnn": ["teacher", "--task", "cnn", "--json", "--quiet"],
    "teacher_cnn_text": ["teacher", "--task", "cnn", "--quiet"],
    "teacher_gcn_record": ["teacher", "--task", "gcn", "--steps", "2000", "--record", "0,10,1000", "--json", "--quiet"],
    "teacher_leaky_dps": ["teacher", "--task", "sts", "--activation", "leaky", "--steps", "300", "--dps", "30",
                          "--json", "--quiet"],
    "teacher_identity_sqrtD": ["teacher", "--task", "gslp", "--activation", "identity", "--logit-scale", "sqrtD",
                               "--steps", "500", "--json", "--quiet"],
    "teacher_erf": ["teacher", *SMALL, "--activation", "erf", "--steps", "3000", "--json", "--quiet"],
    "teacher_tanh": ["teacher", *SMALL, "--activation", "tanh", "--steps", "2000", "--json", "--quiet"],
    "teacher_expr": ["teacher", *SMALL, "--activation", "expr", "--activation-expr", "x/(1+x*x)+0.25*x*x",
                     "--steps", "200", "--json", "--quiet"],
    "teacher_certify": ["teacher", *SMALL, "--steps", "5000", "--certify", "--json", "--quiet"],
    "teacher_certify_dps": ["teacher", *SMALL, "--steps", "200", "--certify", "--dps", "30", "--json", "--quiet"],
    "teacher_certify_erf": ["teacher", *SMALL, "--activation", "erf", "--steps", "100", "--certify", "--json",
                            "--quiet"],
    "teacher_flow": ["teacher", "--task", "cnn", "--method", "flow", "--json", "--quiet"],
    "teacher_dd": ["teacher", *SMALL, "--steps", "1000", "--precision", "dd", "--json", "--quiet"],
    "ln_spectrum": ["ln", *SPECTRUM, "--steps", "200", "--json", "--quiet"],
    "ln_text": ["ln", *SPECTRUM, "--steps", "50", "--quiet"],
    "ln_looped": ["ln", "--model", "looped", *SPECTRUM, "--steps", "100", "--json", "--quiet"],
    "sweep_small": ["sweep", "--grid", "D=20,24;K=2", "--steps", "100", "--json", "--quiet"],
    "sweep_erf": ["sweep", "--grid", "D=20", "--activation", "erf", "--steps", "100", "--json", "--quiet"],
    "crosscheck_population": ["crosscheck", "--D", "8", "--K", "2", "--steps", "50", "--json", "--quiet"],
    "prove_small": ["prove", "--D", "5", "--K", "1", "--json"],
    "prove_small_arb": ["prove", "--D", "5", "--K", "1", "--route", "arb", "--json"],
    "prove_b": ["prove", "--paper", "B", "--json"],
    "prove_eta_box": ["prove", *SMALL, "--eta", "0:0.004", "--json"],
    "prove_eta_box_budget": ["prove", *SMALL, "--eta", "0.55:0.6", "--max-boxes", "8000", "--statement", "Lemma D.19",
                             "--json"],
    "prove_eta_box_starved": ["prove", "--D", "13", "--K", "3", "--eta", "0:0.004", "--max-boxes", "500",
                              "--statement", "Lemma D.19", "--json"],
    "prove_all_d": ["prove", "--D", "12:", "--K", "3", "--json"],
    "prove_all_d_leaky": ["prove", "--D", "12:", "--K", "3", "--activation", "leaky", "--kappa", "0.95", "--json"],
    "prove_all_d_fails": ["prove", "--D", "12:", "--K", "3", "--vstar-norm2", "1e6", "--json"],
    "asymptotics_relu": ["asymptotics", "--activation", "relu", "--json"],
    "refuse_K": ["teacher", "--D", "5", "--K", "5"],
    "refuse_diverges": ["teacher", "--task", "cnn", "--eta", "5", "--quiet"],
    "refuse_expr": ["teacher", "--activation", "expr", "--activation-expr", "x*x/(1+x*x)"],
    "refuse_spectrum": ["ln", "--data", "spectrum", "--d", "3", "--spectrum", "4,1"],
}


#: floats that are rounding noise by definition, with how closely two machines must agree on them:
#: ``("abs", a)`` |x - y| <= a; ``("rel", r)`` |x - y| <= r max(|x|, |y|)
NOISE = {
    "tau1_dev": ("abs", 1e-9),           # tau1 - its limit, about 1e-12 (asymptotics' check rows)
    "error_estimate": ("rel", 0.01),     # a quadrature's estimate of its own rounding error
    "rad": ("rel", 0.25),                # a certified ball's radius: rounding of the ball's midpoint
    "radius": ("rel", 0.25),
}
FLOAT_RTOL = 1e-9


def same_values(observed_value, recorded_value, key: str | None = None) -> bool:
    """True when two parsed JSON values agree as the module docstring says: structure and every non-float
    exactly, floats to :data:`FLOAT_RTOL` relative, the :data:`NOISE` fields to their own scale."""
    a, b = observed_value, recorded_value
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_values(a[k], b[k], k) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_values(x, y, key) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, float):
        kind, tol = NOISE.get(key, ("rel", FLOAT_RTOL))
        return a == b or abs(a - b) <= (tol if kind == "abs" else tol * max(abs(a), abs(b)))
    return type(a) is type(b) and a == b


def agrees(seen: dict, entry: dict) -> bool:
    """The observed ``{"rc", "stdout", "stderr"}`` against the recorded entry: bytes, or values for JSON."""
    want = {key: entry[key] for key in ("rc", "stdout", "stderr")}
    if seen == want:
        return True
    if (seen["rc"], seen["stderr"]) != (want["rc"], want["stderr"]):
        return False
    try:
        return same_values(json.loads(seen["stdout"]), json.loads(want["stdout"]))
    except json.JSONDecodeError:   # text output: bytes only
        return False


WALL_CLOCK = re.compile(r'"(seconds|iteration_seconds)": [-+.0-9eE]+')
OUTPUTS = pathlib.Path(__file__).with_name("golden") / "outputs.json"


def observed(argv):
    """{"rc", "stdout", "stderr"} of ``rdyn ARGV``; stderr only for a refusal or a failure (a run's stderr has
    timings: exit 0, and exit 1 of rdyn prove, a finished proof with a statement not certified)."""
    from cli_runs import run_captured

    rc, out, err = run_captured(argv)
    out = WALL_CLOCK.sub(r'"\1": "masked"', out)
    return {"rc": rc, "stdout": out, "stderr": err if rc not in (0, 1) else None}


def recorded():
    return json.loads(OUTPUTS.read_text(encoding="utf-8"))


def test_the_recorded_commands_are_the_listed_ones():
    assert {name: entry["argv"] for name, entry in recorded().items()} == COMMANDS


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_output_is_identical(name):
    entry = recorded()[name]
    seen = observed(entry["argv"])
    assert agrees(seen, entry), (seen, {key: entry[key] for key in ("rc", "stdout", "stderr")})


def test_values_are_compared_to_the_stated_tolerances():
    """A float one rounding apart passes, a moved digit (1e-8 relative) or a changed integer fails, and a noise
    field is held to its own scale."""
    assert same_values({"a": [1.0, 2.0]}, {"a": [1.0, 2.0 + 4e-16]})
    assert not same_values({"a": 1.0}, {"a": 1.0 + 1e-8})
    assert not same_values({"a": 1}, {"a": 2})
    assert not same_values({"a": 1}, {"a": 1.0})
    assert not same_values({"a": 1.0}, {"b": 1.0})
    assert same_values({"tau1_dev": 1.7e-12}, {"tau1_dev": -1.8e-12})
    assert not same_values({"tau1_dev": 1e-6}, {"tau1_dev": 0.0})
    assert same_values({"rad": 8.86e-41}, {"rad": 8.67e-41})
    assert not same_values({"rad": 8.86e-41}, {"rad": 4e-41})
    entry = {"rc": 0, "stdout": '{"x": 0.1}\n', "stderr": None}
    assert agrees({"rc": 0, "stdout": '{"x": 0.10000000000000002}\n', "stderr": None}, entry)
    assert not agrees({"rc": 1, "stdout": '{"x": 0.1}\n', "stderr": None}, entry)
    assert not agrees({"rc": 0, "stdout": "x = 0.10000000000000002\n", "stderr": None},
                      {"rc": 0, "stdout": "x = 0.1\n", "stderr": None})


def write():
    table = {name: {"argv": argv, **observed(argv)} for name, argv in COMMANDS.items()}
    tmp = OUTPUTS.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(table, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    tmp.replace(OUTPUTS)


if __name__ == "__main__":
    import rdyn  # noqa: F401  first: tests/rdyn/ (no __init__.py) must not shadow it
    import rdyn.cli

    rdyn.cli.pin_blas_threads()   # the command line's one BLAS thread, as tests/conftest.py sets it
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1]))  # tests/: cli_runs
    write()
