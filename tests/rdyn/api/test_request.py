"""Issue 41, item 1: one typed request from ``rdyn teacher``'s options to the engine.

The request (reduced_dynamics/model_a/request.py) is frozen, has every ``None`` default resolved
where the API builds it, the engines refuse inputs with a FieldError naming the field (the API
names the option), and the library dispatches on types, never by probing attributes."""
from __future__ import annotations

import ast
import dataclasses
import math
import pathlib

import pytest

from cli_runs import run_main
from rdyn.api._common import options
from rdyn.options.engine_errors import option_name
from rdyn.api._teacher import teacher_request
from rdyn.reduced_dynamics.model_a import request as rq

ROOT = pathlib.Path(__file__).resolve().parents[3]


def request_of(**given):
    return teacher_request(options("teacher", {"quiet": True, **given}))


def test_the_request_and_its_parts_are_frozen():
    request = request_of(task="cnn")
    for part, name in ((request, "model"), (request.model, "eta"), (request.numerics, "dps"),
                       (request.control, "steps")):
        with pytest.raises(dataclasses.FrozenInstanceError):
            setattr(part, name, None)
    assert {f.name for f in dataclasses.fields(rq.Request)} == {"model", "numerics", "control"}


def test_a_homogeneous_request_has_its_defaults_resolved():
    from fractions import Fraction

    from rdyn.reduced_dynamics.model_a.dynamics import eta_limit, eta_limit_fraction

    request = request_of(task="cnn")
    model, numerics, control = request.model, request.numerics, request.control
    config = model.config
    assert config.kind == "homogeneous" and model.moments == rq.HOMOGENEOUS
    assert config.eta is None   # the engine's exact eta at --dps is eta_limit/2 exactly
    assert model.eta == eta_limit(config) / 2 == float(eta_limit_fraction(config) / 2)
    assert model.eta == config.step_size == rq.resolve_eta(config)
    assert Fraction(model.eta) != 0 and math.isfinite(model.eta)
    assert model.thresholds.t1_fraction == 0.95 and model.thresholds.attention(config.K) == 1 / (2 * config.K)
    assert (numerics.backend, numerics.dps, numerics.route) == ("float64", None, "auto")
    assert control.checkpoint_every == 60.0 and control.min_default_steps == 1000
    assert control.method == "map" and control.certify is False and control.progress is False
    assert request_of(task="cnn", eta=0.25).model.eta == 0.25


def test_numerics_resolve_precision_and_dps():
    from rdyn.reduced_dynamics.model_a.dynamics import DD_DIGITS

    assert request_of(D=12, K=3, steps=10, precision="dd").numerics.dps == DD_DIGITS
    arb = request_of(D=12, K=3, steps=10, dps=30).numerics
    assert (arb.backend, arb.dps) == ("arb", 30)


def test_a_smooth_request_names_its_moment_provider_and_resolves_eta():
    from rdyn.reduced_dynamics.model_a.smooth import eta_limit

    request = request_of(D=12, K=3, activation="erf", steps=100)
    config = request.model.config
    assert config.kind == "smooth" and config.eta is None
    assert request.model.eta == eta_limit(config) / 2
    assert request.model.moments == rq.TABLES
    assert request_of(D=12, K=3, activation="erf", steps=100,
                      smooth_route="exact").model.moments == rq.SMOOTH_CLOSED_FORM
    precise = request_of(D=12, K=3, activation="tanh", steps=10, dps=20)
    assert precise.model.moments == rq.TENSOR_RULE and precise.numerics.backend == "arb"


def test_the_engine_runs_the_request_it_is_given():
    from rdyn import teacher

    result = teacher(task="cnn", steps=50, quiet=True)
    run = result.detail["run"]
    assert result.detail["request"].model.eta == run.eta == result.eta
    assert result.detail["warnings"] == []


def test_an_engine_error_names_its_field_and_the_cli_its_option(capsys):
    from rdyn.reduced_dynamics.model_a.presets import check_preset, validate_groups

    with pytest.raises(rq.FieldError) as info:
        check_preset("gcn", None, 4)
    assert info.value.field == "K" and isinstance(info.value, ValueError)
    assert str(info.value) == "task gcn has K = 3; K cannot change it"
    assert info.value.message(option_name) == "task gcn has K = 3; --K cannot change it"
    rc, _, err = run_main(capsys, ["teacher", "--task", "gcn", "--K", "4"])
    assert rc == 2 and err == "rdyn teacher: error: task gcn has K = 3; --K cannot change it\n"

    with pytest.raises(rq.FieldError) as info:
        validate_groups([[0], [1]], 3)
    assert info.value.fields == ("groups", "D")
    assert str(info.value) == "groups has 2 groups but D is 3"
    assert info.value.message(option_name) == "--groups has 2 groups but --D is 3"


def test_field_names_map_to_option_names():
    assert [option_name(f) for f in ("K", "vstar_norm2", "tstar_attention", "dps", "route")] == \
        ["--K", "--vstar-norm2", "--tstar-attention", "--dps", "--smooth-route"]
    error = rq.FieldError("M", "{M} must be >= 1").prefixed("--grid point (D=20): ")
    assert (error.field, str(error)) == ("M", "--grid point (D=20): M must be >= 1")
    assert error.message(option_name) == "--grid point (D=20): --M must be >= 1"


def test_a_smooth_engine_refusal_reaches_users_with_the_option(capsys):
    from rdyn.derivations.activations import Activation
    from rdyn.reduced_dynamics.model_a.smooth import SmoothConfig

    with pytest.raises(rq.FieldError) as info:
        SmoothConfig(D=12, K=3, activation=Activation("erf"), vstar_norm2=math.inf)
    assert info.value.field == "vstar_norm2"
    assert str(info.value) == "vstar_norm2 must be a finite number > 0"
    # the Gauss-Hermite rule's refusal names the activation, and in its remedy two more fields
    rc, _, err = run_main(capsys, ["teacher", "--D", "12", "--K", "3", "--activation", "tanh",
                                   "--vstar-norm2", "1e8", "--steps", "10", "--quiet"])
    assert rc == 2 and err.startswith("rdyn teacher: error: --activation tanh: the Gauss-Hermite "
                                      "rule does not reach float64"), err
    assert "(lower --vstar-norm2 or raise --M)" in err and err.count("\n") == 1
    rc, _, err = run_main(capsys, ["teacher", "--task", "cnn", "--method", "flow",
                                   "--tstar-attention", "0.01", "--quiet"])
    assert rc == 2 and err == ("rdyn teacher: error: --tstar-attention <= 1/D: T* = 0 "
                               "(p(0) = 1/D); use --method map\n")


# hasattr(...) calls that are feature checks of a platform or a dependency, not dispatch on the
# kind of a value: (path, first argument, attribute) -> why it stays
FEATURE_CHECKS = {
    ("reduced_dynamics/runs/kernel_cache.py", "os", "getuid"): "a POSIX function (absent on Windows)",
    ("derivations/formula.py", "signal", "setitimer"): "a POSIX function (absent on Windows)",
    ("reduced_dynamics/runs/kernel_cache.py", "arraymath", "_HAVE_BLAS"):
        "a numba internal that only some numba versions have",
    ("rdyn/options/shown_values.py", "value", "shape"):
        "how a refused value is shown (any array-like); the options package belongs to issue 41's "
        "option split",
    ("rdyn/options/shown_values.py", "value", "dtype"): "as above",
}


def hasattr_calls():
    for folder in ("rdyn", "reduced_dynamics", "verify", "derivations"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                        and node.func.id == "hasattr" and len(node.args) == 2):
                    obj, attr = node.args
                    yield (path.relative_to(ROOT).as_posix(), ast.unparse(obj),
                           attr.value if isinstance(attr, ast.Constant) else ast.unparse(attr))


def test_no_hasattr_dispatch_in_the_library():
    found = set(hasattr_calls())
    assert found - set(FEATURE_CHECKS) == set(), \
        "dispatch on a type (isinstance, a config's kind), not on hasattr"


def test_configs_declare_their_family():
    from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig
    from rdyn.reduced_dynamics.model_a.smooth import SmoothConfig

    assert (TeacherConfig.kind, SmoothConfig.kind) == ("homogeneous", "smooth")
    assert "kind" not in {f.name for f in dataclasses.fields(TeacherConfig)}
    assert set(rq.ENGINES) == set(rq.MOMENT_PROVIDERS)


def test_prove_resolves_eta_in_one_place():
    """rdyn prove's missing eta is the papers' condition (unlike rdyn teacher's eta_limit/2); the
    single instance and every grid point take it from instance_eta."""
    from fractions import Fraction

    from rdyn.api._prove import hypotheses
    from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig, eta_limit_fraction
    from rdyn.verification.proofs.sweep import instance_eta, paper_eta, parse

    v = hypotheses(options("prove", {"D": 5, "K": 1}))
    assert v["eta"] == paper_eta(5, 1, 1.0) == instance_eta("paper", 5, 1, 1.0)
    assert hypotheses(options("prove", {"D": 5, "K": 1, "eta": 0.001}))["eta"] == 0.001
    assert instance_eta("half_limit", 5, 1, 1.0) is None   # the Instance's exact eta_limit/2
    grid, _ = parse("D=5;K=1;eta=paper,half_limit")
    etas = {p.eta_rule: p.instance for p in grid}
    assert etas["paper"].eta == v["eta"]
    assert etas["half_limit"].exact_eta() == Fraction(eta_limit_fraction(TeacherConfig(D=5, K=1, kappa=0.0)) / 2)
    # the default satisfies the papers' conditions exactly, and paper_conditions compares exactly: at D = 9, K = 3
    # the float nearest 1/45 (0.022222222222222223) breaks Lemma D.9's condition by 8e-19, the default does not
    nine = hypotheses(options("prove", {"D": 9, "K": 3}))
    assert nine["eta"] == 0.02222222222222222 and nine["paper_conditions"] == {"lemma_D5": True, "lemma_D9": True}
    near = hypotheses(options("prove", {"D": 9, "K": 3, "eta": 0.022222222222222223}))
    assert near["paper_conditions"] == {"lemma_D5": True, "lemma_D9": False}
