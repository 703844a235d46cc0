"""The bundled MNIST file (pcrp/datasets/mnist_10k.npz) and the compatibility rule of pcrp.data.mnist.

The pinned checksums below were taken from the loader over the earlier bundle (mnist_5k.npz, 500 per digit,
removed when the bundle grew to 1,000 per digit): a draw of N <= 500 x the number of digits must stay the same
data, since shipped results (cv_r.json's MNIST r, docs/reproduce, the figures) were made on it.
"""

import hashlib
import re
from importlib import resources

import numpy as np
import pytest

from pcrp import data
from pcrp.data.mnist_digits import first_of_each_digit

NPZ = resources.files("pcrp") / "datasets" / "mnist_10k.npz"
README = resources.files("pcrp") / "datasets" / "README.md"

# sha256 of the earlier bundle's images then labels (as bytes), i.e. of every digit's first 500 images here.
OLD_BUNDLE_CONTENT_SHA256 = "809ec085d551285cf9efad12c42a6aead98c62f96eb9936cc5b778870773e50d"

# (digits, n, seed) -> the first 16 hex digits of sha256(raw pixels, then labels as int64) that the loader over the
# earlier bundle returned. The draw does not depend on the embedding, so PCA keeps these fast.
OLD_DRAWS = [
    ((1, 2, 3, 4), 1000, 0, "3a9f4fef36076c40"),  # the default data set (cv_r.json, docs/reproduce mnist-1000)
    ((1, 2, 3, 4), 1000, 1000, "a03dbe2d7e55a510"),  # mnist-1000's and mnist-3000's CV sample
    ((1, 2, 3, 4), 2000, 0, "a34a57d19b986129"),  # the whole earlier pool of digits 1-4
    ((0, 7), 300, 5, "e8458ef359cfdf2b"),
    ((3,), 500, 2, "b7f40d75aeb9c74b"),
    ((1, 2, 3, 4), 200, 7, "da6780647d9d6261"),
]


def draw_digest(ds):
    raw = np.ascontiguousarray(ds.raw)
    return hashlib.sha256(raw.tobytes() + np.asarray(ds.labels, np.int64).tobytes()).hexdigest()[:16]


def test_bundle_holds_1000_images_of_each_digit_sorted_by_digit():
    images, labels = data.bundled_mnist()
    assert images.shape == (10000, 784) and images.dtype == np.uint8
    assert labels.shape == (10000,) and labels.dtype == np.uint8
    assert np.bincount(labels, minlength=10).tolist() == [data.MNIST_PER_DIGIT] * 10 == [1000] * 10
    assert np.all(np.diff(labels.astype(int)) >= 0)
    assert data.MNIST_BUNDLED == 10_000 and data.MNIST_FIRST_PER_DIGIT == 500
    # no image twice (the next 500 skip those already in)
    assert len({row.tobytes() for row in images}) == 10000


def test_stored_sha256_matches_the_file():
    section = README.read_text().split("## mnist_10k.npz", 1)[1].split("\n## ", 1)[0]
    stated = re.findall(r"sha256 of `mnist_10k.npz`: `([0-9a-f]{64})`", section)
    assert stated == [hashlib.sha256(NPZ.read_bytes()).hexdigest()]


def test_first_500_of_each_digit_are_the_earlier_bundle():
    images, labels = data.bundled_mnist()
    first = first_of_each_digit(labels, np.arange(labels.size), 500)
    assert first.size == 5000 and np.array_equal(first, np.concatenate([np.arange(d * 1000, d * 1000 + 500)
                                                                         for d in range(10)]))
    digest = hashlib.sha256(np.ascontiguousarray(images[first]).tobytes() + labels[first].tobytes()).hexdigest()
    assert digest == OLD_BUNDLE_CONTENT_SHA256


@pytest.mark.parametrize("digits, n, seed, digest", OLD_DRAWS)
def test_draws_within_the_earlier_pool_are_unchanged(digits, n, seed, digest):
    assert draw_digest(data.mnist(digits=digits, n=n, embedding="pca", dims=2, seed=seed)) == digest


def test_larger_draws_use_all_1000_of_each_digit():
    images, labels = data.bundled_mnist()
    later = {images[i].tobytes() for i in range(10000) if i % 1000 >= 500}
    for n in (2001, 3000):
        ds = data.mnist(digits=(1, 2, 3, 4), n=n, embedding="pca", dims=2, seed=0)
        from_later = sum(row.tobytes() in later for row in ds.raw)
        assert ds.n == n and 0 < from_later < n
        assert np.bincount(ds.labels, minlength=4).max() <= 1000
    everything = data.mnist(digits=(1, 2, 3, 4), n=4000, embedding="pca", dims=2, seed=0)
    assert sorted(row.tobytes() for row in everything.raw) == sorted(images[1000:5000][i].tobytes()
                                                                     for i in range(4000))
    with pytest.raises(data.DataError, match="between 3 and 4000"):
        data.mnist(digits=(1, 2, 3, 4), n=4001, embedding="pca", dims=2)
