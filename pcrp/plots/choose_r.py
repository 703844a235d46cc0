"""Figures for choosing the pCRP power r: cross-validation curves."""

import numpy as np

from .style import LAYOUT, PALETTE


def cv_curves(cv, title):
    """Cross-validation curves of r: loss of eq. (5) and held-out log predictive, +-1 SE, chosen r marked."""
    from plotly.subplots import make_subplots

    fig = make_subplots(rows=1, cols=2, horizontal_spacing=0.12,
                        subplot_titles=("loss of eq. (5) (lower is better)",
                                        "held-out log predictive per point (higher is better)"))
    r = np.asarray(cv.r_grid)
    for col, name in ((1, "loss"), (2, "log_pred")):
        mean, se = cv.curve(name)
        se = np.nan_to_num(se)
        fig.add_scatter(x=np.r_[r, r[::-1]], y=np.r_[mean + se, (mean - se)[::-1]], fill="toself",
                        fillcolor="rgba(31,119,180,0.2)", line=dict(width=0), hoverinfo="skip", row=1, col=col)
        fig.add_scatter(x=r, y=mean, mode="lines+markers", line=dict(color=PALETTE[0]), name=name,
                        row=1, col=col)
        fig.add_vline(x=cv.chosen_r, line=dict(color=PALETTE[3], dash="dash"), row=1, col=col)
        fig.update_xaxes(title_text="power r", row=1, col=col)
    fig.update_layout(title=f"{title}: proposed r = {cv.chosen_r:.2f}", showlegend=False,
                      **{**LAYOUT, "height": 340})
    return fig
