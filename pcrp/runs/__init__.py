"""One run, from its specification to its chains: the run specification, the budget, the memory plan, run_chains and the ChainSet, result files, compiling the kernels and Dask fits."""
