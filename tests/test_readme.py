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


# A figure in printed output: not part of a name (log_joint, mcse_sd, PCRPMixture) or of a longer figure.
NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w.])")
# A figure echoed as a setting or a threshold ("r=1.7", "R-hat <= 1.01", "ESS >= 400") is compared exactly.
SETTING = re.compile(r"(?:=|<=|>=)\s*$")
# What ArviZ's summary rounds a column to, whatever pandas' column format shows ("1.0" is an R-hat of 1.00).
SUMMARY_UNITS = {"ess_bulk": 1.0, "ess_tail": 1.0, "r_hat": 0.01}
# ESS may also move by this share of itself (see _disagreements).
ESS_RELATIVE = 0.01
RELATIVE = {"ess_bulk": ESS_RELATIVE, "ess_tail": ESS_RELATIVE}


def _figures(text):
    """Each line of printed output as (skeleton, figures). The skeleton is the line with every figure as "#" and
    its runs of spaces as one (a table's column widths follow its widest figure); each figure is (as shown, its
    column when the line is a row of a table whose header is the last line without figures, else None, whether
    it is a setting or threshold)."""
    out = []
    header = []
    for line in text.splitlines():
        found = list(NUMBER.finditer(line))
        skeleton = " ".join(NUMBER.sub("#", line).split())
        if not found:
            header = line.split()
        columns = header if len(header) == len(found) else [None] * len(found)
        out.append((skeleton, [(m.group(), column, bool(SETTING.search(line[:m.start()])))
                               for m, column in zip(found, columns)]))
    return out


def _tolerance(shown, column, setting):
    """How far a printed figure may lie from the one shown (see _disagreements)."""
    if setting or "." not in shown and column not in SUMMARY_UNITS:
        return 0.0
    unit = SUMMARY_UNITS.get(column, 10.0 ** -len(shown.partition(".")[2]))
    return max(unit, RELATIVE.get(column, 0.0) * abs(float(shown)))


def _disagreements(shown, printed):
    """Where ``printed`` differs from the output a page ``shown`` by more than the last digits of its floating
    point figures may move between machines: one sentence each (none: they agree).

    What a seed fixes on every machine. numpy's random streams (PCG64) are the same everywhere; what differs is
    the C library's log and exp (glibc, macOS, another CPU) and where the compiler fuses a multiply and an add,
    in the last bit or two of a log probability. A draw changes only if its uniform lands within about 1e-15 of
    a boundary between outcomes: over the README example's ~3e5 draws (272 points, 4 chains, 250 sweeps) about
    one chance in a billion. So the words, the line structure, every whole number (N, K, the cluster sizes, the
    chains, the sweeps and burn-in the automatic budget ran) and every echoed setting or threshold ("r=1.7",
    "<= 1.01") must be exactly as shown.

    What may move. A float printed rounded (weights to 2 decimals, means to 1, pcrp's R-hat to 3, ArviZ's MCSE to
    3) whose last bits differ may land on the other side of a rounding boundary, so it may differ by one unit in
    the last place it is rounded to, and no more: 0.01 for a weight, 0.1 for a mean, 0.001 for pcrp's R-hat.
    ArviZ rounds its R-hat to 2 decimals and its ESS to whole numbers, whatever pandas shows, so those units are
    0.01 and 1. ESS, computed from the autocorrelations by a fast Fourier transform whose rounding differs
    between builds, may also move by ESS_RELATIVE = 1% of itself; another seed moves the log joint's ESS by up to
    18% (Old Faithful, seeds 0-4). A wrong K, a wrong size, a weight off by 0.02 or a line with a word or a
    figure more or less fails.
    """
    a, b = _figures(shown), _figures(printed)
    if len(a) != len(b):
        return [f"{len(b)} lines printed, {len(a)} shown"]
    problems = []
    for number, ((skeleton, figures), (got_skeleton, got)) in enumerate(zip(a, b), start=1):
        if skeleton != got_skeleton:
            problems.append(f"line {number} reads {got_skeleton!r}, shown {skeleton!r} (# a figure)")
            continue
        for (want, column, setting), (have, _, _) in zip(figures, got):
            tolerance = _tolerance(want, column, setting)
            if not abs(float(have) - float(want)) <= tolerance + 1e-12:
                problems.append(f"line {number}: {have} printed where {want} is shown"
                                + (f" (column {column})" if column else "") + f", more than {tolerance:g} apart")
    return problems


README_OUTPUT = next(shown for page, _, shown in _python_examples() if page == "README.md")


@pytest.mark.parametrize("old,new", [
    ("[0.64 0.36]", "[0.65 0.35]"),          # a weight at a rounding boundary, rounded the other way
    ("[4.3, 80.0]", "[4.4, 79.9]"),          # a mean likewise
    ("R-hat K 0.999", "R-hat K 1.000"),       # pcrp's R-hat, one unit in its last place
    ("0.005    0.021     524.0     524.0    1.0", "0.006    0.021     525.0     529.0    1.01"),  # ArviZ's row
    ("491.0     475.0    1.0", "495.0     479.0   0.99"),  # 1% of an ESS; R-hat 1.00 shown as 0.99
    ("0.080    0.140", "0.079    0.141"),      # ArviZ's MCSEs, one unit in their last place
])
def test_the_comparison_passes_when_only_the_last_digits_move(old, new):
    assert old in README_OUTPUT
    assert _disagreements(README_OUTPUT, README_OUTPUT.replace(old, new)) == []


@pytest.mark.parametrize("old,new,problem", [
    ("K 2;", "K 3;", "3 printed where 2 is shown"),
    ("[175  97]", "[174  98]", "174 printed where 175 is shown"),
    ("[0.64 0.36]", "[0.66 0.34]", "0.66 printed where 0.64 is shown"),
    ("[4.3, 80.0]", "[4.3, 80.2]", "80.2 printed where 80.0 is shown"),
    ("r=1.7", "r=1.8", "1.8 printed where 1.7 is shown"),
    ("4 x 250 sweeps", "4 x 500 sweeps", "500 printed where 250 is shown"),
    ("R-hat K 0.999", "R-hat K 1.002", "1.002 printed where 0.999 is shown"),
    ("524.0     524.0    1.0", "524.0     524.0    1.05", "1.05 printed where 1.0 is shown (column r_hat)"),
    ("491.0     475.0", "440.0     475.0", "440.0 printed where 491.0 is shown (column ess_bulk)"),
    ("(the chains agree)", "(the chains disagree)", "line 2 reads"),
    ("[175  97] ", "", "line 3 reads"),
    ("log_joint      0.080", "log_joint      0.080    0.1", "line 6 reads"),
])
def test_the_comparison_fails_a_wrong_figure_or_a_broken_line(old, new, problem):
    assert old in README_OUTPUT
    problems = _disagreements(README_OUTPUT, README_OUTPUT.replace(old, new))
    assert any(problem in line for line in problems), problems


def test_the_comparison_fails_a_missing_line():
    assert _disagreements(README_OUTPUT, README_OUTPUT.split("\n", 1)[1]) == ["5 lines printed, 6 shown"]


@pytest.mark.slow
@pytest.mark.parametrize("page,code,shown", _python_examples(), ids=lambda v: v if v in PAGES else "")
def test_the_python_examples_print_what_the_pages_show(tmp_path, page, code, shown):
    """Run in a fresh process; what it prints agrees with what the page shows as _disagreements says: exactly but
    for the last digits of rounded floating point figures, which may move between machines."""
    proc = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert proc.returncode == 0, proc.stderr
    problems = _disagreements(shown, proc.stdout)
    assert not problems, f"{page} shows\n{shown}\nbut the example prints\n{proc.stdout}\n" + "\n".join(problems)
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
