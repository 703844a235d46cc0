"""The check of a proposed r on the data that will be fitted at it, at their own N, with a margin
(:func:`check_with_chains`), and its CRP reference.
"""

import numpy as np

from ...model import resolve_niw
from ..path import REFERENCE, TUNED, crp_start, tuned_prior
from .settings import CV_PARAMS, DEFAULT_GRID


# The check of a chosen r on the data it is then fitted to (check_with_chains): CHECK_CHAINS pCRP chains from unlike
# starts (k-means, one cluster, 20 random, k-means) of CHECK_ITERS sweeps (half burn-in, thin 5) at each r tried,
# judged against the clusters a CRP fit on the same data keeps (pcrp.analyses.collapse); chains disagree when their R-hat on K
# or the log joint exceeds CHECK_RHAT (a looser limit than the tables' 1.01: these runs keep 200 draws per chain, and
# healthy runs read up to 1.02 there). At most CHECK_TRIES values of r are run.
CHECK_CHAINS, CHECK_ITERS, CHECK_RHAT, CHECK_TRIES = 4, 2000, 1.05, 8
# The margin: the r kept is the largest grid r <= the proposal at which the chains keep the clusters both at r and at
# the next MARGIN_STEPS grid values above it (see check_with_chains).
MARGIN_STEPS = 1


def cv_kept_clusters(result, r):
    """The clusters the cross-validation fits of ``result`` (a CVResult) keep at ``r``: their mean K over splits at
    the grid value nearest r (a number; :func:`pcrp.analyses.collapse.reference_clusters` rounds it)."""
    mean_k, _ = result.curve("mean_k")
    return float(mean_k[int(np.argmin(np.abs(result.r_grid - r)))])


def check_with_chains(X, r, r_grid=None, niw=None, *, alpha=None, seed=None, n_jobs=None, crp_labels=None,
                      cv_mean_k=None, iters=None, work=None, progress=None, split_merge=None):
    """Check a proposed r on the data X (N, d) that will be fitted at that r, at their own N, and give it a margin.

    The proposal of cross validation (the last r before the loss jumps on another, smaller sample) has no margin
    by construction, and the r at which real clusters merge differs from one data set to the next (on Sim 2 the
    sampler keeps the three clusters up to r = 1.15-1.30 at N = 300); at N = 2,000 and more a chain started from one
    cluster does not leave it at an r just past that point, though the three clusters have the higher joint (a new
    table's weight alpha / (N^r + alpha) is tiny). docs/reproduce/cv_robustness.md measures all of this.

    So: the reference is the number of clusters a CRP fit on these data keeps (``crp_labels``, its point estimate,
    made here by :func:`pcrp.analyses.path.crp_start` when not given), capped by those the cross-validation fits keep at the
    proposal (``cv_mean_k``) when given (:func:`pcrp.analyses.collapse.reference_clusters`). At each r tried, CHECK_CHAINS
    pCRP chains from unlike starts run ``iters`` sweeps, and :func:`pcrp.analyses.collapse.judge` calls them collapsed when a
    chain's mean K falls below the reference by more than half a cluster, or when they disagree (R-hat on K or the
    log joint above CHECK_RHAT). The r kept is the largest grid r <= ``r`` whose chains keep the clusters at r and at
    the MARGIN_STEPS grid values above it (the margin: the first r tried above the proposal is run too); starting at
    ``r``, every collapse steps one grid value down. At most CHECK_TRIES values of r are run; if none qualifies, the
    lowest r tried is kept and the check says so. ``r`` must be on ``r_grid`` (None: :data:`DEFAULT_GRID`).
    None takes the declared default: alpha and seed :data:`CV_PARAMS`', iters CHECK_ITERS, n_jobs and split_merge
    the run's.

    Returns (r to use, check): check is a JSON-ready dict {n (the points checked), chains, iters, rhat_limit,
    reference, reference_from,
    proposed, r, margin_steps, tried: [{r, mean_K_per_chain, rhat_K, rhat_log_joint, collapsed, disagree,
    verdict}], kept: bool (some r qualified), text: what happened in words}. ``work``: a
    :class:`pcrp.sampling.compute.WorkTicket` (the app's); progress(done, total): called after each r tried.
    """
    from ...runs.chains import run_chains
    from ..collapse import covariance_words, disagreement, judge, make_reference
    from ...runs.run_spec import make_run_spec

    X = np.ascontiguousarray(X, dtype=float)
    niw = niw if niw is not None else resolve_niw(X)
    grid = [float(g) for g in (DEFAULT_GRID if r_grid is None else r_grid)]
    proposed = int(np.argmin(np.abs(np.asarray(grid) - r)))
    s = CV_PARAMS.resolve(alpha=alpha, seed=seed)
    alpha, seed = s["alpha"], s["seed"]
    iters = CHECK_ITERS if iters is None else iters
    if crp_labels is None:
        crp_labels = crp_start(X, niw, alpha=alpha, n_chains=CHECK_CHAINS, iters=iters, burn_in=iters // 2,
                               seed=seed, n_jobs=n_jobs, split_merge=split_merge, work=work).labels
        crp_from = f"a {REFERENCE.label} fit of {CHECK_CHAINS} chains x {iters:,} sweeps on these data"
    else:
        crp_from = f"the {REFERENCE.label} fit on these data"
    kind = covariance_words(niw.covariance_type)
    ref = make_reference(crp_labels, crp_from=crp_from, covariance_type=niw.covariance_type, cv_mean_k=cv_mean_k,
                         cv_from=f"cross validation of r for {kind} on these data (its fits' mean K "
                                 f"{cv_mean_k:.2f} at the r it proposed, {grid[proposed]:g})"
                         if cv_mean_k is not None else "")
    reference, crp_kept = ref.clusters, ref.crp
    reference_from = (f"{crp_from} with {kind}" + (f" (which keeps {crp_kept}), capped by the cross-validation fits "
                                                   f"at r = {grid[proposed]:g} (mean K {cv_mean_k:.2f})"
                                                   if reference < crp_kept else ""))
    # the check judges against the CRP's count where cross validation gave none (a chain below the clusters a CRP
    # fit keeps steps r down): a number it vouches for, not the CRP's count alone said as a comparison
    judged_against = ref if ref.shown else reference
    results = {}

    def healthy(index):
        if index >= len(grid):
            return False
        if index not in results:
            if len(results) >= CHECK_TRIES:
                return None
            value = grid[index]
            spec = make_run_spec(X, prior=tuned_prior(alpha, value), niw=niw, n_chains=CHECK_CHAINS, iters=iters,
                                 burn_in=iters // 2, thin=5, seed=seed, n_jobs=n_jobs, split_merge=split_merge)
            chains = run_chains(X, spec, work=work)
            diag = chains.diagnostics()
            mean_k = chains.K_after_burn_in.mean(axis=1)
            text = disagreement(diag, mean_k, CHECK_RHAT)
            verdict = judge(mean_k, agree=text is None, reference=judged_against,
                            what=f"the {TUNED.label} at r = {value:g} with {kind}",
                            reference_name=f"the {REFERENCE.label}", inits=chains.inits, disagreement_text=text)
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


def check_work(n_points, dims, n_r=None, iters=None, crp=True):
    """Estimated core-seconds of :func:`check_with_chains` at its most: CHECK_CHAINS pCRP chains of ``iters``
    (CHECK_ITERS) sweeps at up to CHECK_TRIES values of r (no more than the grid's ``n_r``), and, when ``crp``, the
    CRP fit it makes for its reference (CHECK_CHAINS chains more)."""
    from ...sampling.compute import work_cost

    tries = CHECK_TRIES if n_r is None else min(CHECK_TRIES, int(n_r))
    iters = CHECK_ITERS if iters is None else int(iters)
    return work_cost(n_points, dims, iters, chains=CHECK_CHAINS * (tries + (1 if crp else 0)))


# The CRP reference of a pCRP fit that has no CV check behind it (`pcrp run`, PCRPMixture: pcrp.analyses.run_summary
# .reference_fit) runs on at most REFERENCE_POINTS points of the data (a random subset above that: a cluster of 2% of
# the points still has 100).
REFERENCE_POINTS = 5000
