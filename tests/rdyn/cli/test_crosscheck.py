"""rdyn crosscheck: the interface contract of docs/interface.md and the bars of issue 3."""
import json
import subprocess
import sys

import pytest

from rdyn.verification.references.crosscheck import crosscheck
from rdyn.reduced_dynamics.model_a.presets import preset_groups
from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig


def rdyn(*args):
    return subprocess.run([sys.executable, "-m", "rdyn", "crosscheck", *args],
                          capture_output=True, text=True)


def test_json_contract_population_random_P():
    out = rdyn("--task", "gcn", "--activation", "leaky", "--kappa", "0.2", "--P", "random",
               "--d", "3", "--M", "3", "--steps", "300", "--record", "0,1,300", "--json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert {"max_rel_dev", "structure_residual", "steps", "mode"} <= data.keys()
    assert data["steps"] == 300 and data["mode"] == "population"
    assert data["max_rel_dev"] <= 1e-8 and data["structure_residual"] <= 1e-10
    rec = data["record"]
    assert set(rec) == {"0", "1", "300"}
    # step 1 from zero: C1 = eta D s0 E[sigma'(g)] p... read the collapsed value independently:
    # C1(1) = eta * D * s0 * (1 + kappa)/2 * <s*_i, s_i> with s_i uniform: <s*_i, s_i> = 1/D
    eta = data["eta"]
    assert rec["1"]["full"]["C1"] == pytest.approx(eta * (1 + 0.2) / 2, rel=1e-14)
    assert rec["1"]["full"]["C2"] == 0 and rec["0"]["collapsed"]["C1"] == 0


def test_sgd_mode_deviation_is_batch_noise():
    """SGD: the deviation from the collapsed iterates is of the size of the batch noise,
    and it shrinks with the batch size (about 1/sqrt(N))."""
    config = TeacherConfig(D=20, K=4, activation="relu")
    groups = preset_groups("sts", 20, 4)
    small = crosscheck(config, groups, mode="sgd", steps=40, batch_size=16, seed=1)
    large = crosscheck(config, groups, mode="sgd", steps=40, batch_size=256, seed=1)
    for r in (small, large):
        assert r.expected_rel_dev > 0
        assert 0.05 < r.max_rel_dev / r.expected_rel_dev < 5
    assert 2 < small.max_rel_dev / large.max_rel_dev < 16  # sqrt(256/16) = 4; measured 7.6


@pytest.mark.parametrize("args, message", [
    (("--kappa", "0.2"), "--kappa applies"),
    (("--batch", "10"), "--batch applies to --mode sgd"),
    (("--noise-std", "0.5"), "--noise-std applies"),
    (("--task", "cnn", "--D", "10", "--K", "4"), "multiple of K"),
    (("--mode", "sgd", "--batch", "0"), "--batch must be >= 1"),
    (("--steps", "5", "--record", "6"), "--record: step 6"),
    (("--dps", "30"), "float64 only"),
    (("--eta", "-1"), "eta must be > 0"),
])
def test_usage_errors(args, message):
    out = rdyn(*args)
    assert out.returncode == 2
    assert message in out.stderr and "Traceback" not in out.stderr
    assert out.stdout == ""
