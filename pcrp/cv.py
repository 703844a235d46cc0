"""Choosing the pCRP power r by cross validation (paper Sec. 2.3, eq. 5).

For every split of the data (K folds, optionally repeated) and every r on a
grid, a pCRP chain is fitted on the training part. Each kept draw of the
training partition is then scored on the held-out part in two ways:

- **Loss of eq. (5)**: every held-out point joins the existing cluster k that
  maximises its posterior seating probability g(N_k) p(x | X_k) (prior weight
  times Student-t predictive, new tables excluded), and the loss is
  sum_k sqrt(sum_{j in C_k} ||x_j - xbar_k||^2) over the held-out points, with
  xbar_k the mean of the held-out points in cluster k. It is averaged over draws.
- **Held-out log predictive density** per point: log of the posterior
  predictive density of the held-out point, averaged over draws inside the log
  (log mean_s p(x | draw s)), new table included; higher is better.

The loss is flat while r only removes spurious small clusters and "blows up"
when r is large enough to merge real ones; :func:`find_blow_up` detects that
change point and the proposed r is the grid value just before it.

Nothing about a held-out point reaches its split's fits: the standardisation
(when asked for) and every data-dependent NIW default (m0 = column means, S0
from the column variances) are computed on the training part of each split
alone, and applied to its held-out part as fixed maps (:func:`prepare_split`).

Every split uses one seed for all r (common random numbers), so differences
along the curve are not blurred by chain-to-chain noise more than necessary.
Standard errors are over splits (std / sqrt(n_splits)); folds share training
points, so they understate the uncertainty somewhat.
"""

from dataclasses import dataclass, field

import numpy as np
from scipy.special import logsumexp

from .model import DEFAULT_PRIOR, NIW, PRIORS, PowerCRP, resolve_niw
from .run_spec import check_schedule

# r = 1 + eps first, as in the paper, then 1.05 .. 2.0.
DEFAULT_GRID = PRIORS[DEFAULT_PRIOR].tune_grid  # cross validation's grid of the tuned power (the registry's)


class CVError(ValueError):
    """A bad cross-validation setting; the message names it and what to do."""


def within_cluster_loss(X, labels):
    """Eq. (5): sum over clusters of sqrt(within-cluster sum of squares).

    X (n, d); labels (n,) any integer codes. Returns a float in the units of X.
    """
    X = np.asarray(X, dtype=float).reshape(len(labels), -1)
    total = 0.0
    for k in np.unique(labels):
        block = X[labels == k]
        total += np.sqrt(((block - block.mean(axis=0)) ** 2).sum())
    return float(total)


def score_held_out(X_train, label_draws, X_test, prior, niw):
    """Score draws of a training partition on held-out points.

    X_train (n, d); label_draws (S, n) int; X_test (m, d). Returns
    (loss (S,), log_pred_density (m,)): the eq. (5) loss of the seating of the
    held-out points under each draw, and for each held-out point
    log mean_s p(x | draw s). A held-out point is seated by the prior's rule as customer n + 1
    (:func:`pcrp.density.seating_log_predictive`): for the loss it joins the existing cluster of highest
    posterior seating probability (new tables excluded); its predictive density includes a new table.
    """
    from .density import seating_log_predictive

    X_test = np.ascontiguousarray(X_test, dtype=float)
    losses = np.empty(len(label_draws))
    per_draw = np.empty((len(label_draws), X_test.shape[0]))
    for s, labels in enumerate(label_draws):
        seat = seating_log_predictive(X_test, X_train, labels, prior, niw)  # (m, K + 1), last: a new cluster
        losses[s] = within_cluster_loss(X_test, seat[:, :-1].argmax(axis=1))
        per_draw[s] = logsumexp(seat, axis=1)
    lpd = logsumexp(per_draw, axis=0) - np.log(len(label_draws))
    return losses, lpd


@dataclass
class SplitScore:
    """What one (split, r) fit returns."""

    split: int
    r_index: int
    loss: float  # mean over kept draws of the eq. (5) loss
    log_pred: float  # mean over held-out points of log mean_s p(x | draw s)
    mean_k: float  # mean K of the training chain after burn-in


@dataclass
class PreparedSplit:
    """One split as its fits see it: X_train (n, d) and X_test (m, d) in the training part's units, and
    the NIW prior resolved on the training part."""

    X_train: np.ndarray
    X_test: np.ndarray
    niw: NIW


def prepare_split(X, train, test, niw=None, standardize=False):
    """The training and held-out parts of X (N, d) with nothing learnt from the held-out rows.

    standardize: z-score both parts with the training part's column means and standard deviations.
    niw: None (every NIW setting from the documented defaults of the training part), a dict of
        fixed settings {m0, kappa0, nu0, S0} (the others from the training part), or an NIW used
        as given. Z-scoring data that were already z-scored on all rows gives exactly the
        training-part z-scores of the raw data, so callers may pass either.
    """
    X_train, X_test = X[train], X[test]
    if standardize:
        center, scale = X_train.mean(axis=0), X_train.std(axis=0)
        if not np.all(scale > 0):
            column = int(np.flatnonzero(~(scale > 0))[0])
            raise CVError(f"Column {column + 1} is constant on a training fold, so it cannot be standardised: "
                          "use fewer folds or drop that column.")
        X_train, X_test = (X_train - center) / scale, (X_test - center) / scale
    if not isinstance(niw, NIW):
        niw = resolve_niw(X_train, **(niw or {}))
    return PreparedSplit(np.ascontiguousarray(X_train), np.ascontiguousarray(X_test), niw)


def fit_and_score(part, split, r_index, r, alpha, iters, burn_in, thin, seed, split_merge, work=None):
    """Fit a pCRP chain on a :class:`PreparedSplit`'s training part and score its held-out part
    (top level so it pickles). ``work``: a :class:`pcrp.compute.WorkTicket` (see :func:`pcrp.chains.run_chains`)."""
    from .chains import run_chains
    from .run_spec import make_run_spec

    prior = PowerCRP(alpha, r)
    spec = make_run_spec(part.X_train, prior=prior, niw=part.niw, n_chains=1, init="kmeans:10", iters=iters,
                         burn_in=burn_in, thin=thin, seed=seed, split_merge=split_merge, n_jobs=1)
    chain = run_chains(part.X_train, spec, work=work)
    losses, lpd = score_held_out(part.X_train, chain.labels[0], part.X_test, prior, part.niw)
    return SplitScore(split, r_index, float(losses.mean()), float(lpd.mean()),
                      float(chain.K_after_burn_in.mean()))


@dataclass
class BlowUp:
    """The change point of a CV loss curve."""

    index: int | None  # first grid index where the loss has blown up; None if it never does
    chosen_index: int  # index of the proposed r: the one just before the blow-up
    threshold: float  # the rise over the running minimum that counts as a blow-up
    reason: str


def find_blow_up(loss, se=None, *, r_grid=None, rel_jump=0.10, noise_mult=4.0):
    """Find where a CV loss curve (G,) stops being flat and blows up.

    ``r_grid`` (G,), when given, names the r values in the reason text.

    The curve is compared with its running minimum. A point has blown up when
    its rise above the minimum so far exceeds the largest of: ``rel_jump``
    times that minimum (a 10% jump is far beyond the paper's flat-stage
    wobble of about 4%), ``noise_mult`` times the robust scale of the
    successive differences *before* that point (1.4826 x their median
    absolute deviation, used once there are three of them: the blow-up never
    sets its own yardstick, which on a three-point grid it otherwise would),
    and, when ``se`` (G,) is given, twice the
    standard error of a difference of two flat-stage points (sqrt(2) x the SE
    at the running minimum; the SE of the rising point itself is large
    precisely because some splits have blown up). The proposed index is the one before
    the first blown-up point; with no blow-up it is the last grid point (and
    the grid should be extended).
    """
    loss = np.asarray(loss, dtype=float)
    if loss.ndim != 1 or loss.size < 2 or not np.all(np.isfinite(loss)):
        raise CVError("The loss curve needs at least two finite values.")
    se = np.zeros_like(loss) if se is None else np.nan_to_num(np.asarray(se, dtype=float))
    for j in range(1, loss.size):
        before = np.diff(loss[:j])
        noise = 1.4826 * np.median(np.abs(before - np.median(before))) if before.size >= 3 else 0.0
        best = int(np.argmin(loss[:j]))
        floor = loss[best]
        threshold = max(rel_jump * abs(floor), noise_mult * noise,
                        2.0 * np.sqrt(2.0) * se[best])
        if loss[j] - floor > threshold:
            where = f"r = {r_grid[j]:g}" if r_grid is not None else f"the value number {j + 1} of r"
            return BlowUp(j, j - 1, float(threshold),
                          f"the loss jumps from {floor:.3g} to {loss[j]:.3g} at {where}, more than the "
                          f"{threshold:.3g} that wobble and fold-to-fold noise explain")
    return BlowUp(None, loss.size - 1, float("nan"),
                  "the loss never blows up on this grid: the largest r is proposed; extend the grid to be sure")


CV_RULES = ("robust", "mean")
# The robust rule's quantile of the per-split change points (see robust_blow_up).
SPLIT_QUANTILE = 0.25


def robust_blow_up(loss, folds, *, r_grid=None, quantile=SPLIT_QUANTILE, rel_jump=0.10, noise_mult=4.0):
    """A conservative change point from every split's loss, not only their mean.

    loss: (n_splits, G), the splits in repeats of ``folds`` consecutive rows (as :func:`make_splits` makes them).
    The mean-curve rule (:func:`find_blow_up`) proposes the r before the point where the loss *averaged over
    the splits* has blown up, so it waits until most splits have merged real clusters; on a fresh data set whose
    real clusters merge a little earlier that r already merges them (Sim 2 at N = 300: r = 1.25-1.30 where the
    three clusters and one are a few nats apart). This rule proposes the smallest of

    - each repeat's mean-curve proposal (:func:`find_blow_up` on the mean and SE of that repeat's ``folds``
      splits): the repeats are independent re-partitions of the data, and the smallest is the one whose folds
      first saw the merge; and
    - the lower ``quantile`` (default 0.25, the 'lower' order statistic) of the splits' own proposals
      (:func:`find_blow_up` on each split's curve alone): the r before the point where a quarter of the splits
      have blown up.

    With one repeat it is the smaller of the mean-curve proposal and the splits' lower quartile. Measured on 10
    fresh data sets per simulation (docs/reproduce/cv_robustness.md) it keeps the true clusters more often than
    the mean-curve rule at a cost of about 0.01-0.02 in r. Returns a :class:`BlowUp` whose ``index`` is the grid
    point after the proposal (None when the proposal is the last grid point).
    """
    loss = np.asarray(loss, dtype=float)
    if loss.ndim != 2 or loss.shape[1] < 2 or not np.all(np.isfinite(loss)):
        raise CVError("The loss curves need at least two finite values each.")
    n_splits, G = loss.shape
    folds = int(folds)
    if folds < 1 or n_splits % folds:
        raise CVError(f"{n_splits} splits are not whole repeats of {folds} folds.")
    repeats = []
    for start in range(0, n_splits, folds):
        block = loss[start:start + folds]
        se = block.std(axis=0, ddof=1) / np.sqrt(folds) if folds > 1 else None
        repeats.append(find_blow_up(block.mean(axis=0), se, r_grid=r_grid, rel_jump=rel_jump,
                                    noise_mult=noise_mult).chosen_index)
    per_split = [find_blow_up(curve, r_grid=r_grid, rel_jump=rel_jump, noise_mult=noise_mult).chosen_index
                 for curve in loss]
    low = int(np.quantile(per_split, quantile, method="lower"))
    chosen = min(min(repeats), low)
    name = (lambda j: f"{r_grid[j]:g}") if r_grid is not None else (lambda j: f"value number {j + 1}")
    which = (f"the smallest of the {len(repeats)} repeats' proposals" if len(repeats) > 1
             else "the smaller of the mean curve's proposal")
    reason = (f"{which} ({', '.join(name(j) for j in repeats)}) and the lower quartile of the {n_splits} splits' own "
              f"proposals ({name(low)}): r past it merges real clusters in some splits")
    if chosen == G - 1:
        reason = ("the loss never blows up in a quarter of the splits or in any repeat on this grid: the largest r "
                  "is proposed; extend the grid to be sure")
    return BlowUp(None if chosen == G - 1 else chosen + 1, chosen, float("nan"), reason)


@dataclass
class CVResult:
    """Cross-validation curves of r and the proposed value.

    loss, log_pred, mean_k: (n_splits, G) per split and grid point.
    blow_up: the change point of the chosen rule (settings["rule"]), which gives ``chosen_r``.
    mean_blow_up: the mean-curve rule's change point (:func:`find_blow_up`), kept for comparison.
    """

    r_grid: np.ndarray
    loss: np.ndarray
    log_pred: np.ndarray
    mean_k: np.ndarray
    blow_up: BlowUp
    settings: dict = field(default_factory=dict)
    mean_blow_up: BlowUp | None = None

    @property
    def chosen_r(self):
        return float(self.r_grid[self.blow_up.chosen_index])

    def curve(self, name):
        """(mean (G,), standard error (G,)) over splits of 'loss', 'log_pred' or 'mean_k'."""
        values = getattr(self, name)
        n = values.shape[0]
        se = values.std(axis=0, ddof=1) / np.sqrt(n) if n > 1 else np.full(values.shape[1], np.nan)
        return values.mean(axis=0), se

    def table(self):
        """Rows (r, loss, loss SE, log_pred, log_pred SE, mean K) for CSV output."""
        (lm, ls), (pm, ps), (km, _) = self.curve("loss"), self.curve("log_pred"), self.curve("mean_k")
        return [dict(r=float(r), loss=float(lm[g]), loss_se=float(ls[g]), log_pred=float(pm[g]),
                     log_pred_se=float(ps[g]), mean_k=float(km[g])) for g, r in enumerate(self.r_grid)]


def make_splits(n, folds, repeats, seed):
    """[(train indices, test indices)] for ``repeats`` shuffled ``folds``-fold partitions of range(n)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(repeats):
        order = rng.permutation(n)
        for part in np.array_split(order, folds):
            test = np.sort(part)
            out.append((np.setdiff1d(np.arange(n), test), test))
    return out


def check_cv_settings(n, r_grid, folds, repeats, alpha):
    r_grid = np.asarray(r_grid, dtype=float)
    if r_grid.ndim != 1 or r_grid.size < 2:
        raise CVError("Give at least two values of r to compare.")
    if not np.all(np.isfinite(r_grid)) or np.any(r_grid <= 0):
        raise CVError("Every r on the grid must be a positive number.")
    if np.any(np.diff(r_grid) <= 0):
        raise CVError("The r grid must be increasing (the change point is read from left to right).")
    if not (isinstance(folds, (int, np.integer)) and 2 <= folds <= n // 2):
        raise CVError(f"folds must be a whole number from 2 to N/2 = {n // 2} (got {folds}).")
    if not (isinstance(repeats, (int, np.integer)) and repeats >= 1):
        raise CVError(f"repeats must be a whole number >= 1 (got {repeats}).")
    if not (np.isfinite(alpha) and alpha > 0):
        raise CVError(f"alpha must be > 0 (got {alpha}).")
    return r_grid


def cv_work(n_points, dims, n_r, folds, repeats, iters):
    """Estimated core-seconds of :func:`cross_validate` (:func:`pcrp.compute.work_cost`): each of the
    n_r x folds x repeats fits sweeps its training part, N less one fold, ``iters`` times."""
    from .compute import work_cost

    train = int(n_points) - int(n_points) // int(folds)
    return work_cost(train, dims, iters, chains=int(n_r) * int(folds) * int(repeats))


# The Choose r page's work per press of Run, in estimated core-seconds (pcrp.compute.work_cost): at most
# CHOOSE_R_BUDGET, 5 minutes of one core (about 2.5 on two). The page's defaults need about 7 core-seconds on Old
# Faithful, about 64 on 2,000 points in 2-D, about 190 in 10-D and 3,200 in 50-D (refused unless the grid, folds or
# sweeps are cut).
CHOOSE_R_BUDGET = 300.0
CHOOSE_R_START_CHAINS = 4  # CRP chains of the merge path's start (pcrp.path.crp_start)


def check_work(n_points, dims, n_r=None, iters=None, crp=True):
    """Estimated core-seconds of :func:`check_with_chains` at its most: CHECK_CHAINS pCRP chains of ``iters``
    (CHECK_ITERS) sweeps at up to CHECK_TRIES values of r (no more than the grid's ``n_r``), and, when ``crp``, the
    CRP fit it makes for its reference (CHECK_CHAINS chains more)."""
    from .compute import work_cost

    tries = CHECK_TRIES if n_r is None else min(CHECK_TRIES, int(n_r))
    iters = CHECK_ITERS if iters is None else int(iters)
    return work_cost(n_points, dims, iters, chains=CHECK_CHAINS * (tries + (1 if crp else 0)))


def choose_r_work(n_points, dims, n_r, folds, repeats, iters):
    """Estimated core-seconds of one run of the Choose r page: cross validation (:func:`cv_work`), one chain per
    r on all the data (:func:`pcrp.k_over_r.k_over_r`), the merge path's CRP chains (:func:`pcrp.path.crp_start`) and the
    check of the proposal on all the data (:func:`check_work`; its reference is that CRP fit)."""
    from .compute import work_cost

    return (cv_work(n_points, dims, n_r, folds, repeats, iters)
            + work_cost(n_points, dims, iters, chains=int(n_r) + CHOOSE_R_START_CHAINS)
            + check_work(n_points, dims, n_r, iters, crp=False))


def cross_validate(X, niw=None, *, standardize=False, r_grid=DEFAULT_GRID, alpha=1.0, folds=5, repeats=1,
                   iters=2000, burn_in=1000, thin=10, seed=0, split_merge=True, n_jobs=-1, scheduler=None,
                   progress=None, work=None, rule="robust"):
    """Cross-validate the pCRP power r on data X (N, d).

    rule: "robust" (default, :func:`robust_blow_up`: the smallest repeat's proposal and the splits' lower
    quartile; give ``repeats`` = 3 or more for it to see independent re-partitions) or "mean" (the change point
    of the loss averaged over all splits, :func:`find_blow_up`; the rule before December 2026).

    ``niw`` and ``standardize`` are resolved on each training part (see :func:`prepare_split`):
    None means the documented NIW defaults of that part; a dict fixes some settings. Loss and
    log predictive are in the units the fits see (the training part's z-scores when standardising).

    Runs len(r_grid) x folds x repeats chains in parallel with joblib (threads:
    the kernels release the GIL) or, with ``scheduler`` = a Dask scheduler
    address such as "tcp://10.0.0.5:8786", on that Dask cluster through
    joblib's dask backend. ``progress(done, total)`` is called as fits finish.
    Reproducible per ``seed`` whatever n_jobs or the scheduler.

    work: a :class:`pcrp.compute.WorkTicket` (the app's): the fits' estimated cost (:func:`cv_work`) is
    counted against its budget before any starts (WorkOverBudget), local fits take its compute slots, and once
    it is cancelled running fits stop within about 0.1 s and queued ones do not start (WorkCancelled). Fits on
    a Dask cluster use the cluster's cores; a cancellation stops waiting for them.
    """
    import joblib

    X = np.ascontiguousarray(X, dtype=float)
    r_grid = check_cv_settings(X.shape[0], r_grid, folds, repeats, alpha)
    if not isinstance(n_jobs, (int, np.integer)) or n_jobs == 0:
        raise CVError(f"n_jobs must be a whole number: the count of parallel fits, or -1 for all cores (got {n_jobs}).")
    if rule not in CV_RULES:
        raise CVError(f"rule must be one of {', '.join(CV_RULES)} (got {rule!r}).")
    iters, burn_in, thin = check_schedule(iters, burn_in, thin)
    if thin > iters - burn_in:
        raise CVError(f"thin ({thin}) leaves no draws to score: it must be at most iters - burn_in "
                      f"({iters - burn_in}).")
    if not (niw is None or isinstance(niw, NIW) or (isinstance(niw, dict) and set(niw) <= set(NIW_SETTINGS))):
        raise CVError(f"niw must be None, an NIW, or a dict with some of {', '.join(NIW_SETTINGS)} (got {niw!r}).")
    if work is not None:
        work.reserve(cv_work(X.shape[0], X.shape[1], r_grid.size, folds, repeats, iters),
                     f"Cross validation ({r_grid.size} values of r x {folds} folds x {repeats} repeats x {iters:,} "
                     "sweeps)")
    splits = make_splits(X.shape[0], folds, repeats, seed)
    parts = [prepare_split(X, train, test, niw, standardize) for train, test in splits]
    chain_seeds = np.random.SeedSequence(seed).generate_state(len(splits), dtype=np.uint32)
    tasks = [
        joblib.delayed(fit_and_score)(part, s, g, float(r), float(alpha), iters, burn_in, thin,
                                      int(chain_seeds[s]), split_merge, None if scheduler else work)
        for s, part in enumerate(parts) for g, r in enumerate(r_grid)
    ]
    shape = (len(splits), r_grid.size)
    loss, log_pred, mean_k = np.empty(shape), np.empty(shape), np.empty(shape)

    def collect(results):
        for done, res in enumerate(results, start=1):
            if work is not None:
                work.check()
            loss[res.split, res.r_index] = res.loss
            log_pred[res.split, res.r_index] = res.log_pred
            mean_k[res.split, res.r_index] = res.mean_k
            if progress is not None:
                progress(done, len(tasks))

    from .dask_cluster import DaskConnectionError, parallel_results

    try:
        collect(parallel_results(tasks, n_jobs=n_jobs, scheduler=scheduler))
    except DaskConnectionError as err:
        raise CVError(str(err)) from None

    mean_loss = loss.mean(axis=0)
    se_loss = loss.std(axis=0, ddof=1) / np.sqrt(len(splits)) if len(splits) > 1 else None
    settings = dict(r_grid=[float(r) for r in r_grid], alpha=float(alpha), folds=folds, repeats=repeats,
                    iters=iters, burn_in=burn_in, thin=thin, seed=seed, split_merge=bool(split_merge),
                    scheduler=scheduler, n=int(X.shape[0]), d=int(X.shape[1]), standardize=bool(standardize),
                    niw_fixed=_fixed_niw_settings(niw), niw_per_split=[part.niw.as_dict() for part in parts],
                    rule=rule)
    mean_rule = find_blow_up(mean_loss, se_loss, r_grid=r_grid)
    chosen = mean_rule if rule == "mean" else robust_blow_up(loss, folds, r_grid=r_grid)
    return CVResult(r_grid, loss, log_pred, mean_k, chosen, settings, mean_rule)


NIW_SETTINGS = ("m0", "kappa0", "nu0", "S0")


def _fixed_niw_settings(niw):
    """The NIW settings fixed by the caller, JSON-ready ({} when all come from the training parts)."""
    if isinstance(niw, NIW):
        return niw.as_dict()
    return {k: np.asarray(v).tolist() for k, v in (niw or {}).items()}


# ----------------------------------------------------------------------------- r for the built-in data sets

# The cross-validated r of each built-in data set at its default settings (pcrp.data.load(name)), computed once
# by BUILTIN_R_COMMAND and shipped in pcrp/datasets/cv_r.json with every setting and the time it took.
BUILTIN_R_FILE = "cv_r.json"
BUILTIN_R_COMMAND = "python -m pcrp.cv --builtin-r pcrp/datasets/cv_r.json"
BUILTIN_R_DATA = ("old-faithful", "mnist", "sim1", "sim2", "demo")
BUILTIN_R_SETTINGS = dict(folds=5, repeats=3, iters=2000, burn_in=1000, thin=10, seed=0, rule="robust")
# The check of a chosen r on the data it is then fitted to (check_with_chains): CHECK_CHAINS pCRP chains from unlike
# starts (k-means, one cluster, 20 random, k-means) of CHECK_ITERS sweeps (half burn-in, thin 5) at each r tried,
# judged against the clusters a CRP fit on the same data keeps (pcrp.collapse); chains disagree when their R-hat on K
# or the log joint exceeds CHECK_RHAT (a looser limit than the tables' 1.01: these runs keep 200 draws per chain, and
# healthy runs read up to 1.02 there). At most CHECK_TRIES values of r are run.
CHECK_CHAINS, CHECK_ITERS, CHECK_RHAT, CHECK_TRIES = 4, 2000, 1.05, 8
# The margin: the r kept is the largest grid r <= the proposal at which the chains keep the clusters both at r and at
# the next MARGIN_STEPS grid values above it (see check_with_chains).
MARGIN_STEPS = 1


def builtin_r_table():
    """{data set name: entry} from the shipped pcrp/datasets/cv_r.json (entry: r, data settings, CV settings,
    the curve, the command and date)."""
    import json
    from importlib import resources

    return json.loads((resources.files("pcrp") / "datasets" / BUILTIN_R_FILE).read_text(encoding="utf-8"))["data"]


def builtin_r(name):
    """(r, provenance) for a built-in data set: the cross-validated r shipped with pcrp and one sentence saying
    how it was chosen. For a name that is not a built-in data set (a CSV file): (pcrp.model.DEFAULT_R, a sentence
    saying that it is a default, not a choice for these data, and what to do)."""
    from .model import DEFAULT_R

    entry = builtin_r_table().get(name)
    if entry is None:
        return DEFAULT_R, (f"r = {DEFAULT_R:g} is pcrp's default, not chosen for these data: a mild power that "
                           "removes small spurious clusters on the built-in data sets; choose r for your data by "
                           "cross validation (the Choose r page, pcrp cv).")
    s = entry["cv"]
    data = entry["data"]
    about = ", ".join(f"{k} {v}" for k, v in data.items() if k not in ("kind", "name", "idx_folder") and v is not None)
    return float(entry["r"]), (
        f"r = {entry['r']:g} for {name}{f' ({about})' if about else ''} comes from {s['folds']}-fold cross validation repeated "
        f"{s['repeats']} times ({s['rule']} change-point rule, {s['iters']:,} sweeps per fit, seed {s['seed']}), "
        f"computed once with `{entry['command']}` ({entry['date']}); another N or seed may call for another r."
        + _check_text(entry))


def compute_builtin_r(names=BUILTIN_R_DATA, n_jobs=-1, progress=None):
    """{name: entry} for :data:`BUILTIN_R_FILE`: :func:`cross_validate` with BUILTIN_R_SETTINGS on each built-in
    data set at its default settings (standardised as :func:`pcrp.data.load` does)."""
    import datetime
    import time

    from . import data as data_mod

    out = {}
    for name in names:
        ds = data_mod.load(name)
        start = time.perf_counter()
        res = cross_validate(ds.X, standardize=ds.standardized, n_jobs=n_jobs, **BUILTIN_R_SETTINGS)
        seconds = time.perf_counter() - start
        out[name] = {"r": res.chosen_r, "cv_r": res.chosen_r, "reason": res.blow_up.reason,
                     "mean_rule_r": float(res.r_grid[res.mean_blow_up.chosen_index]),
                     "data": ds.source, "n": ds.n, "standardized": bool(ds.standardized),
                     "cv": {k: v for k, v in res.settings.items() if k not in ("niw_per_split",)},
                     "curve": res.table(), "seconds": round(seconds, 1), "command": BUILTIN_R_COMMAND,
                     "date": datetime.date.today().isoformat()}
        check_builtin_r(name, out[name], n_jobs=n_jobs)
        if progress is not None:
            progress(name, out[name])
    return out


def cv_kept_clusters(result, r):
    """The clusters the cross-validation fits of ``result`` (a CVResult) keep at ``r``: their mean K over splits at
    the grid value nearest r (a number; :func:`pcrp.collapse.reference_clusters` rounds it)."""
    mean_k, _ = result.curve("mean_k")
    return float(mean_k[int(np.argmin(np.abs(result.r_grid - r)))])


def check_with_chains(X, r, r_grid=DEFAULT_GRID, niw=None, *, alpha=1.0, seed=0, n_jobs=-1, crp_labels=None,
                      cv_mean_k=None, iters=CHECK_ITERS, work=None, progress=None, split_merge=True):
    """Check a proposed r on the data X (N, d) that will be fitted at that r, at their own N, and give it a margin.

    The proposal of cross validation (the last r before the loss jumps on another, smaller sample) has no margin
    by construction, and the r at which real clusters merge differs from one data set to the next (on Sim 2 the
    sampler keeps the three clusters up to r = 1.15-1.30 at N = 300); at N = 2,000 and more a chain started from one
    cluster does not leave it at an r just past that point, though the three clusters have the higher joint (a new
    table's weight alpha / (N^r + alpha) is tiny). docs/reproduce/cv_robustness.md measures all of this.

    So: the reference is the number of clusters a CRP fit on these data keeps (``crp_labels``, its point estimate,
    made here by :func:`pcrp.path.crp_start` when not given), capped by those the cross-validation fits keep at the
    proposal (``cv_mean_k``) when given (:func:`pcrp.collapse.reference_clusters`). At each r tried, CHECK_CHAINS
    pCRP chains from unlike starts run ``iters`` sweeps, and :func:`pcrp.collapse.judge` calls them collapsed when a
    chain's mean K falls below the reference by more than half a cluster, or when they disagree (R-hat on K or the
    log joint above CHECK_RHAT). The r kept is the largest grid r <= ``r`` whose chains keep the clusters at r and at
    the MARGIN_STEPS grid values above it (the margin: the first r tried above the proposal is run too); starting at
    ``r``, every collapse steps one grid value down. At most CHECK_TRIES values of r are run; if none qualifies, the
    lowest r tried is kept and the check says so. ``r`` must be on ``r_grid``.

    Returns (r to use, check): check is a JSON-ready dict {n (the points checked), chains, iters, rhat_limit,
    reference, reference_from,
    proposed, r, margin_steps, tried: [{r, mean_K_per_chain, rhat_K, rhat_log_joint, collapsed, disagree,
    verdict}], kept: bool (some r qualified), text: what happened in words}. ``work``: a
    :class:`pcrp.compute.WorkTicket` (the app's); progress(done, total): called after each r tried.
    """
    from .chains import run_chains
    from .collapse import disagreement, judge, kept_clusters, reference_clusters
    from .run_spec import make_run_spec

    X = np.ascontiguousarray(X, dtype=float)
    niw = niw if niw is not None else resolve_niw(X)
    grid = [float(g) for g in r_grid]
    proposed = int(np.argmin(np.abs(np.asarray(grid) - r)))
    if crp_labels is None:
        from .path import crp_start

        crp_labels = crp_start(X, niw, alpha=alpha, iters=iters, burn_in=iters // 2, seed=seed, n_jobs=n_jobs,
                               split_merge=split_merge, work=work).labels
        crp_from = f"a CRP fit of {CHECK_CHAINS} chains x {iters:,} sweeps on these data"
    else:
        crp_from = "the CRP fit on these data"
    reference = reference_clusters(crp_labels, cv_mean_k)
    crp_kept = kept_clusters(crp_labels)
    reference_from = (crp_from + (f" ({crp_kept}) and the cross-validation fits at r = {grid[proposed]:g} (mean K "
                                  f"{cv_mean_k:.2f})" if reference < crp_kept else ""))
    results = {}

    def healthy(index):
        if index >= len(grid):
            return False
        if index not in results:
            if len(results) >= CHECK_TRIES:
                return None
            value = grid[index]
            spec = make_run_spec(X, prior=PowerCRP(alpha, value), niw=niw, n_chains=CHECK_CHAINS, iters=iters,
                                 burn_in=iters // 2, thin=5, seed=seed, n_jobs=n_jobs, split_merge=split_merge)
            chains = run_chains(X, spec, work=work)
            diag = chains.diagnostics()
            mean_k = chains.K_after_burn_in.mean(axis=1)
            text = disagreement(diag, mean_k, CHECK_RHAT)
            verdict = judge(mean_k, agree=text is None, reference=reference, what=f"the pCRP at r = {value:g}",
                            reference_name="the CRP", inits=chains.inits, disagreement_text=text)
            results[index] = {"r": value, "mean_K_per_chain": [round(k, 3) for k in verdict.chain_mean_k],
                              "rhat_K": diag["K"]["rhat"], "rhat_log_joint": diag["log_joint"]["rhat"],
                              "collapsed": verdict.collapsed, "disagree": verdict.disagree, "verdict": verdict.text}
            if progress is not None:
                progress(len(results), CHECK_TRIES)
        return not (results[index]["collapsed"] or results[index]["disagree"])

    chosen, index, bottom = None, proposed, False
    while index >= 0:
        ok = healthy(index)
        if ok is None:
            break
        if ok:
            above = [healthy(index + step) for step in range(1, MARGIN_STEPS + 1)]
            if any(a is None for a in above):
                break
            if all(above) or index + MARGIN_STEPS >= len(grid):
                chosen = index
                break
            if index == 0:  # the grid's first r keeps the clusters; there is no lower r to give it a margin
                chosen, bottom = index, True
                break
        index -= 1
    tried = list(results.values())  # in the order run: the proposal first
    kept = chosen is not None
    final = grid[chosen] if kept else grid[min(results)]
    check = {"n": int(X.shape[0]), "chains": CHECK_CHAINS, "iters": int(iters), "rhat_limit": CHECK_RHAT,
             "reference": reference,
             "reference_from": reference_from, "proposed": grid[proposed], "r": final, "margin_steps": MARGIN_STEPS,
             "tried": tried, "kept": kept, "at_grid_start": bottom}
    check["text"] = check_text(check)
    return final, check


# The CRP reference of a pCRP fit that has no CV check behind it (`pcrp run --prior pcrp`): CRP chains on at most
# REFERENCE_POINTS points of the data (a random subset above that: a cluster of 2% of the points still has 100),
# of at most REFERENCE_ITERS sweeps.
REFERENCE_POINTS, REFERENCE_ITERS = 5000, 1000


def crp_reference(X, niw=None, *, alpha=1.0, seed=0, n_jobs=-1, iters=REFERENCE_ITERS, split_merge=True,
                  max_points=REFERENCE_POINTS, work=None):
    """(clusters a CRP fit keeps on X (N, d), a phrase saying which fit): :func:`pcrp.collapse.kept_clusters` of the
    point estimate of CHECK_CHAINS CRP chains of ``iters`` sweeps (:func:`pcrp.path.crp_start`), on a random
    ``max_points`` of the points when N is larger. The reference :func:`pcrp.collapse.judge` compares a pCRP fit
    with."""
    from .collapse import kept_clusters
    from .path import crp_start

    X = np.ascontiguousarray(X, dtype=float)
    niw = niw if niw is not None else resolve_niw(X)
    rows = X.shape[0]
    if rows > max_points:
        X = X[np.sort(np.random.default_rng(seed).choice(rows, size=max_points, replace=False))]
    iters = max(int(iters), 20)
    labels = crp_start(X, niw, alpha=alpha, n_chains=CHECK_CHAINS, iters=iters, burn_in=iters // 2,
                       thin=max(1, iters // 200), seed=seed, n_jobs=n_jobs, split_merge=split_merge, work=work).labels
    where = "these data" if rows <= max_points else f"a random {max_points:,} of the {rows:,} points"
    return kept_clusters(labels), f"a CRP fit of {CHECK_CHAINS} chains x {iters:,} sweeps on {where}"


# `pcrp run --r cv`: cross validation on at most CHOOSE_CV_POINTS points of the data (a random subset above that, as
# the paper tunes r on a separate sample of 200), with BUILTIN_R_SETTINGS, then the check on all the data.
CHOOSE_CV_POINTS = 500


def choose_r(X, *, standardize=False, niw=None, alpha=1.0, seed=0, n_jobs=-1, max_cv_points=CHOOSE_CV_POINTS,
             split_merge=True, progress=None):
    """The r to fit X (N, d) with: cross validation (:func:`cross_validate`, BUILTIN_R_SETTINGS, the robust rule) on
    at most ``max_cv_points`` of the points, then :func:`check_with_chains` on all of them, against a CRP fit on
    them and the clusters the cross-validation fits keep. ``niw``: None or a dict of fixed NIW settings (the CV
    fits resolve the rest on their training parts; the check uses :func:`pcrp.model.resolve_niw` of X with them).

    Returns (r, details): details is JSON-ready {cv_r, cv_points, cv_reason, cv_settings, curve, check, text}, text
    one paragraph saying where r came from. ``progress(stage, done, total)``: stage "cross validation" or "check".
    """
    X = np.ascontiguousarray(X, dtype=float)
    rows = X.shape[0]
    cv_X = X
    if rows > max_cv_points:
        cv_X = X[np.sort(np.random.default_rng(seed).choice(rows, size=max_cv_points, replace=False))]
    settings = {k: v for k, v in BUILTIN_R_SETTINGS.items() if k != "seed"}
    result = cross_validate(cv_X, None if isinstance(niw, NIW) else niw, standardize=standardize, alpha=alpha,
                            seed=seed, n_jobs=n_jobs, split_merge=split_merge,
                            progress=None if progress is None else lambda d, t: progress("cross validation", d, t),
                            **settings)
    niw_all = niw if isinstance(niw, NIW) else resolve_niw(X, **(niw or {}))
    r, check = check_with_chains(X, result.chosen_r, result.r_grid, niw_all, alpha=alpha, seed=seed, n_jobs=n_jobs,
                                 cv_mean_k=cv_kept_clusters(result, result.chosen_r), split_merge=split_merge,
                                 progress=None if progress is None else lambda d, t: progress("check", d, t))
    where = "the data" if rows == cv_X.shape[0] else f"a random {cv_X.shape[0]:,} of the {rows:,} points"
    text = (f"cross validation on {where} ({settings['folds']} folds x {settings['repeats']} repeats, "
            f"{settings['iters']:,} sweeps per fit, seed {seed}) proposed r = {result.chosen_r:g} ({result.blow_up.reason}). "
            + check["text"])
    details = {"cv_r": result.chosen_r, "cv_points": int(cv_X.shape[0]), "cv_reason": result.blow_up.reason,
               "cv_settings": {k: v for k, v in result.settings.items() if k != "niw_per_split"},
               "curve": result.table(), "check": check, "text": text}
    return r, details


def check_text(check):
    """The check of :func:`check_with_chains` in words: the r kept, why, and what was seen at the r above it."""
    proposed, final = check["proposed"], check["r"]
    ref = check["reference"]
    head = (f"Checked on the data fitted, at their own N: {check['chains']} pCRP chains of {check['iters']:,} sweeps "
            f"from unlike starts at each r, against the {ref} clusters kept by {check['reference_from']} (clusters "
            "of at least 2% of the points in its point estimate). ")

    def seen(t):
        k = ", ".join(f"{v:.2f}" for v in t["mean_K_per_chain"])
        what = ("collapsed and the chains disagree" if t["collapsed"] and t["disagree"] else "collapsed"
                if t["collapsed"] else "the chains disagree" if t["disagree"] else "kept the clusters")
        return f"r = {t['r']:g}: {what} (mean K per chain {k})"

    seen_all = "; ".join(seen(t) for t in check["tried"])
    if not check["kept"]:
        return (head + f"No r tried kept the {ref} clusters ({seen_all}): r = {final:g}, the lowest tried, is used; "
                "read the fit with its collapse flag.")
    if check.get("at_grid_start"):
        return (head + f"r = {final:g}, the grid's first value: the chains keep the clusters there but not one grid "
                f"step above it, and there is no lower r to give it a margin ({seen_all}).")
    if final == proposed:
        return head + (f"r = {proposed:g}, as cross validation proposed: the chains keep the clusters there and "
                       f"{check['margin_steps']} grid step above it ({seen_all}).")
    return head + (f"r steps down from the proposed {proposed:g} to {final:g}, the largest r at which the chains keep "
                   f"the clusters both there and one grid step above ({seen_all}).")


def check_builtin_r(name, entry, n_jobs=-1):
    """:func:`check_with_chains` of ``entry["cv_r"]`` on the whole built-in data set (the data `pcrp run NAME` fits),
    against a CRP fit on it and the clusters the cross-validation fits keep there (``entry["curve"]``); sets
    entry["r"] and entry["check"]. Modifies and returns ``entry``."""
    from . import data as data_mod

    ds = data_mod.load(name)
    curve = {round(row["r"], 6): row["mean_k"] for row in entry["curve"]}
    grid = [row["r"] for row in entry["curve"]]
    entry["r"], entry["check"] = check_with_chains(ds.X, entry["cv_r"], grid, n_jobs=n_jobs,
                                                   cv_mean_k=curve.get(round(entry["cv_r"], 6)))
    return entry


def _check_text(entry):
    check = entry.get("check")
    return f" {check['text']}" if check and check.get("text") else ""


def write_builtin_r(path, names=BUILTIN_R_DATA, n_jobs=-1):
    """Compute :func:`compute_builtin_r` and write it as JSON to ``path`` (whole or not at all)."""
    from .files import atomic_write
    from .json_text import dumps

    def show(name, entry):
        print(f"{name}: r = {entry['r']:g} ({entry['seconds']:.0f} s); {entry['reason']}", flush=True)

    table = compute_builtin_r(names, n_jobs=n_jobs, progress=show)
    payload = {"about": "The cross-validated pCRP power r of each built-in data set at its default settings "
                        "(pcrp.cv.builtin_r reads it).", "data": table}
    atomic_write(path, lambda f: f.write(dumps(payload, indent=1)))


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(prog="python -m pcrp.cv", description="Compute the shipped r of the built-in "
                                     "data sets (pcrp/datasets/cv_r.json).")
    parser.add_argument("--builtin-r", metavar="OUT.json", required=True, help="where to write the table")
    parser.add_argument("--data", default=",".join(BUILTIN_R_DATA), help="comma-separated built-in names")
    parser.add_argument("--n-jobs", type=int, default=-1)
    args = parser.parse_args()
    write_builtin_r(args.builtin_r, [n.strip() for n in args.data.split(",") if n.strip()], n_jobs=args.n_jobs)
