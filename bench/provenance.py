"""The line every benchmark prints first: when, on what machine, under what load (the README's figures carry it).

    from provenance import header, load_now
    print(header("python bench/peers.py"))      # command, date, machine, load average
"""

import datetime
import os


def machine():
    """"2 cores (Intel(R) Xeon(R) Processor), 24 GiB, Linux": what the figures were measured on."""
    from pcrp.sampling.compute import describe_machine

    return describe_machine()


def load_now():
    """The 1-minute load average, or nan where the system has none."""
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


def header(command):
    """One line: the command, the date and time (UTC), the machine and the load average now."""
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return f"`{command}` on {when}; {machine()}; load average {load_now():.2f} at the start"
