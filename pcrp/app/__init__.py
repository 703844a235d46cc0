"""The app's engine, used only by the Streamlit pages (app_pages/) and their tests and benchmarks; no Streamlit here.

- :mod:`pcrp.app.live_runs`: live runs (chains in background threads, per-session memory budgets, the run
  registry that lets a browser find its own run again after a reload).
- :mod:`pcrp.app.live_view`: what the live page draws, computed from a run's snapshots (trace envelopes,
  matched colours, tiny clusters, the display subset of points).
- :mod:`pcrp.app.live_charts`: the live page's Vega-Lite chart specifications (fixed specs, only data change).
- :mod:`pcrp.app.explorer_settings`: the Explorer's settings, declared once (bounds, defaults, query strings).

The library proper (data, model, sampler, chains, summaries, plots) never imports this package.
"""
