"""Reading a file's bytes safely: only regular files, at most a limit, one-line messages for everything else.

Also the bytes of a data set shipped inside the package (``pcrp/datasets``, read with importlib.resources so that
a wheel carries them).
"""

import os
import stat
from importlib import resources
from pathlib import Path

from .dataset import BUILTIN_NAMES, DataError

def size_text(n_bytes):
    return f"{n_bytes:,} bytes" if n_bytes < 2**20 else f"{n_bytes / 2**20:.1f} MiB"


def too_big(what, limit):
    return DataError(f"The file is {what}; the limit is {size_text(limit)}. Sample rows or keep fewer columns first.")


def _not_a_regular_file(mode):
    """What a file of this ``st_mode`` is, if not a regular file ('a directory', ...); None for a regular file."""
    for test, what in ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a named pipe (FIFO)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return what
    return None if stat.S_ISREG(mode) else "not a regular file"


def _refuse_kind(path, what):
    if what == "a directory":
        return DataError(f"{path} is a directory, not a CSV file: give the path of a CSV file inside it "
                         f"(or a built-in data set name: {', '.join(BUILTIN_NAMES)}).")
    return DataError(f"{path} is {what}, not a regular file: CSV data are read only from regular files "
                     "(a pipe or a device can block or never end); save the data to a .csv file and give its path.")


def read_file_bytes(path, limit):
    """The bytes of the regular file ``path``, refusing anything else with a one-line DataError.

    The file type is checked before opening, so a FIFO or a device is never
    opened (opening a FIFO blocks; some devices act on open). The file is then
    opened non-blocking, checked again on the open descriptor, and at most
    ``limit + 1`` bytes are read, so a file that grows or never ends cannot
    exhaust memory. Raises DataError for: no such file, a directory, a FIFO,
    a device or socket, no permission, a read error (e.g. /proc/self/mem), and
    more than ``limit`` bytes.
    """
    path = Path(path)
    try:
        info = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        raise DataError(f"No such file: {path}. Give a CSV path or a built-in data set name "
                        f"({', '.join(BUILTIN_NAMES)}).") from None
    except PermissionError:
        raise DataError(f"Permission denied looking up {path}: a folder on its path is not readable by you; "
                        "copy the file somewhere you can read.") from None
    except OSError as err:
        raise DataError(f"{path} cannot be read ({err.strerror}); "
                        "copy the data into a CSV file and give its path.") from None
    what = _not_a_regular_file(info.st_mode)
    if what:
        raise _refuse_kind(path, what)
    if info.st_size > limit:
        raise too_big(size_text(info.st_size), limit)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except PermissionError:
        raise DataError(f"Permission denied: you may not read {path}; make it readable (e.g. chmod u+r) "
                        "or copy it somewhere you can read.") from None
    except OSError as err:
        raise DataError(f"{path} cannot be opened ({err.strerror}); "
                        "copy the data into a CSV file and give its path.") from None
    with os.fdopen(fd, "rb") as f:
        what = _not_a_regular_file(os.fstat(f.fileno()).st_mode)  # replaced since the check above
        if what:
            raise _refuse_kind(path, what)
        try:
            data = f.read(limit + 1)
        except OSError as err:
            raise DataError(f"{path} could not be read ({err.strerror}): it is not an ordinary file on disk; "
                            "copy the data into a CSV file and give its path.") from None
    if len(data) > limit:
        raise too_big(f"larger than {size_text(limit)} (more than the size the system reported for it)", limit)
    return data


def builtin_bytes(filename):
    """A file shipped in ``pcrp/datasets`` (package data, so that a wheel carries it)."""
    return (resources.files("pcrp") / "datasets" / filename).read_bytes()
