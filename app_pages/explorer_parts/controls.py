"""What a Start press runs and the buttons that control a run: the settings a run would use now (compared with the
shown run's), building and registering the run, and Start / Pause / Resume / One sweep / Stop / Reset with their
callbacks. The run is pcrp.app.live_runs'; the page only calls it."""

import re
from dataclasses import dataclass

import streamlit as st

from app_pages.explorer_parts.model_sidebar import row_name
from app_pages.explorer_parts.session import automatic_rows, bind, choices, explorer, publish_address, say, settings
from app_pages.shared import browser_key, client_address, inert, no_key_message, registry, session_owner
from pcrp.app import explorer_settings as es
from pcrp.app.fair_share import ServerBusy
from pcrp.app.live_chain import PAUSED, RUNNING
from pcrp.app.live_runs import contrasting_starts, live_specs, new_run
from pcrp.app.page_session import discard_run
from pcrp.app import warm_up
from pcrp.basics.errors import SamplerError
from pcrp.model import PRIORS, ModelError, resolve_niw


@dataclass(frozen=True)
class PageData:
    """What one run of the page works on, passed to the functions and callbacks that need it.

    dataset: the pcrp.data.Dataset shown (None until one is loaded); key: what identifies it (a built-in data
    set's settings, or the uploaded file and its column choices), compared with a run's; niw_choice: the NIW
    settings of the sidebar {"kappa0", "nu0", "S0": float}, empty until a data set is loaded."""

    dataset: object
    key: tuple
    niw_choice: dict


def current_config(data):
    """The settings a Start press would use now (for comparing with the shown run): the data (a PageData),
    each row's prior and its parameters, the run settings and the NIW choice."""
    S = settings()
    config = {"data_key": data.key, "niw_choice": {k: float(v) for k, v in data.niw_choice.items()}}
    config.update({key: S[name] for name, key in es.RUN_SETTINGS.items()})
    config["rows"] = len(es.active_rows(S))
    for row in es.active_rows(S):
        config[es.prior_key(row)] = S[es.prior_key(row)]
        config.update({es.row_key(name, row): value for name, value in es.row_params(S, row).items()})
    return config


def changed_since(cfg, now):
    """Names (in the widgets' words) of the settings in which ``now`` (current_config) differs from the
    run's ``cfg``; a row whose prior changed is named once, not with each of its parameters."""
    n_rows = len(es.active_rows(settings()))
    words = {"data_key": "data", "niw_choice": "cluster prior", "rows": "rows",
             **{key: es.BY_NAME[name].label for name, key in es.RUN_SETTINGS.items()},
             **{es.prior_key(row): f"{row_name(row, n_rows).lower()}'s prior" for row in es.ROWS}}
    names = []
    for key, value in now.items():
        if cfg.get(key) == value:
            continue
        if key in es.ROW_PARAMS:
            row, name = es.ROW_PARAMS[key]
            if cfg.get(es.prior_key(row)) == now[es.prior_key(row)]:
                names.append(f"{PRIORS[now[es.prior_key(row)]].label} {name}")
        else:
            names.append(words[key])
    if "data" in names and "cluster prior" in names:
        names.remove("cluster prior")  # its defaults follow the data
    # ... and a tuned value the visitor has not chosen follows the data and the covariance type (the r shipped for them)
    if "data" in names or es.BY_NAME["covariance"].label in names:
        for row in automatic_rows(settings()):
            spec = PRIORS[now[es.prior_key(row)]]
            if cfg.get(es.prior_key(row)) == spec.name and f"{spec.label} {spec.tuned}" in names:
                names.remove(f"{spec.label} {spec.tuned}")
    return names


def row_priors():
    """{group name: prior} of the rows shown, top first: the prior's label, or its label with parameters (and the
    row) when two rows pick the same prior."""
    S = settings()
    priors = es.check_rows(S)
    rows = list(priors)
    labels = {row: PRIORS[S[es.prior_key(row)]].label for row in rows}
    if len(set(labels.values())) < len(rows):
        labels = {row: priors[row].label() for row in rows}
        if len(set(labels.values())) < len(rows):
            labels = {row: f"{labels[row]} {row_name(row, len(rows)).lower()}" for row in rows}
    return {labels[row]: priors[row] for row in rows}


def in_page_words(message):
    """A library message in the words of this page's widgets (the library says iters and burn_in)."""
    return re.sub(r"\biters\b", "sweeps", message).replace("burn_in", "burn-in")


def start_run(data):
    """Build, register and start a run on ``data`` (a PageData) with the current settings; returns an error
    message or None."""
    ds, S = data.dataset, settings()
    if ds is None:
        return "Load a data set first."
    if browser_key() is None:
        return no_key_message()
    try:
        niw = resolve_niw(ds.X, covariance_type=S["covariance"], **data.niw_choice)
        priors = row_priors()
        config = {**current_config(data), "data": ds.description, "source": ds.source, "columns": ds.columns,
                  "standardized": ds.standardized, "niw": niw.as_dict(),
                  "priors": {k: p.params() for k, p in priors.items()}}
        specs = live_specs(ds, priors, niw, iters=S["sweeps"], burn_in=S["burn_in"], thin=S["thin"], seed=S["seed"],
                           inits=contrasting_starts(S["start"], S["chains"]), split_merge=S["split_merge"])
        run = new_run(ds, specs, config=config)
        run.browser, run.address = browser_key(), client_address()
        run.set_pace(es.PACES[S["pace"]])
        # started now when the server has a place for it, else queued (it starts by itself); this tab's previous run
        # is let go below
        registry().add(run, replacing=explorer().run)
    except (ModelError, SamplerError, ServerBusy) as err:
        return in_page_words(str(err))
    old = explorer().run
    if old is not None:  # never shown again, and no reload finds it: its memory goes now
        discard_run(old, session_owner(), "a new run was started")
    session_owner().adopt(run)
    explorer().show(run)
    return None


def data_name(S, dataset):
    """The data set's name as the sidebar says it ("Sim 1"), or an uploaded file's name as inert text."""
    return es.SOURCE_LABELS[S["data"]] if S["data"] != "csv" else inert(dataset.name)


# ----------------------------------------------------------------------------- controls
# Buttons act in on_click callbacks, which run before the page is drawn again: the buttons below
# then show the new state (Pause disabled once paused, and so on). Callbacks may not draw, so their
# feedback is queued (session.say) and shown as a toast by the live panel.
def on_start(data):
    ex = explorer()
    if not warm_up.state(settings()["covariance"]).ready:  # its sweep's separate compile runs: the live panel waits
        warm_up.start()
        ex.start_pending = True
        ex.app_rerun = True
        return
    error = start_run(data)
    if error:
        ex.notices.start_error = error
    else:
        S = settings()
        chains = (f"{S['chains']} chains" if S["chains"] > 1 else "one chain") + (" each" if len(ex.run.groups) > 1
                                                                                 else "")
        say(f"{'Queued' if ex.run.queued else 'Started'} {' and '.join(ex.run.groups)} on "
            f"{data_name(S, data.dataset)}, {chains}: {S['sweeps']:,} sweeps at {S['pace']}.")
    ex.app_rerun = True  # polling starts with a full redraw


def on_pause():
    run = explorer().run
    if run is not None:
        run.pause()  # returns once every chain has recorded its last call: the page shows where they stopped
        say("Paused: " + ", ".join(f"{group} at sweep {min(run.chains[n].done for n in names):,}"
                                   for group, names in run.groups.items()) + ".")


def on_resume():
    run = explorer().run
    if run is not None:
        # a run reclaimed while nobody watched it needs a place again: at once, or it waits in the queue
        say("Resumed." if registry().readmit(run) else "Waiting in the queue; it resumes by itself.")


def on_step():
    run = explorer().run
    if run is not None and any(run.step_once()):  # returns once the sweep is recorded
        say("One sweep: " + ", ".join(f"{group} at sweep {min(run.chains[n].done for n in names):,}"
                                      for group, names in run.groups.items()) + ".")


def on_stop():
    run = explorer().run
    if run is not None:
        run.stop("you pressed Stop", wait=0)  # shown at once; the panel waits for the calls in flight (its end)
        say("Stopped; the results so far stay on the page.")
    # no full redraw here: the live panel shows "stopped" first and then redraws the page (see its end)


def on_present():
    explorer().app_rerun = True  # the whole page changes (sidebar, fonts, chart sizes)


def on_reset():
    """Reset: the run is stopped and let go for good (pcrp.app.page_session.discard_run): nothing of it is shown, and
    a reload of this browser does not bring it back."""
    explorer().let_go(session_owner(), "you pressed Reset")
    say("Cleared.")
    explorer().app_rerun = True  # the details and notes below the live panel go too


BUTTONS = ("start", "pause", "resume", "step", "stop", "reset")  # the controls' buttons' keys


def pressed():
    """Whether this script run follows a press of one of the controls' buttons (its drawing goes first)."""
    return any(st.session_state.get(key) is True for key in BUTTONS)


def controls(run, data):
    """Start / Pause / Resume / One sweep / Stop / Reset, each enabled only where it does something (Start
    runs the settings on ``data``, a PageData)."""
    states = set(run.states.values()) if run is not None else set()
    running, paused = RUNNING in states, PAUSED in states
    # no tooltips here: after a click they covered the text under the buttons (keys: see keyboard_shortcuts)
    b = st.columns([1, 1, 1.15, 1.4, 1, 1, 2.6, 1.3], vertical_alignment="center")
    b[0].button("Start", type="primary", key="start", disabled=data.dataset is None, on_click=on_start,
                args=(data,))
    b[1].button("Pause", key="pause", disabled=not running, on_click=on_pause)
    b[2].button("Resume", key="resume", disabled=not paused, on_click=on_resume)
    b[3].button("One sweep", key="step", disabled=not paused, on_click=on_step)
    b[4].button("Stop", key="stop", disabled=not (running or paused), on_click=on_stop)
    b[5].button("Reset", key="reset", disabled=run is None, on_click=on_reset)
    b[6].select_slider("Pace", options=choices("pace"), **bind("pace"), label_visibility="collapsed")
    b[7].toggle("Present", **bind("present", on_present))
    publish_address()  # (in the live fragment: a change of pace is written to the address here)
    notices = explorer().notices
    if notices.start_error is not None:
        st.error(notices.take("start_error"))  # the library's own words about the settings: no visitor text
    if notices.toast is not None:
        st.toast(notices.take("toast"))
