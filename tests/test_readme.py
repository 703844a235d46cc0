"""The README and the pages of docs/ as a newcomer reads them: their measured figures are the scripts' output,
their Python example prints what it shows, their command lines run and their links lead somewhere."""

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))
from figures import BLOCK, COMMANDS, FIGURES, PROVENANCE, pages  # noqa: E402

PAGES = {Path(p).relative_to(ROOT).as_posix(): Path(p).read_text(encoding="utf-8") for p in pages()}
README = PAGES["README.md"]
# Every Markdown file a link may point into: the pages and the generated reports (docs/reproduce, docs/compare).
MARKDOWN = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]

FENCE = re.compile(r"```(?P<lang>[a-z]*)\n(?P<body>.*?)```", re.S)
# A measured time or memory figure: a number followed by a unit of either.
MEASURE = re.compile(r"\b\d+(?:[.,]\d+)*(?:\s(?:ms|s|sec)|\s?(?:seconds?|min|minutes?|hours?|MiB|GiB|MB|GB))\b")
# Figures outside the blocks that are settings, limits or arithmetic, not measurements.
NOT_MEASURED = ("10 MiB", "128 MiB", "200 MiB", "1 GiB", "512 MiB", "4 N^2 bytes", "16 MB at", "0.1 s",
                "5 seconds", "60 seconds", "2 hours", "20 s)", "2 minutes", "0.5 s", "per second", "every 0.",
                "5 ms", "4 times a second")
# A Markdown link or image: [text](target) or ![alt](target); the target ends at a space (a title) or ")".
LINK = re.compile(r"!?\[[^\]]*\]\((?P<target>[^)\s]+)(?:\s+\"[^\"]*\")?\)")


def test_the_readme_is_a_front_door():
    """At most about 200 lines, with the two set-up commands (the test line is the one .ci/run calls)."""
    assert len(README.splitlines()) <= 210
    assert 'pip install -e ".[app]" && streamlit run app.py' in README
    assert 'pip install -e ".[test]" && python -m pytest -q' in README
    assert 'pip install -e ".[test]" && python -m pytest -q' in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_every_figure_block_is_its_file_and_every_file_says_how_it_was_made():
    shown = 0
    for page, text in PAGES.items():
        for m in BLOCK.finditer(text):
            name, body = m.group("name"), m.group("body")
            assert name in COMMANDS, f"{page}: block {name} has no command in bench/figures.py"
            path = Path(FIGURES) / f"{name}.md"
            assert path.exists(), f"docs/figures/{name}.md is missing: python bench/figures.py {name}"
            assert body == path.read_text(encoding="utf-8"), \
                f"{page}'s block {name} differs from docs/figures/{name}.md: python bench/figures.py --readme"
            shown += 1
    assert shown >= len(COMMANDS), "every figure bench/figures.py makes is shown on some page"
    for path in sorted(Path(FIGURES).glob("*.md")):
        text = path.read_text(encoding="utf-8")
        match = PROVENANCE.match(text)
        assert match and match.group("name") == path.stem and "load average" in text.splitlines()[0], path.name


def _slug(heading):
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(path):
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    return {_slug(m.group(1)) for m in re.finditer(r"^#+\s+(.*)$", text, re.M)}


def test_every_relative_link_resolves():
    """Every relative link or image of the README and of docs/ names a file or folder of the repository, and a
    #heading in a Markdown file names one of its headings."""
    broken = []
    for page in MARKDOWN:
        text = FENCE.sub("", page.read_text(encoding="utf-8"))
        text = re.sub(r"`[^`\n]*`", "", text)
        for m in LINK.finditer(text):
            target = m.group("target")
            if re.match(r"[a-z][a-z0-9+.-]*:", target):  # http:, https:, mailto:
                continue
            file, _, anchor = target.partition("#")
            path = (page.parent / file).resolve() if file else page
            where = f"{page.relative_to(ROOT)}: {target}"
            if not path.exists():
                broken.append(f"{where} (no such file)")
            elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
                broken.append(f"{where} (no such heading)")
    assert not broken, "links that lead nowhere: " + "; ".join(broken)


def test_no_measured_time_or_memory_figure_is_typed_outside_the_blocks():
    """Outside the figure blocks and code, no page states a measured time or memory (limits and settings
    excepted): a measurement typed by hand goes stale without anyone noticing."""
    typed = []
    for page, text in PAGES.items():
        text = BLOCK.sub("", text)
        text = FENCE.sub("", text)
        text = re.sub(r"`[^`\n]*`", "", text)  # inline code: commands, messages as the program prints them
        for line in text.splitlines():
            for m in MEASURE.finditer(line):
                around = line[max(0, m.start() - 30):m.end() + 30]
                if not any(allowed in around for allowed in NOT_MEASURED):
                    typed.append(f"{page}: {around}")
    assert not typed, "measured figures typed by hand (make them with bench/figures.py): " + " | ".join(typed)


def _python_examples():
    """(page, code, what it prints) for every Python block of a page that is followed by a text block."""
    out = []
    for page, text in PAGES.items():
        fences = list(FENCE.finditer(text))
        for m, after in zip(fences, fences[1:]):
            if m.group("lang") == "python" and after.group("lang") == "text":
                out.append((page, m.group("body"), after.group("body")))
    return out


def test_the_readme_has_its_python_example():
    assert any(page == "README.md" for page, _, _ in _python_examples()), \
        "the README shows a Python example followed by what it prints"


@pytest.mark.slow
@pytest.mark.parametrize("page,code,shown", _python_examples(), ids=lambda v: v if v in PAGES else "")
def test_the_python_examples_print_what_the_pages_show(tmp_path, page, code, shown):
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == shown, f"{page} shows\n{shown}\nbut the example prints\n{proc.stdout}"
    assert "warning" not in proc.stderr.lower(), proc.stderr  # the examples warn about nothing


def _command_lines():
    """Every `pcrp ...` line of the pages' bash blocks (README first), without its comment, and whether it is to be
    run; a line shown on two pages is listed once."""
    out = {}
    for text in PAGES.values():
        for m in FENCE.finditer(text):
            if m.group("lang") != "bash":
                continue
            for line in m.group("body").splitlines():
                if line.startswith("pcrp "):
                    command, _, comment = line.partition("#")
                    out.setdefault(command.strip(), "not run by the tests" not in comment)
    return list(out.items())


def test_the_command_lines_parse():
    """Every `pcrp ...` line of the pages, run or not, is a command the parser accepts."""
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
