"""Speed of one pCRP chain in point-sweeps per second (points x sweeps / wall seconds, one core), the unit of the
Choose r page's work budget (pcrp.cv.CHOOSE_R_BUDGET, POINT_SWEEPS_PER_SECOND).

    python bench/choose_r_speed.py
"""

import time

from pcrp import data
from pcrp.cv import POINT_SWEEPS_PER_SECOND
from pcrp.model import PowerCRP, resolve_niw
from pcrp.sampler import run, warm_up

SWEEPS = 1000


def main():
    warm_up()
    datasets = [("Old Faithful", data.old_faithful()),
                ("Sim 1 N = 2000", data.simulation("sim1", n=2000, seed=0)),
                ("MNIST 1-4 N = 1000, 2-D", data.mnist(digits=[1, 2, 3, 4], n=1000, embedding="pca", dims=2, seed=0))]
    for name, ds in datasets:
        for r in (1.01, 1.5, 2.0):
            started = time.perf_counter()
            chain = run(ds.X, PowerCRP(1.0, r), resolve_niw(ds.X), iters=SWEEPS, burn_in=SWEEPS // 2, thin=10, seed=0)
            speed = ds.n * SWEEPS / (time.perf_counter() - started)
            print(f"{name:24s} r = {r:<4}: {speed / 1e6:.2f} million point-sweeps/s (mean K {chain.K.mean():.1f}); "
                  f"ratio to the budget's figure {speed / POINT_SWEEPS_PER_SECOND:.2f}")


if __name__ == "__main__":
    main()
