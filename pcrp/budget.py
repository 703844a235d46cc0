"""How long chains run: a fixed number of sweeps, or the automatic budget that stops when the answer is known.

The automatic budget samples in blocks whose ends roughly double up to a cap (with the default cap of 20,000
sweeps: 313, 625, 1,250, 2,500, 5,000, 10,000, 20,000). At the end of each block the first half of the sweeps
is burn-in, and the other half -- exactly the block just run -- is judged (:func:`judge`):

- K and the log joint each pass when split R-hat (rank-normalised, ArviZ) is at most ``rhat`` (1.01) and their
  bulk ESS over all chains is at least ``ess`` (400), from every sweep after burn-in (both are recorded every
  sweep; only the label draws are thinned). A quantity that a chain holds at one value in 99% of its draws
  (a K that never moves, a chain on one partition) is *settled*: it passes when every chain holds the same
  value (:func:`pcrp.summary.chains_agree`), since R-hat and ESS of ties say nothing;
- and the chains form one mode (:func:`pcrp.modes.chain_groups`: no two chains' mean log joints further apart
  than their Monte Carlo errors allow).

It stops at the first block that passes, or at the cap, and says which and the R-hat and ESS reached. Hard data
(chains from unlike starts in different modes, slow mixing) therefore get more sweeps than easy data, and
nobody has to guess a number of sweeps. A fixed budget (``iters``) runs exactly that many, with burn-in half of
them unless given (the paper's protocol: 20,000 sweeps, burn-in 10,000).
"""

import math
from dataclasses import asdict, dataclass

from .summary import RHAT_THRESHOLD

# The automatic budget's defaults: the first block is at least AUTO_FIRST_ITERS sweeps (half of it judged), the
# cap is the paper's protocol length, and AUTO_ESS is the bulk ESS of K and of the log joint that must be reached
# (Vehtari et al. 2021 recommend 400: 100 per chain for four chains). Label draws are thinned so that at most
# AUTO_MAX_KEPT are kept per chain, whatever the number of sweeps, and all chains' kept draws take at most
# AUTO_DRAWS_BYTES (fewer draws for large data: 335 per chain for 4 chains of 100,000 points): the point estimate
# and the metrics need no more, and the memory stays bounded.
AUTO_FIRST_ITERS = 250
AUTO_MAX_ITERS = 20_000
AUTO_ESS = 400.0
AUTO_MAX_KEPT = 1000
AUTO_MIN_KEPT = 20
AUTO_DRAWS_BYTES = 512 * 2**20


def max_kept(n_chains, n_points, itemsize):
    """The most label draws per chain the automatic budget keeps for ``n_chains`` chains of ``n_points`` labels of
    ``itemsize`` bytes: AUTO_MAX_KEPT, fewer when they would exceed AUTO_DRAWS_BYTES (at least AUTO_MIN_KEPT)."""
    fits = AUTO_DRAWS_BYTES // max(1, n_chains * n_points * itemsize)
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

    def block_ends(self):
        """The sweeps after which the chains are judged: [iters] for a fixed budget; for the automatic one the ends
        T_k = ceil(max_iters / 2^(K - k)), the first at least AUTO_FIRST_ITERS (fewer if the cap is below it)."""
        if not self.auto:
            return [self.iters]
        ends = [self.max_iters]
        while math.ceil(ends[-1] / 2) >= AUTO_FIRST_ITERS:
            ends.append(math.ceil(ends[-1] / 2))
        return ends[::-1]

    def burn_in_at(self, end):
        """Burn-in when the chains stop after ``end`` sweeps: the given burn-in of a fixed budget (half of iters
        when not given), half of ``end`` (rounded up) for the automatic budget."""
        if not self.auto:
            return self.iters // 2 if self.burn_in is None else self.burn_in
        return math.ceil(end / 2)

    def describe(self):
        """One line for the header of a run."""
        if not self.auto:
            return f"fixed: {self.iters:,} sweeps per chain, burn-in {self.burn_in_at(self.iters):,}"
        ends = self.block_ends()
        return (f"automatic: judged after {', '.join(f'{e:,}' for e in ends)} sweeps (the first half of the sweeps "
                f"is burn-in); stops once split R-hat <= {self.rhat:g} and bulk ESS >= {self.ess:g} for K and the "
                f"log joint (or they are settled) with one mode, else at {self.max_iters:,} sweeps")

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

    @property
    def least_ess(self):
        return min(self.ess.values())

    def as_dict(self):
        return asdict(self)


QUANTITIES = {"K": "K", "log_joint": "the log joint"}


def _quantity_passes(diag, budget):
    from .summary import chains_agree

    if diag.get("settled"):
        return chains_agree(diag)
    rhat = diag["rhat"]
    rhat_ok = math.isnan(rhat) or rhat <= budget.rhat  # nan: one chain (nothing to compare)
    return rhat_ok and diag["ess_bulk"] >= budget.ess


def judge(K, log_joint, budget, sweeps, burn_in, diagnostics=None):
    """A :class:`Verdict` of the chains from their K and log joint after burn-in, each (C, sweeps - burn_in).

    diagnostics: {"K": ..., "log_joint": ...} of :func:`pcrp.summary.chain_diagnostics` of exactly these arrays,
    if already computed.
    """
    from .modes import chain_groups
    from .summary import chain_diagnostics

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


def thin_for(window, thin, most):
    """Thinning of the label draws in a window of ``window`` sweeps: at least ``thin``, and enough that at most
    ``most`` draws are kept."""
    return max(int(thin), math.ceil(window / most))


def block_numbers(budget, thin, most=AUTO_MAX_KEPT):
    """(end, burn_in, thin) of each block of the budget: where it is judged, its burn-in, and the thinning of the
    label draws kept if it is the last (the automatic budget keeps at most ``most`` per chain, :func:`max_kept`)."""
    out = []
    for end in budget.block_ends():
        burn_in = budget.burn_in_at(end)
        out.append((end, burn_in, thin if not budget.auto else thin_for(end - burn_in, thin, most)))
    return out


def kept_draws(budget, thin, most=AUTO_MAX_KEPT):
    """The most label draws per chain the budget can keep (for the memory plan)."""
    return max((end - burn_in) // t for end, burn_in, t in block_numbers(budget, thin, most))


def judge_chain_set(chain_set, budget):
    """:func:`judge` of a :class:`pcrp.chains.ChainSet` (its sweeps after burn-in)."""
    return judge(chain_set.K_after_burn_in, chain_set.log_joint_after_burn_in, budget,
                 int(chain_set.K.shape[1]), chain_set.burn_in)
