"""Shares and probabilities as text (pcrp.basics.shares), as the Lesson and Rich get richer write them: a share below 1
never reads "100%" (Rich get richer showed 100% for 99.6%), a share above 0 never "0%", and what is written is the
share rounded to the decimals shown."""

import re

import numpy as np
import pytest

from pcrp.basics.shares import fraction_text, percent_text


def test_only_certainty_reads_100_and_only_impossibility_reads_0():
    assert percent_text(1.0) == "100%" and percent_text(0.0) == "0%" and percent_text(float("nan")) == "n/a"
    assert [percent_text(s) for s in (0.996, 0.9996, 0.38, 0.003, 0.00003)] == ["99.6%", "99.96%", "38%", "0.3%",
                                                                                "<0.01%"]
    assert percent_text(0.048, 1) == "4.8%" and percent_text(1 - 1e-9) == ">99.99%" and percent_text(1e-9) == "<0.01%"
    assert fraction_text(1.0) == "1" and fraction_text(0.0) == "0"
    assert [fraction_text(v) for v in (0.996, 0.41, 0.004, 1 - 1e-9)] == ["0.996", "0.41", "0.004", ">0.9999"]
    assert fraction_text(1 / 3, 3) == "0.333"


def test_every_share_is_written_as_itself_rounded_never_as_a_bound_it_is_not():
    """200,000 shares, uniform and crowded near 0 and 1: the text's number is the share rounded to the decimals it
    shows (within half a unit of the last one), strictly between 0 and 100 for a share strictly between 0 and 1."""
    rng = np.random.default_rng(0)
    shares = np.concatenate([rng.random(100_000), 1 - 10.0 ** rng.uniform(-6, -1, 50_000),
                             10.0 ** rng.uniform(-6, -1, 50_000)])
    for share in shares:
        text = percent_text(share)
        if text.startswith(("<", ">")):
            edge = float(text[1:-1])
            assert (100 * share < edge) if text[0] == "<" else (100 * share > edge), (share, text)
            continue
        number = text[:-1]
        decimals = len(number.partition(".")[2])
        assert 0 < float(number) < 100, (share, text)
        assert abs(float(number) - 100 * share) <= 0.5 * 10.0 ** -decimals + 1e-12, (share, text)


def test_the_restaurant_s_probabilities_and_the_one_customer_bars_follow_the_rule():
    from pcrp.plots.lesson import share_text
    from pcrp.plots.restaurant import choice_bars, probability_text, restaurant_chart
    from pcrp.teaching.one_customer import Choice

    assert probability_text(0.996) == "99.6%" and probability_text(1.0) == "100%"
    spec = restaurant_chart([249, 1], [0.996, 0.003, 0.001], max_customers=249, cols=4, rows=1)
    assert [r["p_text"] for r in spec["datasets"]["tables"]] == ["99.6%", "0.3%", "new: 0.1%"]
    assert share_text(99.6) == "99.6" and share_text(100.0) == "100" and share_text(0.3) == "0.3"
    assert share_text(0) == ""
    near = np.array([0.996, 0.003, 0.001])
    choice = Choice(np.array([0, 1, -1]), np.array([249, 1, 0]), near, np.zeros(3), near, near)
    texts = [list(bar.text) for bar in choice_bars(choice, "t").data]
    assert texts == [["0.996", "", ""]] * 3  # under 0.005 unlabelled; 0.996 never "1.00"
