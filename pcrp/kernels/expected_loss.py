"""numba kernel: the posterior expected loss of one partition over many label draws, one draw at a time.

With c the candidate (cluster sizes a_k) and z_s a draw (cluster sizes b_sl), both losses are

    numerator_s = sum_k F(a_k) + sum_l F(b_sl) - 2 sum_{k,l} F(n_skl),   n_skl = #{i : c_i = k, z_s(i) = l},

with F(x) = x log2 x (N * VI, bits) or F(x) = x (x - 1) / 2 (pairs on which c and z_s disagree). Unlike
:class:`pcrp.summaries.partition.DrawTables` (built for a search that moves items, O(N S) memory), this needs only one
draw's contingency table at a time: O(S N) time and O(N + K L) memory, whatever the number of draws S.
"""

import numpy as np
from numba import njit

from .search import relabel_row


@njit(cache=True, nogil=True)
def expected_numerator(codes, n_codes, draws, w, F):
    """sum_s w_s numerator_s (see the module docstring).

    codes: (N,) int64 candidate labels in 0..n_codes - 1; draws: (S, N) integer labels >= 0 (any values);
    w: (S,) weights; F: (N + 1,) float64 table of F(0..N).
    """
    S, N = draws.shape
    sizes = np.zeros(n_codes, dtype=np.int64)
    for i in range(N):
        sizes[codes[i]] += 1
    own = 0.0
    for k in range(n_codes):
        own += F[sizes[k]]
    top = 0
    for s in range(S):
        for i in range(N):
            if draws[s, i] > top:
                top = draws[s, i]
    code = np.full(top + 1, -1, dtype=np.int64)  # scratch of relabel_row
    row = np.empty(N, dtype=np.int64)              # a draw's labels as 0..L_s - 1
    counts = np.zeros(N + 1, dtype=np.int64)      # b_sl
    table = np.zeros(n_codes * 64, dtype=np.int64)  # n_skl at k * width + l, grown when a draw has more clusters
    width = 64
    total = 0.0
    for s in range(S):
        n_labels = relabel_row(draws[s], code, row)
        if n_labels > width:
            width = n_labels
            table = np.zeros(n_codes * width, dtype=np.int64)
        for i in range(N):
            l = row[i]
            counts[l] += 1
            table[codes[i] * width + l] += 1
        value = own
        for l in range(n_labels):
            value += F[counts[l]]
            counts[l] = 0
        for k in range(n_codes):
            for l in range(n_labels):
                value -= 2.0 * F[table[k * width + l]]
                table[k * width + l] = 0
        total += w[s] * value
    return total
