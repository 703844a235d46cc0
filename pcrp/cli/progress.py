"""Progress on stderr: a tqdm bar on a terminal, plain lines in a log file."""

import sys

PROGRESS_LINE_SECONDS = 2.0  # without a terminal, a fixed budget's progress line at most this often


def progress_bar(**kwargs):
    """A tqdm bar on stderr, drawn only when stderr is a terminal (tqdm's disable=None)."""
    from tqdm import tqdm

    return tqdm(file=sys.stderr, disable=None, **kwargs)


def counting_bar(bar):
    """A ``progress(done, total)`` callback that moves ``bar`` to ``done`` of ``total``."""
    def progress(done, total):
        bar.total = total
        bar.update(done - bar.n)
    return progress


class RunProgress:
    """Progress of a run on stderr: a tqdm bar on a terminal (the ESS and R-hat so far beside it); otherwise, as in
    a log file, CI or nohup, plain lines with the sweeps, ESS so far, worst R-hat and time left: one at every
    checkpoint the automatic budget judges, and for a fixed budget one per checkpoint at most every
    PROGRESS_LINE_SECONDS."""

    def __init__(self, spec, label):
        import time

        self.spec = spec
        self.last_line = time.monotonic()
        self.terminal = sys.stderr.isatty()
        self.done = [0] * spec.n_chains
        self.bar = progress_bar(total=spec.max_sweeps * spec.n_chains, unit="sweep", desc=label) \
            if self.terminal else None

    def advance(self, chain_index, sweeps_done):  # from the chains' threads; tqdm's update is thread-safe
        if self.bar is not None:
            self.bar.update(sweeps_done - self.done[chain_index])
        self.done[chain_index] = sweeps_done

    def checkpoint(self, progress):
        import time

        now = time.monotonic()
        if self.bar is None and not self.spec.budget.auto and now - self.last_line < PROGRESS_LINE_SECONDS:
            return
        self.last_line = now
        v = progress.verdict
        so_far = "burn-in" if v is None else (
            f"ESS K {v.ess['K']:.0f}, log joint {v.ess['log_joint']:.0f}; worst R-hat "
            + ("undefined" if v.worst_rhat != v.worst_rhat else f"{v.worst_rhat:.3f}"))
        if self.bar is not None:
            self.bar.set_postfix_str(so_far)
            return
        rate = progress.seconds / max(progress.sweeps, 1)
        left = rate * (progress.max_sweeps - progress.sweeps)
        when = (f"about {left:,.0f} s left" if not self.spec.budget.auto
                else f"at most {left:,.0f} s left (to the cap)")
        print(f"sweeps {progress.sweeps:,} of {'at most ' if self.spec.budget.auto else ''}{progress.max_sweeps:,} "
              f"per chain; {so_far}; {progress.seconds:,.1f} s so far, {when}", file=sys.stderr, flush=True)

    def close(self):
        if self.bar is not None:
            self.bar.close()
