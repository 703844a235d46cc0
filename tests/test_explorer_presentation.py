"""The Explorer's rows and what they show: priors from the registry, matched colours, tiny clusters,
projections of d > 2 data, ID-like columns (no browser; see test_browser_presentation.py for the page)."""

import numpy as np
import pytest

from pcrp.app import explorer_settings as es
from pcrp.model import PRIORS, make_prior


def test_each_row_has_the_registry_priors_with_the_default_pair_crp_over_pcrp():
    values = es.defaults()
    assert es.BY_NAME["prior1"].choices == es.BY_NAME["prior2"].choices == tuple(PRIORS)
    assert (values["prior1"], values["prior2"]) == ("crp", "pcrp")
    assert es.row_params(values, 1) == {"alpha": 1.0}
    assert es.row_params(values, 2) == {"alpha": 1.0, "r": es.data_r(values)}  # the default data set's own r
    assert es.data_r(values) != PRIORS["pcrp"].param("r").default  # (else this could not tell them apart)
    assert es.to_query(values) == {}
    default = PRIORS["pcrp"].param("r").default
    assert es.to_query({**values, "r2": default}) == {"r2": f"{default:g}"}  # a visitor's r is kept


@pytest.mark.parametrize("prior", list(PRIORS))
def test_widget_bounds_and_defaults_are_the_registrys_and_the_prior_accepts_them(prior):
    for w in es.prior_widgets(prior):
        p = PRIORS[prior].param(w.name)
        assert w.default == pytest.approx(p.default) or w.low == w.default or w.high == w.default
        assert w.low <= w.default <= w.high
        for value in (w.low, w.default, w.high):  # every value a widget can hold is one the prior accepts
            make_prior(prior, **{**PRIORS[prior].defaults(), w.name: value})


@pytest.mark.parametrize("prior", list(PRIORS))
def test_an_address_with_a_rows_prior_gives_that_priors_defaults_and_round_trips(prior):
    values, problems = es.from_query({"prior1": prior})
    assert not problems
    full = {**es.defaults(), **values}
    assert es.row_params(full, 1) == {w.name: es.param_default(full, 1, w.name) for w in es.prior_widgets(prior)}
    changed = {**full, es.row_key(es.prior_widgets(prior)[-1].name, 1): es.prior_widgets(prior)[-1].low}
    query = es.to_query(changed)
    again = {**es.defaults(), **es.from_query(query)[0]}
    assert es.row_params(again, 1) == es.row_params(changed, 1) and again["prior1"] == prior
    built = es.check_rows(again)
    assert built[1].name == prior and built[2].name == "pcrp"


def test_addresses_of_older_versions_still_set_the_rows():
    values, problems = es.from_query({"r": "1.3", "crp_alpha": "2", "pcrp_alpha": "0.5"})
    assert not problems and values == {"r2": 1.3, "alpha1": 2.0, "alpha2": 0.5}
    assert es.from_query({"r": "1.3", "r2": "1.6"})[0] == {"r2": 1.6}  # the new key wins


def test_a_value_outside_the_rows_prior_is_refused_with_its_bounds():
    values, problems = es.from_query({"prior1": "py", "sigma1": "1.5", "prior2": "sfm", "k_max2": "0"})
    assert values["sigma1"] == PRIORS["py"].param("sigma").default
    assert any("sigma1 must be below 1 (got 1.5): discount sigma of the Pitman-Yor in row 1, in [0, 1)" in p
               for p in problems)
    assert any("k_max2 must be a whole number >= 1 (got 0): components k_max of the Sparse finite mixture in row 2"
               in p for p in problems)


def test_a_demo_link_carries_the_rows_priors_and_their_parameters():
    values = {**es.defaults(), "prior1": "mfm", "gamma1": 2.0, "lam1": 1.0, "prior2": "pcrp", "r2": 1.3}
    link = es.demo_link("http://host:8501/?x=1", values)
    assert link == "http://host:8501/?prior1=mfm&gamma1=2&r2=1.3"
    parsed = {**es.defaults(), **es.from_query(dict(p.split("=") for p in link.split("?")[1].split("&")))[0]}
    assert es.row_params(parsed, 1) == {"gamma": 2.0, "lam": 1.0}


# ----------------------------------------------------------------------------- colours and tiny clusters
from pcrp.app import live_view  # noqa: E402
from pcrp.data import simulation  # noqa: E402
from pcrp.model import resolve_niw  # noqa: E402
from pcrp.sampling.sampler import Sampler

from explorer_support import as_browser, browser_key, current_run, explorer_state  # noqa: E402


def majority(values, mask):
    found, counts = np.unique(values[mask], return_counts=True)
    return found[np.argmax(counts)]


def chain_recovering_classes(ds, prior, first_seed, tries=10):
    """The labels after 300 sweeps of the first chain (seeds first_seed, first_seed + 1, ...) in which every true
    class has one cluster holding at least 90% of it, distinct for distinct classes. The test below is about
    colours, not about how often a chain splits a class: a CRP chain here does in about 1 of 20 seeds (it
    over-clusters), so the test takes a chain that recovered the classes instead of one seed's luck."""
    for seed in range(first_seed, first_seed + tries):
        sampler = Sampler(ds.X, prior, resolve_niw(ds.X), init="random:10", seed=seed)
        sampler.step(300)
        homes = []
        for k in np.unique(ds.labels):
            values, counts = np.unique(sampler.labels[ds.labels == k], return_counts=True)
            homes.append(values[counts.argmax()] if counts.max() >= 0.9 * counts.sum() else None)
        if None not in homes and len(set(homes)) == len(homes):
            return sampler.labels
    raise AssertionError(f"no chain of {tries} recovered Sim 2's classes")


def test_the_same_true_cluster_has_the_same_colour_in_both_rows_on_sim2():
    """CRP and pCRP on Sim 2 label their clusters arbitrarily (the sampler's ids differ between the rows);
    matched to the true classes, each class's points get one colour, the same in both rows, and distinct
    classes distinct colours."""
    ds = simulation("sim2", n=300, seed=0)
    reference = live_view.reference_colours(ds.labels)
    colours = {}
    for name, prior in (("crp", make_prior("crp")), ("pcrp", make_prior("pcrp"))):
        labels = chain_recovering_classes(ds, prior, first_seed=5 if name == "crp" else 11)
        colours[name] = live_view.matched_colours(labels, reference)
    classes = np.unique(ds.labels)
    per_row = {name: [majority(c, ds.labels == k) for k in classes] for name, c in colours.items()}
    assert per_row["crp"] == per_row["pcrp"] and len(set(per_row["crp"])) == classes.size
    for k in classes:  # nearly all of a class's points carry its colour (Sim 2's classes barely overlap)
        for c in colours.values():
            assert np.mean(c[ds.labels == k] == per_row["crp"][list(classes).index(k)]) > 0.9


def test_without_true_labels_the_bottom_row_takes_the_top_rows_colours_for_the_same_clusters():
    rng = np.random.default_rng(0)
    top = np.repeat([0, 1, 2], [50, 30, 20])
    bottom = np.array([7, 3, 5])[top]  # the same partition under other ids
    bottom[:1] = 9  # ... plus one tiny cluster: 1 point, under 2% of 100
    top_colours = live_view.matched_colours(top, live_view.reference_colours(top))
    bottom_colours = live_view.matched_colours(bottom, top_colours)
    np.testing.assert_array_equal(bottom_colours[1:], top_colours[1:])
    assert bottom_colours[0] == live_view.TINY
    assert live_view.counts_text(bottom) == "3 clusters + 1 tiny" and live_view.counts_text(top) == "3 clusters"
    split = top.copy()
    split[rng.permutation(np.flatnonzero(top == 0))[:25]] = 4  # the largest cluster split in two halves
    colours = live_view.matched_colours(split, top_colours)
    assert len(np.unique(colours)) == 4 and set(np.unique(colours)) > set(np.unique(top_colours))


def test_tiny_means_under_two_percent_of_the_points():
    labels = np.repeat([0, 1, 2, 3], [500, 480, 11, 9])  # 2% of 1000 = 20 points
    assert live_view.cluster_counts(labels) == (2, 2)
    assert live_view.cluster_counts(np.repeat([0, 1], [980, 20])) == (2, 0)


def test_a_merge_of_true_classes_is_found_and_named_by_class():
    truth = np.repeat([0, 1, 2], 40)
    assert live_view.merged_true_clusters(truth, truth * 3) == []
    merged = np.where(truth == 2, 1, truth)
    assert live_view.merged_true_clusters(truth, merged) == [(1, 2)]


# ----------------------------------------------------------------------------- any dimension, ID-like columns
from pcrp.data.projection import id_like_columns, id_reason, pca_projection  # noqa: E402


def test_pca_projection_of_standardised_data_labels_its_axes_with_explained_variance():
    rng = np.random.default_rng(1)
    z = rng.normal(size=(400, 1))
    X = np.hstack([z * 1000 + rng.normal(size=(400, 1)), z + 0.01 * rng.normal(size=(400, 1)),
                   rng.normal(size=(400, 3))])  # two columns on unlike scales sharing one factor
    proj = pca_projection(X)
    assert proj.coords.shape == (400, 2)
    # standardised: the shared factor is 2 of the 5 unit variances, about 40%, whatever the columns' units
    assert 0.36 < proj.explained[0] < 0.46 and proj.explained[1] < proj.explained[0]
    assert proj.titles[0] == f"PC1 ({proj.explained[0]:.0%} of variance)"
    assert abs(np.corrcoef(proj.coords[:, 0], z[:, 0])[0, 1]) > 0.99
    np.testing.assert_allclose(pca_projection(X).coords, proj.coords)  # fixed signs: the same picture again


def test_id_like_columns_are_distinct_whole_numbers_in_order_or_under_an_id_name():
    rng = np.random.default_rng(2)
    shuffled = rng.permutation(50).astype(float)
    assert id_reason("customer_id", shuffled) and id_reason("rowIndex", shuffled) and id_reason("n", np.arange(50.))
    assert id_reason("score", shuffled) is None  # distinct integers, but neither in order nor named as an id
    assert id_reason("id", np.r_[np.arange(49.), 3.0]) is None  # a repeated value: not an identifier
    assert id_reason("id", np.arange(50.) + 0.5) is None
    assert list(id_like_columns({"customer_id": shuffled, "x": rng.normal(size=50)})) == ["customer_id"]


def csv_bytes(columns):
    names = list(columns)
    rows = zip(*columns.values())
    return (",".join(names) + "\n" + "\n".join(",".join(f"{v:g}" for v in row) for row in rows)).encode()


@pytest.mark.slow
def test_a_five_column_csv_shows_a_labelled_projection_and_an_id_column_is_left_out():
    from streamlit.testing.v1 import AppTest

    rng = np.random.default_rng(3)
    centres = rng.normal(scale=4, size=(3, 5))
    X = np.vstack([c + rng.normal(size=(40, 5)) for c in centres])
    columns = {"customer_id": rng.permutation(120) + 1000.0, **{f"f{j}": X[:, j] for j in range(5)}}
    at = AppTest.from_file("../app_pages/explorer.py", default_timeout=120)
    at.query_params.update({"data": "csv", "sweeps": "60", "burn_in": "10", "pace": "full speed"})
    at.run()
    at.file_uploader(key="upload").set_value(("shop.csv", csv_bytes(columns), "text/csv")).run()
    chosen = [m for m in at.multiselect if m.label == "Columns to cluster"][0]
    assert chosen.value == [f"f{j}" for j in range(5)]  # the id column is not clustered by default ...
    assert any("customer\\_id" in c.value and "identifier" in c.value for c in at.caption)  # ... and says so
    at.button(key="use_csv").click().run()
    at.button(key="start").click().run()
    run = current_run(at)
    run.join(60)
    at.run()
    assert not at.exception, at.exception
    assert run.dataset.dim == 5
    spec = [json_spec(c) for c in at.get("vega_lite_chart") if '"name": "tiny"' in c.proto.spec.replace('":"', '": "')][0]
    titles = (spec["layer"][0]["encoding"]["x"]["title"], spec["layer"][0]["encoding"]["y"]["title"])
    assert titles[0].startswith("PC1 (") and titles[1].startswith("PC2 (") and "% of variance)" in titles[1]


def json_spec(element):
    import json

    return json.loads(element.proto.spec)


@pytest.mark.slow
def test_a_reload_keeps_the_owners_uploaded_data_and_another_browser_never_sees_it():
    """The owner's reload (a new session sending the same browser key) finds its run and, with it, the CSV it
    uploaded: no 'Changed since it started: data'. Another browser opening the same address gets neither."""
    from streamlit.testing.v1 import AppTest

    rng = np.random.default_rng(4)
    body = csv_bytes({"a": np.r_[rng.normal(-3, 1, 40), rng.normal(3, 1, 40)], "b": rng.normal(size=80)})
    at = AppTest.from_file("../app_pages/explorer.py", default_timeout=120)
    at.query_params.update({"data": "csv", "sweeps": "60", "burn_in": "10", "pace": "full speed"})
    at.run()
    at.file_uploader(key="upload").set_value(("private.csv", body, "text/csv")).run()
    at.button(key="use_csv").click().run()
    at.button(key="start").click().run()
    run = current_run(at)
    run.join(60)
    at.run()

    def session(browser_key):
        again = AppTest.from_file("../app_pages/explorer.py", default_timeout=120)
        again.query_params.update(dict(at.query_params))
        if browser_key:
            as_browser(again, browser_key)
        again.run()
        assert not again.exception, again.exception
        return again

    owner = session(browser_key(at))
    assert current_run(owner) is run and explorer_state(owner).dataset is run.dataset
    assert not any("Changed since it started" in w.value for w in owner.warning)
    stranger = session(None)
    assert current_run(stranger) is None and explorer_state(stranger).dataset is None
    assert not any("private" in m.value for m in list(stranger.caption) + list(stranger.markdown))


def test_the_r_hat_badge_says_chains_disagree_only_where_their_means_do():
    """A pCRP on Old Faithful with mean K 2.02 read "R-hat 1.017: chains disagree". The badge now says: green "chains
    agree" where the library does (R-hat at most 1.01), "(above 1.01: more sweeps would settle it)" where R-hat is
    above 1.01 but at most 1.1 and the chains' means lie within 2 combined MCSEs, and "chains disagree" with the
    chains' mean K (or "on the log joint") otherwise; never green above 1.01."""
    from app_pages.explorer_parts.live_panel import rhat_text
    from pcrp.app.live_view import ChainVerdict

    def verdicts(k, log_joint, settled=False):
        return {"K": (ChainVerdict(*k), settled), "log joint": (ChainVerdict(*log_joint), False)}

    agree = ("agree", 1.004, (2.02, 2.01), (float("nan"),) * 2)
    unsettled_k = ("unsettled", 1.017, (2.02, 2.01), (0.01, 0.01))
    assert rhat_text(verdicts(agree, ("agree", 1.002))) == ":green[R-hat 1.004: chains agree]"
    assert rhat_text(verdicts(unsettled_k, ("agree", 1.002))) == \
        ":orange[R-hat 1.017 (above 1.01: more sweeps would settle it)]"
    assert rhat_text(verdicts(("disagree", 1.3, (2.01, 3.05)), ("agree", 1.002))) == \
        ":orange[R-hat 1.300: chains disagree, mean K 2.01 vs 3.05]"
    assert rhat_text(verdicts(("disagree", 1.3, (2.0, 3.0, 2.5)), ("agree", 1.002))) == \
        ":orange[R-hat 1.300: chains disagree, mean K 2.00 to 3.00]"
    assert rhat_text(verdicts(agree, ("disagree", 1.2))) == ":orange[R-hat 1.200: chains disagree on the log joint]"
    # a K that every chain holds at one value has a meaningless R-hat: the log joint's is shown
    assert rhat_text(verdicts(("agree", 1.1, (2.0, 2.0)), ("agree", 1.003), settled=True)) == \
        ":green[R-hat 1.003: chains agree]"
    assert rhat_text(None) == "R-hat after a few kept draws"


def test_the_posterior_summary_words_r_hat_as_the_badge_does():
    """The Summarise panel's line for R-hat above 1.01: the library's "the chains disagree" where the chains' means
    are apart (pcrp.summaries.summary.rhat_warnings), a line naming the means and their MCSEs where they agree
    within them, none where R-hat is at most 1.01."""
    from app_pages.explorer_parts.details import rhat_lines

    def diag(rhat, means, mcses):
        return {"rhat": rhat, "settled": False, "agree": rhat <= 1.01, "mean": float(np.mean(means)),
                "per_chain": [{"mean": m, "mcse": e} for m, e in zip(means, mcses)]}

    fine = diag(1.003, [1580.1, 1580.3], [0.4, 0.4])
    near = rhat_lines({"K": diag(1.017, [2.02, 2.01], [0.01, 0.01]), "log_joint": fine})
    assert len(near) == 1 and near[0].startswith("R-hat on K is 1.0170, above 1.01 (but not above 1.1)")
    assert "2.020 ± 0.010, 2.010 ± 0.010" in near[0] and "disagree" not in near[0]
    apart = rhat_lines({"K": diag(1.017, [2.02, 2.31], [0.01, 0.01]), "log_joint": fine})
    assert len(apart) == 1 and "the chains disagree (chain means 2.02, 2.31)" in apart[0]
    assert rhat_lines({"K": diag(1.004, [2.02, 2.01], [0.01, 0.01]), "log_joint": fine}) == []
