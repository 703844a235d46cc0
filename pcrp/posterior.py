"""The posterior summary of one prior's chains, as the app shows it: diagnostics, the similarity matrix,
the point-estimate partition and the averaged density, with the work bounded for a shared server.

The command line computes the same summaries without these bounds (`pcrp run`); here a visitor's click
must not occupy the server for minutes, so the point estimate and the similarity matrix use at most
``MAX_DRAWS`` evenly spaced kept draws (pooled over chains) and are skipped beyond ``MAX_POINTS``
points (the N x N matrix alone would be 400 MB at N = 10,000).
"""

from dataclasses import dataclass

import numpy as np

MAX_DRAWS = 400
MAX_POINTS = 3000
SEARCH_RUNS = 4  # greedy runs of the point-estimate search (2 already found the optimum on MNIST N = 1000)
ZEALOUS_ATTEMPTS = 2


@dataclass
class PosteriorSummary:
    """What the app shows for one prior.

    chains: the pcrp.chains.ChainSet summarised; diagnostics: ChainSet.diagnostics();
    psm: (N, N) float32 co-clustering probabilities or None; point: pcrp.partition.PointEstimate or None;
    confidence: (N,) mean co-clustering probability of each point with its cluster, or None;
    density: pcrp.density.DensityPanel; draws_used: kept draws behind psm / point; note: what was
    bounded, for the page.
    """

    chains: object
    diagnostics: dict
    psm: np.ndarray
    point: object
    confidence: np.ndarray
    density: object
    draws_used: int
    note: str = ""

    @property
    def bytes(self):
        return 0 if self.psm is None else int(self.psm.nbytes)


def evenly_spaced(draws, limit):
    """At most ``limit`` draws (S, N), evenly spaced over the pooled (S, N) draws."""
    if len(draws) <= limit:
        return draws
    return draws[np.linspace(0, len(draws) - 1, limit).round().astype(int)]


def summarise(chain_set, X, niw, *, loss="vi", seed=0, max_draws=MAX_DRAWS, max_points=MAX_POINTS):
    """The :class:`PosteriorSummary` of ``chain_set`` (a pcrp.chains.ChainSet) on data X (N, d) with its
    NIW prior."""
    from .density import density_panel
    from .partition import cluster_confidence, point_estimate, similarity_matrix

    draws = evenly_spaced(chain_set.pooled_labels(), max_draws)
    N = draws.shape[1]
    notes = []
    psm = point = confidence = None
    if N <= max_points:
        psm = similarity_matrix(draws)
        point = point_estimate(draws, loss, psm=psm, n_runs=SEARCH_RUNS, zealous_attempts=ZEALOUS_ATTEMPTS, seed=seed)
        confidence = cluster_confidence(psm, point.labels)
        point_labels = point.labels
    else:
        notes.append(f"The similarity matrix and the point estimate are computed here for up to {max_points:,} "
                     f"points (these data have {N:,}); `pcrp run` computes them for any N.")
        point_labels = draws[-1]
    if len(chain_set.pooled_labels()) > len(draws):
        notes.append(f"Summaries use {len(draws)} evenly spaced of the {len(chain_set.pooled_labels())} kept draws.")
    density = density_panel(X, draws, point_labels, niw, max_draws=min(200, len(draws)), seed=seed)
    return PosteriorSummary(chains=chain_set, diagnostics=chain_set.diagnostics(), psm=psm, point=point,
                            confidence=confidence, density=density, draws_used=len(draws), note=" ".join(notes))
