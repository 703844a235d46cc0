"""numba kernels (``cache=True, nogil=True``; fastmath only ``{"contract"}``, in the sweep and the split-merge move);
see docs/design.md section 2."""
