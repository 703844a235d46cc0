"""log and exp written with arithmetic and bit operations only, so that LLVM vectorises loops over them.

numba calls libm's log and exp one value at a time (no vector maths library is linked in), and in the
sweep those calls cost more than the rest of a point-cluster evaluation at d <= 3. log is fdlibm's
algorithm (the reduction to [sqrt(1/2), sqrt(2)) and a degree-14 polynomial in s = f / (2 + f)); exp is
fdlibm's reduction by k ln 2 followed by a degree-13 Taylor polynomial without division (fdlibm's rational
form divides, and a 512-bit division is the slowest step of a vector pass on these cores: the sweep at d = 1
with about 10 clusters measured 3-4% quicker, docs/records/sweep_ab.md). Both are branch-free so that a loop
over them becomes vector code. Measured against math.log / math.exp (tests/test_kernels.py): at most 1 ulp apart
over the ranges the sweep uses. No fastmath flags here: NaN and infinity keep their meaning. (Inlined into the
sweep, compiled with fastmath={"contract"}, their multiplies and adds may fuse: docs/design.md section 2.)
"""

import math

import numpy as np
from numba import njit, types
from numba.extending import intrinsic

# float64 lanes of one 512-bit vector: loops over these functions are padded to a multiple of this, so that no
# element is left to a scalar remainder loop
LANES = 8


@intrinsic
def _bits(typingctx, x):
    """The 64 bits of a float64 as an int64."""
    if isinstance(x, types.Float) and x.bitwidth == 64:
        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], context.get_value_type(types.int64))
        return types.int64(x), codegen
    return None


@intrinsic
def _float(typingctx, n):
    """The float64 whose 64 bits are the int64 ``n``."""
    if isinstance(n, types.Integer) and n.bitwidth == 64:
        def codegen(context, builder, signature, args):
            return builder.bitcast(args[0], context.get_value_type(types.float64))
        return types.float64(n), codegen
    return None


_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_LG1 = 6.666666666666735130e-01
_LG2 = 3.999999999940941908e-01
_LG3 = 2.857142874366239149e-01
_LG4 = 2.222219843214978396e-01
_LG5 = 1.818357216161805012e-01
_LG6 = 1.531383769920937332e-01
_LG7 = 1.479819860511658591e-01
_MANTISSA = (1 << 52) - 1
_SQRT2_MANTISSA = 0x6A09E667F3BCD  # the mantissa bits of sqrt(2)


@njit(cache=True, nogil=True, error_model="numpy")
def log_positive(y):
    """log(y) for y > 0 (the sweep's 1 + scaled quadratic form, y >= 1 but for rounding); fdlibm's
    __ieee754_log with its branches turned into selects. inf gives inf, y <= 0 and NaN give NaN;
    subnormal y (never a sweep's) are not reduced exactly."""
    bits = _bits(y)
    k = (bits >> 52) - 1023
    mantissa = bits & _MANTISSA
    high = mantissa > _SQRT2_MANTISSA  # m >= sqrt(2): use m / 2 and k + 1
    k = k + (1 if high else 0)
    m = _float(mantissa | ((1022 if high else 1023) << 52))  # in [sqrt(1/2), sqrt(2))
    f = m - 1.0
    hfsq = 0.5 * f * f
    s = f / (2.0 + f)
    z = s * s
    w = z * z
    t1 = w * (_LG2 + w * (_LG4 + w * _LG6))
    t2 = z * (_LG1 + w * (_LG3 + w * (_LG5 + w * _LG7)))
    r = t2 + t1
    dk = np.float64(k)
    value = dk * _LN2_HI - ((hfsq - (s * (hfsq + r) + dk * _LN2_LO)) - f)
    value = np.inf if y == np.inf else value
    return value if y > 0.0 else np.nan


_INV_LN2 = 1.44269504088896338700e+00
# 1 / i! for i = 2 .. 13: exp(r) = 1 + r + r^2 (C2 + C3 r + ... + C13 r^11) on |r| <= ln 2 / 2, the truncation
# below r^14 / 14! <= 5e-18 of the result
_C2, _C3, _C4, _C5, _C6, _C7, _C8, _C9, _C10, _C11, _C12, _C13 = (1.0 / math.factorial(i) for i in range(2, 14))
_EXP_FLOOR = -708.0  # below it exp is subnormal or 0: taken as 0 (a weight under 1e-307 of the reference)
# above it exp is taken at EXP_CEILING (callers check that no argument exceeds it); e^600 (4e260) leaves room for
# the sum of any number of such weights to stay finite
EXP_CEILING = 600.0


@njit(cache=True, nogil=True, error_model="numpy")
def exp_in_range(t):
    """exp(t) for -708 <= t <= EXP_CEILING (a weight relative to a reference), 0 below -708 and exp(EXP_CEILING)
    above it: fdlibm's reduction t = k ln 2 + r, |r| <= ln 2 / 2, then the Taylor polynomial of degree 13 in r,
    evaluated in Estrin's scheme (pairs, then powers r^2, r^4, r^8), which has no division and a short
    dependency chain.

    -inf gives 0, +inf gives exp(EXP_CEILING) and NaN gives NaN.
    """
    inside = t >= _EXP_FLOOR  # False for NaN too: the reduction below then sees -708, never NaN
    t0 = t
    t = min(t, EXP_CEILING) if inside else _EXP_FLOOR
    k = np.int64(t * _INV_LN2 + (0.5 if t > 0.0 else -0.5))  # round to nearest (truncation toward zero)
    dk = np.float64(k)
    r = (t - dk * _LN2_HI) - dk * _LN2_LO
    r2 = r * r
    r4 = r2 * r2
    r8 = r4 * r4
    low = (_C2 + _C3 * r) + (_C4 + _C5 * r) * r2
    middle = (_C6 + _C7 * r) + (_C8 + _C9 * r) * r2
    high = (_C10 + _C11 * r) + (_C12 + _C13 * r) * r2
    y = 1.0 + (r + r2 * ((low + middle * r4) + high * r8))
    result = y * _float((k + 1023) << 52)
    return result if inside else (0.0 if t0 < 0.0 else t0)
