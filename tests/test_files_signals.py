"""No half-written file: atomic_write's temporary file is removed when the process is told to stop (SIGTERM, SIGINT)
while writing, and a left-over of a process killed outright (SIGKILL) is removed by the next write to that folder."""

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from pcrp.basics import files
from process_support import sigint_as_in_a_terminal

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="POSIX signals")

# A child that writes OUT through atomic_write, says so on stdout half-way, and then blocks inside its writer.
WRITER = textwrap.dedent("""
    import sys, time
    from pcrp.basics.files import atomic_write

    def writer(f):
        f.write("half of the new content")
        f.flush()
        print("writing", flush=True)
        time.sleep(60)
        f.write(" and the rest")

    atomic_write(sys.argv[1], writer)
""")


def start_writer(target):
    child = subprocess.Popen([sys.executable, "-c", WRITER, str(target)], cwd=ROOT, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True, preexec_fn=sigint_as_in_a_terminal)
    assert child.stdout.readline().strip() == "writing", child.stderr.read()
    return child


def temporaries(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_write_stopped_by_sigterm_or_sigint_leaves_no_temporary_file_and_the_old_file(tmp_path, signum):
    target = tmp_path / "result.csv"
    target.write_text("the earlier good file")
    child = start_writer(target)
    assert len(temporaries(tmp_path)) == 1  # being written
    child.send_signal(signum)
    child.wait(30)
    assert child.returncode != 0
    if signum == signal.SIGTERM:  # ended as SIGTERM's default action ends a process: same status
        assert child.returncode == -signal.SIGTERM
    assert temporaries(tmp_path) == []
    assert target.read_text() == "the earlier good file"


def test_a_left_over_of_a_killed_process_is_removed_by_the_next_write_but_a_live_writers_file_is_not(tmp_path):
    target = tmp_path / "result.csv"
    killed = start_writer(target)
    killed.kill()  # SIGKILL: nothing can clean up
    killed.wait(30)
    (left_over,) = temporaries(tmp_path)
    live = start_writer(tmp_path / "other.csv")  # another process writing in the same folder right now
    live_temp = [name for name in temporaries(tmp_path) if name != left_over]
    time.sleep(0.05)
    try:
        # the next run writes into the folder: the killed run's left-over goes, the live writer's file stays
        done = subprocess.run([sys.executable, "-c", "import sys; from pcrp.basics.files import atomic_write; "
                               "atomic_write(sys.argv[1], lambda f: f.write('new'))", str(target)],
                              cwd=ROOT, capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        assert temporaries(tmp_path) == live_temp and target.read_text() == "new"
    finally:
        live.kill()
        live.wait(30)


def test_the_sweep_leaves_files_newer_than_this_process_and_files_not_named_like_ours(tmp_path):
    mine = tmp_path / ".result.csv.abcd1234.tmp"  # named like ours, but changed after this process started
    other = tmp_path / "notes.tmp"
    for path in (mine, other):
        path.write_text("x")
    assert files.sweep_leftovers(tmp_path) == []
    old = files._STARTED - 3600
    os.utime(mine, (old, old))
    os.utime(other, (old, old))
    assert files.sweep_leftovers(tmp_path) == [mine.name] and other.exists()
