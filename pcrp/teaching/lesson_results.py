"""Steps 6 and 7 of the lesson, read from shipped result files (nothing is run): the cross validation that chose
r for Old Faithful (pcrp/datasets/cv_r.json, :func:`cv_choice`) and the comparison of the pCRP with the other
methods (docs/compare/compare.json, :func:`comparison`). Both are plain data; :mod:`pcrp.teaching.lesson_words`
says them."""

from dataclasses import dataclass, field

import numpy as np

from .lesson import OLD_FAITHFUL, OLD_FAITHFUL_TRUE_K, shipped_r


# ----------------------------------------------------------------------------- step 6: choosing r
@dataclass(frozen=True)
class Choice:
    """The shipped cross validation of Old Faithful: r grid (G,), the held-out loss of eq. (5) and its SE (G,), the
    held-out log predictive density per point and its SE (G,), cross validation's proposal and the r used (the
    proposal after the check with chains), folds, repeats, command and date; ``mean_k`` (G,) the clusters the
    cross-validation fits keep at each r; the shipped rule's reason (``reason``: the sentence the rule wrote, naming
    its parts' proposals) and the check's points (``checked_n``) and chains (``check_chains``); ``true_k``: the
    data's true number of clusters."""

    r_grid: np.ndarray
    loss: np.ndarray
    loss_se: np.ndarray
    log_pred: np.ndarray
    log_pred_se: np.ndarray
    proposed: float
    used: float
    folds: int
    repeats: int
    command: str
    date: str
    mean_k: np.ndarray = field(default_factory=lambda: np.zeros(0))
    reason: str = ""
    checked_n: int = 0
    check_chains: int = 0
    true_k: int = OLD_FAITHFUL_TRUE_K

    @property
    def at(self):
        """Grid index of the proposal."""
        return int(np.argmin(np.abs(self.r_grid - self.proposed)))

    @property
    def next_at(self):
        """Grid index just above the proposal (None at the grid's end)."""
        return self.at + 1 if self.at + 1 < self.r_grid.size else None

    @property
    def rise(self):
        """The loss at the proposal less the loss at the grid's first r."""
        return float(self.loss[self.at] - self.loss[0])

    @property
    def within_se(self):
        """Whether the loss moved by at most one standard error from the grid's first r to the proposal
        (:func:`within_one_se`)."""
        return within_one_se(self.loss, self.loss_se, 0, self.at)

    @property
    def log_pred_within_se(self):
        """Whether the held-out log predictive moved by at most one standard error from the grid's first r to the
        proposal: the loss's yardstick (:func:`within_one_se`)."""
        return within_one_se(self.log_pred, self.log_pred_se, 0, self.at)

    @property
    def jump_at(self):
        """Grid index where the mean loss curve blows up by the shipped rule's yardstick
        (:func:`pcrp.analyses.cv.blow_up.find_blow_up` on the mean and its SE), or None."""
        from ..analyses.cv.blow_up import find_blow_up

        return find_blow_up(self.loss, self.loss_se, r_grid=self.r_grid).index

    def rule_parts(self):
        """(the repeats' proposals [r], the splits' lower quartile r, splits) read from the rule's own ``reason``
        (:func:`pcrp.analyses.cv.blow_up.robust_blow_up` writes them there); None when the reason names no parts (the
        loss never blew up, or a file of another rule)."""
        import re

        found = re.search(r"proposals? \(([^)]*)\) and the lower quartile of the (\d+) splits' own proposals "
                          r"\(([^)]*)\)", self.reason)
        if not found:
            return None
        repeats = [float(v) for v in found.group(1).split(",")]
        return repeats, float(found.group(3)), int(found.group(2))


def within_one_se(values, ses, i, j):
    """Whether ``values`` (G,) moved by at most one standard error from index i to index j, the larger of the two
    ends' SEs (``ses`` (G,)): the one yardstick step 6 judges both cross-validation curves by."""
    return abs(float(values[j] - values[i])) <= one_se(ses, i, j)


def one_se(ses, i, j):
    """The larger of the standard errors at indices i and j (a missing SE counts 0)."""
    return max(float(np.nan_to_num(ses[i])), float(np.nan_to_num(ses[j])))


def cv_choice(name=OLD_FAITHFUL):
    """Step 6: read from the shipped cv_r.json (:func:`pcrp.analyses.cv.builtin_r_table`), nothing run."""
    used, proposed, entry = shipped_r(name)
    curve = entry["curve"]

    def column(key):
        return np.array([c[key] for c in curve], dtype=float)

    check = entry.get("check") or {}
    return Choice(column("r"), column("loss"), column("loss_se"), column("log_pred"), column("log_pred_se"), proposed,
                  used, int(entry["cv"]["folds"]), int(entry["cv"]["repeats"]), str(entry["command"]),
                  str(entry["date"]), column("mean_k"), str(entry.get("reason", "")), int(check.get("n", 0)),
                  int(check.get("chains", 0)), OLD_FAITHFUL_TRUE_K)


# ----------------------------------------------------------------------------- step 7: compared with what
@dataclass(frozen=True)
class Comparison:
    """The shipped comparison (:func:`pcrp.experiments.compare.read_report` of docs/compare/compare.json): per method
    compared with the pCRP, on how many labelled data sets the pCRP's mean K was nearer the true number of clusters,
    as near (within ``k_margin``) or farther, and its NMI higher, within ``nmi_margin`` or lower."""

    against: tuple
    nearer: tuple
    as_near: tuple
    farther: tuple
    data_sets: int
    command: str
    nmi_higher: tuple = ()
    nmi_within: tuple = ()
    nmi_lower: tuple = ()
    nmi_margin: float = float("nan")
    k_margin: float = float("nan")

    @property
    def made_by(self):
        """The command that made the report (the first `...` of its provenance), or the provenance."""
        import re

        found = re.match(r"\s*`([^`]+)`", self.command)
        return found.group(1) if found else self.command

    def k_counts(self, i):
        return self.nearer[i], self.as_near[i], self.farther[i]

    def nmi_counts(self, i):
        return self.nmi_higher[i], self.nmi_within[i], self.nmi_lower[i]

    def beaten(self):
        """The methods the pCRP is nearer the truth than more often than farther from it."""
        return [m for m, a, b in zip(self.against, self.nearer, self.farther) if a > b]

    def not_beaten(self):
        return [m for m, a, b in zip(self.against, self.nearer, self.farther) if a <= b]


def outcome(counts):
    """(index of the largest of (better, equal, worse) ``counts``, whether it is more than half of them); ties go
    to the middle outcome (equal) when it is among them, else to the worse."""
    counts = tuple(int(c) for c in counts)
    top = max(counts)
    best = [i for i, c in enumerate(counts) if c == top]
    i = best[0] if len(best) == 1 else (1 if 1 in best else 2)
    return i, 2 * counts[i] > sum(counts)


def comparison(report):
    """Step 7 from ``report`` (the dict :func:`pcrp.experiments.compare.read_report` returns; its ``provenance``
    names the command). The margins are read from the report's column names ("NMI within 0.01") and
    :data:`pcrp.experiments.compare.COMPARE_PARAMS` (k_margin)."""
    import re

    from ..experiments.compare import COMPARE_PARAMS

    rows = report["counts"]
    nmi_key = next((k for k in (rows[0] if rows else {}) if k.startswith("NMI within")), None)
    margin = float(re.sub(r"[^0-9.eE+-]", "", nmi_key.removeprefix("NMI within"))) if nmi_key else float("nan")

    def column(key):
        return tuple(int(r[key]) for r in rows) if key else ()

    return Comparison(tuple(r["against"] for r in rows), column("K nearer the truth"), column("K as near"),
                      column("K farther"), int(rows[0]["labelled data sets"]) if rows else 0,
                      str(report["provenance"]), column("NMI higher"), column(nmi_key), column("NMI lower"),
                      margin, float(COMPARE_PARAMS["k_margin"].default))


def closest_rival(comp):
    """The registry name of the prior the pCRP beats least often on K (:func:`pcrp.experiments.compare.prior_methods`), or
    None."""
    from ..experiments.compare import prior_methods

    methods = prior_methods()
    priors = [(a, m) for m, a in zip(comp.against, comp.nearer) if m in methods]
    return methods[min(priors)[1]].name if priors else None
