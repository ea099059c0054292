"""The inputs of a Model A run as python-flint ``arb`` balls that contain their exact values:
D, K exact; eta exact (its decimal form, or eta_limit/2 exactly); ||V*||_F^2, kappa, sigma'(0),
the t1 fraction and the T* level as their decimal forms (1/(2K) exactly by default). Shared by
the certified backends (ReLU family and smooth activations) and the double-double backend (its
constants are rounded from these).
"""
from __future__ import annotations


def exact_ball(value):
    """An arb ball that contains the sympy number ``value`` (rationals exactly)."""
    import sympy as sp
    from flint import arb

    if isinstance(value, float):
        value = sp.nsimplify(value)
    elif isinstance(value, int):
        value = sp.Integer(value)
    elif not isinstance(value, sp.Expr):
        raise TypeError(f"exact_ball: a sympy number, int or float, not {type(value).__name__}")
    if value.is_Rational:
        return arb(int(value.p)) / int(value.q)
    import flint

    digits = int(flint.ctx.prec / 3.3) + 20
    text = str(sp.N(value, digits))
    # the decimal is within 10^(2-digits) relative of value; the radius in arb (a float
    # 10.0**(2-digits) is 0.0 beyond ~300 digits, and the ball would miss value)
    mid = arb(text)
    return mid + arb(0, 1) * (abs(mid) * arb(10) ** (2 - digits))


def decimal_ball(x):
    """Ball containing the decimal number written by ``repr(x)`` (or the string ``x``)."""
    from flint import arb

    return arb(x if isinstance(x, str) else repr(float(x)))


def threshold_balls(K: int, thresholds, tstar_level=None):
    """(t1 fraction, T* level) as balls: the fraction's decimal form; the level 1/(2K) exactly
    by default, else ``tstar_level`` (string, arb ball or number) or the thresholds' decimal."""
    from flint import arb

    if tstar_level is not None:
        level = tstar_level if isinstance(tstar_level, arb) else decimal_ball(tstar_level)
    elif thresholds.tstar_attention is None:
        level = arb(1) / (2 * K)
    else:
        level = decimal_ball(thresholds.tstar_attention)
    return decimal_ball(thresholds.t1_fraction), level


def exact_inputs(config, thresholds, tstar_level=None):
    """The run's inputs as arb balls at the current precision, shared by both certified
    backends: the kernel parameters (D, K, eta, ||V*||_F^2, kappa, sigma'(0); eta exact, the
    others their decimal forms), the t1 fraction and the T* level (``tstar_level`` overrides:
    string, arb ball or number; default 1/(2K) exactly)."""
    return (kernel_params(config), *threshold_balls(config.K, thresholds, tstar_level))


def kernel_params(config) -> list:
    """The parameters of the generated kernels' ``prepare`` (D, K, eta, ||V*||_F^2, kappa,
    sigma'(0)) as balls at the current precision: eta exact, the others their decimal forms."""
    from flint import arb

    return [arb(config.D), arb(config.K), exact_ball(config.exact_step_size()),
            decimal_ball(config.vstar_norm2), decimal_ball(config.kappa),
            decimal_ball(config.sigma_prime_zero)]


def smooth_run_balls(config, eta, thresholds, tstar_level=None) -> dict:
    """The balls a certified smooth-activation run needs (call inside the run's
    ``flint.ctx.workprec``): ``D, K, N = D - K, M`` exact; ``V`` (||V*||_F^2) and ``step_size``
    (eta) from their decimal forms; ``fraction, level`` (:func:`threshold_balls`); the row norm
    ``r = sqrt(V/M)``, the logit ``scale`` (D or sqrt(D)) and ``ratio_root = sqrt(N/K)``.
    Shared by the closed-form (erf, GELU) and the strip-quadrature (tanh, softplus, sigmoid)
    certified passes."""
    from flint import arb

    D, K, N, M = arb(config.D), arb(config.K), arb(config.D - config.K), arb(config.M)
    V = decimal_ball(config.vstar_norm2)
    fraction, level = threshold_balls(config.K, thresholds, tstar_level)
    return dict(D=D, K=K, N=N, M=M, V=V, step_size=decimal_ball(eta), fraction=fraction,
                level=level, r=(V / M).sqrt(), scale=D if config.logit_scale == "D" else D.sqrt(),
                ratio_root=(N / K).sqrt())
