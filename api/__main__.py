"""``python -m hybridsim`` is the ``hybridsim`` command (local site daemons start this way)."""

import sys

from hybridsim.coordinator.cli import main

sys.exit(main())
