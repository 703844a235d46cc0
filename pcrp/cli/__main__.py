"""``python -m pcrp.cli``: the ``pcrp`` command."""

import sys

from . import console

sys.exit(console())
