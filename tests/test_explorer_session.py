"""The Explorer's session state is one object (pcrp.app.page_session): one key in st.session_state besides the
widgets' own, one copy of each setting from which the widgets and the address are drawn, a memory that one run's view
bounds, and one cleanup call when the session ends."""

from streamlit.runtime import caching

from pcrp.app import explorer_settings as es
from pcrp.app.page_session import ExplorerState, PageSession, RunView
from tests.test_app import explorer, fast, wait_for

from explorer_support import SESSION_KEY, current_run, explorer_state

# Keys of st.session_state that are not a widget's: the session's object alone (the data set shown, which the Choose r
# page reads, is in it: ExplorerState.dataset).
NOT_WIDGETS = {SESSION_KEY}
WIDGETS = ("button", "number_input", "selectbox", "multiselect", "select_slider", "slider", "toggle", "checkbox",
           "text_input", "download_button")


def widget_keys(at):
    """The keys of the widgets on the page, and of its components (a component's state is a widget's: its id ends
    with its key)."""
    components = {e.proto.id.split("-", 2)[2] for e in at.get("bidi_component") if e.proto.id.count("-") >= 2}
    return {w.key for kind in WIDGETS for w in at.get(kind) if getattr(w, "key", None)} | components


def address(at):
    return {k: v[-1] if isinstance(v, list) else v for k, v in dict(at.query_params).items()}


def test_the_session_keeps_one_object_and_each_setting_once():
    """Before, about 50 string keys (caches, flags, messages, the run) and three copies of each setting (a dict, the
    widget keys, the address). Now the session holds one PageSession and the widgets' keys; a widget's change is in
    the object at once, and the widgets and the address show the object's values."""
    at = fast(explorer({"data": "sim1", "sim_n": "300"}))
    at.button(key="start").click().run()
    run = current_run(at)
    wait_for(lambda: not run.live)
    at.run()
    at.button(key="summarise").click().run()
    at.select_slider(key="scrub").set_value(at.select_slider(key="scrub").options[0]).run()
    assert not at.exception, at.exception
    assert set(at.session_state.keys()) - widget_keys(at) == NOT_WIDGETS
    ex = explorer_state(at)
    assert isinstance(at.session_state[SESSION_KEY], PageSession) and isinstance(ex, ExplorerState)
    bound = {key[2:]: key for key in widget_keys(at) if key.startswith("w_")}
    assert {"data", "sim_n", "sweeps", "burn_in", "pace", "present", "rows", "prior1", "r2"} <= set(bound)
    for name, key in bound.items():
        assert at.session_state[key] == ex.settings[name], name
    assert address(at) == es.to_query(ex.settings)
    at.number_input(key="w_sweeps").set_value(450).run()  # a widget's change: in the object, then the address
    assert ex.settings["sweeps"] == 450 and address(at)["sweeps"] == "450"
    kappa0 = next(w for w in at.number_input if w.key.startswith("kappa0_"))  # the cluster prior's: in the object too
    kappa0.set_value(0.5).run()
    assert ex.niw["kappa0"] == 0.5 and at.session_state[kappa0.key] == 0.5
    assert ex.run_view.replay != "now"  # the replay slider's sweep is the run view's


def test_the_objects_memory_is_one_runs_view_within_its_budget():
    """What the object holds itself (an uploaded data set, the shown run's view: colours, canvas feeds, posterior
    summaries) stays within RunView.budget_bytes, and a new run's view replaces the old one whole: nothing of the
    previous run is kept, and the replaced run's own buffers are freed."""
    at = fast(explorer({"data": "sim1", "sim_n": "300"}))
    at.button(key="start").click().run()
    first = current_run(at)
    wait_for(lambda: not first.live)
    at.run()
    at.button(key="summarise").click().run()
    assert not at.exception, at.exception
    ex = explorer_state(at)
    view = ex.run_view
    assert view.token == first.token and set(view.summaries) == set(first.groups)  # one summary per row
    used = ex.nbytes()
    budget = RunView.budget_bytes(first.dataset.n, len(first.groups), len(first.chains) // len(first.groups),
                                  first.plan.bytes, first.dataset.dim)
    assert 0 < used <= budget, (used, budget)
    at.button(key="start").click().run()  # a new run
    second = current_run(at)
    wait_for(lambda: not second.live)
    at.run()
    assert ex.run_view.token == second.token and ex.run_view is not view and not ex.run_view.summaries
    assert first.discarded and ex.nbytes() < used


def test_the_session_ends_in_one_call_and_a_session_that_comes_back_finds_its_run():
    """Streamlit releases a session's resources when it disconnects; the object's close is that release: the run
    loses its owner (its chains stop after the grace), the view and the uploaded data go, the settings stay. A session
    that comes back (a browser reconnecting) finds its run again, as a reload does."""
    at = explorer({"sweeps": "100000", "pace": "10 sweeps/s", "seed": "5"})
    at.button(key="start").click().run()
    run = current_run(at)
    try:
        ex = explorer_state(at)
        assert run.orphaned_for() is None and ex.run_view is not None
        caching.clear_session_resource_cache("test session id")  # what Streamlit calls at a disconnect (AppTest's id)
        assert run.orphaned_for() is not None  # no session owns it: it stops after its grace
        assert ex.run is None and ex.run_view is None and ex.csv.dataset is None and ex.settings["seed"] == 5
        at.run()
        assert not at.exception, at.exception
        assert current_run(at) is run and run.orphaned_for() is None and run.live
    finally:
        run.stop("test over")

