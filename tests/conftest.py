import numpy as np
import pytest


@pytest.fixture
def blobs2d():
    """Two well separated 2-D blobs, 60 points."""
    rng = np.random.default_rng(0)
    return np.r_[rng.normal(-2, 0.5, (30, 2)), rng.normal(2, 0.5, (30, 2))]
