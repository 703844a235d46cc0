"""Cross-validation fits on a Dask cluster: connecting with a real deadline, and the app's setting.

Dask sends tasks to its workers and unpickles what they return, so a cluster can run code in
the process that connects to it. Connect only to a cluster you run or trust:

- the command line connects where its user says (``pcrp cv --scheduler ADDRESS``);
- the web app never connects to an address a visitor types: its cluster is chosen by whoever
  runs the server, with the environment variable ``PCRP_DASK_SCHEDULER`` or the key
  ``dask_scheduler`` in ``.streamlit/secrets.toml`` (see docs/serving.md and docs/app.md).

``distributed.Client(address, timeout=...)`` waits for ever on a server that accepts the TCP
connection and never answers; :func:`connect` first asks the scheduler who it is, under one
deadline for the connection and the first reply, and only then builds the client.
"""

import asyncio
import os
import threading

ENV_VAR = "PCRP_DASK_SCHEDULER"
SECRETS_KEY = "dask_scheduler"
DEFAULT_TIMEOUT = 10.0


class DaskConnectionError(ValueError):
    """The Dask scheduler cannot be used; the message says why and what to do."""


def configured_scheduler(secrets=None):
    """The server-side scheduler address, or None: ``secrets[SECRETS_KEY]`` if given, else the
    environment variable ``PCRP_DASK_SCHEDULER``. Never a value from a web visitor."""
    address = None
    if secrets is not None:
        try:
            address = secrets.get(SECRETS_KEY)
        except Exception:  # Streamlit raises when no secrets file exists
            address = None
    address = address or os.environ.get(ENV_VAR)
    address = str(address).strip() if address else ""
    return address or None


async def _identity(address, timeout):
    from distributed.comm import connect as comm_connect

    comm = await comm_connect(address, timeout=timeout)
    try:
        await comm.write({"op": "identity", "reply": True})
        return await comm.read()
    finally:
        comm.abort()


def check_scheduler(address, timeout=DEFAULT_TIMEOUT):
    """Ask the scheduler at ``address`` who it is; raises DaskConnectionError unless it answers
    within ``timeout`` seconds (connection and first reply together). Returns its identity dict."""
    try:
        import distributed  # noqa: F401
    except ImportError:
        raise DaskConnectionError(
            "A Dask scheduler needs Dask: pip install 'dask[distributed]' (or the pcrp[dask] extra).") from None
    hint = "Check the address (tcp://HOST:PORT) and that a Dask scheduler is running there."
    try:
        identity = asyncio.run(asyncio.wait_for(_identity(address, timeout), timeout))
    except (TimeoutError, asyncio.TimeoutError):
        raise DaskConnectionError(f"The Dask scheduler at {address} did not answer within {timeout:g} s. "
                                  + hint) from None
    except (OSError, ValueError, TypeError) as err:
        raise DaskConnectionError(f"Cannot reach the Dask scheduler at {address}: {err}. " + hint) from None
    if not isinstance(identity, dict) or identity.get("type") != "Scheduler":
        raise DaskConnectionError(f"{address} answered, but not as a Dask scheduler. " + hint)
    return identity


def connect(address, timeout=DEFAULT_TIMEOUT):
    """A ``distributed.Client`` for the scheduler at ``address``, or DaskConnectionError within
    about ``2 * timeout`` seconds: a silent or foreign server cannot hang the caller."""
    check_scheduler(address, timeout)
    from distributed import Client

    box = {}

    def build():
        try:
            box["client"] = Client(address, timeout=f"{timeout}s")
        except Exception as err:  # reported below, in the caller's thread
            box["error"] = err

    worker = threading.Thread(target=build, daemon=True, name="pcrp-dask-connect")
    worker.start()
    worker.join(timeout + 5.0)
    if worker.is_alive():
        raise DaskConnectionError(f"The Dask scheduler at {address} answered but did not accept a client "
                                  f"within {timeout:g} s.")
    if "error" in box:
        raise DaskConnectionError(f"Cannot use the Dask scheduler at {address}: {box['error']}.")
    return box["client"]


def worker_threads(client):
    """Total worker threads of the cluster behind ``client`` (0 when it has no workers yet)."""
    info = client.scheduler_info()
    return int(sum(w.get("nthreads", 0) for w in info.get("workers", {}).values()))


def parallel_results(tasks, *, n_jobs, scheduler=None):
    """The results of ``tasks`` (joblib delayed calls), as they finish: in threads here (the kernels release the
    GIL), or on the Dask cluster at ``scheduler`` through joblib's dask backend. A generator: the client is closed
    when it is exhausted or closed. Raises DaskConnectionError when the cluster cannot be used; warns when its
    workers have one thread in all (joblib then runs every task here, one after another)."""
    import warnings

    import joblib

    if not scheduler:
        yield from joblib.Parallel(n_jobs=n_jobs, prefer="threads", return_as="generator_unordered")(tasks)
        return
    client = connect(scheduler)
    try:
        if worker_threads(client) == 1:  # joblib runs n_jobs = 1 in this process, not on the cluster
            warnings.warn(f"The Dask cluster at {scheduler} has one worker thread, so joblib runs every task here, "
                          "in this process, one after another; give its workers two or more threads in all to run "
                          "on the cluster.", UserWarning, stacklevel=2)
        with joblib.parallel_config(backend="dask"):
            yield from joblib.Parallel(n_jobs=n_jobs, return_as="generator_unordered")(tasks)
    finally:
        client.close()


def collect_results(tasks, on_result, *, n_jobs, scheduler=None, progress=None, check=None, error=DaskConnectionError):
    """Run ``tasks`` (joblib delayed calls) with :func:`parallel_results` and hand each result to ``on_result`` as it
    finishes; after each, ``check()`` (a cancellation check, e.g. a work ticket's) and ``progress(done, total)``.
    A cluster that cannot be used raises ``error`` (an exception class) with the reason."""
    try:
        for done, result in enumerate(parallel_results(tasks, n_jobs=n_jobs, scheduler=scheduler), start=1):
            if check is not None:
                check()
            on_result(result)
            if progress is not None:
                progress(done, len(tasks))
    except DaskConnectionError as err:
        if error is DaskConnectionError:
            raise
        raise error(str(err)) from None
