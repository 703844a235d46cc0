"""The exact merge path over r: critical powers, the greedy path, and the sampled K over r."""

import io
import json
import os

import numpy as np
import pytest
from scipy.special import gammaln

from pcrp.model import niw_math
from pcrp.analyses.k_over_r import k_over_r
from pcrp.model import PowerCRP, resolve_niw
from pcrp.analyses.path import (CAVEAT, Block, Merge, MergePath, PathError, critical_r, crp_start, describe_r, kept_by_range,
                       log_marginal, merge_path, merge_probabilities, merge_terms, path_table)
from pcrp.sampling.sampler import Sampler
def _points_log_m(X, niw):
    return niw_math.log_marginal(X, niw.m0, niw.kappa0, niw.nu0, niw.S0)


@pytest.mark.parametrize("d", [1, 2, 3])
def test_block_statistics_and_marginal_match_the_points(d):
    rng = np.random.default_rng(d)
    A, B = rng.normal(size=(7, d)) + 3.0, rng.normal(size=(11, d)) * 2.0
    niw = resolve_niw(np.r_[A, B])
    union = Block.of(A).union(Block.of(B))
    whole = Block.of(np.r_[A, B])
    assert union.n == 18
    np.testing.assert_allclose(union.mean, whole.mean, rtol=1e-12)
    np.testing.assert_allclose(union.scatter, whole.scatter, rtol=1e-10)
    for block, points in ((Block.of(A), A), (union, np.r_[A, B])):
        assert log_marginal(block, niw) == pytest.approx(_points_log_m(points, niw), rel=1e-10)


def _log_joint(X, labels, prior, niw):
    """The sampler's own log joint of a labelling (the kernels' code path, not pcrp.analyses.path's)."""
    return Sampler(X, prior, niw, init=np.asarray(labels), seed=0).log_joint()


@pytest.mark.parametrize("d, sizes", [(1, (5, 9)), (2, (12, 4)), (2, (1, 6))])
def test_critical_r_is_where_the_two_joints_cross(d, sizes):
    """L + r G is exactly log p(merged) - log p(apart) at every r, so the joints cross at r* = -L/G.

    Catches a wrong sign, a G built from lgamma(n + 1) or n log n, and a forgotten log alpha
    (alpha = 0.7 here, so log alpha matters)."""
    rng = np.random.default_rng(sum(sizes) + d)
    nA, nB = sizes
    X = np.r_[rng.normal(0.0, 1.0, (nA, d)), rng.normal(4.5, 1.0, (nB, d)), rng.normal(12.0, 1.0, (6, d))]
    niw = resolve_niw(X)
    apart = np.r_[np.zeros(nA, int), np.ones(nB, int), np.full(6, 2)]
    merged = np.r_[np.zeros(nA + nB, int), np.full(6, 2)]
    L, G = merge_terms(Block.of(X[:nA]), Block.of(X[nA:nA + nB]), niw, alpha=0.7)
    assert G == pytest.approx(gammaln(nA + nB) - gammaln(nA) - gammaln(nB))
    for r in (0.5, 1.0, 1.7, 3.0):
        prior = PowerCRP(0.7, r)
        diff = _log_joint(X, merged, prior, niw) - _log_joint(X, apart, prior, niw)
        assert diff == pytest.approx(L + r * G, abs=1e-8)
    r_star = critical_r(L, G)
    assert 0.1 < r_star < 3.0  # the data are chosen so that r* is a valid power
    below = PowerCRP(0.7, r_star - 0.05)
    above = PowerCRP(0.7, r_star + 0.05)
    assert _log_joint(X, merged, below, niw) < _log_joint(X, apart, below, niw)
    assert _log_joint(X, merged, above, niw) > _log_joint(X, apart, above, niw)


def test_two_single_points_do_not_depend_on_r():
    assert critical_r(2.0, 0.0) == -np.inf and critical_r(-2.0, 0.0) == np.inf
    X = np.array([[0.0], [0.1], [50.0], [50.1], [50.2]])
    niw = resolve_niw(X)
    _, G = merge_terms(Block.of(X[:1]), Block.of(X[1:2]), niw, 1.0)
    assert G == 0.0
    path = merge_path(X, [0, 1, 2, 2, 2], niw)
    first = path.merges[0]
    assert first.sizes == (1, 1) and first.G == 0.0
    assert first.as_dict()["r"] is None  # JSON has no infinity: null, L's sign tells which way


def _three_clumps_with_one_split(seed=0):
    """Three well separated 1-D clumps of 40, 30, 30 points; the start splits the first clump in two."""
    rng = np.random.default_rng(seed)
    X = np.r_[rng.normal(-10, 1, 40), rng.normal(0, 1, 30), rng.normal(10, 1, 30)][:, None]
    truth = np.r_[np.zeros(40, int), np.ones(30, int), np.full(30, 2)]
    start = truth.copy()
    start[:40][X[:40, 0] > -10] = 3  # an artificial split of the first clump
    return X, truth, start


def _brute_force_min_pair(X, labels, niw, alpha):
    """The pair with the smallest r*, recomputed from the points (niw_math, not pcrp.analyses.path's blocks)."""
    ids = np.unique(labels)
    best = None
    for i, a in enumerate(ids):
        for b in ids[i + 1:]:
            A, B = X[labels == a], X[labels == b]
            L = (_points_log_m(np.r_[A, B], niw) - _points_log_m(A, niw) - _points_log_m(B, niw)
                 - np.log(alpha))
            G = gammaln(len(A) + len(B)) - gammaln(len(A)) - gammaln(len(B))
            if best is None or -L / G < best[0]:
                best = (-L / G, (a, b), L, G)
    return best


def test_merge_path_on_a_constructed_data_set():
    X, truth, start = _three_clumps_with_one_split()
    niw = resolve_niw(X)
    path = merge_path(X, start, niw, alpha=1.0)
    assert len(path.merges) == 3
    # the artificial split is undone first, then the two closest real clumps, then the last
    first = path.merges[0]
    assert set(first.clusters) == {0, 3} and sum(first.sizes) == 40
    assert path.merges[1].clusters == (1, 2) and path.merges[1].sizes == (30, 30)
    assert path.merges[2].clusters == (4, 5) and sorted(path.merges[2].sizes) == [40, 60]
    assert first.r < 1.0 < path.merges[1].r  # even the CRP prefers the split clump whole
    # replay the path: every merge is the brute-force best pair, with the same L and G
    labels = path.partition.copy()
    for j, m in enumerate(path.merges):
        r_star, pair, L, G = _brute_force_min_pair(X, labels, niw, 1.0)
        assert pair == m.clusters
        assert (m.r, m.L, m.G) == pytest.approx((r_star, L, G), rel=1e-8)
        labels[np.isin(labels, pair)] = path.n_start + j
    # between the first and second merge the path holds exactly the true clumps
    r_mid = 0.5 * (path.merges[0].r + path.merges[1].r)
    assert path.n_clusters_at(r_mid) == 3
    assert np.array_equal(path.partition_at(r_mid), truth)
    assert path.n_clusters_at(path.merges[-1].r + 1) == 1
    text = describe_r(path, r_mid)
    assert "keeps 3 clusters (sizes 40, 30, 30)" in text and "30 and 30 points" in text


def test_path_state_is_the_best_joint_along_the_path_across_an_inversion():
    """Merge 3 (r* = 1.3) is easier than merge 2 (r* = 1.5) once merge 2 is made: the two pay off together at
    r = (3 + 2.6) / (2 + 2) = 1.4, where the one-cluster state's joint overtakes the three-cluster one's.
    The old rule (stop at the first r* > r) kept 3 clusters up to 1.5."""
    merges = [Merge(1.1, (0, 1), (5, 5), -1.1, 1.0), Merge(1.5, (2, 3), (5, 5), -3.0, 2.0),
              Merge(1.3, (4, 5), (10, 10), -2.6, 2.0)]
    path = MergePath(np.repeat(np.arange(4), 5), merges)
    assert [path.n_clusters_at(r) for r in (1.0, 1.2, 1.39, 1.41, 1.6)] == [4, 3, 3, 1, 1]
    np.testing.assert_allclose(path.effective_r(), [1.1, 1.4, 1.4])
    assert np.array_equal(path.partition_at(1.2), np.repeat([0, 0, 1, 2], 5))
    assert kept_by_range(path) == ["r < 1.1: 4 clusters", "1.1 to 1.4: 3 clusters", "r > 1.4: 1 cluster"]
    assert "happens at r = 1.40, together with 1 more merge that it makes worthwhile (leaving 1 cluster)" \
        in describe_r(path, 1.2)
    # a merge with r* <= 0 is made at every power: no range of r keeps it apart
    early = MergePath(np.repeat(np.arange(3), 5),
                      [Merge(-0.3, (0, 1), (5, 5), 0.9, 3.0), Merge(2.0, (2, 3), (5, 10), -2.0, 1.0)])
    assert kept_by_range(early) == ["r < 2: 2 clusters", "r > 2: 1 cluster"]


@pytest.mark.parametrize("seed", range(5))
def test_state_at_r_maximises_the_joint_over_the_path_and_matches_the_effective_r(seed):
    """On random paths: the state at r has the highest L_s + r G_s of all the path's states, and the number of
    merges made at r is the number of effective powers <= r."""
    rng = np.random.default_rng(seed)
    G = rng.uniform(0.5, 5.0, 7)
    L = -G * rng.uniform(0.5, 2.5, 7)
    path = MergePath(np.arange(8), [Merge(-l / g, (0, 1), (1, 1), l, g) for l, g in zip(L, G)])
    edges = path.effective_r()
    assert np.all(np.diff(edges) >= 0)
    joints = np.r_[0.0, np.cumsum(L)][None] + np.linspace(0.3, 3.0, 60)[:, None] * np.r_[0.0, np.cumsum(G)][None]
    for r, joint in zip(np.linspace(0.3, 3.0, 60), joints):
        steps = path.steps_at(r)
        assert joint[steps] == joint.max()
        assert steps == int(np.sum(edges <= r))
    # one line per range of r, read inside each range (on an edge the joints tie up to rounding)
    ranges = kept_by_range(path)
    assert ranges[-1] == "r > %.3g: 1 cluster" % edges[-1]
    assert [int(text.split(": ")[1].split()[0]) for text in ranges] == sorted(
        {8 - int(np.sum(edges <= r)) for r in np.r_[edges, edges + 1e-9, 0.01, 99.0] if r > 0}, reverse=True)


@pytest.mark.parametrize("labels, message", [
    (np.zeros(5, int), "one label per data row"),
    (np.r_[np.zeros(99), 0.5], "whole numbers"),
    (np.array(["a"] * 100), "integers"),
])
def test_bad_starting_partitions(labels, message):
    X, _, _ = _three_clumps_with_one_split()
    with pytest.raises(PathError, match=message):
        merge_path(X, labels, resolve_niw(X))


def test_path_json_contract():
    X, _, start = _three_clumps_with_one_split()
    path = merge_path(X, start, resolve_niw(X), config={"data": "clumps"})
    payload = json.loads(json.dumps(path.as_dict()))
    assert set(payload) == {"partition", "merges", "config", "caveat"}
    assert "single partitions" in payload["caveat"] and "pCRP's alone" in payload["caveat"]
    assert payload["partition"] == path.partition.tolist() and len(payload["partition"]) == 100
    assert [set(m) for m in payload["merges"]] == [{"r", "clusters", "sizes", "L", "G"}] * 3
    assert payload["config"]["data"] == "clumps" and payload["config"]["alpha"] == 1.0


def test_sampled_k_agrees_with_the_exact_path_on_two_blobs():
    """Two blobs of 30: below the pair's r* the merged partition has log odds -(r* - r) G against the split
    (G = lgamma(60) - 2 lgamma(30), about 33), so 0.4 below r* the chain keeps the 2 blobs and 0.4 above it
    merges them (e^-13 either way; 300 sweeps with split-merge moves are plenty for 60 points in 1-D: the chains
    merge by sweep 3). Above r* the chain still visits K = 2 in 1.5-6.5% of its kept sweeps (12 seeds), each time
    a point or two on a table of their own, never the blobs apart, hence P(K = 1) > 0.85 there: a chain that
    kept the blobs apart for even 30 of its 200 kept sweeps fails."""
    rng = np.random.default_rng(5)
    X = np.r_[rng.normal(-2.5, 1, 30), rng.normal(2.5, 1, 30)][:, None]
    niw = resolve_niw(X)
    path = merge_path(X, np.repeat([0, 1], 30), niw)
    r_star = path.merges[0].r
    assert 1.0 < r_star < 4.0
    result = k_over_r(X, niw, [r_star - 0.4, r_star + 0.4], iters=300, burn_in=100, seed=1, n_jobs=1)
    np.testing.assert_allclose(result.p_k.sum(axis=1), 1.0)
    np.testing.assert_allclose(result.mean_k, result.p_k @ result.k_values)
    p1 = result.p_k[:, list(result.k_values).index(1)] if 1 in result.k_values else np.zeros(2)
    assert p1[0] < 0.05 and p1[1] > 0.85
    assert result.table()[0]["r"] == pytest.approx(r_star - 0.4)


def test_k_over_r_rejects_a_bad_grid():
    X = np.random.default_rng(0).normal(size=(20, 1))
    with pytest.raises(PathError, match="positive values of r"):
        k_over_r(X, resolve_niw(X), [1.2, -1.0])


def test_cli_path_from_labels_writes_the_contract_and_prints_the_table(tmp_path, capsys):
    from pcrp import cli, data

    X, _, start = _three_clumps_with_one_split()
    csv = tmp_path / "clumps.csv"
    csv.write_text("x\n" + "\n".join(f"{v:.6f}" for v in X[:, 0]))
    labels = tmp_path / "start.txt"
    labels.write_text("\n".join(str(z + 10) for z in start))  # any integer codes
    out = tmp_path / "path.json"
    code = cli.main(["path", str(csv), "--no-standardize", "--alpha", "0.5", "--from-labels", str(labels),
                     "--out", str(out)])
    assert code == 0
    payload = json.loads(out.read_text())
    assert set(payload) == {"partition", "merges", "config", "caveat"} and payload["caveat"] == CAVEAT
    assert payload["partition"] == (start).tolist()  # codes 10..13 become 0..3 in order of value
    ds = data.load(str(csv), standardize_data=False)
    expected = merge_path(ds.X, start, resolve_niw(ds.X), alpha=0.5)
    assert [m["clusters"] for m in payload["merges"]] == [list(m.clusters) for m in expected.merges]
    assert [m["r"] for m in payload["merges"]] == pytest.approx([m.r for m in expected.merges])
    config = payload["config"]
    assert config["alpha"] == 0.5 and config["n"] == 100 and config["standardize"] is False
    assert config["start"] == f"labels from {labels}" and config["kappa0"] == 0.25
    printed = capsys.readouterr().out
    sizes = ", ".join(str(c) for c in np.bincount(start))
    assert f"starting partition: 4 clusters (sizes {sizes})" in printed
    assert "#1 + #2 -> #5" in printed and "clusters the pCRP keeps along the path:" in printed


@pytest.mark.parametrize("content, message", [
    (None, "cannot read labels from"),
    ("1 2 x", "every label must be a whole number (found 'x')"),
    ("1 2 3", "holds 3 labels but the data have 272 rows"),
])
def test_cli_path_bad_label_files(tmp_path, capsys, content, message):
    from pcrp import cli

    labels = tmp_path / "labels.txt"
    if content is not None:
        labels.write_text(content)
    code = cli.main(["path", "old-faithful", "--from-labels", str(labels), "--out", str(tmp_path / "p.json")])
    err = capsys.readouterr().err
    assert code == 2 and message in err and "Traceback" not in err and len(err.strip().splitlines()) == 1


def _label_file(tmp_path, kind):
    """A --from-labels file of issue 18's kinds (Old Faithful has 272 rows)."""
    path = tmp_path / ("labels.npz" if kind.startswith("npz") or kind == "not a zip" else "labels.txt")
    if kind == "not a zip":
        path.write_text("0\n1\n")
    elif kind == "npz cut short":
        buffer = io.BytesIO()
        np.savez_compressed(buffer, point_labels=np.zeros(272, dtype=np.int64))
        path.write_bytes(buffer.getvalue()[:150])
    elif kind == "npz of object labels":
        np.savez(path, point_labels=np.array([[0]] * 272, dtype=object))
    elif kind == "npz of the wrong length":
        np.savez(path, point_labels=np.zeros(271, dtype=np.int64))
    elif kind == "npz of text":
        np.savez(path, point_labels=np.array(["a"] * 272))
    elif kind == "2^70":
        path.write_text("\n".join(["0"] * 271 + [str(2**70)]))
    elif kind == "5,000 digits":
        path.write_text("\n".join(["0"] * 271 + ["9" * 5000]))
    elif kind == "unicode digits":
        path.write_text("\n".join(["0"] * 271 + ["\u0661"]))
    elif kind == "too large":
        path.write_text("0\n" * 272 + " " * (32 * 272 + 4096))
    elif kind == "not UTF-8":
        path.write_bytes(b"\xff\xfe0\x001\x00")
    elif kind == "FIFO":
        os.mkfifo(path)
    else:
        return kind  # a path as it is: /dev/zero
    return str(path)


@pytest.mark.parametrize("kind, message", [
    ("not a zip", r"labels\.npz is not a RESULT\.npz of pcrp run: it is not a complete zip archive"),
    ("npz cut short", r"labels\.npz is not a RESULT\.npz of pcrp run: it is not a complete zip archive"),
    ("npz of object labels", r"its array point_labels holds Python objects, which pcrp never writes"),
    ("npz of the wrong length", r"labels\.npz holds 271 labels \(point_labels of shape \(271,\)\) but the data have "
                                r"272 rows: give one label per row\."),
    ("npz of text", r"point_labels must be whole numbers \(it holds <U1\)"),
    ("2^70", r"labels\.txt: the label 1180591620717411303424 is too large: labels are cluster codes of at most 18 "
             r"digits\."),
    ("5,000 digits", r"labels\.txt: the label 999999999999999999999999\.\.\. is too large"),
    ("unicode digits", r"every label must be a whole number \(found '\u0661'\)"),
    ("too large", r"labels\.txt holds more than 12,800 bytes, the most a text file of 272 labels may take \(32 bytes "
                  r"a label and 4,096 more\): give one label per data row\."),
    ("not UTF-8", r"labels\.txt is not a text file of labels \(it is not UTF-8 text\): give 272 whole numbers"),
    ("/dev/zero", r"/dev/zero is a character device, not a regular file: a file of labels is read only from a "
                  r"regular file \(a pipe or a device can block or never end\)\."),
    ("FIFO", r"labels\.txt is a named pipe \(FIFO\), not a regular file"),
])
def test_cli_path_refuses_each_bad_label_file_in_one_line(tmp_path, capsys, kind, message):
    """Issue 18: a fake .npz gave a BadZipFile traceback, a label of 2^70 an OverflowError, and /dev/zero was read
    until memory ran out; each now gets one line, and a file is read only up to a bound set by the row count."""
    import re

    from pcrp import cli

    source = _label_file(tmp_path, kind)
    code = cli.main(["path", "old-faithful", "--from-labels", source, "--out", str(tmp_path / "p.json")])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("pcrp: error: ") and err.count("\n") == 1, err
    assert re.search(message, err), err
    assert not (tmp_path / "p.json").exists()


def test_read_labels_reads_a_result_npz_and_text_within_the_bound(tmp_path):
    from pcrp.analyses.path import LABEL_TEXT_BYTES, LABEL_TEXT_SLACK, read_labels

    np.savez(tmp_path / "r.npz", psm=np.eye(3), point_labels=np.array([2, 0, 2]))
    assert read_labels(tmp_path / "r.npz", 3).tolist() == [2, 0, 2]
    text = tmp_path / "l.txt"
    content = "\ufeff1, -2\n" + "3" * 18 + "\n"  # a BOM, signs, 18 digits: 28 bytes
    text.write_text(content + " " * (LABEL_TEXT_BYTES * 3 + LABEL_TEXT_SLACK - 28))
    assert text.stat().st_size == LABEL_TEXT_BYTES * 3 + LABEL_TEXT_SLACK  # exactly at the bound
    assert read_labels(text, 3).tolist() == [1, -2, int("3" * 18)]
    text.write_text(content + " " * (LABEL_TEXT_BYTES * 3 + LABEL_TEXT_SLACK - 27))
    with pytest.raises(PathError, match="holds more than 4,192 bytes"):
        read_labels(text, 3)


def test_default_start_is_the_crp_point_estimate():
    """On three well separated clumps the CRP point estimate is the three clumps, numbered by size."""
    X, _, _ = _three_clumps_with_one_split()
    start = crp_start(X, resolve_niw(X), n_chains=2, iters=300, burn_in=100, thin=5, seed=3, n_jobs=1)
    assert np.bincount(start.labels).tolist() == [40, 30, 30]
    assert np.array_equal(start.labels[:40], np.zeros(40))  # the largest cluster is 0
    assert start.config["start"] == "point estimate (expected VI loss) of 2 CRP chains"
    assert start.config["crp_run"]["iters"] == 300
    path = merge_path(X, start.labels, resolve_niw(X), config=start.config)
    assert [sorted(m.sizes) for m in path.merges] == [[30, 30], [40, 60]]


def test_cli_path_default_start(tmp_path, capsys):
    from pcrp import cli

    out = tmp_path / "path.json"
    code = cli.main(["path", "old-faithful", "--chains", "2", "--iters", "200", "--burn-in", "100", "--thin", "5",
                     "--out", str(out)])
    assert code == 0
    payload = json.loads(out.read_text())
    K = max(payload["partition"]) + 1
    assert len(payload["partition"]) == 272 and len(payload["merges"]) == K - 1
    assert payload["config"]["start"] == "point estimate (expected VI loss) of 2 CRP chains"
    # Old Faithful's two eruption types are the last pair merged, at r* about 1.8 (pcrp path, 4 chains)
    last = payload["merges"][-1]
    assert sorted(last["sizes"]) == [97, 175] and 1.6 < last["r"] < 2.0
    assert "starting partition" in capsys.readouterr().out


def test_choose_r_figure_draws_the_path_on_the_shared_r_axis():
    """The dendrogram's vertical links sit at the merges' r (clipped to the axis), its leaves are the starting
    clusters labelled by size; a path with an inversion and a merge below the axis still draws."""
    from pcrp.analyses.cv import BlowUp, CVResult
    from pcrp.plots import choose_r_figure

    merges = [Merge(-1 / 3, (0, 3), (20, 1), 1.0, 3.0), Merge(1.3, (1, 2), (30, 30), -1.3, 1.0),
              Merge(1.2, (4, 5), (21, 60), -1.2, 1.0)]  # the last two pay off together at r = 2.5 / 2
    path = MergePath(np.r_[np.zeros(20, int), np.ones(30, int), np.full(30, 2), [3]], merges)
    grid = np.array([1.0, 1.1, 1.2, 1.3, 1.4])
    loss = np.tile([10.0, 10.0, 10.2, 20.0, 21.0], (2, 1))
    cv = CVResult(grid, loss, -loss, np.ones_like(loss), BlowUp(3, 2, 1.0, "jump"))
    fig = choose_r_figure(cv, None, path, 1.2)
    link = next(t for t in fig.data if t.xaxis == "x3" and t.mode == "lines")
    xs = {round(x, 6) for x in link.x if x is not None}
    left, right = fig.layout.xaxis3.range
    assert {round(left, 6), 1.25} <= xs  # leaves and the r* < 0 merge at the left edge; both later merges at 1.25
    assert max(xs) == pytest.approx(1.25)
    ticks = fig.layout.yaxis3.ticktext
    assert sorted(ticks) == sorted(["20 pts", "30 pts", "30 pts", "1 pt"])
    kept = next(t for t in fig.data if t.name == "clusters kept, exact path")
    assert kept.y[0] == 3 and kept.y[-1] == 1  # the r* < 0 merge is made at every r


def test_the_table_and_describe_r_say_r_star_compares_single_partitions():
    X, _, start = _three_clumps_with_one_split()
    path = merge_path(X, start, resolve_niw(X))
    assert path_table(path).splitlines()[-1] == f"note: {CAVEAT}"
    assert "compare single partitions, not posterior mass" in describe_r(path, 1.2)


def test_merge_probabilities_count_draws_holding_each_merge_together():
    X, _, start = _three_clumps_with_one_split()
    path = merge_path(X, start, resolve_niw(X))
    members = [path.members_map(j) for j in range(len(path.merges))]
    sets = [(np.isin(start, members[j][m.clusters[0]]), np.isin(start, members[j][m.clusters[1]]))
            for j, m in enumerate(path.merges)]
    rng = np.random.default_rng(0)
    draws = []
    for s in range(40):
        z = start.copy() + 7  # the starting clusters apart (codes need not start at 0)
        if s % 4 == 0:  # a quarter of the draws hold the first merge's pair together, with a few strays
            a, b = sets[0]
            z[b] = z[np.flatnonzero(a)[0]]
            z[rng.choice(np.flatnonzero(b), 2, replace=False)] = 99
        draws.append(z)
    p = merge_probabilities(path, np.array(draws)[None])
    assert p.p_merged[0] == pytest.approx(0.25) and p.draws == 40 and np.isnan(p.r)
    # later merges join clusters that hold several starting clusters; in these draws they are never together
    assert np.all(p.p_merged[1:] == 0.0)
    payload = json.loads(json.dumps(path.as_dict(sampler=p)))
    assert payload["merges"][0]["sampler_p_merged"] == 0.25 and payload["sampler"]["draws"] == 40
    assert "P merged" in path_table(path, p)
    with pytest.raises(PathError, match="same data"):
        merge_probabilities(path, np.zeros((3, 7), int))


def test_merge_probability_from_the_sampler_on_two_blobs():
    """As in the K-over-r test: 0.4 below the pair's r* the chains keep the blobs apart (P merged < 0.05), 0.4
    above they hold them together (> 0.95); the log odds are -+0.4 G, about e^-13."""
    from pcrp.runs.chains import run_chains
    from pcrp.runs.run_spec import make_run_spec

    rng = np.random.default_rng(5)
    X = np.r_[rng.normal(-2.5, 1, 30), rng.normal(2.5, 1, 30)][:, None]
    niw = resolve_niw(X)
    path = merge_path(X, np.repeat([0, 1], 30), niw)
    r_star = path.merges[0].r
    below, above = (merge_probabilities(path, run_chains(X, make_run_spec(
                        X, prior=PowerCRP(1.0, r), niw=niw, n_chains=2, iters=300, burn_in=100, thin=5, seed=1,
                        n_jobs=1)))
                    for r in (r_star - 0.4, r_star + 0.4))
    assert below.r == pytest.approx(r_star - 0.4) and below.draws == 80
    assert below.p_merged[0] < 0.05 and above.p_merged[0] > 0.95


def test_cli_path_with_a_run_shows_the_samplers_merge_probability(tmp_path, capsys):
    """--with-run: each merge carries P(merged) from the run's draws, at the run's r, and the JSON says r."""
    from pcrp import cli

    run = tmp_path / "run.npz"
    assert cli.main(["run", "old-faithful", "--r", "3", "--iters", "60", "--burn-in", "20", "--thin", "4",
                     "--chains", "1", "--out", str(run)]) == 0
    out = tmp_path / "path.json"
    assert cli.main(["path", "old-faithful", "--chains", "1", "--iters", "60", "--burn-in", "20",
                     "--with-run", str(run), "--out", str(out)]) == 0
    payload = json.loads(out.read_text())
    assert "caveat" in payload and all(0.0 <= m["sampler_p_merged"] <= 1.0 for m in payload["merges"])
    assert payload["sampler"]["r"] == 3.0
    assert "P merged" in capsys.readouterr().out
    # at r = 3, far above Old Faithful's r* of about 1.8, the sampler keeps the two eruption types merged
    assert payload["merges"][-1]["sampler_p_merged"] > 0.9


def test_path_settings_are_checked_by_their_declarations():
    """merge_path's and crp_start's alpha is the registry's ALPHA, checked by PATH_PARAMS (a PathError), and their
    defaults are PATH_PARAMS'."""
    from pcrp.model import PRIORS
    from pcrp.analyses.path import PATH_PARAMS

    X, start, _ = _three_clumps_with_one_split()
    with pytest.raises(PathError, match=r"alpha must be a finite number > 0 \(got 0\)"):
        merge_path(X, start, resolve_niw(X), alpha=0)
    assert PATH_PARAMS["alpha"] is PRIORS["crp"].param("alpha")
    assert merge_path(X, start, resolve_niw(X)).config["alpha"] == PATH_PARAMS["alpha"].default
