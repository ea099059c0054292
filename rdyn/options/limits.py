"""The numeric bounds of the option table: the ``lo``/``hi`` of options whose range is set by
a representation limit (64-bit integers, the float64-safe range, Python's integer <-> string
conversion) rather than by the mathematics of one option.
"""

# --dps, the working precision in decimal digits
DPS_MIN = 5
DPS_MAX = 4000  # Python's int <-> str conversion limit is 4300 digits; 4000 leaves guard digits
LN_DPS_MAX = 1000  # rdyn ln: at most 1000 digits
# narrower --dps ranges of two routes (their constants live with the routes and are tested equal:
# reduced_dynamics.model_b.gaussian.GAUSSIAN_DPS_MAX, reduced_dynamics.model_a.smooth.SMOOTH_DPS_MAX)
GAUSSIAN_ROUTE_DPS_MAX = 200
SMOOTH_DPS_MAX = 300
MAX_TEACHER_STEPS = 10**9  # GD steps of rdyn ln and of each rdyn sweep configuration
MAX_MODEL_A_STEPS = 10**12  # rdyn teacher: 64-bit step counters everywhere (docs/long_horizons.md)
SEED_MAX = 2**63 - 1
# ||V*||_F^2 scales every Model A loss (W_V = C1 V*, C1 = O(1)): above this the losses leave the
# float64-safe range of reduced_dynamics/runs/divergence.py (STATE_BOUND) before the first step
VSTAR_NORM2_MAX = 1e100
# Model B's alpha0, beta0: |alpha0 beta0| = |gamma0| <= 1e100, the float64-safe range
INITIAL_MAX = 1e50
# label noise of online SGD (crosscheck --mode sgd, figures): the loss holds noise_std^2, so
# above 1e50 it leaves the float64-safe range (1e100) before the first step
NOISE_STD_MAX = 1e50
# the most tokens D (and group size K) of Model A: the collapsed map, the eta -> 0 limits and the
# step counters take D as a 64-bit integer and as a float64 (sqrt(D), log D); 10^18 < 2^63
D_MAX = 10**18
# every other integer option: a 64-bit integer at most (numba loops, numpy seeds, step counters)
INT_OPTION_MAX = 2**63 - 1
