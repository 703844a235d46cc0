"""Ctrl-C at any moment of a command: one line, "pcrp: interrupted.", and status 130 (standard library only)."""

import sys


class CtrlC:
    """Ctrl-C that always ends the command, as a KeyboardInterrupt that :func:`pcrp.cli.main` catches.

    Python raises KeyboardInterrupt in whatever Python code runs at that moment, and some of that code loses it:
    a weakref callback or ``__del__`` (frequent while modules are imported) prints "Exception ignored ..." with a
    traceback and carries on; an extension module whose import it interrupts may turn it into an ImportError that
    a library catches. So while :func:`main` runs, a Ctrl-C is remembered, a KeyboardInterrupt that Python drops is
    not printed, and a watchdog thread sends SIGINT again every RESEND seconds until main has caught one. A
    KeyboardInterrupt already on its way up is not raised a second time. Outside the main thread, or when SIGINT
    is ignored (a background job) or handled by someone else, nothing changes.
    """

    RESEND = 0.25

    def __init__(self):
        import signal
        import threading

        self._lock = threading.Lock()
        self._done = threading.Event()
        self._watchdog = None
        self._previous_hook = sys.unraisablehook
        self._previous_handler = signal.getsignal(signal.SIGINT)
        self._installed = (self._previous_handler is signal.default_int_handler
                           and threading.current_thread() is threading.main_thread())
        if self._installed:
            signal.signal(signal.SIGINT, self._on_sigint)
            sys.unraisablehook = self._unraisable

    def _on_sigint(self, signum, frame):
        import threading

        if self._done.is_set() or caused_by_interrupt(sys.exc_info()[1]):
            return  # caught already, or on its way up (perhaps as the ImportError it became)
        if self._watchdog is None:
            self._watchdog = threading.Thread(target=self._resend, name="pcrp-ctrl-c", daemon=True)
            self._watchdog.start()
        raise KeyboardInterrupt

    def _resend(self):
        import _thread

        while not self._done.wait(self.RESEND):
            with self._lock:
                if not self._done.is_set():
                    _thread.interrupt_main()

    def _unraisable(self, unraisable):
        if not (isinstance(unraisable.exc_type, type) and issubclass(unraisable.exc_type, KeyboardInterrupt)):
            self._previous_hook(unraisable)

    def caught(self):
        """main has caught the KeyboardInterrupt: stop sending it."""
        with self._lock:
            self._done.set()

    def restore(self):
        import signal

        self.caught()
        if self._installed:
            signal.signal(signal.SIGINT, self._previous_handler)
            sys.unraisablehook = self._previous_hook


def caused_by_interrupt(err):
    """Whether a KeyboardInterrupt led to ``err``: an extension module whose import Ctrl-C interrupted reports an
    ImportError (numba: "numba._devicearray failed to import") with the KeyboardInterrupt as its context."""
    seen = set()
    while err is not None and id(err) not in seen:
        if isinstance(err, KeyboardInterrupt):
            return True
        seen.add(id(err))
        err = err.__cause__ or err.__context__
    return False
