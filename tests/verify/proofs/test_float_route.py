"""The float route of rdyn prove (verify/proofs/float_route.py): a block's bounds contain every
state's e and C1/C1* as arb computes them from the same rows; a row's balls contain its intervals;
a saved route continues with the very rows it would have computed; no bounds where C1 > 0 is not
certain."""
from __future__ import annotations

import numpy as np
import pytest

flint = pytest.importorskip("flint")
from flint import arb  # noqa: E402

from rdyn.verification.proofs.float_route import (C1_HI, C1_LO, FloatRoute, block_bounds,  # noqa: E402
                                                  row_quantities, row_state)

D, K, ETA = 9, 3, "0.02"


@pytest.fixture(scope="module")
def route():
    """The float route of ReLU D = 9, K = 3, eta = 0.02, from the exact C1(1) (x(1) = 0)."""
    from rdyn.verification.proofs.kernels import kernels

    old, flint.ctx.prec = flint.ctx.prec, 200
    try:
        k = kernels("relu", "D")
        params = (arb(K).sqrt(), arb(D - K).sqrt(), arb(ETA), arb(1), arb(0), arb(1))
        first = k.first_c1(k.prepare(*params))
        r = FloatRoute("relu", "D", params, first)
        r.start(first, arb(0), 1)
        return r
    finally:
        flint.ctx.prec = old


def test_block_bounds_contain_every_state_of_the_block(route):
    """Over every row's box (the exact state lies in it), e and rho = C1 (1 - alpha)/beta reach their
    extremes at its corners; computed exactly (arb, 200 bits, exact float inputs) they lie within the
    float bounds, which are not much wider than the block's own extremes."""
    rows = route.peek(2000)[1000:1513]   # steps 1001 .. 1513: a block of 512 and the state after it
    e_lo, e_hi, r_lo, r_hi = block_bounds(rows[:-1], rows[-1])
    assert e_lo < e_hi and r_lo < r_hi
    low, high = [], []
    for row in rows:
        c1_lo, c1_hi, _, _, _, _, _, _, a_lo, a_hi, b_lo, b_hi = (arb(float(v)) for v in row)
        assert e_lo <= float(row[6]) and float(row[7]) <= e_hi
        low.append(c1_lo * (-a_hi) / b_hi)
        high.append(c1_hi * (-a_lo) / b_lo)
        assert low[-1] >= r_lo and high[-1] <= r_hi
    assert float(min(v.mid() for v in low)) - r_lo < 1e-12 and r_hi - float(max(v.mid() for v in high)) < 1e-12


def test_no_bounds_where_c1_is_not_certainly_positive(route):
    rows = route.peek(600)[500:600].copy()
    rows[7, C1_LO] = -1e-300
    assert block_bounds(rows[:-1], rows[-1]) is None
    rows[7, C1_LO], rows[7, C1_HI] = np.nan, np.nan
    assert block_bounds(rows[:-1], rows[-1]) is None


def test_row_balls_contain_the_row_intervals(route):
    row = route.peek(10)[5]
    t, C1, x, e, star, dx = row_state(6, row)
    assert t == 6
    for ball, (lo, hi) in ((C1, row[0:2]), (x, row[2:4]), (dx, row[4:6]), (e, row[6:8])):
        assert ball.lower() <= lo and ball.upper() >= hi
    a1, b0 = row_quantities(6, row)[6:]
    assert (b0 / (-a1)).overlaps(star)


def test_a_saved_route_continues_bit_for_bit(route):
    """Rows computed ahead (the route holds more than it consumed) do not change the saved state:
    the restored route's next rows equal the original's."""
    route.peek(25000)
    route.consume(12345)
    route.peek(13000)   # past the rows held: a second computation (the state is saved from the first)
    route.consume(12655)   # at the second computation's first step: the step before it is still saved
    behind = route.save(route.t - 1)
    saved = route.save(route.t)
    ahead = route.peek(30000)[:20000].copy()
    twin = FloatRoute("relu", "D", route.params, route.first_c1)
    twin.restore(saved)
    assert twin.t == route.t
    assert np.array_equal(twin.peek(20000), ahead)
    twin.restore(behind)
    assert np.array_equal(twin.peek(20001)[1:], ahead)


def test_an_undecided_step_of_the_float_route_points_to_the_arb_route():
    """A straddle past t1 + 1 on the float route says that --route arb may decide it; before, or with
    the arb route, the reason is the plain one."""
    from rdyn.verification.proofs import statements as st
    from rdyn.verification.proofs.engine import _verdict
    from rdyn.verification.proofs.iterate import Iteration, Outcome

    s = next(x for x in st.STATEMENTS if x.key == "D10.corrected")
    it = Iteration(T_star=None, T0=None, state_T0=None, last_step=5000, stopped=None, t1=100)
    late = _verdict(s, Outcome(s.key, undecided_step=5000), it, None, {}, float_route=True)
    assert late.verdict == "undecided" and "--route arb" in late.reason
    early = _verdict(s, Outcome(s.key, undecided_step=50), it, None, {}, float_route=True)
    arb_route = _verdict(s, Outcome(s.key, undecided_step=5000), it, None, {}, float_route=False)
    assert "--route arb" not in early.reason and "--route arb" not in arb_route.reason
