"""Shares and probabilities as text, never rounded to a certainty or an impossibility they are not: a share below 1
is never written "100%" (0.996 is "99.6%"), a share above 0 never "0%" (0.003 is "0.3%"); only 1 is "100%" and only
0 is "0%". More decimals are added where the rounding would otherwise reach 0 or 100, up to a limit past which the
text says "<0.01%" or ">99.99%".
"""

import math


def _inside(value, scale, digits, more):
    """``value`` * ``scale`` with ``digits`` decimals, or more (at most ``more`` extra) where fewer would round to 0
    or to ``scale``; None when even the most decimals do."""
    for d in range(digits, digits + more + 1):
        text = f"{value * scale:.{d}f}"
        if 0 < float(text) < scale:
            return text
    return None


def percent_text(share, digits=0, more=2):
    """``share`` (0..1) as a percentage with ``digits`` decimals, more where needed (see the module): '38%', '99.6%',
    '0.3%', '100%' (1 only), '0%' (0 only), '<0.01%' / '>99.99%' at digits 0 past two extra decimals; 'n/a' for nan."""
    share = float(share)
    if math.isnan(share):
        return "n/a"
    if share <= 0:
        return "0%"
    if share >= 1:
        return "100%"
    text = _inside(share, 100, digits, more)
    if text is not None:
        return text + "%"
    edge = 10.0 ** -(digits + more)
    return f"<{edge:g}%" if share < 0.5 else f">{100 - edge:g}%"


def fraction_text(value, digits=2, more=2):
    """A probability (0..1) as a decimal with ``digits`` decimals, more where needed: '0.41', '0.996' (never '1.00'
    below 1), '0.004' (never '0.00' above 0), '1' and '0' only for 1 and 0; '<0.0001' / '>0.9999' past the extra
    decimals; 'n/a' for nan."""
    value = float(value)
    if math.isnan(value):
        return "n/a"
    if value <= 0:
        return "0"
    if value >= 1:
        return "1"
    text = _inside(value, 1, digits, more)
    if text is not None:
        return text
    edge = 10.0 ** -(digits + more)
    return f"<{edge:g}" if value < 0.5 else f">{1 - edge:g}"
