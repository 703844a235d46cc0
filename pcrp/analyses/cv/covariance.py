"""Which covariance type the data support: full, diagonal and spherical clusters compared by cross validation, with
the machinery that chooses r (:func:`compare_covariance_types`), and the comparison shipped for the built-in data
sets (:func:`shipped_covariance_choice`).

Each type gets its own r, chosen as r always is (:func:`pcrp.analyses.cv.cross_validate`, the robust change-point
rule, then :func:`pcrp.analyses.cv.check_with_chains` on all the data), on the same splits (the splits depend on N,
the folds, the repeats and the seed only: :func:`pcrp.analyses.cv.make_splits`). The types are then compared by the
held-out log predictive density per point at their own r, split by split, with the rule's own yardstick of noise:

- the best type is the one of highest mean held-out log predictive;
- the chosen type is the simplest (spherical, then diagonal, then full) whose mean falls short of the best's by no
  more than twice the standard error of that difference over the splits (the paired difference's own SE; the r rule
  allows a rise of twice the SE of a difference of two points on its curve before it calls a jump). A simpler
  type that predicts held-out points as well, within noise, is preferred, as a larger r is while the loss stays
  flat.

The loss of eq. (5) at each type's r is reported beside it (its units are the same for every type: the held-out
points in the training part's units) but does not decide: the question is which model of a cluster's shape
predicts new points, which is what the log predictive scores. At d = 1 the three types are one model (docs/design.md
section 1.2): nothing is compared, and the comparison says so.
"""

from dataclasses import dataclass, field

import numpy as np

from .settings import CV_PARAMS, DEFAULT_GRID, CVError

# Simplest first: the order in which a type is preferred when the held-out log predictive cannot tell them apart.
SIMPLEST_FIRST = ("spherical", "diag", "full")
# How many standard errors of the paired difference a simpler type's log predictive may fall short of the best's.
SE_MULT = 2.0


@dataclass(frozen=True)
class TypeScore:
    """One covariance type's cross validation at its own r: r (the r it would be fitted with: checked when a check
    ran), cv_r (cross validation's proposal), log_pred / loss / mean_k: the mean over the splits at r, their SEs
    (over splits), splits_log_pred: each split's held-out log predictive per point at r (the splits in order)."""

    covariance_type: str
    r: float
    cv_r: float
    log_pred: float
    log_pred_se: float
    loss: float
    loss_se: float
    mean_k: float
    splits_log_pred: tuple
    checked: bool = False


@dataclass(frozen=True)
class CovarianceChoice:
    """The comparison: scores {type: TypeScore}, best (highest held-out log predictive), chosen (the simplest within
    the yardstick of the best), differences {type: (best's log predictive minus its, SE of that difference)}, reason
    (one sentence), one_model (d = 1: the types are one model, nothing compared), where (what was compared, in
    words: data and settings)."""

    scores: dict
    best: str
    chosen: str
    differences: dict = field(default_factory=dict)
    reason: str = ""
    one_model: bool = False
    where: str = ""

    def table(self):
        """Rows for a table, simplest type first: covariance_type, r, log_pred, log_pred_se, difference (best minus
        it) and its SE, loss, loss_se, mean_k, chosen, best."""
        rows = []
        for t in [t for t in SIMPLEST_FIRST if t in self.scores]:
            s = self.scores[t]
            diff, diff_se = self.differences.get(t, (0.0, 0.0))
            rows.append({"covariance_type": t, "r": s.r, "log_pred": s.log_pred, "log_pred_se": s.log_pred_se,
                         "behind_best": diff, "behind_best_se": diff_se, "loss": s.loss, "loss_se": s.loss_se,
                         "mean_k": s.mean_k, "chosen": t == self.chosen, "best": t == self.best})
        return rows

    def text(self):
        """One paragraph: which type the data support and why."""
        from ..collapse import covariance_words

        if self.one_model:
            return (f"At d = 1 the full, diagonal and spherical covariances are one model: there is nothing to choose "
                    f"({self.reason})." + (f" {self.where}" if self.where else ""))
        return (f"The data support {covariance_words(self.chosen)}: {self.reason}" + (f" {self.where}" if self.where
                                                                                   else ""))


def type_score(result, covariance_type, r, checked=False):
    """The :class:`TypeScore` of a CVResult of one covariance type at ``r`` (a value on its grid)."""
    g = int(np.argmin(np.abs(result.r_grid - r)))
    (lp, lp_se), (loss, loss_se), (k, _) = (result.curve(name) for name in ("log_pred", "loss", "mean_k"))
    return TypeScore(covariance_type, float(result.r_grid[g]), float(result.chosen_r), float(lp[g]), float(lp_se[g]),
                     float(loss[g]), float(loss_se[g]), float(k[g]), tuple(float(v) for v in result.log_pred[:, g]),
                     bool(checked))


def choose_covariance(scores, *, one_model=False, where=""):
    """The :class:`CovarianceChoice` of ``scores`` ({type: TypeScore}, each type's held-out log predictive over the
    same splits): the best by mean held-out log predictive, and the simplest type (:data:`SIMPLEST_FIRST`) whose
    mean is below the best's by at most :data:`SE_MULT` standard errors of the split-by-split difference."""
    from ..collapse import covariance_words

    if not scores:
        raise CVError("No covariance type to compare.")
    lengths = {len(s.splits_log_pred) for s in scores.values()}
    if len(lengths) != 1:
        raise CVError("The covariance types were cross-validated on different splits; compare them on the same "
                      "folds, repeats and seed.")
    best = max(scores, key=lambda t: scores[t].log_pred)
    top = np.asarray(scores[best].splits_log_pred)
    differences = {}
    for t, s in scores.items():
        diff = top - np.asarray(s.splits_log_pred)
        se = float(diff.std(ddof=1) / np.sqrt(diff.size)) if diff.size > 1 else float("nan")
        differences[t] = (float(diff.mean()), se)
    if one_model:
        t = next(iter(scores))
        return CovarianceChoice(scores, t, t, differences, f"held-out log predictive {scores[t].log_pred:.4f} "
                                f"(SE {scores[t].log_pred_se:.4f}) nats per point at r = {scores[t].r:g}", True, where)
    chosen = next(t for t in SIMPLEST_FIRST if t in scores and
                  (t == best or differences[t][0] <= SE_MULT * differences[t][1]))
    lp = scores[best]
    if chosen == best:
        others = [t for t in SIMPLEST_FIRST if t in scores and t != best]
        behind = "; ".join(f"{covariance_words(t)} {differences[t][0]:.3f} (SE {differences[t][1]:.3f}) behind"
                           for t in others)
        reason = (f"the highest held-out log predictive, {lp.log_pred:.4f} (SE {lp.log_pred_se:.4f}) nats per point at "
                  f"its r = {lp.r:g}, and "
                  + (f"every simpler type falls short of it by more than {SE_MULT:g} standard errors of the "
                     f"split-by-split difference ({behind})." if others else "no other type was compared."))
    else:
        c = scores[chosen]
        reason = (f"its held-out log predictive, {c.log_pred:.4f} (SE {c.log_pred_se:.4f}) nats per point at its r = "
                  f"{c.r:g}, is within {SE_MULT:g} standard errors of the best, {covariance_words(best)}' "
                  f"{lp.log_pred:.4f} at r = {lp.r:g} (behind by {differences[chosen][0]:.3f}, SE "
                  f"{differences[chosen][1]:.3f}, split by split), and it is the simpler model.")
    return CovarianceChoice(scores, best, chosen, differences, reason, False, where)


def covariance_work(n_points, dims, n_r, folds, repeats, iters, types=None, check=True):
    """Estimated core-seconds of :func:`compare_covariance_types`: cross validation (:func:`pcrp.analyses.cv.cv_work`)
    and, when ``check``, the check with chains (:func:`pcrp.analyses.cv.check_work`) per type compared (all three, or
    one at d = 1)."""
    from .builtin import types_for
    from .check import check_work
    from .validate import cv_work

    n_types = len(types_for(dims) if types is None else (types if int(dims) > 1 else types[:1]))
    return n_types * (cv_work(n_points, dims, n_r, folds, repeats, iters)
                      + (check_work(n_points, dims, n_r, iters) if check else 0.0))


def compare_covariance_types(X, types=None, *, standardize=False, niw=None, check=True, n_jobs=None, work=None,
                             progress=None, **cv_settings):
    """Cross-validate r for each covariance type in ``types`` (None: full, diag and spherical; one at d = 1, where
    they are one model) on X (N, d), check each proposal with chains on all of X when ``check``, and compare the types
    (:func:`choose_covariance`).

    cv_settings: :func:`pcrp.analyses.cv.cross_validate`'s (r_grid, folds, repeats, iters, burn_in, thin, seed,
    alpha, rule, scheduler; None or absent: its defaults), the same for every type; ``niw``: None or a dict of fixed
    NIW settings (without covariance_type); ``work``: a :class:`pcrp.sampling.compute.WorkTicket` (the app's), whose
    budget must hold :func:`covariance_work`; progress(covariance_type, stage, done, total), stage "cross
    validation" or "check".

    Returns (CovarianceChoice, {type: (CVResult, check dict or None)})."""
    from ...model import check_covariance_type, resolve_niw
    from .builtin import types_for
    from .check import check_with_chains, cv_kept_clusters
    from .validate import cross_validate

    X = np.ascontiguousarray(X, dtype=float)
    if niw is not None and (not isinstance(niw, dict) or "covariance_type" in niw):
        raise CVError("niw must be None or a dict of fixed NIW settings without covariance_type (each type is "
                      "compared in turn).")
    types = list(types_for(X.shape[1])) if types is None else [check_covariance_type(t) for t in types]
    if len(set(types)) != len(types) or not types:
        raise CVError(f"Give each covariance type to compare once (got {', '.join(types) or 'none'}).")
    one_model = X.shape[1] == 1
    if one_model:
        types = types[:1]
    if work is not None and work.budget is not None:  # refused whole before any fit (each fit reserves its part)
        from ...sampling.compute import WorkOverBudget, describe_seconds

        s = CV_PARAMS.resolve(**{k: cv_settings.get(k) for k in ("folds", "repeats", "iters")})
        grid = cv_settings.get("r_grid")
        need = covariance_work(X.shape[0], X.shape[1], len(DEFAULT_GRID if grid is None else grid), s["folds"],
                               s["repeats"], s["iters"], types, check)
        if work.reserved + need > work.budget:
            raise WorkOverBudget(f"Comparing {len(types)} covariance types needs about {describe_seconds(need)} of "
                                 f"sampling, more than the {describe_seconds(work.budget - work.reserved)} left of "
                                 "this action's budget: use fewer values of r, folds, repeats or sweeps per fit.")
    scores, runs = {}, {}
    for t in types:
        fixed = {**(niw or {}), "covariance_type": t}
        result = cross_validate(X, fixed, standardize=standardize, n_jobs=n_jobs, work=work,
                                progress=None if progress is None else (lambda d, n, t=t: progress(t, "cross validation",
                                                                                                   d, n)),
                                **cv_settings)
        r, checked = result.chosen_r, None
        if check:  # with the fits' own sweeps, as the page's and pcrp cv's checks
            r, checked = check_with_chains(X, result.chosen_r, result.r_grid, resolve_niw(X, **fixed),
                                           alpha=cv_settings.get("alpha"), seed=cv_settings.get("seed"),
                                           n_jobs=n_jobs, cv_mean_k=cv_kept_clusters(result, result.chosen_r),
                                           iters=result.settings["iters"], work=work,
                                           progress=None if progress is None else (lambda d, n, t=t: progress(
                                               t, "check", d, n)))
        scores[t] = type_score(result, t, r, checked=check)
        runs[t] = (result, checked)
    return choose_covariance(scores, one_model=one_model), runs


def shipped_covariance_choice(name, data=None):
    """The :class:`CovarianceChoice` of built-in data set ``name`` at the data settings ``data`` (as
    :func:`pcrp.analyses.cv.shipped_r` takes them) from the shipped cross validation of every covariance type
    (pcrp/datasets/cv_r.json: each type at its checked r, on the same splits), or None where those settings were not
    cross-validated for every type (a CSV, another N). Nothing is computed."""
    from .builtin import BUILTIN_R_COMMAND, shipped_r
    from ...model import COVARIANCE_TYPES

    found = {t: shipped_r(name, t, data) for t in COVARIANCE_TYPES}
    if not all(f.matched for f in found.values()):
        return None
    entries = {t: f.entry for t, f in found.items()}
    one_model = int(entries["full"]["d"]) == 1  # one entry serves the three types
    if one_model:
        entries = {"full": entries["full"]}
    scores = {}
    for t, e in entries.items():
        row = next(row for row in e["curve"] if abs(row["r"] - e["r"]) < 1e-9)
        scores[t] = TypeScore(t, float(e["r"]), float(e["cv_r"]), row["log_pred"], row["log_pred_se"], row["loss"],
                              row["loss_se"], row["mean_k"], tuple(e["splits"]["log_pred"]), "check" in e)
    s = next(iter(entries.values()))["cv"]
    where = (f"({s['folds']}-fold cross validation repeated {s['repeats']} times, {s['iters']:,} sweeps per fit, seed "
             f"{s['seed']}, each type at its own checked r; shipped, made with `{BUILTIN_R_COMMAND}`.)")
    return choose_covariance(scores, one_model=one_model, where=where)
