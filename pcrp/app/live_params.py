"""The live demo's settings, declared once: :data:`LIVE_PARAMS` (name, default, bounds, meaning) and the demo's
preset :data:`LIVE_DEMO`.

A setting that is a run's is the run's own declaration (:data:`pcrp.runs.run_spec.RUN_PARAMS`: burn-in, thinning). The
live demo declares its own parameter only where it needs its own range, and says why: the sweeps a live run may
hold, the chains per row a browser's share allows, a seed the browser's number box holds exactly, and the built-in
data sets' sizes. Each prior's parameters are the registry's (:data:`pcrp.model.PRIORS`). The Explorer's widgets and
its address (:mod:`pcrp.app.explorer_settings`) read these declarations; nothing retypes a bound.
"""

from ..data import (APP_MAX_ROWS, MAX_CLUSTER_COLUMNS, MNIST_BUNDLED, MNIST_FIRST_PER_DIGIT, MNIST_N, MNIST_PER_DIGIT,
                    SIMULATION_N)
from ..basics.params import Declarations, Param
from ..runs.run_spec import RUN_PARAMS
from .fair_share import SHARE_PER_BROWSER

ROWS = (1, 2, 3, 4, 5)  # every row the Explorer can show, top to bottom (the "rows" setting says how many it does)
DEFAULT_ROW_COUNT = 2  # without ?priors= the page shows two rows: the CRP above the pCRP
MAX_LIVE_SWEEPS = 100_000
NUMBER_BOX_MAX = 2**53 - 1  # the largest whole number a browser's number box holds exactly (JavaScript's)

LIVE_PARAMS = Declarations(
    "the live demo",
    Param("sim_n", "simulation N", SIMULATION_N, 10, APP_MAX_ROWS, True, True,
          "Points drawn from the simulation (Sim 1, Sim 2).", integer=True,
          why_high=f"the app clusters at most {APP_MAX_ROWS:,} rows (pcrp.data.APP_MAX_ROWS)."),
    Param("sim_seed", "simulation data seed", 0, 0, NUMBER_BOX_MAX, True, True,
          "Seed of the simulated data (not of the sampler).", integer=True,
          why_high="a browser's number box holds whole numbers up to 2^53 - 1 exactly."),
    Param("mnist_n", "MNIST N", MNIST_N, 50, MNIST_BUNDLED, True, True,
          "Images drawn from the bundled MNIST file, spread over the chosen digits.", integer=True,
          why_high=(f"the bundled file holds {MNIST_BUNDLED:,} images ({MNIST_PER_DIGIT:,} per digit; up to "
                    f"{MNIST_FIRST_PER_DIGIT} per chosen digit are drawn from each digit's first {MNIST_FIRST_PER_DIGIT}, "
                    "the earlier bundle's, so those draws are unchanged).")),
    Param("dims", "MNIST dimensions", 2, 1, MAX_CLUSTER_COLUMNS, True, True,
          "Dimensions of the MNIST embedding that are clustered.", integer=True,
          why_high=f"the app clusters at most {MAX_CLUSTER_COLUMNS} columns (pcrp.data.MAX_CLUSTER_COLUMNS)."),
    Param("sweeps", "sweeps", 2000, RUN_PARAMS["iters"].low, MAX_LIVE_SWEEPS, True, True,
          "Sweeps per chain of a live run (a run's fixed budget).", integer=True,
          why_high=(f"a live run holds its traces and draws in this session's memory and counts against its "
                    f"visitor's share of the server; at most {MAX_LIVE_SWEEPS:,} sweeps live. Use the command line "
                    "(`pcrp run`) for longer runs.")),
    RUN_PARAMS["burn_in"],
    RUN_PARAMS["thin"],
    Param("seed", "seed", 0, RUN_PARAMS["seed"].low, NUMBER_BOX_MAX, True, True,
          "Seed of the run; each chain gets its own stream spawned from it.", integer=True,
          why_high=("a browser's number box holds whole numbers up to 2^53 - 1 exactly; `pcrp run --seed` takes "
                    "any 128-bit seed.")),
    Param("rows", "rows", DEFAULT_ROW_COUNT, 1, len(ROWS), True, True,
          "Priors compared, one row each, on the same data, seed and start.", integer=True,
          why_high=f"a class watches at most {len(ROWS)} priors at once (the registry's five fit a projector)."),
    Param("chains", "chains per prior", 2, RUN_PARAMS["n_chains"].low, SHARE_PER_BROWSER.chains // DEFAULT_ROW_COUNT,
          True, True, "Chains of each row's prior, from unlike starts; R-hat needs two or more.", integer=True,
          why_high=(f"one browser may hold {SHARE_PER_BROWSER.chains} live chains of this server at once, "
                    f"{SHARE_PER_BROWSER.chains // DEFAULT_ROW_COUNT} per row of two (fewer with more rows: "
                    "see chains_cap).")),
)

# The live demo's defaults: a preset over the declarations (checked by them), never new bounds.
LIVE_DEMO = LIVE_PARAMS.preset(sweeps=2000, burn_in=500, thin=5, seed=0, chains=2)


def chains_cap(n_rows):
    """The most chains per prior that ``n_rows`` rows may each run within one browser's share."""
    return max(1, min(LIVE_PARAMS["chains"].high, SHARE_PER_BROWSER.chains // n_rows))


def default_chains(n_rows):
    """Chains per prior by default for ``n_rows`` rows: the demo's two (R-hat compares two or more chains) wherever
    one browser's share allows it (:func:`chains_cap`: three and four rows too), else one (five rows: the share's 8
    chains allow one each, which the rows and the sidebar say where the R-hat badge would be)."""
    return min(LIVE_DEMO["chains"], chains_cap(n_rows))


def one_chain_words(n_rows, chains):
    """Why a row runs ``chains`` = 1 chain, in words for the sidebar, or None for two or more: R-hat needs two, and
    with ``n_rows`` rows the browser's share may allow no more."""
    if chains > 1:
        return None
    if chains_cap(n_rows) < 2:
        return (f"One chain per row: no R-hat (it compares two or more chains). With {n_rows} rows this browser's "
                f"share of {SHARE_PER_BROWSER.chains} live chains allows one per row; fewer rows allow two.")
    return "One chain per row: no R-hat (it compares two or more chains); two chains per row give it."
