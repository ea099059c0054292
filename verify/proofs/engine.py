"""``prove``: decide the statements of :mod:`.statements` for one Model A instance (seed 000,
Appendix D, Lemmas D.18 and D.19; docs/proofs.md).

Verdicts: ``certified`` (rigorous for this instance: every step from its start to T0 by the
certified iteration, every later step by the invariant region), ``refuted`` (a certified
counterexample: a step of the certified trajectory where the statement is certainly false),
``undecided`` (a budget ran out or an enclosure straddled the bound; never a pass). ``proved``
(symbolic, for every parameter in a domain) is not produced by this engine.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from rdyn.verification.proofs import statements as st

PREC_BITS = 200
DEFAULT_MAX_STEPS_FACTOR = 2      # default step budget: max(2 T*, T0) (refutations past T0)
DEFAULT_MAX_BOXES = 200_000


@dataclass(frozen=True)
class Instance:
    D: int
    K: int
    activation: str = "relu"
    kappa: float = 0.0
    vstar_norm2: float = 1.0
    eta: float | None = None          # None: eta_limit/2 exactly
    logit_scale: str = "D"

    def config(self):
        """The matching :class:`~rdyn.reduced_dynamics.model_a.dynamics.TeacherConfig` (STS groups; the
        collapsed map depends on D and K only)."""
        return _teacher_config(self)

    def exact_eta(self):
        return self.config().exact_step_size()

    def to_dict(self) -> dict:
        """The instance's options; ``eta_exact`` None (and ``eta`` as given) for an instance whose exact
        step size cannot be formed (one the engine refuses: its error row still names it)."""
        try:
            exact = self.exact_eta()
        except (ArithmeticError, ValueError):
            exact = None
        return {"D": self.D, "K": self.K, "activation": self.activation,
                "kappa": self.kappa if self.activation == "leaky" else None,
                "vstar_norm2": self.vstar_norm2, "eta": self.eta if exact is None else float(exact),
                "eta_exact": None if exact is None else str(exact), "logit_scale": self.logit_scale}


def _teacher_config(inst: Instance):
    from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig

    return TeacherConfig(D=inst.D, K=inst.K, activation=inst.activation,
                         kappa=inst.kappa if inst.activation == "leaky" else 0.0, eta=inst.eta,
                         vstar_norm2=inst.vstar_norm2, logit_scale=inst.logit_scale)


@dataclass
class StatementResult:
    statement: st.Statement
    verdict: str
    certificate: dict | None = None
    counterexample: dict | None = None
    reason: str | None = None

    def to_dict(self) -> dict:
        s = self.statement
        return {"label": s.label, "form": s.form, "side": s.side, "statement": s.text,
                "quantity": s.quantity, "verdict": self.verdict, "certificate": self.certificate,
                "counterexample": self.counterexample, "reason": self.reason}


@dataclass
class ProofReport:
    instance: Instance
    T_star: int | None
    results: list
    superseded: list
    seconds: float
    region: dict | None = None
    detail: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"instance": self.instance.to_dict(), "T_star": self.T_star,
                "statements": [r.to_dict() for r in self.results],
                "superseded": [r.to_dict() for r in self.superseded],
                "region": self.region, "t1": self.detail.get("t1"), "seconds": round(self.seconds, 3)}

    @property
    def all_corrected_certified(self) -> bool:
        return all(r.verdict in ("proved", "certified") for r in self.results if r.statement.form == "corrected")


def constants(inst: Instance, k, c):
    """Instance constants as balls: scale, eta, M, eta g2, q_min = X(K/(D-K), w = 0)/(eta g2), the
    printed D.19 coefficients, the atan coefficient sqrt((D-K)/K) (None for identity)."""
    from flint import arb

    from rdyn.verification.proofs import symbolic as sy
    from rdyn.verification.proofs.balls import b_point

    D, K = inst.D, inst.K
    eta_q = inst.exact_eta()
    eta = arb(int(eta_q.p)) / int(eta_q.q)
    M = arb(repr(float(inst.vstar_norm2)))
    scale = arb(D) if inst.logit_scale == "D" else arb(D).sqrt()
    r = sy.reduced(inst.activation, inst.logit_scale)
    cz = None
    if r.atan_coefficient is not None:
        assert r.atan_coefficient == sy.sN / sy.sK, r.atan_coefficient
        cz = arb(D - K).sqrt() / arb(K).sqrt()
    eg2 = k.eta_g2(c)
    e0 = arb(K) / (D - K)
    B0 = arb(0) if cz is None else b_point(cz * e0)
    q_min = k.dx_e2(e0, arb(0), B0, c) / eg2
    out = {"scale": scale, "eta": eta, "M": M, "eta_g2": eg2, "q_min": q_min, "atan": cz, "K": arb(K),
           "N": arb(D - K), "d9_increment": eta * M * D * (D + 1) / (arb(K) ** 3 * (D - K)),
           "e_c": turning_point(k, c)}
    if inst.logit_scale == "D":
        out["printed_d19_lower"] = eta * M / (arb(200) * arb(K) ** 3 * arb(D) ** 3)
        out["printed_d19_upper"] = eta * 8 * arb.pi() * M / (arb(K) ** 3 * arb(D) ** 3)
    return out


def turning_point(k, c, grid: int = 256, bits: int = 120):
    """Lemma D.10 corrected: an enclosure (lo, hi) (floats, bisected down to adjacent floats) of the largest e in (0, 1) where
    dC1*/de changes sign (C1* decreases in e above it, i.e. increases with p below p_c): certified
    C1*'(lo) > 0 > C1*'(hi). None if C1*' is not certainly negative at e = 1 or no sign change is
    found on the grid."""
    from flint import arb

    if not k.star_prime(arb(1), c) < 0:
        return None
    prev = 1.0
    for i in range(1, grid):
        e = 1.0 - i / grid
        v = k.star_prime(arb(e), c)
        if v > 0:
            lo, hi = e, prev
            break
        if not v < 0:
            return None
        prev = e
    else:
        return None
    for _ in range(bits):
        m = (lo + hi) / 2
        if m in (lo, hi):
            break
        v = k.star_prime(arb(m), c)
        if v > 0:
            lo = m
        elif v < 0:
            hi = m
        else:
            break
    assert k.star_prime(arb(lo), c) > 0 and k.star_prime(arb(hi), c) < 0
    return (lo, hi)


def default_T0(T_star: int) -> int:
    """T0 = T* + max(1000, T*/100): a few steps past T* the lag of C1 behind C1* no longer
    dominates the slack of the lower bounds near p = 1/(2K)."""
    return T_star + max(1000, T_star // 100)


def prove(inst: Instance, labels=None, *, max_steps: int | None = None, max_boxes: int = DEFAULT_MAX_BOXES,
          prec: int = PREC_BITS, progress=None, include_superseded: bool = True, checkpoint: str | None = None,
          checkpoint_every: float = 60.0, resume: str | None = None, exact_budget: bool = False) -> ProofReport:
    """Decide every statement (or those whose label is in ``labels``) for ``inst``.

    ``checkpoint``: save the iteration's state (and the region proof, once done) to this file
    every ``checkpoint_every`` seconds, at the end and on KeyboardInterrupt (then
    :class:`rdyn.reduced_dynamics.runs.checkpoint.Interrupted` is raised); ``resume``: continue from
    such a file written for the same instance and options (else CheckpointError naming the
    difference). What was certified before the interruption is kept.

    ``max_steps``: the step budget of the certified iteration. By default (the library's rule) it is
    never below T0 (``max_steps=1``: iterate to T0 only); with ``exact_budget`` (``rdyn prove
    --max-steps``) it is honoured exactly: the iteration stops at step ``max_steps`` at the latest,
    T0 reached or not (the CLI refuses a budget below the estimated T0 before any work)."""
    import flint

    from rdyn.verification.proofs import iterate, region as rg
    from rdyn.verification.proofs.kernels import kernels

    t_start = time.perf_counter()
    chosen = [s for s in st.STATEMENTS if labels is None or s.label in labels]
    extra = [s for s in st.SUPERSEDED if include_superseded and (labels is None or s.label in labels)]
    old = flint.ctx.prec
    flint.ctx.prec = prec
    try:
        from flint import arb

        k = kernels(inst.activation, inst.logit_scale)
        kappa = inst.kappa if inst.activation == "leaky" else 0.0
        eta_q = inst.exact_eta()
        c = k.prepare(arb(inst.K).sqrt(), arb(inst.D - inst.K).sqrt(), arb(int(eta_q.p)) / int(eta_q.q),
                      arb(repr(float(inst.vstar_norm2))), arb(repr(float(kappa))), arb(1))
        consts = constants(inst, k, c)
        from rdyn.verification.proofs import symbolic as sy
        bm = rg.BoxMap(k, c, consts, consts["atan"], sy.reduced(inst.activation, inst.logit_scale).slack_power)
        region_info = {}

        def after_T0(state, outcomes):
            C1, x, e = state
            w0 = (C1 / k.star(e, c) - 1) / (e * e * e)
            todo = [s for s in chosen + extra if s.region is not None and outcomes[s.key].counterexample is None
                    and outcomes[s.key].undecided_step is None
                    and (s.region not in ("dx_printed_lower", "dx_printed_upper") or inst.logit_scale == "D")]
            conds = tuple(dict.fromkeys(s.region for s in todo))
            from rdyn.verification.proofs.balls import upper
            used = 0   # --max-boxes is one budget for every band tried, not one per band
            for pad in (0.5, 2.0, 8.0):   # widen the band until invariance is shown (or give up)
                R = rg.choose_region(bm, upper(e), w0, pad=pad)
                if not (w0.lower() >= R.w_lo and w0.upper() <= R.w_hi and e.lower() >= 0 and e.upper() <= R.e_top):
                    raise AssertionError("the state at T0 is not inside the chosen region")
                res = rg.prove_region(bm, R, conds, max_boxes=max_boxes - used)
                used += min(res.boxes, max_boxes - used)
                if res.invariant or used >= max_boxes:
                    break
            region_info.update(result=res, w_T0=w0, e_T0=e)
            done = {s.key for s in todo if res.invariant and res.decided.get(s.region)}
            return [s.key for s in chosen + extra if s.key not in done]

        from rdyn.reduced_dynamics.runs import checkpoint as ck
        from rdyn.verification.proofs.iterate import ball_from_text, ball_text

        identity = {"instance": inst.to_dict(), "labels": None if labels is None else sorted(labels),
                    "max_steps": max_steps, "max_boxes": max_boxes, "prec": prec,
                    "superseded": include_superseded, "format": 2,
                    **({"exact_budget": True} if exact_budget and max_steps is not None else {})}
        restored = None
        if resume is not None:
            _, meta = ck.load(resume, "prove", identity)
            restored = meta["snapshot"]
            if meta.get("region") is not None:
                rr = meta["region"]
                region_info.update(
                    result=rg.RegionResult(rg.Region(**rr["region"]), rr["invariant"], rr["decided"], rr["margins"],
                                           rr["boxes"], rr["seconds"], rr["reason"], rr.get("sups")),
                    w_T0=ball_from_text(rr["w_T0"]), e_T0=ball_from_text(rr["e_T0"]))

        def saver(snapshot):
            res = region_info.get("result")
            region = None if res is None else {
                "region": {"e_top": res.region.e_top, "w_lo": res.region.w_lo, "w_hi": res.region.w_hi},
                "invariant": res.invariant, "decided": res.decided, "margins": res.margins, "boxes": res.boxes,
                "seconds": res.seconds, "reason": res.reason, "sups": res.sups, "w_T0": ball_text(region_info["w_T0"]),
                "e_T0": ball_text(region_info["e_T0"])}
            ck.save(checkpoint, "prove", identity, {}, {"snapshot": snapshot, "region": region})
            return checkpoint

        def budget_of(T_star):
            return max_steps if max_steps is not None else DEFAULT_MAX_STEPS_FACTOR * T_star

        it = iterate.run(inst, [s for s in chosen + extra if s.window != "symbolic"], k=k, c=c, consts=consts, T0_of=default_T0, budget_of=budget_of,
                         after_T0=after_T0, progress=progress,
                         **({"hard_cap": min(max_steps, 10**9), "exact_budget": True}
                            if exact_budget and max_steps is not None else {}),
                         saver=saver if checkpoint is not None else None, checkpoint=checkpoint,
                         checkpoint_every=checkpoint_every,
                         restored=restored, bm=bm)
        res = region_info.get("result")
        results, sup = [], []
        for s in chosen + extra:
            o = it.outcomes.get(s.key) or iterate.Outcome(s.key)
            r = _verdict(s, o, it, res, region_info)
            (sup if s in extra else results).append(r)
        from rdyn.verification.proofs import corollaries   # refutations beyond the step budget (region)
        results = corollaries.refine(inst, results, it=it, region=res, bm=bm, consts=consts)
        region = None
        if res is not None:
            region = {**res.region.to_dict(), "invariant": res.invariant, "boxes": res.boxes,
                      "seconds": round(res.seconds, 3), "reason": res.reason,
                      "w_T0": [float(region_info["w_T0"].lower()), float(region_info["w_T0"].upper())],
                      "e_T0": [float(region_info["e_T0"].lower()), float(region_info["e_T0"].upper())],
                      "T0": it.T0, "iteration_seconds": round(it.seconds, 3), "last_step": it.last_step,
                      "radius_T0": it.radius_T0, "prec_bits": prec}
        return ProofReport(inst, it.T_star, results, sup, time.perf_counter() - t_start, region, {"t1": it.t1})
    finally:
        flint.ctx.prec = old


def _verdict(s, o, it, res, info) -> StatementResult:
    if o.counterexample is not None:
        return StatementResult(s, "refuted", counterexample=o.counterexample)
    if o.undecided_step is not None:
        return StatementResult(s, "undecided", reason=f"the certified enclosure straddles the bound at step "
                                                        f"{o.undecided_step}")
    if s.window == "symbolic":
        return _symbolic(s, it)
    if s.window in ("until_t1", "before_t1"):
        if it.t1 is None:
            return StatementResult(s, "undecided", reason=it.stopped or "t1 not reached")
        return StatementResult(s, "certified", certificate={
            "T0": it.t1 if s.window == "until_t1" else it.t1 - 1, "region": None, "boxes": 0, "min_margin": o.min_margin, "margin_on_region": None,
            "region_condition": None, "steps_checked": [o.checked_from, o.checked_to],
            "seconds": round(it.seconds, 3)})
    if it.T_star is None or it.T0 is None or it.state_T0 is None:
        return StatementResult(s, "undecided", reason=it.stopped or "T0 not reached")
    if s.region is None:
        return StatementResult(s, "undecided", reason=f"no invariant-region argument for this statement; not "
                                                        f"refuted at any step up to {it.last_step} ({it.stopped})")
    if res is not None and s.region not in res.decided:
        return StatementResult(s, "undecided", reason=f"no region argument for this statement here (the printed "
                                                        f"form uses exp(-2(C2+C3)/D), not e^2, with logits/sqrt(D)); "
                                                        f"not refuted at any step up to {it.last_step}")
    if res is None or not res.invariant or not res.decided.get(s.region, False):
        why = (res.reason if res is not None else None) or "region proof not run"
        return StatementResult(s, "undecided", reason=f"region: {why}; not refuted at any step up to {it.last_step}")
    cert = {"T0": it.T0, "region": res.region.to_dict(), "boxes": res.boxes, "min_margin": o.min_margin,
            "margin_on_region": res.margins.get(s.region), "region_condition": s.region,
            "steps_checked": [o.checked_from, o.checked_to],
            **({"sup_on_region": (res.sups or {}).get(s.region)} if s.region == "dx_upper" else {}),
            "seconds": round(it.seconds + res.seconds, 3)}
    if o.blocks:   # steps t1 .. T0 - 1 decided a block at a time (the region condition on a box of states)
        cert.update(blocks=o.blocks, margin_on_blocks=o.block_margin, steps_one_by_one=o.fallback_steps)
    return StatementResult(s, "certified", certificate=cert)


def _symbolic(s, it) -> StatementResult:
    """Lemma D.15's proof step, corrected: 3(D-K)/D^2 <= 1/40 iff D^2 >= 120 (D-K), for every D > K >= 1
    (40 D^2 (3(D-K)/D^2 - 1/40) = 120 (D-K) - D^2 identically, and 40 D^2 > 0)."""
    import sympy as sp

    D, K = sp.symbols("D K", positive=True)
    holds = sp.expand(40 * D**2 * (3 * (D - K) / D**2 - sp.Rational(1, 40)) - (120 * (D - K) - D**2)) == 0
    if not holds:
        return StatementResult(s, "undecided", reason="the sympy identity did not reduce to 0")
    return StatementResult(s, "proved", reason="sympy: 40 D^2 (3(D-K)/D^2 - 1/40) - (120 (D-K) - D^2) = 0 "
                                               "identically and 40 D^2 > 0, so the two conditions agree for "
                                               "every D > K >= 1")
