"""The C library's scalar log and exp, called without their error-reporting wrappers.

numba compiles ``math.log`` and ``math.exp`` to calls of the C functions ``log`` and ``exp``. In glibc these are
wrappers: they call the computing routine, then test its result so that they can set ``errno`` (or, at the
oldest symbol version, which LLVM's JIT binds here, follow System V's error conventions). The kernels never read
``errno``, and on the few-slots path of the sweep (:mod:`pcrp.kernels.gibbs`, one log and about one exp per
point-cluster pair) the wrappers cost 7-11% of a sweep (docs/records/sweep_ab.md, session 8).

glibc exports the computing routines themselves as ``__log_finite`` and ``__exp_finite`` (symbol version
GLIBC_2.15, kept for binaries built against glibc 2.15-2.30): the same routines the wrappers call, so the same
bits for every input, infinities and NaN included; they only leave ``errno`` alone. Where they cannot be found
(another C library, or a glibc without them) the kernels call ``log`` and ``exp`` as numba would.

The addresses are registered with LLVM under names of our own when this module is imported, before any kernel is
compiled or loaded from numba's cache (a cached kernel refers to the names, not to the addresses).
"""

import ctypes
import ctypes.util

import llvmlite.binding as llvm
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic

_WITHOUT_WRAPPER = {"log": (b"__log_finite", b"GLIBC_2.15"), "exp": (b"__exp_finite", b"GLIBC_2.15")}


def _c_maths_library():
    """The C maths library: libm where there is one, else the C runtime (Windows), else the process's symbols.
    glibc's and macOS's names are tried before ctypes.util.find_library, which runs ldconfig (tens of ms)."""
    for name in ("libm.so.6", "libm.dylib", lambda: ctypes.util.find_library("m"), "ucrtbase", None):
        try:
            library = ctypes.CDLL(name() if callable(name) else name)
            library.exp, library.log  # noqa: B018 - both must resolve
            return library
        except (OSError, AttributeError, TypeError):
            continue
    raise ImportError("pcrp: no C maths library (libm) could be opened to call log and exp")


def _versioned_lookup():
    """glibc's dlvsym(handle, name, version) -> address or None, or None where the C library has no dlvsym."""
    try:
        dlvsym = ctypes.CDLL(None).dlvsym
    except (OSError, AttributeError, TypeError):
        return None
    dlvsym.restype = ctypes.c_void_p
    dlvsym.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p]
    return dlvsym


def addresses():
    """{"log": address, "exp": address}: the routines without wrappers where the C library has them all, else
    its ``log`` and ``exp``."""
    library = _c_maths_library()
    dlvsym = _versioned_lookup()
    found = {name: dlvsym(library._handle, symbol, version) if dlvsym is not None else None
             for name, (symbol, version) in _WITHOUT_WRAPPER.items()}
    if all(found.values()):
        return found
    return {name: ctypes.cast(getattr(library, name), ctypes.c_void_p).value for name in found}


FUNCTIONS = addresses()
for _name, _address in FUNCTIONS.items():
    llvm.add_symbol(f"pcrp_libm_{_name}", _address)


def _unary(symbol):
    """An intrinsic calling the C function ``symbol``: double -> double, with no effect LLVM must keep."""

    @intrinsic
    def call(typingctx, x):
        if isinstance(x, types.Float) and x.bitwidth == 64:
            def codegen(context, builder, signature, args):
                double = ir.DoubleType()
                function = cgutils.get_or_insert_function(builder.module, ir.FunctionType(double, [double]), symbol)
                function.attributes.add("nounwind")
                function.attributes.add("readnone")
                return builder.call(function, args)
            return types.float64(x), codegen
        return None

    return call


_log = _unary("pcrp_libm_log")
_exp = _unary("pcrp_libm_exp")


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def log(x):
    """The natural logarithm of a float64: the same bits as ``math.log``."""
    return _log(x)


@njit(cache=True, nogil=True, error_model="numpy", inline="always")
def exp(x):
    """e to the power of a float64: the same bits as ``math.exp``."""
    return _exp(x)
