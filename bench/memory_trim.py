"""What pcrp.app.memory's trim costs and returns, on a heap shaped like a class's: ``--threads`` threads (a class's
chain and script threads, each with its own glibc arena) each allocate ``--mib`` MiB in small numpy arrays and
Python objects, keep a tenth of them (what the server keeps: the warm pages, the kernels), and free the rest.

    python bench/memory_trim.py                 # 100 threads x 2 MiB
    python bench/memory_trim.py --threads 200 --mib 4

Prints the process's RSS before the class, at its peak, after the frees and after one trim, with the trim's wall
time (it holds each arena's lock while it walks it, so other threads that allocate wait that long at most). The
load client measures the server itself (python bench/load_client.py --visitors 30 --one-address --classes 3).
"""

import argparse
import threading
import time

import numpy as np
import psutil

from pcrp.app import memory


def rss_mib():
    return psutil.Process().memory_info().rss / 2**20


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=100)
    parser.add_argument("--mib", type=float, default=2.0, help="MiB each thread allocates")
    args = parser.parse_args()
    kept, lock = [], threading.Lock()
    before = rss_mib()
    barrier = threading.Barrier(args.threads + 1)

    def visitor():
        mine = []
        while sum(a.nbytes for a in mine if isinstance(a, np.ndarray)) < args.mib * 2**20 / 2:
            mine.append(np.ones(np.random.randint(64, 4096)))  # up to 32 KiB: below glibc's mmap threshold
            mine.append({"frame": list(range(64)), "text": "x" * 200})
        with lock:
            kept.extend(mine[::10])
        barrier.wait()  # every thread holds its allocations at once: the class's peak
        barrier.wait()

    threads = [threading.Thread(target=visitor) for _ in range(args.threads)]
    for t in threads:
        t.start()
    barrier.wait()
    peak = rss_mib()
    barrier.wait()
    for t in threads:
        t.join()
    freed = rss_mib()
    t0 = time.perf_counter()
    trimmed = memory.return_freed_memory()
    seconds = time.perf_counter() - t0
    after = rss_mib()
    print(f"{args.threads} threads x {args.mib:g} MiB, a tenth kept: RSS before {before:.0f} MiB, peak {peak:.0f}, "
          f"after the frees {freed:.0f}, after one trim {after:.0f} MiB "
          f"({'glibc malloc_trim' if trimmed else 'no trim here'}: {1000 * seconds:.1f} ms); "
          f"returned {freed - after:.0f} of the {peak - before:.0f} MiB the class added")


if __name__ == "__main__":
    main()
