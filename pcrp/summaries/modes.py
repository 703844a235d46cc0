"""Modes: chains that settled in different parts of the posterior, reported apart instead of pooled silently.

Chains disagree when the pooled rank-normalised R-hat of the log joint exceeds
:data:`pcrp.summaries.summary.RHAT_THRESHOLD` (1.01) or two chains' mean log joints are further apart than their Monte
Carlo standard errors allow: |mean_a - mean_b| > MODE_Z sqrt(MCSE_a^2 + MCSE_b^2) + MODE_TOLERANCE. Chains that
are not told apart this way (directly or through a chain between them) form one mode. Each mode is reported
with its chains, its mean K, its mean log joint and its own point estimate; with two or more modes a warning
says in words that pooled figures then depend on the starts.

Why this rule: on MNIST 1-4 (N = 1000, r = 1.4) chains settle in two modes 68.7 nats apart whose chains each
have an MCSE of a nat or two; with some seeds all chains land in one mode and R-hat reads 1.0006 -- no rule on
the chains can see a mode none of them visited, so docs/speed.md ("Mixing") advises chains from unlike starts.
"""

import math
from dataclasses import dataclass, field

import numpy as np

# Two chains are in different modes when their mean log joints differ by more than MODE_Z combined MCSEs (a
# 4-sigma gap: with accurate MCSEs a false split among 4 chains' 6 pairs has probability about 4e-4) plus
# MODE_TOLERANCE nats (rounding: a chain that stays on one partition has MCSE 0).
MODE_Z = 4.0
MODE_TOLERANCE = 1e-6


@dataclass
class Mode:
    """One group of chains that agree.

    chains: 0-based chain indices; mean_K, mean_log_joint: over those chains' sweeps after burn-in;
    mcse_log_joint: its MCSE; point: :class:`pcrp.summaries.partition.PointEstimate` from those chains' draws alone.
    """

    chains: list
    mean_K: float
    mean_log_joint: float
    mcse_log_joint: float
    point: object = field(default=None, repr=False)

    def as_dict(self):
        """A JSON-serialisable dict (chains 1-based, as the CLI prints them; point-estimate sizes)."""
        out = {"chains": [c + 1 for c in self.chains], "mean_K": self.mean_K, "mean_log_joint": self.mean_log_joint,
               "mcse_log_joint": None if math.isnan(self.mcse_log_joint) else self.mcse_log_joint}
        if self.point is not None:
            out.update(point_clusters=self.point.n_clusters, point_sizes=np.bincount(self.point.labels).tolist(),
                       point_expected_loss=self.point.expected_loss)
        return out


def _groups(means, mcses):
    """Connected components of 'not told apart' over the chains, each sorted; components by first chain."""
    C = len(means)
    parent = list(range(C))

    def root(a):
        while parent[a] != a:
            parent[a] = parent[parent[a]]
            a = parent[a]
        return a

    for a in range(C):
        for b in range(a + 1, C):
            se = math.sqrt(mcses[a] ** 2 + mcses[b] ** 2)
            if math.isnan(se) or abs(means[a] - means[b]) <= MODE_Z * se + MODE_TOLERANCE:
                parent[root(b)] = root(a)
    groups = {}
    for c in range(C):
        groups.setdefault(root(c), []).append(c)
    return sorted(groups.values(), key=lambda g: g[0])


def chain_groups(log_joint_diagnostics):
    """The groups of chains that are not told apart (lists of 0-based chain indices, by first chain), from the
    per-chain means and MCSEs of the log joint in a :func:`pcrp.summaries.summary.chain_diagnostics` result. One group:
    the chains agree on where the posterior is."""
    per_chain = log_joint_diagnostics["per_chain"]
    return _groups([c["mean"] for c in per_chain], [c["mcse"] for c in per_chain])


def find_modes(chain_set, *, loss=None, seed=0, pooled=None, diagnostics=None, point_options=None):
    """(modes, warning): the :class:`Mode` list of a :class:`pcrp.runs.chains.ChainSet` and a warning sentence ("" when
    the chains form one mode).

    pooled: the point estimate of all draws, if already computed (the single mode's); diagnostics: the
    ChainSet's ``diagnostics()``, if already computed; point_options: keyword arguments for each mode's
    :func:`pcrp.summaries.partition.point_estimate`. Modes are ordered by decreasing mean log joint.
    """
    from .partition import DEFAULT_LOSS, point_estimate
    from .summary import RHAT_THRESHOLD

    loss = DEFAULT_LOSS if loss is None else loss

    diagnostics = diagnostics or chain_set.diagnostics()
    lj = diagnostics["log_joint"]
    groups = chain_groups(lj)
    traced_K = chain_set.K_after_burn_in
    traced_lj = chain_set.log_joint_after_burn_in
    options = dict(point_options or {})
    modes = []
    for g in groups:
        from .summary import mean_and_mcse

        mean_lj, mcse_lj = mean_and_mcse(traced_lj[g])
        if len(groups) == 1:
            point = pooled if pooled is not None else point_estimate(chain_set.labels, loss, seed=seed, **options)
        else:
            point = point_estimate(chain_set.labels, loss, seed=seed, chains=list(g), **options)
        modes.append(Mode(chains=list(g), mean_K=float(traced_K[g].mean()), mean_log_joint=mean_lj,
                          mcse_log_joint=mcse_lj, point=point))
    modes.sort(key=lambda m: -m.mean_log_joint)
    rhat = lj.get("rhat", float("nan"))
    if len(modes) < 2:
        return modes, ""
    parts = "; ".join(
        f"chain{'s' if len(m.chains) > 1 else ''} {', '.join(str(c + 1) for c in m.chains)}: mean log joint "
        f"{m.mean_log_joint:.1f}, mean K {m.mean_K:.2f}, point estimate with {m.point.n_clusters} clusters"
        for m in modes)
    gap = modes[0].mean_log_joint - modes[-1].mean_log_joint
    rhat_text = f"R-hat of the log joint {rhat:.3f}" + (f" > {RHAT_THRESHOLD}" if rhat > RHAT_THRESHOLD else "") \
        if not math.isnan(rhat) else "R-hat undefined"
    warning = (f"the chains settled in {len(modes)} modes {gap:.1f} nats apart in mean log joint ({rhat_text}; "
               f"{parts}). "
               "Pooled figures (the point estimate, mean K, the density) mix them, so they depend on where the "
               "chains started, not only on the model: read each mode's own figures, and run more chains from "
               "unlike starts or more split-merge moves to learn which mode holds more mass.")
    return modes, warning


def modes_json(modes):
    """The modes as a JSON string (the ``modes`` array of a RESULT.npz)."""
    from ..basics.json_text import dumps

    return dumps([m.as_dict() for m in modes])
