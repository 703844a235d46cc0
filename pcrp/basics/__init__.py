"""The leaves every layer may import: errors, dtypes and byte counts, declared parameters, files, JSON."""
