"""Cost of streaming: a LiveChain (background thread, chunked kernel calls, snapshots
read by a watcher several times a second) against one batch Sampler.step call, measured
in one run on the same data, prior and seed.

    python bench/streaming_overhead.py
"""

import time

from pcrp.data import old_faithful, simulation
from pcrp.app.live_runs import LiveChain
from pcrp.model import CRP, PowerCRP, resolve_niw
from pcrp.runs.compiling import compile_kernels
from pcrp.sampling.sampler import Sampler
def batch_seconds(X, prior, niw, iters):
    s = Sampler(X, prior, niw, seed=0)
    start = time.perf_counter()
    s.step(iters)
    return time.perf_counter() - start


def streamed_seconds(X, prior, niw, iters, redraws_per_second=4):
    chain = LiveChain(X, prior, niw, iters=iters, burn_in=iters // 2, thin=5, seed=0)
    chain.start()
    while chain.alive:
        chain.touch()
        chain.snapshot()  # what the page does on each redraw
        time.sleep(1 / redraws_per_second)
    return chain.ended_at - chain.started_at


def main():
    compile_kernels()  # every group, so that no timing below includes a compile
    print(f"{'data':22s} {'prior':22s} {'sweeps':>7s} {'batch s':>8s} {'streamed s':>11s} {'overhead':>9s}")
    for name, X, iters in (("Old Faithful", old_faithful().X, 20_000), ("Sim 1 N=2000", simulation("sim1", 2000).X, 3000)):
        niw = resolve_niw(X)
        for prior in (CRP(1.0), PowerCRP(1.0, 1.2)):
            batch = batch_seconds(X, prior, niw, iters)
            streamed = streamed_seconds(X, prior, niw, iters)
            print(f"{name:22s} {prior.label():22s} {iters:7d} {batch:8.2f} {streamed:11.2f} "
                  f"{(streamed - batch) / batch * 100:8.1f}%")


if __name__ == "__main__":
    main()
