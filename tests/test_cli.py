"""The `pcrp run` contract: outputs, recorded configuration, and one-line errors with status 2."""

import json
import subprocess
import sys

import numpy as np
import pytest

from pcrp.chains import ChainSet
from pcrp.cli import main
from pcrp.partition import point_estimate, similarity_matrix

CSV = "a,b\n" + "\n".join(f"{i % 7 * 1.5},{(i * 37) % 11 - 4.0}" for i in range(40)) + "\n"


@pytest.fixture
def csv_path(tmp_path):
    path = tmp_path / "data.csv"
    path.write_text(CSV)
    return path


def test_run_writes_the_documented_result(csv_path, tmp_path):
    out = tmp_path / "r.npz"
    rc = main(["run", str(csv_path), "--prior", "pcrp", "--alpha", "0.5", "--r", "1.4", "--iters", "60",
               "--burn-in", "20", "--thin", "4", "--seed", "3", "--chains", "2", "--init", "random:3,one",
               "--out", str(out)])
    assert rc == 0
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
    kept_K = np.array([[len(np.unique(z)) for z in chain] for chain in draws])
    assert diagnostics["K"]["mean"] == pytest.approx(kept_K.mean())
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
        assert np.array_equal(r["point_labels"], point_estimate(r["labels"], "binder", seed=0).labels)


def test_chains_that_disagree_print_an_r_hat_warning(tmp_path, capsys):
    # plain Gibbs at r = 1.5 on Old Faithful: the chain started as one cluster stays there, the k-means one
    # settles at two clusters (DESIGN.md section 2), so R-hat on K is far above 1.01
    out = tmp_path / "of.npz"
    assert main(["run", "old-faithful", "--r", "1.5", "--no-split-merge", "--chains", "2", "--init",
                 "one,kmeans:10", "--iters", "200", "--burn-in", "100", "--out", str(out)]) == 0
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
    assert config["columns"] == ["b"] and config["r"] == 1.0
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
    (["--iters", "0"], "iters must be an integer >= 1"),
    (["--burn-in", "50", "--iters", "50"], "burn_in .50. must be smaller than iters"),
    (["--thin", "0"], "thin must be an integer >= 1"),
    (["--init", "kmeans:x"], "init must be 'one', 'random:K' or 'kmeans:K'"),
    (["--init", "one,,kmeans:3"], "init must be 'one', 'random:K' or 'kmeans:K'"),
    (["--chains", "0"], "n_chains must be a whole number >= 1"),
    (["--iters", "20", "--burn-in", "10", "--thin", "11"], r"keep no draw of iters \(20\) sweeps"),
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
