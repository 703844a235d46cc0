"""The Explorer's parts, imported by its page (app_pages/explorer.py), one module per seam:

- :mod:`.session`: the session's settings, their widgets' binding and their mirror in the address.
- :mod:`.header`: the title, presentation mode's styles and notes about the address.
- :mod:`.data_sidebar`: the data widgets and the data set they choose.
- :mod:`.model_sidebar`: each row's prior and parameters, the tuned parameter's origin, the NIW and run widgets.
- :mod:`.controls`: what a Start press runs, the buttons and their callbacks.
- :mod:`.live_panel` and :mod:`.row_notes`: the live rows of charts and what they say about each other.
- :mod:`.live_canvas` (with live_canvas.js and .css): one row of the live view drawn on canvases.
- :mod:`.details`: the tabs below the live panel (posterior summary, files, settings of the run).
- :mod:`.keys` (with keys.js) and :mod:`.help_text`: keyboard shortcuts and "How to read this".
"""
