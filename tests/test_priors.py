"""The prior seam of issue 19: every Gibbs-type prior p(partition) = V_N(K) prod_k W(n_k) (docs/design.md section 1.1)
is two log tables, and everything that uses a prior -- the kernels (Gibbs step, split-merge, log joint), exact
enumeration, the one-customer view, the posterior predictive, cross validation's held-out scores and the
sequential seating -- works for every prior of the registry.

Tolerances. Identities that hold in exact arithmetic (an EPPF summing to 1 over the 877 partitions of N = 7, one
table against another) are checked to 1e-12 relative or 1e-9 absolute in logs: double rounding leaves about
1e-15 per term, and a wrong normaliser or table is off by O(1). The sampler against exact enumeration uses the
rule of tests/test_exact_posterior.py (bounds from the measured ESS); for every case here the exact p_K of the
prior is more than 20 such bounds away from the CRP's, so a sampler that ignored the prior would fail.
Simulations against closed forms use 4 standard errors (a false alarm about 6e-5 per value, normal
approximation).
"""

import math

import numpy as np
import pytest
from scipy.special import gammaln, logsumexp

from pcrp.model import niw_math
from pcrp.kernels.state import LOG_G, LOG_W
from pcrp.model.exact import exact_posterior, k_distribution, set_partitions
from pcrp.model import (
    CRP, DEFAULT_R, LAM_MAX, MFM, PRIORS, ModelError, PitmanYor, PowerCRP, SparseFiniteMixture, log_weight_table,
    make_prior, prior_tables, resolve_niw,
)
from pcrp.model.niw_math import kernel_tables
from pcrp.runs.chains import run_chain as run
from pcrp.sampling.sampler import Sampler
from pcrp.basics.errors import SamplerError
NORMALISED = [CRP(0.7), CRP(2.5), PitmanYor(1.0, 0.4), PitmanYor(-0.2, 0.5), PitmanYor(3.0, 0.0), MFM(1.0, 1.0),
              MFM(0.3, 4.0), MFM(2.0, 0.2), SparseFiniteMixture(0.5, 3), SparseFiniteMixture(0.01, 10),
              SparseFiniteMixture(1.0, 1)]
ALL = NORMALISED + [PowerCRP(1.0, 1.3), PowerCRP(0.5, 2.0)]


def ids(priors):
    return [p.label() for p in priors]


# ---------------------------------------------------------------------------------------------------------------
# The tables


@pytest.mark.parametrize("prior", NORMALISED, ids=ids(NORMALISED))
@pytest.mark.parametrize("n", [1, 2, 3, 5, 7])
def test_each_eppf_sums_to_one_over_all_partitions(prior, n):
    log_p = [prior.log_eppf(np.bincount(z)) for z in set_partitions(n)]
    assert math.exp(logsumexp(log_p)) == pytest.approx(1.0, abs=1e-12)


def test_the_pcrp_eppf_is_unnormalised():
    """Its V_N is alpha^K without the unknown normaliser: at r = 1 it sums to (alpha)^(N) / alpha^0 ... = N! / 1
    for alpha = 1, and the registry says so."""
    total = math.exp(logsumexp([PowerCRP(1.0, 1.0).log_eppf(np.bincount(z)) for z in set_partitions(5)]))
    assert total == pytest.approx(math.factorial(5))
    assert not PRIORS["pcrp"].normalised and all(PRIORS[n].normalised for n in ("crp", "py", "mfm", "sfm"))


@pytest.mark.parametrize("prior", ALL, ids=ids(ALL))
def test_kernel_tables_are_the_prior_tables(prior):
    """What the kernels get (kernel_tables' LOG_G / LOG_W columns and prior_tables' log_new / log_v) against the
    prior's log W and log V: LOG_G = log W(n + 1) / W(n); log_v[K] + sum_k LOG_W[n_k] = log V_N(K) + sum_k log W(n_k);
    log_new[K] = log W(1) V_N(K + 1) / V_N(K)."""
    N = 12
    log_W, log_V = prior.tables(N)
    log_new, log_v = prior_tables(prior, N)
    tables = kernel_tables(N, 1, 1.0, 3.0, np.eye(1), log_weight_table(prior, N), log_new, log_v)
    assert np.array_equal(tables.log_new, log_new) and np.array_equal(tables.log_v, log_v)
    n = np.arange(1, N + 1)
    np.testing.assert_allclose(tables.per_count[n, LOG_G], log_W[n + 1] - log_W[n], rtol=1e-12, atol=1e-9)
    np.testing.assert_allclose(tables.per_count[n, LOG_W], log_W[n] - log_W[1], rtol=1e-12, atol=1e-9)
    K = np.arange(1, N + 1)
    finite = np.isfinite(log_V[K])
    np.testing.assert_allclose(log_v[K][finite], (log_V[K] + K * log_W[1])[finite], rtol=1e-12, atol=1e-9)
    assert np.all(np.isneginf(log_v[K][~finite]))
    K = np.arange(1, N)
    with np.errstate(invalid="ignore"):  # -inf - -inf beyond k_max
        expected = log_W[1] + log_V[K + 1] - log_V[K]
    ok = np.isfinite(log_V[K])
    np.testing.assert_allclose(log_new[K][ok], np.where(np.isneginf(log_V[K + 1]), -np.inf, expected)[ok],
                               rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("prior", NORMALISED, ids=ids(NORMALISED))
def test_seating_probabilities_of_a_projective_prior_sum_to_one_unnormalised(prior):
    """For the CRP, PY, MFM and SFM, p(partition of n) = sum over the n + 1-th item's choices of p(partition of
    n + 1): sum_k W(n_k + 1)/W(n_k) V_{n+1}(K)/V_n(K) + W(1) V_{n+1}(K + 1)/V_n(K) = 1. This ties the V tables of
    different N together (the MFM caches one per N)."""
    for sizes in ([1], [2, 1], [3, 1, 1], [4, 4, 2, 1], [7, 3, 1, 1, 1, 2]):
        sizes = np.array(sizes)
        if sizes.size > (prior.max_blocks or sizes.size):
            continue
        n, K = int(sizes.sum()), sizes.size
        v_now = prior.log_v(n, [K])[0]
        v_next = prior.log_v(n + 1, [K])[0]
        terms = list(prior.log_weight(sizes) + v_next - v_now) + [prior.log_new_weight(n + 1, [K])[0] + v_next - v_now]
        assert math.exp(logsumexp(terms)) == pytest.approx(1.0, abs=1e-12)


def brute_force_mfm_log_v(gamma, lam, N, t, k_max=3000):
    """log V_N(t) = log sum_{k=t}^{k_max} k_(t) / (gamma k)^(N) Poisson(k - 1; lam), every term, in plain Python."""
    terms = [math.lgamma(k + 1) - math.lgamma(k - t + 1)
             - sum(math.log(gamma * k + i) for i in range(N))
             + (k - 1) * math.log(lam) - lam - math.lgamma(k)
             for k in range(t, k_max + 1)]
    top = max(terms)
    return top + math.log(math.fsum(math.exp(x - top) for x in terms))


@pytest.mark.parametrize("gamma, lam, N, ts", [
    (1.0, 1.0, 5, [1, 2, 5, 6]),
    (0.3, 4.0, 40, [1, 3, 10, 41]),
    (2.0, 50.0, 200, [1, 30, 60, 150]),
    (0.05, 0.2, 300, [1, 2, 8]),
    (1.0, 200.0, 5, [1, 3, 6]),  # terms peak near k = 200: the sum must run past its first 64 terms
    (0.5, LAM_MAX, 20, [1, 10, 21]),
])
def test_mfm_v_against_a_brute_force_sum(gamma, lam, N, ts):
    """The cached log-sum that stops where the tail is provably below 1e-17 of the largest term against all terms
    up to k = 3000 (beyond, the Poisson factor is below e^-1500 of its peak even at lam = LAM_MAX)."""
    got = MFM(gamma, lam).log_v(N, ts)
    for t, value in zip(ts, got):
        assert value == pytest.approx(brute_force_mfm_log_v(gamma, lam, N, t), rel=1e-12, abs=1e-9)


def test_mfm_tables_at_the_data_limit_are_finite_and_quick():
    import time

    start = time.perf_counter()
    log_new, log_v = prior_tables(MFM(1.0, 1.0), 10_000)
    assert time.perf_counter() - start < 5.0
    assert np.all(np.isfinite(log_new)) and np.all(np.isfinite(log_v))
    for t in (1, 2, 10, 300, 9_999):  # every term up to k = t + 5000, by lgamma
        k = np.arange(t, t + 5001, dtype=float)
        terms = (gammaln(k + 1) - gammaln(k - t + 1) - gammaln(k + 10_000) + gammaln(k)
                 + (k - 1) * 0.0 - 1.0 - gammaln(k))
        assert log_v[t] == pytest.approx(logsumexp(terms), rel=1e-12)  # log W(1) = log gamma = 0


def test_pitman_yor_with_sigma_zero_is_the_crp():
    """Same tables, same exact posterior, and the same chain (the kernels' inputs agree to the last bit except
    log V, which only the recorded log joint uses)."""
    py, crp = PitmanYor(1.7, 0.0), CRP(1.7)
    for a, b in zip(py.tables(9), crp.tables(9)):
        np.testing.assert_allclose(a, b, rtol=1e-13)
    rng = np.random.default_rng(2)
    X = rng.normal(size=(6, 2))
    niw = resolve_niw(X)
    np.testing.assert_allclose(exact_posterior(X, py, niw)[1], exact_posterior(X, crp, niw)[1], rtol=1e-10)
    Y = np.r_[rng.normal(-2, 1, (40, 2)), rng.normal(2, 1, (40, 2))]
    chain_py = run(Y, py, resolve_niw(Y), iters=200, burn_in=100, thin=10, seed=3)
    chain_crp = run(Y, crp, resolve_niw(Y), iters=200, burn_in=100, thin=10, seed=3)
    assert np.array_equal(chain_py.K, chain_crp.K) and np.array_equal(chain_py.labels, chain_crp.labels)
    np.testing.assert_allclose(chain_py.log_joint, chain_crp.log_joint, rtol=1e-12)


# ---------------------------------------------------------------------------------------------------------------
# The registry and make_prior


def test_registry_entries_match_their_classes_and_build_at_their_defaults():
    for name, spec in PRIORS.items():
        assert spec.name == name and spec.cls().name == name
        fields = [f for f in spec.cls.__dataclass_fields__ if f != "name"]
        assert fields == [p.name for p in spec.params]
        prior = make_prior(name)
        assert prior == spec.cls(**spec.defaults())
        assert prior.params() == {"prior": name, **spec.defaults()}
        for p in spec.params:
            assert p.help and p.label and (p.low is None or p.high is None or p.low < p.high)
            assert getattr(spec.cls(), p.name) == p.default


def test_one_default_for_r():
    from pcrp.estimator import PCRPMixture

    assert PRIORS["pcrp"].param("r").default == DEFAULT_R == PowerCRP().r == 1.1
    spec = PCRPMixture()._spec(np.random.default_rng(0).normal(size=(20, 1)))
    assert spec.prior.r == DEFAULT_R  # the estimator's r=None is the registry's default


def test_make_prior_builds_each_prior_from_its_parameters():
    assert make_prior("py", alpha=0.5, sigma=0.3) == PitmanYor(0.5, 0.3)
    assert make_prior("mfm", gamma=2.0, lam=3.0) == MFM(2.0, 3.0)
    assert make_prior("sfm", gamma=0.1, k_max=4.0) == SparseFiniteMixture(0.1, 4)
    assert make_prior("pcrp", alpha=2.0, r=None) == PowerCRP(2.0, DEFAULT_R)  # None: not given


@pytest.mark.parametrize("call, message", [
    (lambda: make_prior("dp"), r"Unknown prior 'dp'; choose one of: crp, pcrp, py, mfm, sfm\."),
    (lambda: make_prior("crp", sigma=0.3),
     r"The CRP prior \(crp\) has no parameter sigma \(sigma belongs to py\); its parameters are: alpha in \(0, 1e\+06\]"),
    (lambda: make_prior("crp", r=1.5), r"has no parameter r \(r belongs to pcrp\)"),
    (lambda: make_prior("mfm", k_max=3), r"no parameter k_max .*its parameters are: gamma in \(0, 1000\], "
                                         r"lam in \(0, 1000\]\. Leave k_max out"),
    (lambda: make_prior("sfm", beta=1), r"no parameter beta; its parameters are: gamma in \(0, 1000\], k_max in "
                                        r"\[1, 1e\+06\]"),
    (lambda: make_prior("py", sigma=1.0), r"sigma must be below 1 \(got 1\): discount sigma of the Pitman-Yor, "
                                          r"in \[0, 1\)"),
    (lambda: make_prior("py", alpha=-0.3, sigma=0.2), r"alpha must be > -sigma = -0.2 .*Raise alpha or sigma"),
    (lambda: make_prior("sfm", k_max=2.5), r"k_max must be a whole number \(got 2.5\)"),
    (lambda: make_prior("sfm", k_max=0), r"k_max must be a whole number >= 1 \(got 0\): .* in \[1, 1e\+06\]"),
    (lambda: make_prior("mfm", lam=0), r"lam must be a finite number > 0 \(got 0\): Poisson mean lam of the MFM"),
    (lambda: make_prior("mfm", gamma=5000), r"gamma must be at most 1000 \(got 5000\)"),
    (lambda: make_prior("pcrp", r=float("nan")), r"r must be a finite number > 0 \(got nan\)"),
    (lambda: make_prior("crp", alpha="one"), r"alpha must be a number \(got 'one'\)"),
])
def test_make_prior_errors_name_the_parameter_its_bounds_and_what_to_do(call, message):
    with pytest.raises(ModelError, match=message):
        call()


def test_a_parameter_of_another_prior_is_refused_even_at_its_default():
    with pytest.raises(ModelError, match=r"The CRP prior \(crp\) has no parameter r \(r belongs to pcrp\)"):
        make_prior("crp", alpha=2.0, r=DEFAULT_R)


# ---------------------------------------------------------------------------------------------------------------
# The sampler


def overlapping_data(n, d, seed):
    X = np.random.default_rng(seed).normal(size=(n, d))
    return (X - X.mean(axis=0)) / X.std(axis=0)


EXACT_PRIORS = [PitmanYor(1.0, 0.4), PitmanYor(-0.2, 0.5), MFM(1.0, 1.0), MFM(0.3, 4.0),
                SparseFiniteMixture(0.5, 3), SparseFiniteMixture(1.0, 2)]
EXACT_CASES = [pytest.param(n, d, prior, moves, id=f"N{n}-d{d}-{prior.label()}-{moves}")
               for n, d in ((7, 1), (6, 2)) for moves in ("plain", "dahl") for prior in EXACT_PRIORS]


@pytest.mark.slow
@pytest.mark.parametrize("n,d,prior,moves", EXACT_CASES)
def test_sampler_matches_exact_posterior_for_every_prior(n, d, prior, moves):
    """As tests/test_exact_posterior.py for the CRP and pCRP (same data, sweeps and bounds; measured: TV(K) at
    most 1.5 and TV over partitions at most 1.1 expected TVs, ESS 12,000 to 52,000). The sparse finite mixture
    with k_max = 2 and 3 makes the kernels meet the -inf new-block weight at K = k_max."""
    from test_exact_posterior import K_FACTOR, assert_matches_exact, expected_tv

    X = overlapping_data(n, d, seed=n + d)
    p_k, ess = assert_matches_exact(X, prior, moves)
    # power: the CRP's posterior is far outside the bound
    crp_k = k_distribution(*exact_posterior(X, CRP(1.0), resolve_niw(X)))
    assert 0.5 * np.abs(crp_k - p_k).sum() > 5 * K_FACTOR * expected_tv(p_k, ess)


def blobs(n_blobs, per_blob, seed=0):
    """Unit-variance 2-D blobs on a circle of radius 8."""
    rng = np.random.default_rng(seed)
    angles = 2 * np.pi * np.arange(n_blobs) / n_blobs
    centres = 8.0 * np.column_stack([np.cos(angles), np.sin(angles)])
    return np.repeat(centres, per_blob, axis=0) + rng.normal(size=(n_blobs * per_blob, 2))


def test_sparse_finite_mixture_never_exceeds_k_max():
    """Six well separated blobs want more than three clusters (the CRP's K stays above 3 after 100 sweeps: 4 to 8);
    with k_max = 3
    no sweep, split or start goes beyond 3 (the 'kmeans:10' start is capped to 'kmeans:3')."""
    X = blobs(6, 15)
    niw = resolve_niw(X)
    chain = run(X, SparseFiniteMixture(1.0, 3), niw, iters=300, burn_in=100, thin=10, seed=0, split_merge=2,
                init="kmeans:10")
    assert chain.K.max() == 3 and np.all(chain.K <= 3)
    assert max(len(np.unique(z)) for z in chain.labels) <= 3
    assert np.all(np.isfinite(chain.log_joint))
    assert run(X, CRP(1.0), niw, iters=300, burn_in=100, thin=10, seed=0, split_merge=2).K[100:].min() > 3
    with pytest.raises(SamplerError, match=r"form 5 clusters, but Sparse finite mixture \(gamma=1, k_max=3\) allows "
                                           r"at most 3; start from at most 3 clusters"):
        Sampler(X, SparseFiniteMixture(1.0, 3), niw, init=np.arange(X.shape[0]) % 5)


@pytest.mark.parametrize("prior", NORMALISED[:1] + NORMALISED[2:], ids=ids(NORMALISED[:1] + NORMALISED[2:]))
def test_log_joint_is_the_normalised_log_posterior_numerator(prior):
    """Sampler.log_joint() = log p(z) + sum_k log m(X_k) with p(z) the prior's EPPF (summing to 1), for the
    state after some sweeps."""
    rng = np.random.default_rng(1)
    X = np.r_[rng.normal(-2, 1, (15, 2)), rng.normal(2, 1, (15, 2))]
    niw = resolve_niw(X)
    s = Sampler(X, prior, niw, seed=0, init="random:3")
    s.step(7)
    _, z = np.unique(s.labels, return_inverse=True)
    expected = prior.log_eppf(np.bincount(z)) + sum(
        niw_math.log_marginal(X[z == k], niw.m0, niw.kappa0, niw.nu0, niw.S0) for k in range(z.max() + 1))
    assert s.log_joint() == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("name", list(PRIORS))
def test_every_registry_prior_runs_at_its_defaults(name, blobs2d):
    chain = run(blobs2d, make_prior(name), resolve_niw(blobs2d), iters=40, burn_in=20, thin=5, seed=0)
    assert np.all(np.isfinite(chain.log_joint)) and chain.config["prior"] == name


# ---------------------------------------------------------------------------------------------------------------
# One customer, the predictive of a new point, cross validation


def eppf_conditional(prior, labels, i, options):
    """p(z_i = option | z_-i) from the EPPF of the N items directly: each option's partition's log EPPF."""
    log_p = []
    for option in options:
        z = np.array(labels)
        z[i] = option
        _, z = np.unique(z, return_inverse=True)
        log_p.append(prior.log_eppf(np.bincount(z)))
    log_p = np.array(log_p)
    return np.exp(log_p - logsumexp(log_p))  # -inf (K > k_max) gives 0


# the test partitions below have 3 and 4 blocks: k_max = 4 makes a new table impossible for some customers
FEASIBLE = [p for p in ALL if p.max_blocks is None] + [SparseFiniteMixture(0.5, 4), SparseFiniteMixture(0.01, 10)]


@pytest.mark.parametrize("prior", FEASIBLE, ids=ids(FEASIBLE))
def test_one_customer_prior_is_the_eppf_conditional(prior):
    from pcrp.teaching.one_customer import seating_choice

    rng = np.random.default_rng(0)
    X = rng.normal(size=(9, 2))
    labels = np.array([0, 0, 0, 1, 1, 2, 0, 1, 3])
    niw = resolve_niw(X)
    for i in (0, 5, 8):
        choice = seating_choice(X, labels, i, niw, prior)
        options = [k if k >= 0 else 99 for k in choice.cluster_ids]
        np.testing.assert_allclose(choice.prior, eppf_conditional(prior, labels, i, options), rtol=1e-9, atol=1e-15)


def test_one_customer_cannot_open_a_table_beyond_k_max():
    from pcrp.teaching.one_customer import seating_choice

    X = np.random.default_rng(0).normal(size=(6, 1))
    choice = seating_choice(X, np.array([0, 0, 1, 1, 2, 2]), 0, resolve_niw(X), SparseFiniteMixture(0.5, 3))
    assert choice.prior[-1] == 0 and choice.posterior[-1] == 0 and choice.prior.sum() == pytest.approx(1)


@pytest.mark.parametrize("prior", FEASIBLE + [SparseFiniteMixture(0.5, 3)],
                         ids=ids(FEASIBLE + [SparseFiniteMixture(0.5, 3)]))
def test_new_point_seating_weights_are_the_eppf_of_n_plus_one(prior):
    """density.seating_log_predictive's weights (its columns less the log predictives) are p(z_{N+1} = k | z)
    from the EPPF of N + 1 items; with k_max = 3 and 3 blocks a new one has weight 0."""
    from pcrp.analyses.density import _Blocks, seating_log_predictive

    rng = np.random.default_rng(3)
    X = rng.normal(size=(8, 2))
    labels = np.array([0, 0, 1, 1, 1, 2, 0, 2])
    niw = resolve_niw(X)
    x = rng.normal(size=(1, 2))
    blocks = _Blocks(X, labels, niw)
    log_t = np.append(blocks.log_predictive(x)[0], blocks.log_prior_predictive(x)[0])
    weights = np.exp(seating_log_predictive(x, X, labels, prior, niw)[0] - log_t)
    expected = eppf_conditional(prior, np.append(labels, 0), 8, [0, 1, 2, 99])
    np.testing.assert_allclose(weights, expected, rtol=1e-9)


@pytest.mark.parametrize("prior", [MFM(1.0, 2.0), PitmanYor(0.5, 0.3), SparseFiniteMixture(0.5, 2)],
                         ids=["mfm", "py", "sfm"])
def test_held_out_density_of_cv_agrees_with_the_seating_predictive(prior):
    """cv.score_held_out's log predictive density (kernels + its own normalisation) against
    density.seating_log_predictive averaged over the same draws."""
    from pcrp.analyses.cv import score_held_out
    from pcrp.analyses.density import seating_log_predictive

    rng = np.random.default_rng(5)
    X = np.r_[rng.normal(-2, 1, (20, 2)), rng.normal(2, 1, (20, 2))]
    train, test = X[::2], X[1::2]
    niw = resolve_niw(train)
    draws = np.array([np.repeat([0, 1], 10), np.arange(20) % 2, np.zeros(20, int)])
    _, lpd = score_held_out(train, draws, test, prior, niw)
    per_draw = [logsumexp(seating_log_predictive(test, train, z, prior, niw), axis=1) for z in draws]
    np.testing.assert_allclose(lpd, logsumexp(per_draw, axis=0) - np.log(len(draws)), rtol=1e-9)


# ---------------------------------------------------------------------------------------------------------------
# Sequential seating


@pytest.mark.parametrize("prior", NORMALISED, ids=ids(NORMALISED))
def test_expected_k_closed_forms_against_enumeration(prior):
    """E[K_N] of seating.expected_k against sum over all partitions of N <= 7 of K x EPPF."""
    from pcrp.model.seating import expected_k

    e = expected_k(prior, 7)
    for n in range(1, 8):
        parts = set_partitions(n)
        log_p = np.array([prior.log_eppf(np.bincount(z)) for z in parts])
        assert e[n - 1] == pytest.approx(float(np.sum(np.exp(log_p) * [max(z) + 1 for z in parts])), rel=1e-9)


@pytest.mark.parametrize("prior", [MFM(1.0, 3.0), MFM(0.2, 0.5), PitmanYor(0.5, 0.3), SparseFiniteMixture(0.5, 3),
                                   PowerCRP(1.0, 1.5)], ids=["mfm", "mfm-small", "py", "sfm", "pcrp"])
def test_each_seat_follows_the_eppf_of_the_customers_so_far(prior):
    """For a projective prior seating_probabilities_prior gives p(partition of n + 1) / p(partition of n) from the
    EPPF (so customer n + 1 uses V_{n+1}), summing to 1 before any normalisation; and seat_prior, fed a uniform
    a relative 1e-7 of the new-table probability above (odd customers) or below (even ones) the edge of the
    new table's interval, opens a new table exactly when the uniform is above it: it uses the same
    probabilities to 1e-7 (an MFM seating with V_n in place of V_{n+1} misses this)."""
    from pcrp.model.seating import seat_prior, seating_probabilities_prior

    n = 40
    u = []
    sizes = []
    for i in range(n):
        p = seating_probabilities_prior(prior, sizes)
        above = i % 2 == 1 or not sizes
        u.append(1.0 - p[-1] * (1.0 - 1e-7 if above else 1.0 + 1e-7) if p[-1] > 0 else 0.5)
        choice = seat_prior(prior, i + 1, np.array(u))[-1]
        if p[-1] > 0:
            assert choice == (len(sizes) if above else len(sizes) - 1)
        if prior.normalised:
            now = prior.log_eppf(sizes) if sizes else 0.0
            grown = [prior.log_eppf([s + (j == k) for j, s in enumerate(sizes)]) for k in range(len(sizes))]
            opened = prior.log_eppf(sizes + [1])
            np.testing.assert_allclose(p, np.exp(np.array(grown + [opened]) - now), rtol=1e-9, atol=1e-300)
        if choice == len(sizes):
            sizes.append(0)
        sizes[choice] += 1
    if isinstance(prior, SparseFiniteMixture):
        assert len(sizes) <= prior.k_max


def exact_seating_k(prior, n):
    """E[K_m], m = 1..n, of the sequential process by propagating the distribution of table-size multisets (as
    tests/test_seating.py does for the pCRP), with the prior's weights; independent of pcrp.model.seating."""
    states = {(): 1.0}
    out = []
    for m in range(1, n + 1):
        nxt = {}
        for sizes, prob in states.items():
            log_w = [float(prior.log_weight([s])[0]) for s in sizes] + [float(prior.log_new_weight(m, [len(sizes)])[0])]
            w = np.exp(np.array(log_w) - max(log_w))
            w /= w.sum()
            for j, s in enumerate(sizes):
                grown = tuple(sorted(sizes[:j] + (s + 1,) + sizes[j + 1:]))
                nxt[grown] = nxt.get(grown, 0.0) + prob * w[j]
            if w[-1] > 0:
                opened = tuple(sorted(sizes + (1,)))
                nxt[opened] = nxt.get(opened, 0.0) + prob * w[-1]
        states = nxt
        out.append(sum(prob * len(sizes) for sizes, prob in states.items()))
    return np.array(out)


@pytest.mark.parametrize("prior", [PitmanYor(1.0, 0.5), MFM(1.0, 3.0), SparseFiniteMixture(0.5, 4)],
                         ids=["py", "mfm", "sfm"])
def test_seating_simulation_matches_the_closed_form_expected_k(prior):
    """300 seatings of 200 customers: mean K_N within 4 standard errors of expected_k at N = 10, 50, 200, and
    expected_k agrees with the exact propagation of the seating process at N <= 20 (so the seating uses V_n of
    the n customers seated so far)."""
    from pcrp.model.seating import expected_k, simulate_k_growth_prior

    runs = 300
    sims = simulate_k_growth_prior(prior, 200, runs, seed=1)
    exact = expected_k(prior, 200)
    for n in (10, 50, 200):
        se = sims[:, n - 1].std(ddof=1) / np.sqrt(runs)
        assert abs(sims[:, n - 1].mean() - exact[n - 1]) < 4 * max(se, 1e-3)
    np.testing.assert_allclose(exact_seating_k(prior, 20), exact[:20], rtol=1e-10)
    if isinstance(prior, SparseFiniteMixture):
        assert sims.max() <= prior.k_max


def test_closed_forms_grow_as_the_theory_says():
    """CRP about alpha log N; Pitman-Yor like N^sigma (E[K_N] / N^sigma settles); MFM bounded by E[K] = lam + 1;
    the pCRP has none."""
    from pcrp.model.seating import crp_expected_k, expected_k

    np.testing.assert_allclose(expected_k(CRP(1.5), 500), crp_expected_k(1.5, 500), rtol=1e-12)
    assert expected_k(PowerCRP(1.5, 1.0), 50) == pytest.approx(crp_expected_k(1.5, 50))
    assert expected_k(PowerCRP(1.0, 1.2), 50) is None
    py = expected_k(PitmanYor(1.0, 0.5), 100_000)
    ratio = py[[9_999, 99_999]] / np.array([1e4, 1e5]) ** 0.5
    assert ratio[1] == pytest.approx(ratio[0], rel=0.02)
    mfm = expected_k(MFM(1.0, 2.0), 100_000)
    assert np.all(np.diff(mfm) >= -1e-12) and mfm[-1] < 3.0 and mfm[-1] > 2.9
    gamma, k_max, n = 0.5, 4, 30
    p_empty = math.exp(gammaln((k_max - 1) * gamma + n) - gammaln((k_max - 1) * gamma)
                       - gammaln(k_max * gamma + n) + gammaln(k_max * gamma))
    assert expected_k(SparseFiniteMixture(gamma, k_max), n)[-1] == pytest.approx(k_max * (1 - p_empty), rel=1e-12)
