"""The one certified arb iteration of Model A (reduced_dynamics/certified/arb_iteration.py), in its
two enclosure forms: ``rdyn teacher --certify --dps`` (arb_pass) advances the box in the mean-value
form, ``rdyn prove`` (verify/proofs/iterate.py) in the direct form, and both boxes contain the
exact trajectory (a 40-digit mpmath run)."""
from __future__ import annotations

from functools import lru_cache

import pytest

flint = pytest.importorskip("flint")
from flint import arb  # noqa: E402

from rdyn.reduced_dynamics.certified.arb_iteration import (DIRECT, MEAN_VALUE, ArbIteration,  # noqa: E402
                                                           BranchUndetermined, DirectKernels)
from rdyn.reduced_dynamics.certified.arb_pass import certified_run  # noqa: E402
from rdyn.verification.proofs.engine import Instance  # noqa: E402

INST = Instance(8, 2, eta=0.5)     # T* = 4610, t1 = 11 (tests/reduced_dynamics/certified/test_certified.py's SMALL)
T_STAR = 4610


def same(a, b) -> bool:
    """Equal balls: the same midpoint and the same radius, bit for bit."""
    return a.mid() == b.mid() and a.rad() == b.rad()


def iteration(form: str) -> ArbIteration:
    """ArbIteration of INST for ``form``, prepared at the current precision (the direct form with
    rdyn prove's kernels and constants, as verify/proofs/engine.py prepares them)."""
    if form == MEAN_VALUE:
        return ArbIteration(INST.config())
    from rdyn.verification.proofs.kernels import kernels

    k = kernels(INST.activation, INST.logit_scale)
    eta = INST.exact_eta()
    c = k.prepare(arb(INST.K).sqrt(), arb(INST.D - INST.K).sqrt(), arb(int(eta.p)) / int(eta.q),
                  arb(repr(float(INST.vstar_norm2))), arb(0), arb(1))
    return ArbIteration(INST.config(), forms=(DIRECT,), direct=DirectKernels(k.advance, k.first_c1, c))


@lru_cache(maxsize=None)
def boxes(prec: int, steps: tuple, form: str = MEAN_VALUE):
    """The boxes (C1, C2, C3, x) of ArbIteration in ``form`` at the given steps (prepared and run
    at ``prec`` bits; the direct form's C2, C3 read off x)."""
    old, flint.ctx.prec = flint.ctx.prec, prec
    try:
        it = iteration(form)
        state, out = it.start(), {}
        for t in range(1, max(steps) + 1):
            state = it.step(state, form)
            if t in steps:
                out[t] = (*it.components(state), state[3])
        return out
    finally:
        flint.ctx.prec = old


def prove_iteration(T0_of, *, saver=None, restored=None, checkpoint=None):
    """rdyn prove's certified iteration (no statements) at its 200 bits: it stops at T0."""
    from rdyn.verification.proofs import iterate
    from rdyn.verification.proofs.engine import PREC_BITS, constants
    from rdyn.verification.proofs.kernels import kernels

    old, flint.ctx.prec = flint.ctx.prec, PREC_BITS
    try:
        k = kernels(INST.activation, INST.logit_scale)
        eta = INST.exact_eta()
        c = k.prepare(arb(INST.K).sqrt(), arb(INST.D - INST.K).sqrt(), arb(int(eta.p)) / int(eta.q),
                      arb(repr(float(INST.vstar_norm2))), arb(0), arb(1))
        return iterate.run(INST, [], k=k, c=c, consts=constants(INST, k, c), T0_of=T0_of,
                           budget_of=lambda T: 10**6, saver=saver, checkpoint=checkpoint,
                           checkpoint_every=0.0, restored=restored)
    finally:
        flint.ctx.prec = old


def test_certify_pass_runs_the_mean_value_form():
    """--certify's final box is ArbIteration's mean-value box at that step, bit for bit (139 bits =
    --dps 30), and so is it at rdyn prove's 200 bits."""
    for dps, prec in ((30, None), (None, 200)):
        cert = certified_run(INST.config(), steps=T_STAR, dps=dps or 30, prec=prec)
        assert cert.prec == (prec or 139) and cert.certified and cert.T_star.step == T_STAR
        box = boxes(cert.prec, (T_STAR,))[T_STAR]
        assert all(same(a, b) for a, b in zip(cert.state, box[:3]))


def test_direct_form_is_proves_iteration():
    """rdyn prove's state (C1, x) at T* (here T0 = T*) is the direct form's box, bit for bit; the
    two forms' boxes there overlap, the mean-value one is the tighter (radius in x ~1e-10 times)."""
    it = prove_iteration(lambda T: T)
    assert it.T_star == T_STAR and it.last_step == T_STAR
    C1, x, e = it.state_T0
    direct = boxes(200, (T_STAR,), DIRECT)[T_STAR]
    mean_value = boxes(200, (T_STAR,))[T_STAR]
    assert same(C1, direct[0]) and same(x, direct[3])
    assert all(a.overlaps(b) for a, b in zip(direct, mean_value))
    assert mean_value[3].rad() < direct[3].rad() and mean_value[0].rad() < direct[0].rad()


def test_both_forms_contain_a_40_digit_trajectory():
    """lo <= exact <= hi for C1, C2, C3 and x at a few steps, exact = the mpmath run at --dps 40
    (error ~1e-37 here), for the boxes of both forms at 100 bits (relative radius by T*: mean-value
    form 3e-27, direct form 3e-18, which loses digits along the run, docs/numerics.md) and for
    --certify's box at --dps 18 (99 bits)."""
    import mpmath

    from rdyn.reduced_dynamics.model_a.dynamics import run

    samples = (1, 2, 11, 100, 1000, T_STAR)
    ref = run(INST.config(), steps=samples[-1], record=list(samples), backend="mpmath", dps=40)
    old, flint.ctx.prec = flint.ctx.prec, 320
    try:
        for form, bound in ((MEAN_VALUE, 1e-20), (DIRECT, 1e-15)):
            got = boxes(100, samples, form)
            for t in samples:
                C1, C2, C3 = (ref.record[t].C1, ref.record[t].C2, ref.record[t].C3)
                with mpmath.workdps(60):
                    x = C2 + C3
                for ball, value in zip(got[t], (C1, C2, C3, x)):
                    assert ball.contains(arb(mpmath.nstr(value, 40))), (form, t, ball, value)
                    assert float(ball.rad()) < bound * max(abs(float(value)), 1e-300) or ball.rad() == 0, \
                        (form, t, ball)
        cert = certified_run(INST.config(), steps=T_STAR, dps=18)
        for ball, value in zip(cert.state, (ref.final.C1, ref.final.C2, ref.final.C3)):
            assert ball.contains(arb(mpmath.nstr(value, 40)))
    finally:
        flint.ctx.prec = old


def test_a_box_of_one_form_steps_in_the_other():
    """The layout is shared: the direct box at step 1000 advanced by a mean-value step (C2, C3 read
    off x) and the mean-value box advanced by a direct step both overlap the boxes at 1001; the
    branch handling is shared too (a box straddling C1 = 0 raises in both forms)."""
    old, flint.ctx.prec = flint.ctx.prec, 139
    try:
        mean_value, direct = iteration(MEAN_VALUE), iteration(DIRECT)
        both = ArbIteration(INST.config(), forms=(MEAN_VALUE, DIRECT), direct=direct.direct)
        a, b = boxes(139, (1000, 1001)), boxes(139, (1000, 1001), DIRECT)
        for start, form in (((b[1000][0], None, None, b[1000][3]), MEAN_VALUE), (a[1000], DIRECT)):
            nxt = (*both.components(both.step(start, form)), both.step(start, form)[3])
            assert all(p.overlaps(q) and p.overlaps(r) for p, q, r in zip(nxt, a[1001], b[1001]))
        wide = (arb(0, 1e-3), arb(1), arb("0.25"), arb("1.25"))
        for it, form in ((mean_value, MEAN_VALUE), (direct, DIRECT)):
            with pytest.raises(BranchUndetermined):
                it.step(wide, form)
        with pytest.raises(ValueError):
            mean_value.step(a[1000], DIRECT)   # its direct kernels were not handed in
    finally:
        flint.ctx.prec = old


def test_prove_checkpoint_of_the_c1_x_iteration_resumes(tmp_path):
    """A prove snapshot holds (C1, x) and, since issue 41, C2, C3 (x's split); one written before
    holds (C1, x) only. Both resume, to the same T*, on the uninterrupted box bit for bit (the
    direct form advances (C1, x))."""
    snapshots = []
    whole = prove_iteration(lambda T: T + 20000, saver=snapshots.append, checkpoint=str(tmp_path / "p"))
    first = snapshots[0]
    assert first["t"] == 10000 and "C2" in first and "C3" in first
    old_format = {key: value for key, value in first.items() if key not in ("C2", "C3")}
    resumed = prove_iteration(lambda T: T + 20000, restored=old_format)
    new_format = prove_iteration(lambda T: T + 20000, restored=first)
    assert resumed.T_star == new_format.T_star == whole.T_star == T_STAR
    assert resumed.last_step == new_format.last_step == whole.last_step == T_STAR + 20000
    for run_ in (resumed, new_format):
        assert all(same(a, b) for a, b in zip(run_.state_T0, whole.state_T0))   # bit-identical
