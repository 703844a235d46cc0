"""The methods an experiment compares, and the prior each runs, from the prior registry (:data:`pcrp.model.PRIORS`).

The paper's three rows (its Tables 1 and 2) are named as the paper names them: the **CRP-Oracle** and the **CRP**
are the registry's reference prior (``reference``) at alpha = K_true / ln N and at the protocol's alpha; the
**pCRP** is its tuned prior (``tuned``) at the protocol's alpha and the r that cross validation chooses. Every other
registered prior follows, beyond the paper, at its registry defaults (a prior registered at run time too), named as
its rows read (:func:`pcrp.experiments.reports.method_name`), except those in :data:`LEFT_OUT`.
"""

from ...basics.errors import SettingError
from ...model import PRIORS, make_prior
from ..reports import method_name
from ...summaries.summary import oracle_alpha

ORACLE, REFERENCE, TUNED = "CRP-Oracle", "CRP", "pCRP"  # the paper's rows
METHODS = (ORACLE, REFERENCE, TUNED)
BEYOND_PAPER = " (beyond the paper)"
# Registered priors reproduce does not run beyond the paper, and why (pcrp compare runs every prior).
LEFT_OUT = {"py": "the Pitman-Yor process over-clusters like the CRP (more so as sigma grows); the paper's CRP rows "
                  "already show that, and `pcrp compare` runs it"}


def reference_spec():
    """The registry's over-clustering reference (the CRP): the CRP-Oracle's and the CRP's prior."""
    found = [spec for spec in PRIORS.values() if spec.reference]
    if len(found) != 1:
        raise SettingError(f"the prior registry must mark exactly one prior as the reference (found "
                           f"{len(found)}): reproduce's CRP rows run it.")
    return found[0]


def tuned_spec():
    """The registry's first tuned prior (the pCRP): the prior whose ``tuned`` parameter cross validation chooses."""
    for spec in PRIORS.values():
        if spec.tuned is not None:
            return spec
    raise SettingError("no prior in the registry has a tuned parameter: reproduce's pCRP row needs one.")


def extra_specs():
    """{method name: PriorSpec} of the priors beyond the paper, in registry order, at their registry defaults."""
    paper = {reference_spec().name, tuned_spec().name}
    return {method_name(spec): spec for spec in PRIORS.values() if spec.name not in paper | set(LEFT_OUT)}


def extra_methods():
    """The names of the priors beyond the paper, now (a prior registered at run time included)."""
    return tuple(extra_specs())


def extra_methods_text():
    """The priors beyond the paper in words, now: "MFM and the sparse finite mixture" (a label of several words is
    a common noun: "the sparse finite mixture")."""
    words = [spec.label if len(spec.label.split()) == 1 else "the " + spec.label.lower()
             for spec in extra_specs().values()]
    return ", ".join(words[:-1]) + (" and " if len(words) > 1 else "") + (words[-1] if words else "")


EXTRA_METHODS = extra_methods()  # as registered when reproduce was imported; extra_methods() reads the registry now


def all_methods():
    """The paper's methods, then every prior beyond it."""
    return METHODS + extra_methods()


def check_methods(methods):
    """``methods`` as a tuple, each one of :func:`all_methods` (a SettingError naming the unknown one)."""
    known = all_methods()
    unknown = [m for m in methods if m not in known]
    if unknown:
        raise SettingError(f"unknown method {unknown[0]!r}; choose from {', '.join(known)}")
    return tuple(methods)


def method_prior(method, protocol, *, k_true, n, tuned_value=None):
    """The prior ``method`` runs with: the CRP-Oracle's alpha = K_true / ln N (``k_true`` clusters, ``n`` points),
    the CRP's and the pCRP's alpha from ``protocol``, the pCRP's tuned parameter ``tuned_value`` (cross
    validation's choice), a prior beyond the paper at its registry defaults."""
    if method in (ORACLE, REFERENCE):
        alpha = oracle_alpha(k_true, n) if method == ORACLE else protocol.alpha
        return make_prior(reference_spec().name, alpha=alpha)
    if method == TUNED:
        spec = tuned_spec()
        alpha = {"alpha": protocol.alpha} if "alpha" in spec.defaults() else {}
        return make_prior(spec.name, **alpha, **{spec.tuned: tuned_value})
    return make_prior(extra_specs()[method].name)


def tuned_value(prior):
    """The prior's value of the tuned parameter (the pCRP's r); the reference prior is the tuned one at r = 1 (the
    paper's Sec. 2: the pCRP with r = 1 is the CRP); None for the other priors."""
    spec = tuned_spec()
    if prior.name == spec.name:
        return getattr(prior, spec.tuned)
    return 1.0 if prior.spec.reference else None


def prior_values(prior):
    """'alpha 1, r 1.05': a prior's parameter values in its registry's order."""
    return ", ".join(f"{p.name} {getattr(prior, p.name):g}" for p in prior.spec.params)


def prior_settings(prior):
    """'pCRP: alpha 1, r 1.05': a prior's registry label and parameter values."""
    return f"{prior.spec.label}: {prior_values(prior)}"
