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
