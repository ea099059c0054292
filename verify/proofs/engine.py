"""``prove``: decide the statements of :mod:`.statements` for one Model A instance (seed 000,
Appendix D, Lemmas D.18 and D.19; docs/proofs.md).

Verdicts: ``certified`` (rigorous for this instance: every step from its start to T0 by the
certified iteration, every later step by the invariant region), ``refuted`` (a certified
counterexample: a step of the certified trajectory where the statement is certainly false),
``undecided`` (a budget ran out or an enclosure straddled the bound; never a pass). ``proved``
(symbolic, for every parameter in a domain) is not produced by this engine.

The lag lemma and the derived Lemmas D.18/D.19 (statements of window ``observed``; derivation in
:mod:`rdyn.derivations.model_a.late_phase_bounds`) are decided by :class:`LagPass` from the states
T* .. T0 of the same certified iteration and then on the invariant region; their certificate carries
the constants (``c_lag``, ``q_lag``, ``psi``) they use.
"""
from __future__ import annotations

import math
import time
from dataclasses import dataclass, field

import flint
import sympy as sp
from flint import arb

from rdyn.reduced_dynamics.model_a.dynamics import TeacherConfig
from rdyn.reduced_dynamics.runs import checkpoint as ck
from rdyn.verification.proofs import corollaries, iterate, region as rg, statements as st
from rdyn.verification.proofs.balls import b_point, lower, upper
from rdyn.verification.proofs.float_route import FloatRoute
from rdyn.verification.proofs.iterate import ball_from_text, ball_text, certified_digits
from rdyn.verification.proofs.kernels import kernels

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
        return {"key": s.key, "label": s.label, "form": s.form, "side": s.side, "statement": s.text,
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
    D, K = inst.D, inst.K
    eta_q = inst.exact_eta()
    eta = arb(int(eta_q.p)) / int(eta_q.q)
    M = arb(repr(float(inst.vstar_norm2)))
    scale = arb(D) if inst.logit_scale == "D" else arb(D).sqrt()
    cz = arb(D - K).sqrt() / arb(K).sqrt() if k.facts["atan"] else None   # atan(sqrt((D-K)/K) e)
    eg2 = k.eta_g2(c)
    e0 = arb(K) / (D - K)
    B0 = arb(0) if cz is None else b_point(cz * e0)
    q_min = k.dx_e2(e0, arb(0), B0, c) / eg2
    v_star = 2 * eg2 * (arb(K) / (D - K)) ** 2 / scale     # Lemma D.18 derived: psi at v_* and at 2 eta g2/scale
    v_one = 2 * eg2 / scale
    out = {"scale": scale, "eta": eta, "M": M, "eta_g2": eg2, "q_min": q_min, "atan": cz, "K": arb(K),
           "psi_star": psi_ball(v_star), "psi_one": psi_ball(v_one),
           "N": arb(D - K), "d9_increment": eta * M * D * (D + 1) / (arb(K) ** 3 * (D - K)),
           "e_c": turning_point(k, c)}
    if inst.logit_scale == "D":
        out["printed_d19_lower"] = eta * M / (arb(200) * arb(K) ** 3 * arb(D) ** 3)
        out["printed_d19_upper"] = eta * 8 * arb.pi() * M / (arb(K) ** 3 * arb(D) ** 3)
    return out


def psi_ball(v):
    """psi(v) = (exp(v) - 1)/v for a ball v > 0 (exp(v) - 1 by arb's expm1: no cancellation)."""
    return v.expm1() / v


def turning_point(k, c, grid: int = 256, bits: int = 120):
    """Lemma D.10 corrected: an enclosure (lo, hi) (floats, bisected down to adjacent floats) of the largest e in (0, 1) where
    dC1*/de changes sign (C1* decreases in e above it, i.e. increases with p below p_c): certified
    C1*'(lo) > 0 > C1*'(hi). None if C1*' is not certainly negative at e = 1 or no sign change is
    found on the grid (a grid point where the sign is undecided lies inside the bracket; uniqueness of the
    zero in it is the region condition's C1*'' < 0)."""
    if not k.star_prime(arb(1), c) < 0:
        return None
    prev = 1.0   # the last grid point where C1*' is certainly negative
    for i in range(1, grid):
        e = 1.0 - i / grid
        v = k.star_prime(arb(e), c)
        if v > 0:
            lo, hi = e, prev
            break
        if v < 0:
            prev = e
        # a ball that holds 0 (the zero on a grid point, e.g. identity with D = 9K): the bracket grows past it
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
          checkpoint_every: float = 60.0, resume: str | None = None, exact_budget: bool = False,
          lag_constant: float | None = None, float_route: bool = True) -> ProofReport:
    """Decide every statement (or those whose label is in ``labels``) for ``inst``.

    ``checkpoint``: save the iteration's state (and the region proof, once done) to this file
    every ``checkpoint_every`` seconds, at the end and on KeyboardInterrupt (then
    :class:`rdyn.reduced_dynamics.runs.checkpoint.Interrupted` is raised); ``resume``: continue from
    such a file written for the same instance and options (else CheckpointError naming the
    difference). What was certified before the interruption is kept.

    ``max_steps``: the step budget of the certified iteration. By default (the library's rule) it is
    never below T0 (``max_steps=1``: iterate to T0 only); with ``exact_budget`` (``rdyn prove
    --max-steps``) it is honoured exactly: the iteration stops at step ``max_steps`` at the latest,
    T0 reached or not (the CLI refuses a budget below the estimated T0 before any work).

    ``float_route``: steps after t1 + 1 from the compiled float64 interval rows
    (:mod:`.float_route`; ``rdyn prove --route float``, the default), else every step in arb at
    ``prec`` bits (``--route arb``). ``max_boxes`` bounds the main region's branch and bound (every
    band tried) and, apart, the derived late-phase statements' on that region.

    ``lag_constant``: the lag lemma's c_lag to decide instead of the certified one (the derived
    D.18/D.19 forms then use q_lag = q_min (1 - c_lag (K/(D-K))^2) of it); None: c_lag is the
    certified bound of ``|w|`` for T >= T* (:class:`LagPass`, docs/proofs.md)."""
    t_start = time.perf_counter()
    chosen = [s for s in st.STATEMENTS if labels is None or s.label in labels]
    extra = [s for s in st.SUPERSEDED if include_superseded and (labels is None or s.label in labels)]
    with flint.ctx.workprec(prec):
        k = kernels(inst.activation, inst.logit_scale)
        kappa = inst.kappa if inst.activation == "leaky" else 0.0
        eta_q = inst.exact_eta()
        params = (arb(inst.K).sqrt(), arb(inst.D - inst.K).sqrt(), arb(int(eta_q.p)) / int(eta_q.q),
                  arb(repr(float(inst.vstar_norm2))), arb(repr(float(kappa))), arb(1))
        c = k.prepare(*params)
        consts = constants(inst, k, c)
        bm = rg.BoxMap(k, c, consts, consts["atan"], k.facts["slack_power"])
        region_info = {}
        observed = [s for s in chosen + extra if s.window == "observed"]
        lag_pass = LagPass(inst, consts) if observed else None

        def after_T0(state, outcomes):
            C1, x, e = state
            w0 = (C1 / k.star(e, c) - 1) / (e * e * e)
            todo = [s for s in chosen + extra if s.region is not None and s.window != "observed"
                    and outcomes[s.key].counterexample is None
                    and outcomes[s.key].undecided_step is None
                    and (s.region not in ("dx_printed_lower", "dx_printed_upper") or inst.logit_scale == "D")]
            conds = tuple(dict.fromkeys(s.region for s in todo))
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
            if lag_pass is not None and res.invariant and lag_pass.set_constants(bm, res.region, lag_constant):
                # the derived statements' conditions on the same region, apart, with a budget of their own
                derived = tuple(dict.fromkeys(s.region for s in observed if s.region == "lag" or bm.q_lag is not None))
                lag_pass.region = rg.prove_region(bm, res.region, derived, max_boxes=max_boxes)
            return [s.key for s in chosen + extra if s.key not in done]

        identity = {"instance": inst.to_dict(), "labels": None if labels is None else sorted(labels),
                    "max_steps": max_steps, "max_boxes": max_boxes, "prec": prec,
                    "superseded": include_superseded, "format": 4, "route": "float" if float_route else "arb",
                    **({"lag_constant": lag_constant} if lag_constant is not None else {}),
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
            if lag_pass is not None and meta.get("lag_pass") is not None:
                lag_pass.restore(meta["lag_pass"], bm, restored["t"])
            elif lag_pass is not None:
                lag_pass.resumed, lag_pass.broken = True, "resumed from a checkpoint without the lag pass's state"

        def saver(snapshot):
            res = region_info.get("result")
            region = None if res is None else {
                "region": {"e_top": res.region.e_top, "w_lo": res.region.w_lo, "w_hi": res.region.w_hi},
                "invariant": res.invariant, "decided": res.decided, "margins": res.margins, "boxes": res.boxes,
                "seconds": res.seconds, "reason": res.reason, "sups": res.sups, "w_T0": ball_text(region_info["w_T0"]),
                "e_T0": ball_text(region_info["e_T0"])}
            ck.save(checkpoint, "prove", identity, {}, {"snapshot": snapshot, "region": region,
                                                        "lag_pass": None if lag_pass is None else lag_pass.to_text()})
            return checkpoint

        def budget_of(T_star):
            return max_steps if max_steps is not None else DEFAULT_MAX_STEPS_FACTOR * T_star

        route = None
        if float_route:
            route = FloatRoute(inst.activation, inst.logit_scale, params, k.first_c1(c))
        iterated = [s for s in chosen + extra if s.window not in ("symbolic", "observed")]
        it = iterate.run(inst, iterated, k=k, c=c, consts=consts, T0_of=default_T0, budget_of=budget_of,
                         after_T0=after_T0, progress=progress,
                         **({"hard_cap": min(max_steps, 10**9), "exact_budget": True}
                            if exact_budget and max_steps is not None else {}),
                         saver=saver if checkpoint is not None else None, checkpoint=checkpoint,
                         checkpoint_every=checkpoint_every,
                         restored=restored, bm=bm, route=route,
                         observe=None if lag_pass is None else lag_pass.observe)
        res = region_info.get("result")
        results, sup = [], []
        for s in chosen + extra:
            if s.window == "observed":
                r = lag_pass.verdict(s, it, lag_pass.region, bm, res)
            else:
                o = it.outcomes.get(s.key) or iterate.Outcome(s.key)
                r = _verdict(s, o, it, res, region_info, float_route)
            (sup if s in extra else results).append(r)
        # (they rest on certified statements, current or superseded: R+- of the superseded D.18 forms)
        both = corollaries.refine(inst, results + sup, it=it, region=res, bm=bm, consts=consts)
        results, sup = both[:len(results)], both[len(results):]
        region = None
        if res is not None:
            region = {**res.region.to_dict(), "invariant": res.invariant, "boxes": res.boxes,
                      "seconds": round(res.seconds, 3), "reason": res.reason,
                      "w_T0": [float(region_info["w_T0"].lower()), float(region_info["w_T0"].upper())],
                      "e_T0": [float(region_info["e_T0"].lower()), float(region_info["e_T0"].upper())],
                      "T0": it.T0, "iteration_seconds": round(it.seconds, 3), "last_step": it.last_step,
                      "radius_T0": it.radius_T0, "prec_bits": prec, "route": "float" if float_route else "arb"}
        return ProofReport(inst, it.T_star, results, sup, time.perf_counter() - t_start, region, {"t1": it.t1})


def _verdict(s, o, it, res, info, float_route: bool = False) -> StatementResult:
    if o.counterexample is not None:
        return StatementResult(s, "refuted", counterexample=o.counterexample)
    if o.undecided_step is not None:
        hint = ("; that step is the float route's (boxes about 1e-13 wide): --route arb (200 bits) may decide it"
                if float_route and it.t1 is not None and o.undecided_step > it.t1 + 1 else "")
        return StatementResult(s, "undecided", reason=f"the certified enclosure straddles the bound at step "
                                                        f"{o.undecided_step}{hint}")
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
    D, K = sp.symbols("D K", positive=True)
    holds = sp.expand(40 * D**2 * (3 * (D - K) / D**2 - sp.Rational(1, 40)) - (120 * (D - K) - D**2)) == 0
    if not holds:
        return StatementResult(s, "undecided", reason="the sympy identity did not reduce to 0")
    return StatementResult(s, "proved", reason="sympy: 40 D^2 (3(D-K)/D^2 - 1/40) - (120 (D-K) - D^2) = 0 "
                                               "identically and 40 D^2 > 0, so the two conditions agree for "
                                               "every D > K >= 1")


class LagPass:
    """The lag lemma and the derived Lemmas D.18/D.19 (statements of window ``observed``) on the
    steps T* .. T0, read off the certified iteration as its states pass through the kernel's
    ``advance`` (the by-products of each step: no second iteration), then carried past T0 by the
    invariant region (docs/proofs.md, "Derived late-phase bounds").

    At every step T* <= T <= T0 (``w = (C1/C1* - 1)/e^3``, ``X = Delta x/(e^2 eta g2)``,
    ``tau = T - T*``, ``R0 = (N/K)^2``, ``A1 = (2 eta g2/scale) psi(2 eta g2/scale)``) the extremes of
    ``|w|``, of ``X``, of ``(e^-2 - R0)/tau`` and of ``(e^-2 - R0 - A1)/tau`` (tau >= 1), and the signs
    of ``e^-2 - R0`` and ``R0 + A1 - e^-2`` at T*, are kept as certified bounds (lower and upper ends
    of the step's balls) with the state where each extreme is reached. Each statement at each of
    these steps is then a comparison of such a bound with a constant:

    * lag lemma ``|w| <= c_lag``; c_lag = the largest upper end of ``|w|`` over the steps and over
      the band of the invariant region (the region's w range), times ``1 + 2^-24``, rounded up to
      a float (or the caller's ``lag_constant``);
    * D.19 derived lower ``X >= q_lag``, ``q_lag = q_min (1 - c_lag (K/N)^2)`` (certified > 0);
    * D.18 derived lower ``e^-2 >= R_lo(T) = R0 + 2 q_lag eta g2 tau/scale`` (1/K - p is
      ``N/(K (N + K sqrt(e^-2)))``, decreasing in e^-2);
    * D.18 derived upper ``e^-2 <= R_hi(T) = R0 + A1 + (2 eta g2/scale) psi_* tau``.

    Past T0 the region conditions ``lag``, ``dx_lower_qlag``, ``increment_lower_qlag``,
    ``increment_upper_psi`` (:mod:`.region`) give each statement at every later step (for D.18 by
    induction from T0: the per-step growth of e^-2 stays between the growths of R_lo and R_hi)."""

    def __init__(self, inst, consts):
        D, K = inst.D, inst.K
        self.inst, self.consts = inst, consts
        self.level = consts["scale"] * (arb(D - K) / K).log()
        self.R0 = (arb(D - K) / K) ** 2
        self.A1 = 2 * consts["eta_g2"] / consts["scale"] * consts["psi_one"]
        self.slope_hi = 2 * consts["eta_g2"] / consts["scale"] * consts["psi_star"]
        self.started = self.resumed = False
        self.t = 0
        self.T_star = self.T0 = None
        self.broken = None          # why the pass cannot decide (T* straddled, a resumed run)
        self.seen_to = None
        self.at_T_star = None       # (e^-2 - R0, R0 + A1 - e^-2) balls at T*
        # quantity -> [certified bound, step, state] for: the largest upper / lower end of |w|, the smallest
        # lower / upper end of X, of (e^-2 - R0)/tau, the largest upper / lower end of (e^-2 - R0 - A1)/tau
        self.ext = {}
        self.c_lag = self.q_lag = None
        self.c_steps = self.band = None
        self.region = None          # the region proof of the conditions of the derived statements
        self.why_not = None

    def observe(self, t, C1, x, dx, e, a1, b0):
        """The state of step t and its by-products, as the iteration takes the step (every step
        from T* on is taken one at a time; steps skipped before T* leave nothing to keep). A run
        seen from step 1, or resumed with the pass's state, can decide."""
        if t == 1 and not self.resumed:
            self.started = True
        if self.started and self.broken is None:
            self._observe(t, C1, x, dx, e, a1, b0)

    def _keep(self, name, value, largest, t, state):
        old = self.ext.get(name)
        if old is None or (value > old[0] if largest else value < old[0]):
            self.ext[name] = [value, t, state]

    def _observe(self, t, C1, x, dx, e, a1, b0):
        self.t = t
        if self.T_star is None:
            if x >= self.level:
                self.T_star, self.T0 = t, default_T0(t)
            elif not x < self.level:
                self.broken = f"T* not certified: p(t) - 1/(2K) straddles 0 at step {t}"
                return
            else:
                return
        if t > self.T0:
            return
        self.seen_to = t
        star = b0 / (-a1)
        e3 = e * e * e
        w = abs(C1 / star - 1) / e3
        X = dx / (e * e * self.consts["eta_g2"])
        inv2 = 1 / (e * e)
        state = (C1, x, e, star, dx)
        self._keep("w_hi", upper(w), True, t, state)
        self._keep("w_lo", lower(w), True, t, state)
        self._keep("X_lo", lower(X), False, t, state)
        self._keep("X_hi", upper(X), False, t, state)
        tau = t - self.T_star
        if tau == 0:
            self.at_T_star = (inv2 - self.R0, self.R0 + self.A1 - inv2, state)
            return
        lo = (inv2 - self.R0) / tau
        hi = (inv2 - self.R0 - self.A1) / tau
        self._keep("lo_lo", lower(lo), False, t, state)
        self._keep("lo_hi", upper(lo), False, t, state)
        self._keep("hi_hi", upper(hi), True, t, state)
        self._keep("hi_lo", lower(hi), True, t, state)

    def to_text(self) -> dict:
        """The pass's state for a checkpoint (balls as exact text)."""
        r = self.region
        return {"started": self.started, "t": self.t, "T_star": self.T_star, "T0": self.T0, "broken": self.broken,
                "seen_to": self.seen_to,
                "at_T_star": None if self.at_T_star is None else [ball_text(self.at_T_star[0]),
                                                                   ball_text(self.at_T_star[1]),
                                                                   [ball_text(b) for b in self.at_T_star[2]]],
                "ext": {k: [v[0], v[1], [ball_text(b) for b in v[2]]] for k, v in self.ext.items()},
                "c_lag": self.c_lag, "c_steps": self.c_steps, "band": self.band,
                "region": None if r is None else {
                    "region": {"e_top": r.region.e_top, "w_lo": r.region.w_lo, "w_hi": r.region.w_hi},
                    "invariant": r.invariant, "decided": r.decided, "margins": r.margins, "boxes": r.boxes,
                    "seconds": r.seconds, "reason": r.reason, "sups": r.sups}}

    def restore(self, data: dict, bm, t_next: int) -> None:
        """Continue from :meth:`to_text` of a checkpoint whose iteration resumes at step ``t_next`` (a
        step observed twice, across an interrupt, leaves every extreme as it was)."""
        self.resumed = True
        self.started, self.T_star, self.T0 = data["started"], data["T_star"], data["T0"]
        self.broken, self.seen_to = data["broken"], data["seen_to"]
        self.t = t_next - 1
        if data["at_T_star"] is not None:
            a, b, st_ = data["at_T_star"]
            self.at_T_star = (ball_from_text(a), ball_from_text(b), tuple(ball_from_text(x) for x in st_))
        self.ext = {k: [v[0], v[1], tuple(ball_from_text(x) for x in v[2])] for k, v in data["ext"].items()}
        self.c_lag, self.c_steps, self.band = data["c_lag"], data["c_steps"], data["band"]
        if self.c_lag is not None:
            K, N = self.inst.K, self.inst.D - self.inst.K
            self.q_lag = self.consts["q_min"] * (1 - arb(self.c_lag) * (arb(K) / N) ** 2)
            bm.c_lag = self.c_lag
            bm.q_lag = self.q_lag if self.q_lag > 0 else None
        rr = data["region"]
        if rr is not None:
            self.region = rg.RegionResult(rg.Region(**rr["region"]), rr["invariant"], rr["decided"], rr["margins"],
                                          rr["boxes"], rr["seconds"], rr["reason"], rr.get("sups"))

    def complete(self, T0) -> bool:
        return self.started and self.broken is None and self.T0 == T0 and self.seen_to == T0

    def set_constants(self, bm, region, lag_constant) -> bool:
        """c_lag (from the steps and the band of ``region``), q_lag; both on ``bm`` for the region
        conditions. False (with :attr:`why_not`) when the pass is incomplete or q_lag > 0 is not certain."""
        bm.c_lag = bm.q_lag = None
        if not (self.started and self.broken is None and self.seen_to is not None and self.seen_to == self.T0):
            self.why_not = self.broken or ("the states T* .. T0 were not all observed (a resumed run, or T0 not "
                                           "reached): the lag pass needs the run from step 1")
            return False
        self.c_steps = self.ext["w_hi"][0]
        band = max(abs(region.w_lo), abs(region.w_hi))
        self.band = band
        if lag_constant is None:
            c = max(self.c_steps, band) * (1 + 2.0**-24)
            c_lag = math.nextafter(c, math.inf)
        else:
            c_lag = float(lag_constant)
        K, N = self.inst.K, self.inst.D - self.inst.K
        q_lag = self.consts["q_min"] * (1 - arb(c_lag) * (arb(K) / N) ** 2)
        self.c_lag, self.q_lag = c_lag, q_lag
        bm.c_lag = c_lag
        if not q_lag > 0:
            self.why_not = (f"q_lag = q_min (1 - c_lag (K/(D-K))^2) > 0 is not certain: c_lag = {c_lag!r}, "
                            f"(D-K)^2/K^2 = {N * N / (K * K)!r}")
            return True   # the lag lemma is still decided; the D.18/D.19 forms are not
        bm.q_lag = q_lag
        return True

    def _counterexample(self, name, lhs, rhs, quantity):
        _, t, (C1, x, e, star, dx) = self.ext[name] if name != "T_star" else (None, self.T_star, self.at_T_star[2])
        D, K = self.inst.D, self.inst.K
        ratio = lhs / rhs
        return {"step": t, "C1": certified_digits(C1), "C2": certified_digits(x * (D - K) / D),
                "C3": certified_digits(x * K / D), "p": certified_digits(1 / (K + (D - K) * e)),
                "lhs": certified_digits(lhs), "rhs": certified_digits(rhs), "ratio": certified_digits(ratio),
                "ratio_radius": float(ratio.rad()), "quantity": quantity}

    def _steps(self, key):
        """(certified, refutation or None, margin) of statement ``key`` on the steps T* .. T0."""
        ext, c = self.ext, self.consts
        if key == "D19.derived.lag":
            c_lag = self.c_lag
            if ext["w_lo"][0] > c_lag:
                C1, x, e, star, _ = ext["w_lo"][2]
                return False, self._counterexample("w_lo", abs(C1 / star - 1), c_lag * e * e * e, "C1"), None
            return ext["w_hi"][0] < c_lag, None, (c_lag - ext["w_hi"][0]) / c_lag
        q = self.q_lag
        if key == "D19.derived.lower":
            if ext["X_hi"][0] < lower(q):
                C1, x, e, star, dx = ext["X_hi"][2]
                return False, self._counterexample("X_hi", dx, q * c["eta_g2"] * e * e, "delta_C2_plus_C3"), None
            return ext["X_lo"][0] > upper(q), None, float(lower((arb(ext["X_lo"][0]) - q) / q))
        base_lo, base_hi, _ = self.at_T_star
        N, K = arb(self.inst.D - self.inst.K), arb(self.inst.K)

        def gap(e):       # 1/K - p
            return N * e / (K * (K + N * e))

        def bound(R):     # 1/K - p at e^-2 = R
            return N / (K * (N + K * R.sqrt()))

        if key == "D18.derived.lower":
            slope = 2 * q * c["eta_g2"] / c["scale"]
            if base_lo < 0 or ("lo_hi" in ext and ext["lo_hi"][0] < lower(slope)):
                name = "T_star" if base_lo < 0 else "lo_hi"
                e, t = (self.at_T_star[2][2], self.T_star) if name == "T_star" else (ext[name][2][2], ext[name][1])
                return False, self._counterexample(name, gap(e), bound(self.R0 + slope * (t - self.T_star)),
                                                   "one_over_K_minus_p"), None
            ok = base_lo >= 0 and ("lo_lo" not in ext or ext["lo_lo"][0] > upper(slope))
            return ok, None, (float(lower((arb(ext["lo_lo"][0]) - slope) / slope)) if "lo_lo" in ext else None)
        if key == "D18.derived.upper":
            slope = self.slope_hi
            if base_hi < 0 or ("hi_lo" in ext and ext["hi_lo"][0] > upper(slope)):
                name = "T_star" if base_hi < 0 else "hi_lo"
                e, t = (self.at_T_star[2][2], self.T_star) if name == "T_star" else (ext[name][2][2], ext[name][1])
                return False, self._counterexample(name, gap(e), bound(self.R0 + self.A1 + slope * (t - self.T_star)),
                                                   "one_over_K_minus_p"), None
            ok = base_hi > 0 and ("hi_hi" not in ext or ext["hi_hi"][0] < lower(slope))
            return ok, None, (float(lower((slope - arb(ext["hi_hi"][0])) / slope)) if "hi_hi" in ext else None)
        raise KeyError(key)

    def constants_dict(self) -> dict:
        """The constants the derived statements use, as certified numbers (floats: q_lag's lower end)."""
        out = {"c_lag": self.c_lag, "c_lag_steps": self.c_steps,
               "c_lag_band": self.band,
               "q_min": [lower(self.consts["q_min"]), upper(self.consts["q_min"])]}
        if self.q_lag is not None:
            out["q_lag"] = [lower(self.q_lag), upper(self.q_lag)]
        out["psi_star"] = [lower(self.consts["psi_star"]), upper(self.consts["psi_star"])]
        out["psi_one"] = [lower(self.consts["psi_one"]), upper(self.consts["psi_one"])]
        return out

    def verdict(self, s, it, res, bm, main_region=None) -> StatementResult:
        """The verdict of a derived statement ``s``: ``res`` is the branch and bound of its region
        conditions, ``main_region`` the main region proof, which c_lag needs (its band)."""
        if it.T_star is None or it.T0 is None or it.state_T0 is None:
            return StatementResult(s, "undecided", reason=it.stopped or "T0 not reached")
        if self.why_not is None and main_region is not None and not main_region.invariant:
            return StatementResult(s, "undecided", reason=f"region: {main_region.reason or 'not invariant'}; c_lag "
                                                          f"needs the invariant region's w-band")
        if self.c_lag is None or not self.complete(it.T0) or self.T_star != it.T_star:
            return StatementResult(s, "undecided", reason=self.why_not or "the lag pass did not run")
        if s.key != "D19.derived.lag" and self.q_lag is None:
            return StatementResult(s, "undecided", reason=self.why_not)
        if s.key != "D19.derived.lag" and bm.q_lag is None:
            return StatementResult(s, "undecided", reason=self.why_not)
        ok, cx, margin = self._steps(s.key)
        if cx is not None:
            return StatementResult(s, "refuted", counterexample=cx)
        if not ok:
            return StatementResult(s, "undecided", reason=f"a certified enclosure straddles the bound at a step "
                                                            f"between T* = {self.T_star} and T0 = {self.T0}")
        if res is None or not res.invariant or not res.decided.get(s.region, False):
            why = (res.reason if res is not None else None) or "region proof not run"
            return StatementResult(s, "undecided", reason=f"region: {why}; holds at every step T* .. T0 = {self.T0}")
        cert = {"T0": it.T0, "region": res.region.to_dict(), "boxes": res.boxes, "min_margin": margin,
                "margin_on_region": res.margins.get(s.region), "region_condition": s.region,
                "steps_checked": [self.T_star, self.T0], "constants": self.constants_dict(),
                "seconds": round(it.seconds + res.seconds, 3)}
        return StatementResult(s, "certified", certificate=cert)
