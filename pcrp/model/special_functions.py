"""The special functions of the model's closed forms (log Gamma and the log multivariate Gamma).

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
