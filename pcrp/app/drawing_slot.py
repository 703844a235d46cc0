"""The server's one drawing slot: the live pages draw one frame at a time, a press's redraw first.

Building the live view's charts is pure Python and holds the GIL. When every session redraws at once, the server's
event loop (which answers every browser and the health check) waits its turn behind all of them; one redraw at a
time keeps it answering, and redraws slow down evenly. Only for short, periodic work: a long computation (a
posterior summary) must not hold the slot. A redraw that follows a press (``urgent``) goes before the periodic
frames that wait: thirty pages' frames queued ahead of a Pause held the press for seconds (bench/load_client.py).
"""

import threading


class DrawingSlot:
    """One holder at a time; a waiting urgent acquirer goes before every waiting ordinary one. Thread-safe."""

    def __init__(self):
        self._cond = threading.Condition()
        self._held = False
        self._urgent = 0

    def acquire(self, urgent=False, timeout=None):
        with self._cond:
            if urgent:
                self._urgent += 1
            try:
                taken = self._cond.wait_for(lambda: not self._held and (urgent or not self._urgent), timeout)
                if taken:
                    self._held = True
                return taken
            finally:
                if urgent:
                    self._urgent -= 1
                    self._cond.notify_all()  # (ordinary waiters may go now)

    def release(self):
        with self._cond:
            self._held = False
            self._cond.notify_all()
