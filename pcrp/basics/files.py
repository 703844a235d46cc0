"""Files that survive faults: writes that replace a file only once complete, and reads of a bounded size.

:func:`atomic_write` writes into a temporary file in the target's own folder, flushes and fsyncs it, and only
then renames it over the target (``os.replace``: atomic on POSIX and Windows). On a full disk, an exception or
Ctrl-C the temporary file is removed and whatever was at the target stays exactly as it was; on SIGTERM a handler
(installed on the first write, where the signal had its default action) removes it before the process ends as the
signal would have ended it. A process killed outright (SIGKILL, a power cut) cannot clean up: its temporary files
are left-overs, which the next write to that folder by a later process removes (:func:`sweep_leftovers`).
:func:`output_problem` says why a path cannot be an output file (anything in /dev; an existing device, named
pipe, socket or folder): such a target cannot be replaced by a file (writing to it would vanish, block or fail).

For reading, :func:`open_regular` opens regular files only (a named pipe would block, /dev/zero never ends),
:func:`read_bounded` reads at most a stated number of bytes, and :func:`open_npz` / :func:`npz_header` /
:func:`read_npz_array` read the arrays of an .npz one at a time without unpickling, each checked against its
header (dtype, shape and size) before anything is allocated. Problems with a file's content or kind raise
:class:`FileRefused` (a ValueError) with one sentence; operating-system errors (no such file, permission
denied, no space left) stay OSError.
"""

import errno
import os
import re
import signal
import stat
import tempfile
import threading
import time
import zipfile
import zlib
from pathlib import Path

import numpy as np

DEVICE_FOLDER = Path("/dev")


class FileRefused(ValueError):
    """A file pcrp will not read or write as it is; the message says why in one sentence."""


def file_kind(mode):
    """What a file of this ``st_mode`` is when it is not a regular file ('a character device', ...), else None."""
    for test, what in ((stat.S_ISDIR, "a folder"), (stat.S_ISFIFO, "a named pipe (FIFO)"),
                       (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
                       (stat.S_ISSOCK, "a socket")):
        if test(mode):
            return what
    return None if stat.S_ISREG(mode) else "not a regular file"


def _size(n_bytes):
    return f"{n_bytes:,} bytes" if n_bytes < 2**20 else f"{n_bytes / 2**20:,.1f} MiB"


# ----------------------------------------------------------------------------- writing

def output_problem(path):
    """Why ``path`` cannot be written as an output file, as a phrase ('is a character device'), or None.

    Refused: a path in /dev, as given or once symbolic links are followed (devices live there: /dev/full,
    /dev/null, /dev/stdout), and an existing target that is not a regular file (a device, a named pipe, a
    socket, a folder). A path that does not exist yet, or a regular file, is fine.
    """
    def in_dev(candidate):
        return candidate == DEVICE_FOLDER or DEVICE_FOLDER in candidate.parents

    if in_dev(Path(os.path.abspath(path))):
        return "is in /dev, the system's folder of devices"
    real = Path(os.path.realpath(path))
    if in_dev(real):
        return f"leads to {real}, in /dev, the system's folder of devices"
    try:
        info = os.stat(path)
    except OSError:  # does not exist (yet), or cannot be looked up: writing it says what is wrong
        return None
    kind = file_kind(info.st_mode)
    return f"is {kind}, not a regular file" if kind else None


def _umask():
    try:
        with open("/proc/self/status") as f:  # Linux >= 4.7: read without changing it
            for line in f:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _open_temp(fd, mode):
    """The open temporary file :func:`atomic_write` hands to its writer (tests replace this to fill the disk)."""
    if mode == "wb":
        return os.fdopen(fd, "wb")
    return os.fdopen(fd, "w", encoding="utf-8", newline="")


# ----------------------------------------------------------------------------- temporary files
_TEMP_NAME = re.compile(r"\..+\.[A-Za-z0-9_]{8}\.tmp")  # what tempfile.mkstemp names for atomic_write
_IN_FLIGHT = set()  # temporary files being written now, by any thread of this process
_STARTED = time.time()  # a temporary file last changed before this is a left-over of an earlier process
_HANDLER = {"installed": False}


def _flock(fd, blocking=True):
    """Lock ``fd`` (a writer holds its temporary file locked until it is renamed or removed; a process that dies
    drops its locks). Returns False when not blocking and another process holds it; True where there is no flock."""
    try:
        import fcntl
    except ImportError:  # not POSIX: no locks; left-overs are told by their age alone
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
        return True
    except OSError:
        return False


def sweep_leftovers(folder):
    """Remove the temporary files that :func:`atomic_write` left in ``folder`` in processes that were killed outright:
    named like ours (``.NAME.XXXXXXXX.tmp``), regular files of this user, last changed before this process started,
    and locked by no live writer. Returns their names. Never raises (a folder that cannot be read has none)."""
    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    for entry in entries:
        if not _TEMP_NAME.fullmatch(entry.name) or entry.path in _IN_FLIGHT:
            continue
        try:
            info = entry.stat(follow_symlinks=False)
            if not stat.S_ISREG(info.st_mode) or info.st_mtime >= _STARTED or \
                    (hasattr(os, "getuid") and info.st_uid != os.getuid()):
                continue
            fd = os.open(entry.path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
        except OSError:
            continue
        try:
            if _flock(fd, blocking=False):  # nobody writes it: the writer is gone
                os.unlink(entry.path)
                removed.append(entry.name)
        except OSError:
            pass
        finally:
            os.close(fd)
    return removed


def _remove_in_flight(signum, frame):
    """SIGTERM handler: remove every temporary file being written, then end the process as SIGTERM's default action
    would have (the same exit status)."""
    for temp in tuple(_IN_FLIGHT):
        try:
            os.unlink(temp)
        except OSError:
            pass
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


def _install_signal_handler():
    """On the first write from the main thread: handle SIGTERM where it still has its default action (a program that
    set its own handler keeps it). SIGINT needs none: Python raises KeyboardInterrupt, and atomic_write removes its
    temporary file on any exception."""
    if _HANDLER["installed"] or threading.current_thread() is not threading.main_thread():
        return
    _HANDLER["installed"] = True
    try:
        if signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
            signal.signal(signal.SIGTERM, _remove_in_flight)
    except (ValueError, OSError, AttributeError):  # no SIGTERM here, or signals cannot be set
        pass


def atomic_write(path, writer, mode="w"):
    """Write the file ``path`` all or nothing: ``writer(f)`` writes the whole content to the open file ``f``.

    mode: "w" (text, UTF-8, newlines written as given) or "wb" (bytes).
    The content goes to a temporary file ``.NAME.XXXXXXXX.tmp`` in the folder of ``path`` (so the rename stays
    on one file system) with the permissions of the file it replaces (a new file: 0o666 less the umask); it is
    flushed and fsync'd and renamed over ``path`` only when ``writer`` has returned. On any error (an OSError
    such as ENOSPC from a write, the flush or the fsync; an exception from ``writer``; KeyboardInterrupt) the
    temporary file is removed and the error re-raised, and whatever was at ``path`` is left untouched; on SIGTERM
    too (see the module's description). Left-overs of killed processes in that folder are removed first
    (:func:`sweep_leftovers`).
    Raises OSError (EINVAL) for a target :func:`output_problem` refuses, before anything is written.
    """
    if mode not in ("w", "wb"):
        raise ValueError(f"mode must be 'w' or 'wb' (got {mode!r}).")
    path = Path(path)
    problem = output_problem(path)
    if problem:
        raise OSError(errno.EINVAL, f"it {problem}; give the path of a regular file", str(path))
    try:
        permissions = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        permissions = 0o666 & ~_umask()
    _install_signal_handler()
    sweep_leftovers(path.parent)
    try:
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name[:100]}.", suffix=".tmp")
    except OSError as err:
        err.filename = str(path)  # not the temporary name it tried
        raise
    _IN_FLIGHT.add(temp)
    held = None
    try:
        _flock(fd)
        held = os.dup(fd)  # keeps the lock (one open file) from the writer's close until the rename
        if hasattr(os, "fchmod"):
            os.fchmod(fd, permissions)
        with _open_temp(fd, mode) as f:
            writer(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(temp, path)
    except BaseException as err:
        try:
            os.unlink(temp)
        except OSError:
            pass
        if isinstance(err, OSError) and err.filename in (None, temp):
            err.filename = str(path)  # the error names the file asked for, not the temporary one
        raise
    finally:
        _IN_FLIGHT.discard(temp)
        if held is not None:
            os.close(held)
    _sync_folder(path.parent)


def _sync_folder(folder):
    """Make the rename durable (fsync of the folder); not every system allows it, and the file is complete anyway."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


# ----------------------------------------------------------------------------- reading

def open_regular(path, what):
    """``path`` opened for binary reading, refusing anything but a regular file with :class:`FileRefused`.

    The kind is checked before opening (opening a named pipe blocks) and again on the open descriptor (the
    file may have been replaced in between); the file is opened non-blocking. ``what`` names what the file
    should be, for the message ('a text file of labels'). OSError (no such file, permission denied) passes.
    """
    kind = file_kind(os.stat(path).st_mode)
    if not kind:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
        f = os.fdopen(fd, "rb")
        kind = file_kind(os.fstat(f.fileno()).st_mode)
        if not kind:
            return f
        f.close()
    raise FileRefused(f"{path} is {kind}, not a regular file: {what} is read only from a regular file "
                      "(a pipe or a device can block or never end)")


def read_bounded(f, limit, name, why):
    """At most ``limit`` bytes of the open binary file ``f``; :class:`FileRefused` if it holds more.
    ``why`` says where the limit comes from ('what 272 labels take as text')."""
    data = f.read(limit + 1)
    if len(data) > limit:
        raise FileRefused(f"{name} holds more than {_size(limit)}, {why}")
    return data


def open_npz(f, name, what):
    """The zip archive of an .npz (``f``: a path or an open binary file) as a ``zipfile.ZipFile``.

    Raises FileRefused "NAME is not WHAT: ..." for anything that is not a complete zip archive (a zip cut
    short, e.g. by a full disk, has lost its directory at the end)."""
    try:
        return zipfile.ZipFile(f)
    except (zipfile.BadZipFile, zlib.error, EOFError, ValueError, NotImplementedError):
        raise FileRefused(f"{name} is not {what}: it is not a complete zip archive (an .npz file is one; a file "
                          "cut short, e.g. by a full disk, is not)") from None


_HEADER_READERS = {(1, 0): np.lib.format.read_array_header_1_0, (2, 0): np.lib.format.read_array_header_2_0}


def npz_header(zf, key, name, what):
    """(shape, dtype) of the array ``key`` of the .npz ``zf`` from its header alone; None when it has no ``key``.

    Raises FileRefused when the member is not in NumPy's .npy format, holds Python objects (reading them would
    mean unpickling, and pcrp never writes them), or is shorter than its header promises."""
    member = f"{key}.npy"
    if member not in zf.namelist():
        return None
    info = zf.getinfo(member)
    try:
        with zf.open(member) as fp:
            version = np.lib.format.read_magic(fp)
            if version not in _HEADER_READERS:
                raise ValueError(f"unsupported .npy version {version}")
            shape, _, dtype = _HEADER_READERS[version](fp)
            offset = fp.tell()
    except (zipfile.BadZipFile, zlib.error, EOFError, OSError, NotImplementedError) as err:
        raise FileRefused(f"{name} is not {what}: its array {key} is damaged ({err})") from None
    except ValueError as err:
        raise FileRefused(f"{name} is not {what}: its array {key} is not in NumPy's .npy format ({err})") from None
    if dtype.hasobject:
        raise FileRefused(f"{name} is not {what}: its array {key} holds Python objects, which pcrp never writes "
                          "and which could be read only by unpickling")
    n_bytes = int(np.prod(shape, dtype=object)) * dtype.itemsize
    if offset + n_bytes > info.file_size:
        raise FileRefused(f"{name} is not {what}: its array {key} is cut short (its header promises "
                          f"{_size(n_bytes)}, the archive holds {_size(max(info.file_size - offset, 0))})")
    return tuple(shape), dtype


def npz_bytes_needed(zf, keys, name, what):
    """Bytes the arrays ``keys`` of the .npz ``zf`` take once read (from their headers; absent keys count 0)."""
    total = 0
    for key in keys:
        header = npz_header(zf, key, name, what)
        if header is not None:
            total += int(np.prod(header[0], dtype=object)) * header[1].itemsize
    return total


def read_npz_array(zf, key, name, what):
    """The array ``key`` of the .npz ``zf``, read without unpickling after :func:`npz_header` checked it.

    Raises FileRefused when the member is damaged (a bad checksum, compressed data that do not decompress)."""
    if npz_header(zf, key, name, what) is None:
        raise FileRefused(f"{name} is not {what}: it has no array {key}")
    try:
        with zf.open(f"{key}.npy") as fp:
            return np.lib.format.read_array(fp, allow_pickle=False)
    except (ValueError, zipfile.BadZipFile, zlib.error, EOFError, OSError) as err:
        raise FileRefused(f"{name} is not {what}: its array {key} is damaged ({err})") from None
