"""``python -m coordinator.cli`` is the ``hybridsim`` command."""

import sys

from coordinator.cli import main

sys.exit(main())
