"""The sequential seating simulator of the teaching page."""

import numpy as np
import pytest

from pcrp.seating import crp_expected_k, seat, seating_probabilities, simulate_k_growth, three_customer_example


def test_crp_simulation_matches_exact_expected_k():
    """r = 1: mean K_N over 400 runs within 4 standard errors of sum alpha / (alpha + i - 1).

    4 standard errors bounds a false alarm at about 6e-5 per N checked (normal approximation,
    400 runs); we check N = 10, 100 and 500."""
    runs = 400
    sims = simulate_k_growth(alpha=1.5, r=1.0, n_max=500, n_runs=runs, seed=3)
    exact = crp_expected_k(1.5, 500)
    for n in (10, 100, 500):
        se = sims[:, n - 1].std(ddof=1) / np.sqrt(runs)
        assert abs(sims[:, n - 1].mean() - exact[n - 1]) < 4 * se


def test_pcrp_grows_fewer_tables_than_crp():
    crp = simulate_k_growth(1.0, 1.0, 300, 100, seed=0)[:, -1].mean()
    pcrp = simulate_k_growth(1.0, 1.5, 300, 100, seed=0)[:, -1].mean()
    assert pcrp < crp - 1


def test_three_customer_example_by_hand():
    same, different = three_customer_example(r=2.0, alpha=1.0)
    assert same == pytest.approx(1 / (4 + 1))  # table of 2 has weight 2^2 = 4, new table 1
    assert different == pytest.approx(1 / 3)  # two tables of 1, new table 1
    crp_same, crp_different = three_customer_example(r=1.0, alpha=1.0)
    assert crp_same == pytest.approx(crp_different)  # exchangeable for the CRP


def test_seating_uses_the_given_uniforms():
    u = np.array([0.1, 0.9, 0.2, 0.99])
    labels = seat(4, alpha=1.0, r=1.0, uniforms=u)
    assert labels[0] == 0
    # second customer: weights [1 (table 1), 1 (new)]; u = 0.9 -> new table
    assert labels[1] == 1
    assert np.allclose(seating_probabilities([3, 1], 1.0, 2.0), np.array([9, 1, 1]) / 11)
