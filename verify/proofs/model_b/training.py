"""Certified GD training of the LN layer or the looped model on a spectrum with two or more distinct
eigenvalues (:func:`certified_training`): ``F = L'/d`` by a rigorous integral over the eigenspace masses
(:func:`level_F`: 1-D for two levels, nested for more), the recursion on arb balls."""
from __future__ import annotations

import signal
import threading
import time

import flint
from flint import acb, arb


TRAIN_PREC_BITS = 128
#: an inner integral whose outer angles are balls wider than this (radius) is a bound for the outer
#: integrator's error estimate; it stops after WIDE_EVAL_LIMIT integrand calls (measured: a three-level F
#: takes 0.9 s at 1000 calls, 33 s without a limit, with the same enclosure)
WIDE_RADIUS = 1e-30
WIDE_EVAL_LIMIT = 1000


def level_F(model: str, spectrum, d: int, L: int | None = None):
    """F(x) = L'(x)/d of the LN layer (x = gamma: ``E[a^T S g_h]/d`` with
    ``a^T S g_h = -2 (m2 - m1^2)/(sqrt(m2) r^3)``, ``m_j = sum_i l_i^j w_i``, ``r^2 = 1 + 2 x m1 + x^2 m2``;
    C.2.1, rdyn.derivations.model_b.ln_per_sample) or of the looped model (x = rho: the derivative of
    ``Dist^2 = P/(w_1 + P)``, ``P = sum_{i >= 2} w_i z_i^{2L}``, ``z_i = (1 + x l_i)/(1 + x l_1)``; Appendix A,
    looped_per_sample) for a spectrum with r >= 2 distinct eigenvalues ``l_1 > ... > l_r`` of multiplicities
    ``k_1, ..., k_r``. The masses ``w_i`` of ``a`` on the eigenspaces are Dirichlet(k_1/2, ..., k_r/2); in
    stick-breaking angles (``w_1 = sin^2 theta_1``, ``w_j = cos^2 theta_1 ... cos^2 theta_(j-1) sin^2 theta_j``,
    ``w_r = 1 - w_1 - ... - w_(r-1)``) the expectation is ``(2^(r-1)/B(k/2)) int_{[0, pi/2]^(r-1)} f
    prod_j sin^(k_j - 1) theta_j cos^(k_(j+1) + ... + k_r - 1) theta_j d theta`` of an analytic integrand,
    enclosed by nested ``acb.integral`` calls (rigorous error bounds; an inner integral is evaluated on the
    outer variable's complex balls, and square roots check their branch cut whenever any level asks for an
    analytic value). Returns the function x (a ball) -> F (a ball)."""
    levels = sorted(set(spectrum), reverse=True)
    counts = [sum(1 for m in spectrum if m == level) for level in levels]
    r = len(levels)
    if r < 2:
        raise ValueError("the spectrum needs at least two distinct eigenvalues")
    alphas = [arb(k) / 2 for k in counts]
    gammas = alphas[0].gamma()
    for alpha in alphas[1:]:
        gammas = gammas * alpha.gamma()
    total = alphas[0]
    for alpha in alphas[1:]:
        total = total + alpha
    beta = gammas / total.gamma()
    tails = [sum(counts[j + 1:]) for j in range(r)]      # k_(j+1) + ... + k_r
    rel_tol = arb(2) ** -(TRAIN_PREC_BITS - 24)
    l1 = levels[0]

    def F(x):
        def value(w, analytic):
            if model == "ln":
                m1 = l1 * w[0]
                m2 = l1 * l1 * w[0]
                for li, wi in zip(levels[1:], w[1:]):
                    m1 = m1 + li * wi
                    m2 = m2 + li * li * wi
                r2 = 1 + 2 * x * m1 + x * x * m2
                return -2 * (m2 - m1 * m1) / (m2.sqrt(analytic=analytic) * r2 * r2.sqrt(analytic=analytic))
            den = 1 + x * l1
            P = dP = None
            for li, wi in zip(levels[1:], w[1:]):
                z = (1 + x * li) / den
                term, dterm = wi * z ** (2 * L), wi * (2 * L) * z ** (2 * L - 1) * (li - l1) / (den * den)
                P, dP = (term, dterm) if P is None else (P + term, dP + dterm)
            return w[0] * dP / ((w[0] + P) * (w[0] + P))

        def integral(j: int, masses: list, stick, outer_analytic: bool):
            """The integral over theta_j .. theta_(r-1), the masses of levels 1..j given."""
            def integrand(th, analytic):
                analytic = analytic or outer_analytic
                sn, cs = th.sin(), th.cos()
                w = sn * sn if stick is None else stick * (sn * sn)
                if j == r - 2:
                    last = 1 - w
                    for m in masses:
                        last = last - m
                    inner = value([*masses, w, last], analytic)
                else:
                    inner = integral(j + 1, [*masses, w], cs * cs if stick is None else stick * (cs * cs), analytic)
                return inner * sn ** (counts[j] - 1) * cs ** (tails[j] - 1)

            # every enclosure is rigorous whatever the tolerance and the limits, which only say when to stop: an
            # inner integral over a wide ball of an outer angle (the outer integrator's error bounds on complex
            # ellipses) cannot be tighter than that ball, so it stops there, after at most WIDE_EVAL_LIMIT calls
            spread = max((_radius(m) for m in (masses if stick is None else [*masses, stick])), default=0.0)
            if spread > WIDE_RADIUS:
                return acb.integral(integrand, 0, acb.pi() / 2, rel_tol=arb(4 * spread), eval_limit=WIDE_EVAL_LIMIT)
            return acb.integral(integrand, 0, acb.pi() / 2, rel_tol=rel_tol)

        return 2 ** (r - 1) * integral(0, [], None, False).real / beta / d

    return F


def _radius(z) -> float:
    """The radius of a complex ball's real and imaginary parts together (a float)."""
    return float(z.real.rad()) + float(z.imag.rad())


def certified_training(model: str, spectrum, d: int, eta: float, steps: int, L: int | None = None,
                       alpha0: float = 0.0, beta0: float = 1.0, progress=None):
    """The GD recursion alpha' = alpha - eta beta F(gamma), beta' = beta - eta alpha F(gamma)
    (looped: w, v, rho) for ``steps`` steps on arb balls with F from :func:`level_F`; eta is
    the exact decimal of its float's repr. Returns (gamma_T ball, increasing: gamma_{t+1} > gamma_t
    certified at every step, seconds)."""
    t0 = time.perf_counter()
    old = flint.ctx.prec
    flint.ctx.prec = TRAIN_PREC_BITS
    try:
        F = level_F(model, spectrum, d, L)
        e = arb(repr(float(eta)))
        alpha, beta = arb(repr(float(alpha0))), arb(repr(float(beta0)))
        gam = alpha * beta
        increasing = True

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
