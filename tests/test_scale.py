"""Summaries at scale: the app's summary with the point estimate beyond the similarity matrix's bound, and the
draws-based point estimate at N = 100,000 under an address-space limit far below the N x N matrix."""

import subprocess
import sys
import textwrap

import numpy as np
import pytest

from pcrp.runs.chains import run_chains
from pcrp.model import PowerCRP, resolve_niw
from pcrp.summaries.partition import cluster_confidence_from_draws, point_estimate, similarity_matrix
from pcrp.analyses.posterior import summarise
from pcrp.runs.run_spec import make_run_spec


def test_summary_at_scale_has_a_point_estimate_and_a_row_sample_of_the_similarity_matrix():
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(-3, 1, (60, 2)), rng.normal(3, 1, (60, 2))])
    niw = resolve_niw(X)
    chains = run_chains(X, make_run_spec(X, prior=PowerCRP(1.0, 1.1), niw=niw, n_chains=2, iters=200, burn_in=100,
                                         thin=5, seed=0))
    old = summarise(chains, X, niw, max_points=50)
    assert old.point is None and old.psm is None  # the earlier bound, kept for callers that rely on it
    new = summarise(chains, X, niw, max_points=50, scale=True)
    assert new.point.n_clusters == 2 and new.psm.shape == (50, 50) and new.psm_rows.shape == (50,)
    assert np.array_equal(new.psm, similarity_matrix(chains.pooled_labels()[:, new.psm_rows]))
    assert np.array_equal(new.psm_labels, new.point.labels[new.psm_rows])
    assert new.confidence == pytest.approx(cluster_confidence_from_draws(chains.pooled_labels(), new.point.labels))
    assert "evenly spaced of the 120 points" in new.note
    assert len(new.modes) == 1 and new.modes_warning == ""
    assert new.density.density.kind == "predictive"
    full = summarise(chains, X, niw)
    assert full.psm.shape == (120, 120) and full.psm_rows is None and np.array_equal(full.psm_labels, full.point.labels)


@pytest.mark.slow
def test_point_estimate_at_100000_points_fits_in_1_gib_of_address_space():
    """The similarity matrix alone would take 37 GiB at N = 100,000; the search's cells take N x 160 x 4 bytes
    (64 MB) and its tables a few MB. Run in a child process whose address space is capped at its size after
    imports plus 1 GiB (RLIMIT_AS), on 400 draws of three noisy clusters; it must find the three clusters."""
    code = textwrap.dedent("""
        import resource, numpy as np
        from pcrp.summaries.partition import point_estimate
        from pcrp.kernels import search  # compiled (or loaded from cache) before the limit
        point_estimate(np.zeros((2, 10), np.int64), n_runs=1)
        used = int(open('/proc/self/statm').read().split()[0]) * resource.getpagesize()
        resource.setrlimit(resource.RLIMIT_AS, (used + 2**30, used + 2**30))
        rng = np.random.default_rng(0)
        N = 100_000
        truth = np.repeat([0, 1, 2], [50_000, 30_000, 20_000])
        draws = np.empty((400, N), np.int32)
        for s in range(400):
            z = truth.copy()
            flip = rng.random(N) < 0.02
            z[flip] = rng.integers(0, 4, flip.sum())
            draws[s] = z
        est = point_estimate(draws, "vi", n_runs=2, seed=0, n_jobs=1)
        print(est.n_clusters, est.n_draws, (est.labels == truth).mean())
    """)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    k, n_draws, agree = out.stdout.split()
    assert int(k) == 3 and int(n_draws) == 160 and float(agree) == 1.0


def test_fast_nmi_and_vi_equal_scikit_learns():
    """nmi_vi (one bincount table) against pcrp.summaries.summary.nmi / vi (scikit-learn) on 200 random pairs, including
    one-cluster labelings; agreement to 1e-12."""
    from pcrp.summaries.summary import nmi, nmi_vi, vi

    rng = np.random.default_rng(0)
    for _ in range(200):
        a = rng.integers(0, rng.integers(1, 6), 50)
        b = rng.integers(0, rng.integers(1, 6), 50) * 3 - 4
        got = nmi_vi(a, b)
        assert got[0] == pytest.approx(nmi(a, b), abs=1e-12) and got[1] == pytest.approx(vi(a, b), abs=1e-12)


def test_pcrp_run_prints_times_metrics_and_saves_modes(tmp_path, capsys):
    import json

    from pcrp.cli import main

    out = tmp_path / "r.npz"
    assert main(["run", "sim1", "--n", "120", "--iters", "80", "--burn-in", "40", "--thin", "4", "--chains", "2",
                 "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "time: sampling " in text and " s, summaries " in text
    assert "against the true labels: NMI " in text and "(MCSE " in text
    with np.load(out) as f:
        modes = json.loads(str(f["modes"]))
        assert "psm" not in f.files  # the similarity matrix only with --psm
    assert sum(len(m["chains"]) for m in modes) == 2 and modes[0]["point_clusters"] >= 1
