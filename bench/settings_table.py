"""Every declared setting: its name, where it is declared and which modules read that declaration.

    python bench/settings_table.py            # a Markdown table on stdout

The owners are the Declarations of docs/design.md section 3 and the prior registry; "read by" lists the modules
of pcrp/, app_pages/ and app.py whose text names the declarations object (or, for a prior's parameters, PRIORS).
"""

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pcrp.app.explorer_settings import EXPLORER_CHOICES  # noqa: E402
from pcrp.app.live_params import LIVE_PARAMS  # noqa: E402
from pcrp.basics.params import Choice  # noqa: E402
from pcrp.experiments.compare import COMPARE_PARAMS  # noqa: E402
from pcrp.analyses.cv import CV_PARAMS  # noqa: E402
from pcrp.model import NIW_PARAMS, PRIORS  # noqa: E402
from pcrp.analyses.path import PATH_PARAMS  # noqa: E402
from pcrp.experiments.reproduce import REPRODUCE_PARAMS  # noqa: E402
from pcrp.runs.run_spec import RUN_PARAMS  # noqa: E402

OWNERS = [  # (object name as code writes it, the declarations, the module that declares them)
    ("RUN_PARAMS", RUN_PARAMS, "pcrp/runs/run_spec.py"),
    ("NIW_PARAMS", NIW_PARAMS, "pcrp/model/niw.py"),
    ("CV_PARAMS", CV_PARAMS, "pcrp/analyses/cv/settings.py"),
    ("PATH_PARAMS", PATH_PARAMS, "pcrp/analyses/path.py"),
    ("REPRODUCE_PARAMS", REPRODUCE_PARAMS, "pcrp/experiments/reproduce/protocol.py"),
    ("COMPARE_PARAMS", COMPARE_PARAMS, "pcrp/experiments/compare.py"),
    ("LIVE_PARAMS", LIVE_PARAMS, "pcrp/app/live_params.py"),
    ("EXPLORER_CHOICES", EXPLORER_CHOICES, "pcrp/app/explorer_settings.py"),
]


def sources():
    files = sorted((ROOT / "pcrp").rglob("*.py")) + sorted((ROOT / "app_pages").rglob("*.py")) + [ROOT / "app.py"]
    return {str(p.relative_to(ROOT)): p.read_text() for p in files}


def readers(word, texts, declared_in):
    pattern = re.compile(rf"\b{word}\b")
    return [path for path, text in texts.items() if path != declared_in and pattern.search(text)]


def describe(param):
    if isinstance(param, Choice):
        return f"`{param.name}` {param.text(param.default)} {{{', '.join(map(str, param.choices))}}}"
    default = "owner's" if param.default is None else f"{param.default:g}"
    return f"`{param.name}` {default} {param.interval()}"


def main():
    texts = sources()
    print("| declarations | declared in | settings: name, default, bounds | read by |")
    print("|---|---|---|---|")
    for word, decls, where in OWNERS:
        users = ", ".join(f"`{p}`" for p in readers(word, texts, where)) or "(its own module)"
        print(f"| `{word}` ({decls.owner}) | `{where}` | {'; '.join(describe(p) for p in decls.values())} | {users} |")
    users = ", ".join(f"`{p}`" for p in readers("PRIORS", texts, "pcrp/model/registry.py"))
    for spec in PRIORS.values():
        print(f"| prior `{spec.name}` ({spec.label}) | `pcrp/model/priors.py`, registry `PRIORS` | "
              f"{'; '.join(describe(p) for p in spec.params)} | {users} |")


if __name__ == "__main__":
    main()
