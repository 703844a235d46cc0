"""The `pcrp run` contract: outputs, recorded configuration, and one-line errors with status 2."""

import errno
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from pcrp.runs.chains import ChainSet
from pcrp.cli import main
from pcrp.summaries.partition import point_estimate, similarity_matrix
from process_support import sigint_as_in_a_terminal

CSV = "a,b\n" + "\n".join(f"{i % 7 * 1.5},{(i * 37) % 11 - 4.0}" for i in range(40)) + "\n"


@pytest.fixture
def csv_path(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text(CSV)
    return path


def test_run_writes_the_documented_result(csv_path, tmp_path, capsys):
    out = tmp_path / "r.npz"
    start = time.perf_counter()
    rc = main(["run", str(csv_path), "--prior", "pcrp", "--alpha", "0.5", "--r", "1.4", "--iters", "60",
               "--burn-in", "20", "--thin", "4", "--seed", "3", "--chains", "2", "--init", "random:3,one",
               "--psm", "--out", str(out)])
    wall = time.perf_counter() - start
    assert rc == 0
    printed = capsys.readouterr().out
    with np.load(out, allow_pickle=False) as r:
        assert r["K"].shape == (2, 60) and r["K"].dtype.kind == "i"
        assert r["log_joint"].shape == (2, 60) and r["log_joint"].dtype.kind == "f"
        assert r["labels"].shape == (2, 10, 40) and r["labels"].dtype.kind == "i"
        assert r["kept_sweeps"].tolist() == list(range(24, 61, 4))
        assert r["seconds_per_sweep"].shape == (2,) and r["split_merge_stats"].shape == (2, 4)
        assert r["split_merge_history"].shape == (2, 10, 4)
        psm, point = r["psm"], r["point_labels"]
        draws = r["labels"]
        diagnostics = json.loads(str(r["diagnostics"]))
        config = json.loads(str(r["config"]))
        point_loss = float(r["point_expected_loss"])
        seconds_per_sweep = r["seconds_per_sweep"]
    # kernel seconds per sweep: the 60 sweeps of each chain fit inside the command's own wall time, and the
    # printout shows the range over chains
    assert np.all(seconds_per_sweep > 0) and np.all(seconds_per_sweep * 60 <= wall)
    ms = seconds_per_sweep * 1e3
    assert f"at {ms.min():.3f}-{ms.max():.3f} ms/sweep" in printed
    assert psm.shape == (40, 40) and psm.dtype == np.float32
    assert np.array_equal(psm, similarity_matrix(draws))
    assert point.shape == (40,) and point.dtype.kind == "i"
    estimate = point_estimate(draws, "vi", seed=3)
    assert np.array_equal(point, estimate.labels) and point_loss == pytest.approx(estimate.expected_loss)
    for name in ("K", "log_joint"):
        for key in ("mean", "mcse", "rhat", "ess_bulk", "ess_tail"):
            assert key in diagnostics[name]
            assert all(key in chain for chain in diagnostics[name]["per_chain"])
        assert len(diagnostics[name]["per_chain"]) == 2
    with np.load(out) as r:  # K at every sweep after burn-in, as ArviZ's summary of the export
        assert diagnostics["K"]["mean"] == pytest.approx(r["K"][:, 20:].mean())
    for key in ("prior", "alpha", "r", "m0", "kappa0", "nu0", "S0", "seed", "iters", "burn_in", "thin",
                "split_merge", "standardize", "columns", "n_chains", "chain_seeds", "init", "loss"):
        assert key in config
    assert config["prior"] == "pcrp" and config["r"] == 1.4 and config["alpha"] == 0.5
    assert config["columns"] == ["a", "b"] and config["standardize"] is True
    assert config["nu0"] == 5.0 and config["split_merge"] == 1
    assert config["init"] == ["random:3", "one"] and config["n_chains"] == 2 and config["loss"] == "vi"
    loaded = ChainSet.load(out)
    assert np.array_equal(loaded.labels, draws) and loaded.config == config


def test_one_chain_keeps_the_axis_and_starts_are_cycled(csv_path, tmp_path):
    out = tmp_path / "r.npz"
    assert main(["run", str(csv_path), "--iters", "12", "--burn-in", "4", "--thin", "2", "--chains", "1",
                 "--out", str(out)]) == 0
    with np.load(out) as r:
        assert r["K"].shape == (1, 12) and r["labels"].shape == (1, 4, 40)
    assert main(["run", str(csv_path), "--iters", "12", "--burn-in", "4", "--chains", "3", "--init", "one,kmeans:2",
                 "--loss", "binder", "--out", str(out)]) == 0
    with np.load(out) as r:
        config = json.loads(str(r["config"]))
        assert config["init"] == ["one", "kmeans:2", "one"] and config["loss"] == "binder"
        assert np.array_equal(r["point_labels"], point_estimate(r["labels"], "binder", seed=int(config["seed"])).labels)


def test_chains_that_disagree_print_an_r_hat_warning(tmp_path, capsys):
    # plain Gibbs at r = 1.5 on Old Faithful: the chain started as one cluster stays there, the k-means one
    # settles at two clusters (docs/design.md section 1.7), so R-hat on K is far above 1.01 (4.1 with this seed).
    # Seeded: without --seed, 2 of 60 runs had the first chain leave its one cluster within the 200 sweeps, and the
    # chains then agreed (a CI run failed so).
    out = tmp_path / "of.npz"
    assert main(["run", "old-faithful", "--r", "1.5", "--no-split-merge", "--chains", "2", "--init",
                 "one,kmeans:10", "--iters", "200", "--burn-in", "100", "--seed", "0", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    warnings = [line for line in captured.err.splitlines() if line.startswith("warning: R-hat on K is")]
    assert len(warnings) == 1 and "Run more sweeps" in warnings[0]
    assert "R-hat K" in captured.out and f"wrote {out}" in captured.out
    diagnostics = json.loads(str(np.load(out)["diagnostics"]))
    assert diagnostics["K"]["rhat"] == "inf" or diagnostics["K"]["rhat"] > 1.01


def test_no_standardize_sees_the_file_numbers_and_overrides_niw(csv_path, tmp_path):
    out = tmp_path / "r.npz"
    rc = main(["run", str(csv_path), "--prior", "crp", "--iters", "10", "--burn-in", "0", "--thin", "1",
               "--no-standardize", "--no-split-merge", "--kappa0", "0.1", "--nu0", "4",
               "--s0", "3", "--columns", "b", "--m0", "7", "--out", str(out)])
    assert rc == 0
    config = json.loads(str(np.load(out)["config"]))
    assert config["standardize"] is False and config["split_merge"] == 0
    assert config["m0"] == [7.0] and config["kappa0"] == 0.1 and config["nu0"] == 4.0 and config["S0"] == [[3.0]]
    assert config["columns"] == ["b"] and config["prior"] == "crp" and "r" not in config  # its own parameters only
    # without --m0 the default m0 is the mean of the raw file column
    main(["run", str(csv_path), "--iters", "5", "--burn-in", "0", "--no-standardize", "--columns", "b",
          "--out", str(out)])
    raw_b = np.array([(i * 37) % 11 - 4.0 for i in range(40)])
    assert json.loads(str(np.load(out)["config"]))["m0"] == pytest.approx([raw_b.mean()])


def test_seed_reproduces_the_chain(csv_path, tmp_path):
    runs = []
    for name in ("x.npz", "y.npz"):
        main(["run", str(csv_path), "--iters", "30", "--burn-in", "10", "--thin", "2", "--seed", "9",
              "--out", str(tmp_path / name)])
        runs.append(np.load(tmp_path / name)["labels"])
    assert np.array_equal(*runs)


def test_builtin_data_by_name(tmp_path):
    out = tmp_path / "of.npz"
    assert main(["run", "old-faithful", "--iters", "20", "--burn-in", "10", "--out", str(out)]) == 0
    with np.load(out) as r:
        assert r["labels"].shape[2] == 272


@pytest.mark.parametrize("args,message", [
    (["--r", "0"], "r must be a finite number > 0"),
    (["--r", "-1"], "r must be a finite number > 0"),
    (["--alpha", "0"], "alpha must be a finite number > 0"),
    (["--alpha", "-2"], "alpha must be a finite number > 0"),
    (["--kappa0", "0"], "kappa0 must be a finite number > 0"),
    (["--nu0", "1"], r"nu0 must be > d - 1 = 1"),
    (["--s0", "-1"], "S0 must be a finite number > 0"),
    (["--m0", "1,2,3"], "m0 needs 2 values"),
    (["--m0", "a,b"], "--m0 must be comma-separated numbers"),
    (["--iters", "0"], r"--iters must be a whole number >= 1 \(got 0\): sweeps per chain"),
    (["--burn-in", "50", "--iters", "50"], "burn_in .50. must be smaller than iters"),
    (["--thin", "0"], r"--thin must be a whole number >= 1 \(got 0\): thinning"),
    (["--init", "kmeans:x"], "init must be 'one', 'random:K' or 'kmeans:K'"),
    (["--init", "one,,kmeans:3"], "init must be 'one', 'random:K' or 'kmeans:K'"),
    (["--chains", "0"], r"--chains must be a whole number >= 1 \(got 0\): chains of the run, in \[1, \d+\]"),
    (["--chains", "100000"], r"--chains must be at most \d+ \(got 100000\): at most 8 chains per core"),
    (["--max-iters", "1e308"], r"--max-iters must be at most 1e\+07 \(got 1e\+308\)"),
    (["--budget", "auto", "--iters", "100"], r"--budget auto and --iters contradict each other"),
    (["--burn-in", "10"], r"burn_in applies to a fixed budget: give iters too"),
    (["--iters", "20", "--burn-in", "10", "--thin", "11"], r"thin \(11\) leaves no draws to keep"),
    (["--loss", "ari"], "invalid choice: 'ari'"),
    (["--prior", "dp"], "invalid choice: 'dp'"),
    (["--columns", "zzz"], "There is no column 'zzz'"),
])
def test_bad_parameters_exit_2_with_one_line(csv_path, tmp_path, capsys, args, message):
    rc = main(["run", str(csv_path), "--out", str(tmp_path / "o.npz"), *args])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.startswith("pcrp: error:") and err.count("\n") == 1
    assert __import__("re").search(message, err), err


def test_missing_file_and_unwritable_output(tmp_path, csv_path, capsys):
    assert main(["run", str(tmp_path / "nope.csv"), "--out", str(tmp_path / "o.npz")]) == 2
    assert "No such file" in capsys.readouterr().err
    assert main(["run", str(csv_path), "--iters", "5", "--burn-in", "0",
                 "--out", str(tmp_path / "no" / "dir" / "o.npz")]) == 2
    assert "cannot write" in capsys.readouterr().err


def test_console_script_help_and_error_without_traceback(tmp_path):
    help_text = subprocess.run([sys.executable, "-m", "pcrp.cli", "run", "--help"],
                               capture_output=True, text=True).stdout
    for option in ("--prior", "--alpha", "--r", "--iters", "--burn-in", "--thin", "--seed", "--init", "--chains",
                   "--loss", "--n-jobs",
                   "--no-split-merge", "--m0", "--kappa0", "--nu0", "--s0", "--standardize",
                   "--no-standardize", "--columns", "--out"):
        assert option in help_text
    bad = tmp_path / "bad.csv"
    bad.write_bytes(b"\x00\x01\x02garbage")
    proc = subprocess.run([sys.executable, "-m", "pcrp.cli", "run", str(bad), "--out", "x.npz"],
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "binary" in proc.stderr


def test_help_imports_only_what_argparse_needs():
    """`pcrp --help` lists the subcommands without building their flags: no numpy, numba, scipy, scikit-learn,
    plotly, ArviZ, arviz-stats or Dask is imported (they load inside the subcommand that uses them)."""
    script = ("import sys; from pcrp.cli import main\n"
              "try:\n    main(['--help'])\nexcept SystemExit:\n    pass\n"
              "print(sorted(m for m in ('numpy', 'numba', 'scipy', 'sklearn', 'plotly', 'arviz', 'arviz_stats', "
              "'dask') if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert "run the collapsed Gibbs sampler" in proc.stdout and proc.stdout.splitlines()[-1] == "[]", proc.stderr


def test_pcrp_run_imports_only_what_it_uses(tmp_path):
    """`pcrp run` imports none of the heavy libraries it does not use (each costs a quarter to one and a half
    seconds of start-up): the k-means starts are pcrp.sampling.kmeans_start (no scikit-learn), NMI and VI
    pcrp.summaries.summary.nmi_vi; R-hat, ESS and MCSE are arviz-stats' array functions (pcrp.summaries.diagnostics),
    not ArviZ 0.x, so no matplotlib. arviz-stats is imported, and with it xarray and pandas: its package __init__
    imports xarray whenever it is installed (ArviZ 0.x installs it), which pcrp cannot avoid short of bypassing
    that __init__ (docs/speed.md, Start-up)."""
    heavy = ("sklearn", "arviz", "arviz_stats", "matplotlib", "plotly", "dask")
    script = ("import sys\nfrom pcrp.cli import main\n"
              "rc = main(['run', 'old-faithful', '--iters', '20', '--seed', '0', '--out', 'r.npz'])\n"
              f"print(sorted(m for m in {heavy!r} if m in sys.modules), rc)")
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path)
    assert proc.stdout.splitlines()[-1] == "['arviz_stats'] 0", proc.stdout[-2000:] + proc.stderr[-2000:]


def assert_one_line_error(rc, err, message):
    """Exit status 2, exactly one line on stderr, starting 'pcrp: error:', matching ``message``."""
    assert rc == 2, err
    assert err.startswith("pcrp: error:") and err.count("\n") == 1, err
    assert re.search(message, err), err


# One row per bad input (issue 15 items 1-2): what the user types after `pcrp run DATA --out OUT`, the data
# (CSV = the 40-row file above), and the message they see.
RUN_BAD_INPUTS = [
    (["--seed", "-1"], "CSV", r"--seed must be a whole number >= 0 \(got -1\)"),
    (["--seed", "1.5"], "CSV", r"argument --seed: must be a whole number \(got '1.5'\)"),
    (["--iters", "1e11", "--thin", "1"], "CSV", r"--iters must be at most 1e\+07 \(got 100000000000\): the per-sweep traces"),
    (["--iters", "1e400"], "CSV", r"argument --iters: must be a whole number \(got '1e400'\)"),
    (["--iters", "nan"], "CSV", r"argument --iters: must be a whole number \(got 'nan'\)"),
    (["--iters", ""], "CSV", r"argument --iters: must be a whole number \(got ''\)"),
    (["--iters", "2.5"], "CSV", r"argument --iters: must be a whole number \(got '2.5'\)"),
    (["--iters", "100", "--burn-in", "-1"], "CSV", r"--burn-in must be a whole number >= 0 \(got -1\)"),
    (["--iters", "100", "--burn-in", "95", "--thin", "10"], "CSV",
     r"thin \(10\) leaves no draws to keep: .* thin must be at most iters - burn_in = 5"),
    (["--digits", "1.7"], "mnist", r"--digits must be comma-separated whole numbers \(got '1\.7'\)"),
    (["--digits", "nan"], "mnist", r"--digits must be comma-separated whole numbers"),
    (["--digits", "1,2"], "CSV", r"--digits applies only to the built-in data set mnist, not to .*; leave it out"),
    (["--n", "100"], "CSV", r"--n applies only to the built-in data sets sim1, sim2, demo, mnist"),
    (["--dims", "3"], "sim1", r"--dims applies only to the built-in data set mnist, not to sim1"),
    (["--data-seed", "-1"], "sim1", r"--data-seed must be a whole number >= 0 \(got -1\)"),
    (["--r", "1e308"], "CSV", r"r must be at most 1000 \(got 1e\+308\): .* double precision"),
    (["--r", "nan"], "CSV", r"r must be a finite number > 0 \(got nan\)"),
    (["--alpha", "inf"], "CSV", r"alpha must be a finite number > 0 \(got inf\)"),
    (["--m0", "1e308,0"], "CSV", r"squared distances of the points from m0 overflow double precision"),
    (["--m0", ""], "CSV", r"--m0 must be comma-separated numbers \(got ''\)"),
    (["--s0", "1e-300"], "CSV", r"condition number of .* above the supported 1e\+12\. Make S0 larger"),
    (["--nu0", "1e300"], "CSV", r"nu0 must be at most 1e\+07 \(got 1e\+300\)"),
    (["--kappa0", "nan"], "CSV", r"kappa0 must be a finite number > 0 \(got nan\)"),
    (["--init", "random:-3"], "CSV", r"init must be 'one', 'random:K' or 'kmeans:K' with K >= 1"),
    (["--columns", ""], "CSV", r"--columns has an empty name \(got ''\)"),
    (["--columns", "a,"], "CSV", r"--columns has an empty name \(got 'a,'\)"),
    (["--prior", "crp", "--r", "1.5"], "CSV",
     r"--r does not apply to --prior crp \(CRP\); its parameters are --alpha \(concentration alpha, default 1\)"),
]


@pytest.mark.parametrize("args,data,message", RUN_BAD_INPUTS)
def test_each_bad_run_input_gets_one_line(csv_path, tmp_path, capsys, args, data, message):
    source = str(csv_path) if data == "CSV" else data
    rc = main(["run", source, "--out", str(tmp_path / "o.npz"), *args])
    assert_one_line_error(rc, capsys.readouterr().err, message)
    assert not (tmp_path / "o.npz").exists()


def test_out_naming_a_folder_or_nothing_is_refused_before_sampling(csv_path, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "results").mkdir()
    rc = main(["run", str(csv_path), "--out", str(tmp_path / "results")])
    assert_one_line_error(rc, capsys.readouterr().err,
                          rf"--out .*results is a folder: give a file name in it, such as .*results/result\.npz")
    assert not (tmp_path / "results.npz").exists()
    assert_one_line_error(main(["run", str(csv_path), "--out", ""]), capsys.readouterr().err,
                          r"--out is empty: give a file name such as result\.npz")
    assert not (tmp_path / ".npz").exists()
    rc = main(["run", str(csv_path), "--out", str(tmp_path / "missing" / "r.npz")])
    assert_one_line_error(rc, capsys.readouterr().err, r"cannot write .*r\.npz: the folder .*missing does not exist")


def test_out_prints_the_path_it_really_wrote(csv_path, tmp_path, capsys, monkeypatch):
    """numpy adds .npz to a name without it: the command says so by printing the real, absolute path."""
    monkeypatch.chdir(tmp_path)
    assert main(["run", str(csv_path), "--iters", "10", "--burn-in", "5", "--out", "result"]) == 0
    assert (tmp_path / "result.npz").is_file() and not (tmp_path / "result").exists()
    assert capsys.readouterr().out.rstrip().endswith(f"wrote {tmp_path / 'result.npz'}")


class FullDisk:
    """An open file whose writes fail with ENOSPC once ``room`` bytes are written: the disk fills up."""

    def __init__(self, f, room):
        self._f, self._room = f, room

    def write(self, data):
        if len(data) > self._room:
            self._f.write(data[:self._room])
            self._room = 0
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self._room -= len(data)
        return self._f.write(data)

    def __getattr__(self, name):
        return getattr(self._f, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._f.close()


def fill_the_disk(monkeypatch, room):
    """Every file pcrp writes from now on fills the disk after ``room`` bytes."""
    from pcrp.basics import files

    real_open = files._open_temp
    monkeypatch.setattr(files, "_open_temp", lambda fd, mode: FullDisk(real_open(fd, mode), room))


@pytest.mark.parametrize("command", ["run", "path"])
def test_out_on_a_full_disk_leaves_the_earlier_file_as_it_was(csv_path, tmp_path, capsys, monkeypatch, command):
    """Issue 18: on a full disk `pcrp run ... --out good.npz` replaced the good file with a partial zip."""
    if command == "run":
        out = tmp_path / "good.npz"
        args = ["run", str(csv_path), "--iters", "20", "--burn-in", "10", "--out", str(out)]
    else:
        (tmp_path / "start.txt").write_text("\n".join(str(i % 3) for i in range(40)))
        out = tmp_path / "path.json"
        args = ["path", str(csv_path), "--from-labels", str(tmp_path / "start.txt"), "--out", str(out)]
    assert main(args) == 0
    before, listing = out.read_bytes(), sorted(os.listdir(tmp_path))
    capsys.readouterr()
    fill_the_disk(monkeypatch, room=100)
    rc = main(args[:-2] + ["--alpha", "0.5", "--out", str(out)])  # other settings, so other content
    assert_one_line_error(rc, capsys.readouterr().err,
                          rf"^pcrp: error: cannot write {re.escape(str(out))}: No space left on device; any earlier "
                          r"file there is left as it was; free some space, or write to another disk\.$")
    assert out.read_bytes() == before and sorted(os.listdir(tmp_path)) == listing  # no temporary file left
    if command == "run":
        assert ChainSet.load(out).K.shape == (4, 20)


def test_out_past_the_file_size_limit_leaves_the_earlier_file_as_it_was(tmp_path):
    """A real write that fails half way (EFBIG under a 4,000-byte file-size limit, set after a first run has
    filled numba's cache) in a separate process, as the console script runs."""
    pytest.importorskip("resource")  # POSIX
    out = tmp_path / "good.npz"
    script = (
        "import resource, sys\n"
        "from pcrp.cli import main\n"
        f"args = ['run', 'old-faithful', '--iters', '30', '--burn-in', '10', '--seed', '0', '--out', {str(out)!r}]\n"
        "assert main(args) == 0\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (4000, 4000))\n"
        "sys.exit(main(args[:-4] + ['--seed', '7', '--out', args[-1]]))\n"
    )
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.endswith(f"pcrp: error: cannot write {out}: File too large; any earlier file there is left "
                                "as it was; raise the file-size limit (ulimit -f), or write to another file system.\n")
    assert "Traceback" not in proc.stderr and os.listdir(tmp_path) == ["good.npz"]
    assert ChainSet.load(out).config["seed"] == 0  # the first run's file, whole


@pytest.mark.parametrize("target, message", [
    ("/dev/full", r"--out /dev/full is in /dev, the system's folder of devices: results are written only to regular "
                  r"files \(each replaced whole once complete, which a device or a pipe cannot be\); give a file name "
                  r"in a folder of yours, such as .*result\.(npz|json|csv)\."),
    ("/dev/null", r"--out /dev/null is in /dev"),
    ("/dev/new-result", r"--out /dev/new-result is in /dev"),
    ("FIFO", r"--out .*fifo is a named pipe \(FIFO\), not a regular file: results are written only to regular files"),
    ("LINK", r"--out .*link\.npz leads to /dev/full, in /dev, the system's folder of devices"),
])
def test_out_refuses_devices_and_pipes_before_any_work(csv_path, tmp_path, capsys, target, message):
    """Issue 18: `--out /dev/full` wrote /dev/full.npz and exited 0."""
    if target == "FIFO":
        target = str(tmp_path / "fifo")
        os.mkfifo(target)
    elif target == "LINK":
        target = str(tmp_path / "link.npz")
        os.symlink("/dev/full", target)
    before = sorted(os.listdir("/dev"))
    for args in (["run", str(csv_path), "--out", target], ["path", str(csv_path), "--out", target],
                 ["cv", str(csv_path), "--out-csv", target]):
        rc = main(args)
        err = capsys.readouterr().err
        assert_one_line_error(rc, err, message.replace("--out", "--out-csv") if args[0] == "cv" else message)
    assert sorted(os.listdir("/dev")) == before  # no /dev/full.npz, nothing new in /dev
    assert not [p for p in os.listdir(tmp_path) if p not in ("fifo", "link.npz", "data.csv")]
    rc = main(["reproduce", "--out", "/dev/pcrp-output"])
    assert_one_line_error(rc, capsys.readouterr().err, r"--out /dev/pcrp-output is in /dev, .* give a folder of "
                                                       r"yours, such as .*reproduce-output\.")
    assert not os.path.exists("/dev/pcrp-output")


# Ctrl-C during start-up (issue 18) came while the library was imported, before main's handler existed.
INTERRUPT_DURING_IMPORT = """
import sys
class Interrupt:
    def find_spec(self, name, path=None, target=None):
        if name == {module!r}:
            raise KeyboardInterrupt
sys.meta_path.insert(0, Interrupt())
from pcrp.cli import main
sys.exit(main({args!r}))
"""


# pcrp.analyses.run_summary: imported after sampling (pcrp.experiments.reproduce was here while every subcommand's parser was built for
# `pcrp run`; now only run's is, and the run never imports pcrp.experiments.reproduce)
@pytest.mark.parametrize("module", ["numpy", "numba", "scipy", "pcrp.sampling.sampler", "pcrp.analyses.run_summary"])
def test_ctrl_c_while_the_library_is_imported_is_one_line(tmp_path, module):
    """Deterministic: the import of ``module`` is interrupted, as Ctrl-C in the first seconds does."""
    script = INTERRUPT_DURING_IMPORT.format(module=module, args=["run", "old-faithful", "--out", "r.npz"])
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=tmp_path)
    assert (proc.returncode, proc.stderr) == (130, "pcrp: interrupted.\n")
    assert os.listdir(tmp_path) == []


def test_ctrl_c_at_any_moment_of_start_up_and_run_is_one_line(tmp_path):
    """The real signal, at several moments from the first library import to sampling, in a process started as the
    console script starts. Timed from the moment argparse has been imported (-X importtime reports it): before
    the issue 18 fix that was in the middle of about a second of library imports that ran before main."""
    entry = "import sys; from pcrp.cli import main; sys.exit(main(sys.argv[1:]))"
    for delay in (0.1, 0.4, 0.9, 1.6, 3.0):
        proc = subprocess.Popen([sys.executable, "-X", "importtime", "-c", entry, "run", "old-faithful", "--iters", "1e6",
                                 "--thin", "100", "--out", "r.npz"],
                                cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                preexec_fn=sigint_as_in_a_terminal)
        for line in proc.stderr:
            if line.startswith("import time:") and line.split("|")[-1].strip() == "argparse":
                break
        else:
            pytest.fail(f"argparse was never imported: {proc.communicate()}")
        time.sleep(delay)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=120)
        # -X importtime's lines, which the summaries' background import (ArviZ, preloaded while chains run) can
        # write in the middle of another line
        err = re.sub(r"import time:[^\n]*\n", "", err)
        assert (proc.returncode, err) == (130, "pcrp: interrupted.\n"), delay
        assert os.listdir(tmp_path) == [], delay


def test_kmeans_start_beyond_the_points_is_capped_with_a_note(csv_path, tmp_path, capsys):
    rc = main(["run", str(csv_path), "--iters", "10", "--burn-in", "5", "--init", "kmeans:100000",
               "--out", str(tmp_path / "r.npz")])
    assert rc == 0
    err = capsys.readouterr().err
    assert err.startswith("note: --init kmeans:100000 asks for 100,000 clusters but there are 40 points: starting "
                          "from at most 40.\n")


def test_seconds_per_sweep_excludes_compilation(csv_path, tmp_path, monkeypatch):
    """A cold numba cache compiles the sweep kernel at its first call (measured: 119 s of a 147 s run on the
    shared development machine, all counted as sweeps before the fix). Here a first call that takes 1 s
    stands in for compiling; 10 sweeps of 40 points take about 1 ms, so 0.5 s separates the two cases."""
    from pcrp.kernels import sweep
    from pcrp.sampling import sampler

    real = sweep.run_sweeps

    class CompilesOnFirstCall:
        signatures = []

        def __call__(self, *args):
            if not self.signatures:
                time.sleep(1.0)
                self.signatures.append("compiled")
            return real(*args)

    monkeypatch.setattr(sweep, "run_sweeps", CompilesOnFirstCall())
    monkeypatch.setattr(sampler, "_warm", set())  # this process has compiled no kernel yet, as in a fresh one
    out = tmp_path / "r.npz"
    assert main(["run", str(csv_path), "--iters", "10", "--burn-in", "5", "--out", str(out)]) == 0
    assert np.all(np.load(out)["seconds_per_sweep"] * 10 < 0.5)


CV = ["--iters", "20", "--burn-in", "10", "--thin", "5", "--folds", "2", "--r-grid", "1.1,1.5", "--n-jobs", "1"]
CV_BAD_INPUTS = [
    (["--seed", "-1"], r"--seed must be a whole number >= 0 \(got -1\)"),
    (["--repeats", "1e9"], r"Cross validation with 2,000,000,000 splits x 2 values of r would need about "
                           r"[\d,.]+ [GT]iB of memory, more than the .* available now\. Use fewer --repeats"),
    (["--n-jobs", "1e9"], r"--n-jobs must be at most \d+ \(got 1000000000\): this machine has \d+ cores"),
    (["--n-jobs", "-5"], r"--n-jobs must be a whole number >= -1 \(got -5\)"),
    (["--r-grid", "1.1,1e308"], r"r must be at most 1000 \(got 1e\+308\)"),
    (["--folds", "99999999999999999999"], r"folds must be a whole number from 2 to N/2 = 20"),
    (["--out-json", ""], r"--out-json is empty: give a file name such as result\.json"),
    (["--scheduler", ""], r"--scheduler is empty: give the Dask scheduler's address"),
    (["--digits", "1"], r"--digits applies only to the built-in data set mnist"),
    (["--covariance-type", "full,tied"], r"covariance_type \"tied\" \(one covariance shared by all clusters\) is not "
                                         r"offered"),
    (["--covariance-type", "full,full"], r"--covariance-type: give full, diag or spherical, each once"),
    (["--covariance-type", "full,boxy"], r"covariance_type must be one of 'full', 'diag', 'spherical' \(got 'boxy'\)"),
]


@pytest.mark.parametrize("args,message", CV_BAD_INPUTS)
def test_each_bad_cv_input_gets_one_line(csv_path, capsys, args, message):
    assert_one_line_error(main(["cv", str(csv_path), *CV, *args]), capsys.readouterr().err, message)


def test_cv_output_naming_a_folder_is_refused_before_fitting(csv_path, tmp_path, capsys):
    rc = main(["cv", str(csv_path), *CV, "--out-csv", str(tmp_path)])
    assert_one_line_error(rc, capsys.readouterr().err, r"--out-csv .* is a folder: give a file name in it")


REPRODUCE_BAD_INPUTS = [
    (["--seed", "-1"], r"--seed must be a whole number >= 0 \(got -1\)"),
    (["--out", ""], r"--out is empty: give a folder name"),
    (["--n-jobs", "1e9"], r"--n-jobs must be at most \d+ \(got 1000000000\)"),
    (["--experiments", ""], r"unknown experiment \(none given\)"),
    (["--scheduler", " "], r"--scheduler is empty"),
    (["--data-sets", "0"], r"--data-sets must be a whole number >= 1 \(got 0\)"),
    (["--data-sets", "2.5"], r"argument --data-sets: must be a whole number \(got '2.5'\)"),
]


@pytest.mark.parametrize("args,message", REPRODUCE_BAD_INPUTS)
def test_each_bad_reproduce_input_gets_one_line(capsys, args, message):
    assert_one_line_error(main(["reproduce", "--quick", *args]), capsys.readouterr().err, message)


def test_reproduce_out_naming_a_file_is_refused_before_running(tmp_path, capsys):
    (tmp_path / "taken").write_text("x")
    rc = main(["reproduce", "--quick", "--out", str(tmp_path / "taken")])
    assert_one_line_error(rc, capsys.readouterr().err, r"--out .*taken is a file, not a folder")


def test_progress_bar_only_on_a_terminal(csv_path, tmp_path):
    """On a terminal (a pseudo-terminal here) stderr shows tqdm's bar in sweeps; piped, stderr stays empty."""
    import fcntl
    import pty
    import struct
    import termios

    command = [sys.executable, "-m", "pcrp.cli", "run", str(csv_path), "--iters", "300", "--burn-in", "100",
               "--chains", "2", "--out", str(tmp_path / "r.npz")]
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    piped = subprocess.run(command, capture_output=True, text=True, env=env)
    assert piped.returncode == 0 and "%|" not in piped.stderr and "sweep/s" not in piped.stderr  # no bar
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))  # a 100-column terminal
    proc = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=follower, env=env)
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:  # the child closed the terminal
            break
        if not chunk:
            break
        shown += chunk
    os.close(leader)
    assert proc.wait() == 0
    text = shown.decode(errors="replace")
    assert "600/600" in text and "sweep" in text, text  # 2 chains x 300 sweeps


def test_one_thread_dask_cluster_is_named_in_a_note(csv_path, capsys):
    """joblib runs n_jobs = 1 in this process; with a one-thread cluster every fit ran locally, unsaid."""
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                                  dashboard_address=None) as cluster:
        rc = main(["cv", str(csv_path), *CV, "--scheduler", cluster.scheduler_address])
    assert rc == 0
    notes = [line for line in capsys.readouterr().err.splitlines() if line.startswith("note:")]
    assert notes == [f"note: The Dask cluster at {cluster.scheduler_address} has one worker thread, so joblib runs "
                     "every task here, in this process, one after another; give its workers two or more threads "
                     "in all to run on the cluster."]
