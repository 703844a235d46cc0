"""What a set of label draws and traces says: metrics, the posterior of K, MCMC diagnostics, the point estimate and modes."""
