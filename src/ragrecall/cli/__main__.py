"""``python -m ragrecall.cli``: the ``ragrecall`` command."""

import sys

from . import main

sys.exit(main())
