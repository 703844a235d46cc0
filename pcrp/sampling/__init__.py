"""One chain of the collapsed Gibbs sampler over the numba kernels: the sampler, its starts and the compute slots its kernel calls take."""
