"""The one certified arb iteration of Model A's collapsed map (Lemma D.2), used by both callers
that need the exact real-number trajectory enclosed: ``rdyn teacher --certify --dps``
(:mod:`rdyn.reduced_dynamics.certified.arb_pass`: the certificates of t1 and T*) and ``rdyn prove``
(:mod:`rdyn.verification.proofs.iterate`: the statements decided at every step). Each caller keeps
only what is its own; the box of the state and how it advances are here.

The state is a box X_t of python-flint ``arb`` balls, the tuple ``(C1, C2, C3, x)`` with
x = C2 + C3 (the layout of both forms, below), that provably contains the exact iterate from
C1 = C2 = C3 = 0 (parameters: the balls of
:func:`rdyn.reduced_dynamics.certified.exact_inputs.exact_inputs`, which contain their exact
values; precision: the ambient ``flint.ctx.prec``). One step, :meth:`ArbIteration.step`, advances
it in one of two enclosure forms (its ``form``):

``form="mean_value"`` (``--certify``'s; needed at large eta). Why not just run the generated
``step`` on balls: C1 enters its own update several times, so ball arithmetic overestimates (the
dependency effect) and the radius grows ~1.25x per step (docs/numerics.md). Within one branch of
the map (C1 > 0 or C1 < 0) f is smooth, so for x, m in X_t, f(x) = f(m) + J(xi)(x - m) with xi on
the segment [m, x], which lies in the convex box X_t. Hence

  f(X_t)  is contained in  f([m]) + J(X_t) . (X_t - m),

where m = mid(X_t) is a point ball, f([m]) is the generated ``step`` on point balls (only
rounding radius) and J(X_t) is a ball enclosure of the Jacobian over the whole box, printed
by :mod:`rdyn.derivations.codegen` from the sympy derivatives of the same derived expressions
(:func:`rdyn.reduced_dynamics.model_a.kernels.jacobian_source`). The map is written as
C1' = g(C1, e), C2' = C2 + d(C1, e), C3' = C3 + r d(C1, e) with e = exp(-(C2 + C3)/scale) and
r = K/(D - K) (the generated step), so with e_C = de/dC2 = de/dC3 = -e/scale:

  J = [[g_C1, g_e e_C, g_e e_C], [d_C1, 1 + d_e e_C, d_e e_C], [r d_C1, r d_e e_C, 1 + r d_e e_C]].

The product is evaluated in ball arithmetic; x' = C2' + C3'.

``form="direct"`` (``rdyn prove``'s): the interval evaluation of the map on the box, written
``C1' = C1 (1 + (alpha - 1)) + beta``, ``x' = x + Delta x`` with ``e = exp(-x/scale)`` (on the
C1 > 0 branch C1' is affine in C1, so C1 enters its update once and its ball contracts with the
map; x enters twice). No Jacobian per step (rdyn prove's step loop on ``--D 5 --K 1`` takes
1.7 s in it, 7.3 s in the mean-value form), but the enclosure is looser: at eta = 0.5, D = 8,
K = 2 it loses ten digits in 5000 steps at 139 bits and is nan at 30 bits, where the mean-value
form keeps 38 digits resp. certifies T*; on ``rdyn prove --D 5 --K 1`` (200 bits) its relative
radius at T0 is 8e-45, the mean-value form's 4e-56. Its
kernels, ``advance(C1, x, c) -> (C1', x', Delta x, e, alpha - 1, beta)`` and ``first_c1(c)`` (the
C1 = 0 branch from the exact initial state), are derived from the same catalogue expressions by
:mod:`rdyn.verification.proofs.symbolic` in its own parameters and printed by
:mod:`rdyn.verification.proofs.kernels` (an upper layer, never imported here: the caller hands
them in, :class:`DirectKernels`). The form advances (C1, x) only: its boxes hold ``None`` for C2,
C3 (two products a step saved), which :meth:`ArbIteration.components` reads off x by the split
C2 = x (D-K)/D, C3 = x K/D, exact along the trajectory from 0 (C3 = K/(D-K) C2 there).
``advance``'s by-products ``(Delta x, e, alpha - 1, beta)`` of the step come back with the
box (:meth:`ArbIteration.advance`; rdyn prove's statements read them). It has the C1 > 0 branch
(and the exact first step) only.

Shared by both forms: the layout (a box of one form is a valid input to the other: the
mean-value form splits x where C2, C3 are ``None``, the direct form reads x), the branch handling
(a box straddling C1 = 0, the branch not determined, raises :class:`BranchUndetermined`) and the
exact first step: step 0 -> 1 is exact input (C1 = 0 is a point), so the zero branch is
evaluated directly (mean-value form: the generated ``step`` on the point box, which picks any
branch itself; direct form: ``first_c1``, with x(1) = 0).
"""
from __future__ import annotations

from functools import lru_cache
from typing import Any, Callable, NamedTuple

from rdyn.derivations import codegen
from rdyn.derivations.generated import run_generated
from rdyn.reduced_dynamics.model_a.kernels import jacobian_source

Box = tuple   # (C1, C2, C3, x): balls; C2, C3 None in the direct form's boxes (module docstring)

MEAN_VALUE = "mean_value"
DIRECT = "direct"
FORMS = (MEAN_VALUE, DIRECT)


class BranchUndetermined(ArithmeticError):
    """The box straddles C1 = 0: the branch of the map (C1 > 0 or C1 < 0) is not determined."""


class DirectKernels(NamedTuple):
    """The direct form's kernels (module docstring) and their prepared constants ``c``."""

    advance: Callable     # (C1, x, c) -> (C1', x', Delta x, e, alpha - 1, beta), C1 > 0 branch
    first_c1: Callable    # (c) -> C1(1), the C1 = 0 branch from the exact initial state
    c: Any


@lru_cache(maxsize=None)
def jacobian_kernels(activation: str, scale: str):
    """(prepare, jacobian_positive, jacobian_negative) on arb balls."""
    backend = codegen.arb_backend()
    namespace = run_generated(jacobian_source(activation, scale),
                              f"model A jacobian [{activation}/{scale}/arb]", backend.namespace())
    return namespace["prepare"], namespace["jacobian_positive"], namespace["jacobian_negative"]


class ArbIteration:
    """Advances the box of one Model A configuration by one step of the map.

    Build it under the precision of the run (``flint.ctx.prec``): the constants are prepared
    then, for the enclosure ``forms`` it will step with (each form's kernels cost a few tenths of
    a second to load: only those asked for are). The mean-value form: ``params`` are the kernel
    parameters as balls (default: those of
    :func:`~rdyn.reduced_dynamics.certified.exact_inputs.exact_inputs`); ``kernels`` and ``c``
    are the generated arb kernels of the step and their prepared constants (the callers evaluate
    p, C1* on the box with them). The direct form: ``direct``, its :class:`DirectKernels`.
    """

    def __init__(self, config, params=None, *, forms=(MEAN_VALUE,), direct: DirectKernels | None = None):
        from flint import arb

        unknown = set(forms) - set(FORMS)
        if unknown:
            raise ValueError(f"unknown enclosure form(s) {sorted(unknown)}; known: {FORMS}")
        self.forms = tuple(forms)
        D, K = config.D, config.K
        self._q2, self._q3 = arb(D - K) / D, arb(K) / D   # C2 = x (D-K)/D, C3 = x K/D
        if MEAN_VALUE in forms:
            from rdyn.reduced_dynamics.model_a.kernels import kernels

            if params is None:
                from rdyn.reduced_dynamics.certified.exact_inputs import kernel_params

                params = kernel_params(config)
            self.kernels = kernels(config.activation, config.logit_scale, "arb")
            jprepare, self._jac_positive, self._jac_negative = jacobian_kernels(config.activation,
                                                                                config.logit_scale)
            self.c = self.kernels.prepare(*params)
            self._cj = jprepare(*params)
            self.ratio = arb(K) / (D - K)
        self.direct = None
        if DIRECT in forms:
            if direct is None:
                raise ValueError("the direct form needs its kernels (direct=DirectKernels(...))")
            self.direct = direct

    @staticmethod
    def start() -> Box:
        """The exact initial state C1 = C2 = C3 = 0."""
        from flint import arb

        zero = arb(0)
        return (zero, zero, zero, zero)

    def step(self, box: Box, form: str = MEAN_VALUE) -> Box:
        """The box of the next state in enclosure form ``form`` (module docstring); raises
        :class:`BranchUndetermined`."""
        return self.advance(box, form)[0]

    def components(self, box: Box) -> tuple:
        """(C1, C2, C3) of a box, C2 and C3 read off x where the direct form left them out."""
        C1, C2, C3, x = box
        if C2 is None:
            return C1, x * self._q2, x * self._q3
        return C1, C2, C3

    def advance(self, box: Box, form: str = MEAN_VALUE):
        """(the box of the next state, the by-products) in enclosure form ``form``: the direct
        form's ``(Delta x, e, alpha - 1, beta)`` of this step on the C1 > 0 branch, else None.
        The one place where a box advances; raises :class:`BranchUndetermined`. (The direct form's
        C1 > 0 step, rdyn prove's every step, is written out first: it costs a few microseconds.)"""
        C1 = box[0]
        if C1 > 0:
            branch = 1
            if form == DIRECT:
                direct = self.direct
                if direct is None:
                    raise ValueError("this iteration was not prepared for the direct form")
                C1n, xn, dx, e, a1, b0 = direct.advance(C1, box[3], direct.c)
                return (C1n, None, None, xn), (dx, e, a1, b0)
        elif C1 < 0:
            branch = -1
        elif C1 == 0:   # exactly 0 (a point): the exact first step
            branch = 0
        else:
            raise BranchUndetermined(C1)
        if form == MEAN_VALUE:
            return self._mean_value(box, branch), None
        if form == DIRECT:
            return self._direct_other(box, branch), None
        raise ValueError(f"unknown enclosure form {form!r}; known: {FORMS}")

    def _mean_value(self, box, branch):
        from flint import arb

        if MEAN_VALUE not in self.forms:
            raise ValueError("this iteration was not prepared for the mean-value form")
        C1, C2, C3, x = box
        if C2 is None:   # a box of the direct form
            C2, C3 = x * self._q2, x * self._q3
        if C1.rad() == 0 and C2.rad() == 0 and C3.rad() == 0:
            C1, C2, C3 = self.kernels.step(C1, C2, C3, self.c)   # exact input (t = 0): any branch, directly
            return (C1, C2, C3, C2 + C3)
        if branch > 0:
            a, b, g, h = self._jac_positive(C1, C2, C3, self._cj)
        elif branch < 0:
            a, b, g, h = self._jac_negative(C1, C2, C3, self._cj)
        else:   # C1 exactly 0 on a box that is not a point: no Jacobian of the zero branch
            raise BranchUndetermined(C1)
        m1, m2, m3 = arb(C1.mid()), arb(C2.mid()), arb(C3.mid())
        f1, f2, f3 = self.kernels.step(m1, m2, m3, self.c)
        d1, d2, d3 = C1 - m1, C2 - m2, C3 - m3
        de = d2 + d3
        C2n = f2 + g * d1 + d2 + h * de
        C3n = f3 + self.ratio * (g * d1 + h * de) + d3
        return (f1 + a * d1 + b * de, C2n, C3n, C2n + C3n)

    def _direct_other(self, box, branch):
        """The direct form off its C1 > 0 branch (written out in :meth:`advance`)."""
        if self.direct is None:
            raise ValueError("this iteration was not prepared for the direct form")
        C1, x = box[0], box[3]
        if branch == 0 and x == 0:   # the exact initial state: the C1 = 0 branch, x(1) = 0
            return (self.direct.first_c1(self.direct.c), None, None, x)
        if branch == 0:
            raise BranchUndetermined(C1)
        raise ValueError(f"the direct form has the C1 > 0 branch only (C1 = {C1})")
