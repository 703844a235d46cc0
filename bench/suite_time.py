"""The README's two test commands, timed: the whole suite and the part a newcomer runs first.

    python bench/suite_time.py        # about 15 minutes on 2 cores: both commands, one after the other

Prints each command, its wall time and pytest's last line (how many passed). Run it in a clean clone installed
with the README's `pip install -e ".[test]"` (numba's cache empty, as CI starts) to time what a newcomer waits: with
the editable install pointing at another checkout, tests that start `pcrp` or the app in a subprocess run that
checkout's code. README's figure comes from `python bench/figures.py suite_time`.
"""

import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from provenance import header  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
COMMANDS = (["python", "-m", "pytest", "-q"], ["python", "-m", "pytest", "-q", "-m", "not slow and not browser"])


def main():
    print(header("python bench/suite_time.py"))
    print()
    print("| command | wall time | pytest's summary |")
    print("|---|---|---|")
    failed = []
    for command in COMMANDS:
        started = time.perf_counter()
        proc = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
        seconds = time.perf_counter() - started
        last = (proc.stdout.strip().splitlines() or ["(no output)"])[-1].strip("= ")
        shown = " ".join(f'"{part}"' if " " in part else part for part in command)
        print(f"| `{shown}` | {seconds / 60:.1f} min ({seconds:.0f} s) | {last} |", flush=True)
        failed += [f"{shown}: {line}" for line in proc.stdout.splitlines() if line.startswith(("FAILED ", "ERROR "))]
    if failed:  # a test that fails here but not on a rerun is flaky: name it
        print("\n" + "\n".join(failed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
