"""The covariance types "full", "diag" and "spherical" (docs/design.md section 1.2): their closed forms against a
direct numerical integration, the kernels' predictives and statistics against those closed forms, and the three
types as one model at d = 1. The sampler against exact enumeration per type: tests/test_exact_posterior.py.
"""

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import gammaln

from pcrp.basics.errors import ModelError
from pcrp.kernels import clusters
from pcrp.model import NIW, CRP, PowerCRP, resolve_niw
from pcrp.model.niw_math import kernel_tables, log_marginal
from pcrp.sampling.sampler import Sampler, base_measure, slots_for

TYPES = ("full", "diag", "spherical")


def some_points(n, d, seed):
    """n points in d columns of unequal spreads and means (so that the types' variances differ)."""
    return np.random.default_rng(seed).normal(size=(n, d)) * np.linspace(2.0, 0.5, d) + np.linspace(0.5, -1.0, d)


def integrated_log_marginal(X, niw):
    """log m(X) by numerical integration over the variances: given a variance s, each column of the block is
    Gaussian with mean m0_j and covariance s (I + 1 1^T / kappa0) (the mean integrated out in closed form), and
    s ~ Inverse-Gamma((nu0 - d + 1) / 2, S0_jj / 2), one per column ("diag") or one for all ("spherical")."""
    n, d = X.shape
    a0 = (niw.nu0 - d + 1) / 2
    between = np.eye(n) + np.ones((n, n)) / niw.kappa0

    def column_log_density(s, j):
        return stats.multivariate_normal(np.full(n, niw.m0[j]), s * between).logpdf(X[:, j])

    def log_integral(log_density, b0):
        # over t = log s, the integrand shifted by its largest value so that quad sees numbers near 1
        def log_f(t):
            return stats.invgamma(a0, scale=b0).logpdf(np.exp(t)) + t + log_density(np.exp(t))
        grid = np.linspace(-12, 12, 2401)
        top = max(log_f(t) for t in grid)
        value, _ = integrate.quad(lambda t: np.exp(log_f(t) - top), -12, 12, points=[grid[np.argmax([log_f(t) for t in grid])]],
                                  limit=400, epsabs=0, epsrel=1e-11)
        return top + np.log(value)

    if niw.covariance_type == "diag":
        return sum(log_integral(lambda s, j=j: column_log_density(s, j), niw.S0[j, j] / 2) for j in range(d))
    return log_integral(lambda s: sum(column_log_density(s, j) for j in range(d)), niw.S0[0, 0] / 2)


@pytest.mark.parametrize("covariance_type", ["diag", "spherical"])
@pytest.mark.parametrize("n,d", [(1, 1), (3, 1), (2, 2), (4, 2), (5, 3)])
def test_marginal_likelihood_matches_numerical_integration(covariance_type, n, d):
    """The closed form (pcrp.model.niw_math.log_marginal) against quad over the variance: agreement to 1e-7 nats
    (quad's relative 1e-11 on a smooth one-dimensional integrand; a wrong shape a0, a missing log kappa term or a
    wrong log pi power moves the value by 0.1 or more)."""
    X = some_points(n, d, seed=n * 10 + d)
    niw = resolve_niw(some_points(40, d, seed=1), covariance_type=covariance_type)
    closed = log_marginal(X, niw.m0, niw.kappa0, niw.nu0, niw.S0, covariance_type)
    assert closed == pytest.approx(integrated_log_marginal(X, niw), abs=1e-7)


def test_diagonal_marginal_is_the_product_of_one_column_marginals():
    """"diag" is d independent one-column models, each the full NIW at d = 1 with nu0 - d + 1 degrees of freedom
    (the inverse Wishart's marginal of one variance): a second route to the same number, to 1e-10."""
    X = some_points(6, 3, seed=4)
    niw = resolve_niw(some_points(40, 3, seed=2), covariance_type="diag")
    per_column = sum(log_marginal(X[:, [j]], niw.m0[[j]], niw.kappa0, niw.nu0 - 2, niw.S0[[j]][:, [j]], "full")
                     for j in range(3))
    assert log_marginal(X, niw.m0, niw.kappa0, niw.nu0, niw.S0, "diag") == pytest.approx(per_column, abs=1e-10)


def kernel_log_predictive(X_block, x, niw):
    """The kernels' log p(x | X_block) (pcrp.kernels.clusters.log_predictive of one slot rebuilt from the block)."""
    d = x.shape[0]
    n = X_block.shape[0]
    zeros = np.zeros(n + 3)
    tables = kernel_tables(n + 1, d, niw.kappa0, niw.nu0, niw.S0, zeros, zeros, zeros, niw.covariance_type)
    block = np.ascontiguousarray(X_block, dtype=float).reshape(n, d)
    slots = slots_for(block, np.zeros(n, dtype=np.int64), 1, base_measure(niw), tables, niw.covariance_type)
    return float(clusters.log_predictive(x[None, :], slots, 1, tables)[0, 0])


@pytest.mark.parametrize("covariance_type", TYPES)
@pytest.mark.parametrize("d", [1, 2, 20])
def test_kernel_predictives_multiply_to_the_marginal(covariance_type, d):
    """Sequential prediction: log m(x_1..x_n) = sum_i log p(x_i | x_1..x_{i-1}), the kernels' Student-t
    predictives (their per-count constants and a slot's statistics) against the NumPy closed form, to 1e-9 nats
    (rounding of a few dozen terms). d = 20 takes the diagonal's products of DIAG_CHUNK = 16 factors and a rest."""
    X = some_points(7, d, seed=d)
    niw = resolve_niw(some_points(50, d, seed=3), covariance_type=covariance_type)
    sequential = sum(kernel_log_predictive(X[:i], X[i], niw) for i in range(X.shape[0]))
    closed = log_marginal(X, niw.m0, niw.kappa0, niw.nu0, niw.S0, covariance_type)
    assert sequential == pytest.approx(closed, abs=1e-9)


def test_three_types_are_one_model_at_d_1():
    """At d = 1 a diagonal or spherical covariance is the full one: the same kernel tables (to 1e-12), the same
    marginal, and from the same seed the same chain (every code path, the diagonal's logs included, gives the same
    numbers to rounding, so the same uniforms pick the same clusters)."""
    X = some_points(60, 1, seed=5)
    traces, tables = {}, {}
    for covariance_type in TYPES:
        niw = resolve_niw(X, covariance_type=covariance_type)
        zeros = np.zeros(62)
        tables[covariance_type] = kernel_tables(60, 1, niw.kappa0, niw.nu0, niw.S0, zeros, zeros, zeros,
                                                covariance_type).per_count
        sampler = Sampler(X, PowerCRP(1.0, 1.3), niw, seed=7)
        traces[covariance_type] = (sampler.step(200).K, sampler.labels.copy())
    for covariance_type in ("diag", "spherical"):
        np.testing.assert_allclose(tables[covariance_type], tables["full"], rtol=1e-12, atol=1e-12)
        np.testing.assert_array_equal(traces[covariance_type][0], traces["full"][0])
        np.testing.assert_array_equal(traces[covariance_type][1], traces["full"][1])


@pytest.mark.parametrize("covariance_type", TYPES)
def test_kernel_statistics_after_sweeps_match_a_rebuild(covariance_type):
    """After 60 sweeps of rank-one updates (points joining and leaving, splits and merges) each slot's stored
    scale and log-determinant equal those rebuilt from its points, and the kernel's log joint equals the closed
    forms' sum: a wrong update of a diagonal or spherical scale drifts by far more than the 1e-8 allowed."""
    X = some_points(300, 4, seed=6)
    X[:150] += 4.0
    niw = resolve_niw(X, covariance_type=covariance_type)
    prior = CRP(1.0)
    sampler = Sampler(X, prior, niw, seed=3)
    sampler.step(60)
    kept = (sampler.slots.precs[:sampler.K].copy(), sampler.slots.logdets[:sampler.K].copy())
    log_joint = sampler.log_joint()
    sampler.refresh()
    np.testing.assert_allclose(kept[0], sampler.slots.precs[:sampler.K], rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(kept[1], sampler.slots.logdets[:sampler.K], rtol=0, atol=1e-8)
    closed = sum(log_marginal(X[sampler.labels == k], niw.m0, niw.kappa0, niw.nu0, niw.S0, covariance_type)
                 for k in range(sampler.K))
    sizes = sampler.cluster_sizes()
    # the CRP's EPPF, written out: alpha^K prod (n_k - 1)! Gamma(alpha) / Gamma(alpha + N), alpha = 1
    log_eppf = sum(gammaln(sizes)) - gammaln(1.0 + X.shape[0])
    assert log_joint == pytest.approx(closed + log_eppf, abs=1e-6)


@pytest.mark.parametrize("covariance_type", ["diag", "spherical"])
def test_merge_from_statistics_equals_rebuild(covariance_type):
    """clusters.merge_into (the union from two slots' statistics alone, O(d)) against the slot rebuilt from the
    union's points, to 1e-10."""
    X = some_points(30, 3, seed=8)
    niw = resolve_niw(X, covariance_type=covariance_type)
    zeros = np.zeros(32)
    tables = kernel_tables(30, 3, niw.kappa0, niw.nu0, niw.S0, zeros, zeros, zeros, covariance_type)
    base = base_measure(niw)
    labels = (np.arange(30) % 2).astype(np.int64)
    slots = slots_for(X, labels, 2, base, tables, covariance_type)
    assert clusters.merge_into(slots, 0, 1, base, tables, slots, 2)
    whole = slots_for(X, np.zeros(30, dtype=np.int64), 1, base, tables, covariance_type)
    np.testing.assert_allclose(slots.precs[2], whole.precs[0], rtol=1e-10)
    assert slots.logdets[2] == pytest.approx(whole.logdets[0], abs=1e-10)
    np.testing.assert_allclose(slots.means[2], whole.means[0], rtol=1e-10, atol=1e-12)


def test_tied_is_refused_with_the_reason():
    X = some_points(10, 2, seed=0)
    with pytest.raises(ModelError, match="tied.*collapsed sampler.*marginal"):
        resolve_niw(X, covariance_type="tied")
    with pytest.raises(ModelError, match="covariance_type must be one of 'full', 'diag', 'spherical'"):
        resolve_niw(X, covariance_type="banded")


def test_a_scale_the_type_cannot_hold_is_refused():
    """A non-diagonal S0 under "diag", or unequal variances under "spherical", would be silently dropped: refused."""
    with pytest.raises(ModelError, match="diagonal"):
        NIW(np.zeros(2), 1.0, 4.0, np.array([[1.0, 0.5], [0.5, 1.0]]), covariance_type="diag")
    with pytest.raises(ModelError, match="one number times the identity"):
        NIW(np.zeros(2), 1.0, 4.0, np.diag([1.0, 2.0]), covariance_type="spherical")
    assert NIW(np.zeros(2), 1.0, 4.0, np.diag([1.0, 2.0]), covariance_type="diag").covariance_type == "diag"


# ----- where a run is described ------------------------------------------------------------------------------------

def test_a_saved_run_keeps_its_covariance_type_and_reruns_to_the_same_draws(tmp_path):
    """The run specification carries the type into the file and back (an older file without it is full), and the
    rerun of a diagonal run repeats its draws: a type dropped on the way would rerun as full and differ."""
    from pcrp.data import old_faithful
    from pcrp.runs.chains import ChainSet, run_chains
    from pcrp.runs.run_spec import RunSpec, make_run_spec

    X = old_faithful().X
    spec = make_run_spec(X, prior="pcrp", niw={"covariance_type": "diag"}, iters=60, seed=5, n_chains=2)
    chains = run_chains(X, spec)
    chains.save(tmp_path / "run.npz")
    config = ChainSet.load(tmp_path / "run.npz").config
    assert config["covariance_type"] == "diag"
    again = RunSpec.from_dict(config)
    assert again.niw.covariance_type == "diag" and again.as_dict() == spec.as_dict()
    assert np.array_equal(run_chains(X, again).labels, chains.labels)
    older = {k: v for k, v in config.items() if k != "covariance_type"}
    assert RunSpec.from_dict(older).niw.covariance_type == "full"
    assert "clusters' covariance diag" in " ".join(spec.describe())


def test_pcrp_run_takes_the_covariance_type_and_refuses_tied_in_one_line(tmp_path, capsys):
    from pcrp.cli import main
    from pcrp.runs.chains import ChainSet

    out = tmp_path / "r.npz"
    assert main(["run", "old-faithful", "--iters", "40", "--chains", "1", "--covariance-type", "spherical",
                 "--out", str(out)]) == 0
    assert ChainSet.load(out).config["covariance_type"] == "spherical"
    capsys.readouterr()
    assert main(["run", "old-faithful", "--iters", "40", "--covariance-type", "tied", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "tied" in err and "collapsed sampler" in err, err


@pytest.mark.parametrize("covariance_type,shape", [("full", (3, 3)), ("diag", (3,)), ("spherical", ())])
def test_the_estimator_gives_scikit_learns_covariance_shapes(covariance_type, shape):
    """covariances_ in BayesianGaussianMixture's shape per type, in the data's units: two blobs of known spreads, 4
    standard deviations apart in each column, whose per-column variances the estimate recovers within 35% (300
    points a cluster: a sampling error near 8%, and S0 adds about 3% to a scatter of 300 points; a covariance left
    in standardised units, or a spherical one scaled per column, misses by a factor of 2 or more)."""
    from pcrp import PCRPMixture

    rng = np.random.default_rng(0)
    # the spherical type's clusters one spread in every column (as it assumes: unequal ones it splits, rightly),
    # their centres 3 times further apart in the first column, so that the columns' spreads differ and scaling
    # each column on its own would make the clusters unequal in the sampler's units
    spherical = covariance_type == "spherical"
    sds = np.array([2.0, 2.0, 2.0]) if spherical else np.array([3.0, 1.0, 0.3])
    shift = 4 * sds * (np.array([3.0, 1.0, 1.0]) if spherical else 1.0)
    X = np.vstack([rng.normal(0, 1, (300, 3)) * sds, rng.normal(0, 1, (300, 3)) * sds + shift])
    model = PCRPMixture(covariance_type=covariance_type, iters=200, n_chains=2, random_state=0).fit(X)
    assert model.n_clusters_ == 2
    covs = np.asarray(model.covariances_)
    assert covs.shape == (2,) + shape
    variances = {"full": lambda c: np.diagonal(c, axis1=1, axis2=2), "diag": lambda c: c,
                 "spherical": lambda c: np.repeat(c[:, None], 3, axis=1)}[covariance_type](covs)
    expected = sds ** 2
    np.testing.assert_allclose(variances, np.broadcast_to(expected, variances.shape), rtol=0.35)
    assert model.sample(7)[0].shape == (7, 3)


def test_the_explorer_setting_and_link_carry_the_covariance_type():
    from pcrp.app import explorer_settings as es

    values, problems = es.from_query({"covariance": "diag"})
    assert values["covariance"] == "diag" and not problems
    values, problems = es.from_query({"covariance": "tied"})
    assert "covariance" not in values and problems
    assert es.to_query({**es.defaults(), "covariance": "spherical"})["covariance"] == "spherical"


def test_cross_validation_and_the_merge_path_take_the_covariance_type(tmp_path):
    """`pcrp cv` and `pcrp path` with --covariance-type: the cross-validation fits resolve their prior with the type
    (recorded per split), and the path's chains and marginals are the type's."""
    import json

    from pcrp.cli import main

    rng = np.random.default_rng(0)
    X = rng.multivariate_normal([0, 0], [[1, 0.9], [0.9, 1]], 150)
    X[:75] += [5, -5]  # across the correlation: two clusters far apart
    csv_path = tmp_path / "x.csv"
    np.savetxt(csv_path, X, delimiter=",", header="a,b", comments="")
    out = tmp_path / "cv.json"
    assert main(["cv", str(csv_path), "--iters", "20", "--burn-in", "10", "--thin", "5", "--folds", "2",
                 "--r-grid", "1.1,1.5", "--n-jobs", "1", "--covariance-type", "diag", "--out-json", str(out)]) == 0
    settings = json.loads(out.read_text())["settings"]
    assert {split["covariance_type"] for split in settings["niw_per_split"]} == {"diag"}
    paths = {}
    for covariance_type in ("full", "diag"):
        target = tmp_path / f"path-{covariance_type}.json"
        assert main(["path", str(csv_path), "--iters", "40", "--burn-in", "20", "--chains", "1",
                     "--covariance-type", covariance_type,
                     "--out", str(target)]) == 0
        paths[covariance_type] = json.loads(target.read_text())
    assert paths["diag"]["config"]["covariance_type"] == "diag"
    # two clusters of strongly correlated columns: the full type keeps them whole, the diagonal type, which cannot
    # model the correlation, splits them (and its path has merges to offer)
    assert len(set(paths["full"]["partition"])) == 2 < len(set(paths["diag"]["partition"]))
    assert paths["diag"]["merges"]
