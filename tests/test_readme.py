"""The README as a newcomer reads it: its measured figures are the scripts' output, its Python example prints what
it shows, and its command lines run."""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
sys.path.insert(0, str(ROOT / "bench"))
from figures import BLOCK, COMMANDS, FIGURES, PROVENANCE  # noqa: E402

FENCE = re.compile(r"```(?P<lang>[a-z]*)\n(?P<body>.*?)```", re.S)
# A measured time or memory figure: a number followed by a unit of either.
MEASURE = re.compile(r"\b\d+(?:[.,]\d+)*(?:\s(?:ms|s|sec)|\s?(?:seconds?|min|minutes?|hours?|MiB|GiB|MB|GB))\b")
# Figures outside the blocks that are settings, limits or arithmetic, not measurements.
NOT_MEASURED = ("10 MiB", "128 MiB", "200 MiB", "1 GiB", "512 MiB", "4 N^2 bytes", "16 MB at", "0.1 s",
                "5 seconds", "60 seconds", "2 hours", "20 s)", "2 minutes", "0.5 s", "per second", "every 0.",
                "5 ms", "4 times a second")


def blocks():
    return {m.group("name"): m.group("body") for m in BLOCK.finditer(README)}


def test_every_figure_block_is_its_file_and_every_file_says_how_it_was_made():
    shown = blocks()
    assert set(shown) <= set(COMMANDS), f"blocks without a command in bench/figures.py: {set(shown) - set(COMMANDS)}"
    for name, body in shown.items():
        path = Path(FIGURES) / f"{name}.md"
        assert path.exists(), f"docs/figures/{name}.md is missing: python bench/figures.py {name}"
        text = path.read_text(encoding="utf-8")
        assert body == text, f"README's block {name} differs from docs/figures/{name}.md: python bench/figures.py --readme"
        match = PROVENANCE.match(text)
        assert match and match.group("name") == name and "load average" in text.splitlines()[0], name


def test_no_measured_time_or_memory_figure_is_typed_outside_the_blocks():
    """Outside the figure blocks and code, the README states no measured time or memory (limits and settings
    excepted): a measurement typed by hand goes stale without anyone noticing."""
    text = BLOCK.sub("", README)
    text = FENCE.sub("", text)
    text = re.sub(r"`[^`\n]*`", "", text)  # inline code: commands, messages as the program prints them
    typed = []
    for line in text.splitlines():
        for m in MEASURE.finditer(line):
            around = line[max(0, m.start() - 30):m.end() + 30]
            if not any(allowed in around for allowed in NOT_MEASURED):
                typed.append(around)
    assert not typed, "measured figures typed by hand (make them with bench/figures.py): " + " | ".join(typed)


def _python_example():
    fences = list(FENCE.finditer(README))
    for i, m in enumerate(fences):
        if m.group("lang") == "python":
            out = fences[i + 1]
            assert out.group("lang") == "text", "the Python example is followed by what it prints"
            return m.group("body"), out.group("body")
    raise AssertionError("no Python example in the README")


@pytest.mark.slow
def test_the_python_example_prints_what_the_readme_shows(tmp_path):
    code, shown = _python_example()
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == shown, f"the README shows\n{shown}\nbut the example prints\n{proc.stdout}"
    assert "warning" not in proc.stderr.lower(), proc.stderr  # the quick start warns about nothing


def _command_lines():
    """Every `pcrp ...` line of the README's bash blocks, without its comment, and whether it is to be run."""
    out = []
    for m in FENCE.finditer(README):
        if m.group("lang") != "bash":
            continue
        for line in m.group("body").splitlines():
            if line.startswith("pcrp "):
                command, _, comment = line.partition("#")
                out.append((command.strip(), "not run by the tests" not in comment))
    return out


def test_the_command_lines_parse():
    """Every `pcrp ...` line of the README, run or not, is a command the parser accepts."""
    from pcrp.cli import build_parser

    lines = _command_lines()
    assert len(lines) >= 15
    for command, _ in lines:
        args = shlex.split(command)[1:]
        if args[-1] == "--help":
            continue
        build_parser().parse_args(args)


@pytest.mark.slow
def test_the_command_lines_run(tmp_path):
    """Each line marked to run, in order, in one folder (later lines read what earlier ones wrote), exits 0."""
    from pcrp.data import simulation

    ds = simulation("sim2", n=300, seed=0)
    rows = np.column_stack([ds.X[:, 0], np.random.default_rng(0).normal(size=ds.n), ds.labels])
    np.savetxt(tmp_path / "mydata.csv", rows, delimiter=",", header="x,y,class", comments="", fmt="%.6g")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for command, run in _command_lines():
        if not run:
            continue
        argv = [sys.executable, "-m", "pcrp.cli", *shlex.split(command)[1:]]
        proc = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=900, env=env)
        assert proc.returncode == 0, f"{command}\n{proc.stderr[-2000:]}"
