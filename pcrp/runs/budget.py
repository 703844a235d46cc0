"""How long chains run: a fixed number of sweeps, or the automatic budget that stops when the answer is known.

The automatic budget runs the chains from checkpoint to checkpoint, each about 1.25 times the last (with the
defaults: 250, 313, 391, ..., up to the cap of 20,000 sweeps per chain: 21 checkpoints). At each checkpoint the
first half of the sweeps is burn-in, and the rest is judged (:func:`judge`):

- K and the log joint each pass when split R-hat (rank-normalised, ArviZ's definition) is at most ``rhat`` (1.01) and their
  bulk ESS over all chains is at least ``ess`` (400), from every sweep after burn-in (both are recorded every
  sweep; only the label draws are thinned). A quantity that a chain holds at one value in 99% of its draws
  (a K that never moves, a chain on one partition) is *settled*: it passes when every chain holds the same
  value (:func:`pcrp.summaries.summary.chains_agree`), since R-hat and ESS of ties say nothing;
- and the chains form one mode (:func:`pcrp.summaries.modes.chain_groups`: no two chains' mean log joints further apart
  than their Monte Carlo errors allow).

It stops at the first checkpoint that passes, or at the cap, and says which and the R-hat and ESS reached. Hard
data (chains from unlike starts in different modes, slow mixing) therefore get more sweeps than easy data, and
nobody has to guess a number of sweeps. Checkpoints 1.25 apart cost little (a judgement takes milliseconds) and
stop at most a quarter past the first sweep count that would have passed; judging often does not loosen the
rule, since both R-hat and ESS must pass on the same half of the sweeps. A fixed budget (``iters``) runs exactly
that many sweeps, with burn-in half of them unless given (the paper's protocol: 20,000 sweeps, burn-in 10,000).
"""

import math
from dataclasses import asdict, dataclass

from ..summaries.summary import RHAT_THRESHOLD

# The automatic budget's defaults: the first checkpoint, the growth from one to the next, the cap (the paper's
# protocol length), and AUTO_ESS, the bulk ESS of K and of the log joint that must be reached (Vehtari et al. 2021
# recommend 400: 100 per chain for four chains).
AUTO_FIRST_ITERS = 250
AUTO_GROWTH = 1.25
AUTO_MAX_ITERS = 20_000
AUTO_ESS = 400.0
# Label draws: the automatic budget thins them (doubling the thinning when needed) so that at most AUTO_MAX_KEPT
# are kept per chain after burn-in, whatever the number of sweeps, and so that all chains' stored draws (the kept
# ones and those of the sweeps since, up to twice as many) take at most AUTO_DRAWS_BYTES: fewer draws for large
# data (167 per chain for 4 chains of 100,000 points). The point estimate and the metrics need no more.
AUTO_MAX_KEPT = 1000
AUTO_MIN_KEPT = 20
AUTO_DRAWS_BYTES = 512 * 2**20
FIXED_CHECKPOINTS = 10  # a fixed budget reports its progress this many times


def max_kept(n_chains, n_points, itemsize):
    """The most label draws per chain the automatic budget keeps after burn-in for ``n_chains`` chains of
    ``n_points`` labels of ``itemsize`` bytes: AUTO_MAX_KEPT, fewer when twice as many would exceed
    AUTO_DRAWS_BYTES (at least AUTO_MIN_KEPT)."""
    fits = AUTO_DRAWS_BYTES // max(1, 2 * n_chains * n_points * itemsize)
    return int(max(AUTO_MIN_KEPT, min(AUTO_MAX_KEPT, fits)))


@dataclass(frozen=True)
class Budget:
    """How long chains run.

    iters: sweeps per chain for a fixed budget; None for the automatic budget.
    burn_in: sweeps discarded (fixed budget; None = half of iters); the automatic budget discards the first half
        of the sweeps run, whatever this says.
    max_iters: the automatic budget's cap, in sweeps per chain.
    rhat, ess: the automatic budget's targets (split R-hat at most, bulk ESS at least) for K and the log joint.
    """

    iters: int | None = None
    burn_in: int | None = None
    max_iters: int = AUTO_MAX_ITERS
    rhat: float = RHAT_THRESHOLD
    ess: float = AUTO_ESS

    @property
    def auto(self):
        return self.iters is None

    @property
    def max_sweeps(self):
        """The most sweeps a chain can run: the fixed budget, or the automatic budget's cap."""
        return self.max_iters if self.auto else self.iters

    def checkpoints(self):
        """The sweeps after which the chains are judged (automatic budget) or their progress reported (fixed):
        AUTO_FIRST_ITERS, then each about AUTO_GROWTH times the last, up to and including the cap; a fixed budget's
        FIXED_CHECKPOINTS evenly spaced sweeps, the last its end."""
        if not self.auto:
            return sorted({max(1, round(self.iters * (j + 1) / FIXED_CHECKPOINTS)) for j in range(FIXED_CHECKPOINTS)})
        out = [min(AUTO_FIRST_ITERS, self.max_iters)]
        while out[-1] < self.max_iters:
            out.append(min(self.max_iters, math.ceil(out[-1] * AUTO_GROWTH)))
        return out

    def burn_in_at(self, sweeps, thin=1):
        """Burn-in when the chains stop after ``sweeps`` sweeps: the given burn-in of a fixed budget (half of iters
        when not given); for the automatic budget half of ``sweeps``, rounded down to a multiple of ``thin`` (the
        kept draws are then exactly the multiples of thin after it)."""
        if not self.auto:
            return self.iters // 2 if self.burn_in is None else self.burn_in
        return thin * ((sweeps // 2) // thin)

    def describe(self):
        """One line for the header of a run."""
        if not self.auto:
            return f"fixed: {self.iters:,} sweeps per chain, burn-in {self.burn_in_at(self.iters):,}"
        marks = self.checkpoints()
        return (f"automatic: judged after {marks[0]:,}, {marks[1]:,}, {marks[2]:,}, ... sweeps per chain (each about "
                f"{AUTO_GROWTH:g} times the last; the first half is burn-in); stops once split R-hat <= {self.rhat:g} "
                f"and bulk ESS >= {self.ess:g} for K and the log joint (or they are settled) with one mode, else at "
                f"{self.max_iters:,} sweeps") if len(marks) >= 3 else (
                f"automatic: judged after {', '.join(f'{m:,}' for m in marks)} sweeps per chain")

    def as_dict(self):
        """{"kind": "auto" | "fixed", "iters", "burn_in", "max_iters", "rhat", "ess"}, JSON-ready."""
        return {"kind": "auto" if self.auto else "fixed", **asdict(self)}


@dataclass(frozen=True)
class Verdict:
    """What one judgement of the chains found.

    sweeps: sweeps per chain so far; burn_in: of those, discarded; passed: the targets are met;
    reason: one sentence (why it stopped, or what is still missing); rhat, ess: {"K": ..., "log_joint": ...}
    (split R-hat, bulk ESS over all chains); settled: {"K": bool, "log_joint": bool}; modes: how many groups of
    chains; worst_rhat: the largest R-hat of the two (nan if undefined).
    """

    sweeps: int
    burn_in: int
    passed: bool
    reason: str
    rhat: dict
    ess: dict
    settled: dict
    modes: int

    @property
    def worst_rhat(self):
        values = [v for v in self.rhat.values() if v is not None and not math.isnan(v)]
        return max(values) if values else float("nan")

    def as_dict(self):
        return asdict(self)


QUANTITIES = {"K": "K", "log_joint": "the log joint"}


def _quantity_passes(diag, budget):
    from ..summaries.summary import chains_agree

    if diag.get("settled"):
        return chains_agree(diag)
    rhat = diag["rhat"]
    rhat_ok = math.isnan(rhat) or rhat <= budget.rhat  # nan: one chain (nothing to compare)
    return rhat_ok and diag["ess_bulk"] >= budget.ess


def judge(K, log_joint, budget, sweeps, burn_in, diagnostics=None):
    """A :class:`Verdict` of the chains from their K and log joint after burn-in, each (C, sweeps - burn_in).

    diagnostics: {"K": ..., "log_joint": ...} of :func:`pcrp.summaries.summary.chain_diagnostics` of exactly these arrays,
    if already computed.
    """
    from ..summaries.modes import chain_groups
    from ..summaries.summary import chain_diagnostics

    diagnostics = diagnostics or {"K": chain_diagnostics(K), "log_joint": chain_diagnostics(log_joint)}
    passes = {q: _quantity_passes(diagnostics[q], budget) for q in QUANTITIES}
    groups = chain_groups(diagnostics["log_joint"])
    rhat = {q: float(diagnostics[q]["rhat"]) for q in QUANTITIES}
    ess = {q: float(diagnostics[q]["ess_bulk"]) for q in QUANTITIES}
    settled = {q: bool(diagnostics[q]["settled"]) for q in QUANTITIES}
    passed = all(passes.values()) and len(groups) == 1

    def state(q):
        d = diagnostics[q]
        if settled[q]:
            values = sorted({c["settled_value"] for c in d["per_chain"]})
            held = ", ".join(f"{v:g}" if q == "K" else f"{v:.1f}" for v in values)
            return f"{QUANTITIES[q]} settled at {held}" + ("" if len(values) == 1 else " (chains disagree)")
        shown = "undefined" if math.isnan(rhat[q]) else f"{rhat[q]:.3f}"
        return f"{QUANTITIES[q]} R-hat {shown}, ESS {ess[q]:.0f}"

    words = "; ".join(state(q) for q in QUANTITIES)
    modes = "" if len(groups) == 1 else f"; the chains sit in {len(groups)} modes"
    reason = f"after {sweeps:,} sweeps per chain (burn-in {burn_in:,}): {words}{modes}"
    return Verdict(int(sweeps), int(burn_in), bool(passed), reason, rhat, ess, settled, len(groups))


def stop_reason(budget, verdict):
    """The sentence that says why the chains stopped: the fixed budget ran out, the automatic one's targets were
    met, or its cap was reached with the targets still missed."""
    if not budget.auto:
        return f"fixed budget of {budget.iters:,} sweeps per chain; {verdict.reason}"
    if verdict.passed:
        return (f"converged (R-hat <= {budget.rhat:g} and ESS >= {budget.ess:g}, or settled, with one mode) "
                f"{verdict.reason}")
    return (f"cap of {budget.max_iters:,} sweeps reached before convergence {verdict.reason}: read the R-hat, "
            "ESS and modes before trusting pooled figures")


def storage_rows(budget, thin, most):
    """Rows of label draws per chain the run stores at most: a fixed budget its kept draws; the automatic budget
    the kept draws after burn-in (at most ``most``, :func:`max_kept`) and those of the sweeps since the last
    checkpoint, at most twice ``most`` plus one (for the memory plan and the buffers)."""
    if not budget.auto:
        return (budget.iters - budget.burn_in_at(budget.iters)) // thin
    return min(2 * most + 1, budget.max_iters // thin)
