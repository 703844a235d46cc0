"""MNIST digits: the bundled 10,000 images (or the standard IDX files), a random subset, and its embedding."""

import gzip
import io
import struct
from pathlib import Path

import numpy as np

from .dataset import DataError, finish_dataset
from .file_bytes import builtin_bytes
from . import limits
from .limits import MAX_CLUSTER_COLUMNS, MNIST_N

MNIST_EMBEDDINGS = ("spectral", "pca")


def bundled_mnist():
    """(images (10000, 784) uint8, labels (10000,) uint8): the 1,000 training images of each digit shipped in
    pcrp/datasets/mnist_10k.npz, sorted by digit. Each digit's first 500 (MNIST_FIRST_PER_DIGIT) are the earlier
    bundle's 500 in its order (MNIST's first 500 training images of that digit), the next 500 the digit's
    following training images (pcrp/datasets/README.md)."""
    with np.load(io.BytesIO(builtin_bytes("mnist_10k.npz")), allow_pickle=False) as f:
        return f["images"], f["labels"]


def first_of_each_digit(labels, pool, per_digit):
    """The rows of ``pool`` (ascending row numbers) that are among the first ``per_digit`` of their digit."""
    rank = np.empty(labels.size, dtype=np.int64)
    for d in np.unique(labels):
        rows = np.flatnonzero(labels == d)
        rank[rows] = np.arange(rows.size)
    return pool[rank[pool] < per_digit]


def read_idx(path):
    """Read one IDX file (optionally .gz) into a NumPy array of its stored shape."""
    opener = gzip.open if str(path).endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] != 0x08:
        raise DataError(f"{Path(path).name} is not an unsigned-byte IDX file (bad magic number).")
    ndim = data[3]
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    body = np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim)
    if body.size != int(np.prod(dims)):
        raise DataError(f"{Path(path).name} is truncated: expected {int(np.prod(dims))} values, found {body.size}.")
    return body.reshape(dims)


def read_mnist_idx_folder(folder):
    """(images (n, 784) uint8, labels (n,)) from a folder with the standard MNIST training IDX files."""
    folder = Path(folder)
    found = {}
    for stem in ("train-images-idx3-ubyte", "train-labels-idx1-ubyte"):
        for suffix in ("", ".gz"):
            if (folder / (stem + suffix)).is_file():
                found[stem] = folder / (stem + suffix)
        if stem not in found:
            raise DataError(f"{folder} has no {stem} (or {stem}.gz); it should hold the MNIST training IDX files.")
    images = read_idx(found["train-images-idx3-ubyte"])
    labels = read_idx(found["train-labels-idx1-ubyte"])
    if images.ndim != 3 or labels.ndim != 1 or images.shape[0] != labels.shape[0]:
        raise DataError("The MNIST IDX files do not match: need images (n, rows, cols) and n labels.")
    return images.reshape(images.shape[0], -1), labels


def mnist(digits=(1, 2, 3, 4), n=MNIST_N, embedding="spectral", dims=2, seed=0, idx_folder=None,
          standardize_data=True):
    """A random subset of MNIST digits, embedded in ``dims`` dimensions.

    digits: which classes; n: total points (at most MNIST_PER_DIGIT = 1,000 per digit in the
    bundled file); embedding: 'spectral' (scikit-learn SpectralEmbedding, as in the paper)
    or 'pca'; dims: 1..50. Raw pixels are kept in ``Dataset.raw`` (n, 784).

    From the bundled file, n <= MNIST_FIRST_PER_DIGIT (500) x the number of digits draws from the
    first 500 images of each chosen digit only (the earlier 5,000-image bundle), so that such a call
    returns exactly the data it returned before the bundle grew to 1,000 per digit; a larger n draws
    from all 1,000 of each. Images from ``idx_folder`` are all drawn from.
    """
    digits = sorted({int(d) for d in digits})
    if not digits or any(d < 0 or d > 9 for d in digits):
        raise DataError("Choose one or more digits between 0 and 9.")
    if embedding not in MNIST_EMBEDDINGS:
        raise DataError(f"embedding must be one of {', '.join(MNIST_EMBEDDINGS)} (got {embedding!r}).")
    dims = int(dims)
    if not 1 <= dims <= MAX_CLUSTER_COLUMNS:
        raise DataError(f"dims must be between 1 and {MAX_CLUSTER_COLUMNS} (got {dims}).")
    images, labels = read_mnist_idx_folder(idx_folder) if idx_folder else bundled_mnist()
    pool = np.flatnonzero(np.isin(labels, digits))
    n = int(n)
    if not idx_folder:
        first = first_of_each_digit(labels, pool, limits.MNIST_FIRST_PER_DIGIT)
        if n <= first.size:
            pool = first
    if not dims < n <= pool.size:
        raise DataError(f"N must be between {dims + 1} and {pool.size} for digits {digits} "
                        f"(the {'given' if idx_folder else 'bundled'} file has {pool.size}); got {n}.")
    rng = np.random.default_rng(seed)
    chosen = np.sort(rng.choice(pool, size=n, replace=False))
    pixels = images[chosen]
    Z = embed(pixels.astype(np.float64) / 255.0, embedding, dims, seed)
    true = labels[chosen].astype(np.int64)
    codes = np.searchsorted(digits, true)
    return finish_dataset(
        "mnist", Z, [f"{embedding}{j + 1}" for j in range(dims)], standardize_data=standardize_data,
        description=(f"MNIST digits {', '.join(map(str, digits))}: {n} images in a {dims}-D "
                     f"{'spectral embedding' if embedding == 'spectral' else 'PCA'} of the pixels."),
        labels=codes, label_names=[str(d) for d in digits], raw=pixels,
        source={"kind": "builtin", "name": "mnist", "digits": digits, "n": n, "embedding": embedding,
                "dims": dims, "seed": seed, "idx_folder": str(idx_folder) if idx_folder else None},
    )


def embed(P, method, dims, seed=0):
    """Embed rows of ``P`` (n, p) into (n, dims) by PCA or spectral embedding (nearest-neighbour graph).

    The same (P, method, dims, seed) gives the same numbers whatever the machine's thread count: the embedding
    runs with one BLAS / OpenMP thread (threadpoolctl, a scikit-learn dependency), the nearest-neighbour search
    with one job, and the eigen-solver is fixed (ARPACK, started from ``seed``'s vector; PCA's full SVD). A
    solver's result otherwise depends on how many BLAS threads split its sums, and the chains amplify a
    difference in the last decimals into different modes.
    """
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        if method == "pca":
            from sklearn.decomposition import PCA

            return PCA(n_components=dims, svd_solver="full", random_state=seed).fit_transform(P)
        from sklearn.manifold import SpectralEmbedding

        return SpectralEmbedding(n_components=dims, affinity="nearest_neighbors", eigen_solver="arpack",
                                 n_neighbors=max(10, P.shape[0] // 100), random_state=seed,
                                 n_jobs=1).fit_transform(P)
