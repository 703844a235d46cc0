"""A small, explicit random number generator for the numba kernels.

xoshiro256** (Blackman & Vigna). The state is a ``uint64[4]`` array owned by the
caller, so a chain is reproducible from its seed no matter how its sweeps are
split into calls or which thread runs them (numba's own ``np.random`` state is
per thread and hidden).
"""

import numpy as np
from numba import njit

_INV_2_53 = 1.0 / 9007199254740992.0


def seed_state(seed):
    """Return a fresh ``uint64[4]`` state derived from ``seed`` (int or None)."""
    words = np.random.SeedSequence(seed).generate_state(4, dtype=np.uint64)
    if not words.any():  # the all-zero state is a fixed point of xoshiro
        words[0] = np.uint64(1)
    return words


@njit(cache=True, nogil=True, error_model="numpy", inline="always")  # inlined: no compile per literal k
def _rotl(x, k):
    return (x << np.uint64(k)) | (x >> np.uint64(64 - k))


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def _step(s0, s1, s2, s3):
    """One xoshiro256** step on the state words: (output, s0, s1, s2, s3), the words after the step."""
    result = _rotl(s1 * np.uint64(5), 7) * np.uint64(9)
    t = s1 << np.uint64(17)
    s2 ^= s0
    s3 ^= s1
    s1 ^= s2
    s0 ^= s3
    s2 ^= t
    s3 = _rotl(s3, 45)
    return result, s0, s1, s2, s3


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def next_uint64(state):
    """Advance ``state`` in place and return the next 64-bit output."""
    result, state[0], state[1], state[2], state[3] = _step(state[0], state[1], state[2], state[3])
    return result


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def uniform(state):
    """A double uniform on [0, 1) with 53 random bits."""
    return np.float64(next_uint64(state) >> np.uint64(11)) * _INV_2_53


@njit(cache=True, nogil=True, error_model="numpy")
def fill_uniform(state, out, n):
    """out[:n] = n successive :func:`uniform` draws (the same numbers), the state held in registers meanwhile:
    three times quicker than n calls, each of which reads and writes the state array."""
    s0, s1, s2, s3 = state[0], state[1], state[2], state[3]
    for t in range(n):
        result, s0, s1, s2, s3 = _step(s0, s1, s2, s3)
        out[t] = np.float64(result >> np.uint64(11)) * _INV_2_53
    state[0], state[1], state[2], state[3] = s0, s1, s2, s3


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def randint(state, n):
    """An integer uniform on {0, ..., n - 1} (bias below 2**-53 * n)."""
    k = np.int64(uniform(state) * n)
    return k if k < n else n - 1


@njit(cache=True, nogil=True, error_model="numpy")
def shuffle(state, a):
    """Fisher-Yates shuffle of the 1-D array ``a`` in place."""
    for i in range(a.shape[0] - 1, 0, -1):
        j = randint(state, i + 1)
        tmp = a[i]
        a[i] = a[j]
        a[j] = tmp
