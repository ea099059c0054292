"""Certified GD training of the LN layer or the looped model on a spectrum with two or more distinct
eigenvalues (:func:`certified_training`): ``F = L'/d`` by a rigorous integral over the eigenspace masses
(:func:`level_F`), the recursion on arb balls.

Two routes enclose the expectation over the masses ``w ~ Dirichlet(k_1/2, ..., k_r/2)``; :func:`level_F` takes
the one with fewer nested integrals (stick-breaking at a tie, where it is measured faster):

* **stick-breaking angles** (:func:`stick_breaking_F`): ``r - 1`` nested integrals over ``[0, pi/2]``;
* **Laplace** (:func:`laplace_F`): the masses as ``G/sum G`` with independent ``G_i ~ Gamma(k_i/2)`` (the integrand
  is homogeneous of degree 0), each negative power of a positive linear form in G written as a Gamma integral,
  and the Gamma expectations in closed form: one integral for the looped model and two for the LN layer,
  whatever r (the identities: :func:`rdyn.derivations.model_b.laplace_route_identities`).
"""
from __future__ import annotations

import signal
import threading
import time

import flint
from flint import acb, acb_series, arb

from rdyn.reduced_dynamics.model_b.rule import distinct_levels
from rdyn.reduced_dynamics.runs.driver import StepLines, drive


TRAIN_PREC_BITS = 128
#: an inner integral whose outer angles are balls wider than this (radius) is a bound for the outer
#: integrator's error estimate; it stops after WIDE_EVAL_LIMIT integrand calls (measured: a three-level F
#: takes 0.9 s at 1000 calls, 33 s without a limit, with the same enclosure)
WIDE_RADIUS = 1e-30
WIDE_EVAL_LIMIT = 1000


def levels_of(spectrum) -> tuple[list, list]:
    """The distinct eigenvalues ``l_1 > ... > l_r`` of a spectrum and their multiplicities ``k_1, ..., k_r``
    (:func:`rdyn.reduced_dynamics.model_b.rule.distinct_levels`, as two lists)."""
    pairs = distinct_levels(tuple(spectrum))
    return [level for level, _ in pairs], [count for _, count in pairs]


def nested_integrals(model: str, r: int) -> dict:
    """How many nested integrals each route needs for ``r`` distinct eigenvalues."""
    return {"stick_breaking": r - 1, "laplace": 1 if model == "looped" else 2}


def route_of(model: str, r: int) -> str:
    """The route :func:`level_F` takes: the one with fewer nested integrals, stick-breaking at a tie
    (``"stick_breaking"`` for the LN layer with r <= 3 and the looped model with r = 2, else ``"laplace"``)."""
    depth = nested_integrals(model, r)
    return "laplace" if depth["laplace"] < depth["stick_breaking"] else "stick_breaking"


def level_F(model: str, spectrum, d: int, L: int | None = None):
    """F(x) = L'(x)/d of the LN layer (x = gamma) or of the looped model (x = rho) for a spectrum with
    r >= 2 distinct eigenvalues, by the route of :func:`route_of` (:func:`stick_breaking_F` or
    :func:`laplace_F`). Returns the function x (a ball) -> F (a ball)."""
    levels, _ = levels_of(spectrum)
    if len(levels) < 2:
        raise ValueError("the spectrum needs at least two distinct eigenvalues")
    route = laplace_F if route_of(model, len(levels)) == "laplace" else stick_breaking_F
    return route(model, spectrum, d, L)


def _integral(f, spread: float, rel_tol):
    """``int_0^{pi/2} f``: every enclosure is rigorous whatever the tolerance and the limits, which only say when
    to stop; an inner integral over a wide ball of an outer angle (the outer integrator's error bounds on complex
    ellipses) cannot be tighter than that ball, so it stops there, after at most WIDE_EVAL_LIMIT calls."""
    def guarded(z, analytic):   # series arithmetic refuses a divisor whose constant term holds 0: no enclosure
        try:
            return f(z, analytic)
        except (ValueError, ZeroDivisionError):
            return acb("nan")
    if spread > WIDE_RADIUS:
        return acb.integral(guarded, 0, acb.pi() / 2, rel_tol=arb(4 * spread), eval_limit=WIDE_EVAL_LIMIT)
    return acb.integral(guarded, 0, acb.pi() / 2, rel_tol=rel_tol)


#: F over a ball is F(mid) + F'(ball) (ball - mid) (:func:`_mean_value_form`); F' only multiplies the ball's
#: radius, so a few digits of it are enough
DERIVATIVE_REL_TOL_BITS = 20


def _mean_value_form(expectation):
    """``F(x)`` from ``expectation(x, derivative)`` (the integral at a point, or the integral of the integrand's
    x-derivative over a ball): ``F(X) in F(m) + F'(X) (X - m)`` (mean value theorem, ``m`` the midpoint). The
    integrand's value over a ball carries x's dependency at each of its occurrences (a ball up to 25 times wider
    than ``|F'| rad X`` at four levels), which grows the iteration's balls geometrically; this form does not."""
    def F(x):
        if x.rad() == 0:
            return expectation(x, False)
        m = arb(x.mid())
        return expectation(m, False) + expectation(x, True) * (x - m)
    return F


def _variable(x, derivative: bool):
    """``x`` itself, or ``x + t`` as a series in ``t`` (its coefficient of ``t`` is then each quantity's
    x-derivative)."""
    return acb_series([acb(x), acb(1)], prec=2) if derivative else x


def _part(value, derivative: bool):
    """The integrand's value (an acb), or its x-derivative (the series' coefficient of ``t``)."""
    if not derivative:
        return value
    coefficients = value.coeffs() if isinstance(value, acb_series) else [value]
    if len(coefficients) > 1:
        return coefficients[1]
    # a coefficient list cut short: the derivative is an exact 0, unless the value itself has no enclosure
    return acb(0) if coefficients and coefficients[0].is_finite() else acb("nan")


def _sqrt(P, analytic: bool):
    """``sqrt(P)``, checking the branch cut when asked (a series: at its constant term; non-analytic -> nan)."""
    if not isinstance(P, acb_series):
        return P.sqrt(analytic=analytic)
    if analytic and not P.coeffs()[0].sqrt(analytic=True).is_finite():
        return acb_series([acb("nan"), acb("nan")], prec=2)
    return P.sqrt()


def _inverse_half_power(P, k: int, analytic: bool):
    """``P^(-k/2)`` for an integer ``k >= 1`` (the square root checks its branch cut when asked)."""
    out = P ** -(k // 2)
    return out / _sqrt(P, analytic) if k % 2 else out


def laplace_F(model: str, spectrum, d: int, L: int | None = None):
    """F(x) of :func:`level_F` by the Laplace route, for any number r >= 2 of distinct eigenvalues.

    With ``w = G/S``, ``S = sum G_i``, ``G_i ~ Gamma(a_i)`` independent, ``a_i = k_i/2``
    (``E[e^{-u G}] = (1 + u)^{-a}``, ``E[G e^{-u G}] = a (1 + u)^{-a-1}``):

    * LN layer: ``f = -2 (m2 - m1^2)/(sqrt(m2) r^3) = -2 (B S - C^2) B^{-1/2} A^{-3/2}`` with ``B = sum l_i^2 G_i``,
      ``C = sum l_i G_i``, ``A = sum (1 + x l_i)^2 G_i`` and ``B S - C^2 = sum_{i<j} (l_i - l_j)^2 G_i G_j``. With
      ``B^{-1/2} A^{-3/2} = (2/pi) int int s^{-1/2} t^{1/2} e^{-sB - tA} ds dt`` and ``s = (tan chi cos theta)^2``,
      ``t = (tan chi sin theta)^2``::

          E f = -(16/pi) int_0^{pi/2} sin^2 theta int_0^{pi/2} sin^3 chi cos^{d-1} chi prod_m P_m^{-a_m}
                sum_{i<j} (l_i - l_j)^2 a_i a_j/(P_i P_j) d chi d theta,
          P_m = cos^2 chi + (l_m^2 cos^2 theta + (1 + x l_m)^2 sin^2 theta) sin^2 chi;

    * looped model: ``f = w_1 dP/(w_1 + P)^2 = G_1 sum_{i>=2} e_i G_i/(G_1 + sum_{i>=2} c_i G_i)^2`` with
      ``c_i = z_i^{2L}``, ``e_i = 2L z_i^{2L-1} (l_i - l_1)/(1 + x l_1)^2``, ``z_i = (1 + x l_i)/(1 + x l_1)``; with
      ``Q^{-2} = int_0^oo t e^{-tQ} dt`` and ``t = tan^2 chi``::

          E f = 2 a_1 int_0^{pi/2} sin^3 chi cos^{d-1} chi prod_{j>=2} R_j^{-a_j} sum_{i>=2} a_i e_i/R_i d chi,
          R_j = cos^2 chi + c_j sin^2 chi.

    Every integrand is analytic on the closed square (``P_m``, ``R_j > 0`` for ``l_m > 0``, ``x >= 0``), so
    ``acb.integral`` encloses it with a rigorous error bound; F = E f/d."""
    levels, counts = levels_of(spectrum)
    r = len(levels)
    a = [arb(k) / 2 for k in counts]
    rel_tol = arb(2) ** -(TRAIN_PREC_BITS - 24)

    def ln_expectation(x, derivative):
        tol = arb(2) ** -DERIVATIVE_REL_TOL_BITS if derivative else rel_tol
        x = _variable(x, derivative)
        pairs = [(i, j, arb((levels[i] - levels[j]) ** 2) * a[i] * a[j]) for i in range(r) for j in range(i + 1, r)]
        top = [arb(level) ** 2 for level in levels]
        side = [(1 + x * level) ** 2 for level in levels]

        def over_theta(theta, outer_analytic):
            sin_t, cos_t = theta.sin(), theta.cos()
            mu = [top[m] * (cos_t * cos_t) + side[m] * (sin_t * sin_t) for m in range(r)]

            def over_chi(chi, analytic):
                analytic = analytic or outer_analytic
                sin_c, cos_c = chi.sin(), chi.cos()
                s2, c2 = sin_c * sin_c, cos_c * cos_c
                P = [c2 + mu[m] * s2 for m in range(r)]
                density = s2 * sin_c * cos_c ** (d - 1)
                for m in range(r):
                    density = density * _inverse_half_power(P[m], counts[m], analytic)
                gap = acb(0)
                for i, j, c in pairs:
                    gap = gap + c / (P[i] * P[j])
                return _part(density * gap, derivative)
            return sin_t * sin_t * _integral(over_chi, _radius(theta), tol)

        return -16 * _integral(over_theta, 0.0, tol).real / arb.pi() / d

    def looped_expectation(x, derivative):
        tol = arb(2) ** -DERIVATIVE_REL_TOL_BITS if derivative else rel_tol
        x = _variable(x, derivative)
        den = 1 + x * levels[0]
        c, e = [], []
        for level in levels[1:]:
            z = (1 + x * level) / den
            c.append(z ** (2 * L))
            e.append((2 * L) * z ** (2 * L - 1) * (level - levels[0]) / (den * den))

        def over_chi(chi, analytic):
            sin_c, cos_c = chi.sin(), chi.cos()
            s2, c2 = sin_c * sin_c, cos_c * cos_c
            density, moment = s2 * sin_c * cos_c ** (d - 1), acb(0)
            for m in range(1, r):
                R = c2 + c[m - 1] * s2
                density = density * _inverse_half_power(R, counts[m], analytic)
                moment = moment + a[m] * e[m - 1] / R
            return _part(density * moment, derivative)
        return 2 * a[0] * _integral(over_chi, 0.0, tol).real / d

    return _mean_value_form(ln_expectation if model == "ln" else looped_expectation)


def stick_breaking_F(model: str, spectrum, d: int, L: int | None = None):
    """F(x) of :func:`level_F` by stick-breaking angles: F(x) = L'(x)/d of the LN layer (x = gamma:
    ``E[a^T S g_h]/d`` with ``a^T S g_h = -2 (m2 - m1^2)/(sqrt(m2) r^3)``, ``m_j = sum_i l_i^j w_i``, ``r^2 = 1 + 2 x m1 + x^2 m2``;
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
    levels, counts = levels_of(spectrum)
    r = len(levels)
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

    def expectation(x, derivative):
        tol = arb(2) ** -DERIVATIVE_REL_TOL_BITS if derivative else rel_tol
        x = _variable(x, derivative)

        def value(w, analytic):
            if model == "ln":
                m1 = l1 * w[0]
                m2 = l1 * l1 * w[0]
                for li, wi in zip(levels[1:], w[1:]):
                    m1 = m1 + li * wi
                    m2 = m2 + li * li * wi
                r2 = 1 + 2 * x * m1 + x * x * m2
                return _part(-2 * (m2 - m1 * m1) / (_sqrt(m2, analytic) * r2 * _sqrt(r2, analytic)), derivative)
            den = 1 + x * l1
            P = dP = None
            for li, wi in zip(levels[1:], w[1:]):
                z = (1 + x * li) / den
                term, dterm = wi * z ** (2 * L), wi * (2 * L) * z ** (2 * L - 1) * (li - l1) / (den * den)
                P, dP = (term, dterm) if P is None else (P + term, dP + dterm)
            return _part(w[0] * dP / ((w[0] + P) * (w[0] + P)), derivative)

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

            spread = max((_radius(m) for m in (masses if stick is None else [*masses, stick])), default=0.0)
            return _integral(integrand, spread, tol)

        return 2 ** (r - 1) * integral(0, [], None, False).real / beta / d

    return _mean_value_form(expectation)


def _radius(z) -> float:
    """The radius of a complex ball's real and imaginary parts together (a float)."""
    return float(z.real.rad()) + float(z.imag.rad())


#: the iteration stops (:class:`BallTooWide`) when gamma's ball is wider than this, relative to gamma: F over a
#: ball is enclosed with the ball's dependency (each occurrence of gamma in the integrand widens it), so the
#: radius grows geometrically (about 1.07 a step for the looped model, L = 10, three levels), and F over a wide
#: ball costs many more integrand calls
MAX_RELATIVE_RADIUS = 1e-3


class BallTooWide(ArithmeticError):
    """The certified gamma_t grew wider than :data:`MAX_RELATIVE_RADIUS` at step ``step`` (``gamma`` its ball)."""

    def __init__(self, step: int, gamma):
        super().__init__(f"the ball of gamma_t is wider than {MAX_RELATIVE_RADIUS:g} of gamma_t at step {step} "
                         f"(radius {float(gamma.rad()):.3g})")
        self.step, self.gamma = step, gamma


class _Training:
    """The certified GD recursion as an engine of :func:`rdyn.reduced_dynamics.runs.driver.drive`: ``state`` is
    ``(steps done, alpha, beta, gamma, increasing)``, replaced as one tuple after each whole step, so an interrupt
    never splits a step. ``F`` is an ``acb.integral`` whose integrand is a Python callback: a KeyboardInterrupt
    raised inside it (Ctrl-C, or SIGTERM through rdyn/signals.py) crashed the process (exit 139), so SIGINT and
    SIGTERM are held during each step (its integral and its update) and taken between steps."""

    HELD = {signal.SIGINT, signal.SIGTERM}

    def __init__(self, F, eta, steps: int, on_step):
        self.F, self.eta, self.steps, self.on_step = F, eta, steps, on_step
        self.main = threading.current_thread() is threading.main_thread()

    def advance(self, state, n):
        for _ in range(n):
            if self.done(state):
                break
            mask = signal.pthread_sigmask(signal.SIG_BLOCK, self.HELD) if self.main else None
            try:
                t, alpha, beta, gamma, increasing = state
                Fg = self.F(gamma)
                alpha, beta = alpha - self.eta * beta * Fg, beta - self.eta * alpha * Fg
                new = alpha * beta
                state = (t + 1, alpha, beta, new, increasing and bool(new > gamma))
                if self.on_step is not None:
                    self.on_step(state)
            finally:
                if mask is not None:
                    signal.pthread_sigmask(signal.SIG_SETMASK, mask)
            if not state[3].rad() <= MAX_RELATIVE_RADIUS * abs(state[3].mid()):
                raise BallTooWide(state[0], state[3])
        return state

    def done(self, state):
        return state[0] >= self.steps

    def position(self, state):
        return state[0]

    def save(self, path, state):   # no checkpoint (drive is called without one)
        raise NotImplementedError


def certified_training(model: str, spectrum, d: int, eta: float, steps: int, L: int | None = None,
                       alpha0: float = 0.0, beta0: float = 1.0, progress=None, on_step=None):
    """The GD recursion alpha' = alpha - eta beta F(gamma), beta' = beta - eta alpha F(gamma)
    (looped: w, v, rho) for ``steps`` steps on arb balls with F from :func:`level_F`; eta is
    the exact decimal of its float's repr. Returns (gamma_T ball, increasing: gamma_{t+1} > gamma_t
    certified at every step, seconds); raises :class:`BallTooWide` when the ball outgrows
    :data:`MAX_RELATIVE_RADIUS`. ``progress(t)`` after each step; ``on_step((t, alpha, beta, gamma_t,
    increasing))`` with the state after each whole step, signals held (what an interrupted run keeps: a
    KeyboardInterrupt propagates, :func:`rdyn.verification.proofs.model_b.prove.interrupted_report`)."""
    t0 = time.perf_counter()
    with flint.ctx.workprec(TRAIN_PREC_BITS):
        F = level_F(model, spectrum, d, L)
        alpha, beta = arb(repr(float(alpha0))), arb(repr(float(beta0)))
        engine = _Training(F, arb(repr(float(eta))), steps, on_step)
        bar = None if progress is None else StepLines(progress, 1)
        t, alpha, beta, gamma, increasing = drive(engine, (0, alpha, beta, alpha * beta, True), chunk=1, bar=bar)
        return gamma, increasing, time.perf_counter() - t0
