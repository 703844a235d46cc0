"""What a run means: the posterior summary and density, collapse, choosing r (cross validation, the merge path, K over r) and the summary a finished run prints."""
