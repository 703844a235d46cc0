"""The app's engine, used only by the Streamlit pages (app_pages/) and their tests and benchmarks; no Streamlit here.

- :mod:`pcrp.app.live_params`: the live demo's settings, declared once (LIVE_PARAMS) with its preset (LIVE_DEMO).
- :mod:`pcrp.app.explorer_settings`: the Explorer's settings as its widgets and its address see them: an index of
  declarations (LIVE_PARAMS, its own choices EXPLORER_CHOICES, the prior registry) and the address's codec.
- :mod:`pcrp.app.live_storage`: what a live run stores, from its RunSpec and that spec's memory plan.
- :mod:`pcrp.app.live_chain`: one chain of a RunSpec in a background thread (pause, one sweep, stop, snapshots).
- :mod:`pcrp.app.live_runs`: a live run (the chains of each row's prior) and its lifetime.
- :mod:`pcrp.app.fair_share`: the server's run registry: capacity by pace (measured), the queue past it, each
  browser's share, reclaiming and forgetting.
- :mod:`pcrp.app.live_view`: what the live page draws, computed from a run's snapshots (trace envelopes,
  matched colours, tiny clusters, the display subset of points).
- :mod:`pcrp.app.live_frames`: the frames of the live view's canvas (small deltas: new K values, changed colours).
- :mod:`pcrp.app.live_charts`: the Vega-Lite chart specifications of a run that has ended (fixed specs).
- :mod:`pcrp.app.browser_keys`: signed browser keys (a run belongs to the browser that started it).
- :mod:`pcrp.app.page_session`: one browser session's state as one typed object (each page's part, one run's
  view, the session's fits, the one cleanup call).
- :mod:`pcrp.app.memory`: the freed memory of forgotten runs and closed sessions, given back to the system.

The library proper (data, model, sampler, chains, summaries, plots) never imports this package.
"""
