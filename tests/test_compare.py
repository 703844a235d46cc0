"""pcrp compare: the counts that say where the pCRP wins, the table, the report, and a small real run."""

import json
import math

import pytest

from pcrp.cli import main
from pcrp.experiments.compare import (METHODS, Fit, counts, counts_table, load, markdown, read_report, run_comparison, table_rows,
                          verdict_sentences, write_report)


def fit(key, seed, method, nmi, k, true_k=3, flag=""):
    return Fit(key, seed, method, true_k, nmi=(nmi, 0.001), vi=(1 - nmi, 0.002), k=(k, 0.01), seconds=1.0,
               sweeps=250, converged=True, settings=method, flag=flag)


FITS = [fit("sim2-300", 1000, "CRP", 0.90, 4.8), fit("sim2-300", 1000, "pCRP", 0.95, 3.3),
        fit("sim2-300", 1001, "CRP", 0.93, 4.6), fit("sim2-300", 1001, "pCRP", 0.60, 1.2, flag="COLLAPSED: ..."),
        fit("iris", 0, "CRP", 0.760, 2.07), fit("iris", 0, "pCRP", 0.759, 2.00)]


def test_counts_say_better_equal_or_worse_data_set_by_data_set():
    """sim2 seed 1000: the pCRP higher (0.05 > 0.01) and nearer 3; seed 1001: lower and farther (a collapse);
    iris: within 0.01 and nearer (2.00 against 2.07 from 3 is within 0.1: as near)."""
    c = counts(FITS)["CRP"]
    assert c["nmi"] == (1, 1, 1) and c["k"] == (1, 1, 1)
    table = {row["against"]: row for row in counts_table(FITS)}
    assert table["CRP"]["labelled data sets"] == 3 and table["CRP"]["NMI higher"] == 1
    assert (table["CRP"]["K nearer the truth"], table["CRP"]["K as near"], table["CRP"]["K farther"]) == (1, 1, 1)
    lines = verdict_sentences(FITS)
    assert lines[0].startswith("Against the CRP, over 3 labelled data sets (each data seed of a simulation counted "
                               "once): the pCRP's NMI is higher by more than 0.01 on 1, within 0.01 on 1 and lower on 1;")
    assert lines[-1] == ("The pCRP fit was flagged (collapsed below both the CRP's clusters and the true classes, or "
                         "its chains disagreed) on 1 of 3 data sets (each data seed counted once): sim2-300 seed 1001.")


def test_rows_average_over_seeds_and_never_hide_a_flag():
    rows = {(r["data"], r["method"]): r for r in table_rows(FITS)}
    p = rows[("sim2-300", "pCRP")]
    assert p["seeds"] == [1000, 1001] and p["nmi"] == pytest.approx(0.775) and p["flagged"] == 1
    assert p["nmi spread"] == pytest.approx(math.sqrt(2 * 0.175 ** 2))
    text = markdown(FITS, command="pcrp compare", seconds=60, load=(0.5, 1.0), machine="2 cores")
    assert "| sim2-300 (2 seeds) | 3 | pCRP | 0.775 ± 0.247 (0.001)" in text and "| 1 of 2 |" in text
    assert "## Flagged fits, in words" in text and "sim2-300 seed 1001, pCRP: COLLAPSED" in text


def test_the_data_sets_load_with_their_truth():
    iris, faithful, digits = load("iris"), load("old-faithful"), load("digits-pca")
    assert iris.X.shape == (150, 4) and iris.true_k == 3 and abs(iris.X.mean()) < 1e-12
    assert faithful.labels is None and faithful.true_k is None
    assert digits.X.shape == (1797, 10) and digits.true_k == 10
    a, b = load("sim1-300", 1000), load("sim1-300", 1001)
    assert a.X.shape == (300, 1) and (a.X != b.X).any()  # a fresh data set per seed


@pytest.mark.parametrize("args,message", [
    (["--data-sets", "iris,xx"], "--data-sets: unknown xx"),
    (["--methods", "pCRP,DP"], "--methods: unknown DP"),
    (["--seeds", "0"], "--seeds must be a whole number >= 1"),
    (["--seed", "-1"], "--seed must be a whole number >= 0"),
])
def test_bad_compare_options_get_one_line(args, message, capsys, tmp_path):
    assert main(["compare", *args, "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


@pytest.mark.slow
def test_a_small_comparison_runs_end_to_end_and_writes_its_report(tmp_path):
    """Iris with the CRP, the pCRP (r chosen and checked), the MFM and BGM: every fit has its metrics, the pCRP
    records its r, and the report's four files are written and read back."""
    fits = run_comparison(["iris"], n_seeds=1, methods=("CRP", "pCRP", "MFM", "BGM"), n_jobs=1)
    assert [f.method for f in fits] == ["CRP", "pCRP", "MFM", "BGM"]
    assert all(0.5 < f.nmi[0] <= 1 and f.k[0] >= 1 for f in fits)
    assert 1.0 <= fits[1].extra["r"] <= 2.0 and "cross validation" in fits[1].extra["r_text"]
    path = write_report(fits, tmp_path, command="pcrp compare --data-sets iris", seconds=1.0, load=(0.1, 0.2),
                        machine="test")
    assert path.read_text().startswith("Made by `pcrp compare --data-sets iris`")
    payload = json.loads((tmp_path / "compare.json").read_text())
    assert len(payload["fits"]) == 4 and payload["verdict"]
    report = read_report(tmp_path / "compare.json")
    assert [row["against"] for row in report["counts"]] == [m for m in METHODS if m != "pCRP"]
    assert report["flagged"] == payload["verdict"][-1] and report["provenance"].startswith("`pcrp compare")
    assert (tmp_path / "compare.csv").read_text().startswith("data,method,") and (tmp_path / "compare.html").exists()
