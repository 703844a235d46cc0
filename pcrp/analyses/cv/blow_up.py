"""Where a cross-validation loss curve "blows up": the change point that proposes r.

The loss is flat while r only removes spurious small clusters and "blows up" when r is large enough to merge real
ones; :func:`find_blow_up` detects that change point on one curve and :func:`robust_blow_up` reads every split's
curve; the proposed r is the grid value just before it.
"""

from dataclasses import dataclass

import numpy as np

from .settings import CVError

# The blow-up's yardsticks (see find_blow_up): a rise of REL_JUMP x the running minimum (the paper's flat stage
# wobbles by about 4%), or NOISE_MULT x the robust scale of the successive differences before the point.
REL_JUMP, NOISE_MULT = 0.10, 4.0


@dataclass
class BlowUp:
    """The change point of a CV loss curve."""

    index: int | None  # first grid index where the loss has blown up; None if it never does
    chosen_index: int  # index of the proposed r: the one just before the blow-up
    threshold: float  # the rise over the running minimum that counts as a blow-up
    reason: str


def find_blow_up(loss, se=None, *, r_grid=None, rel_jump=REL_JUMP, noise_mult=NOISE_MULT):
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


# The robust rule's quantile of the per-split change points (see robust_blow_up).
SPLIT_QUANTILE = 0.25


def robust_blow_up(loss, folds, *, r_grid=None, quantile=SPLIT_QUANTILE, rel_jump=REL_JUMP, noise_mult=NOISE_MULT):
    """A conservative change point from every split's loss, not only their mean.

    loss: (n_splits, G), the splits in repeats of ``folds`` consecutive rows (as :func:`pcrp.analyses.cv.scoring.make_splits` makes them).
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
