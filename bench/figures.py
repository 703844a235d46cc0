"""Regenerate the measured figures the documentation shows: run a benchmark, keep what it prints in
docs/figures/NAME.md with when, where and under what load it ran, and copy that file into every block for it in the
README and the pages of docs/.

    python bench/figures.py                 # list the figures and when each was last made
    python bench/figures.py peers auto_budget   # run these benchmarks again and update the pages
    python bench/figures.py --readme        # only copy docs/figures/*.md into the pages' blocks

Every time and memory figure of the README and of docs/*.md lives in a block

    <!-- figures: NAME -->
    ... the contents of docs/figures/NAME.md ...
    <!-- /figures -->

and nowhere else; tests/test_readme.py fails when a block differs from its file or a file lacks its provenance
line, so no page can drift from what the scripts printed.
"""

import argparse
import datetime
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from provenance import load_now, machine  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIGURES = os.path.join(ROOT, "docs", "figures")
README = os.path.join(ROOT, "README.md")


def pages():
    """The pages a newcomer reads, whose figure blocks this script fills: README.md and docs/*.md (the generated
    reports in docs/figures, docs/reproduce and docs/compare are not pages of this kind)."""
    docs = os.path.join(ROOT, "docs")
    return [README] + sorted(os.path.join(docs, name) for name in os.listdir(docs) if name.endswith(".md"))

# NAME: the command (run from the repository root) whose output is the figure.
COMMANDS = {
    "compile_time": "python bench/compile_time.py",
    "auto_budget": "python bench/auto_budget.py",
    "peers": "python bench/peers.py",
    "sweep_speed": "python bench/sweep_speed.py",
    "run_memory": "python bench/run_memory.py",
    "prior_comparison": "python bench/prior_comparison.py",
    "work_cost": "python bench/work_cost.py",
    # a class on one server, without browsers: 10, 30 and 60 visitors, from one address and from distinct ones
    "load_client": "python bench/load_client.py --summary",
    # the live Explorer's three cases of issue 37: two rows of two chains, five rows, N = 100,000 (5,000 sweeps: the
    # server's work budget refuses the page's default 100,000 at that N)
    "live_browser": "python bench/live_browser.py --data sim2 --n 2000 --chains 2",
    "live_browser_rows": "python bench/live_browser.py --data sim2 --n 2000 --chains 1 --priors crp,pcrp,py,mfm,sfm",
    "live_browser_large": "python bench/live_browser.py --data sim2 --n 100000 --chains 1 --sweeps 5000",
    "suite_time": "python bench/suite_time.py",
    "start_up": "python bench/start_up.py",
    "million_points": "python bench/million_points.py --only new",
}
BLOCK = re.compile(r"(<!-- figures: (?P<name>[a-z_]+) -->\n)(?P<body>.*?)(<!-- /figures -->)", re.S)
PROVENANCE = re.compile(r"^Made by `python bench/figures\.py (?P<name>[a-z_]+)` on \d{4}-\d{2}-\d{2}")


def run(name):
    """Run NAME's command and write docs/figures/NAME.md: the provenance line, then what it printed."""
    command = COMMANDS[name]
    load = load_now()
    started = time.perf_counter()
    proc = subprocess.run(command.split(), cwd=ROOT, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if proc.returncode != 0:
        raise SystemExit(f"{command} failed ({proc.returncode}):\n{proc.stderr[-3000:]}")
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    text = (f"Made by `python bench/figures.py {name}` on {when}: `{command}` ran {seconds:,.0f} s on {machine()}, "
            f"load average {load:.2f} before and {load_now():.2f} after (other work on the machine slows it).\n\n"
            f"{proc.stdout.rstrip()}\n")
    os.makedirs(FIGURES, exist_ok=True)
    with open(os.path.join(FIGURES, f"{name}.md"), "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote docs/figures/{name}.md ({seconds:,.0f} s)", flush=True)


def figure_text(name):
    with open(os.path.join(FIGURES, f"{name}.md"), encoding="utf-8") as f:
        return f.read()


def update_pages():
    """Copy every docs/figures/NAME.md into each block for NAME of every page."""
    for page in pages():
        with open(page, encoding="utf-8") as f:
            text = f.read()
        new = BLOCK.sub(_fill, text)
        if new != text:
            with open(page, "w", encoding="utf-8") as f:
                f.write(new)
    print("the figure blocks of README.md and docs/*.md match docs/figures")


def _fill(m):
    if not os.path.exists(os.path.join(FIGURES, f"{m.group('name')}.md")):
        return m.group(0)  # not made yet: tests/test_readme.py says so
    return m.group(1) + figure_text(m.group("name")) + m.group(4)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", help=f"figures to make again: {', '.join(COMMANDS)}")
    parser.add_argument("--readme", action="store_true", help="only copy docs/figures into the pages' blocks")
    args = parser.parse_args()
    unknown = [n for n in args.names if n not in COMMANDS]
    if unknown:
        raise SystemExit(f"unknown figure {', '.join(unknown)}; choose from {', '.join(COMMANDS)}")
    if not args.names and not args.readme:
        for name, command in COMMANDS.items():
            path = os.path.join(FIGURES, f"{name}.md")
            first = open(path, encoding="utf-8").readline().strip() if os.path.exists(path) else "(not made yet)"
            print(f"{name:18s} {command}\n{'':18s} {first[:150]}")
        return 0
    for name in args.names:
        run(name)
    update_pages()
    return 0


if __name__ == "__main__":
    sys.exit(main())
