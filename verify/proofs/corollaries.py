"""Refutations that follow from certified statements and the invariant region, for printed
statements that are false only far beyond T0 (docs/proofs.md, "Refuted from the region").

The iteration refutes a statement at a step it reaches; some printed statements fail only at
steps the step budget does not reach (Lemma D.18's printed lower side, a 1/T bound on a T^(-1/2)
quantity: at D = 5, K = 1 it fails near 16 T*; Lemma D.19's printed upper side when its constant
``8 pi eta M/(K^3 D^3)`` is below the limit ``eta g2`` of ``Delta x/e^2`` by only a little). Both
are refuted here, rigorously, at *every* step from a certified ``step`` on:

* **D.18 printed lower** (``1/K - p(T) <= 20 D N/(eta K M (T - T*))``): the certified corrected
  upper side gives ``1/K - p(T) >= L(T) = N/(K (N + K sqrt(R+(T))))`` for every ``T >= T* + 1``.
  ``L/rhs = eta M tau/(20 D (N + K sqrt(R+)))`` (``tau = T - T*``, ``R+`` linear in tau) increases
  with tau, so once it is certainly above 1 it stays above 1: the statement is false at every
  ``T >= T* + tau_c``.
* **D.19 printed upper** (``Delta x <= c e^2``, logits/D, when ``c < eta g2`` certainly): on the
  sub-box ``0 <= e <= e_c`` of the invariant region, ``X = Delta x/e^2 > c`` certainly (branch and
  bound over 64 slices of ``[0, e_c]`` times the whole w band); the certified corrected D.18 lower
  side gives ``e(T)^-2 >= R-(T)``, so ``e(T) <= e_c`` for ``T >= T* + tau_c``, and every such step
  with ``T >= T0`` (inside the region) fails.

The counterexample's state fields are null (no single state is computed); ``ratio`` is a certified
lower bound of lhs/rhs at every step from ``step`` on, ``lhs``/``rhs`` the bounds at ``step``
(D.18) or null (D.19), and ``argument`` says which certified statements it rests on.
"""
from __future__ import annotations

import math

from flint import arb

from rdyn.verification.proofs.balls import lower
from rdyn.verification.proofs.iterate import certified_digits

SLICES = 64


def _certified(results, key) -> bool:
    return any(r.statement.key == key and r.verdict in ("certified", "proved") for r in results)


def _undecided(results, key):
    return next((r for r in results if r.statement.key == key and r.verdict == "undecided"), None)


def d18_printed_lower(inst, consts, T_star: int):
    """``(step, lhs_bound, rhs, ratio)`` balls: from ``step`` on, ``1/K - p >= lhs_bound`` (the
    certified corrected D.18 upper side) exceeds the printed ``rhs``; ratio = lhs_bound/rhs."""
    N, K, D = arb(inst.D - inst.K), arb(inst.K), arb(inst.D)
    eta, M, eg2, scale = consts["eta"], consts["M"], consts["eta_g2"], consts["scale"]

    def parts(tau: int):
        R = (N / K) ** 2 + 2 * eg2 * (tau + 1) / scale
        L = N / (K * (N + K * R.sqrt()))
        rhs = 20 * D * N / (eta * K * M * tau)
        return L, rhs, L / rhs

    def ratio_float(tau: float) -> float:
        n, k, e, m, g, s = (inst.D - inst.K), inst.K, float(eta), float(M), float(eg2), float(scale)
        R = (n / k) ** 2 + 2 * g * (tau + 1) / s
        return e * m * tau / (20 * inst.D * (n + k * math.sqrt(R)))

    lo, hi = 1.0, 2.0
    while ratio_float(hi) <= 1.0:
        lo, hi = hi, 2 * hi
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if ratio_float(mid) <= 1.0 else (lo, mid)
    tau = max(1, int(math.ceil(hi)))
    while True:
        L, rhs, ratio = parts(tau)
        if ratio > 1:
            return T_star + tau, L, rhs, ratio
        tau += max(1, tau // 10**6)


def d19_printed_upper(bm, region, consts, T_star: int, T0: int, inst):
    """``(step, ratio_lower)`` when every step from ``step`` on certainly fails the printed D.19
    upper side (None when ``c < eta g2`` is not certain or no e_c is found)."""
    c, eg2 = consts.get("printed_d19_upper"), consts["eta_g2"]
    if c is None or not c < eg2:
        return None
    e_c = region.e_top
    for _ in range(40):
        xs = []
        ok = True
        for i in range(SLICES):
            a, b = e_c * i / SLICES, e_c * (i + 1) / SLICES
            got = bm.evaluate(a, b, region.w_lo, region.w_hi, ["dx_printed_upper"], None)["dx_printed_upper"]
            if got[0] != -1:
                ok = False
                break
            xs.append(c - got[1] * eg2)       # (c - X)/(eta g2) -> X
        if ok:
            x_min = min(lower(x) for x in xs)
            N, K, scale = arb(inst.D - inst.K), arb(inst.K), consts["scale"]
            need = ((1 / arb(e_c) ** 2 - (N / K) ** 2) * scale / (2 * consts["q_min"] * eg2))
            tau = max(1, int(math.ceil(float(need.upper()))) + 2)   # R-(T) has T - T* - 1
            return max(T0, T_star + tau), arb(x_min) / c, e_c
        e_c /= 2
    return None


def refine(inst, results, *, it, region, bm, consts):
    """``results`` with the undecided printed D.18 lower and D.19 upper sides replaced by the
    refutations above where their premises are certified (the list is returned, new objects for the
    changed entries, of the same class as the undecided ones: this module does not import the
    engine that calls it)."""
    out = list(results)
    if it.T_star is None or it.T0 is None:
        return out
    r = _undecided(out, "D18.printed.lower")
    if r is not None and _certified(out, "D18.corrected.upper"):
        step, L, rhs, ratio = d18_printed_lower(inst, consts, it.T_star)
        cx = {"step": step, "C1": None, "C2": None, "C3": None, "p": None, "lhs": certified_digits(L),
              "rhs": certified_digits(rhs),
              "ratio": certified_digits(ratio), "ratio_radius": float(ratio.rad()), "quantity": r.statement.quantity,
              "holds_from": step,
              "argument": "1/K - p(T) >= N/(K (N + K sqrt(R+(T)))) for T >= T* + 1 (the certified corrected "
                          "D.18 upper side); the ratio of that bound to the printed right-hand side increases "
                          "with T and exceeds 1 from this step on (lhs: the bound, not the state)"}
        out[out.index(r)] = type(r)(r.statement, "refuted", counterexample=cx)
    r = _undecided(out, "D19.printed.upper")
    if (r is not None and region is not None and region.invariant and inst.logit_scale == "D"
            and _certified(out, "D18.corrected.lower")):
        got = d19_printed_upper(bm, region.region, consts, it.T_star, it.T0, inst)
        if got is not None:
            step, ratio, e_c = got
            cx = {"step": step, "C1": None, "C2": None, "C3": None, "p": None, "lhs": None, "rhs": None,
                  "ratio": certified_digits(ratio), "ratio_radius": float(ratio.rad()), "quantity": r.statement.quantity,
                  "holds_from": step,
                  "argument": f"on the invariant region with e <= {e_c:.6g}, Delta x/e^2 > 8 pi eta M/(K^3 D^3) "
                              f"(branch and bound); e(T)^-2 >= R-(T) (the certified corrected D.18 lower side) "
                              f"puts e(T) there from this step on (T >= T0); ratio: a lower bound of "
                              f"lhs/rhs at every such step"}
            out[out.index(r)] = type(r)(r.statement, "refuted", counterexample=cx)
    return out
