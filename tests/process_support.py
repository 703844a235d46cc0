"""Starting child processes in tests as a person's terminal starts them."""

import signal


def sigint_as_in_a_terminal():
    """``preexec_fn`` for a child that a test sends SIGINT (Ctrl-C): its default action, as a shell gives a
    foreground command. A test run started as a background job (``cmd &`` in a script, as CI or a benchmark may
    start it) passes SIGINT on *ignored*, where Ctrl-C rightly does nothing and pcrp leaves it so."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
