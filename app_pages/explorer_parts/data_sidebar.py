"""The Explorer's data: the sidebar's data widgets (a CSV's upload and column choices included), the data set they
choose (built-in ones cached for all sessions) and the lines that say what the data are and what to watch for.
Every string a visitor supplies (file and column names, cells) goes through ``inert`` before it reaches Markdown."""

import streamlit as st

from app_pages.explorer_parts.session import bind, choices, explorer, number, settings
from app_pages.shared import inert
from pcrp import data
from pcrp.app import demo_notes, explorer_settings as es
from pcrp.data.projection import id_like_columns


@st.cache_data(max_entries=16, show_spinner=False)
def builtin_dataset(source, sim_n, sim_seed, digits, mnist_n, embedding, dims):
    """A built-in data set: a pure function of its settings, shared by all sessions (bounded)."""
    if source == "old-faithful":
        return data.old_faithful()
    if source == "mnist":
        return data.mnist(digits=list(digits), n=mnist_n, embedding=embedding, dims=dims, seed=0)
    return data.simulation(source, n=sim_n, seed=sim_seed)


def builtin_key(values):
    source = values["data"]
    if source == "mnist":
        return (source, tuple(values["digits"]), values["mnist_n"], values["embedding"], values["dims"])
    if source in ("sim1", "sim2"):
        return (source, values["sim_n"], values["sim_seed"])
    return (source,)


def data_sidebar():
    """The sidebar's data widgets (a CSV's upload and column choices included); returns the chosen source."""
    with st.sidebar:
        st.header("Data")
        st.selectbox("Data set", choices("data"), format_func=es.SOURCE_LABELS.get, **bind("data"))
        source = settings()["data"]
        if source == "mnist":
            st.multiselect("Digits", choices("digits"), **bind("digits"))
            number("N (bundled file: 1,000 per digit)", "mnist_n", step=50)
            st.selectbox("Embedding", choices("embedding"), **bind("embedding"))
            number("Dimensions", "dims")
        if source in ("sim1", "sim2"):
            number("N", "sim_n", step=50)
            number("Data seed", "sim_seed")
        if source == "csv":
            csv_sidebar()
    return source


def refuse(name, err):
    """The file ``name`` is refused with ``err`` (a DataError): one line in the sidebar, nothing in use (Start has
    nothing of a previous file to run on)."""
    st.error(f"{inert(name)}: {inert(err)}")
    csv = explorer().csv
    csv.drop()
    csv.upload = {"name": name, "refused": str(err)}


def csv_sidebar():
    """The upload, its columns and Use this CSV. The data in use are always the file in the uploader (or, after a
    reload, the file of this browser's run): a new file, read or refused, takes the previous one's place."""
    st.caption(f"Limits: {data.APP_MAX_BYTES // 2**20} MiB, {data.APP_MAX_ROWS:,} rows, "
               f"{data.MAX_CLUSTER_COLUMNS} columns clustered.")
    upload = st.file_uploader("CSV file (numeric columns; a header row names them)", type=["csv", "txt", "tsv"],
                              key="upload")
    csv = explorer().csv
    if upload is None:
        csv.upload = None
        return
    if csv.key is not None and csv.key[2] != upload.file_id:
        csv.drop()  # the data in use were an earlier file's
    csv.upload = {"name": upload.name, "refused": None}
    try:
        table = data.read_csv_table(upload.getvalue(), max_rows=data.APP_MAX_ROWS, max_bytes=data.APP_MAX_BYTES)
    except data.DataError as err:
        refuse(upload.name, err)
        return
    fid = upload.file_id  # fresh column widgets for every new file
    guessed = data.guess_label_column(table)
    label_col = st.selectbox("True labels (optional)", ["(none)"] + table.header,
                             index=0 if guessed is None else 1 + table.header.index(guessed), key=f"csv_label_{fid}",
                             help="Preselected when a column obviously holds class labels (integer codes or text "
                                  "with few values, named like class, label, species).")
    if guessed is not None and label_col == guessed:
        st.caption(f"{inert(data.quoted(guessed))} looks like class labels: used for NMI / VI, not clustered.")
    label = None if label_col == "(none)" else label_col
    usable, _ = data.default_columns(table, label)
    ids = id_like_columns({c: table.numeric[c] for c in usable})
    usable = [c for c in usable if c not in ids]
    cols = st.multiselect("Columns to cluster", [c for c in table.header if c != label],
                          default=usable[: data.MAX_CLUSTER_COLUMNS], key=f"csv_columns_{fid}")
    warning, note = data.not_clustered(table, cols, label)
    if warning:
        st.warning(inert(warning))
    for line in table.notes + ([note] if note else []):  # (e.g. no header found: columns named x1..xd)
        st.caption(f"Note: {inert(line)}")
    standardise = st.checkbox("Standardise columns", True, key=f"csv_standardise_{fid}")
    if st.button("Use this CSV", key="use_csv"):
        try:
            csv.dataset = data.dataset_from_table(table, columns=cols, label_column=label,
                                                  standardize_data=standardise, name=upload.name)
            csv.key = ("csv", upload.name, fid, tuple(cols), label, standardise)
            st.toast(f"Using {inert(upload.name)}: {csv.dataset.n:,} rows, {csv.dataset.dim} column(s) clustered.")
        except data.DataError as err:
            refuse(upload.name, err)


def current_data(S, source):
    """(data set or None, its key) for the chosen source: a built-in one (cached for all sessions) or the
    CSV this session chose with "Use this CSV"."""
    if source == "csv":
        ds, ds_key = explorer().csv.dataset, explorer().csv.key
    else:
        ds, ds_key = None, builtin_key(S)
        try:
            with st.spinner("Loading data…"):
                ds = builtin_dataset(S["data"], S["sim_n"], S["sim_seed"], tuple(S["digits"]), S["mnist_n"],
                                     S["embedding"], S["dims"])
        except data.DataError as err:
            st.error(inert(err))
    explorer().dataset = ds  # the Choose r page clusters the same data
    return ds, ds_key


def csv_line(ds):
    """What an uploaded data set in use is, in one line: the file, its rows and the columns Start clusters."""
    label = ds.source.get("label_column")
    labels = f"; true labels from {inert(data.quoted(label))} ({ds.true_k} classes)" if label is not None else ""
    return (f"**Data in use:** file {inert(data.quoted(ds.name))} — {inert(ds.description)} (d = {ds.dim}"
            f"{', standardised' if ds.standardized else ''}){labels}. Start clusters these columns.")


def no_csv_line():
    """The main panel's line when no uploaded data are in use: why, naming the file in the uploader."""
    upload = explorer().csv.upload
    if upload is None:
        st.info("Upload a CSV file in the sidebar and press **Use this CSV** to begin.")
    elif upload["refused"] is not None:
        st.error(f"No data in use: {inert(data.quoted(upload['name']))} was refused: {inert(upload['refused'])} "
                 "Fix the file or upload another.")
    else:
        st.info(f"No data in use yet: check the columns of {inert(data.quoted(upload['name']))} in the sidebar and "
                "press **Use this CSV**.")


def data_lines(S, ds, ds_key, source, presentation):
    """What the data are (an upload: the file and the columns Start clusters), their notes and warnings, and what to
    watch for (pcrp.app.demo_notes: what a built-in data set holds, and the demo's figures where they were measured at
    exactly these settings)."""
    if ds is None:
        if source == "csv":
            no_csv_line()
        else:
            st.info("Choose a data set in the sidebar to begin.")
    else:
        if not presentation:
            if source == "csv":
                st.markdown(csv_line(ds))
            else:
                st.caption(f"**Data:** {inert(ds.description)} N = {ds.n}, d = {ds.dim}"
                           f"{', standardised' if ds.standardized else ''}"
                           f"{f', {ds.true_k} true classes' if ds.labels is not None else ''}.")
        for warning in ds.warnings:
            st.warning(inert(warning))
        if not presentation:
            for note in ds.notes:
                if note not in ds.warnings:
                    st.caption(f"Note: {inert(note)}")
    # (presentation mode with more than two rows: the rows take the screen, their headings say what they show)
    shown = ds is not None and not (presentation and len(es.active_rows(S)) > 2)
    watch = demo_notes.watch_line(S, niw_default=niw_is_default(ds, ds_key), short=presentation) if shown else None
    if watch is not None:
        st.markdown(f"**What to watch for:** {watch}")


def niw_is_default(ds, ds_key):
    """Whether the cluster prior's settings are the data's defaults (the figures of "What to watch for" were measured
    with them)."""
    from app_pages.explorer_parts.model_sidebar import NIW_NAMES, niw_defaults, niw_values

    values, default = niw_values(ds, ds_key), niw_defaults(ds)
    return all(abs(values[name] - default[name]) <= 1e-12 * max(1.0, abs(default[name])) for name in NIW_NAMES)
