"""Rich get richer: the seating process under each prior of the registry, one customer at a time.

The restaurant fills the first screen of a projector; the slower parts (the growth of K, exchangeability, one
customer's choice in a real posterior) are drawn only when chosen under "Go further". The pCRP's r is a data set's
own (pcrp.teaching.one_customer.data_r: the shipped cross-validated r): Old Faithful's in the restaurant, as in the
lesson, and the shown data set's in the one-customer view. Present (the switch, or ?present=1) is the Lesson's
presentation mode (app_pages/shared.py): no sidebar, projector type, the restaurants in larger cells.

The page's settings (every widget's value) and the animation's state are its part of the session's one object
(pcrp.app.page_session.RichGetRicherState): the widgets are drawn from it, so a visit to another page and back keeps
them, and so is the address (?present=1)."""

import html
import math

import numpy as np
import streamlit as st

from app_pages.shared import (bind, follow_address, guarded, inert, page_part, present_style, present_switch,
                              present_text, read_present, sampler_ready, write_address)
from pcrp import plots
from pcrp.app.page_session import RichGetRicherState
from pcrp.basics.shares import fraction_text, percent_text
from pcrp.model import DEFAULT_PRIOR, PRIORS, ModelError, make_prior, resolve_niw
from pcrp.teaching.one_customer import (CHOICE_DATA, RESTAURANT_DATA, choice_data, contrast, data_r, seating_choice,
                                        with_data_r)
from pcrp.plots import restaurant as rplots
from pcrp.plots.lesson import FONT_PX as PROJECTOR_PX, projector
from pcrp.plots.palette import colour
from pcrp.runs.chains import run_chain
from pcrp.model.seating import (arrival_orders, growth, order_probability_prior, seat_prior, seating_probabilities_prior,
                          simulate_k_growth_prior, simulate_tables_prior)

# The page's default seed: its CRP posterior draw of Old Faithful (one_customer_section) has a point the CRP and the
# pCRP at Old Faithful's r seat differently (at r = 1.7: point 164, total variation 0.39, top probability 0.60), as a
# lesson needs; at seed 0 the draw holds the two eruption types alone and the largest total variation is 0.08
# (tests/test_rich_get_richer_page.py).
DEFAULT_SEED = 1
# The parts below the restaurant, drawn only when chosen (each takes seconds: simulations or a posterior draw).
FURTHER = {"growth": "Growth of K", "exchangeability": "Exchangeability", "one_customer": "One customer's choice"}
KEY_PREFIX = "rgr_"  # a setting's widget key: "rgr_" + its name (the tests find widgets by it)
PAGE_KEY = "rgr_page"  # the page's container: Present's rules name its class, .st-key-rgr_page (Streamlit's public way)
N_AT = [10, 30, 100, 300, 1000]  # the N whose tables' distribution the growth of K shows


def defaults():
    """The page's settings on its first visit (its widgets' first values; the registry's parameters are added as
    their boxes are first drawn)."""
    return {"priors": default_pair(), "n": 200, "seed": DEFAULT_SEED, "speed": "medium (5 per second)",
            "further": None, "growth_priors": prior_names(), "runs": 50, "n_at": 300, "blocks": "3,1",
            "choice_data": next(iter(CHOICE_DATA)), "point": 0, "present": False}


def part():
    """This session's part of the page (pcrp.app.page_session.RichGetRicherState), made on its first visit."""
    return page_part("rich_get_richer", lambda: RichGetRicherState(defaults()))


def widget(name, **options):
    """The keyword arguments binding a widget to setting ``name`` of the page's part (app_pages.shared.bind)."""
    return bind(part().settings, name, KEY_PREFIX + name, **options)


def introduction(present, problem):
    """The title beside the Present switch, a bad ``present`` in the address said, and what to watch for."""
    c = st.columns([5, 1], vertical_alignment="center")
    c[0].title("Rich get richer")
    present_switch(c[1], part(), "rgr_present")
    if problem:
        st.warning(f"Ignored a setting in the address bar: {inert(problem)}.")
    st.markdown(
        "Customers enter one by one; each joins a table with a weight that grows with its size, or opens a new one. "
        "**What to watch for:** the big tables get bigger, and under the pCRP (sizes to the power r > 1) they pull "
        "harder, so fewer tables open than under the CRP.")


# ----------------------------------------------------------------------------- priors and their parameters
def prior_names():
    """The registry's priors now, in its order (a prior registered while the server runs shows on the next rerun)."""
    return list(PRIORS)


def default_pair():
    """The restaurants shown first: the over-clustering reference (the CRP) beside the paper's prior (the pCRP), by
    the registry's fields."""
    reference = [name for name, spec in PRIORS.items() if spec.reference][:1]
    return reference + [name for name in [DEFAULT_PRIOR] if name not in reference]


def param_key(param):
    """Widget key of a registry parameter: rgr_<name> for the first parameter of that name in the registry
    (rgr_alpha, rgr_r, rgr_sigma, ...), rgr_<prior>_<name> for a different parameter of the same name
    (rgr_py_alpha); a parameter shared by several priors (the CRP's and pCRP's alpha) has one widget."""
    first = next(p for s in PRIORS.values() for p in s.params if p.name == param.name)
    if first is param:
        return f"rgr_{param.name}"
    owner = next(s for s in PRIORS.values() if param in s.params)
    return f"rgr_{owner.name}_{param.name}"


def restaurant_default(spec, param):
    """(default, where it comes from or None) of a parameter's box: the registry's default, but for the tuned parameter
    of the cross-validated prior (the pCRP's r) Old Faithful's shipped r, the one the lesson seats customers with."""
    if spec.name == DEFAULT_PRIOR and param.name == spec.tuned:
        r, provenance = data_r(RESTAURANT_DATA)
        return r, provenance
    return param.default, None


def param_widget(container, param, default=None):
    """A number input for ``param`` from its registry bounds and its default (or ``default``: the setting's first
    value); open bounds are checked by the prior (a value on an open bound gets the registry's sentence)."""
    default = param.default if default is None else default
    if param.integer:
        step = 1
    else:
        step = 10.0 ** math.floor(math.log10(abs(param.default))) / 10 if param.default else 0.1
    kind = int if param.integer else float
    name = param_key(param)[len(KEY_PREFIX):]
    part().settings.setdefault(name, kind(default))
    return container.number_input(
        param.label,
        min_value=kind(param.low) if param.low is not None and param.low_closed else None,
        max_value=kind(param.high) if param.high is not None and param.high_closed else None,
        step=step, format=None if param.integer else "%g", help=param.help, **widget(name))


def prior_choices():
    """The priors in the restaurant, customers, seed and every used prior's parameters; returns
    (chosen names, customers, seed, {name: prior} of the priors whose parameters are valid)."""
    c = st.columns([3, 1, 1])
    names = prior_names()
    chosen = c[0].multiselect("priors in the restaurant", names, max_selections=3,
                              format_func=lambda n: PRIORS[n].label,
                              help="Up to three restaurants side by side, seated with the same random numbers.",
                              **widget("priors"))
    n_total = int(c[1].number_input("customers", 10, 2000, step=10, **widget("n")))
    seed = int(c[2].number_input("seed", 0, 10_000, **widget("seed")))
    growth_names = part().settings["growth_priors"]
    used = [n for n in names if n in set(chosen) | set(growth_names)]

    values = {}
    shown_params = {}
    parameters = st.expander("Parameters of the priors (bounds and defaults from the prior registry; a parameter two "
                             "priors share has one box)")
    cols = parameters.columns(max(len(used), 1))
    for col, name in zip(cols, used):
        spec = PRIORS[name]
        col.markdown(f"**{spec.label}**")
        for p in spec.params:
            key = param_key(p)
            if key not in shown_params:
                shown_params[key] = spec.label
                default, origin = restaurant_default(spec, p)
                values[key] = param_widget(col, p, default)
                if origin is not None:
                    col.caption(f"{p.name} = {default:g} to start: Old Faithful's cross-validated r, as in the lesson "
                                "(the restaurant has no data of its own).", help=origin)
            else:
                col.caption(f"{p.name}: as the {shown_params[key]}'s")

    priors = {}
    for name in used:
        spec = PRIORS[name]
        try:
            priors[name] = make_prior(name, **{p.name: values[param_key(p)] for p in spec.params})
        except ModelError as err:
            st.error(f"{spec.label}: {err}")
    return chosen, n_total, seed, priors


# ----------------------------------------------------------------------------- the restaurant
SPEEDS = {"slow (2 per second)": (0.5, 1), "medium (5 per second)": (0.2, 1), "fast (25 per second)": (0.2, 5),
          "very fast (100 per second)": (0.2, 20)}


def _step(k, n_total):
    rg = part()
    rg.shown = min(rg.shown + k, n_total)


def _toggle(n_total):
    rg = part()
    if not rg.playing and rg.shown >= n_total:
        rg.shown = 1  # Play at the end starts again
    rg.playing = not rg.playing


def _restart():
    rg = part()
    rg.shown, rg.playing = 1, False


@st.cache_data(max_entries=64)
def seating(prior, n, seed):
    """Table labels (n,) of n customers under ``prior`` with the page's random numbers (a pure function of its
    arguments, safe to share between users); the first m customers' seating is the first m labels."""
    uniforms = np.random.default_rng(seed).random(n)
    return seat_prior(prior, n, uniforms)


def plural(n, word, words=None):
    return f"{n} {word if n == 1 else (words or word + 's')}"


# Present's rules besides the shared ones (app_pages/shared.py): the typed values and the chosen priors' tags (the
# multiselect's, marked data-tag) in projector type too, in the page's container (PAGE_KEY).
PRESENT_EXTRA = """
.st-key-rgr_page input, .st-key-rgr_page [data-tag] span {font-size: 18px !important;}
"""


def chart(place, fig, present, key):
    """A Plotly figure in ``place``, without its toolbar; in Present in the projector's type
    (:func:`pcrp.plots.lesson.projector`, its own height kept) and without Streamlit's theme, which sets its own
    smaller type."""
    place.plotly_chart(projector(fig, height=None) if present else fig, key=key, width="stretch",
                       config={"displayModeBar": False}, theme=None if present else "streamlit")


def restaurants(chosen, priors, n_total, seed, speed, present=False):
    """The restaurants and their status line: a fragment (see restaurant_section) that seats the next customers
    on every tick while playing; in Present larger cells and type."""
    per_tick = SPEEDS[speed][1]
    rg = part()
    with guarded("the seating animation"):
        if rg.playing:
            rg.shown = min(rg.shown + per_tick, n_total)
        n = rg.shown
        if rg.playing and n >= n_total:
            rg.playing = False
            st.rerun()  # the whole page: the Play button shows its state again
        if rg.playing:
            status = f":material/play_arrow: **Playing** at {speed.split(' (')[1].rstrip(')')}"
        elif n >= n_total:
            status = ":material/stop: **Done**: every customer is seated; Restart or Play to watch again"
        else:
            status = ":material/pause: **Paused**: Step, +10 or Play"
        st.markdown(f"{plural(n, 'customer')} seated of {n_total} · {status}")
        shown = [priors[name] for name in chosen if name in priors]
        if not shown:
            st.info("Choose at least one prior above.")
            return
        sizes = {p: np.bincount(seating(p, n_total, seed)[:n]) for p in shown}
        max_customers = max(int(s.max()) for s in sizes.values())
        cols_per_row, cell_px = (rplots.PRESENT_GRID if present else rplots.GRID)[len(shown)]
        most = max(s.size for s in sizes.values())
        rows = rplots.restaurant_grid(most, cols_per_row, max_rows=3)
        overflow = most + 1 > cols_per_row * rows  # some panel notes its tables that are not drawn
        columns = st.columns(len(shown))
        for col, prior in zip(columns, shown):
            with col:
                s = sizes[prior]
                st.vega_lite_chart(rplots.restaurant_chart(s, seating_probabilities_prior(prior, s),
                                                           max_customers=max_customers, cols=cols_per_row,
                                                           rows=rows, cell_px=cell_px, title=prior.label(),
                                                           note_row=overflow,
                                                           **({"font_px": PROJECTOR_PX, "title_px": PROJECTOR_PX + 2}
                                                              if present else {})),
                                   key=f"rgr-restaurant-{prior.name}", width="content")
                st.markdown(f"**{plural(s.size, 'table')}**, largest {percent_text(s.max() / n)}")
        st.caption("Circles: tables in the order they opened, area proportional to customers (one scale for all "
                   "panels); under each, the next customer's probability of sitting there; dashed: a new table. "
                   "Every panel uses the same random numbers, so the panels differ only by the prior.")


def restaurant_section(chosen, priors, n_total, seed, present=False):
    """Step / +10 / Play / Restart, the speed, the animated restaurants and the seating rule."""
    rg = part()
    rg.shown = min(rg.shown, n_total)
    b = st.columns([1, 1, 1.3, 1, 3])
    b[0].button("Step", key="rgr_step", on_click=_step, args=(1, n_total))
    b[1].button("+10", key="rgr_step10", on_click=_step, args=(10, n_total))
    b[2].button("Pause" if rg.playing else "Play", key="rgr_play", on_click=_toggle, args=(n_total,),
                icon=":material/pause:" if rg.playing else ":material/play_arrow:",
                type="primary" if rg.playing else "secondary")  # no tooltip: it would cover the status
    b[3].button("Restart", key="rgr_restart", on_click=_restart)
    speed = b[4].select_slider("speed", options=list(SPEEDS), **widget("speed"))
    interval = SPEEDS[speed][0]
    animated = st.fragment(restaurants, run_every=interval if rg.playing else None)
    animated(chosen, priors, n_total, seed, speed, present)
    rule = st.expander("The seating rule, for every prior")
    rule.markdown("With $n$ customers seated at $K$ tables ($V_{n+1}(K)$: the prior's weight of $K$ tables among "
                  "the $n + 1$ customers once the newcomer sits; $W(n)$: its weight of a table of $n$):")
    rule.latex(r"p(\text{table } k) \propto \frac{W(N_k + 1)}{W(N_k)},\quad "
               r"p(\text{new}) \propto W(1)\,\frac{V_{n+1}(K + 1)}{V_{n+1}(K)}\qquad "
               r"\text{CRP: } N_k,\ \alpha;\ \ \text{pCRP: } N_k^{\,r},\ \alpha")


# ----------------------------------------------------------------------------- growth of K
@st.cache_data(max_entries=64)
def k_growth(prior, n_max, runs, seed):
    """Simulated K_N curves (runs, n_max): a pure function of its arguments, safe to share between users."""
    return simulate_k_growth_prior(prior, n_max, runs, seed=seed)


@st.cache_data(max_entries=64)
def tables_at(prior, n, runs, seed):
    return simulate_tables_prior(prior, n, runs, seed=seed)


def growth_section(priors, seed, present=False):
    """E[K_N] curves and the distribution of the tables after N customers, for the priors chosen here."""
    st.header("Growth of K")
    c = st.columns([3, 1])
    growth_chosen = c[0].multiselect("priors", prior_names(), format_func=lambda n: PRIORS[n].label,
                                     **widget("growth_priors"))
    runs = c[1].slider("simulated seatings per prior", 20, 200, step=10, **widget("runs"))
    growth_priors = [priors[n] for n in growth_chosen if n in priors]
    n_max = 1000
    N = np.arange(1, n_max + 1)
    curves = []
    for prior in growth_priors:
        sims = k_growth(prior, n_max, int(runs), seed)
        known = growth(prior, n_max)
        curves.append({"label": prior.spec.label, "N": N, "mean": sims.mean(axis=0),
                       "se": sims.std(axis=0, ddof=1) / np.sqrt(runs), "exact": known.exact, "limit": known.limit})
    if curves:
        title = f"E[K_N]: simulated (bands ±2 standard errors, {runs} seatings), exact dashed, limits dotted"
        chart(st, rplots.k_growth_priors(curves, title), present, "rgr-growth")
        notes = [(p.label(), growth(p, 1)) for p in growth_priors]
        st.markdown("\n".join(f"- **{label}**: {g.formula}" + (f"; K_N {g.rate}." if g.rate else ".")
                              for label, g in notes))
    else:
        st.info("Choose at least one prior for the growth of K.")

    n_at = st.radio("distribution of the tables after N customers", N_AT, horizontal=True,
                    format_func=lambda v: f"N = {v:,}", **widget("n_at"))
    if growth_priors:
        at = {p.spec.label: tables_at(p, int(n_at), int(runs), seed) for p in growth_priors}
        # one legend for the three charts, in the figures' own colours (registry labels, escaped all the same)
        st.html("<div style='font-size: 1rem'>Colours as above: " + " · ".join(
            f"<b style='color: {colour(i)}'>{html.escape(label)}</b>" for i, label in enumerate(at))
                + "</div>")
        cols = st.columns(3)
        chart(cols[0], rplots.distribution_lines({k: v["K"] for k, v in at.items()}, f"K_N at N = {n_at}",
                                                 "tables K", showlegend=False), present, "rgr-kdist")
        chart(cols[1], rplots.distribution_lines({k: v["largest_share"] for k, v in at.items()},
                                                 "share of the largest table", "largest table / N", integer=False,
                                                 x_range=(0, 1), showlegend=False), present, "rgr-largest")
        chart(cols[2], rplots.distribution_lines({k: v["singletons"] for k, v in at.items()},
                                                 "tables with one customer", "singletons", showlegend=False),
              present, "rgr-singletons")
        st.caption(" · ".join(f"{k}: mean K {v['K'].mean():.2f}, "
                              f"largest table {percent_text(v['largest_share'].mean())}, "
                              f"{v['singletons'].mean():.2f} singletons" for k, v in at.items())
                   + f" ({runs} seatings each).")


# ----------------------------------------------------------------------------- exchangeability
def exchangeability_section(chosen, priors, present=False):
    """The three-customer example and the probability of a partition by arrival order, for the priors chosen for
    the restaurant."""
    st.header("Exchangeability")
    compared = [priors[name] for name in chosen if name in priors]
    if compared:
        st.markdown("The paper's three-customer example: customers 1 and 2 at one table, or at two tables; where does "
                    "customer 3 sit?")
        st.markdown("\n".join(
            f"- **{p.label()}**: p(z3 = 2 | z1 = 1, z2 = 1) = "
            f"**{fraction_text(seating_probabilities_prior(p, [2])[-1], 3)}**, p(z3 = 1 | z1 = 1, z2 = 2) = "
            f"**{fraction_text(seating_probabilities_prior(p, [1, 1])[0], 3)}**" for p in compared))
    blocks_text = st.text_input("a partition, as block sizes (at most 8 customers)", **widget("blocks"))
    try:
        block_sizes = [int(v) for v in blocks_text.split(",")]
        if not block_sizes or min(block_sizes) < 1 or sum(block_sizes) > 8:
            raise ValueError
    except ValueError:
        st.error(f"'{inert(blocks_text)}' is not a list of positive block sizes adding up to at most 8, e.g. 3,1 "
                 "or 2,2,1.")
    else:
        if compared:
            orders = arrival_orders(block_sizes)
            letters = "ABCDEFGH"
            names = ["".join(letters[b] for b in o) for o in orders]
            probs = {p.label(): [order_probability_prior(o, p) for o in orders] for p in compared}
            title = f"p(partition {'/'.join(map(str, block_sizes))}) by arrival order"
            chart(st, plots.order_probabilities(names, probs, title), present, "rgr-orders")
            same = [k for k, v in probs.items() if max(v) - min(v) <= 1e-9 * max(v)]
            varies = [k for k in probs if k not in same]
            parts = [f"{k}: from {min(v):.4g} to {max(v):.4g}" for k, v in probs.items()]
            verdict = []
            if same:
                verdict.append(f"every order has the same probability under {' and '.join(same)}")
            if varies:
                verdict.append(f"under {' and '.join(varies)} it depends on who arrives when")
            verdict = "; ".join(verdict)
            st.caption(" · ".join(parts) + ". " + verdict[:1].upper() + verdict[1:] + ".")
    st.info("Why: under the pCRP the newcomer's chance of a new table, alpha / (alpha + sum of N_k^r), depends on "
            "the whole seating so far, not only on how many customers and tables there are, so the sequential "
            "seating is not exchangeable. For a fixed data set the Gibbs sampler does not seat customers in arrival "
            "order: it targets the exchangeable partition distribution p(z) = V_N(K) ∏ W(N_k) (for the pCRP ∝ "
            "alpha^K ∏ ((N_k - 1)!)^r), whose full conditionals are exactly the seating weights above.")


# ----------------------------------------------------------------------------- one customer, real posterior
@st.cache_data(max_entries=8)
def posterior_state(name, seed):
    """A posterior draw (300 sweeps) of a small built-in data set (a label of CHOICE_DATA) under the reference
    prior (the CRP, at its registry defaults): the partition every prior is shown on."""
    ds = choice_data(name)
    niw = resolve_niw(ds.X)
    reference = make_prior(default_pair()[0])
    chain = run_chain(ds.X, reference, niw, iters=300, burn_in=299, thin=1, seed=seed)
    return ds, niw, chain.labels[-1]


@st.cache_data(max_entries=32)
def disagreement(name, seed, priors):
    """Per point: the largest total-variation distance between the priors' full conditionals (pcrp.teaching.one_customer
    .contrast) on the draw of posterior_state."""
    ds, niw, labels = posterior_state(name, seed)
    return contrast(ds.X, labels, niw, list(priors))[0]


def one_customer_section(chosen, priors, seed, present=False):
    """Algorithm 1's inner loop for one point of a real posterior draw, under each prior chosen for the restaurant,
    the pCRP at the shown data set's own r."""
    st.header("One customer's choice in a real posterior")
    st.markdown("Algorithm 1's inner loop: take one point out of its cluster, weigh each cluster's seating prior by "
                "the point's posterior predictive density, and sample from the normalised products:")
    st.latex(r"p(z_i = k \mid z_{-i}, X) \propto \frac{W(N_{k,-i} + 1)}{W(N_{k,-i})}\, p(x_i \mid X_{k,-i}),\qquad "
             r"p(z_i = \text{new} \mid z_{-i}, X) \propto W(1)\frac{V_N(K + 1)}{V_N(K)}\, p(x_i)")
    c = st.columns([1, 3])
    dataset_name = c[0].radio("data", list(CHOICE_DATA), **widget("choice_data"))
    r, provenance = data_r(CHOICE_DATA[dataset_name])
    compared = with_data_r([priors[name] for name in chosen if name in priors], CHOICE_DATA[dataset_name])
    if any(p.name == DEFAULT_PRIOR for p in compared):
        c[0].caption(f"The {PRIORS[DEFAULT_PRIOR].label} here: r = {r:g}, cross-validated for {dataset_name}.",
                     help=provenance)
    if not sampler_ready("full"):  # a chain (full covariances): its sweep's separate compile first
        return
    ds, niw, labels = posterior_state(dataset_name, seed)
    sizes = np.bincount(labels)
    smallest = int(np.flatnonzero(labels == np.argmin(np.where(sizes > 0, sizes, ds.n + 1)))[0])
    tv = disagreement(dataset_name, seed, tuple(compared)) if len(compared) >= 2 else None
    informative = int(np.argmax(tv)) if tv is not None else smallest
    rg = part()
    if rg.point_for != (dataset_name, seed) or rg.settings["point"] >= ds.n:
        rg.settings["point"] = informative  # a new draw: start at the point the priors disagree on most
        rg.point_for = (dataset_name, seed)
    if c[0].button("a point of the smallest cluster", key="rgr_pick_small"):
        rg.settings["point"] = smallest
    if tv is not None and c[0].button("the point the priors disagree on most", key="rgr_pick_informative"):
        rg.settings["point"] = informative
    point = c[1].slider("point", 0, ds.n - 1, **widget("point"))
    if tv is not None:
        c[0].caption(f"Point {informative} is where the priors' choices differ most (total variation "
                     f"{tv[informative]:.2f}); for {percent_text(np.mean(tv < 0.01))} of the points they differ by "
                     "under 0.01, because the predictive densities decide.")
    chart(c[1], plots.highlight_point(ds.X, labels, point, ds.columns,
                                      f"{dataset_name}: a CRP posterior draw, point {point} ringed"),
          present, "rgr-choice-scatter")
    if compared:
        cols = st.columns(len(compared))
        for col, prior in zip(cols, compared):
            choice = seating_choice(ds.X, labels, point, niw, prior)
            chart(col, rplots.choice_bars(choice, f"{prior.label()}: where point {point} goes"), present,
                  f"rgr-choice-{prior.name}")
        st.caption("Every panel uses the same partition of the other points and the same predictive densities; only "
                   "the prior weights differ. Under the pCRP the big clusters' weights grow as N_k^r, so a point that "
                   "fits a small cluster is pulled towards a big one unless its predictive clearly prefers the small "
                   "one.")


def further(chosen, priors, seed, present=False):
    """The slower parts, one at a time and only when chosen, so that the page stays a restaurant on a projector."""
    shown = st.segmented_control("Go further", list(FURTHER), format_func=FURTHER.get,
                                 help="Each part runs simulations or a posterior draw when chosen; none by default.",
                                 **widget("further"))
    if shown == "growth":
        growth_section(priors, seed, present)
    elif shown == "exchangeability":
        exchangeability_section(chosen, priors, present)
    elif shown == "one_customer":
        one_customer_section(chosen, priors, seed, present)


def page():
    """Rich get richer, top to bottom (in Present, the Lesson's presentation mode): the part's settings after what
    the address brings (?present=), the address written from them, then the page."""
    rg = part()
    problems = follow_address(rg, {"present": read_present})
    write_address(rg, {"present": present_text(rg.settings["present"])})
    present = rg.settings["present"]
    present_style(present, PRESENT_EXTRA)
    with st.container(key=PAGE_KEY):
        introduction(present, problems[0] if problems else None)
        chosen, n_total, seed, priors = prior_choices()
        restaurant_section(chosen, priors, n_total, seed, present)
        further(chosen, priors, seed, present)


page()
