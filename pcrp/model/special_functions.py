"""The special functions of the model's closed forms (log Gamma and the log multivariate Gamma) and of the MCMC
diagnostics (the normal quantile).

SciPy's ``gammaln`` and ``multigammaln`` compute the same to a few units in the last place
(tests/test_niw_closed_forms.py checks it), but importing scipy.special costs a run 0.2-0.3 s of its start
(docs/records/start_up.md), so the library computes them with libm's lgamma through a cached numba kernel.
Both take a float or an array of any shape and return the same shape.
"""

import numpy as np


def gammaln(x):
    """log Gamma of ``x`` (a float or an array of any shape), as SciPy's ``gammaln`` to a few units in the last
    place (libm's lgamma through :func:`pcrp.kernels.niw.log_gamma`: a run never imports scipy.special)."""
    from ..kernels.niw import log_gamma

    values = np.asarray(x, dtype=float)
    out = log_gamma(np.ascontiguousarray(values.reshape(-1))).reshape(values.shape)
    return float(out) if out.ndim == 0 else out


def multigammaln(a, d):
    """log of the d-variate Gamma function at ``a`` (a float or an array): d(d - 1)/4 log(pi) +
    sum_{j=0}^{d-1} log Gamma(a - j/2), SciPy's ``multigammaln`` (defined for a > (d - 1)/2)."""
    a = np.asarray(a, dtype=float)
    total = d * (d - 1) / 4 * np.log(np.pi) + sum(gammaln(a - j / 2) for j in range(d))
    return float(total) if np.ndim(total) == 0 else total


# Wichura's algorithm AS 241 (PPND16; Applied Statistics 37(3), 1988): the normal quantile to about 1e-16 relative, by
# three rational approximations (the central region |p - 1/2| <= 0.425, then r = sqrt(-log min(p, 1 - p)) up to 5 and
# beyond). Coefficients of the numerator and denominator, highest power first.
_CENTRAL = ((2509.0809287301226727, 33430.575583588128105, 67265.770927008700853, 45921.953931549871457,
             13731.693765509461125, 1971.5909503065514427, 133.14166789178437745, 3.387132872796366608),
            (5226.495278852854561, 28729.085735721942674, 39307.89580009271061, 21213.794301586595867,
             5394.1960214247511077, 687.1870074920579083, 42.313330701600911252, 1.0))
_NEAR = ((7.7454501427834140764e-4, 0.0227238449892691845833, 0.24178072517745061177, 1.27045825245236838258,
          3.64784832476320460504, 5.7694972214606914055, 4.6303378461565452959, 1.42343711074968357734),
         (1.05075007164441684324e-9, 5.475938084995344946e-4, 0.0151986665636164571966, 0.14810397642748007459,
          0.68976733498510000455, 1.6763848301838038494, 2.05319162663775882187, 1.0))
_FAR = ((2.01033439929228813265e-7, 2.71155556874348757815e-5, 0.0012426609473880784386, 0.026532189526576123093,
         0.29656057182850489123, 1.7848265399172913358, 5.4637849111641143699, 6.6579046435011037772),
        (2.04426310338993978564e-15, 1.4215117583164458887e-7, 1.8463183175100546818e-5, 7.868691311456132591e-4,
         0.0148753612908506148525, 0.13692988092273580531, 0.59983220655588793769, 1.0))


def _ratio(coefficients, r):
    numerator, denominator = (np.polyval(c, r) for c in coefficients)
    return numerator / denominator


def normal_quantile(p):
    """Phi^-1(p), the standard normal quantile, of ``p`` (an array of any shape, values in (0, 1)): Wichura's AS 241,
    the algorithm of Python's ``statistics.NormalDist.inv_cdf``, vectorised (the same values to a few units in the last
    place: tests/test_mcmc_diagnostics.py), so a rank normalisation of 100,000 values takes about a millisecond, not
    tens, and a run never imports scipy.special for it. 0 and 1 give -inf and inf; outside [0, 1], nan."""
    p = np.asarray(p, dtype=float)
    q = p - 0.5
    central = np.abs(q) <= 0.425
    out = np.empty_like(p)
    r = 0.180625 - q[central] ** 2
    out[central] = q[central] * _ratio(_CENTRAL, r)
    tail = ~central
    with np.errstate(divide="ignore", invalid="ignore"):  # p of 0 or 1 (r infinite) and nan pass through
        r = np.sqrt(-np.log(np.minimum(p[tail], 1.0 - p[tail])))
        x = np.where(r <= 5.0, _ratio(_NEAR, r - 1.6), _ratio(_FAR, r - 5.0))
    x[np.isinf(r)] = np.inf
    out[tail] = np.where(q[tail] < 0, -x, x)
    return out
