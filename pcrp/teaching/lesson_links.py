"""The Explorer's settings that show a lesson step live (:func:`explorer_values`, written as an address by
:func:`pcrp.app.explorer_settings.demo_link`), the r a step's link may name (:func:`names_r`), and the Explorer's
address from the lesson's (:func:`explorer_address`)."""

from urllib.parse import urlsplit, urlunsplit

from .lesson import OLD_FAITHFUL, PATH_SIZES, SIM1, STEPS, reference_prior, settings, tuned_name


# ----------------------------------------------------------------------------- the Explorer's settings of a step
def explorer_values(step, lesson_settings=None, *, r=None, rival=None, present=False):
    """The Explorer's settings ({name: value}, :mod:`pcrp.app.explorer_settings`) that show step ``step`` (a
    :class:`pcrp.teaching.lesson.Step` number) live: its data set (Sim 1 at the largest N of PATH_SIZES in step 5,
    Sim 1 in step 7, Old Faithful otherwise), the CRP above the pCRP (or above ``rival``, a registry name, in step 7),
    the pCRP at ``r`` (the r the step talks about; None: the Explorer's default), and in steps 3 and 4 the lesson's
    seed, sweeps and chains (``lesson_settings``: :func:`pcrp.teaching.lesson.settings`; chains capped at what the
    Explorer allows). ``present``: the Explorer in presentation mode too."""
    from ..app import explorer_settings as es

    s = lesson_settings or settings()
    values = es.defaults()
    key = STEPS[step - 1].key
    values["data"] = SIM1 if key in ("threshold", "compare") else OLD_FAITHFUL
    if key == "threshold":
        values["sim_n"] = max(PATH_SIZES)
    if key in ("crp", "pcrp"):
        values.update(sweeps=s["sweeps"], burn_in=s["burn_in"], seed=s["seed"],
                      chains=min(s["chains"], int(es.LIVE_PARAMS["chains"].high)))
    rows = {1: reference_prior().name, 2: tuned_name()}
    if key == "compare" and rival is not None:
        rows[1] = rival
    for row, name in rows.items():
        values[es.prior_key(row)] = name
        es.reset_row(values, row)
    if r is not None:
        values[explorer_r_key()] = float(r)
    values["present"] = bool(present)
    return values


# The step whose terms first define r (the pCRP's power, step 2's "pCRP"): no label names r before it.
R_DEFINED_AT = "growth"


def names_r(step):
    """Whether step number ``step`` may name r (in its Explorer link's label): r is defined by then."""
    return step >= next(s.number for s in STEPS if s.key == R_DEFINED_AT)


def explorer_r_key():
    """The Explorer's setting of the pCRP row's r (row 2)."""
    from ..app import explorer_settings as es
    from ..model import PRIORS

    return es.row_key(PRIORS[tuned_name()].tuned, 2)


def explorer_address(lesson_url):
    """The Explorer's address (the app's default page, its root) from the lesson page's own address
    (``http://host/base/lesson?step=3`` -> ``http://host/base/``); '' when unknown."""
    parts = urlsplit(lesson_url or "")
    if not parts.netloc:
        return ""
    path = parts.path.rstrip("/").rpartition("/")[0] + "/"
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))
