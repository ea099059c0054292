"""Every Model B statement of one instance (:func:`prove_model_b`): the ``rdyn prove --paper B`` report."""
from __future__ import annotations

import time

import flint
from flint import arb

from rdyn.verification.proofs.iterate import digits
from rdyn.verification.proofs.model_b.b3 import prove_b3, prove_b3_theta
from rdyn.verification.proofs.model_b.contraction import contraction_factor, top_levels
from rdyn.verification.proofs.model_b.instance import BInstance, FORMS, PREC_BITS, noln_constants
from rdyn.verification.proofs.model_b.krawczyk import krawczyk_gamma_star
from rdyn.verification.proofs.model_b.training import BallTooWide, certified_training, nested_integrals, route_of

LEVEL_WORDS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine"}


def prove_model_b(inst: BInstance, *, max_boxes: int = 200_000, prec: int = PREC_BITS, progress=None,
                  on_step=None) -> dict:
    """Every Model B statement that applies to ``inst.model`` (noln: Theorem B.3 at both eta_max
    forms, Theorem 4.2's gamma* by Krawczyk, Theorem 4.6 (2)'s R* with spectrum data; ln and looped:
    the contraction factor over ``inst.gamma_range``). A dict in the ``rdyn prove --paper B --json``
    shape (rdyn/schemas/prove.schema.json, model_b). ``progress(t)``: after each certified GD step
    of ``inst.steps``; ``on_step(state)``: the state after each whole step (what :func:`interrupted_report`
    reports when SIGINT/SIGTERM stops the run: the KeyboardInterrupt propagates)."""
    t0 = time.perf_counter()
    with flint.ctx.workprec(prec):
        statements, constants = [], {}
        if inst.model == "noln":
            # here, not at the top: the branch and bound's interval arithmetic imports numba, which
            # --model ln / looped do not need

            cst = noln_constants(inst)

            constants = {"kappa1": str(cst.kappa1), "kappa2": str(cst.kappa2), "gamma_star": digits(cst.gamma_star),
                         "gamma_star_exact": None if cst.gamma_star_exact is None else str(cst.gamma_star_exact),
                         "kappa3": None if cst.kappa3 is None else digits(cst.kappa3)}
            if tuple(inst.eta_fraction) == (1.0, 1.0):
                statements += prove_b3(cst, inst.s0, max_boxes=max_boxes)
            else:
                statements += prove_b3_theta(cst, inst.s0, inst.eta_fraction, max_boxes=max_boxes)
            statements += [krawczyk_gamma_star(cst, inst.s0, form) for form in FORMS]
            if inst.data == "spectrum" and top_levels(inst.spectrum)[2] is not None:
                statements.append(contraction_factor(inst.spectrum, cst.gamma_star, cst.gamma_star,
                                                     label="Theorem 4.6 (2)", what="gamma*", strictly_above_power=True))
        else:
            label, what = _contraction_of(inst)
            if inst.steps is None:
                statements.append(contraction_factor(inst.spectrum, inst.gamma_range[0], inst.gamma_range[1],
                                                     label=label, L=inst.L, what=what))
            else:
                statements.append(_trained(inst, progress=progress, on_step=on_step))
        return {"paper": "B", "instance": inst.to_dict(), "constants": constants, "statements": statements,
                "prec_bits": prec, "seconds": round(time.perf_counter() - t0, 3)}


def interrupted_report(inst: BInstance, at, seconds: float, *, prec: int = PREC_BITS) -> dict:
    """The report of a ``--steps`` run stopped by SIGINT/SIGTERM: the contraction statement at the state ``at``
    after the last whole certified step (``on_step``'s last; None before the first step: undecided), with
    ``"complete": false`` and ``steps_done``."""
    with flint.ctx.workprec(prec):
        st = _trained(inst, stop=(at, seconds))
    return {"paper": "B", "instance": inst.to_dict(), "constants": {}, "statements": [st], "prec_bits": prec,
            "seconds": round(seconds, 3), "complete": False, "steps_done": 0 if at is None else at[0]}


def _contraction_of(inst: BInstance) -> tuple[str, str]:
    """(ledger label, the symbol's name) of the contraction statement of the ln or looped model."""
    return ("Theorem 4.6 (1)", "gamma") if inst.model == "ln" else ("Theorem 4.7 (looped contraction)", "rho")


def _trained(inst: BInstance, progress=None, on_step=None, stop=None):
    """The contraction statement at gamma_T (rho_T) of ``inst.steps`` certified GD steps, or, with ``stop`` = (the
    state after the last whole step or None, seconds), at gamma_t of the t steps certified before an interrupt
    (undecided for t = 0)."""
    label, what = _contraction_of(inst)
    levels = len(set(inst.spectrum))
    route = route_of(inst.model, levels)
    steps, stopped = inst.steps, None
    if stop is not None:
        at, secs = stop
        steps, gT, increasing = (0, arb(0), True) if at is None else (at[0], at[3], at[4])
    else:
        try:
            gT, increasing, secs = certified_training(inst.model, inst.spectrum, inst.d, inst.eta,
                                                      inst.steps, inst.L, progress=progress, on_step=on_step)
        except BallTooWide as wide:
            gT, increasing, secs, stopped = wide.gamma, None, None, wide
    symbol = f"{what}_T" if stop is None else f"{what}_t"
    st = contraction_factor(inst.spectrum, gT, gT, label=label, L=inst.L, what=symbol)
    if steps == 0:   # gamma_0 = alpha0 beta0 = 0: nothing certified yet
        st.update(verdict="undecided", certificate=None, counterexample=None,
                  reason=f"interrupted before the first of the {inst.steps} certified GD steps asked")
    if stopped is not None:   # rho_t after fewer steps than asked: the statement is not decided
        st.update(verdict="undecided", certificate=None, counterexample=None,
                  reason=f"the certified iteration stopped at step {stopped.step} of {inst.steps}: "
                         f"{stopped} (the ball's dependency on {what} grows at every step); ask for "
                         f"fewer --steps")
    after = (f"{symbol} after {steps} GD steps" if stop is None else
             f"{symbol} after the t = {steps} of the {inst.steps} GD steps asked that were certified before an interrupt")
    st["statement"] += (f"; {after} at eta = {inst.eta!r} from "
                        f"alpha0 = 0, beta0 = 1, by certified iteration "
                        f"({LEVEL_WORDS.get(levels, levels)}-level spectrum)")
    if st["certificate"] is not None:
        st["certificate"].update(steps=steps, gamma_T=digits(gT), gamma_T_radius=float(gT.rad()),
                                 increasing=increasing, seconds=round(secs, 3), expectation_route=route,
                                 nested_integrals=nested_integrals(inst.model, levels)[route])
        if stop is not None:
            st["certificate"]["steps_asked"] = inst.steps
    return st
