"""The Rich get richer page (AppTest): the restaurant drawn for each chosen prior with the same random numbers,
step / play with visible state, the registry's parameters, E[K_N] for every prior with its closed form, and an
informative one-customer default."""

import json
import re

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from explorer_support import page_session
from pcrp.analyses.cv import builtin_r
from pcrp.model import PRIORS

TIMEOUT = 120  # numba compiles on first use
pytestmark = pytest.mark.slow  # each page run simulates five priors and a posterior draw (about 10 s cold)


def page(further=None, present=None):
    """The page as it opens (with ``present`` as the address's ?present= value, if given), then with the part
    ``further`` of "Go further" chosen ("growth", "exchangeability", "one_customer"; None: the restaurant alone)."""
    at = AppTest.from_file("../app_pages/rich_get_richer.py", default_timeout=TIMEOUT)
    if present is not None:
        at.query_params["present"] = present
    at.run()
    assert not at.exception, at.exception
    if further is not None:
        at.segmented_control(key="rgr_further").set_value(further).run()
        assert not at.exception, at.exception
    return at


def restaurant_state(at):
    """The page's part of the session's one object (pcrp.app.page_session.RichGetRicherState)."""
    return page_session(at).rich_get_richer


def chart_rows(chart, name="tables"):
    """The rows of a named dataset of a Vega-Lite chart element, as Streamlit sends them."""
    import pyarrow as pa

    for dataset in chart.proto.datasets:
        if dataset.name == name:
            return pa.ipc.open_stream(dataset.data.data).read_all().to_pylist()
    raise KeyError(name)


def restaurants(at):
    return [c for c in at.get("vega_lite_chart") if "table (in opening order)" in c.proto.spec]


def markdown(at):
    return " ".join(m.value for m in at.markdown)


def plotly_specs(at):
    return [json.loads(c.proto.spec) for c in at.get("plotly_chart")]


def test_restaurants_step_play_and_plurals():
    at = page()
    text = markdown(at)
    assert "1 customer seated of 200" in text and "**1 table**," in text  # singular, not "1 customers" / "1 tables"
    assert "Paused" in text and at.button(key="rgr_play").label == "Play"
    drawn = restaurants(at)
    assert len(drawn) == 2  # CRP and pCRP by default
    at.button(key="rgr_step10").click().run()
    at.button(key="rgr_step").click().run()
    assert restaurant_state(at).shown == 12 and "12 customers seated of 200" in markdown(at)
    drawn = restaurants(at)
    rows = [chart_rows(c) for c in drawn]
    assert [sum(r["customers"] for r in rs) for rs in rows] == [12, 12]
    for rs in rows:  # the newcomer's probabilities over the tables and the empty table sum to 1
        assert sum(r["probability"] for r in rs) == pytest.approx(1.0)
        assert rs[-1]["kind"] == "new" and rs[-1]["p_text"].startswith("new: ")
    specs = [json.loads(c.proto.spec) for c in drawn]
    sizes = [s["layer"][0]["encoding"]["size"]["scale"] for s in specs]
    assert sizes[0] == sizes[1] and sizes[0]["domain"][0] == 0  # one area scale for both panels, from zero
    r = builtin_r("old-faithful")[0]  # the lesson's: Old Faithful's shipped r
    assert [s["title"]["text"] for s in specs] == ["CRP (alpha=1)", f"pCRP (alpha=1, r={r:g})"]
    assert specs[0]["encoding"]["y"]["scale"]["domain"] == specs[1]["encoding"]["y"]["scale"]["domain"]
    # both panels are seated with the page's one stream of random numbers (its seed)
    from pcrp.model import CRP, PowerCRP
    from pcrp.model.seating import seat_prior

    uniforms = np.random.default_rng(at.number_input(key="rgr_seed").value).random(200)
    for rs, prior in zip(rows, (CRP(), PowerCRP(r=r))):
        expected = np.bincount(seat_prior(prior, 200, uniforms)[:12])
        assert [r["customers"] for r in rs if r["kind"] == "table"] == expected.tolist()
    # Play shows its state on the button and in the status line, and advances by the chosen speed
    at.select_slider(key="rgr_speed").set_value("very fast (100 per second)")
    at.button(key="rgr_play").click().run()
    assert restaurant_state(at).playing is True
    assert at.button(key="rgr_play").label == "Pause" and "Playing" in markdown(at)
    shown = restaurant_state(at).shown
    at.run()
    assert restaurant_state(at).shown == min(shown + 20, 200)
    at.button(key="rgr_play").click().run()
    assert restaurant_state(at).playing is False and at.button(key="rgr_play").label == "Play"
    assert "Paused" in markdown(at)


def test_play_stops_at_the_end_and_says_so():
    at = page()
    at.number_input(key="rgr_n").set_value(20).run()
    at.select_slider(key="rgr_speed").set_value("very fast (100 per second)")
    at.button(key="rgr_play").click().run()
    for _ in range(3):
        at.run()
    assert restaurant_state(at).shown == 20 and restaurant_state(at).playing is False
    assert at.button(key="rgr_play").label == "Play" and "Done" in markdown(at)
    at.button(key="rgr_restart").click().run()
    assert restaurant_state(at).shown == 1


def test_parameters_come_from_the_registry_and_bad_values_say_so():
    """One number box per registry parameter (shared ones once) with its default; a value on an open bound gets
    the registry's sentence, not a traceback."""
    at = page()
    boxes = {w.key: w.value for w in at.number_input}
    expected = {}
    for spec in PRIORS.values():
        for p in spec.params:  # rgr_<name> for the first parameter of that name, rgr_<prior>_<name> for another
            first = next(q for s in PRIORS.values() for q in s.params if q.name == p.name)
            owner = next(s for s in PRIORS.values() if p in s.params)
            expected[f"rgr_{p.name}" if first is p else f"rgr_{owner.name}_{p.name}"] = p.default
    expected["rgr_r"] = builtin_r("old-faithful")[0]  # but the pCRP's r (below)
    assert {k: v for k, v in boxes.items() if k not in ("rgr_n", "rgr_seed")} == expected
    assert "rgr_py_alpha" in expected and "rgr_pcrp_alpha" not in expected  # the pCRP shares the CRP's alpha box
    assert boxes["rgr_r"] == builtin_r("old-faithful")[0]  # the lesson's r, Old Faithful's shipped one, said so
    assert any(c.value.startswith(f"r = {builtin_r('old-faithful')[0]:g} to start: Old Faithful's cross-validated r")
               for c in at.caption)
    at.number_input(key="rgr_alpha").set_value(0.0).run()
    assert not at.exception
    assert any("alpha must be a finite number > 0" in e.value for e in at.error)
    at.number_input(key="rgr_alpha").set_value(1.0).run()
    at.number_input(key="rgr_sigma").set_value(0.5).run()
    at.number_input(key="rgr_py_alpha").set_value(-0.7).run()
    assert any("alpha must be > -sigma" in e.value for e in at.error)


def test_a_prior_registered_while_the_server_runs_shows_on_the_page(monkeypatch):
    """The page lists the registry as it is when it runs: an entry added after the app started (as a user's
    registration does) is offered in both pickers with its label, and its parameters get their own boxes."""
    from dataclasses import dataclass, field, replace

    from pcrp.model import CRP

    @dataclass(frozen=True)
    class TeachingCRP(CRP):  # a user's prior: its own class and name
        name: str = field(default="teach", init=False)

    at = page("growth")
    assert "Teaching CRP" not in at.multiselect(key="rgr_priors").options  # options as shown: the labels
    entry = replace(PRIORS["crp"], name="teach", label="Teaching CRP", cls=TeachingCRP, reference=False)
    monkeypatch.setitem(PRIORS, "teach", entry)
    at.run()
    assert not at.exception, at.exception
    assert "Teaching CRP" in at.multiselect(key="rgr_priors").options
    assert "Teaching CRP" in at.multiselect(key="rgr_growth_priors").options
    at.multiselect(key="rgr_priors").set_value(["crp", "teach"]).run()
    assert not at.exception, at.exception[0].stack_trace
    assert len(restaurants(at)) == 2 and "Teaching CRP" in markdown(at)


def test_three_restaurants_and_growth_with_closed_forms():
    at = page("growth")
    at.multiselect(key="rgr_priors").set_value(["crp", "pcrp", "py"]).run()
    assert not at.exception, at.exception
    assert len(restaurants(at)) == 3
    growth = next(s for s in plotly_specs(at) if "E[K_N]" in s["layout"]["title"]["text"])
    names = [t.get("name", "") for t in growth["data"]]
    for spec in PRIORS.values():
        assert spec.label in names  # one simulated curve per prior
    exact = {n.split(": ")[0] for n in names if n.endswith(": exact")}
    assert exact == {"CRP", "Pitman-Yor", "MFM", "Sparse finite mixture"}  # the pCRP has no closed form
    limits = {n.split(": ")[0] for n in names if ": limit" in n}
    assert limits == {"MFM", "Sparse finite mixture"}
    assert "no closed form is known" in markdown(at)
    at.multiselect(key="rgr_growth_priors").set_value(["crp", "pcrp"]).run()
    growth = next(s for s in plotly_specs(at) if "E[K_N]" in s["layout"]["title"]["text"])
    assert {t.get("name") for t in growth["data"] if t.get("showlegend", True) and t.get("name")} == {"CRP", "pCRP"}


def test_distributions_with_labelled_n_and_orders():
    at = page("growth")
    radio = at.radio(key="rgr_n_at")
    assert list(radio.options) == ["N = 10", "N = 30", "N = 100", "N = 300", "N = 1,000"]  # every N labelled
    radio.set_value(100).run()
    assert not at.exception, at.exception
    k_chart = next(s for s in plotly_specs(at) if s["layout"]["title"]["text"] == "K_N at N = 100")
    assert all(t["mode"] == "lines+markers" for t in k_chart["data"])  # lines, not thin interleaved bars
    assert len(k_chart["data"]) == len(PRIORS)
    at.segmented_control(key="rgr_further").set_value("exchangeability").run()
    at.text_input(key="rgr_blocks").set_value("2,x").run()
    assert any("is not a list of positive block sizes" in e.value for e in at.error)
    at.text_input(key="rgr_blocks").set_value("![t](http://198.51.100.7/t.png)").run()  # shown as text, not fetched
    shown = next(e.value for e in at.error if "is not a list of positive block sizes" in e.value)
    assert "![t](" not in shown and "http://" not in shown, shown
    at.text_input(key="rgr_blocks").set_value("2,2,1").run()
    captions = " ".join(c.value for c in at.caption)
    assert "Every order has the same probability under CRP (alpha=1)" in captions
    assert f"under pCRP (alpha=1, r={builtin_r('old-faithful')[0]:g}) it depends on who arrives when" in captions


def test_the_page_opens_on_the_restaurant_alone():
    """Short enough to project: nothing below the restaurant but the "Go further" choice until a part is chosen (each
    part simulates or samples for seconds)."""
    at = page()
    assert at.segmented_control(key="rgr_further").value is None
    assert not at.get("plotly_chart") and not at.header  # no growth, exchangeability or posterior drawn
    assert len(restaurants(at)) == 2
    for part, header in (("growth", "Growth of K"), ("exchangeability", "Exchangeability"),
                         ("one_customer", "One customer's choice in a real posterior")):
        at.segmented_control(key="rgr_further").set_value(part).run()
        assert [h.value for h in at.header] == [header]


def test_one_customer_default_is_informative_at_each_data_set_s_own_r():
    from pcrp import data
    from pcrp.model import CRP, PowerCRP, resolve_niw
    from pcrp.teaching.one_customer import contrast
    from pcrp.runs.chains import run_chain as run

    at = page("one_customer")
    ds = data.old_faithful()
    niw = resolve_niw(ds.X)
    labels = run(ds.X, CRP(1.0), niw, iters=300, burn_in=299, thin=1,
                 seed=at.number_input(key="rgr_seed").value).labels[-1]
    r = builtin_r("old-faithful")[0]
    tv, top = contrast(ds.X, labels, niw, [CRP(), PowerCRP(r=r)])
    point = restaurant_state(at).settings["point"]
    assert at.slider(key="rgr_point").value == point  # the slider is drawn from the page's one copy
    assert point == int(np.argmax(tv)) and top[point] < 0.9  # not seated with probability about 1
    assert any(f"total variation {tv[point]:.2f}" in c.value for c in at.caption)
    bars = [s for s in plotly_specs(at) if "where point" in s["layout"]["title"]["text"]]
    assert len(bars) == 2
    assert f"pCRP (alpha=1, r={r:g}): where point {point} goes" in [s["layout"]["title"]["text"] for s in bars]
    assert any(c.value == f"The pCRP here: r = {r:g}, cross-validated for Old Faithful." for c in at.caption)
    for spec in bars:
        assert spec["layout"]["legend"]["y"] < 0  # under the axis, not over the panel title
    at.button(key="rgr_pick_small").click().run()
    sizes = np.bincount(labels)
    assert sizes[labels[restaurant_state(at).settings["point"]]] == sizes[sizes > 0].min()
    at.radio(key="rgr_choice_data").set_value("Sim 1").run()
    assert not at.exception, at.exception
    sim_r = builtin_r("sim1")[0]
    assert sim_r != r and any(c.value == f"The pCRP here: r = {sim_r:g}, cross-validated for Sim 1." for c in at.caption)
    assert any(s["layout"]["title"]["text"].startswith(f"pCRP (alpha=1, r={sim_r:g}): where point")
               for s in plotly_specs(at))
    sim_point = restaurant_state(at).settings["point"]
    at.slider(key="rgr_point").set_value(299).run()
    at.radio(key="rgr_choice_data").set_value("Old Faithful").run()
    assert not at.exception, at.exception
    assert restaurant_state(at).settings["point"] == point  # a new draw starts at its informative point
    assert sim_point != 299


# ---------------------------------------------------------------------------------------------------------------
# In a real browser (Playwright + Debian's chromium): the restaurant on the first screen of a 1280 x 800 projector,
# Play / Pause with visible state.



@pytest.fixture(scope="module")
def rgr_server():
    from browser_support import require_chromium, streamlit_app

    require_chromium()
    with streamlit_app() as (url, _):
        yield url


@pytest.mark.browser
def test_restaurant_fits_the_projector_and_play_shows_its_state(rgr_server):
    import re

    from playwright.sync_api import expect

    from browser_support import chromium

    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(rgr_server + "/rich_get_richer")
        status = page.get_by_text(re.compile(r"seated of 200"))
        expect(status).to_contain_text("1 customer seated", timeout=90_000)
        for _ in range(4):
            page.get_by_role("button", name="+10").click()
            page.wait_for_timeout(400)
        expect(status).to_contain_text("41 customers seated")
        charts = page.locator('[data-testid="stVegaLiteChart"]')
        expect(charts).to_have_count(2)
        for chart in charts.all():  # both restaurants, whole, on the first screen
            box = chart.bounding_box()
            assert box["y"] >= 0 and box["y"] + box["height"] <= 800, box
        # the page is the restaurant: the slower parts are folded under "Go further" (it was 4,300 px long)
        height = page.locator('[data-testid="stMain"]').evaluate("e => e.scrollHeight")
        assert height <= 1000, height
        expect(page.get_by_text("Go further")).to_be_visible()
        page.get_by_role("button", name="Play").click()
        expect(page.get_by_role("button", name="Pause")).to_be_visible(timeout=10_000)
        expect(status).to_contain_text("Playing")

        def seated():
            return int(status.inner_text().split()[0])

        start = seated()
        for _ in range(40):  # medium speed: 5 customers a second; allow a loaded machine 10 s
            page.wait_for_timeout(250)
            if seated() > start:
                break
        assert seated() > start
        page.get_by_role("button", name="Pause").click()
        # the click reruns the whole page behind the animation's queued ticks: one CI run on a busy machine (when
        # the page also drew the growth of K and exchangeability) needed more than 10 s
        expect(page.get_by_role("button", name="Play")).to_be_visible(timeout=30_000)
        expect(status).to_contain_text("Paused")
        held = seated()
        page.wait_for_timeout(1500)
        assert seated() == held


@pytest.mark.browser
def test_present_puts_the_restaurants_on_a_projector_in_projector_type(rgr_server):
    """?present=1 at 1280 x 800: no sidebar, both restaurants whole on the first screen, the page's text at 20 px and
    the typed values and priors' tags at 18 px (13-14 px without Present)."""
    from playwright.sync_api import expect

    from browser_support import chromium

    with chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 800})
        page.goto(rgr_server + "/rich_get_richer?present=1")
        expect(page.get_by_role("button", name="+10")).to_be_visible(timeout=90_000)
        expect(page.locator("section[data-testid='stSidebar']")).to_be_hidden()
        page.get_by_role("button", name="+10").click()
        charts = page.locator('[data-testid="stVegaLiteChart"]')
        expect(charts).to_have_count(2)
        for chart in charts.all():
            box = chart.bounding_box()
            assert box["y"] >= 0 and box["y"] + box["height"] <= 800, box

        def px(locator):
            return float(locator.evaluate("e => getComputedStyle(e).fontSize").removesuffix("px"))

        assert px(page.get_by_text(re.compile(r"customers? seated of 200")).first) >= 20
        assert px(page.get_by_text("pCRP", exact=True).first) >= 18
        assert px(page.locator("[data-testid='stMainBlockContainer'] input").first) >= 18
        page.close()


def styles(at):
    return " ".join(h.proto.body for h in at.get("html"))


def text_sizes(chart):
    spec = json.loads(chart.proto.spec)
    return {layer["mark"]["fontSize"] for layer in spec["layer"] if layer["mark"].get("type") == "text"}


def test_present_mode_from_the_address_and_the_switch():
    """?present=1 (or the switch) is the Lesson's presentation mode (app_pages/shared.py): no sidebar or header,
    projector type, and the restaurants in larger cells and the lesson's type; the switch writes the address, and a
    bad value is said and left off."""
    from app_pages.shared import PRESENT_RULES, PROJECTOR_TEXT
    from pcrp.plots.lesson import FONT_PX
    from pcrp.plots.restaurant import GRID, PRESENT_GRID

    at = page(present="1")
    assert at.toggle(key="rgr_present").value is True
    assert "section[data-testid='stSidebar']" in styles(at) and PRESENT_RULES.strip()[:40] in styles(at)
    assert PROJECTOR_TEXT in styles(at)  # the page's own rules add to the projector type, not replace it
    drawn = restaurants(at)
    cols, cell = PRESENT_GRID[2]
    assert [json.loads(c.proto.spec)["width"] for c in drawn] == [cols * cell] * 2
    assert all(text_sizes(c) == {FONT_PX} for c in drawn)
    at.toggle(key="rgr_present").set_value(False).run()
    assert "present" not in at.query_params and "stSidebar" not in styles(at)
    cols, cell = GRID[2]
    assert [json.loads(c.proto.spec)["width"] for c in restaurants(at)] == [cols * cell] * 2
    assert all(text_sizes(c) == {13} for c in restaurants(at))
    at.toggle(key="rgr_present").set_value(True).run()
    assert at.query_params["present"] == "1" and "stSidebar" in styles(at)
    bad = page(present="maybe")
    assert bad.toggle(key="rgr_present").value is False
    assert any("presentation mode must be true or false" in w.value for w in bad.warning)


def test_no_share_on_the_page_reads_100_for_less():
    """A strong power seats nearly everyone at one table: the next customer's probability of it is below 1 and is
    written as such (99.x%, never 100%), and so is the largest table's share (Rich get richer showed 100% for
    99.6%)."""
    from pcrp.basics.shares import percent_text

    at = page()
    at.number_input(key="rgr_r").set_value(3.0).run()
    at.number_input(key="rgr_n").set_value(40).run()
    for _ in range(4):
        at.button(key="rgr_step10").click().run()
    assert restaurant_state(at).shown == 40
    for chart in restaurants(at):
        for row in chart_rows(chart):
            if row["probability"] < 1:
                assert "100%" not in row["p_text"], row
    pcrp_rows = chart_rows(restaurants(at)[1])
    top = max(r["probability"] for r in pcrp_rows if r["kind"] == "table")
    assert 0.99 < top < 1 and percent_text(top) in [r["p_text"] for r in pcrp_rows]
    lines = [m.value for m in at.markdown if "largest" in m.value]
    assert lines and all("largest 100%" not in line or line.startswith("**1 table**") for line in lines)


def test_restaurant_chart_areas_probabilities_and_overflow():
    """The drawing itself: areas proportional to customers on the shared scale (Vega's circle size is the area of its bounding square),
    the probability under each table and the empty one, tables beyond the grid counted in a note."""
    from pcrp.plots.restaurant import probability_text, restaurant_chart, restaurant_grid

    spec = restaurant_chart([8, 2, 1], [0.6, 0.2, 0.1, 0.1], max_customers=10, cols=4, rows=1, cell_px=100,
                            title="CRP (alpha=1)")
    size = spec["layer"][0]["encoding"]["size"]["scale"]
    assert size["domain"] == [0, 10] and size["range"][0] == 0 and size["zero"] is True  # linear from 0: area ∝ n
    assert size["range"][1] == pytest.approx(68.0 ** 2)  # the fullest table is 0.68 of a cell across
    rows = spec["datasets"]["tables"]
    assert [r["p_text"] for r in rows] == ["60%", "20%", "10%", "new: 10%"]
    assert [r["kind"] for r in rows] == ["table"] * 3 + ["new"] and len(spec["layer"]) == 4  # no note: all fit
    crowded = restaurant_chart([5, 3, 2, 1, 1], np.full(6, 1 / 6), max_customers=5, cols=2, rows=2)
    assert [r["table"] for r in crowded["datasets"]["tables"]] == ["T1", "T2", "T3", "new"]
    assert crowded["layer"][-1]["data"]["values"][0]["note"] == "+ 2 more tables (2 customers) not drawn"
    assert restaurant_grid(5, 4, max_rows=3) == 2 and restaurant_grid(40, 4, max_rows=3) == 3
    assert [probability_text(p) for p in (0.0, 0.00005, 0.0004, 0.031, 0.5)] == ["0", "<0.01%", "<0.1%", "3.1%", "50%"]
    with pytest.raises(ValueError, match="one entry per table and one for a new table"):
        restaurant_chart([3, 1], [0.5, 0.5], max_customers=3)
