"""rdyn.verification.references.full_matrix: the exact population gradient of Model A's full model (seed 000,
Section 2 / Lemma D.2 setting) against finite differences, Monte Carlo and the collapsed map."""
import math

import numpy as np
import pytest

from rdyn.reduced_dynamics.model_a.presets import preset_groups
from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig, run as run_collapsed
from rdyn.verification.references import full_matrix as fm

ACTIVATIONS = ("identity", "relu", "leaky")
PRESETS = {"cnn": (36, 4), "gcn": (20, 3), "sts": (20, 4), "gslp": (20, 1)}


def _model(activation, task="gcn", D=None, positional="random", seed=3, **kw):
    D0, K = PRESETS[task]
    D = D or D0
    return fm.make_model(preset_groups(task, D, K), M=3, d=4, vstar_norm2=2.0,
                         activation=activation, kappa=0.3, positional=positional, seed=seed, **kw)


def _random_point(model, seed=5, logit_size=3.0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((model.M, model.d)), logit_size * rng.standard_normal((model.D, model.D))


@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_population_gradient_matches_finite_differences(activation):
    """Directional derivatives of the exact loss (central differences, step 1e-5) equal
    <grad, direction> at a generic off-structure point, for W_V and W_KQ separately."""
    model = _model(activation, D=8)
    W_V, W_KQ = _random_point(model)
    res = fm.population(model, W_V, W_KQ)
    rng = np.random.default_rng(11)
    h = 1e-5
    for _ in range(3):
        dV, dK = rng.standard_normal(W_V.shape), rng.standard_normal(W_KQ.shape)
        for which, direction in (("V", dV), ("K", dK)):
            def loss(s):
                if which == "V":
                    return fm.population(model, W_V + s * direction, W_KQ, need_gradient=False).loss
                return fm.population(model, W_V, W_KQ + s * direction, need_gradient=False).loss
            fd = (loss(h) - loss(-h)) / (2 * h)
            grad = res.grad_WV if which == "V" else res.grad_WKQ
            exact = float(np.sum(grad * direction))
            assert abs(fd - exact) <= 1e-7 * max(1.0, abs(exact)), (which, fd, exact)


@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_population_matches_monte_carlo(activation):
    """Exact loss and gradient vs the mean of sampled (noise-free) batch losses/gradients:
    every entry within 5 standard errors (200k samples), and the loss within 5 SE."""
    assert_population_matches_batches(_model(activation, D=6))


def assert_population_matches_batches(model):
    """Exact loss and gradient at a generic point vs the mean of 100 sampled noise-free
    batches of 2000: every entry within 5 standard errors."""
    W_V, W_KQ = _random_point(model, logit_size=1.0)
    exact = fm.population(model, W_V, W_KQ)
    rng = np.random.default_rng(2)
    losses, gv, gk = [], [], []
    for _ in range(100):
        X, Y, clean = fm.sample_batch(model, rng, 2000, 0.0)
        b = fm.batch(model, W_V, W_KQ, X, Y, clean)
        losses.append(b.loss), gv.append(b.grad_WV), gk.append(b.grad_WKQ)
    for est, value in ((np.array(losses), exact.loss), (np.array(gv), exact.grad_WV),
                       (np.array(gk), exact.grad_WKQ)):
        mean, se = est.mean(axis=0), est.std(axis=0, ddof=1) / math.sqrt(len(est))
        z = np.abs(mean - value) / np.maximum(se, 1e-12)
        assert np.max(z) < 5.0, np.max(z)


@pytest.mark.parametrize("activation", ACTIVATIONS)
def test_zero_value_matrix_is_degenerate_case(activation):
    """At W_V = 0 the student pre-activation is identically 0: grad_{W_V} =
    -s0 E[sigma'(g)] sum_i <s*_i, s_i> v*_m (closed form), grad_{W_KQ} = 0, and the loss is
    the teacher's second moment m2 ||V*||^2 sum_i ||s*_i||^2 / 2."""
    s0 = 0.5
    model = _model(activation, sigma_prime_zero=s0)
    _, W_KQ = _random_point(model)
    res = fm.population(model, np.zeros((model.M, model.d)), W_KQ)
    S, S_star = fm.attention(model, W_KQ), fm.teacher_attention(model.groups)
    slope = fm.NEGATIVE_SLOPE[activation](0.3)
    expected = -s0 * (1 + slope) / 2 * np.sum(S * S_star) * model.vstar
    np.testing.assert_allclose(res.grad_WV, expected, rtol=1e-13, atol=0)
    assert np.all(res.grad_WKQ == 0)
    m2 = (1 + slope**2) / 2
    assert res.loss == pytest.approx(m2 * np.sum(model.vstar**2) * np.sum(S_star**2) / 2, rel=1e-14)


def test_loss_zero_at_teacher():
    """With in-group logits so peaked that S = S* to 1e-50, the pre-activations are collinear
    (theta = 0) and loss(W_V = c V*) = m2 (1 - c)^2 ||V*||^2 sum_i ||s*_i||^2 / 2 for ReLU,
    c > 0 (m2 = 1/2, ||s*_i||^2 = 1/K); in particular 0 at the teacher (c = 1)."""
    model = _model("relu", task="sts", positional="identity")
    a_in, a_out = fm.structure_matrices(model.groups)
    W_KQ = 60.0 * model.D * (a_in - a_out)  # in-group softmax weight 1/K to 1e-50
    for c in (1.0, 0.5, 2.0):
        loss = fm.population(model, c * model.vstar, W_KQ, need_gradient=False).loss
        expected = 0.5 * (1 - c) ** 2 * np.sum(model.vstar**2) * model.D / len(model.groups[0]) / 2
        assert loss == pytest.approx(expected, rel=1e-12, abs=1e-15)


@pytest.mark.parametrize("task", sorted(PRESETS))
@pytest.mark.parametrize("activation", ACTIVATIONS)
@pytest.mark.parametrize("positional", ("identity", "random"))
def test_population_gd_follows_collapsed_map(task, activation, positional):
    """Full-matrix population GD from zero stays on the collapsed structure and reproduces
    the collapsed iterates (Lemma D.2) to <= 1e-8 relative over 300 steps; residual <= 1e-10."""
    D, K = PRESETS[task]
    groups = preset_groups(task, D, K)
    model = fm.make_model(groups, M=3, d=5, vstar_norm2=1.7, activation=activation, kappa=0.2,
                          positional=positional, seed=4)
    config = TeacherConfig(D=D, K=K, activation=activation, kappa=0.2, vstar_norm2=1.7)
    steps = 300
    full = fm.gradient_descent(model, config.step_size, steps)
    ref = run_collapsed(config, steps=steps, record=range(steps + 1)).record
    dev, residual = 0.0, 0.0
    for t, pr in zip(full.steps, full.projections):
        for got, want in ((pr.C1, ref[t].C1), (pr.C2, ref[t].C2), (pr.C3, ref[t].C3)):
            if want != 0:
                dev = max(dev, abs(got - float(want)) / abs(float(want)))
        residual = max(residual, pr.residual_WV, pr.residual_WKQ)
        assert full.loss[t] == pytest.approx(float(ref[t].loss), rel=1e-10)
    assert dev <= 1e-8 and residual <= 1e-10
    assert ref[steps].C2 > 0  # the attention has moved, so C2, C3 were compared


def test_projection_reads_structured_matrices_exactly():
    model = _model("relu", task="cnn", D=12, positional="random")
    a_in, a_out = fm.structure_matrices(model.groups)
    W_KQ = model.P @ (1.25 * a_in - 0.5 * a_out) @ model.P.T
    pr = fm.project(model, -0.75 * model.vstar, W_KQ)
    assert pr.C1 == pytest.approx(-0.75, abs=1e-15) and pr.C2 == pytest.approx(1.25, abs=1e-14)
    assert pr.C3 == pytest.approx(0.5, abs=1e-14)
    assert pr.residual_WV < 1e-15 and pr.residual_WKQ < 1e-14


def test_collapsed_manifold_attracts_and_needs_equal_groups():
    """Beyond the paper (rdyn.verification.references.manifold): from a 1e-3 random off-structure start, the
    off-structure part of W_V decays geometrically in phase [t1, T*) down to rounding, and
    that of the (column-centred) logits decays in [t1, T*) and after T*; with unequal group
    sizes GD from zero leaves span{A_in, A_out} (residual O(0.1)) but W_V stays along V*,
    while the same run with equal sizes stays on the structure."""
    from rdyn.verification.references import manifold

    study = manifold.attraction_study(preset_groups("gcn", 8, 3), "relu", steps=400)
    assert study.t1 == 7 and study.T_star == 128  # the collapsed run sets the phases
    rates = {r.phase: r for r in study.rates}
    assert rates["[t1, T*)"].rate_V < -0.1 and study.off_V[-1] < 1e-11 * study.off_V[0]
    assert rates["[t1, T*)"].rate_KQ < -5e-4 and rates["[T*, end]"].rate_KQ < -5e-4
    assert rates["[0, t1)"].rate_V > 0  # transient growth near W_V = 0 (ReLU)
    unequal = manifold.unequal_groups_residual([[0, 1] if i % 2 else [0, 1, 2] for i in range(8)],
                                               steps=100)
    assert unequal.residual_WKQ > 0.05 and unequal.residual_WV < 1e-13
    equal = manifold.unequal_groups_residual(preset_groups("sts", 8, 2), steps=100)
    assert equal.residual_WKQ < 1e-10 and equal.residual_WV < 1e-13


# ------------------------------------------------------------- smooth activations (issue 22)

SMOOTH = ("erf", "tanh", "softplus")


def _smooth_model(name, D=6, seed=3, formula=None):
    return fm.make_model(preset_groups("gcn", D, 3), M=3, d=4, vstar_norm2=2.0,
                         activation=name, positional="random", seed=seed, formula=formula)


@pytest.mark.parametrize("name", SMOOTH)
def test_smooth_model_has_equal_rows_and_gradient_matches_finite_differences(name):
    """A smooth sigma: V* rows of equal norm (||V*||_F^2 kept), and the Gauss-Hermite
    population loss's gradient (Price's theorem through the same chain rule) equals central
    differences of that loss at a generic off-structure point."""
    model = _smooth_model(name)
    norms = np.linalg.norm(model.vstar, axis=1)
    assert np.ptp(norms) <= 1e-15 * norms[0] and np.sum(model.vstar**2) == pytest.approx(2.0, rel=1e-15)
    W_V, W_KQ = _random_point(model, logit_size=1.0)
    res = fm.population(model, 0.5 * W_V, W_KQ)
    rng = np.random.default_rng(11)
    h = 1e-5
    for which in ("V", "K"):
        direction = rng.standard_normal(W_V.shape if which == "V" else W_KQ.shape)

        def loss(s):
            if which == "V":
                return fm.population(model, 0.5 * W_V + s * direction, W_KQ, need_gradient=False).loss
            return fm.population(model, 0.5 * W_V, W_KQ + s * direction, need_gradient=False).loss
        fd = (loss(h) - loss(-h)) / (2 * h)
        exact = float(np.sum((res.grad_WV if which == "V" else res.grad_WKQ) * direction))
        assert abs(fd - exact) <= 1e-7 * max(1.0, abs(exact)), (which, fd, exact)


@pytest.mark.parametrize("name", ("tanh", "gelu"))
def test_smooth_population_matches_sampled_batches(name):
    """The sampled-batch loss and gradient of a smooth model (sigma, sigma' from sympy) average
    to the population ones: every entry within 5 standard errors (100 x 2000 samples)."""
    assert_population_matches_batches(_smooth_model(name))


def test_smooth_population_gd_equals_the_independent_route_and_the_collapsed_map():
    """Population GD of full_matrix with sigma = tanh equals full_matrix_smooth.population_gd
    (its own chain rule) to 1e-13 and, from zero, the smooth collapsed map (model_a.smooth)
    to 1e-10 over 40 steps, the loss included."""
    from rdyn.derivations.activations import Activation
    from rdyn.reduced_dynamics.model_a.smooth import SmoothConfig, run as run_smooth
    from rdyn.verification.references import full_matrix_smooth as fms

    model = _smooth_model("tanh", D=8)
    act = Activation("tanh")
    collapsed = run_smooth(SmoothConfig(D=8, K=3, activation=act, vstar_norm2=2.0, M=3), 40,
                           record=range(41))
    full = fm.gradient_descent(model, collapsed.eta, 40)
    states, _, losses = fms.population_gd(model.vstar, model.groups, act, collapsed.eta, 40,
                                          "D", model.P)
    for t, pr in zip(full.steps, full.projections):
        ref = collapsed.record[t]
        for got, other, want in zip((pr.C1, pr.C2, pr.C3), states[t], (ref.C1, ref.C2, ref.C3)):
            assert got == pytest.approx(other, rel=1e-13, abs=1e-15)
            assert got == pytest.approx(float(want), rel=1e-10, abs=1e-14)
        assert full.loss[t] == pytest.approx(losses[t], rel=1e-13)
        assert full.loss[t] == pytest.approx(float(ref.loss), rel=1e-10)
    assert collapsed.record[40].C2 > 0


def test_unknown_or_misplaced_activation_is_refused():
    with pytest.raises(ValueError, match="unknown smooth activation"):
        _smooth_model("swish")
    with pytest.raises(ValueError, match="formula goes with"):
        _smooth_model("relu", formula="x")
    assert _smooth_model("expr", formula="x + tanh(x)").smooth.label == "expr:x + tanh(x)"
