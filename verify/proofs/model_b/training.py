"""Certified GD training of the LN layer or the looped model on a two-level spectrum
(:func:`certified_training`): ``F = L'/d`` by a rigorous 1-D integral (:func:`two_level_F`), the
recursion on arb balls."""
from __future__ import annotations

import time

from rdyn.verification.proofs.model_b.contraction import top_levels

TRAIN_PREC_BITS = 128


def two_level_F(model: str, spectrum, d: int, L: int | None = None):
    """F(x) = L'(x)/d of the LN layer (x = gamma: ``E[a^T S g_h]/d`` with
    ``a^T S g_h = -2 (m2 - m1^2)/(sqrt(m2) r^3)``, ``r^2 = 1 + 2 x m1 + x^2 m2``; C.2.1,
    rdyn.derivations.model_b.ln_per_sample) or of the looped model (x = rho: the derivative of
    ``Dist^2 = P/(w + P)``, ``P = (1 - w) z^{2L}``, ``z = (1 + x l_2)/(1 + x l_1)``; Appendix A,
    looped_per_sample) for a spectrum with two distinct eigenvalues ``l_1 > l_2`` of multiplicities
    ``k_1, k_2``: the mass ``w`` of ``a`` on the top eigenspace is Beta(k_1/2, k_2/2), and with
    ``w = sin^2 theta`` the expectation is ``(2/B) int_0^{pi/2} f sin^{k_1-1} cos^{k_2-1} d theta``
    of an analytic integrand, enclosed by ``acb.integral`` (rigorous error bound). Returns the
    function x (a ball) -> F (a ball)."""
    from flint import acb, arb

    l1, _r, l2 = top_levels(spectrum)
    k1 = sum(1 for m in spectrum if m == l1)
    k2 = len(spectrum) - k1
    a, b = arb(k1) / 2, arb(k2) / 2
    beta_ab = a.gamma() * b.gamma() / (a + b).gamma()

    def F(x):
        def integrand(th, analytic):
            sn, cs = th.sin(), th.cos()
            w = sn * sn
            if model == "ln":
                m1 = l1 * w + l2 * (1 - w)
                m2 = l1 * l1 * w + l2 * l2 * (1 - w)
                r2 = 1 + 2 * x * m1 + x * x * m2
                val = -2 * (m2 - m1 * m1) / (m2.sqrt(analytic=analytic) * r2 * r2.sqrt(analytic=analytic))
            else:
                den = 1 + x * l1
                z = (1 + x * l2) / den
                P = (1 - w) * z ** (2 * L)
                dP = (1 - w) * (2 * L) * z ** (2 * L - 1) * (l2 - l1) / (den * den)
                val = w * dP / ((w + P) * (w + P))
            return val * sn ** (k1 - 1) * cs ** (k2 - 1)

        I = acb.integral(integrand, 0, acb.pi() / 2, rel_tol=arb(2) ** -(TRAIN_PREC_BITS - 24))
        return 2 * I.real / beta_ab / d

    return F


def certified_training(model: str, spectrum, d: int, eta: float, steps: int, L: int | None = None,
                       alpha0: float = 0.0, beta0: float = 1.0, progress=None):
    """The GD recursion alpha' = alpha - eta beta F(gamma), beta' = beta - eta alpha F(gamma)
    (looped: w, v, rho) for ``steps`` steps on arb balls with F from :func:`two_level_F`; eta is
    the exact decimal of its float's repr. Returns (gamma_T ball, increasing: gamma_{t+1} > gamma_t
    certified at every step, seconds)."""
    import flint
    from flint import arb

    t0 = time.perf_counter()
    old = flint.ctx.prec
    flint.ctx.prec = TRAIN_PREC_BITS
    try:
        F = two_level_F(model, spectrum, d, L)
        e = arb(repr(float(eta)))
        alpha, beta = arb(repr(float(alpha0))), arb(repr(float(beta0)))
        gam = alpha * beta
        increasing = True
        import signal
        import threading

        # F is an acb.integral whose integrand is a Python callback: a KeyboardInterrupt raised inside it
        # (Ctrl-C, or SIGTERM through rdyn/signals.py) crashed the process (exit 139). The signals are
        # held during each step's integral and taken between steps.
        held = {signal.SIGINT, signal.SIGTERM}
        main = threading.current_thread() is threading.main_thread()
        for t in range(steps):
            mask = signal.pthread_sigmask(signal.SIG_BLOCK, held) if main else None
            try:
                Fg = F(gam)
            finally:
                if mask is not None:
                    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            alpha, beta = alpha - e * beta * Fg, beta - e * alpha * Fg
            new = alpha * beta
            increasing = increasing and bool(new > gam)
            gam = new
            if progress is not None:
                progress(t + 1)
        return gam, increasing, time.perf_counter() - t0
    finally:
        flint.ctx.prec = old
