"""The Explorer's 1 to 5 rows (issue 37): the ``?priors=`` address, the chains per row and the share counting every
row's chains, the rows' colours (AppTest and the settings; the browser test of the five-row link is in
test_browser_presentation.py)."""

import pytest

from pcrp.app import explorer_settings as es
from pcrp.app.fair_share import SHARE_PER_BROWSER
from pcrp.app.live_params import DEFAULT_ROW_COUNT, chains_cap, default_chains, one_chain_words
from pcrp.model import PRIORS
from pcrp.plots.palette import ROW_COLOURS, ROW_MARKDOWN_COLOURS
from app_pages.explorer_parts.live_panel import ONE_CHAIN
from app_pages.shared import registry
from tests.test_app import explorer, texts, wait_for
from explorer_support import current_run

FIVE = "crp,pcrp,py,mfm,sfm"


def test_an_address_naming_five_priors_gives_five_rows_and_round_trips():
    values, problems = es.from_query({"priors": FIVE, "alpha1": "2", "sigma3": "0.5"})
    assert not problems
    full = {**es.defaults(), **values}
    assert es.active_rows(full) == (1, 2, 3, 4, 5)
    assert [full[es.prior_key(row)] for row in es.active_rows(full)] == FIVE.split(",")
    assert full["alpha1"] == 2.0 and full["sigma3"] == 0.5
    assert [p.name for p in es.check_rows(full).values()] == FIVE.split(",")
    link = es.demo_link("http://host:8501/", full)
    assert link.startswith(f"http://host:8501/?priors={FIVE}&")  # readable: the commas are not escaped
    again = {**es.defaults(), **es.from_query(es.to_query(full))[0]}
    keys = ["rows", "chains", "alpha1", "sigma3"] + [es.prior_key(row) for row in es.ROWS]
    assert {k: again[k] for k in keys} == {k: full[k] for k in keys}
    assert es.to_query(again) == es.to_query(full)


def test_without_priors_the_page_stays_crp_above_pcrp_and_one_row_is_allowed():
    assert es.active_rows(es.defaults()) == (1, 2) and DEFAULT_ROW_COUNT == 2
    assert es.to_query(es.defaults()) == {}
    values, problems = es.from_query({"priors": "pcrp"})
    assert not problems and es.active_rows({**es.defaults(), **values}) == (1,)
    assert es.to_query({**es.defaults(), **values}) == {"priors": "pcrp"}


@pytest.mark.parametrize("text, words", [
    ("crp,nope", "unknown prior 'nope'"),
    ("crp,pcrp,py,mfm,sfm,crp", "1 to 5 prior names"),
    ("crp,,py", "1 to 5 prior names"),
    ("", "1 to 5 prior names"),
])
def test_a_bad_priors_value_is_refused_with_a_message_and_the_rows_stay(text, words):
    values, problems = es.from_query({"priors": text})
    assert any(words in p for p in problems), problems
    assert "rows" not in values and "prior1" not in values


def test_rows_keep_two_chains_where_the_share_allows_and_never_more_than_the_share():
    """R-hat compares two chains: a row keeps two wherever one browser's share (8 chains) allows it, on any server
    (on a 2-core server three and four rows once dropped to one chain each, and their R-hat badges went without a
    word); five rows get one each, which the sidebar says (one_chain_words) and each row says where its badge was."""
    assert default_chains(2) == default_chains(3) == default_chains(4) == 2
    assert default_chains(5) == 1  # 8 chains / 5 rows
    for rows in range(1, 6):
        assert chains_cap(rows) * rows <= SHARE_PER_BROWSER.chains
        assert default_chains(rows) == min(2, chains_cap(rows))
    assert one_chain_words(2, 2) is None and one_chain_words(5, 2) is None
    assert one_chain_words(5, 1).startswith("One chain per row: no R-hat") and "allows one per row" in \
        one_chain_words(5, 1)
    assert "two chains per row give it" in one_chain_words(2, 1)
    values, problems = es.from_query({"priors": FIVE})
    assert values["chains"] == default_chains(5)
    values, problems = es.from_query({"priors": "crp,pcrp,py", "chains": "4"})
    assert any("chains must be at most 2 with 3 rows" in p for p in problems)
    assert values["chains"] == default_chains(3)


def test_five_rows_have_five_different_colours():
    assert len(set(ROW_COLOURS)) == len(set(ROW_MARKDOWN_COLOURS)) == len(es.ROWS) == 5


def test_the_five_row_page_shows_every_prior_and_runs_them_all_in_the_share():
    at = explorer({"priors": FIVE, "data": "sim2"})
    assert at.title[0].value == "5 priors on the same data, live"
    assert [at.selectbox(key=f"w_prior{row}").value for row in es.ROWS] == FIVE.split(",")
    assert at.selectbox(key="w_prior1").label == "Row 1: prior"
    assert at.number_input(key="w_chains").value == default_chains(5)
    assert at.number_input(key="w_chains").max == chains_cap(5)
    assert one_chain_words(5, 1) in [c.value for c in at.caption]  # the sidebar says why one chain, and what it costs
    at.select_slider(key="w_pace").set_value("2 sweeps/s")
    at.number_input(key="w_sweeps").set_value(400)
    at.number_input(key="w_burn_in").set_value(100).run()
    at.button(key="start").click().run()
    assert not at.exception, at.exception
    run = current_run(at)
    assert len(run.groups) == 5 and len(run.chains) == 5 * default_chains(5)
    assert registry().live_chains() >= len(run.chains)  # the server's pool counts every row's chains
    at.button(key="stop").click().run()
    wait_for(lambda: not run.live)
    at.run()
    assert not at.exception, at.exception
    page = texts(at)
    for name in FIVE.split(","):
        assert PRIORS[name].label in page
    headings = [m.value for m in at.markdown if m.value.startswith("**:")]
    assert len(headings) == 5 and all(ONE_CHAIN in h for h in headings), headings  # where each R-hat badge would be


def test_the_rows_box_changes_the_rows_and_their_chains():
    at = explorer({"data": "sim2"})
    assert at.number_input(key="w_chains").value == 2
    at.number_input(key="w_rows").set_value(4).run()
    assert not at.exception, at.exception
    assert at.selectbox(key="w_prior4").value == es.ROW_DEFAULT_PRIORS[4]
    assert at.number_input(key="w_chains").value == default_chains(4)
    assert at.query_params["priors"] in (",".join(es.ROW_DEFAULT_PRIORS[r] for r in (1, 2, 3, 4)),
                                         [",".join(es.ROW_DEFAULT_PRIORS[r] for r in (1, 2, 3, 4))])
    at.number_input(key="w_rows").set_value(2).run()
    assert at.number_input(key="w_chains").value == 2
    assert "priors" not in at.query_params
    assert at.selectbox(key="w_prior1").label == "Top row: prior"

