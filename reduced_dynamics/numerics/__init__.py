"""Arithmetic below the models: double-double numbers in numba and MPFR object arrays.

Paper sections: none (numerics; docs/performance.md).

Modules (import them by full path; this ``__init__`` imports nothing):

* ``double_double``: error-free transformations, + - * / sqrt, exp, atan on (hi, lo) pairs;
* ``mpfr_arrays``: exact mpf -> gmpy2 mpfr conversion, local-precision elementwise arithmetic.
"""
