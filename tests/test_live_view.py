

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
