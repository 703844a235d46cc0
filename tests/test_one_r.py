"""One r per data set, from one source: the shipped cross-validated r (pcrp.analyses.cv.builtin_r) is what the
Explorer's settings, their defaults and demo links, and Rich get richer start from."""

import pytest

from pcrp.analyses.cv import builtin_r
from pcrp.app import explorer_settings as es
from pcrp.model import DEFAULT_R, PRIORS
from pcrp.teaching.one_customer import CHOICE_DATA, RESTAURANT_DATA, data_r, with_data_r


@pytest.mark.parametrize("name", ["old-faithful", "mnist", "sim1", "sim2"])
def test_the_explorers_r_is_the_shipped_one_and_a_csv_gets_the_default(name):
    values = {**es.defaults(), "data": name}
    assert es.data_r(values) == builtin_r(name)[0]
    assert es.param_default(values, 2, "r") == builtin_r(name)[0]
    assert es.param_default(values, 2, "alpha") == PRIORS["pcrp"].param("alpha").default
    assert es.data_r({**values, "data": "csv"}) == DEFAULT_R


def test_a_demo_link_leaves_out_the_data_sets_r_and_keeps_any_other():
    values = es.defaults()  # Old Faithful, whose shipped r is not the registry's default
    own, registry_default = builtin_r("old-faithful")[0], PRIORS["pcrp"].param("r").default
    assert own != registry_default and values["r2"] == own
    assert es.demo_link("http://h/", values) == "http://h/"
    link = es.demo_link("http://h/", {**values, "r2": registry_default})  # a visitor's r, even the registry's
    assert link == f"http://h/?r2={registry_default:g}"
    parsed, problems = es.from_query({"r2": f"{registry_default:g}"})
    assert not problems and parsed == {"r2": registry_default}
    sim2 = {**values, "data": "sim2", "r2": builtin_r("sim2")[0]}
    assert es.to_query(sim2) == {"data": "sim2"}
    assert es.to_query({**sim2, "r2": own}) == {"data": "sim2", "r2": f"{own:g}"}
    # a row that becomes a pCRP row from an address starts at the data set's r
    assert es.from_query({"data": "sim2", "prior1": "pcrp"})[0]["r1"] == builtin_r("sim2")[0]


def test_rich_get_richer_seats_at_old_faithfuls_r_and_shows_each_data_set_at_its_own():
    from pcrp.model import make_prior

    assert RESTAURANT_DATA == "old-faithful" and data_r(RESTAURANT_DATA) == builtin_r("old-faithful")
    for name in CHOICE_DATA.values():
        crp, pcrp = with_data_r([make_prior("crp"), make_prior("pcrp", r=1.05)], name)
        assert crp == make_prior("crp") and pcrp == make_prior("pcrp", r=builtin_r(name)[0])


def test_the_explorers_address_keeps_a_visitors_r_equal_to_the_registrys_default():
    """On Old Faithful the slider starts at the data set's r and the address leaves it out; a visitor who moves it
    to the registry's default has it written out, in the address and the demo link, so whoever opens it sees that r."""
    from tests.test_app import explorer

    at = explorer()
    registry_default = PRIORS["pcrp"].param("r").default
    assert at.slider(key="w_r2").value == pytest.approx(builtin_r("old-faithful")[0]) and "r2" not in at.query_params
    at.slider(key="w_r2").set_value(registry_default).run()
    assert not at.exception, at.exception
    assert at.query_params["r2"] in (f"{registry_default:g}", [f"{registry_default:g}"])
    assert any(f"r2={registry_default:g}" in c.value for c in at.get("code"))


@pytest.mark.parametrize("name,variant,covariance", [
    ("old-faithful", {}, "full"), ("old-faithful", {}, "diag"), ("old-faithful", {}, "spherical"),
    ("mnist", {}, "diag"), ("mnist", {"dims": 10}, "full"), ("mnist", {"dims": 10}, "spherical"),
    ("sim1", {}, "spherical")])
def test_the_rows_r_is_the_one_shipped_for_the_data_their_settings_and_the_covariance_type(name, variant, covariance):
    """Issue 57: an r cross-validated for full covariances is not the r of diagonal ones (Old Faithful: 1.7 and 2)."""
    from pcrp.analyses.cv import shipped_r

    values = {**es.defaults(), "data": name, "covariance": covariance}
    for key, value in variant.items():
        values[es.DATA_SETTINGS[name][key]] = value
    shipped = shipped_r(name, covariance, {**es.data_settings(values)})
    assert shipped.matched and es.data_r(values) == shipped.r == es.param_default(values, 2, "r")
    assert es.shipped(values) == shipped


def test_where_no_r_was_cross_validated_the_r_is_said_to_be_another_settings():
    values = {**es.defaults(), "data": "sim1", "sim_n": 500}
    assert not es.shipped(values).matched and es.data_r(values) == builtin_r("sim1")[0]
    assert es.data_settings(values) == {"n": 500, "seed": 0}
    assert es.data_settings({"data": "mnist", "dims": 10}) == {"digits": [1, 2, 3, 4], "n": 1000,
                                                               "embedding": "spectral", "dims": 10}
    assert es.data_settings({}) == {}  # Old Faithful, the default data set


def test_the_explorers_r_follows_the_covariance_selector_and_its_caption_says_for_what():
    """The pCRP row's r the visitor has not chosen follows the data, their settings and the covariance type, and
    its caption says which; where no r was cross-validated for the settings at hand it says so, naming the settings
    its r was chosen at; the covariance selector says which type the data support."""
    from tests.test_app import explorer

    def caption(at, start):
        found = [c.value for c in at.caption if c.value.startswith(start)]
        assert len(found) == 1, [c.value for c in at.caption]
        return found[0]

    at = explorer()
    assert at.slider(key="w_r2").value == pytest.approx(1.7)
    caption(at, "r = 1.7: cross-validated for these data with full covariances.")
    caption(at, "Cross validation of the three types on these data supports **Full** (this one)")
    at.selectbox(key="w_covariance").set_value("spherical").run()
    assert not at.exception, at.exception
    assert at.slider(key="w_r2").value == pytest.approx(2.0) and "r2" not in at.query_params
    caption(at, "r = 2: cross-validated for these data with spherical covariances.")
    caption(at, "Cross validation of the three types on these data supports **Full**:")
    at.selectbox(key="w_data").set_value("sim1").run()
    at.number_input(key="w_sim_n").set_value(500).run()
    assert at.slider(key="w_r2").value == pytest.approx(builtin_r("sim1")[0])
    caption(at, f"No r was cross-validated for Sim 1 at these settings: r = {builtin_r('sim1')[0]:g} is the r "
                "cross-validated for Sim 1 at N = 300, data seed 0 with spherical covariances, a starting point, not a "
                "choice for these data")
    caption(at, "Which type Sim 1 supports was not cross-validated at these settings")
    at.slider(key="w_r2").set_value(1.25).run()
    caption(at, "Your r (no r was cross-validated for Sim 1 at these settings).")
    at.selectbox(key="w_covariance").set_value("full").run()
    assert at.slider(key="w_r2").value == pytest.approx(1.25)  # the visitor's r is theirs, whatever the type
    at.selectbox(key="w_data").set_value("csv").run()
    caption(at, "Which type your data support: the **Choose r** page's **Compare all three** compares them")
