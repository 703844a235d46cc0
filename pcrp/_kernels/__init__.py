"""numba kernels (``cache=True, nogil=True``, no fastmath); see docs/design.md section 2."""
