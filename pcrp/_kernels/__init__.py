"""numba kernels (``cache=True, nogil=True``, no fastmath); see DESIGN.md section 3."""
