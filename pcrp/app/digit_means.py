"""What a class sees of MNIST clusters: each cluster's mean digit image, small, framed in the cluster's colour.

Pure numpy (a leaf of the app's layer): :func:`cluster_mean_images` averages the raw pixels of each coloured cluster,
:func:`digit_strip` lays those means side by side as one RGB image (one image per row of the Explorer, redrawn with
it). Colours are the live view's (:func:`pcrp.app.live_view.matched_colours`: an index into
:data:`pcrp.plots.palette.PALETTE`, largest cluster first; tiny clusters are left out).
"""

import numpy as np

from ..plots.palette import PALETTE
from .live_view import TINY

DIGIT_SIDE = 28  # MNIST images are 28 x 28 pixels, stored flat (784 values, 0-255 or 0-1)
MAX_DIGITS = 10  # the strip shows at most this many clusters (the largest)
FRAME = 2  # px of colour around each mean image
GAP = 2  # px of white between two framed images


def is_digit_images(raw):
    """Whether ``raw`` (a Dataset's optional per-row data, or None) holds 28 x 28 images, one per row."""
    return raw is not None and raw.ndim == 2 and raw.shape[1] == DIGIT_SIDE * DIGIT_SIDE


def cluster_mean_images(raw, colours, max_digits=MAX_DIGITS):
    """[(colour index, points, (28, 28) mean image in [0, 1])] of each colour of ``colours`` (the (N,) colour index
    per point; TINY points left out), the most points first, at most ``max_digits``. raw: (N, 784) pixels."""
    colours = np.asarray(colours)
    pixels = np.asarray(raw, dtype=np.float64)
    top = pixels.max() if pixels.size else 1.0
    scale = 1.0 / top if top > 1.0 else 1.0  # 0-255 or 0-1, shown as 0-1
    found, counts = np.unique(colours[colours != TINY], return_counts=True)
    order = np.argsort(-counts, kind="stable")[:max_digits]
    out = []
    for i in order:
        mean = pixels[colours == found[i]].mean(axis=0) * scale
        out.append((int(found[i]), int(counts[i]), np.clip(mean, 0.0, 1.0).reshape(DIGIT_SIDE, DIGIT_SIDE)))
    return out


def _rgb(hex_colour):
    h = hex_colour.lstrip("#")
    return np.array([int(h[k:k + 2], 16) for k in (0, 2, 4)], dtype=np.float64)


def digit_strip(means):
    """One (H, W, 3) uint8 image: the mean images of :func:`cluster_mean_images` side by side, dark ink on white,
    each framed in its cluster's colour. None when there are none."""
    if not means:
        return None
    side = DIGIT_SIDE + 2 * FRAME
    strip = np.full((side, len(means) * (side + GAP) - GAP, 3), 255.0)
    for k, (colour, _, image) in enumerate(means):
        left = k * (side + GAP)
        strip[:, left:left + side] = _rgb(PALETTE[colour % len(PALETTE)])
        strip[FRAME:FRAME + DIGIT_SIDE, left + FRAME:left + FRAME + DIGIT_SIDE] = 255.0 * (1.0 - image)[..., None]
    return strip.round().astype(np.uint8)
