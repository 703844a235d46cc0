"""Where the command line writes: output paths checked before any work, and files written whole or not at all."""

import os
from pathlib import Path

from .arguments import CliError


def _refuse_special_target(path, shown, option, suffix):
    """CliError when ``path`` is in /dev or names a device, a named pipe or a socket (folders are refused with
    their own message): results go to regular files only, replaced whole once complete. ``suffix`` None: an
    output folder."""
    from ..basics.files import output_problem

    problem = output_problem(path)
    if problem and not problem.startswith("is a folder"):
        raise CliError(f"{option} {shown} {problem}: results are written only to regular files (each replaced "
                       "whole once complete, which a device or a pipe cannot be); "
                       + (f"give a folder of yours, such as {Path.cwd() / 'reproduce-output'}." if suffix is None else
                          f"give a file name in a folder of yours, such as {Path.cwd() / ('result' + suffix)}."))


def output_file(text, option, suffix, add_suffix=True):
    """The absolute path an output option names, checked before any work: not empty, not in /dev, not a device,
    named pipe or socket (neither as given nor once ``suffix`` is added), not a folder, in a folder that exists;
    ``suffix`` is added when missing (as numpy does for .npz) unless ``add_suffix`` is False."""
    if not text.strip():
        raise CliError(f"{option} is empty: give a file name such as result{suffix}.")
    _refuse_special_target(Path(text).expanduser(), text, option, suffix)
    if text.endswith(("/", os.sep)) or Path(text).expanduser().is_dir():
        raise CliError(f"{option} {text} is a folder: give a file name in it, such as "
                       f"{Path(text).expanduser().resolve() / ('result' + suffix)}.")
    path = Path(text).expanduser()
    if add_suffix and path.suffix != suffix:
        path = path.with_name(path.name + suffix)
    path = path.resolve()
    _refuse_special_target(path, f"would write {path}, which", option, suffix)
    if path.is_dir():
        raise CliError(f"{option} would write {path}, which is a folder: give another file name.")
    if not path.parent.is_dir():
        raise CliError(f"cannot write {path}: the folder {path.parent} does not exist.")
    if not os.access(path.parent, os.W_OK) or (path.exists() and not os.access(path, os.W_OK)):
        raise CliError(f"cannot write {path}: permission denied.")
    return path


def output_folder(text, option):
    """The absolute folder an output option names, created now (before any work) if missing."""
    if not text.strip():
        raise CliError(f"{option} is empty: give a folder name such as reproduce-output.")
    _refuse_special_target(Path(text).expanduser(), text, option, None)
    path = Path(text).expanduser().resolve()
    _refuse_special_target(path, f"names {path}, which", option, None)
    if path.exists() and not path.is_dir():
        raise CliError(f"{option} {path} is a file, not a folder: give a folder name.")
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise CliError(f"cannot create the folder {path}: {err.strerror}.") from None
    if not os.access(path, os.W_OK):
        raise CliError(f"cannot write into {path}: permission denied.")
    return path


def cannot_write(path, err):
    """The CliError for an OSError while writing ``path`` (written whole or not at all: nothing changed there)."""
    import errno

    advice = {errno.ENOSPC: "; free some space, or write to another disk.",
              errno.EDQUOT: "; free some of your quota, or write to another disk.",
              errno.EFBIG: "; raise the file-size limit (ulimit -f), or write to another file system."}
    return CliError(f"cannot write {path}: {err.strerror or err}; any earlier file there is left as it was"
                    + advice.get(err.errno, "."))


def write_text(path, writer):
    """Write the text file ``path`` through ``writer(f)``, whole or not at all (:func:`pcrp.basics.files.atomic_write`)."""
    from ..basics.files import atomic_write

    try:
        atomic_write(path, writer, "w")
    except OSError as err:
        raise cannot_write(path, err) from None


def write_report(writer, results, out_dir, **kwargs):
    """``writer(results, out_dir, **kwargs)`` (the report writer of pcrp.experiments.reproduce or pcrp.experiments.compare): the report's
    path, an OSError as one line."""
    try:
        return writer(results, out_dir, **kwargs)
    except OSError as err:
        raise cannot_write(Path(err.filename) if err.filename else out_dir, err) from None
