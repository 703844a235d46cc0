import numpy as np
import pytest


@pytest.fixture
def blobs2d():
    """Two well separated 2-D blobs, 60 points."""
    rng = np.random.default_rng(0)
    return np.r_[rng.normal(-2, 0.5, (30, 2)), rng.normal(2, 0.5, (30, 2))]


@pytest.fixture(autouse=True)
def restore_main_module():
    """AppTest runs a page as ``__main__`` and leaves it in sys.modules; processes spawned later (Dask's
    LocalCluster workers) would then re-run that page as their main script and fail. Put it back."""
    import sys

    main = sys.modules.get("__main__")
    yield
    if main is not None:
        sys.modules["__main__"] = main


@pytest.fixture(autouse=True, scope="session")
def kernels_compiled_apart():
    """The app's kernels come from a compile in a separate process (pcrp.app.warm_up), which a page that samples
    waits for. The tests start as a page that has been open a while: that compile has finished (the wait itself is
    tested in tests/test_warm_up.py)."""
    from pcrp.app import warm_up

    state = warm_up.wait_until_ready(timeout=900)
    assert not state.error, state.error
