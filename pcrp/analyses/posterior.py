"""The posterior summary of one prior's chains, as the app shows it: diagnostics, modes, the point-estimate
partition, each point's confidence, the similarity matrix (or a sample of its rows) and the model's density,
with the work bounded for a shared server.

The command line computes the same summaries (`pcrp run`); here a visitor's click must not occupy the server
for minutes, so the point estimate uses at most ``MAX_DRAWS`` evenly spaced kept draws (pooled over chains) and
SEARCH_RUNS greedy runs. The point estimate and the confidences come from the draws (O(N x draws) memory,
:mod:`pcrp.summaries.partition`), for any N when ``scale=True``; the N x N similarity matrix is formed only up to
``MAX_POINTS`` points (40 MB at 3,162; 400 MB at 10,000), above which it covers ``MAX_POINTS`` evenly spaced
rows (``psm_rows``), enough for the heatmap, which shows at most 600.
"""

from dataclasses import dataclass, field

import numpy as np

MAX_DRAWS = 400
MAX_POINTS = 3000
SEARCH_RUNS = 4  # greedy runs of the point-estimate search (2 already found the optimum on MNIST N = 1000)
ZEALOUS_ATTEMPTS = 2


@dataclass
class PosteriorSummary:
    """What the app shows for one prior.

    chains: the pcrp.runs.chains.ChainSet summarised; diagnostics: ChainSet.diagnostics();
    psm: (n, n) float32 co-clustering probabilities of the points ``psm_rows`` (all N when psm_rows is None),
        or None; point: pcrp.summaries.partition.PointEstimate or None;
    confidence: (N,) mean co-clustering probability of each point with its cluster, or None;
    density: pcrp.analyses.density.DensityPanel (the model's predictive density: ``density.density.label`` says so);
    draws_used: kept draws behind point / psm; note: what was bounded, for the page;
    modes: list of pcrp.summaries.modes.Mode (one when the chains agree); modes_warning: a sentence when they do not.
    """

    chains: object
    diagnostics: dict
    psm: np.ndarray
    point: object
    confidence: np.ndarray
    density: object
    draws_used: int
    note: str = ""
    psm_rows: np.ndarray | None = None
    modes: list = field(default_factory=list)
    modes_warning: str = ""

    @property
    def bytes(self):
        return 0 if self.psm is None else int(self.psm.nbytes)

    @property
    def psm_labels(self):
        """The point estimate's labels of the rows of ``psm`` (for the heatmap), or None."""
        if self.point is None:
            return None
        return self.point.labels if self.psm_rows is None else self.point.labels[self.psm_rows]


def evenly_spaced(draws, limit):
    """At most ``limit`` draws (S, N), evenly spaced over the pooled (S, N) draws."""
    if len(draws) <= limit:
        return draws
    return draws[np.linspace(0, len(draws) - 1, limit).round().astype(int)]


def summarise(chain_set, X, niw, *, loss=None, seed=0, max_draws=MAX_DRAWS, max_points=MAX_POINTS, scale=False,
              prior=None):
    """The :class:`PosteriorSummary` of ``chain_set`` (a pcrp.runs.chains.ChainSet) on data X (N, d) with its
    NIW prior.

    scale: False keeps the earlier bounds (no point estimate, confidence or similarity matrix above
    ``max_points`` points); True computes the point estimate and confidences from the draws for any N and the
    similarity matrix of ``max_points`` evenly spaced rows above it (``psm_rows``; draw the heatmap with
    ``psm`` and ``psm_labels``). prior: the seating prior (default: the one ``chain_set.config`` records).
    """
    from ..model import prior_of
    from ..summaries.modes import find_modes
    from .density import DENSITY_DRAWS, density_panel
    from ..summaries.partition import DEFAULT_LOSS, cluster_confidence_from_draws, point_estimate, similarity_matrix

    prior = prior or prior_of(chain_set.config)
    loss = DEFAULT_LOSS if loss is None else loss
    draws = evenly_spaced(chain_set.pooled_labels(), max_draws)
    N = draws.shape[1]
    notes = []
    psm = point = confidence = psm_rows = None
    options = dict(n_runs=SEARCH_RUNS, zealous_attempts=ZEALOUS_ATTEMPTS)
    if N <= max_points or scale:
        point = point_estimate(draws, loss, seed=seed, **options)
        confidence = cluster_confidence_from_draws(draws, point.labels)
        point_labels = point.labels
        if N <= max_points:
            psm = similarity_matrix(draws)
        else:
            psm_rows = np.unique(np.linspace(0, N - 1, max_points).round().astype(int))
            psm = similarity_matrix(draws[:, psm_rows])
            notes.append(f"The similarity matrix covers {psm_rows.size:,} evenly spaced of the {N:,} points.")
    else:
        notes.append(f"The similarity matrix and the point estimate are computed here for up to {max_points:,} "
                     f"points (these data have {N:,}); `pcrp run` computes them for any N.")
        point_labels = draws[-1]
    if len(chain_set.pooled_labels()) > len(draws):
        notes.append(f"Summaries use {len(draws)} evenly spaced of the {len(chain_set.pooled_labels())} kept draws.")
    diagnostics = chain_set.diagnostics()
    modes, warning = [], ""
    if point is not None:
        from dataclasses import replace

        thinned = replace(chain_set, labels=chain_set.labels[:, np.linspace(0, chain_set.n_kept - 1, max(
            1, max_draws // chain_set.n_chains)).round().astype(int)])
        modes, warning = find_modes(thinned, loss=loss, seed=seed, pooled=point, diagnostics=diagnostics,
                                    point_options=options)
    density = density_panel(X, draws, point_labels, niw, prior=prior, max_draws=min(DENSITY_DRAWS, len(draws)), seed=seed)
    return PosteriorSummary(chains=chain_set, diagnostics=diagnostics, psm=psm, point=point,
                            confidence=confidence, density=density, draws_used=len(draws), note=" ".join(notes),
                            psm_rows=psm_rows, modes=modes, modes_warning=warning)
