"""Modes: chains in different parts of the posterior are reported apart, with a warning; agreeing chains are one."""

import numpy as np
import pytest

from pcrp.runs.chains import ChainSet, run_chains
from pcrp.model import PowerCRP, resolve_niw
from pcrp.summaries.modes import find_modes, modes_json
from pcrp.runs.run_spec import make_run_spec


def placed_chains(offsets, n=40, draws=60, seed=0):
    """A ChainSet whose chain c holds draws of one partition per chain (2 clusters for offset 0, 4 otherwise) and a
    log joint offsets[c] + N(0, 1) noise: a stand-in for chains placed in modes."""
    rng = np.random.default_rng(seed)
    C = len(offsets)
    two = np.repeat([0, 1], n // 2)
    four = np.repeat([0, 1, 2, 3], n // 4)
    labels = np.stack([np.stack([two if off == 0 else four] * draws) for off in offsets]).astype(np.int16)
    K = np.stack([np.full(draws, 2 if off == 0 else 4) for off in offsets])
    log_joint = np.stack([off + rng.normal(size=draws) for off in offsets])
    return ChainSet(K=K, log_joint=log_joint, labels=labels, kept_sweeps=np.arange(1, draws + 1),
                    seconds_per_sweep=np.zeros(C), split_merge_stats=np.zeros((C, 4), np.int64),
                    split_merge_history=np.zeros((C, draws, 4), np.int64),
                    config={"burn_in": 0, "thin": 1, "iters": draws})


def test_chains_placed_in_two_modes_are_reported_as_two_modes_with_a_warning():
    chains = placed_chains([0.0, 0.0, -68.7, -68.7])
    modes, warning = find_modes(chains, seed=0)
    assert [m.chains for m in modes] == [[0, 1], [2, 3]]  # best mode first
    assert [m.mean_K for m in modes] == [2.0, 4.0]
    assert modes[0].mean_log_joint == pytest.approx(0.0, abs=0.5)  # mean of 120 N(0, 1) draws: SE 0.09
    assert modes[1].mean_log_joint == pytest.approx(-68.7, abs=0.5)
    assert [m.point.n_clusters for m in modes] == [2, 4]  # each mode's own point estimate
    assert "2 modes" in warning and "depend on where the chains started" in warning
    assert '"chains": [3, 4]' in modes_json(modes)


def test_agreeing_chains_are_one_mode_without_a_warning():
    """Four chains with the same log-joint distribution (N(0, 1) noise, 60 independent draws: MCSE about 0.13):
    their means differ by a few tenths, far below 4 combined MCSEs."""
    chains = placed_chains([0.0, 0.0, 0.0, 0.0])
    modes, warning = find_modes(chains, seed=0)
    assert len(modes) == 1 and modes[0].chains == [0, 1, 2, 3] and warning == ""
    assert modes[0].point.n_clusters == 2


def test_a_real_run_from_unlike_starts_on_separated_data_is_one_mode():
    rng = np.random.default_rng(0)
    X = np.concatenate([rng.normal(-4, 1, (40, 2)), rng.normal(4, 1, (40, 2))])
    chains = run_chains(X, make_run_spec(X, prior=PowerCRP(1.0, 1.1), n_chains=3, iters=300, burn_in=100, thin=5,
                                         seed=1))
    modes, warning = find_modes(chains)
    assert len(modes) == 1 and warning == "" and modes[0].point.n_clusters == 2
