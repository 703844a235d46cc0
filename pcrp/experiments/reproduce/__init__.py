"""The paper's experiments: CV of r, then CRP-Oracle, CRP and pCRP on the same data (``pcrp reproduce``, the
Reproduce page).

Where each part lives:

- :mod:`.protocol`: the settings, declared once (:data:`REPRODUCE_PARAMS`), the paper's protocol (:data:`PAPER`,
  :data:`FULL`: 20,000 sweeps, burn-in 10,000, thin 5, alpha = 1) and the quick check (:data:`QUICK`);
- :mod:`.paper`: the experiments and the numbers the paper publishes (:data:`EXPERIMENTS`), their data;
- :mod:`.methods`: the methods compared and their priors, from the prior registry;
- :mod:`.runner`: one experiment on one data set (:func:`run_experiment`) or several (:func:`run_over_seeds`);
- :mod:`.aggregate`: table rows per data set and over data sets (:func:`seed_rows`);
- :mod:`.text`: those rows as text, and the sentences under them;
- :mod:`.report`: the figures and the files of ``pcrp reproduce`` (:func:`write_report`).

Every method runs :data:`N_CHAINS` chains from different starts; a row's R-hat (rank-normalised, split, ArviZ)
compares them, and a row whose R-hat on K or on the log joint exceeds :data:`pcrp.summaries.summary.RHAT_THRESHOLD` is
flagged: its chains disagree, so its numbers depend on where the chains started. A simulated experiment runs on
several data sets drawn with different seeds (quick: 3, full: 10; each with its own CV data set and CV choice of
r); a row reports the mean over data sets, their spread (SD) and the within-run MCSE (RMS over data sets). After the
paper's three methods come the priors the paper does not have (the MFM and the sparse finite mixture), at their
registry defaults, labelled as beyond the paper.
"""

from .aggregate import (COLUMNS, FLAGGED_PCRP, MARGIN_NATS, MATCH_SE, SPREAD_MULT, comparison_rows, gaps, seed_rows,
                        versus_crp)
from .methods import (BEYOND_PAPER, EXTRA_METHODS, METHODS, all_methods, extra_methods, prior_settings)
from .paper import DATA_DIMS, EXPERIMENTS, TOLERANCE, Experiment, data_seeds, load_experiment_data
from .protocol import FULL, N_CHAINS, PAPER, QUICK, QUICK_CHECK, REPRODUCE_BUDGET, REPRODUCE_PARAMS, Protocol
from .report import figures, write_report
from .runner import (ExperimentResult, MethodResult, SeedsResult, reproduce_work, run_experiment, run_over_seeds,
                     summarize_chains, true_partition_margin)
from .text import (claims, disagreement_lines, display_rows, display_seed_rows, extra_lines, gap_lines,
                   markdown_seed_table, markdown_table, plain, seed_disagreement_lines, seed_gap_lines, versus_lines)

__all__ = [
    "COLUMNS", "FLAGGED_PCRP", "MARGIN_NATS", "MATCH_SE", "SPREAD_MULT", "comparison_rows", "gaps", "seed_rows",
    "versus_crp", "BEYOND_PAPER", "EXTRA_METHODS", "METHODS", "all_methods", "extra_methods", "prior_settings",
    "DATA_DIMS", "EXPERIMENTS", "TOLERANCE", "Experiment", "data_seeds", "load_experiment_data", "FULL", "N_CHAINS",
    "PAPER", "QUICK", "QUICK_CHECK", "REPRODUCE_BUDGET", "REPRODUCE_PARAMS", "Protocol", "figures", "write_report",
    "ExperimentResult", "MethodResult", "SeedsResult", "reproduce_work", "run_experiment", "run_over_seeds",
    "summarize_chains", "true_partition_margin", "claims", "disagreement_lines", "display_rows", "display_seed_rows",
    "extra_lines", "gap_lines", "markdown_seed_table", "markdown_table", "plain", "seed_disagreement_lines",
    "seed_gap_lines", "versus_lines",
]
