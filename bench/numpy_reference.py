"""A plain NumPy implementation of one collapsed Gibbs sweep (Algorithm 1), for speed comparison only.

Per cluster it keeps n, sum x and sum x x^T, and for every point-cluster pair it
forms the NIW posterior and evaluates the Student-t with numpy.linalg, as a
straightforward implementation would. It is not used by the library.
"""

import numpy as np
from scipy.special import gammaln


def student_t_logpdf(x, n, sx, sxx, m0, kappa0, nu0, S0):
    d = x.shape[0]
    kappa_n = kappa0 + n
    nu_n = nu0 + n
    if n > 0:
        xbar = sx / n
        C = sxx - n * np.outer(xbar, xbar)
        diff0 = xbar - m0
        S_n = S0 + C + (kappa0 * n / kappa_n) * np.outer(diff0, diff0)
        m_n = (kappa0 * m0 + sx) / kappa_n
    else:
        S_n, m_n = S0, m0
    df = nu_n - d + 1
    scale = S_n * (kappa_n + 1) / (kappa_n * df)
    _, logdet = np.linalg.slogdet(scale)
    diff = x - m_n
    q = diff @ np.linalg.solve(scale, diff)
    return (gammaln((df + d) / 2) - gammaln(df / 2) - 0.5 * d * np.log(df * np.pi)
            - 0.5 * logdet - 0.5 * (df + d) * np.log1p(q / df))


def numpy_sweep(X, labels, log_g, alpha, m0, kappa0, nu0, S0, rng):
    """One sweep in place on ``labels``; returns the number of point-cluster evaluations."""
    N, d = X.shape
    K = labels.max() + 1
    n = np.bincount(labels, minlength=K).astype(float)
    sx = np.array([X[labels == k].sum(axis=0) for k in range(K)])
    sxx = np.array([X[labels == k].T @ X[labels == k] for k in range(K)])
    evaluations = 0
    for i in rng.permutation(N):
        x = X[i]
        k = labels[i]
        n[k] -= 1
        sx[k] -= x
        sxx[k] -= np.outer(x, x)
        if n[k] == 0:
            n, sx, sxx = np.delete(n, k), np.delete(sx, k, 0), np.delete(sxx, k, 0)
            labels[labels > k] -= 1
            K -= 1
        logw = np.empty(K + 1)
        for c in range(K):
            logw[c] = log_g(n[c]) + student_t_logpdf(x, n[c], sx[c], sxx[c], m0, kappa0, nu0, S0)
        logw[K] = np.log(alpha) + student_t_logpdf(x, 0, None, None, m0, kappa0, nu0, S0)
        evaluations += K + 1
        p = np.exp(logw - logw.max())
        c = rng.choice(K + 1, p=p / p.sum())
        if c == K:
            n = np.append(n, 0.0)
            sx = np.vstack([sx, np.zeros((1, d))])
            sxx = np.concatenate([sxx, np.zeros((1, d, d))])
            K += 1
        n[c] += 1
        sx[c] += x
        sxx[c] += np.outer(x, x)
        labels[i] = c
    return evaluations
