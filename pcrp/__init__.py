"""pcrp: the powered Chinese restaurant process for Gaussian mixtures.

Library only: nothing here imports streamlit.
"""

__version__ = "0.1.0"

__all__ = [
    "CRP", "PowerCRP", "PitmanYor", "MFM", "SparseFiniteMixture", "PRIORS", "make_prior",
    "register_gcrp", "register_prior", "unregister_prior", "Param",
    "NIW", "default_niw", "resolve_niw",
    "Chain", "Sampler", "run_chain", "ChainSet", "run_chains", "similarity_matrix", "point_estimate",
    "RunSpec", "make_run_spec", "Budget", "PCRPMixture", "__version__",
]


# Where each name lives. They are imported when first asked for (PEP 562), not with the package: numba, scipy
# and scikit-learn take seconds, and `pcrp` on the command line imports this package before its own
# KeyboardInterrupt handler can run (a Ctrl-C during start-up would be a traceback).
_LAZY = {
    "ChainSet": "runs.chains", "run_chains": "runs.chains",
    **{name: "model" for name in ("CRP", "PowerCRP", "PitmanYor", "MFM", "SparseFiniteMixture", "PRIORS",
                                  "make_prior", "NIW", "default_niw", "resolve_niw")},
    # a prior of your own (docs/adding_a_prior.md): its parameters are Params, the tables one of these calls
    **{name: "model.registry" for name in ("register_gcrp", "register_prior", "unregister_prior")},
    "Param": "basics.params",
    "point_estimate": "summaries.partition", "similarity_matrix": "summaries.partition",
    "Chain": "sampling.recorder", "Sampler": "sampling.sampler", "run_chain": "runs.chains",
    "PCRPMixture": "estimator",
    "RunSpec": "runs.run_spec", "make_run_spec": "runs.run_spec", "Budget": "runs.budget",
}


def __getattr__(name):
    if name in _LAZY:
        from importlib import import_module

        value = getattr(import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'pcrp' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
