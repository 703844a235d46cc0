"""Smoke test of an installed pcrp (a wheel in a fresh virtual environment), run by .ci/run.

Usage: VENV/bin/python ci/app_smoke.py APP_DIR
APP_DIR holds copies of app.py, serve.py, app_pages/ and .streamlit/ outside the source tree, so
that only the installed pcrp can be imported. Checks that pcrp comes from this
environment, that the bundled data load (Old Faithful and MNIST), that the Explorer
page runs under AppTest with Old Faithful loaded, and that `streamlit run serve.py` (the app for
others) serves its health check and sets the browser key as an HttpOnly cookie on a page load.
Exits non-zero with a message on the first failure.
"""

import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path


def check(condition, message):
    if not condition:
        sys.exit(f"app smoke test: {message}")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main(app_dir):
    import pcrp
    from pcrp import data

    installed = Path(pcrp.__file__).resolve()
    check(Path(sys.prefix).resolve() in installed.parents, f"pcrp imported from {installed}, not from {sys.prefix}")
    check(data.old_faithful().n == 272, "Old Faithful did not load from the package data")
    check(data.mnist(n=100, embedding="pca", dims=2).raw.shape == (100, 784),
          "MNIST did not load from the package data")

    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(str(app_dir / "app.py"), default_timeout=180).run()
    check(not at.exception, f"the app raised {at.exception}")
    shown = at.session_state["pcrp"].explorer.dataset  # the session's one object (app_pages.shared.SESSION_KEY)
    check(shown is not None and shown.n == 272, "the Explorer did not load Old Faithful")

    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "streamlit", "run", str(app_dir / "serve.py"), "--server.port", str(port),
         "--server.headless", "true"],
        cwd=app_dir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline, answer = time.monotonic() + 90, None
        while time.monotonic() < deadline and server.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health", timeout=5) as r:
                    answer = r.read().decode()
                break
            except OSError:
                time.sleep(0.5)
        check(answer == "ok", f"streamlit run gave no health answer (exit code {server.poll()}, answer {answer!r})")
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=30) as r:
            cookies = r.headers.get_all("Set-Cookie") or []
        check(any(c.startswith("pcrp_browser=v1.") and "HttpOnly" in c for c in cookies),
              f"serve.py set no HttpOnly browser key on the page (Set-Cookie: {cookies})")
    finally:
        server.terminate()
        server.wait(10)
    print(f"app smoke test passed: pcrp from {installed.parent}, AppTest, health check and HttpOnly key OK")


if __name__ == "__main__":
    main(Path(sys.argv[1]).resolve())
