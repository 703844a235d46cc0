"""What the live comparison shows (pcrp.app.live_view, pcrp.app.live_charts): pure functions."""

import numpy as np


def test_heading_runs_keep_the_words_and_read_bold_and_colour_spans():
    """The live rows show their heading as text runs (pcrp.app.live_view.heading_runs), not markdown: every word of the
    markdown heading is kept, in order, with ** and :colour[...] read as bold and Streamlit's text colour of that name
    (nested either way round), and a ] outside a colour span or an unknown colour name left as text. A parser that
    dropped a word, leaked a marker into the text or lost a colour would change what the row says."""
    from pcrp.app.live_view import heading_runs
    from pcrp.plots.palette import MARKDOWN_TEXT_COLOURS

    markdown = ("**:blue[CRP (α = 1)]** · **3 clusters + 2 tiny** · :red[**COLLAPSED** below the CRP's 3 clusters] · "
                "mean K 5.5 · :green[R-hat 1.002: chains agree] · a ] b :nosuch[c]")
    runs = heading_runs(markdown)
    assert "".join(text for text, _, _ in runs) == ("CRP (α = 1) · 3 clusters + 2 tiny · COLLAPSED below the CRP's 3 "
                                                    "clusters · mean K 5.5 · R-hat 1.002: chains agree · a ] b c")
    styles = {text: (bold, colour) for text, bold, colour in runs}
    assert styles["CRP (α = 1)"] == (True, MARKDOWN_TEXT_COLOURS["blue"])
    assert styles["3 clusters + 2 tiny"] == (True, "")
    assert styles["COLLAPSED"] == (True, MARKDOWN_TEXT_COLOURS["red"])
    assert styles[" below the CRP's 3 clusters"] == (False, MARKDOWN_TEXT_COLOURS["red"])
    assert styles["R-hat 1.002: chains agree"] == (False, MARKDOWN_TEXT_COLOURS["green"])
    assert all(colour == "" for text, _, colour in runs if "a ] b" in text or text == "c")


def test_the_posterior_of_k_axis_reaches_the_largest_k_any_row_may_show_and_drops_the_burn_in_once_unseen():
    """The rows' posterior of K share one axis, up to the largest K a row's histogram may show plus one. While a row
    may still show its burn-in (the live page plays a frame back until the next), the k-means start of 10 clusters
    counts; once every row has shown kept sweeps it does not, and the axis fits the kept K values (so that a label
    fits under every K). Never below 4."""
    from pcrp.app.live_view import k_histogram_top

    burn_in = 5
    crp = [np.array([10, 8, 6, 5, 4, 4, 3, 5, 4]), np.array([1, 2, 3, 3, 3, 4, 3, 7])]
    pcrp = [np.array([10, 6, 3, 2, 2, 2, 2, 3, 2])]
    rows = {"CRP": crp, "pCRP": pcrp}
    assert k_histogram_top(rows, burn_in, {"CRP": True, "pCRP": True}) == 11  # the burn-in's 10 may be shown
    assert k_histogram_top(rows, burn_in, {"CRP": False, "pCRP": True}) == 11  # ... by the pCRP row
    assert k_histogram_top(rows, burn_in, {"CRP": False, "pCRP": False}) == 8  # the CRP's kept 7, plus one
    only_burn_in = {"CRP": [k[:burn_in] for k in crp], "pCRP": [k[:burn_in] for k in pcrp]}
    assert k_histogram_top(only_burn_in, burn_in, {"CRP": False, "pCRP": False}) == 11  # nothing kept: burn-in shown
    assert k_histogram_top({"pCRP": [np.array([2, 2, 2, 2])]}, 1, {"pCRP": False}) == 4  # at least 4
    assert k_histogram_top({"pCRP": [np.zeros(0, dtype=int)]}, 1, {}) == 4  # nothing yet


def test_the_posterior_of_k_labels_its_k_values_in_every_row_and_names_the_axis_in_the_bottom_row():
    """The ended run's posterior of K (Vega-Lite) has a tick at every K from 1 to the axis top and its labels in
    every row (thinned by "parity" where they would overlap, as the live canvas does); only the bottom row titles
    the axis. Before, the rows above the bottom one had no K labels at all."""
    from pcrp.app.live_charts import k_histogram_chart
    from pcrp.app.live_view import running_k_histogram

    hist = running_k_histogram([np.array([2, 2, 3, 2, 2])], 1)
    for bottom in (False, True):
        axis = k_histogram_chart(hist, k_max=6, colour="#d62728", x_axis=bottom)["encoding"]["x"]["axis"]
        assert axis["values"] == [1, 2, 3, 4, 5, 6] and axis["format"] == "d" and axis["labelOverlap"] == "parity"
        assert axis.get("labels", True) is not False
        assert axis["title"] == ("clusters K" if bottom else None)


def test_chain_verdicts_call_chains_unsettled_only_where_the_library_flags_them_and_their_means_agree_within_mcse():
    """The R-hat rule of the page: "agree" exactly where pcrp.summaries.summary.chains_agree does; above the threshold,
    "unsettled" when R-hat is at most 1.1 and every two chains' means lie within 2 combined MCSEs, else
    "disagree" (and always "disagree" for settled chains holding different values, or an unknown MCSE)."""
    from pcrp.app.live_view import chain_verdict, means_within_mcse

    assert means_within_mcse([2.02, 2.01], [0.01, 0.01]) and not means_within_mcse([2.02, 2.10], [0.01, 0.01])
    assert not means_within_mcse([2.0, 2.0], [float("nan"), 0.1]) and not means_within_mcse([2.0], [0.1])
    assert chain_verdict({"rhat": 1.004, "agree": True, "settled": False}, [(2.0, 0.01), (3.0, 0.01)]).state == "agree"
    near = {"rhat": 1.017, "agree": False, "settled": False}
    assert chain_verdict(near, [(2.02, 0.01), (2.01, 0.012)]).state == "unsettled"
    assert chain_verdict(near, [(2.02, 0.01), (2.31, 0.012)]).state == "disagree"
    assert chain_verdict({**near, "rhat": 1.15}, [(2.02, 0.01), (2.01, 0.012)]).state == "disagree"
    settled = {"rhat": float("nan"), "agree": False, "settled": True}
    assert chain_verdict(settled, [(2.0, 0.0), (2.0, 0.0)]).state == "disagree"
    # the diagnostics table's per-chain means and MCSEs are read when none are given
    table = {**near, "per_chain": [{"mean": 2.02, "mcse": 0.01}, {"mean": 2.01, "mcse": 0.01}]}
    verdict = chain_verdict(table)
    assert verdict.state == "unsettled" and verdict.means == (2.02, 2.01) and verdict.rhat == 1.017
