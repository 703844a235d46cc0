"""Each MNIST cluster's mean digit image beside its colour (issue 37, item 4): the pure functions and the page."""

import numpy as np

from pcrp.app.digit_means import DIGIT_SIDE, FRAME, cluster_mean_images, digit_strip, is_digit_images
from pcrp.app.live_view import TINY
from pcrp.plots.palette import PALETTE
from tests.test_app import explorer, fast, wait_for
from explorer_support import current_run


def test_each_colour_gets_the_mean_of_its_points_largest_first_and_tiny_points_are_left_out():
    raw = np.zeros((6, DIGIT_SIDE * DIGIT_SIDE))
    raw[:3, 0] = 255.0  # colour 2: three images with the first pixel on
    raw[3:5, 1] = [255.0, 0.0]  # colour 0: two images, half of them with the second pixel on
    colours = np.array([2, 2, 2, 0, 0, TINY])
    means = cluster_mean_images(raw, colours)
    assert [(c, n) for c, n, _ in means] == [(2, 3), (0, 2)]
    assert means[0][2].shape == (DIGIT_SIDE, DIGIT_SIDE)
    assert means[0][2][0, 0] == 1.0 and means[1][2][0, 1] == 0.5 and means[1][2][0, 0] == 0.0


def test_the_strip_frames_each_mean_in_its_clusters_colour():
    image = np.zeros((DIGIT_SIDE, DIGIT_SIDE))
    image[5, 5] = 1.0
    strip = digit_strip([(3, 10, image), (0, 5, image)])
    side = DIGIT_SIDE + 2 * FRAME
    assert strip.shape[0] == side and strip.dtype == np.uint8
    red = tuple(int(PALETTE[3][k:k + 2], 16) for k in (1, 3, 5))
    assert tuple(strip[0, 0]) == red  # the first frame is the first cluster's colour
    assert tuple(strip[FRAME + 5, FRAME + 5]) == (0, 0, 0)  # ink where the mean is 1
    assert tuple(strip[FRAME + 1, FRAME + 1]) == (255, 255, 255)  # paper where it is 0
    assert digit_strip([]) is None
    assert not is_digit_images(None) and not is_digit_images(np.zeros((3, 2)))


def test_the_explorer_shows_each_rows_mean_digits_on_mnist_and_none_on_other_data():
    at = fast(explorer({"data": "mnist", "mnist_n": "200", "chains": "1"}))
    at.button(key="start").click().run()
    run = current_run(at)
    wait_for(lambda: not run.live)
    at.run()
    assert not at.exception, at.exception
    assert len(at.get("image")) == len(run.groups)  # one strip per row
    at = fast(explorer({"data": "old-faithful", "chains": "1"}))
    at.button(key="start").click().run()
    run = current_run(at)
    wait_for(lambda: not run.live)
    at.run()
    assert len(at.get("image")) == 0
