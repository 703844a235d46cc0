"""The 'kmeans:K' start in NumPy (pcrp.sampling.kmeans_start): k-means++ seeds, the nearest-seed assignment, chunking that
changes nothing, and a `pcrp run` that no longer imports scikit-learn."""

import subprocess
import sys

import numpy as np
import pytest

from pcrp.sampling.kmeans_start import kmeans_plusplus, kmeans_start, local_trials, nearest_seed
from pcrp.sampling.starts import initial_labels
BIG = 2**30  # a working-memory budget that reads the data in one chunk


def blobs(n_per=50, k=4, spread=0.3, seed=0):
    """(X (n_per k, 2), labels): k tight clusters on a circle of radius 10."""
    rng = np.random.default_rng(seed)
    angles = 2 * np.pi * np.arange(k) / k
    centres = 10 * np.column_stack([np.cos(angles), np.sin(angles)])
    labels = np.repeat(np.arange(k), n_per)
    return centres[labels] + spread * rng.normal(size=(labels.size, 2)), labels


def test_local_trials_as_scikit_learn():
    assert [local_trials(k) for k in (1, 2, 3, 10, 20, 100)] == [2, 2, 3, 4, 4, 6]


def test_seeds_are_data_points_one_per_separated_cluster():
    """Greedy k-means++ on well separated clusters puts one seed in each (a seed in a cluster already seeded leaves
    a far larger total distance than one in an empty cluster), and the seeds are rows of X."""
    X, labels = blobs()
    for seed in range(5):
        seeds = kmeans_plusplus(X, 4, np.random.default_rng(seed), BIG)
        rows = [int(np.flatnonzero((X == s).all(axis=1))[0]) for s in seeds]
        assert sorted(labels[rows]) == [0, 1, 2, 3], seed


def test_start_recovers_separated_clusters():
    X, labels = blobs()
    start = kmeans_start(X, 4, np.random.default_rng(3), BIG)
    assert len(set(zip(start, labels))) == 4  # the same partition, up to the names of the clusters


def test_nearest_seed_against_direct_distances():
    rng = np.random.default_rng(1)
    X, seeds = rng.normal(size=(500, 3)), rng.normal(size=(7, 3))
    direct = ((X[:, None, :] - seeds[None, :, :]) ** 2).sum(axis=2).argmin(axis=1)
    assert np.array_equal(nearest_seed(X, seeds, BIG), direct)


def test_chunks_change_nothing():
    """A budget of a few rows per chunk gives the same seeds and labels as one chunk (same generator state)."""
    X, _ = blobs(n_per=40, k=5, spread=2.0)
    one = kmeans_start(X, 6, np.random.default_rng(7), BIG)
    tiny_budget = 16 * local_trials(6) * 3  # 3 rows per chunk
    many = kmeans_start(X, 6, np.random.default_rng(7), tiny_budget)
    assert np.array_equal(one, many)


def test_the_generator_decides_the_start():
    X, _ = blobs(n_per=40, k=5, spread=3.0)
    a = kmeans_start(X, 8, np.random.default_rng(11), BIG)
    assert np.array_equal(a, kmeans_start(X, 8, np.random.default_rng(11), BIG))
    assert any(not np.array_equal(a, kmeans_start(X, 8, np.random.default_rng(s), BIG)) for s in range(12, 16))


def test_one_seed_is_one_cluster_and_every_point_its_own_seed():
    X, _ = blobs(n_per=5, k=3)
    assert np.array_equal(kmeans_start(X, 1, np.random.default_rng(0), BIG), np.zeros(15, dtype=np.int64))
    labels = kmeans_start(X, 15, np.random.default_rng(0), BIG)
    assert np.array_equal(np.sort(labels), np.arange(15))  # k = N: every point is a seed (distinct points)


@pytest.mark.parametrize("k", [2, 10])
def test_initial_labels_kmeans_are_compact(k):
    X, _ = blobs(n_per=30, k=3, spread=1.0)
    labels = initial_labels(X, f"kmeans:{k}", np.random.default_rng(0))
    assert labels.dtype == np.int64 and set(labels) == set(range(labels.max() + 1)) and labels.max() + 1 == k
