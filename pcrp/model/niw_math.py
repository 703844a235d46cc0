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


def log_marginal(X, m0, kappa0, nu0, S0, covariance_type="full"):
    """log m(X) for the rows of ``X`` (n, d) under NIW(m0, kappa0, nu0, S0) of the covariance type."""
    X = np.atleast_2d(np.asarray(X, dtype=float))
    _, _, _, S_n = posterior_params(X, m0, kappa0, nu0, S0)
    return log_marginal_of(X.shape[0], S_n, kappa0, nu0, S0, covariance_type)


def type_scale(S, S0, covariance_type):
    """The covariance type's posterior scale from the full-covariance update's S (d, d) of the same points: S itself
    ("full"), the columns' beta_j = S's diagonal ("diag", (d,)), or beta = tr(S) - (d - 1) beta0 ("spherical", a
    number; S0 = beta0 I)."""
    if covariance_type == "diag":
        return np.diag(S).copy()
    if covariance_type == "spherical":
        return float(np.trace(S) - (np.shape(S)[0] - 1) * np.asarray(S0)[0, 0])
    return S


def variance_shape(n, d, nu0, covariance_type):
    """The Inverse-Gamma shape a_n of a block of n points' variances under the "diag" or "spherical" type:
    a0 = (nu0 - d + 1) / 2 (the NIW's prior of one variance) plus n / 2 a column ("diag") or n d / 2 for the one
    variance ("spherical"). The one place the shape is written (type_columns and the posterior's moments read it)."""
    return (nu0 - d + 1) / 2 + (n / 2 if covariance_type == "diag" else n * d / 2)


def covariance_mean(X, m0, kappa0, nu0, S0, covariance_type="full"):
    """(m_n (d,), E[Sigma] (d, d)) of a block's posterior under the covariance type: S_n / (nu_n - d - 1) for
    "full"; beta_n,j / (2 a_n - 2) on the diagonal for "diag" and beta_n / (2 a_n - 2) times the identity for
    "spherical" (a_n the Inverse-Gamma's shape, type_columns). Where the mean does not exist (a shape <= 1) the
    posterior mode: S_n / (nu_n + d + 1), beta / (2 a_n + 2)."""
    m_n, kappa_n, nu_n, S_n = posterior_params(X, m0, kappa0, nu0, S0)
    d = len(m_n)
    n = np.atleast_2d(X).shape[0] if np.size(X) else 0
    if covariance_type == "full":
        return m_n, (S_n / (nu_n - d - 1) if nu_n > d + 1 else S_n / (nu_n + d + 1))
    a_n = variance_shape(n, d, nu0, covariance_type)
    beta = type_scale(S_n, S0, covariance_type)
    variance = beta / (2 * a_n - 2) if a_n > 1 else beta / (2 * a_n + 2)
    return m_n, (np.diag(variance) if covariance_type == "diag" else variance * np.eye(d))


def draw_mean_and_covariance(X, niw, rng):
    """(mu (d,), Sigma (d, d)) drawn from the posterior of a block X (n, d) under ``niw`` and its covariance type:
    Sigma from the inverse Wishart ("full"), each column's variance from its Inverse-Gamma ("diag"), or one
    variance from one Inverse-Gamma ("spherical"); then mu ~ N(m_n, Sigma / kappa_n)."""
    from scipy import stats  # here: scipy.stats costs a third of a second to import

    m_n, kappa_n, nu_n, S_n = posterior_params(X, niw.m0, niw.kappa0, niw.nu0, niw.S0)
    d = len(m_n)
    n = np.atleast_2d(X).shape[0] if np.size(X) else 0
    if niw.covariance_type == "full":
        sigma = np.atleast_2d(stats.invwishart.rvs(df=nu_n, scale=S_n, random_state=rng))
    else:
        a_n = variance_shape(n, d, niw.nu0, niw.covariance_type)
        beta = type_scale(S_n, niw.S0, niw.covariance_type)
        variances = stats.invgamma.rvs(a_n, scale=np.asarray(beta) / 2, random_state=rng)
        sigma = np.diag(np.broadcast_to(variances, (d,)).astype(float))
    chol = np.linalg.cholesky(sigma)
    return m_n + chol @ rng.standard_normal(d) / np.sqrt(kappa_n), sigma


def implied_logdet(S, S0, covariance_type="full"):
    """log|S| of the covariance type's own d x d scale (:func:`type_scale`: S, diag(beta_j), or beta I), from the
    full-covariance update's S (d, d) of the same points."""
    scale = type_scale(S, S0, covariance_type)
    if covariance_type == "diag":
        return float(np.sum(np.log(scale)))
    if covariance_type == "spherical":
        return float(np.shape(S)[0] * np.log(scale))
    return float(np.linalg.slogdet(S)[1])


def type_columns(n, d, kappa0, nu0, covariance_type="full"):
    """Per block size n (an array): the covariance type's Student-t constants and marginal constants, written once
    (docs/design.md section 1.2), as the dict {t_const, t_exponent, marginal_const (without the prior's
    log-determinant term, which is (nu0 / 2) log|S0|, or a0 log|S0| for "diag", (a0 / d) log|S0| for "spherical"), nu
    (the marginal's -(nu / 2) log|S_n|), logdet0_weight (the factor of log|S0|)}. A block's predictive is
    t_const - log|S_n| / 2 - t_exponent log y; its marginal marginal_const + logdet0_weight log|S0| - (nu / 2) log|S_n|.

    "diag": each column an independent Normal-Gamma with shape a_n = a0 + n / 2, a0 = (nu0 - d + 1) / 2, so d
    univariate Student-t's with 2 a_n degrees of freedom. "spherical": one Inverse-Gamma with a_n = a0 + n d / 2,
    an isotropic Student-t with 2 a_n degrees of freedom."""
    kappa_n = kappa0 + n
    log_kappa = np.log(kappa0) - np.log(kappa_n)
    if covariance_type == "full":
        nu_n = nu0 + n
        df = nu_n - d + 1
        return dict(t_const=gammaln((df + d) / 2) - gammaln(df / 2) - 0.5 * d * np.log(np.pi * (kappa_n + 1) / kappa_n),
                    t_exponent=(df + d) / 2,
                    marginal_const=(-0.5 * n * d * np.log(np.pi) + multigammaln(nu_n / 2, d)
                                    - multigammaln(nu0 / 2, d) + 0.5 * d * log_kappa),
                    nu=nu_n, logdet0_weight=0.5 * nu0)
    a0 = variance_shape(0, d, nu0, covariance_type)
    a_n = variance_shape(n, d, nu0, covariance_type)
    if covariance_type == "diag":
        return dict(t_const=d * (gammaln(a_n + 0.5) - gammaln(a_n) - 0.5 * np.log(np.pi * (kappa_n + 1) / kappa_n)),
                    t_exponent=a_n + 0.5,
                    marginal_const=d * (gammaln(a_n) - gammaln(a0) + 0.5 * log_kappa - 0.5 * n * np.log(np.pi)),
                    nu=2 * a_n, logdet0_weight=a0)
    return dict(t_const=gammaln(a_n + d / 2) - gammaln(a_n) - 0.5 * d * np.log(np.pi * (kappa_n + 1) / kappa_n),
                t_exponent=a_n + d / 2,
                marginal_const=gammaln(a_n) - gammaln(a0) + 0.5 * d * log_kappa - 0.5 * n * d * np.log(np.pi),
                nu=2 * a_n / d, logdet0_weight=a0 / d)


def log_marginal_of(n, S_n, kappa0, nu0, S0, covariance_type="full"):
    """log m(X) of a block of ``n`` points whose full-covariance posterior scale is ``S_n`` (d, d), under the
    covariance type: the closed forms of docs/design.md section 1.2 (:func:`type_columns`), the one place they are
    evaluated in NumPy (from the points: :func:`log_marginal`; from a block's statistics:
    :func:`pcrp.analyses.path.log_marginal`)."""
    d = np.shape(S0)[0]
    terms = type_columns(n, d, kappa0, nu0, covariance_type)
    return float(terms["marginal_const"] + terms["logdet0_weight"] * implied_logdet(S0, S0, covariance_type)
                 - 0.5 * terms["nu"] * implied_logdet(S_n, S0, covariance_type))


def kernel_tables(n_max, d, kappa0, nu0, S0, log_g, log_new, log_v, covariance_type="full"):
    """The constants the kernels read, per block size n = 0 .. n_max + 1 and per number of blocks K: a
    :class:`pcrp.kernels.state.Tables`.

    ``log_g`` (n_max + 2,): the seating prior's log g(n) = log W(n + 1) / W(n) (entry 0 unused);
    ``log_new``, ``log_v`` (n_max + 2,): its per-K tables (:func:`pcrp.model.prior_tables`). The base measure's
    columns are the closed forms of the covariance type (:func:`type_columns`): the Student-t's constants, the
    marginal's, and the steps of the rank-one updates (the same for every type).
    """
    from ..kernels import state

    n = np.arange(n_max + 2, dtype=float)
    kappa_n = kappa0 + n
    terms = type_columns(n, d, kappa0, nu0, covariance_type)
    log_g = np.asarray(log_g, dtype=float)
    # kappa_{n-1} = kappa0 + (n - 1) for n >= 1, not kappa_n - 1: for n = 1 the latter rounds a tiny kappa0 to 0
    # (kappa0 = 1e-300). Entry 0 is never used for a removal.
    kappa_less = np.where(n >= 1, kappa0 + (n - 1), 1.0)
    columns = dict(
        log_g=log_g,
        log_w=np.concatenate(([0.0, 0.0], np.cumsum(log_g[1:-1]))),  # sum_{j=1}^{n-1} log g(j); 0 at n = 0, 1
        t_const=terms["t_const"],
        t_scale=kappa_n / (kappa_n + 1),
        t_exponent=terms["t_exponent"],
        marginal_const=terms["marginal_const"] + terms["logdet0_weight"] * implied_logdet(S0, S0, covariance_type),
        nu=terms["nu"],
        add_step=1.0 / (kappa_n + 1),
        remove_weight=kappa_n / kappa_less,
        remove_step=1.0 / kappa_less,
    )
    per_count = np.empty((n_max + 2, state.N_COLUMNS))
    for name, values in columns.items():
        per_count[:, getattr(state, name.upper())] = values
    return state.Tables(per_count, np.ascontiguousarray(log_new, dtype=np.float64),
                        np.ascontiguousarray(log_v, dtype=np.float64))
