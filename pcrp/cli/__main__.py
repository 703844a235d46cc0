"""``python -m pcrp.cli``: the ``pcrp`` command."""

import sys

from . import main

sys.exit(main())
