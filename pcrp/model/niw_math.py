"""Closed forms of the Normal-Inverse-Wishart model (docs/design.md section 1.2), in NumPy.

These pure functions are the reference the numba kernels are tested against, and
:func:`kernel_tables` turns them into the per-count constants the kernels use.

Notation: a block of n points with mean xbar and scatter C has posterior
kappa_n = kappa0 + n, nu_n = nu0 + n, m_n = (kappa0 m0 + n xbar) / kappa_n and
S_n = S0 + C + (kappa0 n / kappa_n)(xbar - m0)(xbar - m0)^T.
"""

import numpy as np

from scipy.special import gammaln, multigammaln


def posterior_params(X, m0, kappa0, nu0, S0):
    """NIW posterior (m_n, kappa_n, nu_n, S_n) for the rows of ``X`` (n, d)."""
    X = np.atleast_2d(np.asarray(X, dtype=float))
    n = X.shape[0]
    m0 = np.asarray(m0, dtype=float)
    S0 = np.asarray(S0, dtype=float)
    if n == 0:
        return m0.copy(), float(kappa0), float(nu0), S0.copy()
    xbar = X.mean(axis=0)
    centred = X - xbar
    kappa_n = kappa0 + n
    diff = xbar - m0
    S_n = S0 + centred.T @ centred + (kappa0 * n / kappa_n) * np.outer(diff, diff)
    m_n = (kappa0 * m0 + n * xbar) / kappa_n
    return m_n, kappa_n, nu0 + n, S_n


def student_t_params(X, m0, kappa0, nu0, S0):
    """Posterior predictive of one new point given ``X``: (df, location, scale matrix)."""
    m_n, kappa_n, nu_n, S_n = posterior_params(X, m0, kappa0, nu0, S0)
    d = len(m_n)
    df = nu_n - d + 1
    return df, m_n, S_n * (kappa_n + 1) / (kappa_n * df)


def log_predictive(x, X, m0, kappa0, nu0, S0):
    """log p(x | X): the multivariate Student-t density, written out."""
    df, loc, scale = student_t_params(X, m0, kappa0, nu0, S0)
    d = len(loc)
    diff = np.asarray(x, dtype=float) - loc
    _, logdet = np.linalg.slogdet(scale)
    q = diff @ np.linalg.solve(scale, diff)
    return (
        gammaln((df + d) / 2) - gammaln(df / 2) - 0.5 * d * np.log(df * np.pi)
        - 0.5 * logdet - 0.5 * (df + d) * np.log1p(q / df)
    )


def log_marginal(X, m0, kappa0, nu0, S0):
    """log m(X) for the rows of ``X`` (n, d) under NIW(m0, kappa0, nu0, S0)."""
    X = np.atleast_2d(np.asarray(X, dtype=float))
    _, _, _, S_n = posterior_params(X, m0, kappa0, nu0, S0)
    return log_marginal_of(X.shape[0], S_n, kappa0, nu0, S0)


def log_marginal_of(n, S_n, kappa0, nu0, S0):
    """log m(X) of a block of ``n`` points whose NIW posterior scale is ``S_n`` (d, d): the closed form of
    docs/design.md section 1.2, the one place it is written (from the points: :func:`log_marginal`; from a block's
    statistics: :func:`pcrp.analyses.path.log_marginal`)."""
    d = np.shape(S0)[0]
    kappa_n, nu_n = kappa0 + n, nu0 + n
    _, logdet0 = np.linalg.slogdet(S0)
    _, logdet_n = np.linalg.slogdet(S_n)
    return float(
        -0.5 * n * d * np.log(np.pi)
        + multigammaln(nu_n / 2, d) - multigammaln(nu0 / 2, d)
        + 0.5 * nu0 * logdet0 - 0.5 * nu_n * logdet_n
        + 0.5 * d * (np.log(kappa0) - np.log(kappa_n))
    )


def kernel_tables(n_max, d, kappa0, nu0, S0, log_g, log_new, log_v):
    """The constants the kernels read, per block size n = 0 .. n_max + 1 and per number of blocks K: a
    :class:`pcrp.kernels.state.Tables`.

    ``log_g`` (n_max + 2,): the seating prior's log g(n) = log W(n + 1) / W(n) (entry 0 unused);
    ``log_new``, ``log_v`` (n_max + 2,): its per-K tables (:func:`pcrp.model.prior_tables`). The NIW's columns
    are the closed forms above: the Student-t's constants, the marginal's, and the steps of the rank-one updates.
    """
    from ..kernels import state

    n = np.arange(n_max + 2, dtype=float)
    kappa_n = kappa0 + n
    nu_n = nu0 + n
    df = nu_n - d + 1
    _, logdet0 = np.linalg.slogdet(S0)
    log_g = np.asarray(log_g, dtype=float)
    # kappa_{n-1} = kappa0 + (n - 1) for n >= 1, not kappa_n - 1: for n = 1 the latter rounds a tiny kappa0 to 0
    # (kappa0 = 1e-300). Entry 0 is never used for a removal.
    kappa_less = np.where(n >= 1, kappa0 + (n - 1), 1.0)
    columns = dict(
        log_g=log_g,
        log_w=np.concatenate(([0.0, 0.0], np.cumsum(log_g[1:-1]))),  # sum_{j=1}^{n-1} log g(j); 0 at n = 0, 1
        t_const=gammaln((df + d) / 2) - gammaln(df / 2) - 0.5 * d * np.log(np.pi * (kappa_n + 1) / kappa_n),
        t_scale=kappa_n / (kappa_n + 1),
        t_exponent=(df + d) / 2,
        marginal_const=(-0.5 * n * d * np.log(np.pi) + multigammaln(nu_n / 2, d) - multigammaln(nu0 / 2, d)
                        + 0.5 * nu0 * logdet0 + 0.5 * d * (np.log(kappa0) - np.log(kappa_n))),
        nu=nu_n,
        add_step=1.0 / (kappa_n + 1),
        remove_weight=kappa_n / kappa_less,
        remove_step=1.0 / kappa_less,
    )
    per_count = np.empty((n_max + 2, state.N_COLUMNS))
    for name, values in columns.items():
        per_count[:, getattr(state, name.upper())] = values
    return state.Tables(per_count, np.ascontiguousarray(log_new, dtype=np.float64),
                        np.ascontiguousarray(log_v, dtype=np.float64))
