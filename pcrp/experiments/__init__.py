"""Many runs, compared and written up: the paper's experiments (reproduce), the priors compared, report writers."""
