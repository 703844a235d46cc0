"""One browser session's state, as one typed object: :class:`PageSession` (no Streamlit here).

A Streamlit session keeps ONE PageSession (``app_pages.shared.page_session``, under one key of st.session_state):
nothing else is in st.session_state but the keys Streamlit gives the widgets and components on the page shown. Each
page owns a part of it, made on its first visit: the Explorer its :class:`ExplorerState` (``session.explorer``), the
Lesson, Rich get richer, Choose r and Reproduce a :class:`PagePart` each (``session.lesson``,
``session.rich_get_richer``, ``session.choose_r``, ``session.reproduce``: the page's settings, from which its
widgets and its address are drawn, and what it computed). The Explorer and Choose r meet in it: Choose r clusters the
Explorer's data set (``ExplorerState.dataset``) and hands it an r (``PageSession.sent_r``).

The one copy of each Explorer setting is ``ExplorerState.settings`` ({declared name: value}, the names and values of
pcrp.app.explorer_settings). The address is written from it at the end of each page run; a widget's key exists only
because Streamlit needs one, and the widget's callback writes its value into the object at once.

What a PageSession holds, and its memory (bounded):

- the browser's key and this session's claim on its runs (:class:`pcrp.app.fair_share.SessionOwner`): bytes;
- the Explorer's settings: one value per declared setting (about 70), a few KB;
- the run the Explorer shows: a reference only; a run's buffers are its own plan (at most
  :data:`pcrp.app.live_storage.SESSION_BUDGET_BYTES`), counted and freed by the server's registry;
- an uploaded data set in use (:class:`CsvChoice`): at most ``APP_MAX_ROWS`` x ``MAX_CLUSTER_COLUMNS`` float64
  values, 40 MB, with its labels;
- one run's view (:class:`RunView`), replaced whole when another run is shown, at most
  :meth:`RunView.budget_bytes` (:meth:`ExplorerState.nbytes` measures what it holds);
- the other pages' parts: the Lesson's and Rich get richer's a few numbers (their figures' numbers are cached for
  every session); Choose r's its last result (:class:`ChooseRResult`, a few KB); Reproduce's the last result of
  each experiment (:class:`ReproduceState`, each within :meth:`ReproduceState.result_bytes`: a few MB for a quick
  run, 240 million bytes of label draws for the largest full run its budget allows).

:meth:`PageSession.close` is the one cleanup call: Streamlit makes it when the session disconnects (a closed tab, a
reload, a lost network). The session's runs then stop after their grace unless it comes back, its fits (Choose r's,
Reproduce's) are cancelled, and everything above but the settings and the key is let go at once (Streamlit keeps a
disconnected session for a while in case its browser reconnects); a session that does come back looks for its
browser's run again, as a reload does.
"""

import time
from dataclasses import dataclass, field

import numpy as np

from ..sampling.compute import SessionWork
from .fair_share import SessionOwner
from .live_view import DISPLAY_POINTS


@dataclass
class CsvChoice:
    """An uploaded file as the Explorer uses it. dataset: the pcrp.data.Dataset that Start clusters (None until "Use
    this CSV"); key: what identifies it, ("csv", file name, file id, columns, label column, standardised); upload:
    the file in the uploader, {"name": ..., "refused": message or None}, or None."""

    dataset: object = None
    key: tuple = None
    upload: dict = None

    def drop(self):
        """No uploaded data in use any more (a new file in the uploader, or a refused one)."""
        self.dataset = self.key = None


@dataclass
class Notices:
    """One-time messages: queued where nothing may be drawn (a button's callback, the first visit) and shown once
    by the page. toast: a notice for the live panel; start_error: why Start or Resume did nothing (the library's own
    words); address_problems: settings of the address that were refused; run_in_address: the address named a run (an
    older version's); missing_run: the run this tab showed is no longer kept."""

    toast: str = None
    start_error: str = None
    address_problems: list = field(default_factory=list)
    run_in_address: bool = False
    missing_run: bool = False

    def take(self, name):
        """The notice ``name``, cleared (shown once)."""
        value = getattr(self, name)
        setattr(self, name, getattr(Notices(), name))
        return value


@dataclass
class RunView:
    """What the Explorer computes to draw one run and keeps between its frames, all of it recomputable from the run;
    made for one run (``token``) and dropped whole when another is shown.

    nmi, rhat: {group: (time computed, value[, whether the run was running])}; projection: the PCA view of data with
    more than two columns (pcrp.data.projection); colour_reference: (N,) the top row's colours at the last redraw
    (data without true labels); shown_colours: {group: (N,) the colours each row was drawn in}; feeds: {group:
    pcrp.app.live_frames.RowFeed of its canvas}; parts: what each row shows of its partition, {"key", "parts",
    "next"}; k_axis: the top of the K axes; k_hist_after: {group: whether a kept sweep was drawn}; crp_reference:
    (key, the clusters the CRP row keeps); summaries: {group: ((kept draws, sweeps), PosteriorSummary)}, the latest
    only; summarised: the visitor asked for the posterior summary; end_shown: the frame that says the run ended was
    drawn; replay: the replay slider's sweep ("now": the latest)."""

    token: str
    nmi: dict = field(default_factory=dict)
    rhat: dict = field(default_factory=dict)
    projection: object = None
    colour_reference: object = None
    shown_colours: dict = field(default_factory=dict)
    feeds: dict = field(default_factory=dict)
    parts: dict = None
    k_axis: int = 0
    k_hist_after: dict = field(default_factory=dict)
    crp_reference: tuple = None
    summaries: dict = field(default_factory=dict)
    summarised: bool = False
    end_shown: bool = False
    replay: str = "now"

    @staticmethod
    def budget_bytes(n_points, n_rows, n_chains, plan_bytes, dim=2):
        """The most a RunView of a run of ``n_rows`` rows of ``n_chains`` chains each on ``n_points`` points of
        ``dim`` columns holds, in bytes, its run's buffers taking ``plan_bytes`` (the run's plan):

        - per row, colours of every point three times (the reference, the colours shown, the parts' copy: int64)
          and its canvas feed and parts (the displayed points' coordinates and colours, a 1-D density's 200-point
          grid with a term per cluster, MNIST's mean digits: at most 64 KB beside the points);
        - the PCA view of wide data: N x 2 float64;
        - the posterior summaries, once asked for (one per row, the latest only): copies of the rows' kept draws and
          traces (at most the run's plan) and per row a similarity matrix of at most
          :data:`pcrp.analyses.posterior.MAX_POINTS` points squared (float32), the point estimate's labels and
          confidences, the posterior density on its grid.
        """
        from ..analyses.posterior import MAX_POINTS

        shown = min(n_points, DISPLAY_POINTS)
        per_row = 3 * 8 * n_points + shown * (2 * 8 + 8) + 64 * 2**10
        projection = 2 * 8 * n_points if dim > 2 else 0
        psm_points = min(n_points, MAX_POINTS)
        summary = psm_points ** 2 * 4 + 3 * 8 * n_points + 2**20
        return n_rows * per_row + projection + plan_bytes + n_rows * summary


@dataclass
class ExplorerState:
    """The Explorer's part of a session (see the module docstring).

    settings: the one copy of each setting, {declared name: value} (pcrp.app.explorer_settings: data, rows, each row's
    prior and parameters, the run's settings, pace, present); niw: the cluster prior's settings for the data set
    shown, {"data": its key, "kappa0", "nu0", "S0"} (the data's defaults until changed; not in the address);
    tuned_by_visitor: the rows' tuned settings ("r2") that
    the visitor chose (the address, the widget, Choose r's "use this r"): the data set's value never replaces them;
    tuned_origin: {tuned setting: how it was chosen, in words; None: with the widget}; run: the
    pcrp.app.live_runs.LiveRun shown, or None; find_run: whether to look for this browser's latest run (the first
    visit, or a session coming back after :meth:`close`); csv: the uploaded data (:class:`CsvChoice`); notices:
    one-time messages (:class:`Notices`); start_pending: Start waits for the kernels' compile; app_rerun: the page
    must be drawn whole at the live panel's next run; press_redraw: that page run follows a press (its drawing goes
    before the waiting frames, as the press's own did); polling, frame_seconds: whether and how often the live panel
    redraws itself; status_run: (run token, its number on this page), counted per session; run_view: the
    :class:`RunView` of the run shown (read it through :meth:`view`)."""

    settings: dict
    niw: dict = None
    tuned_by_visitor: set = field(default_factory=set)
    tuned_origin: dict = None
    run: object = None
    find_run: bool = True
    csv: CsvChoice = field(default_factory=CsvChoice)
    notices: Notices = field(default_factory=Notices)
    start_pending: bool = False
    app_rerun: bool = False
    press_redraw: bool = False
    polling: bool = False
    frame_seconds: float = None
    status_run: tuple = None
    run_view: RunView = None
    # the data set shown (a built-in one, shared by every session, or the CSV's), which Choose r clusters too
    dataset: object = None

    def view(self, run):
        """The :class:`RunView` of ``run``: the one kept, or a new one when it was another run's (whose caches go)."""
        if self.run_view is None or self.run_view.token != run.token:
            self.run_view = RunView(run.token)
        return self.run_view

    def show(self, run):
        """Show ``run`` (a new one, or one found again); its view starts empty."""
        self.run = run
        self.run_view = None if run is None else RunView(run.token)

    def status_number(self, run):
        """A number telling this session's runs apart on the page (a server-wide count would tell a visitor how many
        runs others started; the run's token is never shown)."""
        if self.status_run is None or self.status_run[0] != run.token:
            self.status_run = (run.token, (self.status_run[1] if self.status_run else 0) + 1)
        return self.status_run[1]

    def let_go(self, owner, reason):
        """Reset: stop the run shown and let it go for good, so that no reload of this browser finds it again
        (:func:`discard_run`). Nothing shown afterwards."""
        run, self.run, self.run_view = self.run, None, None
        if run is not None:
            discard_run(run, owner, reason)

    def close(self):
        """The session ended: let go of the run, the uploaded data, the view and the messages (the settings stay: a
        session that comes back keeps them, and :attr:`find_run` makes it look for its browser's run again)."""
        self.run, self.run_view, self.dataset = None, None, None
        self.find_run = True
        self.csv = CsvChoice()
        self.notices = Notices()
        self.start_pending = self.app_rerun = self.press_redraw = self.polling = False
        self.frame_seconds = None

    def nbytes(self):
        """Bytes of the arrays this object holds itself: the uploaded data set and the run's view (the run's buffers
        are the registry's, a built-in data set is shared by every session)."""
        seen = set()
        return _array_bytes(self.run_view, seen) + (
            _array_bytes(self.csv.dataset, seen) if self.csv.dataset is not None else 0)


def discard_run(run, owner, reason):
    """Stop ``run``, end ``owner``'s claim on it and free its buffers: a reset or replaced run, which no reload of its
    browser may find again. Its buffers are freed once no chain has a call in flight (at most the chains' settle
    time), unless another session (a second tab of the same browser) still shows it; in every case its browser no
    longer finds it (pcrp.app.fair_share.RunRegistry.latest_for reads ``browser``, None: no browser's)."""
    run.stop(reason)
    run.browser = None
    run.release(owner.id)
    if run.wait_settled(0):
        run.discard()


def _array_bytes(obj, seen, depth=0):
    """Bytes of the numpy arrays reachable from ``obj`` through containers and objects' attributes (each counted
    once)."""
    if obj is None or id(obj) in seen or depth > 12:
        return 0
    seen.add(id(obj))
    if isinstance(obj, np.ndarray):
        base = obj if obj.base is None else obj.base
        if isinstance(base, np.ndarray) and base is not obj:
            if id(base) in seen:
                return 0
            seen.add(id(base))
            return base.nbytes
        return obj.nbytes
    if isinstance(obj, (str, bytes, int, float, bool)):
        return len(obj) if isinstance(obj, (str, bytes)) else 0
    if isinstance(obj, dict):
        items = list(obj.keys()) + list(obj.values())
    elif isinstance(obj, (list, tuple, set, frozenset)) or type(obj).__name__ == "deque":
        items = list(obj)
    elif hasattr(obj, "__dict__"):
        items = list(vars(obj).values())
    elif hasattr(obj, "__slots__"):
        items = [getattr(obj, s, None) for s in obj.__slots__]
    else:
        return 0
    return sum(_array_bytes(item, seen, depth + 1) for item in items)


@dataclass
class PagePart:
    """What the part of every page but the Explorer has (the Explorer's is :class:`ExplorerState`, in the same design).

    settings: the one copy of each of the page's settings, {name: value}: its widgets are drawn from it (a widget's
    key exists because Streamlit needs one; its change is written back at once: app_pages.shared.bind) and so is its
    part of the address; address: {name: text} of the address as the page last wrote it, so that an address the
    visitor brings (a link, a reload, the browser's Back) is told from the page's own and read into the settings
    (app_pages.shared.follow_address)."""

    settings: dict
    address: dict = field(default_factory=dict)

    def close(self):
        """The session ended: let go of what the part computed (the settings stay, as the Explorer's do)."""

    def nbytes(self):
        """Bytes of the arrays the part holds itself (what it computed; a built-in data set is every session's)."""
        return _array_bytes(self, set())


@dataclass
class LessonState(PagePart):
    """The Lesson's part: settings {"step": the step shown, "customers": the first step's seated customers,
    "present": presentation mode}; the steps' numbers are cached for every session (st.cache_data), not here.
    Memory: three numbers."""


@dataclass
class RichGetRicherState(PagePart):
    """Rich get richer's part: settings {"priors", "n" (customers), "seed", "speed", "further" (the part of "Go
    further" shown), "growth_priors", "runs", "n_at", "blocks", "choice_data", "point", "present"} and each registry
    parameter shown, under the name of its widget's key without "rgr_"; shown: customers seated now; playing: the
    animation runs; point_for: (data set, seed) of the posterior draw that ``settings["point"]`` belongs to. The
    seatings, simulations and posterior draws are cached for every session (st.cache_data), not here. Memory: a few
    dozen numbers and names."""

    shown: int = 1
    playing: bool = False
    point_for: tuple = None

    def close(self):
        self.playing = False  # a session that comes back shows the restaurant paused


@dataclass
class ChooseRResult:
    """What one press of Choose r's Run computed, replaced whole by the next: cv (pcrp.analyses.cv.CVResult),
    k_curve (the clusters the sampler keeps for each r), path (the merge path of a CRP fit), check (the checked r,
    pcrp.analyses.cv.check_with_chains), covariance_type (the type whose r was chosen), types (the three types
    compared, or None), data_description (the data it ran on, in words)."""

    cv: object
    k_curve: object
    path: object
    check: dict
    covariance_type: str
    types: object = None
    data_description: str = ""


@dataclass
class ChooseRState(PagePart):
    """Choose r's part: settings {cross validation's settings (pcrp.analyses.cv.CV_PARAMS' names: "r_start", "r_stop",
    "r_step", "folds", "iters", "burn_in", "seed", "repeats"), "covariance", "use_r" (the r the page hands to the
    Explorer), "present"}; covariance_chosen: the visitor chose a covariance type other than the Explorer's rows'
    (until then the page follows the Explorer's); result: the last run's :class:`ChooseRResult`, or None.

    Memory: one result, whose arrays grow with the r grid and the folds (each at most their declared bounds, and a
    run within pcrp.analyses.cv.CHOOSE_R_BUDGET): the loss and log predictive per split and r, the clusters per r,
    the merge path's steps (one per cluster of the CRP fit); 8 KB at the page's defaults on Old Faithful
    (:meth:`PagePart.nbytes` measures it; tests/test_page_parts.py). The data set is the Explorer's (a reference)."""

    covariance_chosen: bool = False
    result: ChooseRResult = None

    def close(self):
        self.result = None


@dataclass
class ReproduceState(PagePart):
    """Reproduce's part: settings {"experiment" (its title), "mode" ("quick" or "full"), "seed", "sets_quick",
    "sets_full" (data sets of each protocol), "extra"}; results: {experiment key: (protocol name, first data seed,
    pcrp.experiments.reproduce.SeedsResult)}, the last run of each experiment (another run replaces it).

    Memory: at most one result per experiment of pcrp.experiments.reproduce.EXPERIMENTS, each within
    :meth:`result_bytes`, mostly the first data set's kept label draws, which the page's figures read: a few MB for
    a quick run; for the largest full run the page's work budget lets through (MNIST at N = 3,000) 5 methods x 4
    chains x 2,000 kept draws of 3,000 two-byte labels, 240 million bytes; by that bound a session that ran every
    experiment at its largest holds at most about 920 million bytes, until it closes."""

    results: dict = field(default_factory=dict)

    @staticmethod
    def result_bytes(n_points, n_cv_points, dim, n_sets, n_methods, n_chains, iters, burn_in, thin):
        """The most one stored result holds, in bytes (pcrp.experiments.reproduce.SeedsResult): per data set its data
        and cross-validation sample (points x (d + 1) float64), per method each chain's record (K and the log joint
        of every sweep and its kept label draws, pcrp.basics.dtypes.record_bytes: every kept draw on the first data
        set, the last one on the others) and 1 MiB for the cross validation's curves, the diagnostics and the
        summaries."""
        from ..basics.dtypes import record_bytes

        kept = -(-(iters - burn_in) // thin)
        per_set = (n_points + n_cv_points) * 8 * (dim + 1) + 2**20
        chains = n_methods * n_chains
        return (n_sets * per_set + chains * record_bytes(n_points, iters, kept)
                + (n_sets - 1) * chains * record_bytes(n_points, iters, 1))

    def close(self):
        self.results = {}


@dataclass
class PageSession:
    """One browser session's state (see the module docstring). browser_key: this browser's signed key
    (pcrp.app.browser_keys), verified once per session; key_stored: the browser already holds it (no need to store it
    again); owner: this session's claim on runs; explorer: the Explorer's part, made on the page's first visit (it
    needs the address); lesson, rich_get_richer, choose_r, reproduce: the other pages' parts, each made on its page's
    first visit; work: the session's fits outside live runs (Choose r's and Reproduce's tickets,
    pcrp.sampling.compute.SessionWork: a new one cancels the one before); sent_r: the r Choose r's "use this r"
    hands to the Explorer, taken once by its next run (:meth:`take_sent_r`)."""

    browser_key: str = None
    key_stored: bool = False
    owner: SessionOwner = field(default_factory=SessionOwner)
    explorer: ExplorerState = None
    created: float = field(default_factory=time.monotonic)
    lesson: LessonState = None
    rich_get_richer: RichGetRicherState = None
    choose_r: ChooseRState = None
    reproduce: ReproduceState = None
    work: SessionWork = field(default_factory=SessionWork)
    sent_r: float = None

    def parts(self):
        """The pages' parts made so far."""
        return [part for part in (self.explorer, self.lesson, self.rich_get_richer, self.choose_r, self.reproduce)
                if part is not None]

    def take_sent_r(self):
        """The r that Choose r's "use this r" sent to the Explorer, once (None when none was sent since)."""
        sent, self.sent_r = self.sent_r, None
        return sent

    def close(self):
        """The one cleanup call when the session ends: its runs stop after their grace unless it comes back
        (SessionOwner.release_all), its fits (Choose r's, Reproduce's) are cancelled and stop within about a second
        (SessionWork.cancel_all), and each page's part lets go of what it holds."""
        self.owner.release_all()
        self.work.cancel_all("the page was closed or reloaded")
        self.sent_r = None
        for part in self.parts():
            part.close()
