"""The comparison's one figure: NMI and mean K of every method on every data set (pcrp.experiments.compare)."""

import numpy as np
from plotly.subplots import make_subplots

from .style import LAYOUT, colour


def compare_figure(rows, title="CRP, pCRP, the alternatives and scikit-learn's BayesianGaussianMixture"):
    """Two panels sharing the data sets as x: NMI (top) and mean K (bottom), one marker per method with the spread
    between data seeds as error bars, and the true K as a black dash. ``rows``: :func:`pcrp.experiments.compare.table_rows`
    (dicts with data, method, nmi, nmi spread, k, k spread, and optionally true_k)."""
    data = list(dict.fromkeys(r["data"] for r in rows))
    methods = list(dict.fromkeys(r["method"] for r in rows))
    fig = make_subplots(rows=2, cols=1, shared_xaxes=True, vertical_spacing=0.08,
                        subplot_titles=("NMI against the true labels (higher is better)",
                                        "mean number of clusters K (the dash: the true K)"))
    width = 0.8 / max(len(methods), 1)
    for i, method in enumerate(methods):
        mine = {r["data"]: r for r in rows if r["method"] == method}
        x = np.arange(len(data)) - 0.4 + width * (i + 0.5)
        for panel, name in ((1, "nmi"), (2, "k")):
            y = [mine[d][name] if d in mine else None for d in data]
            err = [mine[d][f"{name} spread"] if d in mine else None for d in data]
            err = [0.0 if e is None or e != e else e for e in err]
            fig.add_scatter(x=x, y=y, mode="markers", name=method, legendgroup=method, showlegend=panel == 1,
                            marker=dict(color=colour(i), size=9), error_y=dict(type="data", array=err, visible=True),
                            row=panel, col=1)
    truth = [next((r.get("true_k") for r in rows if r["data"] == d and r.get("true_k")), None) for d in data]
    fig.add_scatter(x=np.arange(len(data)), y=truth, mode="markers", name="true K",
                    marker=dict(symbol="line-ew-open", size=30, color="black", line=dict(width=2)), row=2, col=1)
    fig.update_xaxes(tickvals=list(range(len(data))), ticktext=data, row=2, col=1)
    fig.update_yaxes(range=[0, 1.02], row=1, col=1)
    fig.update_layout(**{**LAYOUT, "height": 620}, title=title, legend=dict(orientation="h", y=-0.12))
    return fig
