"""The Explorer's "What to watch for" line, true at the settings it is shown with (no Streamlit here).

The line has two parts:

- what the data hold (:func:`description`), computed from the settings, so it holds at any of them: Old Faithful's
  two eruption types, the simulations' declared clusters (pcrp.data.builtin_sets.SIMULATIONS), the MNIST digits
  and embedding chosen;
- what the Explorer's demo shows there, in figures measured by ``bench/default_demo.py`` and shipped in
  :data:`FIGURES_FILE` (pcrp/app/demo_figures.json), each entry with the settings it was measured at
  (:func:`measured_settings`: the data set and its settings (N, data seed, digits, embedding, dimensions), the
  clusters' covariance type, the rows' priors with every parameter (the pCRP's r), the run's sweeps, burn-in, chains,
  start and split-merge moves, and the cluster prior at the data's defaults). These sentences are shown only where
  every one of those settings is the entry's; under any other settings they are left out, never shown with a
  footnote. The run seed, the pace and the thinning are not among them: the figures are averages over run seeds, and
  the pace and thinning change neither the chains nor what a kept draw holds on average.

The figures come from the file, never from prose: a shipped r that changes (pcrp/datasets/cv_r.json) moves the
default settings away from every entry, and tests/test_explorer_notes.py fails until the figures are measured again
(:data:`WRITE_COMMAND`).
"""

import functools
import json

from ..data.builtin_sets import SIMULATIONS
from . import explorer_settings as es

FIGURES_FILE = "demo_figures.json"
WRITE_COMMAND = "python bench/default_demo.py --write pcrp/app/demo_figures.json"
# A row's chains "settle in different places" in a measurement when R-hat of K between them is above this in some
# run (pcrp.summaries.summary.RHAT_THRESHOLD is the badge's 1.01; a measurement of 2 chains x 1,500 kept sweeps reads
# up to about 1.05 for chains that agree, so only a clear disagreement is worded).
DISAGREE_RHAT = 1.1
# The share of kept draws in which a row merges true classes above which the line says it merges them.
MERGE_SHARE = 0.5


@functools.lru_cache(maxsize=1)
def _file_text():
    from importlib import resources

    return (resources.files("pcrp") / "app" / FIGURES_FILE).read_text(encoding="utf-8")


def figure_entries():
    """Every entry of :data:`FIGURES_FILE`: {"settings": :func:`measured_settings` of the run measured, "types": the
    covariance types it serves (all three at d = 1, where they are one model), "seeds", "rows": one figures dict per
    row (:func:`pcrp_figures` in bench/default_demo.py: prior, label, k, k_chains, big, tiny, nmi, merged, rhat_k),
    "contrast": the pCRP at another r on the same data ({"r", "figures"}) or None, "command", "date"}."""
    return json.loads(_file_text())["entries"]


def _number(value):
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else value


def measured_settings(values, niw_default=True):
    """The settings of ``values`` (the Explorer's) that a figure of the demo depends on, as a JSON-able dict: data
    and data settings, covariance type, the rows' priors with their parameters, the run's sweeps, burn-in, chains,
    start and split-merge moves, and whether the cluster prior is the data's default (``niw_default``)."""
    return {
        "data": es.setting_value(values, "data"),
        "data_settings": es.data_settings(values),
        "covariance": es.setting_value(values, "covariance"),
        "rows": [{"prior": values[es.prior_key(row)],
                  **{k: _number(v) for k, v in es.row_params(values, row).items()}} for row in es.active_rows(values)],
        "run": {name: _number(es.setting_value(values, name)) if name not in ("start", "split_merge")
                else es.setting_value(values, name) for name in ("sweeps", "burn_in", "chains", "start", "split_merge")},
        "niw": "the data's defaults" if niw_default else "changed",
    }


def find_entry(values, niw_default=True):
    """The entry of :func:`figure_entries` measured at exactly the settings of ``values`` (its covariance type among
    those the entry serves), or None."""
    now = measured_settings(values, niw_default)
    for entry in figure_entries():
        measured = entry["settings"]
        if now["covariance"] not in entry["types"]:
            continue
        if all(now[key] == measured[key] for key in now if key != "covariance"):
            return entry
    return None


def _weights(ws):
    """".3/.4/.3", ".30/.26/.44": mixture weights with the decimals the finest of them needs."""
    places = 1 if all(abs(round(w, 1) - w) < 1e-12 for w in ws) else 2
    return "/".join(f"{w:.{places}f}".lstrip("0") for w in ws)


def description(values):
    """What the data that ``values`` choose hold, in a few words that hold at any of their settings; None for a
    CSV."""
    name = es.setting_value(values, "data")
    if name == "old-faithful":
        return "two eruption types, short and long (no true labels)."
    if name in SIMULATIONS:
        sim = SIMULATIONS[name]
        sds = sim["sds"]
        means = sim["means"]
        gaps = [(b - a) / max(s, t) for a, b, s, t in zip(means, means[1:], sds, sds[1:])]
        apart = "well-separated " if min(gaps) >= 4 else ""
        if len(set(sds)) == 1:
            return (f"three {apart}clusters of one spread (sd {sds[0]:g}; weights {_weights(sim['weights'])}), "
                    f"{es.setting_value(values, 'sim_n'):,} points.")
        return (f"three {apart}clusters, narrow to wide (sds {', '.join(f'{s:g}' for s in sds)}; weights "
                f"{_weights(sim['weights'])}), {es.setting_value(values, 'sim_n'):,} points.")
    if name == "mnist":
        digits = [int(d) for d in es.setting_value(values, "digits")]
        dims = int(es.setting_value(values, "dims"))
        shown = "digits " + (f"{digits[0]}-{digits[-1]}" if len(digits) > 2 and digits == list(
            range(digits[0], digits[-1] + 1)) else ", ".join(map(str, digits))) if digits else "no digits"
        view = " (the clusters view shows its first two principal components)" if dims > 2 else ""
        return (f"{shown} in a {dims}-D {es.setting_value(values, 'embedding')} embedding{view}, "
                f"{es.setting_value(values, 'mnist_n'):,} images.")
    return None


def _counts(f):
    return f"{f['big']:.1f} clusters + {f['tiny']:.1f} tiny on average (mean K {f['k']:.1f})"


def _merges(f):
    return f.get("merged") is not None and f["merged"] >= MERGE_SHARE


def short_figure_words(entry):
    """The figures of ``entry`` in one sentence for presentation mode (a projector's rows need the screen): each
    row's clusters + tiny ones on average after burn-in, nothing else."""
    rows = entry["rows"]
    return (f"Measured at these settings (mean of {len(entry['seeds'])} runs, after burn-in): "
            + "; ".join(f"{f['label']}{_tuned(f)}: {f['big']:.1f} clusters + {f['tiny']:.1f} tiny" for f in rows)
            + ".")


def figure_words(entry, true_classes=None, cv_blew_up=False):
    """The sentences of the figures measured in ``entry`` (an entry of :func:`figure_entries`), in the row headings'
    terms: clusters of at least 2% of the points + tiny ones, mean K after burn-in, NMI; which row's chains settled in
    different places, which row merges true classes (``true_classes``: their number, for the words about clusters
    beyond them, said with why cross validation keeps them where its loss rose within its grid, ``cv_blew_up``: a
    grid that never saw the loss rise says nothing of the clusters), and the pCRP at the contrast r."""
    rows = entry["rows"]
    seeds = entry["seeds"]
    run = entry["settings"]["run"]
    said = [f"the {f['label']}{_tuned(f)} shows {_counts(f)}" for f in rows]
    parts = [f"Measured at exactly these settings (mean over {len(seeds)} run{'s' if len(seeds) != 1 else ''} of "
             f"{int(run['chains'])} chains x {int(run['sweeps']):,} sweeps, run seed{'s' if len(seeds) != 1 else ''} "
             f"{', '.join(str(s) for s in seeds)}, after burn-in): " + ", ".join(said)
             + (f"; NMI {' and '.join(format(f['nmi'], '.2f') for f in rows)}" if all(
                 f.get("nmi") is not None for f in rows) else "") + "."]
    for f in rows:
        spread = [k for run_k in f["k_chains"] for k in run_k]
        if max(f["rhat_k"]) > DISAGREE_RHAT:
            parts.append(f"The {f['label']}'s chains disagree (R-hat of K up to {max(f['rhat_k']):.2f} between the two "
                         f"chains of a run; mean K per chain {', '.join(f'{k:.1f}' for k in spread)}): its figures "
                         "depend on where its chains started.")
    merging = [f for f in rows if _merges(f)]
    keeping = [f for f in rows if f.get("merged") is not None and not _merges(f)]
    for f in merging:
        parts.append(f"The {f['label']} merges true classes in {f['merged']:.0%} of its kept draws"
                     + (f", which the {keeping[0]['label']} keeps apart in {1 - keeping[0]['merged']:.0%} of its own"
                        if keeping else "") + ".")
    tuned = rows[-1]
    if (true_classes is not None and entry["settings"]["data"] == "mnist" and tuned["big"] > true_classes + 0.5
            and tuned.get("r") is not None and cv_blew_up):
        parts.append(f"The {tuned['label']} keeps more clusters than the {true_classes} digits: a digit's cloud is "
                     "not one Gaussian, and cross validation, which never sees the labels, keeps the extra clusters "
                     "because they fit the held-out points' positions better.")
    contrast = entry.get("contrast")
    if contrast:
        q = contrast["figures"]
        parts.append(f"At r = {contrast['r']:g} the {q['label']} shows {_counts(q)}"
                     + (f", NMI {q['nmi']:.2f}" if q.get("nmi") is not None else "")
                     + (f", and merges true classes in {q['merged']:.0%} of its kept draws" if _merges(q) else "")
                     + ".")
    return " ".join(parts)


def _tuned(f):
    return f" at r = {f['r']:g}" if f.get("r") is not None else ""


def watch_line(values, niw_default=True, short=False):
    """The "What to watch for" line of the settings ``values`` (the Explorer's), or None (a CSV): what the data hold
    (:func:`description`) and, where bench/default_demo.py measured the demo at exactly these settings
    (:func:`find_entry`), what it shows there (:func:`figure_words`; ``short``: :func:`short_figure_words`, for
    presentation mode); under other settings the description alone."""
    text = description(values)
    if text is None:
        return None
    entry = find_entry(values, niw_default)
    if entry is None:
        return text
    if short:
        return f"{text} {short_figure_words(entry)}"
    classes = len(es.setting_value(values, "digits")) if es.setting_value(values, "data") == "mnist" else None
    return f"{text} {figure_words(entry, classes, cv_blew_up(es.shipped(values)))}"


def cv_blew_up(shipped):
    """Whether the cross validation behind a matched shipped r (a pcrp.analyses.cv.ShippedR) saw its loss rise within
    its grid: its proposal is below the grid's largest r (at the top, "the loss never blows up on this grid")."""
    if not shipped.matched or shipped.entry is None:
        return False
    top = max(row["r"] for row in shipped.entry["curve"])
    return float(shipped.entry["cv_r"]) < top - 1e-9
