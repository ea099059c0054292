"""Every Model B statement of one instance (:func:`prove_model_b`): the ``rdyn prove --paper B`` report."""
from __future__ import annotations

import time

import flint

from rdyn.verification.proofs.iterate import digits
from rdyn.verification.proofs.model_b.b3 import prove_b3, prove_b3_theta
from rdyn.verification.proofs.model_b.contraction import contraction_factor, top_levels
from rdyn.verification.proofs.model_b.instance import BInstance, FORMS, PREC_BITS, noln_constants
from rdyn.verification.proofs.model_b.krawczyk import krawczyk_gamma_star
from rdyn.verification.proofs.model_b.training import BallTooWide, certified_training, nested_integrals, route_of

LEVEL_WORDS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight", 9: "nine"}


def prove_model_b(inst: BInstance, *, max_boxes: int = 200_000, prec: int = PREC_BITS, progress=None) -> dict:
    """Every Model B statement that applies to ``inst.model`` (noln: Theorem B.3 at both eta_max
    forms, Theorem 4.2's gamma* by Krawczyk, Theorem 4.6 (2)'s R* with spectrum data; ln and looped:
    the contraction factor over ``inst.gamma_range``). A dict in the ``rdyn prove --paper B --json``
    shape (rdyn/schemas/prove.schema.json, model_b). ``progress(t)``: after each certified GD step
    of ``inst.steps``."""
    t0 = time.perf_counter()
    old = flint.ctx.prec
    flint.ctx.prec = prec
    try:
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
            label = "Theorem 4.6 (1)" if inst.model == "ln" else "Theorem 4.7 (looped contraction)"
            what = "gamma" if inst.model == "ln" else "rho"
            if inst.steps is None:
                statements.append(contraction_factor(inst.spectrum, inst.gamma_range[0], inst.gamma_range[1],
                                                     label=label, L=inst.L, what=what))
            else:
                levels = len(set(inst.spectrum))
                route = route_of(inst.model, levels)
                try:
                    gT, increasing, secs = certified_training(inst.model, inst.spectrum, inst.d, inst.eta,
                                                              inst.steps, inst.L, progress=progress)
                except BallTooWide as wide:
                    gT, increasing, secs, stopped = wide.gamma, None, None, wide
                else:
                    stopped = None
                st = contraction_factor(inst.spectrum, gT, gT, label=label, L=inst.L, what=f"{what}_T")
                if stopped is not None:   # rho_t after fewer steps than asked: the statement is not decided
                    st.update(verdict="undecided", certificate=None, counterexample=None,
                              reason=f"the certified iteration stopped at step {stopped.step} of {inst.steps}: "
                                     f"{stopped} (the ball's dependency on {what} grows at every step); ask for "
                                     f"fewer --steps")
                st["statement"] += (f"; {what}_T after {inst.steps} GD steps at eta = {inst.eta!r} from "
                                    f"alpha0 = 0, beta0 = 1, by certified iteration "
                                    f"({LEVEL_WORDS.get(levels, levels)}-level spectrum)")
                if st["certificate"] is not None:
                    st["certificate"].update(steps=inst.steps, gamma_T=digits(gT), gamma_T_radius=float(gT.rad()),
                                             increasing=increasing, seconds=round(secs, 3),
                                             expectation_route=route,
                                             nested_integrals=nested_integrals(inst.model, levels)[route])
                statements.append(st)
        return {"paper": "B", "instance": inst.to_dict(), "constants": constants, "statements": statements,
                "prec_bits": prec, "seconds": round(time.perf_counter() - t0, 3)}
    finally:
        flint.ctx.prec = old
