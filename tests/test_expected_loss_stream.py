"""The one-draw-at-a-time expected loss (pcrp.kernels.expected_loss) against the references of pcrp.summaries.partition."""

import numpy as np
import pytest

from pcrp.kernels.expected_loss import expected_numerator
from pcrp.summaries.partition import _loss_table, expected_binder, expected_vi, similarity_matrix


def _stream(labels, draws, loss, weights):
    _, codes = np.unique(labels, return_inverse=True)
    N = labels.shape[0]
    numerator = expected_numerator(codes.astype(np.int64), int(codes.max()) + 1, draws, weights, _loss_table(loss, N))
    return numerator / (N if loss == "vi" else N * (N - 1) / 2)


@pytest.mark.parametrize("dtype", [np.int16, np.int32, np.int64])
def test_streamed_loss_equals_the_references_on_random_draws(dtype):
    """Draws with label values far from 0..K-1 (as a sampler's slots are), more clusters in some draws than the
    kernel's first table width (64), unequal weights; agreement to 1e-9 (sums of a few thousand doubles)."""
    rng = np.random.default_rng(3)
    N, S = 150, 40
    draws = rng.integers(0, 6, size=(S, N)) * 7 + 3
    draws[5] = rng.permutation(N) % 90  # 90 clusters in one draw
    draws = draws.astype(dtype)
    labels = rng.integers(0, 4, size=N) * 11
    w = rng.random(S)
    w /= w.sum()
    assert _stream(labels, draws, "vi", w) == pytest.approx(expected_vi(labels, draws, w), abs=1e-9)
    psm = similarity_matrix(draws, w)
    assert _stream(labels, draws, "binder", w) == pytest.approx(expected_binder(labels, psm), abs=1e-6)
    assert _stream(draws[0], draws[:1], "vi", np.ones(1)) == pytest.approx(0.0, abs=1e-12)


def test_label_values_far_beyond_n_are_scored_without_a_table_that_large():
    """Labels such as 10**12 (a user's own codes) give the same expected loss as their ranks, without a table
    indexed up to 10**12 (which would need terabytes)."""
    from pcrp.summaries.partition import expected_loss

    rng = np.random.default_rng(0)
    draws = rng.integers(0, 4, size=(20, 50))
    labels = rng.integers(0, 3, size=50)
    far = draws.astype(np.int64) * 10**12
    assert expected_loss(labels, far) == pytest.approx(expected_loss(labels, draws), abs=1e-12)
    assert expected_loss(labels, far) == pytest.approx(expected_vi(labels, draws), abs=1e-9)


def test_a_modes_point_estimate_reads_its_chains_in_place():
    """point_estimate(draws, chains=g) searches and scores exactly the draws of labels[g] (same seed, same search
    draws), so modes need no copy of their chains; the reported loss is over all of the chains' draws."""
    from pcrp.summaries.partition import expected_loss, point_estimate

    rng = np.random.default_rng(1)
    truth = np.repeat(np.arange(3), 40)
    labels = np.stack([[np.where(rng.random(120) < 0.1, rng.integers(0, 4, 120), truth + 3 * c) for _ in range(30)]
                       for c in range(4)]).astype(np.int16)
    for max_draws in (None, 20):
        copied = point_estimate(labels[[0, 2]], seed=5, max_draws=max_draws)
        in_place = point_estimate(labels, seed=5, chains=[0, 2], max_draws=max_draws)
        assert np.array_equal(copied.labels, in_place.labels)
        assert in_place.expected_loss == pytest.approx(copied.expected_loss, abs=1e-12)
        assert in_place.expected_loss == pytest.approx(expected_loss(in_place.labels, labels[[0, 2]]), abs=1e-12)
        assert in_place.n_draws_total == 60
