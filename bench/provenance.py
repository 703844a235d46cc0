"""The line every benchmark prints first: when, on what machine, under what load (the README's figures carry it).

    from provenance import header, load_now
    print(header("python bench/peers.py"))      # command, date, machine, load average
"""

import datetime
import os
import platform


def _cpu_model():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine():
    """"2 cores (Intel(R) Xeon(R) Processor), 23 GiB, Linux": what the figures were measured on."""
    try:
        import psutil

        memory = f", {psutil.virtual_memory().total / 2**30:.0f} GiB"
    except ImportError:
        memory = ""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return f"{cores} cores ({_cpu_model()}){memory}, {platform.system()}, Python {platform.python_version()}"


def load_now():
    """The 1-minute load average, or nan where the system has none."""
    return os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")


def header(command):
    """One line: the command, the date and time (UTC), the machine and the load average now."""
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return f"`{command}` on {when}; {machine()}; load average {load_now():.2f} at the start"
